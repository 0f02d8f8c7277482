#!/bin/bash
# A real Prometheus scrapes `vmhost serve`, which watches real mergeable processes (KSM on) and a
# real QEMU; the expected series must come back through Prometheus's HTTP API with sane values,
# and the contrib alerting rules must load and evaluate. Needs root (KSM) and the ksm lock.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
CONTRIB=$VMHOST_TESTS/../contrib/prometheus
MiB=1048576
[ "$(id -u)" = 0 ] || skip "needs root to run KSM"
[ -n "${VMHOST_KSM_LOCKED:-}" ] || die "run under the ksm lock (ctest does; by hand: mkdir -p -m 0700 /run/vmhost; flock /run/vmhost/ksm.lock env VMHOST_KSM_LOCKED=1 ...)"
PY=/usr/bin/python3 # Debian's, not a version-manager shim that might fork
for tool in prometheus promtool curl jq $PY qemu-system-x86_64; do
	command -v $tool >/dev/null || die "$tool is missing (make check installs it: scripts/deps/test/serve.txt)"
done


# Two processes with 32 MiB each of identical, mergeable pages.
for i in 1 2; do
	spawn $PY -c '
import mmap, sys, time
n = 32 << 20
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_MERGEABLE)
m.write(b"\x5a" * n)
open(sys.argv[1], "w").close()
time.sleep(300)' "$TEST_TMP/ready$i"
	eval "MERGE$i=$SPAWNED"
done
# A real QEMU that discovery recognises (stopped before the guest runs: TCG, no disk).
QNAME=serve-test-$$
spawn qemu-system-x86_64 -S -m 64M -display none -nodefaults -name "$QNAME"
QEMU=$SPAWNED
wait_for 30 test -e "$TEST_TMP/ready1" -a -e "$TEST_TMP/ready2" || die "mergeable processes did not start"

ksm_save || die "no KSM in this kernel"
echo 4000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
echo 1 >$KSM/run

# vmhost serve on a free port (it prints the port it got).
# --detail full: the families checked below beyond the default basic set (KSM merged, RSS by type).
spawn "$VMHOST" serve --listen 127.0.0.1:0 --pid "$MERGE1" --pid "$MERGE2" --min-interval 0.5 --detail full \
	2>"$TEST_TMP/serve.log"
SERVE=$SPAWNED
wait_for 10 grep -q 'listening on' "$TEST_TMP/serve.log" || die "vmhost serve did not start: $(cat "$TEST_TMP/serve.log")"
PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TEST_TMP/serve.log")

# Prometheus on loopback, scraping every second, with the contrib alerting and recording rules loaded.
cp "$CONTRIB/alerts.yml" "$TEST_TMP/alerts.yml"
# The recording rules evaluate once a minute in contrib; here every second, as the scrapes do.
sed 's/^\(    interval:\) 1m$/\1 1s/' "$CONTRIB/rules.yml" >"$TEST_TMP/rules.yml"
cat >"$TEST_TMP/prometheus.yml" <<CFG
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$TEST_TMP/alerts.yml", "$TEST_TMP/rules.yml"]
scrape_configs:
  - job_name: vmhost
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
CFG
check "promtool check config passes on the test config" promtool check config "$TEST_TMP/prometheus.yml" >/dev/null
prometheus_start "$TEST_TMP/prometheus.yml"
scrapes_done() { local n; n=$(query 'count_over_time(up{job="vmhost"}[5m])'); [ -n "$n" ] && [ "$n" -ge 2 ]; }
merged() { local v; v=$(query "vmhost_vm_ksm_merged_bytes{pid=\"$MERGE1\"}"); [ -n "$v" ] && ge "$v" $((30 * MiB)); }

wait_for 60 scrapes_done || die "Prometheus did not scrape twice: $(tail -5 "$TEST_TMP/prometheus.log")"
pass "Prometheus scraped vmhost at least twice"
check "the target is up" test "$(query 'up{job="vmhost"}')" = 1
wait_for 60 merged || fail "KSM merge never showed in Prometheus (pages_sharing $(cat $KSM/pages_sharing))"

