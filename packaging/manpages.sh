#!/bin/sh
# Writes vmhost's man pages from the program's own help, so they cannot drift from --help:
# vmhost(8) from `vmhost help`, and vmhost-COMMAND(8) for every command that `vmhost help`
# lists, with a section per subcommand (`vmhost help ksm` lists tune and sweep) and a
# one-line .so page per subcommand (vmhost-ksm-tune(8) opens vmhost-ksm(8)).
# usage: manpages.sh VMHOST OUTDIR [DOCDIR]
#   DOCDIR: where the docs are installed; "docs/X.md" in the help becomes DOCDIR/X.md.
# The date is SOURCE_DATE_EPOCH's when set (reproducible builds), else none.
set -eu
vmhost=${1:?usage: manpages.sh VMHOST OUTDIR [DOCDIR]}
out=${2:?usage: manpages.sh VMHOST OUTDIR [DOCDIR]}
docdir=${3:-}
version=$("$vmhost" --version | awk '{print $2}')
date=""
[ -n "${SOURCE_DATE_EPOCH:-}" ] && date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# list_commands FILE: the NAME column of the "commands:" block of one help text.
list_commands() {
	awk '/^commands:$/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$1"
}
# summary FILE NAME: the one-line summary of NAME in FILE's "commands:" block.
summary() {
	awk -v n="$2" '/^commands:$/ { on = 1; next } on && /^$/ { on = 0 }
		on && $1 == n { sub(/^  [^ ]+ +/, ""); print; exit }' "$1"
}

