#!/bin/bash
# A dense host in one run (issue 43): N small fake QEMU guests (default 4,000; 2 MiB of RAM and
# two vCPU threads each, as bench/mem_scale.sh's) and every figure of the issue's table against
# the floor measured in the same rounds:
#   mem --json (the runtime memo warm) and with --pss-budget 0 (estimates only), beside `cat` of
#     every guest's statm (the floor: one small /proc file a VM) and of every smaps_rollup;
#   serve: a scrape's wall time and its gathering (vmhost_scrape_duration_seconds) at the default
#     --detail basic with --min-interval 0, and the document's bytes and series at basic and full;
#   top at a 1 s refresh: its CPU (perf stat's task-clock) a reading once under way and in % of
#     one CPU, in --batch (every VM, every reading) and in the live view on a 200x50 terminal
#     (script(1)'s pty: the VMs it shows every reading, the rest a tenth at a time);
#   record: the database's growth per day at the default 10 s interval (from a short recording
#     at 2 s), and the report on that database: its size and the time to write it, with the
#     default --charts and with every VM charted;
#   a few that misbehave: two spinning guests under the live view, doctor on them, and the
#     report's first screen after a few samples of them.
# With REF=/path/to/other/vmhost the other build runs the same commands in the same rounds,
# alternating, and each figure gets its ratio (the build before: what a change bought). Medians of
# ROUNDS (default 5; top 3).
#   [REF=VMHOST] bench/dense.sh [BUILD_DIR] [N] [ROUNDS]
# Needs about 3 MiB of free memory a guest, perf, curl and sqlite3; stops what it starts by pid.
set -u
build=${1:-build}
n=${2:-4000}
rounds=${3:-5}
. "$(dirname "$0")/lib.sh"
for tool in perf curl sqlite3 script; do
	command -v $tool >/dev/null || die "needs $tool"
done
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
[ "$avail_kb" -gt $((n * 3 * 1024 + 1024 * 1024)) ] ||
	die "$n guests need about $((n * 3)) MiB and 1 GiB to spare; $((avail_kb / 1024)) MiB available"
ulimit -n "$(ulimit -Hn)" 2>/dev/null # what serve and top may keep open (io/io_cache.c: half of it)
echo "dense host: $n fake guests, $rounds rounds; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$EPOCHREALTIME
fake_guests "$n" dense -m 2M -fake-nomerge -fake-vcpus 2 -smp 2
echo "guests ready in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"

# Each build keeps its own runtime memo (another build may write another format), warmed here.
export VMHOST_RUNTIME_DIR=$tmp/run
mkdir -p "$tmp/run" "$tmp/run-ref"
found=$("$vmhost" mem --json | jq '[.vms[] | select(.name // "" | startswith("dense"))] | length')
[ -n "${REF:-}" ] && VMHOST_RUNTIME_DIR=$tmp/run-ref "$REF" mem --json >/dev/null
ref() { VMHOST_RUNTIME_DIR=$tmp/run-ref "$REF" "$@"; }

