#include "out/report/html.h"

#include "out/svg.h"

/* Inline SVG and HTML text share one escaping rule (out/svg.c). */
void html_escape(FILE *f, const char *s) { svg_escape(f, s); }

static const char stylesheet[] =
	"body{font:14px/1.4 'DejaVu Sans',Helvetica,Arial,sans-serif;color:#1d2230;background:#fff;margin:0}"
	"main{max-width:1000px;margin:0 auto;padding:16px 20px}"
	"h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:26px 0 6px;border-bottom:1px solid #d5d9e2;"
	"padding-bottom:3px}"
	".sub{color:#5a6272;margin:0 0 10px}.note{color:#5a6272;font-size:12px;margin-left:8px;font-weight:normal}"
	"figure.chart{margin:10px 0 18px;break-inside:avoid;page-break-inside:avoid}"
	"figcaption{font-weight:bold;margin-bottom:2px}"
	"svg{width:100%;height:auto;display:block}"
	"svg text{font:11px 'DejaVu Sans',Helvetica,Arial,sans-serif;fill:#3b4252}"
	".legend{font-size:12px;color:#3b4252;margin:2px 0 0 78px}.legend span{margin-right:16px;white-space:nowrap}"
	".legend i{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:-1px;opacity:.8}"
	".legend i.dash{height:3px;vertical-align:3px}"
	"table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0 12px;break-inside:auto}"
	"th,td{padding:4px 8px;border-bottom:1px solid #e3e6ec;text-align:right;white-space:nowrap}"
	"th{background:#f3f5f8;font-weight:600}td.l,th.l{text-align:left}"
	"tr.flag td{background:#fdecec}.bad{color:#b3261e;font-weight:bold}.good{color:#2e7d32}"
	".cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}"
	".card{border:1px solid #d5d9e2;border-radius:6px;padding:6px 10px;min-width:120px}"
	".card b{display:block;font-size:18px}.card span{color:#5a6272;font-size:12px}"
	"svg.spark{width:80px;height:18px;display:inline-block;vertical-align:middle}td.s{padding:0 4px}"
	"th[data-key]{cursor:pointer}th[aria-sort=ascending]::after{content:' \\25B2'}"
	"th[aria-sort=descending]::after{content:' \\25BC'}#vmfilter{float:right;font-size:13px;padding:2px 6px}"
	".pair{display:grid;grid-template-columns:1fr 1fr;gap:14px}.pair .legend{margin-left:8px}"
	".flagged{border-left:4px solid #b3261e;padding:4px 10px;margin:4px 0 10px;background:#fdf5f5}"
	".flagged .note,.busy .note{display:block;margin:2px 0 0}"
	".busy{border-left:4px solid #f28e2b;padding:4px 10px;margin:4px 0 10px;background:#fdf8f2}"
	"details.vm{border:1px solid #d5d9e2;border-radius:6px;margin:6px 0;padding:4px 10px}"
	"details.vm.flagged{border-color:#b3261e}summary{cursor:pointer;font-weight:bold}"
	"footer{color:#5a6272;font-size:12px;margin:28px 0 10px}"
	"@media print{body{font-size:11px}main{max-width:none;padding:0}h2{break-after:avoid}"
	"tr{break-inside:avoid}a{color:inherit;text-decoration:none}}"
	"@page{margin:14mm}";

void html_page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>",
	      f);
	html_escape(f, title);
	fprintf(f, "</title>\n<style>%s</style></head>\n<body><main>\n", stylesheet);
}

void html_page_end(FILE *f) { fputs("</main></body></html>\n", f); }
