#!/bin/bash
# The floors of src/, read off the includes: a file may include its own folder and the folders
# below it, never one above it nor a neighbour on its own floor (docs/architecture.md). With
# LAYERS_SRC=DIR it checks another tree: the test plants an upward include in a copy and expects
# the check to fail there.
. "$VMHOST_TESTS/lib.sh"

# floor FOLDER: the floor of a folder under src/ (core's rooms by name), empty when unknown.
floor() {
	case $1 in
	parse | bpf | parse/http | parse/netlink) echo 0 ;; parse/cmdline | io) echo 1 ;; io/peer) echo 2 ;;
	core/base) echo 3 ;; core/model) echo 4 ;; core/kvm | core/tune | core/share) echo 5 ;;
	core/sample) echo 6 ;; core/doctor) echo 7 ;; core/bench) echo 8 ;;
	out | store) echo 9 ;; out/prom) echo 10 ;; net | out/report) echo 11 ;; cmd) echo 12 ;; .) echo 13 ;;
	esac
}

# violations SRC: one line per include that climbs or crosses, or per file in an unknown folder.
violations() {
	local src=$1 file dir inc target mine theirs
	while IFS= read -r file; do
		dir=$(dirname "$file")
		mine=$(floor "$dir")
		[ -n "$mine" ] || { echo "$file: folder $dir has no floor (add it to tests/cli/layers.sh)"; continue; }
		while IFS= read -r inc; do
			target=$(dirname "$inc")
			theirs=$(floor "$target")
			[ -n "$theirs" ] || { echo "$file: includes $inc, of no known folder"; continue; }
			[ "$target" = "$dir" ] && continue
			[ "$theirs" -lt "$mine" ] || echo "$file: includes $inc ($target is floor $theirs, $dir floor $mine)"
		done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$src/$file")
	done < <(cd "$src" && find . -name '*.[ch]' | sed 's|^\./||' | sort)
}

# none LISTER SRC: LISTER (violations, platform_calls) finds nothing in SRC.
none() {
	local out
	out=$("$1" "$2")
	[ -z "$out" ] || { say "$out"; return 1; }
}

# planted_caught LISTER LINE PATTERN: a copy of the tree with LINE appended to core/model/host.c
# makes LISTER report a line matching PATTERN.
planted_caught() {
	local copy out
	copy=$(mktemp -d) || return 1
	cp -r "$SRC/." "$copy/"
	printf '%s\n' "$2" >> "$copy/core/model/host.c"
	out=$("$1" "$copy")
	rm -rf "$copy"
	grep -q "$3" <<<"$out" || { say "planted line not found: $out"; return 1; }
}

# Only io/ touches the platform: outside src/io/, no call that opens, creates, removes or renames
# a file, or opens a socket or a perf event (docs/architecture.md). What must stay, with why:
PLATFORM_CALLS='open|openat|openat2|fopen|fdopen|freopen|creat|socket|socketpair|bind|connect|accept|accept4|perf_event_open|SYS_perf_event_open|memfd_create|mkstemp|mkostemp|unlink|unlinkat|rename|renameat|renameat2|mkdir|mkdirat|rmdir|mkdtemp'
PLATFORM_ALLOWED=(
	# none: signal handlers remove files through io/'s async-signal-safe calls too
)

# platform_calls SRC: "FILE:LINE: CALL" for each such call outside io/ (comments and strings
# left out) that the list above does not allow.
platform_calls() {
	local src=$1 hit file name allowed a
	(cd "$src" && find . -name '*.[ch]' -not -path './io/*' | sed 's|^\./||' | sort | while IFS= read -r file; do
		sed -E 's/"([^"\\]|\\.)*"//g; s|/\*.*\*/||g; s|//.*||; s/^[[:space:]]*\*.*//; s/^[[:space:]]*\/\*.*//' "$file" |
			grep -noE "(^|[^A-Za-z0-9_.>])($PLATFORM_CALLS)[[:space:]]*\(" | sed "s|^|$file:|"
	done) | while IFS= read -r hit; do
		file=${hit%%:*}
		name=$(sed -E 's/.*[^A-Za-z0-9_]([A-Za-z0-9_]+)[[:space:]]*\($/\1/; s/^.*:([A-Za-z0-9_]+)[[:space:]]*\($/\1/' <<<"$hit")
		allowed=no
		for a in "${PLATFORM_ALLOWED[@]}"; do
			[ "$a" = "$file:$name" ] && allowed=yes
		done
		[ $allowed = yes ] || echo "$hit"
	done
}

SRC=${LAYERS_SRC:-$VMHOST_TESTS/../src}
[ -d "$SRC/core" ] || die "no sources at $SRC"
check "every include of src/ goes down a floor or stays in its folder" none violations "$SRC"
check "an include planted upward (core/model -> core/bench) is found" \
	planted_caught violations '#include "core/bench/workload.h"' '^core/model/host.c: includes core/bench/workload.h'
check "outside io/, nothing opens, creates, removes or renames a file, socket or perf event" none platform_calls "$SRC"
check "an fopen planted in core/model is found" \
	planted_caught platform_calls 'static void planted(void) { FILE *f = fopen("/etc/hostname", "r"); (void)f; }' \
	'^core/model/host.c:[0-9]*:.*fopen'
check "core/ holds only rooms, no loose files" sh -c "! ls '$SRC'/core/*.[ch] 2>/dev/null"
check "no folder but cmd/ holds more than 15 .c files" sh -c "
	cd '$SRC' && ! find . -name '*.c' -not -path './cmd/*' -printf '%h\n' | sort | uniq -c | awk '\$1 > 15' | grep ."
finish
