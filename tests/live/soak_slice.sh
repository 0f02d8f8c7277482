#!/bin/bash
# The 2-minute slice of bench/soak.sh that make check runs (issue 42): `serve --db` and `record`
# side by side while guests come and go and a scraper keeps Prometheus' pace with bursts, judged on
# what an operator would notice after months of it: no scrape failed, no sample missing, the fds
# and threads at the end as at the start, RSS not running away, rows in both databases. The soak
# takes its start's and end's readings quiet (same guests, no churn, no scrape under way), after
# samples it waits for: nothing here depends on how fast this machine is.
. "$VMHOST_TESTS/lib.sh"
SOAK=$VMHOST_TESTS/../bench/soak.sh
OUT=$TEST_TMP/soak.out
ERR=$TEST_TMP/soak.err
# RSS growth allowed between the quiet start and end: the SQLite writer's page cache is bounded at
# 512 KiB (src/store/store.c), and the rest is the heap's high-water mark from ~20 more guests at
# once than at the start (their memo, their held /proc files), which the allocator may keep. A
# leak of a few hundred bytes a scrape or a guest stays under it in 2 minutes; a leak per sample
# of the host's processes, or of a document per scrape, does not.
RSS_GROWTH_MAX_KIB=16384

# fig NAME COLUMN: a figure's column (2 the start's, 3 the end's; the samples' lines: 2 missing,
# 4 held); empty when the soak printed no such line.
fig() { awk -v k="$1" -v c="$2" '$1 == k { print $c; exit }' "$OUT"; }
not_in_err() {
	local s
	for s; do grep -qF "$s" "$ERR" && return 1; done
	return 0
}
is() { [ -n "$1" ] && [ "$1" = "$2" ]; }
positive() { [ -n "$1" ] && [ "$1" -gt 0 ]; }
# grew_under START END MAX: both read, and END - START <= MAX.
grew_under() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { exit !(b - a <= m) }'; }

bash "$SOAK" 2 "$VMHOST_BUILD" >"$OUT" 2>"$ERR"
rc=$?
cat "$OUT"
sed 's/^/  /' "$ERR"
check "bench/soak.sh 2 exits 0 (it exited $rc)" [ "$rc" = 0 ]
# Its stages, in order: a missing one says where it stopped.
for stage in "wrote 2 samples each" "soaking for 2 min" "guests are gone; waiting for 2 samples" \
	"the end's reading taken"; do
	check "stage: $stage" grep -qF "$stage" "$ERR"
done
check "serve and record lived to the end, wrote their samples, the churned guests went" \
	not_in_err "died" "wrote no 2 samples more" "still there"

check "0 scrapes failed ($(fig scrapes_failed 2) of $(fig scrapes_failed 4))" is "$(fig scrapes_failed 2)" 0
check "scrapes were made" positive "$(fig scrapes_failed 4)"
check "scrape latency read (p50 $(fig scrape_p50_ms 3) ms, p99 $(fig scrape_p99_ms 3) ms: shown, not judged)" \
	[ -n "$(fig scrape_p50_ms 3)" ]
for p in serve record; do
	check "$p: 0 samples missing of $(fig ${p}_samples_missing 4)" is "$(fig ${p}_samples_missing 2)" 0
	check "$p: the database got samples" positive "$(fig ${p}_samples_missing 4)"
	steady=$(grep "^${p}_samples_missing " "$OUT" | sed -n 's/.*steady guests: \([0-9]*\) rows missing of \([0-9]*\).*/\1 \2/p')
	check "$p: the steady guests' rows, none missing (missing, held: ${steady:-none})" \
		eval '[ -n "$steady" ] && [ "${steady% *}" = 0 ] && [ "${steady#* }" -gt 0 ]'
	# Its fds follow the host's processes (it holds their /proc files open), so all of them are not
	# compared: the others (database, sockets, its own) are, and none may stay on a gone guest.
	check "$p: fds not on /proc files the same at the end ($(fig ${p}_fds_not_proc 2) -> $(fig ${p}_fds_not_proc 3))" \
		is "$(fig ${p}_fds_not_proc 2)" "$(fig ${p}_fds_not_proc 3)"
	check "$p: no fd left on the churned guests' files ($(fig ${p}_fds_on_gone_guests 2))" \
		is "$(fig ${p}_fds_on_gone_guests 2)" 0
	check "$p: threads the same at the end ($(fig ${p}_threads 2) -> $(fig ${p}_threads 3))" \
		is "$(fig ${p}_threads 2)" "$(fig ${p}_threads 3)"
	start=$(fig ${p}_rss_kib 2) end=$(fig ${p}_rss_kib 3)
	check "$p: RSS grew under $RSS_GROWTH_MAX_KIB KiB (${start:-?} -> ${end:-?} KiB)" \
		grew_under "$start" "$end" $RSS_GROWTH_MAX_KIB
done
check "record dropped no sample" is "$(fig record_dropped 2)" 0

# The parts that need /dev/kvm and libvirt, run where the host has them.
grep -q "firmware KVM guest yes" "$OUT" ||
	skip_part "no firmware KVM guest in the soak: it needs /dev/kvm and qemu-system-x86_64"
if ! grep -q "libvirt domain yes" "$OUT"; then
	why=$(sed -n 's/^soak: no libvirt domain: //p' "$ERR" | head -1)
	skip_part "no libvirt domain in the soak: ${why:-it needs root, libvirtd, virtlogd, virsh and /dev/kvm}"
fi
finish
