#!/bin/bash
# vm-ram-small-pages on live guests without a cgroup scope (their THP from doctor's timed
# smaps_rollup reads): a 2 GiB fake guest that does not madvise its RAM for huge pages (and so,
# with THP madvise, gets none) is named, with thp_bytes 0 from smaps_rollup; a 2 GiB guest that
# madvises gets huge pages and is not; a 64 MiB guest without huge pages is too small to judge.
. "$VMHOST_TESTS/lib.sh"
mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled)
case $mode in always | madvise) ;; *) skip "transparent_hugepage is '$mode': the rule is thp-never's there" ;; esac

fake_guest small-nothp -m 2G -fake-nothp -fake-nomerge
NOTHP=$SPAWNED
fake_guest small-thp -m 2G -fake-nomerge
THP=$SPAWNED
fake_guest small-tiny -m 64M -fake-nothp -fake-nomerge
TINY=$SPAWNED
"$VMHOST" doctor --interval 0 --smaps-budget 2 --json >"$TEST_TMP/d.json" || die "doctor failed"
small() { jq -c --argjson p "$1" '[.findings[] | select(.id == "vm-ram-small-pages" and .pid == $p)]' "$TEST_TMP/d.json"; }
say "no THP: $(small "$NOTHP")"
if [ "$mode" = madvise ]; then
	check "THP madvise, RAM not madvised: named, thp_bytes 0 from smaps_rollup" jq -e 'length == 1 and .[0].vm == "small-nothp" and .[0].evidence.thp_bytes == 0 and .[0].evidence.thp_source == "smaps_rollup AnonHugePages" and .[0].evidence.guest_ram_bytes == 2147483648' <<<"$(small "$NOTHP")"
fi
huge=$(awk '/^AnonHugePages:/ { print $2 * 1024 }' "/proc/$THP/smaps_rollup")
anon=$(awk '/^Anonymous:/ { print $2 * 1024 }' "/proc/$THP/smaps_rollup")
say "the madvising guest: $huge of $anon anonymous bytes on THP"
if awk -v h="$huge" -v a="$anon" 'BEGIN { exit !(h > 0.05 * a) }'; then
	check "a guest with its RAM on THP is not named" [ "$(small "$THP")" = "[]" ]
else
	fail "the madvising guest got no huge pages here ($huge of $anon bytes): the host cannot show the rule's other side"
fi
check "a 64 MiB guest on 4 KiB pages is too small to be named" [ "$(small "$TINY")" = "[]" ]
finish
