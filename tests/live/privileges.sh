#!/bin/bash
# What each command does without root, with only some capabilities, and in a container-like
# setup: every row of docs/privileges.md but exits' (privileges_exits.sh). A fake guest runs as
# root; vmhost runs as nobody through setpriv, with ambient capabilities where a row says so.
# debugfs and tracefs are mounted in a private mount namespace only (the host is left as found).
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
chmod 755 "$TEST_TMP"
mkdir -p "$TEST_TMP/w" && chmod 777 "$TEST_TMP/w"
cd "$TEST_TMP/w" || die "no scratch directory"
NB="setpriv --reuid nobody --regid nogroup --clear-groups"
PTRACE="$NB --inh-caps +sys_ptrace --ambient-caps +sys_ptrace"
CAPS="$NB --inh-caps +sys_ptrace,+dac_read_search,+perfmon --ambient-caps +sys_ptrace,+dac_read_search,+perfmon"
$NB true || die "setpriv cannot switch to nobody here"

fake_guest privg -m 16M
G=$SPAWNED
vm() { jq -c --argjson p "$G" '.vms[] | select(.pid == $p)' "$1"; }
is() { vm "$1" | jq -e "$2" >/dev/null; }
# run NAME WHO ARGS...: vmhost ARGS as WHO; NAME.json, NAME.err; RC.
run() {
	local name=$1 who=$2
	shift 2
	$who "$VMHOST" "$@" >"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err"
	RC=$?
}
one_line() { [ "$(wc -l <"$TEST_TMP/$1.err")" = 1 ] && grep -q "$2" "$TEST_TMP/$1.err"; }

# --- mem
run mem-root "" --json mem --exact
check "mem --exact as root: exact PSS and overhead, KSM pages known" is mem-root '.pss_method == "exact" and .overhead_method == "exact" and .ksm_merging_pages != null'
run mem-nb "$NB" --json mem
check "mem as nobody: exit 0" [ $RC -eq 0 ]
check "mem as nobody: one warning" one_line mem-nb 'no permission to read some /proc files of .*docs/privileges.md'
check "mem as nobody: RSS known, KSM pages null, PSS the estimate" is mem-nb '.rss_bytes > 0 and .ksm_merging_pages == null and .pss_method == "estimate"'
run memx-nb "$NB" --json mem --exact
check "mem --exact as nobody: exit 0, PSS stays the estimate (said so)" sh -c "[ $RC = 0 ] && vm '$TEST_TMP/memx-nb.json' | jq -e '.pss_method == \"estimate\"' >/dev/null"
run memx-pt "$PTRACE" --json mem --exact
check "mem --exact with CAP_SYS_PTRACE: exact PSS (smaps_rollup), KSM pages still null (ksm_stat is mode 0400)" \
	is memx-pt '.pss_method == "exact" and .ksm_merging_pages == null'
run memx-caps "$CAPS" --json mem --exact
check "mem --exact with CAP_SYS_PTRACE + CAP_DAC_READ_SEARCH: everything root reads, no warning" \
	sh -c "[ $RC = 0 ] && [ ! -s '$TEST_TMP/memx-caps.err' ] && vm '$TEST_TMP/memx-caps.json' | jq -e '.pss_method == \"exact\" and .overhead_method == \"exact\" and .ksm_merging_pages != null' >/dev/null"

# --- ksm
run ksm-nb "$NB" --json ksm --interval 0.2
check "ksm as nobody: exit 0, every sysfs figure" sh -c "[ $RC = 0 ] && jq -e '.run != null and .pages_scanned_per_second != null' '$TEST_TMP/ksm-nb.json' >/dev/null"
run tune-nb "$NB" ksm tune --interval 0.2 --duration 1
check "ksm tune as nobody: exit 77, one line" sh -c "[ $RC = 77 ] && grep -q 'changing KSM settings needs root (try --dry-run)' '$TEST_TMP/tune-nb.err'"
run tune-dry "$NB" --json ksm tune --dry-run --interval 0.2 --duration 1
check "ksm tune --dry-run as nobody: exit 0, decisions printed, nothing applied" \
	sh -c "[ $RC = 0 ] && head -1 '$TEST_TMP/tune-dry.json' | jq -e '.applied == false' >/dev/null"
run sweep-nb "$NB" ksm sweep --settings 100/20 --scans 1
check "ksm sweep as nobody: exit 77, one line" sh -c "[ $RC = 77 ] && grep -q 'needs root' '$TEST_TMP/sweep-nb.err'"
run sweep-caps "$CAPS" ksm sweep --settings 100/20 --scans 1
check "ksm sweep with capabilities but not root: exit 77" [ $RC -eq 77 ]

