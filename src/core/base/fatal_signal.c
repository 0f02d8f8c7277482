#include "core/base/fatal_signal.h"

#include <signal.h>
#include <unistd.h>

void fatal_signal_reraise(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t only;
	sigemptyset(&only);
	sigaddset(&only, sig);
	sigprocmask(SIG_UNBLOCK, &only, NULL); /* a second one already pending ends it here */
	raise(sig);
	_exit(128 + sig);
}
