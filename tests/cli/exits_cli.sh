# vmhost exits on fixture trees (no /dev/kvm here): contract JSON, deltas and rates when files
# change between reads, resets, VMs appearing and vanishing, filters, modes, and every
# "no counters" case with its message and exit code.
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES

# fixture NAME: a private copy we may change; sets R (its root) and K (its kvm directory).
fixture() {
	rm -rf "${TEST_TMP:?}/$1"
	cp -a "$FX/$1" "$TEST_TMP/$1"
	R=$TEST_TMP/$1
	K=$R/sys/kernel/debug/kvm
}
vx() { "$VMHOST" exits --sys-root "$R/sys" --proc-root "$R/proc" "$@"; }
has() { grep -q -- "$1" "$2"; }
# add FILE N: adds N to a counter file in place (as the kernel's files change).
add() { echo $(($(cat "$1") + $2)) >"$1"; }

# --- the contract on the Intel fixture, nothing changing ---
fixture exits-intel
vx --once --interval 0.05 --json >"$TEST_TMP/o.json"
check "once --json is one JSON document" jq -e . "$TEST_TMP/o.json" >/dev/null
check "interval_seconds measured" jq -e '.interval_seconds > 0.04' "$TEST_TMP/o.json" >/dev/null
check "total.exits has total/delta/per_second" jq -e '.total.exits | (.total == 82123450) and (.delta == 0) and (.per_second == 0)' "$TEST_TMP/o.json" >/dev/null
check "four VMs, named by exact pid" test "$(jq -c '[.vms[] | [.pid, .name]] | sort' "$TEST_TMP/o.json")" = '[[1234,"web1"],[4242,null],[12345,"db1"],[20001,"build"]]'
check "vmm: qemu from the command line, kvm for a process with a debugfs directory whose VMM is unknown" test "$(jq -c '[.vms[] | [.pid, .vmm]] | sort' "$TEST_TMP/o.json")" = '[[1234,"qemu"],[4242,"kvm"],[12345,"qemu"],[20001,"qemu"]]'
check "vcpus from vcpuN dirs, null without them" test "$(jq -c '[.vms[] | [.pid, .vcpus]] | sort' "$TEST_TMP/o.json")" = '[[1234,4],[4242,null],[12345,2],[20001,8]]'
check "per-VM counters" jq -e '.vms[] | select(.name == "web1") | .counters.exits.total == 10012345' "$TEST_TMP/o.json" >/dev/null
check "time counters in ns with a fraction" jq -e '.total.halt_wait_ns | (.total == 26928000000000) and (.fraction == 0)' "$TEST_TMP/o.json" >/dev/null
check "kinds are named" jq -e '.kinds.exits == "events" and .kinds.halt_wait_ns == "time_ns" and .kinds.pages_4k == "gauge"' "$TEST_TMP/o.json" >/dev/null
check "histograms and tables are not counters" jq -e '(.total | has("halt_wait_hist") | not) and (.total | has("mmu_rmaps_stat") | not)' "$TEST_TMP/o.json" >/dev/null
check "gauges have no rate" jq -e '.total.pages_4k.per_second == null and .total.pages_4k.total == 5740000' "$TEST_TMP/o.json" >/dev/null

# --pid is exact: 1234 is web1 only, not 12345 (db1)
vx --once --interval 0.01 --json --pid 1234 >"$TEST_TMP/p.json"
check "--pid 1234 matches exactly one VM" test "$(jq -c '[.vms[].name]' "$TEST_TMP/p.json")" = '["web1"]'
check "filtered total is the sum of the shown VMs" jq -e '.total.exits.total == 10012345' "$TEST_TMP/p.json" >/dev/null
vx --once --interval 0.01 --json --vm db1 --vm build --fields '^(exits|io_exits)$' >"$TEST_TMP/v.json"
check "--vm by exact name, repeatable" test "$(jq -c '[.vms[].name] | sort' "$TEST_TMP/v.json")" = '["build","db1"]'
check "--fields selects counters" test "$(jq -c '.total | keys' "$TEST_TMP/v.json")" = '["exits","io_exits"]'
vx --once --interval 0.01 --vm web >"$TEST_TMP/nomatch.out" 2>"$TEST_TMP/nomatch.err"
check "--vm is not a substring match (exit 1)" test $? = 1
check "no match says which VMs exist" has "VMs with KVM counters: web1, db1, build, pid 4242" "$TEST_TMP/nomatch.err"
vx --once --interval 0.01 --pid 123 >/dev/null 2>&1
check "--pid of a process without KVM counters: exit 1" test $? = 1

