/* The HTML report's page: one self-contained file (inline CSS, inline SVG, an inline script,
 * no network), readable on a laptop screen and printable. */
#ifndef VMHOST_OUT_HTML_H
#define VMHOST_OUT_HTML_H

#include <stdio.h>

/* Writes s with &, <, >, " and ' escaped. NULL writes nothing. */
void html_escape(FILE *f, const char *s);
/* <!doctype html> ... <body><main>, with the stylesheet. */
void html_page_begin(FILE *f, const char *title);
void html_page_end(FILE *f);

#endif