v=$(query "vmhost_vm_ksm_merged_bytes{pid=\"$MERGE1\"}")
# between VALUE LOW HIGH: a value that is there and within bounds.
between() { [ -n "$1" ] && ge "$1" "$2" && le "$1" "$3"; }
check "a mergeable process shows ~32 MiB merged ($v)" between "$v" $((30 * MiB)) $((33 * MiB))
anon=$(query "vmhost_vm_rss_bytes{pid=\"$MERGE1\",type=\"anon\"}")
check "its anonymous RSS holds the 32 MiB ($anon)" ge "$anon" $((32 * MiB))
pss=$(query "vmhost_vm_pss_bytes{pid=\"$MERGE1\"}")
check "its PSS is below its RSS once merged ($pss < $anon)" between "$pss" 0 "$anon"
check "a plain process has no guest RAM series" test -z "$(query "vmhost_vm_guest_ram_bytes{pid=\"$MERGE1\"}")"
check "vmm label: process" test "$(query "vmhost_vm_info{pid=\"$MERGE1\",vmm=\"process\"}")" = 1
check "the QEMU guest is discovered with its name" test "$(query "vmhost_vm_info{vm=\"$QNAME\",pid=\"$QEMU\",vmm=\"qemu\"}")" = 1
check "the QEMU guest RAM is 64 MiB" test "$(query "vmhost_vm_guest_ram_bytes{vm=\"$QNAME\"}")" = $((64 * MiB))
check "ksm is running" test "$(query vmhost_ksm_run)" = 1
sharing=$(query vmhost_ksm_pages_sharing)
check "pages_sharing covers both processes ($sharing)" ge "$sharing" 15000
saved=$(query vmhost_ksm_saved_bytes)
check "saved bytes = pages_sharing x page size, roughly ($saved)" ge "$saved" $((15000 * 4096))
check "ksmd used some CPU while merging" between "$(query 'increase(vmhost_ksmd_cpu_seconds_total[1m])')" 0.000001 60
total=$(awk '/^MemTotal:/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
check "host memory total matches /proc/meminfo" test "$(query vmhost_host_mem_total_bytes)" = "$total"
dur=$(query vmhost_scrape_duration_seconds)
check "scrape duration is a small positive number ($dur)" between "$dur" 0.000001 5
check "the snapshot counter went up between scrapes" ge "$(query vmhost_snapshots_total)" 2
# A rule's health is "unknown" until its group first evaluates: wait for every one to have been.
rules() { curl -sf "$API/rules" | jq -c "[.data.groups[].rules[] | $1]"; }
evaluated() { rules '.health' | jq -e 'length > 0 and all(. != "unknown")' >/dev/null; }
wait_for 30 evaluated || fail "the rules never all evaluated: $(rules 'select(.health == "unknown") | .name')"
check "every contrib alerting and recording rule loaded and evaluates ($(rules 'select(.health != "ok") | [.name, .lastError]'))" \
	sh -c "curl -sf '$API/rules' | jq -e '[.data.groups[].rules[]] | length > 0 and all(.health == \"ok\")' >/dev/null"

curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt"
check "promtool check metrics passes on the live output" sh -c "promtool check metrics <'$TEST_TMP/metrics.txt'"
check "promtool check rules passes on contrib/prometheus/alerts.yml and rules.yml" sh -c "
	promtool check rules '$CONTRIB/alerts.yml' '$CONTRIB/rules.yml' >/dev/null"
check "promtool check config passes on contrib/prometheus/prometheus.yml" sh -c "
	cp '$CONTRIB/prometheus.yml' '$TEST_TMP/contrib.yml' && cp '$CONTRIB/alerts.yml' '$TEST_TMP/vmhost-alerts.yml' &&
	cp '$CONTRIB/rules.yml' '$TEST_TMP/vmhost-rules.yml' &&
	sed -i 's|/etc/prometheus/vmhost-|$TEST_TMP/vmhost-|' '$TEST_TMP/contrib.yml' &&
	promtool check config '$TEST_TMP/contrib.yml' >/dev/null"

stop_pid "$PROM"
stop_pid "$SERVE"
finish