# serve_up LABEL BINARY ARGS...: a server on a free loopback port gathering on every scrape;
# its port in $tmp/LABEL.port.
serve_up() {
	local label=$1 bin=$2 port=""
	shift 2
	spawn env VMHOST_RUNTIME_DIR="$tmp/run-$label" "$bin" serve --listen 127.0.0.1:0 --min-interval 0 "$@" \
		2>"$tmp/$label.log"
	for _ in $(seq 600); do
		port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$tmp/$label.log")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || die "serve ($label) did not start: $(cat "$tmp/$label.log")"
	echo "$port" >"$tmp/$label.port"
	SERVERS="${SERVERS:-} $SPAWNED"
}
# scrape LABEL: one scrape of LABEL's server; appends its wall ms to $tmp/LABEL.scrape and the
# gathering's ms to $tmp/LABEL.gather; the document in $tmp/LABEL.doc.
scrape() {
	local label=$1
	curl -s -o "$tmp/$label.doc" -w '%{time_total}\n' "http://127.0.0.1:$(cat "$tmp/$label.port")/metrics" |
		awk '{ print $1 * 1000 }' >>"$tmp/$label.scrape"
	awk '/^vmhost_scrape_duration_seconds / { print $2 * 1000 }' "$tmp/$label.doc" >>"$tmp/$label.gather"
}
mkdir -p "$tmp/run-basic" "$tmp/run-full"
cp -r "$tmp/run/." "$tmp/run-basic/" && cp -r "$tmp/run/." "$tmp/run-full/"
serve_up basic "$vmhost"
serve_up full "$vmhost" --detail full
[ -n "${REF:-}" ] && { mkdir -p "$tmp/run-refserve" && cp -r "$tmp/run-ref/." "$tmp/run-refserve/"; serve_up refserve "$REF"; }
for label in basic full ${REF:+refserve}; do scrape $label; : >"$tmp/$label.scrape"; : >"$tmp/$label.gather"; done

statm=$(for p in $FAKE_PIDS; do printf '/proc/%s/statm ' "$p"; done)
smaps=$(for p in $FAKE_PIDS; do printf '/proc/%s/smaps_rollup ' "$p"; done)
for r in $(seq "$rounds"); do
	ms "$vmhost" mem --json >>"$tmp/mem"
	[ -n "${REF:-}" ] && ms ref mem --json >>"$tmp/ref-mem"
	ms "$vmhost" mem --json --pss-budget 0 >>"$tmp/estimates"
	[ -n "${REF:-}" ] && ms ref mem --json --pss-budget 0 >>"$tmp/ref-estimates"
	ms sh -c "cat $statm" >>"$tmp/statm"
	ms sh -c "cat $smaps" >>"$tmp/smaps"
	scrape basic
	[ -n "${REF:-}" ] && scrape refserve
	scrape full
done
series() { awk '!/^#/ && NF' "$1" | wc -l; }
basic_series=$(series "$tmp/basic.doc") full_series=$(series "$tmp/full.doc")
basic_bytes=$(wc -c <"$tmp/basic.doc") full_bytes=$(wc -c <"$tmp/full.doc")
[ -n "${REF:-}" ] && ref_series=$(series "$tmp/refserve.doc") ref_bytes=$(wc -c <"$tmp/refserve.doc")
stop_pids $SERVERS

# top: CPU per reading at a 1 s refresh once under way: perf stat's task-clock of a run of 12
# refreshes less that of a run of 2, over 10 (the first reading, which opens every file and looks
# at every process, left out), in --batch and in the live view on a pty of 50 lines (script(1);
# script and stty are in both runs, so out of the difference).
top_cpu() { # RUNS: task-clock ms of the command that follows with ITERATIONS replaced by RUNS
	local n=$1
	shift
	perf stat -x, -e task-clock -o "$tmp/perf" "${@//ITERATIONS/$n}" >/dev/null 2>&1 </dev/null
	awk -F, '$3 ~ /^task-clock/ { print $1 }' "$tmp/perf"
}
top_steady() { # OUT CMD...: appends CMD's CPU per reading under way to TMP/OUT
	local out=$1 short long
	shift
	short=$(top_cpu 2 "$@")
	long=$(top_cpu 12 "$@")
	awk -v a="$short" -v b="$long" 'BEGIN { print (b - a) / 10 }' >>"$tmp/$out"
}
top_one() { local out=$1 run=$2 bin=$3; top_steady "$out" env VMHOST_RUNTIME_DIR="$run" "$bin" top --batch --interval 1 --iterations ITERATIONS; }
top_live_one() {
	local out=$1 bin=$2 run=$3
	top_steady "$out" script -qec "stty rows 50 cols 200; VMHOST_RUNTIME_DIR=$run exec $bin top --interval 1 --iterations ITERATIONS" /dev/null
}
for r in $(seq $(((rounds + 1) / 2))); do
	top_one top "$tmp/run" "$vmhost"
	[ -n "${REF:-}" ] && top_one ref-top "$tmp/run-ref" "$REF"
	top_live_one top-live "$vmhost" "$tmp/run"
	[ -n "${REF:-}" ] && top_live_one ref-top-live "$REF" "$tmp/run-ref"