# --- deltas and rates when files change between the two reads ---
# The hook runs after read $1: web1 +3000 exits and +0.5 s halt_wait_ns, the global files too.
export VMHOST_EXITS_TEST_HOOK="[ \$1 = 1 ] || exit 0; for f in $K/1234-12/exits $K/exits; do echo \$((\$(cat \$f) + 3000)) > \$f; done; for f in $K/1234-12/halt_wait_ns $K/halt_wait_ns; do echo \$((\$(cat \$f) + 500000000)) > \$f; done"
vx --once --interval 0.2 --json >"$TEST_TMP/d.json"
unset VMHOST_EXITS_TEST_HOOK
check "web1 exits delta 3000" jq -e '.vms[] | select(.name == "web1") | .counters.exits | .delta == 3000 and .total == 10015345' "$TEST_TMP/d.json" >/dev/null
check "other VMs unchanged" jq -e '[.vms[] | select(.name != "web1") | .counters.exits.delta] == [0,0,0]' "$TEST_TMP/d.json" >/dev/null
check "total delta 3000" jq -e '.total.exits.delta == 3000' "$TEST_TMP/d.json" >/dev/null
s=$(jq '.interval_seconds' "$TEST_TMP/d.json")
check "per_second = delta / interval" near "$(jq '.total.exits.per_second' "$TEST_TMP/d.json")" "$(awk -v s="$s" 'BEGIN { print 3000 / s }')" 0.1
check "halt_wait_ns delta in ns" jq -e '.total.halt_wait_ns.delta == 500000000' "$TEST_TMP/d.json" >/dev/null
check "halt_wait_ns fraction = 0.5 s / interval" near "$(jq '.total.halt_wait_ns.fraction' "$TEST_TMP/d.json")" "$(awk -v s="$s" 'BEGIN { print 0.5 / s }')" 0.1

# the same change, for a human
fixture exits-intel
export VMHOST_EXITS_TEST_HOOK="[ \$1 = 1 ] || exit 0; echo \$((\$(cat $K/1234-12/io_exits) + 99000)) > $K/1234-12/io_exits"
vx --once --interval 0.2 >"$TEST_TMP/h.out"
unset VMHOST_EXITS_TEST_HOOK
check "human: header names the VMs" has "4 VMs: web1, db1, build, pid 4242" "$TEST_TMP/h.out"
check "human: busiest counter first" test "$(sed -n 4p "$TEST_TMP/h.out" | awk '{print $1, $3}')" = "io_exits 99000"
check "human: times shown as time" grep -Eq '^halt_wait_ns +7h28m' "$TEST_TMP/h.out"

# --- a reset: a counter that went down (cleared by writing 0, or KVM reloaded) ---
fixture exits-intel
export VMHOST_EXITS_TEST_HOOK="[ \$1 = 1 ] && echo 5 > $K/12345-15/exits"
vx --once --interval 0.05 --json >"$TEST_TMP/r.json"
fixture exits-intel
vx --once --interval 0.05 --fields '^exits$' --vm db1 >"$TEST_TMP/r.out"
unset VMHOST_EXITS_TEST_HOOK
check "reset: flagged, no delta, no rate" jq -e '.vms[] | select(.name == "db1") | .counters.exits | .reset and .delta == null and .per_second == null and .total == 5' "$TEST_TMP/r.json" >/dev/null
check "reset: the total says so too" jq -e '.total.exits.reset and .total.exits.delta == null' "$TEST_TMP/r.json" >/dev/null
check "reset: never a negative number" bash -c "! jq '.. | numbers' '$TEST_TMP/r.json' | grep -q '^-'"
check "reset: humans read 'reset'" grep -Eq '^exits +5 +reset +reset' "$TEST_TMP/r.out"

