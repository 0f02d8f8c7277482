/* Runs Debian's real ksmtuned through core/ksmtuned for live tests:
 *   run_ksmtuned [--interval SEC] [--duration SEC] [--thres-coef PCT]
 * Prints "started pgid=N" once it runs, "loop=PID" once the script wrote its pid file, and
 * "stopped" after every process of it is gone and the KSM settings are back. SIGTERM stops it
 * early; SIGKILL leaves the cleanup to the supervisor. Exit 0, 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"
#include "core/tune/ksmtuned.h"

int main(int argc, char **argv)
{
	struct ksmtuned_config c;
	ksmtuned_config_default(&c);
	double duration = 10;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--interval"))
			c.monitor_interval_seconds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--duration"))
			duration = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--thres-coef"))
			c.thres_coef = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "run_ksmtuned: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	struct io_root root = {0};
	int r = ksm_lock(true);
	if (r == 0)
		r = ksm_guard_begin(&root, stop_handler);
	if (r < 0) {
		fprintf(stderr, "run_ksmtuned: KSM lock or guard: %s\n", strerror(-r));
		return 1;
	}
	struct ksmtuned *t;
	char err[256];
	if ((r = ksmtuned_start(&root, &c, &t, err, sizeof(err))) < 0) {
		fprintf(stderr, "run_ksmtuned: %s\n", err);
		ksm_guard_end();
		return 1;
	}
	printf("started pgid=%d log=%s\n", (int)ksmtuned_pgid(t), ksmtuned_log_path(t));
	pid_t loop = 0;
	for (double waited = 0; waited < duration && !stop_requested() && ksmtuned_running(t); waited += 0.1) {
		if (!loop && (loop = ksmtuned_loop_pid(t)) > 0)
			printf("loop=%d\n", (int)loop);
		sleep_for(0.1);
	}
	bool died = !ksmtuned_running(t);
	r = ksmtuned_stop(t);
	int g = ksm_guard_end();
	printf("stopped%s%s\n", died ? " (it had ended by itself)" : "", r < 0 || g < 0 ? " (a restore failed)" : "");
	return r < 0 || g < 0 || died ? 1 : 0;
}