done

# record: a short recording at 2 s; its growth per sample times the samples of a day at 10 s
# (raw samples are kept 2 days, then 5-minute means: docs/record.md).
record_growth() {
	local bin=$1 db=$2
	env VMHOST_RUNTIME_DIR="$tmp/run" "$bin" record --db "$db" --interval 2 --duration 1 --quiet >/dev/null 2>&1
	local first samples0
	first=$(stat -c %s "$db")
	samples0=$(sqlite3 "$db" 'SELECT count(*) FROM samples')
	env VMHOST_RUNTIME_DIR="$tmp/run" "$bin" record --db "$db" --interval 2 --duration 12 --quiet >/dev/null 2>&1
	local samples
	samples=$(sqlite3 "$db" 'SELECT count(*) FROM samples')
	awk -v a="$first" -v b="$(stat -c %s "$db")" -v n=$((samples - samples0)) \
		'BEGIN { printf "%.0f %d %.0f\n", n ? (b - a) / n : 0, n, n ? (b - a) / n * 8640 : 0 }'
}
read -r rec_sample rec_n rec_day < <(record_growth "$vmhost" "$tmp/dense.db")
TIMEFORMAT=%R
report_s=$( { time "$vmhost" report --db "$tmp/dense.db" --out "$tmp/dense.html" >/dev/null 2>&1; } 2>&1)
report_bytes=$(stat -c %s "$tmp/dense.html" 2>/dev/null || echo 0)
report_all_s=$( { time "$vmhost" report --db "$tmp/dense.db" --out "$tmp/dense-all.html" --charts all >/dev/null 2>&1; } 2>&1)
report_all_bytes=$(stat -c %s "$tmp/dense-all.html" 2>/dev/null || echo 0)

med() { [ -s "$tmp/$1" ] && median <"$tmp/$1" || echo 0; }
# ratio THIS REF_FILE: "; 0.80x REF's 12.3" when REF ran.
ratio() { [ -n "${REF:-}" ] && awk -v a="$1" -v b="$(med "$2")" 'BEGIN { if (b > 0) printf "; %.2fx REF'"'"'s %.1f", a / b, b }'; }
row() { printf '%-40s %10.1f %s%s\n' "$1" "$2" "$3" "${4:+ ($4)}"; }
echo
echo "VM processes found: $found of $n; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
statm_ms=$(med statm)
row "cat every statm (the floor)" "$statm_ms" "ms"
row "cat every smaps_rollup" "$(med smaps)" "ms"
floor() { awk -v a="$1" -v b="$statm_ms" 'BEGIN { printf "%.1fx the floor", a / b }'; }
row "vmhost mem --json" "$(med mem)" "ms" "$(floor "$(med mem)")$(ratio "$(med mem)" ref-mem)"
row "vmhost mem --json --pss-budget 0" "$(med estimates)" "ms" "$(floor "$(med estimates)")$(ratio "$(med estimates)" ref-estimates)"
row "serve scrape, --detail basic" "$(med basic.scrape)" "ms" \
	"gathering $(med basic.gather) ms, $(floor "$(med basic.gather)")$(ratio "$(med basic.scrape)" refserve.scrape)"
