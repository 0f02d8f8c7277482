/* The human forms of numbers (out/fmt.h). */
#include "out/fmt.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

void fmt_bytes(char *buf, size_t cap, int64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)(bytes < 0 ? -bytes : bytes);
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	const char *sign = bytes < 0 ? "-" : "";
	if (u == 0)
		snprintf(buf, cap, "%s%.0f %s", sign, v, units[u]);
	else
		snprintf(buf, cap, "%s%.*f %s", sign, v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

void fmt_seconds(char *buf, size_t cap, double s)
{
	if (s < 0.001)
		snprintf(buf, cap, "%.0fus", s * 1e6);
	else if (s < 1)
		snprintf(buf, cap, "%.1fms", s * 1e3);
	else if (s < 60)
		snprintf(buf, cap, "%.2fs", s);
	else if (s < 3600)
		snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void fmt_time(char *buf, size_t cap, double t)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;
	if (!isfinite(t) || !localtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, cap, "n/a");
}

void fmt_rate(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "n/a");
	else if (v < 100)
		snprintf(buf, cap, "%.1f", v);
	else if (v < 1e4)
		snprintf(buf, cap, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, cap, "%.1fk", v / 1e3);
	else
		snprintf(buf, cap, "%.1fM", v / 1e6);
}