# --- VMs appearing and vanishing between reads ---
fixture exits-intel
mkdir -p "$R/proc.new/777"
printf 'qemu-system-x86_64\0-name\0guest=late,debug-threads=on\0-m\0512\0' >"$R/proc.new/777/cmdline"
echo '777 (qemu-system-x86) S 1 777 777 0 -1 0 0 0 0 0 5 5 0 0 20 0 3 0 999 0 0' >"$R/proc.new/777/stat"
echo '0::/system.slice/late.scope' >"$R/proc.new/777/cgroup"
export VMHOST_EXITS_TEST_HOOK="[ \$1 = 1 ] || exit 0; mv $R/proc.new/777 $R/proc/777; mkdir $K/777-9 $K/777-9/vcpu0; for f in \$(ls $K/1234-12 | grep -v vcpu); do cp $K/1234-12/\$f $K/777-9/; done; echo 640 > $K/777-9/exits; rm -rf $K/20001-11"
vx --once --interval 0.05 --json >"$TEST_TMP/a.json"
unset VMHOST_EXITS_TEST_HOOK
check "new VM named from discovery" jq -e '.vms[] | select(.pid == 777) | .name == "late" and .appeared' "$TEST_TMP/a.json" >/dev/null
check "new VM: delta is its whole count" jq -e '.vms[] | select(.pid == 777) | .counters.exits.delta == 640' "$TEST_TMP/a.json" >/dev/null
check "vanished VM listed" test "$(jq -c '[.vanished[] | .name]' "$TEST_TMP/a.json")" = '["build"]'
check "vanished VM not a reset of the total" jq -e '(.total.exits.reset | not) and .total.exits.delta == 640' "$TEST_TMP/a.json" >/dev/null

# --- halt polling: 0.2 s caught and 0.1 s given up by web1 during a command's run ---
fixture exits-intel
poll="add $K/1234-12/halt_poll_success_ns 200000000; add $K/1234-12/halt_poll_fail_ns 100000000; add $K/1234-12/halt_attempted_poll 3000; add $K/1234-12/halt_successful_poll 2000"
vx --json -- bash -c "$(declare -f add); $poll; sleep 0.3" >"$TEST_TMP/hp.json" 2>/dev/null
check "halt polling: web1's poll seconds/s is success + fail, success twice fail" jq -e '.vms[] | select(.name == "web1") | .halt_poll | .poll_seconds_per_second > 0 and .poll_seconds_per_second < 1 and (.success_seconds_per_second / .fail_seconds_per_second | . > 1.999 and . < 2.001) and .polls == 3000 and .successful_polls == 2000' "$TEST_TMP/hp.json"
check "halt polling: a VM that did not poll is 0 (known), in the total too" jq -e '(.vms[] | select(.name == "db1") | .halt_poll.poll_seconds_per_second == 0) and .total.halt_poll.polls == 3000' "$TEST_TMP/hp.json"
fixture exits-intel
vx -- bash -c "$(declare -f add); $poll; sleep 0.3" >"$TEST_TMP/hp.txt" 2>/dev/null
check "halt polling: a line for web1 under the table, none for db1" \
	[ "$(grep -c '^web1 halt polling: [0-9.]*% of a host CPU (caught the wake-up [0-9.]*%, gave up [0-9.]*%), halted asleep 0.0%; [0-9]* polls/s, 67% caught$' "$TEST_TMP/hp.txt") $(grep -c '^db1 halt polling' "$TEST_TMP/hp.txt")" = "1 0" ]

