#!/bin/bash
# No function in src/ is over 80 lines, so that a reader can hold one. The tree's style: a
# function's signature starts at column 0 and its body runs from a `{` alone at column 0 to the
# next `}` at column 0; its length is the body's lines, braces included. With FUNCLEN_SRC=DIR it
# checks another tree: the test plants a long function in a copy and expects the check to fail.
. "$VMHOST_TESTS/lib.sh"

MAX_LINES=80
# Functions allowed to be longer: none.
ALLOWED=""

# lengths SRC: "LINES FILE:LINE NAME" for every function in the .c and .h files under SRC.
lengths() {
	(cd "$1" && find . -name '*.[ch]' | sed 's|^\./||' | sort | xargs awk '
		FNR == 1 { open = 0 }
		/^[A-Za-z_].*\(/ && !open { sig = $0; sigline = FNR }
		/^\{[[:space:]]*$/ && !open {
			open = FNR
			name = sig
			sub(/\(.*/, "", name)
			n = split(name, w, /[[:space:]*]+/)
			name = w[n]
			next
		}
		/^\}/ && open { print FNR - open + 1, FILENAME ":" sigline, name; open = 0 }')
}

# too_long SRC: the functions over MAX_LINES that the allowlist does not name.
too_long() {
	lengths "$1" | awk -v max="$MAX_LINES" -v allowed="$ALLOWED" '
		BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
		$1 > max && !($3 in ok) { print $2 ": " $3 " is " $1 " lines (at most " max ")" }'
}

no_long_functions() {
	local out
	out=$(too_long "$1")
	[ -z "$out" ] || { say "$out"; return 1; }
}

# found_some SRC: the reader finds the tree's functions at all (a check that finds none passes
# for nothing): more than a thousand, main among them.
found_some() {
	local out
	out=$(lengths "$1")
	[ "$(wc -l <<<"$out")" -gt 1000 ] && grep -q ' main\.c:[0-9]* main$' <<<"$out"
}

# planted_fails: a copy of the tree with one 81-line function added fails, by name and length;
# one of exactly 80 lines passes.
planted_fails() {
	local copy out
	copy=$(mktemp -d) || return 1
	cp -r "$SRC/." "$copy/"
	{
		printf '\nstatic int planted_long(int x)\n{\n'
		for i in $(seq 78); do printf '\tx += %d;\n' "$i"; done
		printf '\treturn x;\n}\n'
		printf '\nint planted_80(int x)\n{\n'
		for i in $(seq 77); do printf '\tx += %d;\n' "$i"; done
		printf '\treturn x;\n}\n'
	} >> "$copy/cmd/groups.c"
	out=$(too_long "$copy")
	rm -rf "$copy"
	grep -q '^cmd/groups.c:[0-9]*: planted_long is 81 lines' <<<"$out" || { say "planted function not found: $out"; return 1; }
	! grep -q planted_80 <<<"$out" || { say "an 80-line function was refused: $out"; return 1; }
}

SRC=${FUNCLEN_SRC:-$VMHOST_TESTS/../src}
[ -d "$SRC/core" ] || die "no sources at $SRC"
check "the reader finds the functions of src/" found_some "$SRC"
check "no function in src/ is over $MAX_LINES lines (allowed for now: $ALLOWED)" no_long_functions "$SRC"
check "a planted 81-line function is found, an 80-line one is not" planted_fails
finish
