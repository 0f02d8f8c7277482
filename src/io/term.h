/* The terminal of a full-screen view (exits' live view, top): the alternate screen with the
 * cursor hidden, keys read one at a time without echo, and its size. Only what is a terminal is
 * touched, so the same loop runs under a pipe.
 *
 *   struct term t;
 *   term_enter(&t);  ... term_key(ms) ...  term_leave(&t);   on every exit path */
#ifndef VMHOST_IO_TERM_H
#define VMHOST_IO_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

struct term {
	bool tty_out; /* stdout is a terminal: full screen */
	bool tty_in;  /* and stdin too: keys are read */
	struct termios saved;
};

void term_enter(struct term *t);
void term_leave(struct term *t);

/* Columns and rows of stdout's terminal; 0 and 0 when it is not one. */
void term_size(const struct term *t, size_t *ret_cols, size_t *ret_rows);

/* Waits up to ms for a key on stdin (only with tty_in; otherwise just waits). Returns the key,
 * 0 when the time ran out, or -EINTR when a signal came. */
int term_key(const struct term *t, int ms);

#endif
