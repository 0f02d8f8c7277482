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

/* Copies src into dst (cap bytes, NUL included) as it is shown on a terminal: control
 * characters (C0, DEL, C1) and bytes that are not UTF-8 become '?'; at most max_chars characters (0: as many
 * as fit). Returns the characters written, each taken as one column (wide CJK characters are
 * not told apart). */
size_t text_for_terminal(char *dst, size_t cap, const char *src, size_t max_chars);

/* Writes s, which is chars characters long, padded with blanks to width, left or right aligned. */
void text_pad(FILE *f, const char *s, size_t chars, size_t width, bool left);

#endif