row "serve scrape, --detail full" "$(med full.scrape)" "ms" "gathering $(med full.gather) ms"
printf '%-40s %10s %s\n' "document, --detail basic" "$basic_bytes" "bytes, $basic_series series ($(awk -v s="$basic_series" -v n="$found" 'BEGIN { printf "%.1f", s / n }') a VM)"
printf '%-40s %10s %s\n' "document, --detail full" "$full_bytes" "bytes, $full_series series"
[ -n "${REF:-}" ] && printf '%-40s %10s %s\n' "  REF's document" "$ref_bytes" "bytes, $ref_series series"
top_ms=$(med top)
row "top --batch, CPU a reading under way" "$top_ms" "ms" \
	"$(awk -v a="$top_ms" -v f="$statm_ms" 'BEGIN { printf "%.1f%% of one CPU; the floor %.1f%%", a / 10, f / 10 }')$(ratio "$top_ms" ref-top)"
top_live_ms=$(med top-live)
row "top live view, CPU a reading under way" "$top_live_ms" "ms" \
	"$(awk -v a="$top_live_ms" 'BEGIN { printf "%.1f%% of one CPU", a / 10 }')$(ratio "$top_live_ms" ref-top-live)"
printf '%-40s %10s %s\n' "record: database growth a sample" "$rec_sample" "bytes ($rec_n samples at 2 s); $(awk -v d="$rec_day" 'BEGIN { printf "%.0f MB a day at 10 s", d / 1e6 }')"
printf '%-40s %10s %s\n' "report on that database" "$report_bytes" "bytes, written in ${report_s} s (charts of 100 VMs, the default)"
printf '%-40s %10s %s\n' "  the same, --charts all" "$report_all_bytes" "bytes, written in ${report_all_s} s"

# A few that misbehave: two guests whose vCPUs spin start while the live view runs (50 lines,
# sorted by CPU%, as an operator leaves it): from which refresh on they are its first two rows
# (a VM new to the view is read at once and again at the next refresh, for its first rates), and
# the rules doctor finds on them.
script -qec "stty rows 50 cols 200; VMHOST_RUNTIME_DIR=$tmp/run exec $vmhost top --interval 1 --iterations 8" /dev/null \
	>"$tmp/hogs.screen" 2>&1 </dev/null &
viewer=$!
until grep -q 'NAME' "$tmp/hogs.screen" 2>/dev/null; do kill -0 $viewer 2>/dev/null || break; sleep 0.2; done
fake_guest_start dense-hogA -m 2M -fake-nomerge -fake-vcpus 2 -smp 2 -fake-busy-vcpus
fake_guest_start dense-hogB -m 2M -fake-nomerge -fake-vcpus 2 -smp 2 -fake-busy-vcpus
wait $viewer
# Each frame's first two VM rows, after its header line: the refresh at which both are hogs.
on_top=$(sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$tmp/hogs.screen" | awk '
	/^ *\*?PID|^\*?NAME/ { frame++; row = 0; next }
	frame && row < 2 && NF { row++; if ($0 ~ /dense-hog/) hogs[frame]++ }
	END { for (f = 1; f <= frame; f++) if (hogs[f] == 2) { print f; exit } print "never" }')
printf '%-40s %10s %s\n' "two spinning guests on top of the view" "$on_top" "(the frame, of 8 at 1 s, whose first two rows they are)"
doctor_hogs=$("$vmhost" doctor --json 2>/dev/null | jq -r '[.findings[] | select(tostring | test("dense-hog")) | "\(.id) (\(.vm // "host"))"] | unique | join(", ")')
printf '%-40s %10s %s\n' "doctor's findings that name them" "" "${doctor_hogs:-none}"
# ... and the report's first screen, on the dense database after a few samples with them running.
env VMHOST_RUNTIME_DIR="$tmp/run" "$vmhost" record --db "$tmp/dense.db" --interval 2 --duration 5 --quiet >/dev/null 2>&1
"$vmhost" report --db "$tmp/dense.db" --out "$tmp/hogs.html" >/dev/null 2>&1
report_hogs=$(sed -n 's/.*<div class="busy"><b>Busiest at the last sample:<\/b> \(.*\)<span class="note">.*/\1/p' "$tmp/hogs.html" | sed 's/<[^>]*>//g')
printf '%-40s %10s %s\n' "the report's first screen, busiest" "" "${report_hogs:-no such line}"