# --- -- CMD: deltas over a command's run ---
fixture exits-amd
vx --json -- sh -c "echo from-the-command; echo \$((\$(cat $K/3101-14/exits) + 123)) > $K/3101-14/exits; sleep 0.2; exit 3" >"$TEST_TMP/c.json" 2>"$TEST_TMP/c.err"
rc=$?
check "-- CMD: vmhost exits with the command's status" test $rc = 3
check "-- CMD: stdout is one JSON document" jq -e . "$TEST_TMP/c.json" >/dev/null
check "-- CMD: the command's stdout went to stderr" has from-the-command "$TEST_TMP/c.err"
check "-- CMD: command, exit_status, wall_seconds" jq -e '(.command | startswith("sh -c")) and .exit_status == 3 and .wall_seconds >= 0.2' "$TEST_TMP/c.json" >/dev/null
check "-- CMD: deltas over its run" jq -e '(.vms[] | select(.name == "mail") | .counters.exits.delta == 123) and .total.exits.delta == 123' "$TEST_TMP/c.json" >/dev/null
check "-- CMD: AMD names" test "$(jq -c '[.vms[].name] | sort' "$TEST_TMP/c.json")" = '["ci-runner","mail"]'
vx -- true >"$TEST_TMP/c.out"
check "-- CMD human: says how the command ended" has "exited with status 0" "$TEST_TMP/c.out"
vx -- /nonexistent/cmd >/dev/null 2>"$TEST_TMP/c127.err"
check "-- CMD that cannot start: 127" test $? = 127

# --- --log: a line per interval, header repeated, CSV ---
fixture exits-intel
export VMHOST_EXITS_TEST_HOOK="echo \$((\$(cat $K/1234-12/exits) + 100)) > $K/1234-12/exits"
vx --log --interval 0.02 --count 3 >"$TEST_TMP/l.out" 2>/dev/null
check "log: header + 3 lines" test "$(wc -l <"$TEST_TMP/l.out")" = 4
check "log: deltas per interval" test "$(awk 'NR > 1 { print $2 }' "$TEST_TMP/l.out" | sort -u)" = 100
vx --log --interval 0.01 --count 21 --fields '^exits$' >"$TEST_TMP/l21.out" 2>/dev/null
check "log: header repeated every 20 lines" test "$(grep -c '^time' "$TEST_TMP/l21.out")" = 2
vx --log --csv --interval 0.02 --count 2 --fields '^(exits|halt_wait_ns)$' >"$TEST_TMP/l.csv" 2>/dev/null
check "csv: one header" test "$(head -1 "$TEST_TMP/l.csv")" = "time_unix,interval_seconds,exits,halt_wait_ns"
check "csv: rows with deltas" test "$(awk -F, 'NR > 1 { print $3 "/" $4 }' "$TEST_TMP/l.csv" | sort -u)" = "100/0"
vx --log --json --interval 0.02 --count 2 >"$TEST_TMP/l.jsonl" 2>/dev/null
check "log --json: one document per line" test "$(jq -c '.total.exits.delta' "$TEST_TMP/l.jsonl" | tr '\n' ' ')" = "100 100 "
unset VMHOST_EXITS_TEST_HOOK

# --- live view without a terminal: plain tables, no escape codes ---
fixture exits-intel
vx --interval 0.02 --count 2 >"$TEST_TMP/live.out"
check "live without a tty: two tables" test "$(grep -c '^EVENT' "$TEST_TMP/live.out")" = 2
check "live without a tty: no escape codes" bash -c "! grep -q $'\033' '$TEST_TMP/live.out'"

