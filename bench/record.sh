#!/bin/bash
# Benchmark of `vmhost record`: recorder CPU at a 1 s interval with 20 VMs (real fake-guest
# processes), and database bytes per VM-day. Prints medians of RUNS runs.
#   bench/record.sh [RUNS] [SECONDS]       (defaults 3 runs of 30 s)
# Needs build/vmhost and build/fakeguest (make), sqlite3 with dbstat (Debian's has it).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
fake_env=${FAKEGUEST:-}
. "$here/bench/lib.sh"
VMHOST=${VMHOST:-$vmhost}
FAKEGUEST=${fake_env:-$fake}
RUNS=${1:-3}
SECS=${2:-30}
NVMS=20

for i in $(seq $NVMS); do fake_guest_start "bench$i" -m 8M -fake-nothp; done
fake_guest_ready $(seq -f 'bench%g' $NVMS)
echo "record benchmark: $NVMS fake guests (8 MiB each), --interval 1, $RUNS runs of ${SECS}s"

cpus=""
gathers=""
for r in $(seq "$RUNS"); do
	db=$tmp/run$r.db
	TIMEFORMAT='%U %S %R'
	{ time "$VMHOST" record --db "$db" --interval 1 --duration "$SECS" --quiet; } 2>"$tmp/time$r"
	read -r user sys real <"$tmp/time$r"
	cpu=$(awk -v u="$user" -v s="$sys" -v r="$real" 'BEGIN { printf "%.3f", (u + s) / r * 100 }')
	g=$(sqlite3 "$db" 'SELECT gather_us FROM samples ORDER BY gather_us' | median)
	vms=$(sqlite3 "$db" 'SELECT MAX(vm_count) FROM samples')
	printf '  run %d: CPU %s%% of one core (user %ss, sys %ss over %ss), %s VMs, median sample gather %s us\n' \
		"$r" "$cpu" "$user" "$sys" "$real" "$vms" "$g"
	cpus="$cpus $cpu"
	gathers="$gathers $g"
done
cpu_med=$(echo $cpus | tr ' ' '\n' | median)
g_med=$(echo $gathers | tr ' ' '\n' | median)
echo "recorder CPU at 1 s with $NVMS VMs: median ${cpu_med}% of one core; median gather ${g_med} us per sample"

# Bytes per row from the B-tree pages themselves (dbstat), then per VM-day and per VM-year.
db=$tmp/run1.db
sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
read -r vm_bytes vm_rows <<<"$(sqlite3 -separator ' ' "$db" "SELECT (SELECT SUM(pgsize) - SUM(unused) FROM dbstat WHERE name = 'vm_samples'), (SELECT COUNT(*) FROM vm_samples)")"
read -r host_bytes host_rows <<<"$(sqlite3 -separator ' ' "$db" "SELECT (SELECT SUM(pgsize) - SUM(unused) FROM dbstat WHERE name = 'samples'), (SELECT COUNT(*) FROM samples)")"
awk -v vb="$vm_bytes" -v vr="$vm_rows" -v hb="$host_bytes" -v hr="$host_rows" -v n=$NVMS 'BEGIN {
	per_vm = vb / vr; per_host = hb / hr
	day10 = 8640 * per_vm; host_day10 = 8640 * per_host
	# retention: raw 2 days, 5-minute means to 30 days, hourly means to a year
	year_rows = 2 * 8640 + 28 * 288 + 335 * 24
	printf "bytes per VM sample: %.1f (%d rows); per host sample: %.1f (%d rows)\n", per_vm, vr, per_host, hr
	printf "per VM-day at 10 s, raw: %.0f KiB (+ %.0f KiB per host-day for host/KSM rows)\n", day10 / 1024, host_day10 / 1024
	printf "per VM-day at 1 s, raw: %.0f KiB\n", 86400 * per_vm / 1024
	printf "a year at 10 s with the default retention: %d rows = %.2f MiB per VM (+ %.2f MiB host)\n", year_rows, year_rows * per_vm / 1048576, year_rows * per_host / 1048576
	printf "  i.e. %.1f KiB per VM-day averaged over the year; %d VMs: %.0f MiB\n", year_rows * per_vm / 365 / 1024, n, (n * year_rows * per_vm + year_rows * per_host) / 1048576
}'

# On disk, page slack included: append one simulated day at 10 s for every VM of run 1, in the
# order the recorder writes (time-major, VMs interleaved), values varied from its last sample.
before=$(stat -c %s "$db")
nv=$(sqlite3 "$db" 'SELECT COUNT(DISTINCT vm_id) FROM vm_samples')
sqlite3 "$db" "
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 8640),
last AS (SELECT * FROM vm_samples WHERE t_ms = (SELECT MAX(t_ms) FROM vm_samples)),
h AS (SELECT * FROM samples WHERE t_ms = (SELECT MAX(t_ms) FROM samples))
INSERT INTO samples SELECT h.t_ms + k.i * 10000, 0, gather_us + k.i % 97, mem_total, mem_available - k.i * 4096,
  mem_free - k.i * 4096, swap_total, swap_free, page_size, ksm_run, ksm_pages_shared + k.i % 13, ksm_pages_sharing + k.i % 31,
  ksm_pages_unshared, ksm_pages_volatile, ksm_zero_pages, ksm_full_scans + k.i / 20, ksm_pages_scanned + k.i * 1000,
  ksm_general_profit + k.i, ksm_pages_to_scan, ksm_sleep_millisecs, ksmd_cpu_ns + k.i * 10000000, vm_count, skipped FROM k, h;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 8640),
last AS (SELECT * FROM vm_samples WHERE t_ms = (SELECT MAX(t_ms) FROM vm_samples))
INSERT INTO vm_samples SELECT vm_id, t_ms + k.i * 10000, 0, populated, exact, rss + (k.i % 29) * 4096, rss_anon + (k.i % 29) * 4096,
  rss_file, rss_shmem, swap, ksm_merging_pages + k.i % 17, ksm_zero_pages, ksm_profit + (k.i % 17) * 4096, ksm_saved + (k.i % 17) * 4096, pss + (k.i % 29) * 4096,
  overhead + (k.i % 29) * 4096 FROM k, last ORDER BY k.i, vm_id;
PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
after=$(stat -c %s "$db")
awk -v b="$before" -v a="$after" -v n="$nv" 'BEGIN {
	printf "simulated day at 10 s, %d VMs, on disk: %.0f KiB = %.0f KiB per VM-day (host rows included)\n", n, (a - b) / 1024, (a - b) / n / 1024
	year_rows = 2 * 8640 + 28 * 288 + 335 * 24
	printf "a year at 10 s with the default retention, on disk: about %.2f MiB per VM\n", (a - b) / n / 8640 * year_rows / 1048576
}'