# --- bench
run ba-nb "$NB" bench accounting
check "bench accounting as nobody: exit 77, one line (no 'could not restore' noise)" sh -c "[ $RC = 77 ] && [ \$(wc -l <'$TEST_TMP/ba-nb.err') = 1 ]"
run bk-nb "$NB" bench ksm --quick
check "bench ksm as nobody: exit 77, one line" sh -c "[ $RC = 77 ] && [ \$(wc -l <'$TEST_TMP/bk-nb.err') = 1 ]"
run bal-nb "$NB" --json bench alloc --sizes 16M --threads 1 --strategies touch-4k
check "bench alloc as nobody: exit 0, rows measured" sh -c "[ $RC = 0 ] && jq -e '.rows | length > 0' '$TEST_TMP/bal-nb.json' >/dev/null"

# --- record, growth, report, serve
run rec-nb "$NB" --json record --db "$TEST_TMP/w/nb.db" --interval 0.2 --duration 0.6 --kvm-interval 0
check "record as nobody: exit 0, samples recorded" sh -c "[ $RC = 0 ] && jq -e '.samples >= 2' '$TEST_TMP/rec-nb.json' >/dev/null"
check "record as nobody: the KSM pages are stored as NULL, not 0" \
	[ "$(sqlite3 "$TEST_TMP/w/nb.db" "SELECT count(*) FROM vm_samples x JOIN vms v ON v.id = x.vm_id WHERE v.pid = $G AND x.ksm_merging_pages IS NOT NULL")" = 0 ]
"$VMHOST" record --db "$TEST_TMP/root.db" --interval 0.2 --duration 0.6 --kvm-interval 0 --quiet 2>/dev/null
chmod 644 "$TEST_TMP/root.db"
run growth-nb "$NB" --json growth --db "$TEST_TMP/root.db"
check "growth as nobody on root's database: exit 0" sh -c "[ $RC = 0 ] && jq -e '.vms' '$TEST_TMP/growth-nb.json' >/dev/null"
run report-nb "$NB" report --db "$TEST_TMP/root.db" --out "$TEST_TMP/w/r.html"
check "report as nobody: exit 0, the file written" sh -c "[ $RC = 0 ] && grep -q '<svg' '$TEST_TMP/w/r.html'"
run rec-ro "$NB" record --db "$TEST_TMP/root.db" --duration 0.3
check "record as nobody into root's database: exit 1, one line" sh -c "[ $RC = 1 ] && tail -1 '$TEST_TMP/rec-ro.err' | grep -q 'opening the database: .*root.db: '"
spawn $NB "$VMHOST" serve --detail full --listen 127.0.0.1:0 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || fail "serve as nobody did not start"
curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics"
check "serve as nobody: /metrics answers with the guest's RSS" grep -q "vmhost_vm_rss_bytes{vm=\"privg\",pid=\"$G\"" "$TEST_TMP/metrics"
check "serve as nobody: no KSM merged figure for it (unknown is left out, never 0)" \
	sh -c "! grep -q 'vmhost_vm_ksm_merged_bytes{vm=\"privg\"' '$TEST_TMP/metrics'"
stop_pid "$SERVER"

# --- container-like: a new PID namespace with its own /proc sees none of the host's VMs; the
# host's /proc bind-mounted into it and given with --proc-root does.
mkdir -p "$TEST_TMP/hostproc"
cat >"$TEST_TMP/ct.sh" <<EOF
mount --bind /proc "$TEST_TMP/hostproc"
unshare --pid --fork --mount-proc bash -c '
	"$VMHOST" --json mem >"$TEST_TMP/ct-own.json" 2>/dev/null; echo \$? >"$TEST_TMP/ct-own.rc"
	"$VMHOST" --proc-root "$TEST_TMP/hostproc" --sys-root /sys --json mem --exact >"$TEST_TMP/ct-host.json" 2>"$TEST_TMP/ct-host.err"; echo \$? >"$TEST_TMP/ct-host.rc"
	$NB "$VMHOST" --proc-root "$TEST_TMP/hostproc" --sys-root /sys --json mem >"$TEST_TMP/ct-nb.json" 2>/dev/null; echo \$? >"$TEST_TMP/ct-nb.rc"'
EOF
unshare --mount --propagation private bash "$TEST_TMP/ct.sh"
check "container, its own /proc: exit 0 and no VM (they are in the host's PID namespace)" \
	sh -c "[ \$(cat '$TEST_TMP/ct-own.rc') = 0 ] && jq -e '[.vms[] | select(.vmm != \"process\")] | length == 0' '$TEST_TMP/ct-own.json' >/dev/null"
check "container, --proc-root at the host's /proc, as root: the guest with exact figures" \
	sh -c "[ \$(cat '$TEST_TMP/ct-host.rc') = 0 ] && vm '$TEST_TMP/ct-host.json' | jq -e '.name == \"privg\" and .pss_method == \"exact\"' >/dev/null"
check "container, --proc-root at the host's /proc, as nobody: the guest, KSM null (as on the host)" \
	sh -c "[ \$(cat '$TEST_TMP/ct-nb.rc') = 0 ] && vm '$TEST_TMP/ct-nb.json' | jq -e '.name == \"privg\" and .ksm_merging_pages == null' >/dev/null"
finish
