/* The terminal of a full-screen view: see term.h. */
#include "io/term.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

void term_enter(struct term *t)
{
	t->tty_out = isatty(STDOUT_FILENO);
	t->tty_in = t->tty_out && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0;
	if (t->tty_in) {
		struct termios raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	if (t->tty_out)
		fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout); /* alternate screen, cursor hidden */
	fflush(stdout);
}

void term_leave(struct term *t)
{
	if (t->tty_out)
		fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (t->tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

void term_size(const struct term *t, size_t *ret_cols, size_t *ret_rows)
{
	struct winsize ws;
	bool known = t->tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
	*ret_cols = known ? ws.ws_col : 0;
	*ret_rows = known ? ws.ws_row : 0;
}

int term_key(const struct term *t, int ms)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	int n = poll(&p, t->tty_in ? 1 : 0, ms);
	if (n < 0)
		return errno == EINTR ? -EINTR : 0;
	unsigned char c;
	if (n > 0 && read(STDIN_FILENO, &c, 1) == 1)
		return c;
	return 0;
}
