#!/bin/bash
# What VMs coming and going cost vmhost: fake QEMU guests started every 20 ms and killed after
# 0.1-0.5 s (about 20 alive at a time) for SECONDS, while `vmhost record --interval 1` samples;
# prints the recorder's CPU per sample, the samples it wrote and the vanished processes it
# counted, and `vmhost mem --json` wall time with and without the churn (medians).
#   bench/churn.sh [BUILD_DIR] [SECONDS]
set -u
build=${1:-build}
secs=${2:-30}
. "$(dirname "$0")/lib.sh"
# the guests the churner started and its killers did not reach yet
on_cleanup '[ -f "$tmp/spawned" ] && while read -r p _; do kill "$p" 2>/dev/null; done <"$tmp/spawned"'
quiet_ms=$(for r in $(seq 20); do ms "$vmhost" mem --json; done | median)
spawn bash "$(dirname "$0")/../tests/helpers/churn.sh" "$fake" "$tmp/spawned"
sleep 1
spawn "$vmhost" record --db "$tmp/c.db" --interval 1 --duration "$secs" --quiet
rec=$SPAWNED
# its CPU as last seen alive, read every 0.2 s until it exits
(while t=$(awk '{ print $14 + $15 }' /proc/$rec/stat 2>/dev/null) && [ -n "$t" ]; do echo "$t" >"$tmp/ticks"; sleep 0.2; done) &
busy_ms=$(for r in $(seq 20); do ms "$vmhost" mem --json; sleep 0.2; done | median)
wait "$rec"
rc=$?
sleep 0.3
ticks=$(cat "$tmp/ticks" 2>/dev/null || echo 0)
hz=$(getconf CLK_TCK)
samples=$(sqlite3 "$tmp/c.db" 'SELECT count(*) FROM samples')
skipped=$(sqlite3 "$tmp/c.db" 'SELECT coalesce(sum(skipped), 0) FROM samples')
vms=$(sqlite3 "$tmp/c.db" "SELECT count(*) FROM vms WHERE name LIKE 'churn%'")
echo "churn: $(wc -l <"$tmp/spawned") guests started over ${secs}s (about 20 alive at a time)"
echo "record --interval 1: exit $rc, $samples samples, $vms guest series, $skipped vanished processes counted"
awk -v t="$ticks" -v hz="$hz" -v n="$samples" 'BEGIN { printf "  recorder CPU: %.1f ms per sample\n", n ? 1000 * t / hz / n : 0 }'
echo "vmhost mem --json median: ${quiet_ms} ms without churn, ${busy_ms} ms with it"