# The converter: a page spec on stdin (lines "@key args" and help texts), roff on stdout.
#   @th NAME            @name TEXT          @body (help text follows)
#   @section TITLE      (help text of a subcommand follows, under its own .SH)
#   @global             (the main help follows: its global options and exit codes only)
#   @seealso TEXT
cat >"$work/help2roff.awk" <<'AWK'
function esc(s,    r, i, c, p) {
	gsub(/\\/, "\\e", s)
	if (docdir != "") gsub(/docs\//, "\002" docdir "/", s)
	r = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		p = i > 1 ? substr(s, i - 1, 1) : " "
		# a dash that starts a word (an option) or follows one is a minus sign
		if (c == "-" && (index(" [|(,'\"=/-", p) || substr(s, i + 1, 1) == "-")) c = "\\-"
		r = r c
	}
	gsub(/\002/, "\\%", r) # no hyphenation inside an installed path
	return r
}
function line(s) { text = text s "\n" }
# text for filling: a line that starts with . or ' would be read as a request
function say(s) { if (s ~ /^[.']/) s = "\\&" s; line(s) }
# an option term: --name in bold, its argument words in italics; any other term in bold
function term(t,    n, w, i, r, tail) {
	if (t !~ /^-/) return "\\fB" esc(t) "\\fR"
	n = split(t, w, " ")
	r = ""
	for (i = 1; i <= n; i++) {
		tail = ""
		if (w[i] ~ /,$/) { tail = ","; w[i] = substr(w[i], 1, length(w[i]) - 1) }
		r = r (i > 1 ? " " : "") (w[i] ~ /^-/ ? "\\fB" : "\\fI") esc(w[i]) "\\fR" tail
	}
	return r
}
function close_lists() {
	while (depth > 1) { line(".RE"); depth-- }
	depth = 0
}
function synopsis(s,    cmd, args, n, i, c, inb) {
	# "vmhost ksm tune [--a B] [--c]": the command words, then the arguments, each [...] unbreakable
	match(s, /^[a-z]+( [a-z]+)*/)
	cmd = substr(s, 1, RLENGTH); args = substr(s, RLENGTH + 2)
	gsub(/  +/, " ", args)
	r = ""; inb = 0
	for (i = 1; i <= length(args); i++) {
		c = substr(args, i, 1)
		if (c == "[") inb++
		if (c == "]") inb--
		r = r (c == " " && inb > 0 ? "\001" : c)
	}
	r = esc(r); gsub(/\001/, "\\ ", r)
	gsub(/[A-Z][A-Z0-9_:\/]*/, "\\fI&\\fR", r)
	syn = syn ".SY \"" cmd "\"\n" r "\n.YS\n"
}
function flush_usage() { if (usage != "") synopsis(usage); usage = "" }
BEGIN { mode = ""; depth = 0; text = ""; syn = ""; usage = ""; prev_blank = 1 }
/^@th / { th = substr($0, 5); next }
/^@name / { name = substr($0, 7); next }
/^@seealso / { seealso = substr($0, 10); next }
/^@body$/ { flush_usage(); close_lists(); mode = "body"; prev_blank = 1; need_pp = 0; next }
/^@section / {
	flush_usage(); close_lists(); mode = "body"; prev_blank = 1; need_pp = 0
	line(".SH \"" toupper(substr($0, 10)) "\""); next
}
/^@global$/ { flush_usage(); close_lists(); mode = "global"; next }
mode == "global" {
	if ($0 ~ /^global options/) { gon = 1; next }
	if (gon && $0 == "") { gon = 0; next }
	if (gon) {
		t = $0; sub(/^ +/, "", t); match(t, /  +/)
		gtext = gtext ".TP\n" term(substr(t, 1, RSTART - 1)) "\n" esc(substr(t, RSTART + RLENGTH)) "\n"
	}
	if ($0 ~ /^exit codes: /) exits = substr($0, 13)
	next
}
{
	L = $0
	if (L ~ /^usage: /) { flush_usage(); usage = substr(L, 8); next }
	if (usage != "" && L ~ /^ +[\[-]/) { usage = usage " " L; next }
	flush_usage()
	if (L ~ /^ *$/) { close_lists(); need_pp = 1; prev_blank = 1; next }
	if (prev_blank && L ~ /^[a-z][a-z ()]*:$/) {
		close_lists(); h = substr(L, 1, length(L) - 1)
		line(".SS \"" toupper(substr(h, 1, 1)) substr(h, 2) "\""); need_pp = 0; prev_blank = 0; next
	}
	prev_blank = 0
	match(L, /^ */); indent = RLENGTH; t = substr(L, indent + 1)
	if (indent == 0) {
		close_lists()
		if (need_pp) line(".PP")
		need_pp = 0; say(esc(t)); next
	}
	# a continuation of the innermost item whose description column this line reaches
	for (d = depth; d >= 1; d--) if (indent >= desc_col[d]) break
	if (d >= 1) {
		while (depth > d) { line(".RE"); depth-- }
		say(esc(t)); next
	}
	# a new item: "TERM  description" (two spaces), else the option and its argument words
	if (match(t, /  +/)) {
		tm = substr(t, 1, RSTART - 1); ds = substr(t, RSTART + RLENGTH); col = indent + RSTART + RLENGTH - 1
	} else {
		n = split(t, w, " "); tm = w[1]; k = 2
		if (tm ~ /^-/) while (k <= n && w[k] ~ /^[A-Z][A-Z0-9_.:,|\/\[\]-]*$/) tm = tm " " w[k++]
		ds = substr(t, length(tm) + 2); col = indent + length(tm) + 1
	}
	while (depth > 0 && indent < item_indent[depth]) { if (depth > 1) line(".RE"); depth-- }
	if (depth == 0 || indent > item_indent[depth]) {
		if (depth > 0) line(".RS")
		depth++
	}
	item_indent[depth] = indent; desc_col[depth] = col
	line(".TP"); line(term(tm)); if (ds != "") say(esc(ds))
	need_pp = 1
}
END {
	flush_usage(); close_lists()
	print ".TH " th
	print ".SH NAME"
	print name
	print ".SH SYNOPSIS"
	printf "%s", syn
	print ".SH DESCRIPTION"
	printf "%s", text
	if (gtext != "") { print ".SH \"GLOBAL OPTIONS\""; print "Accepted before or after the command:"; printf "%s", gtext }
	if (exits != "") { print ".SH \"EXIT STATUS\""; print esc(exits) "." }
	if (seealso != "") { print ".SH \"SEE ALSO\""; print seealso }
}
AWK

"$vmhost" help >"$work/main.txt"
commands=$(list_commands "$work/main.txt" | grep -vx help)
docref=""
[ -n "$docdir" ] && docref=", and the documents in $docdir"

# roff NAME NAMES... : the page for vmhost NAME (or vmhost itself), from the specs in $work.
th() { printf '@th %s 8 "%s" "vmhost %s" "System Administration"\n' "$1" "$date" "$version"; }
refs() {
	printf '@seealso '
	sep=""
	for ref in "$@"; do printf '%s\\fB%s\\fR(8)' "$sep" "$(echo "$ref" | sed 's/-/\\-/g')"; sep=", "; done
	printf '%s\n' "$docref"
}

for c in $commands; do
	"$vmhost" help "$c" >"$work/$c.txt"
	subs=$(list_commands "$work/$c.txt")
	names="vmhost\\-$c"
	for s in $subs; do names="$names, vmhost\\-$c\\-$s"; done
	{
		th "VMHOST-$(echo "$c" | tr a-z A-Z)"
		echo "@name $names \\- $(summary "$work/main.txt" "$c")"
		echo "@body"
		cat "$work/$c.txt"
		for s in $subs; do
			echo "@section $c $s"
			"$vmhost" help "$c" "$s"
		done
		echo "@global"
		cat "$work/main.txt"
		others=$(for o in $commands; do [ "$o" = "$c" ] || echo "vmhost-$o"; done)
		refs vmhost $others
	} >"$work/$c.spec"
	awk -v docdir="$docdir" -f "$work/help2roff.awk" "$work/$c.spec" >"$out/vmhost-$c.8"
	for s in $subs; do echo ".so man8/vmhost-$c.8" >"$out/vmhost-$c-$s.8"; done
done

{
	th VMHOST
	echo "@name vmhost \\- what each virtual machine really costs a Linux virtualization host"
	echo "@body"
	cat "$work/main.txt"
	refs $(for c in $commands; do echo "vmhost-$c"; done)
} >"$work/vmhost.spec"
awk -v docdir="$docdir" -f "$work/help2roff.awk" "$work/vmhost.spec" >"$out/vmhost.8"
