/* The saved-settings file's text (ksm_saved.h): format and parse, nothing else. */
#include "core/tune/ksm_saved.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "vmhost ksm saved 1"

bool ksm_saved_is_sysctl(const char *name)
{
	static const char *const sysctls[] = KSM_SAVED_SYSCTLS;
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++)
		if (!strcmp(name, sysctls[i]))
			return true;
	return false;
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Printable ASCII; blanks only where allowed (a directory), never first. */
static bool text_ok(const char *s, bool blanks)
{
	if (!*s || *s == ' ')
		return false;
	for (; *s; s++)
		if (*s < (blanks ? ' ' : '!') || *s > '~')
			return false;
	return true;
}

/* An absolute directory without "..", ending in suffix. */
static bool path_ok(const char *d, const char *suffix)
{
	size_t len = strlen(d), n = strlen(suffix);
	return d[0] == '/' && text_ok(d, true) && !strstr(d, "..") && len >= n && !strcmp(d + len - n, suffix);
}

static bool dir_ok(const char *d) { return path_ok(d, KSM_SAVED_DIR_SUFFIX); }

static bool setting_ok(const struct ksm_saved *s, size_t i)
{
	const char *name = s->set[i].name;
	bool sysctl = ksm_saved_is_sysctl(name);
	if (!(sysctl ? s->proc[0] != '\0' : name_ok(name)) || !text_ok(s->set[i].value, false))
		return false;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->set[j].name, s->set[i].name))
			return false;
	return true;
}

/* Appends to buf at *len: 0, or -ENOSPC when it does not fit cap. */
__attribute__((format(printf, 4, 5))) static int append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return -ENOSPC;
	*len += (size_t)n;
	return 0;
}

int ksm_saved_format(const struct ksm_saved *s, char *buf, size_t cap)
{
	if (!dir_ok(s->dir) || (s->proc[0] && !path_ok(s->proc, "proc")) || s->pid <= 0 || s->n > KSM_SAVED_MAX || !cap)
		return -EINVAL;
	for (size_t i = 0; i < s->n; i++)
		if (!setting_ok(s, i))
			return -EINVAL;
	size_t len = 0;
	int r = append(buf, cap, &len, HEADER "\npid %ld\ndir %s\n", s->pid, s->dir);
	if (r == 0 && s->proc[0])
		r = append(buf, cap, &len, "proc %s\n", s->proc);
	for (size_t i = 0; r == 0 && i < s->n; i++)
		r = append(buf, cap, &len, "set %s %s\n", s->set[i].name, s->set[i].value);
	if (r == 0)
		r = append(buf, cap, &len, "end\n");
	return r < 0 ? r : (int)len;
}

/* The next line of buf into line (without its newline): its length, or -1 when none is left or
 * it does not fit (or holds a NUL). */
static int next_line(const char *buf, size_t len, size_t *at, char *line, size_t cap)
{
	if (*at >= len)
		return -1;
	const char *start = buf + *at, *nl = memchr(start, '\n', len - *at);
	size_t n = nl ? (size_t)(nl - start) : len - *at;
	if (n >= cap || memchr(start, '\0', n))
		return -1;
	memcpy(line, start, n);
	line[n] = '\0';
	*at += n + (nl != NULL);
	return (int)n;
}

/* "set NAME VALUE" into s's next setting: true when it reads. */
static bool read_setting(const char *line, struct ksm_saved *s)
{
	const char *name = line + 4, *blank = strchr(name, ' ');
	if (strncmp(line, "set ", 4) || !blank || s->n == KSM_SAVED_MAX ||
	    (size_t)(blank - name) >= sizeof(s->set[0].name) || strlen(blank + 1) >= sizeof(s->set[0].value))
		return false;
	struct ksm_saved_setting *set = &s->set[s->n];
	memcpy(set->name, name, (size_t)(blank - name));
	set->name[blank - name] = '\0';
	snprintf(set->value, sizeof(set->value), "%s", blank + 1);
	return setting_ok(s, s->n++);
}

int ksm_saved_parse(const char *buf, size_t len, struct ksm_saved *ret)
{
	static struct ksm_saved zero;
	struct ksm_saved s = zero;
	char line[512], *end;
	size_t at = 0;
	if (next_line(buf, len, &at, line, sizeof(line)) < 0 || strcmp(line, HEADER))
		return -EBADMSG;
	if (next_line(buf, len, &at, line, sizeof(line)) < 0 || strncmp(line, "pid ", 4))
		return -EBADMSG;
	s.pid = strtol(line + 4, &end, 10);
	if (s.pid <= 0 || *end || line[4] < '0' || line[4] > '9')
		return -EBADMSG;
	if (next_line(buf, len, &at, line, sizeof(line)) < 0 || strncmp(line, "dir ", 4) ||
	    strlen(line + 4) >= sizeof(s.dir) || !dir_ok(line + 4))
		return -EBADMSG;
	snprintf(s.dir, sizeof(s.dir), "%s", line + 4);
	for (bool first = true;; first = false) {
		if (next_line(buf, len, &at, line, sizeof(line)) < 0)
			return -EBADMSG; /* cut short: no "end" */
		if (first && !strncmp(line, "proc ", 5)) { /* right after dir, or not at all */
			if (strlen(line + 5) >= sizeof(s.proc) || !path_ok(line + 5, "proc"))
				return -EBADMSG;
			snprintf(s.proc, sizeof(s.proc), "%s", line + 5);
			continue;
		}
		if (!strcmp(line, "end"))
			break;
		if (!read_setting(line, &s))
			return -EBADMSG;
	}
	if (at != len)
		return -EBADMSG;
	*ret = s;
	return 0;
}