# --- no counters: each case says why ---
R=$FX/exits-nodebugfs
vx --once >/dev/null 2>"$TEST_TMP/e1"
check "debugfs not mounted: exit 1" test $? = 1
check "debugfs not mounted: how to mount it" has "mount -t debugfs none /sys/kernel/debug" "$TEST_TMP/e1"
# QEMU VMs but no debugfs: each is tried through QMP, and the one-line reason names what failed.
fixture exits-nodebugfs
qemu_proc() { # pid name extra-args...
	local pid=$1 name=$2
	shift 2
	mkdir -p "$R/proc/$pid"
	{ printf 'qemu-system-x86_64\0-name\0%s\0-m\0512\0' "$name"; for a in "$@"; do printf '%s\0' "$a"; done; } >"$R/proc/$pid/cmdline"
	echo "$pid (qemu-system-x86) S 1 $pid $pid 0 -1 0 0 0 0 0 5 5 0 0 20 0 3 0 999 0 0" >"$R/proc/$pid/stat"
	echo "0::/system.slice/$name.scope" >"$R/proc/$pid/cgroup"
}
qemu_proc 901 nosock
vx --once --interval 0.01 >/dev/null 2>"$TEST_TMP/q1"
check "no debugfs, VM without a QMP socket: exit 1" test $? = 1
check "... says the VM has no QMP socket" grep -q 'VM nosock: no debugfs; no QMP socket on the command line' "$TEST_TMP/q1"
rm -rf "$R/proc/901"
# Error lines carry what processes say (a name here): readable on a terminal, never obeyed.
qemu_proc 906 $'evil\033]0;pwned\007'
vx --once --interval 0.01 >/dev/null 2>"$TEST_TMP/q6"
escaped_only() { grep -qF 'VM evil\x1b]0;pwned\x07: no debugfs' "$1" && ! grep -q $'\033' "$1"; }
check "... a name's escape in an error line is shown, never written raw" escaped_only "$TEST_TMP/q6"
rm -rf "$R/proc/906"
# Only a process that runs a KVM VM has KVM counters: one without a KVM VM fd (a TCG guest, or a
# process that merely calls itself QEMU) is not asked, whatever socket its command line names.
qemu_proc 902 stale -qmp "unix:$TEST_TMP/no-such.sock,server=on,wait=off"
vx --once --interval 0.01 >/dev/null 2>"$TEST_TMP/q2"
check "... no KVM VM fd: its monitor is not asked, and it says why" grep -q "VM stale: no debugfs; no KVM VM: the process holds no KVM VM file descriptor" "$TEST_TMP/q2"
mkdir -p "$R/proc/902/fd"
ln -s anon_inode:kvm-vm "$R/proc/902/fd/12"
vx --once --interval 0.01 >/dev/null 2>"$TEST_TMP/q2"
check "... a KVM VM whose socket nobody listens on: its path and the error" grep -q "VM stale: no debugfs; QMP $TEST_TMP/no-such.sock: " "$TEST_TMP/q2"
rm -rf "$R/proc/902"
qemu_proc 903 libvirt -chardev socket,id=charmonitor,fd=33,server=on,wait=off -mon chardev=charmonitor,id=monitor,mode=control
vx --once --interval 0.01 >/dev/null 2>"$TEST_TMP/q3"
check "... a monitor libvirt holds: read through libvirt, which says why not here" grep -q 'VM libvirt: no debugfs; libvirt' "$TEST_TMP/q3"
# With debugfs, a QEMU VM that has no directory there is listed with its reason, not summed.
fixture exits-intel
qemu_proc 904 tcgguest
vx --once --interval 0.01 --json >"$TEST_TMP/q4.json"
check "a VM without counters: listed, source null, with the reason" \
	jq -e '.vms[] | select(.pid == 904) | .source == null and (.unavailable | test("no QMP socket")) and .counters.exits.total == null' "$TEST_TMP/q4.json" >/dev/null
# ... and one that names a socket is not visited either: debugfs lists every KVM VM, not this one.
rm -rf "$R/proc/904"
qemu_proc 905 tcgsock -qmp "unix:$TEST_TMP/no-such.sock,server=on,wait=off"
vx --once --interval 0.01 --json >"$TEST_TMP/q5.json"
check "a QEMU debugfs does not list, its socket named: not asked, it says why" \
	jq -e '.vms[] | select(.pid == 905) | .source == null and (.unavailable | test("debugfs lists every KVM VM and not this process"))' "$TEST_TMP/q5.json" >/dev/null
