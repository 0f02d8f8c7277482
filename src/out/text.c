#include "out/text.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t l;
	uint32_t cp;
	if (s[0] < 0x80)
		return 1;
	else if ((s[0] & 0xe0) == 0xc0)
		l = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		l = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		l = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (l > n)
		return 0;
	for (size_t i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[l] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, out of range, or a surrogate */
	return l;
}

size_t text_for_terminal(char *dst, size_t cap, const char *src, size_t max_chars)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)src;
	size_t n = strlen(src), w = 0, chars = 0;
	if (!cap)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(u + i, n - i);
		/* C0 controls, DEL, and C1 ones (U+009B, CSI, starts an escape sequence on some terminals) */
		bool control = u[i] < 0x20 || u[i] == 0x7f || (l == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0);
		bool plain = l && !control;
		/* Shown as it is, or each byte as \xHH: what the name holds can be read, not obeyed. */
		size_t bytes = plain ? l : l ? l : 1, out = plain ? l : 4 * bytes, cols = plain ? 1 : 4 * bytes;
		if (w + out >= cap || (max_chars && chars + cols > max_chars))
			break;
		if (plain) {
			memcpy(dst + w, src + i, l);
		} else {
			for (size_t b = 0; b < bytes; b++) {
				unsigned char c = u[i + b];
				char *e = dst + w + 4 * b;
				e[0] = '\\', e[1] = 'x', e[2] = hex[c >> 4], e[3] = hex[c & 15];
			}
		}
		w += out;
		i += bytes;
		chars += cols;
	}
	dst[w] = '\0';
	return chars;
}

const char *text_shown(char *buf, size_t cap, const char *s)
{
	text_for_terminal(buf, cap, s ? s : "", 0);
	return buf;
}

void text_pad(FILE *f, const char *s, size_t chars, size_t width, bool left)
{
	if (!left)
		for (size_t i = chars; i < width; i++)
			fputc(' ', f);
	fputs(s, f);
	if (left)
		for (size_t i = chars; i < width; i++)
			fputc(' ', f);
}
