/* A live view's full screen (out/screen.h). */
#include "out/screen.h"

#include <math.h>
#include <stdarg.h>
#include <time.h>

#include "out/text.h"

void screen_begin(const struct screen *s)
{
	if (s->full_screen)
		fputs("\033[H", s->f);
}

const char *screen_eol(const struct screen *s) { return s->full_screen ? "\033[K" : ""; }

void screen_newline(const struct screen *s)
{
	fputs(screen_eol(s), s->f);
	fputc('\n', s->f);
}

void screen_line(const struct screen *s, const char *text)
{
	char shown[512];
	text_for_terminal(shown, sizeof(shown), text, s->cols ? s->cols - 1 : 0);
	fputs(shown, s->f);
	screen_newline(s);
}

void screen_title(const struct screen *s, const char *view, double now_unix, double interval_seconds, size_t nvms,
		  const char *more_fmt, ...)
{
	char now[16] = "", line[1536];
	time_t t = (time_t)floor(now_unix);
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
	int n = snprintf(line, sizeof(line), "vmhost %s  %s  every %.3gs  %zu VM%s", view, now, interval_seconds, nvms,
			 nvms == 1 ? "" : "s");
	if (n > 0 && (size_t)n < sizeof(line)) {
		va_list ap;
		va_start(ap, more_fmt);
		vsnprintf(line + n, sizeof(line) - (size_t)n, more_fmt, ap);
		va_end(ap);
	}
	screen_line(s, line);
}

void screen_end(const struct screen *s)
{
	if (s->full_screen)
		fputs("\033[J", s->f);
	else
		fputc('\n', s->f);
	fflush(s->f);
}

size_t screen_fit(size_t width, size_t used, const size_t *widths, size_t n)
{
	size_t fit = 0;
	while (fit < n && (!width || used + widths[fit] < width))
		used += widths[fit++];
	return fit;
}