check "... and the others from debugfs" jq -e '[.vms[] | select(.pid != 904) | .source == "debugfs"] | all and length == 4' "$TEST_TMP/q4.json" >/dev/null
check "... not in the total" jq -e '.total.exits.delta == 0 and .total.exits.total == 82123450' "$TEST_TMP/q4.json" >/dev/null
R=$FX/exits-nokvm
vx --once >/dev/null 2>"$TEST_TMP/e2"
check "no KVM: exit 1" test $? = 1
check "no KVM: says so" has "no KVM on this host" "$TEST_TMP/e2"
vx --once --json >"$TEST_TMP/e2.json" 2>/dev/null
check "no KVM --json: an error document" jq -e '.error | contains("no KVM")' "$TEST_TMP/e2.json" >/dev/null
R=$FX/exits-novm
vx --once --interval 0.01 >"$TEST_TMP/e3" 2>&1
check "KVM loaded, no VM: exit 0" test $? = 0
check "KVM loaded, no VM: says so" has "no VM is running" "$TEST_TMP/e3"
vx --once --interval 0.01 --json >"$TEST_TMP/e3.json"
check "no VM --json: empty vms, zero totals" jq -e '.vms == [] and .total.exits.total == 0' "$TEST_TMP/e3.json" >/dev/null

# permission denied: an unprivileged user on a root-only debugfs (as on a real host)
fixture exits-intel
chmod 755 "$TEST_TMP"
chmod 700 "$R/sys/kernel/debug"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$VMHOST" exits --sys-root "$R/sys" --proc-root "$R/proc" --once >/dev/null 2>"$TEST_TMP/e4"
	check "permission denied: exit 77" test $? = 77
	check "permission denied: says root is needed" has "need root" "$TEST_TMP/e4"
else
	skip_part "not root, or no setpriv: exit 77 on a root-only debugfs is not checked"
fi
chmod 755 "$R/sys/kernel/debug"

# This machine's own debugfs: no /dev/kvm here, so a clear error (which one depends on the host).
# As root, a debugfs the host has not mounted is mounted for the run alone: KVM's counters read.
"$VMHOST" exits --once --interval 0.01 >/dev/null 2>"$TEST_TMP/e5"
rc=$?
if [ -e /dev/kvm ] && { [ -d /sys/kernel/debug/kvm ] || [ "$(id -u)" = 0 ]; }; then
	check "real host with KVM (as root, debugfs mounted for the run where the host has none): works" test $rc = 0
else
	check "real host without KVM counters: exit 1 or 77 with a reason" grep -Eq 'mount -t debugfs|no KVM|need root' "$TEST_TMP/e5"
fi

# --reasons where the tree has no tracefs: the counters as before, and one line saying why not.
R=$FX/exits-intel
vx --once --interval 0.01 --reasons >"$TEST_TMP/rs.out" 2>&1
check "--reasons without tracefs: exit 0" test $? = 0
check "--reasons without tracefs: says why" grep -q '^exit reasons not counted: tracefs is not mounted (mount -t tracefs' "$TEST_TMP/rs.out"
vx --once --interval 0.01 --reasons --json >"$TEST_TMP/rs.json"
check "--reasons without tracefs: no reasons object, counters there" jq -e '(.total | has("reasons") | not) and .total.exits.total == 82123450 and (.reasons_unavailable | test("tracefs"))' "$TEST_TMP/rs.json" >/dev/null

# --- usage errors: exit 2 ---
R=$FX/exits-intel
for args in "--once --log" "--fields (" "--interval 0" "--interval x" "--csv --once" "--pid 12x" "--count 0" "--" "stray"; do
	# shellcheck disable=SC2086
	vx $args >/dev/null 2>&1
	check "usage error: $args" test $? = 2
done
vx --help >"$TEST_TMP/help"
check "--help documents -- CMD" has "CMD ARGS" "$TEST_TMP/help"

finish
