#include "core/base/stop.h"

#include <errno.h>
#include <math.h>
#include <time.h>

static volatile sig_atomic_t stop_signal;

const int stop_signals[STOP_NSIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void stop_signals_add(sigset_t *set)
{
	for (size_t i = 0; i < STOP_NSIGNALS; i++)
		sigaddset(set, stop_signals[i]);
}

int stop_requested(void) { return stop_signal; }
volatile sig_atomic_t *stop_flag(void) { return &stop_signal; }
void stop_handler(int sig) { stop_signal = sig; }
void stop_clear(void) { stop_signal = 0; }

int stop_catch(bool ignore)
{
	struct sigaction sa = {.sa_handler = ignore ? SIG_IGN : stop_handler};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < STOP_NSIGNALS; i++)
		if (stop_signals[i] != SIGQUIT && sigaction(stop_signals[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

void stop_block(sigset_t *ret_prev)
{
	sigset_t block;
	sigemptyset(&block);
	stop_signals_add(&block);
	sigprocmask(SIG_BLOCK, &block, ret_prev);
}

void stop_unblock(const sigset_t *prev) { sigprocmask(SIG_SETMASK, prev, NULL); }

bool sleep_until(double deadline)
{
	if (!isfinite(deadline))
		return !stop_signal;
	struct timespec ts = clock_timespec(deadline > 0 ? deadline : 0);
	while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return !stop_signal;
}

bool sleep_for(double seconds)
{
	return sleep_until(clock_monotonic_seconds() + (seconds > 0 ? seconds : 0));
}
