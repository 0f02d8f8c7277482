/* Text from processes (VM names, command lines) as it may be shown: UTF-8 checked, and for a
 * terminal no control characters, so a name cannot move the cursor or recolour the screen,
 * and columns counted in characters, not bytes. */
#ifndef VMHOST_OUT_TEXT_H
#define VMHOST_OUT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
size_t utf8_len(const unsigned char *s, size_t n);

/* Copies src into dst (cap bytes, NUL included) as it is shown on a terminal: each byte of a
 * control character (C0, DEL, C1) or of what is not UTF-8 becomes "\xHH" (4 columns), so a name
 * can be read and never obeyed; at most max_chars columns (0: as many as fit), never half an
 * escape or a character. Returns the columns written, a character taken as one (wide CJK
 * characters are not told apart). */
size_t text_for_terminal(char *dst, size_t cap, const char *src, size_t max_chars);
/* text_for_terminal of s (NULL: "") into buf, returned, for a printf argument. */
const char *text_shown(char *buf, size_t cap, const char *s);

/* Writes s, which is chars characters long, padded with blanks to width, left or right aligned. */
void text_pad(FILE *f, const char *s, size_t chars, size_t width, bool left);

#endif
