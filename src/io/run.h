/* Running a command to completion (`vmhost exits -- CMD`, test hooks). */
#ifndef VMHOST_IO_RUN_H
#define VMHOST_IO_RUN_H

#include <stdbool.h>

/* Runs argv (searched in PATH) with the default signal dispositions and waits for it. Returns its
 * exit status (128 + signal when killed), or a negative errno: the exec's when it could not start,
 * or fork's. stdout_to_stderr sends its stdout to our stderr (our stdout stays one document). */
int io_run_wait(char *const argv[], bool stdout_to_stderr);

#endif
