#!/bin/bash
# vmhost serve's KVM families on the frozen debugfs trees of `vmhost exits` (Intel and AMD
# hosts): per-VM events and times labelled like the other VM families, host-wide counters that a
# VM exiting does not lower, a process with two KVM VMs as one series, promtool's approval, and
# vmhost_kvm_available 0 where debugfs is missing.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"

# tree NAME FIXTURE: a writable copy of an exits fixture with the meminfo serve needs.
tree() {
	cp -a "$VMHOST_FIXTURES/$2" "$TEST_TMP/$1" && cp "$VMHOST_FIXTURES/serve/proc/meminfo" "$TEST_TMP/$1/proc/"
}

scrape() { curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/$1"; }
# value FILE SERIES: the value of exactly that series (name and labels as printed), or nothing.
value() { awk -v k="$2" '$1 == k { print $2 }' "$TEST_TMP/$1"; }
is() { [ "$(value "$1" "$2")" = "$3" ] || { say "$2 = '$(value "$1" "$2")', want '$3'"; return 1; }; }

WEB1='vm="web1",pid="1234",uuid="0b6a7c52-3c44-4b0e-9a0e-6f1c1c0d0a01"'
KVM=$TEST_TMP/intel/sys/kernel/debug/kvm

tree intel exits-intel || die "cannot copy the fixture"
serve_start "$TEST_TMP/intel.log" "$TEST_TMP/intel" --min-interval 0 --detail full || die "cannot start"
scrape a.txt
check "the scrape passes promtool check metrics" sh -c "promtool check metrics <'$TEST_TMP/a.txt'"
check "KVM is available" is a.txt vmhost_kvm_available 1
check "a VM's exits, with the VM's name, pid and uuid" is a.txt "vmhost_kvm_events_total{$WEB1,event=\"exits\"}" \
	"$(cat "$KVM/1234-12/exits")"
check "a VM's halt_wait_ns in seconds" is a.txt "vmhost_kvm_time_seconds_total{$WEB1,event=\"halt_wait\"}" 11520
check "a KVM directory whose process is gone keeps its pid, with no name" \
	is a.txt 'vmhost_kvm_events_total{vm="",pid="4242",uuid="",event="exits"}' "$(cat "$KVM/4242-11/exits")"
check "the host-wide exits start at the kernel's sum" is a.txt 'vmhost_kvm_host_events_total{event="exits"}' \
	"$(cat "$KVM/exits")"
check "the host-wide halt_wait starts at the kernel's sum" \
	is a.txt 'vmhost_kvm_host_time_seconds_total{event="halt_wait"}' 26928
# Event labels are the kernel's counter file names: a fixed set, never more series than files.
labels_are_files() {
	local e
	for e in $(grep -o 'event="[a-z0-9_]*"' "$TEST_TMP/a.txt" | sort -u | sed 's/event="\(.*\)"/\1/'); do
		[ -f "$KVM/$e" ] || [ -f "$KVM/${e}_ns" ] || { say "not a counter file: $e"; return 1; }
	done
}
check "every event label is a KVM counter file" labels_are_files
check "per-VM series: one per VM process and event counter" sh -c "
	[ \$(grep -c '^vmhost_kvm_events_total{' '$TEST_TMP/a.txt') = \
	  \$((4 * \$(grep -c '^vmhost_kvm_host_events_total{' '$TEST_TMP/a.txt'))) ]"
check "gauges and histograms are not exported as counters" sh -c "
	! grep -Eq 'event=\"(pages_4k|mmu_unsync|blocking|halt_wait_hist|halt_poll_success_hist)\"' '$TEST_TMP/a.txt'"
check "OpenMetrics names the families without _total" sh -c "
	curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' http://127.0.0.1:$PORT/metrics |
	grep -qx '# TYPE vmhost_kvm_events counter'"

# The host changes: web1 exits 1000 more times, the VM of the gone process exits (its directory
# goes away and the kernel's global files drop), and web1's process opens a second KVM VM.
HOST_EXITS=$(value a.txt 'vmhost_kvm_host_events_total{event="exits"}')
echo $(($(cat "$KVM/1234-12/exits") + 1000)) >"$KVM/1234-12/exits"
rm -r "$KVM/4242-11"
echo 1 >"$KVM/exits"
cp -a "$KVM/1234-12" "$KVM/1234-13"
echo 5 >"$KVM/1234-13/exits"
scrape b.txt
check "after the change: still passes promtool" sh -c "promtool check metrics <'$TEST_TMP/b.txt'"
check "web1's two KVM VMs are one series, their sum" is b.txt "vmhost_kvm_events_total{$WEB1,event=\"exits\"}" \
	$(($(value a.txt "vmhost_kvm_events_total{$WEB1,event=\"exits\"}") + 1000 + 5))
check "the exited VM's series are gone" sh -c "! grep -q 'pid=\"4242\"' '$TEST_TMP/b.txt'"
check "the host-wide exits grow by what happened, not lowered by the VM that exited" \
	is b.txt 'vmhost_kvm_host_events_total{event="exits"}' $((HOST_EXITS + 1000 + 5))
stop_pid "$SERVER"

tree amd exits-amd || die "cannot copy the fixture"
serve_start "$TEST_TMP/amd.log" "$TEST_TMP/amd" --detail full || die "cannot start"
scrape amd.txt
check "AMD: promtool check metrics" sh -c "promtool check metrics <'$TEST_TMP/amd.txt'"
check "AMD: a VM's exits" is amd.txt \
	'vmhost_kvm_events_total{vm="mail",pid="3101",uuid="9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e05",event="exits"}' \
	"$(cat "$TEST_TMP/amd/sys/kernel/debug/kvm/3101-14/exits")"
check "AMD: the host-wide exits" is amd.txt 'vmhost_kvm_host_events_total{event="exits"}' \
	"$(cat "$TEST_TMP/amd/sys/kernel/debug/kvm/exits")"
stop_pid "$SERVER"

# --kvm-events keeps only the matching counters; --no-kvm reads none.
serve_start "$TEST_TMP/sel.log" "$TEST_TMP/amd" --kvm-events '^(exits|halt_wait_ns)$' || die "cannot start"
scrape sel.txt
check "--kvm-events: only the chosen counters" sh -c "
	[ \"\$(grep -o 'event=\"[a-z_]*\"' '$TEST_TMP/sel.txt' | sort -u | tr '\n' ' ')\" = 'event=\"exits\" event=\"halt_wait\" ' ]"
check "--kvm-events: still promtool-clean" sh -c "promtool check metrics <'$TEST_TMP/sel.txt'"
stop_pid "$SERVER"
serve_start "$TEST_TMP/nokvm.log" "$TEST_TMP/amd" --no-kvm || die "cannot start"
scrape nokvm.txt
check "--no-kvm: no KVM family at all" sh -c "! grep -q '^vmhost_kvm' '$TEST_TMP/nokvm.txt'"
check "--no-kvm: no note about KVM" sh -c "! grep -q KVM '$TEST_TMP/nokvm.log'"
stop_pid "$SERVER"
check "a bad --kvm-events is a usage error" sh -c "
	$VMHOST --proc-root '$TEST_TMP/amd/proc' --sys-root '$TEST_TMP/amd/sys' serve --kvm-events '(' 2>&1 >/dev/null </dev/null;
	[ \$? = 2 ]"
check "--kvm-events with --no-kvm is a usage error" sh -c "
	$VMHOST --proc-root '$TEST_TMP/amd/proc' --sys-root '$TEST_TMP/amd/sys' serve --kvm-events x --no-kvm \
		>/dev/null 2>&1 </dev/null; [ \$? = 2 ]"

# No debugfs: one gauge says so, no KVM counter family, and the server says why once.
serve_start "$TEST_TMP/none.log" "$VMHOST_FIXTURES/serve" || die "cannot start"
scrape none.txt
check "no debugfs: vmhost_kvm_available 0" is none.txt vmhost_kvm_available 0
check "no debugfs: no KVM counters" sh -c "! grep -q '^vmhost_kvm_.*_total' '$TEST_TMP/none.txt'"
check "no debugfs: the server says why" grep -q 'no debugfs KVM counters (debugfs is not mounted.*QMP sockets' "$TEST_TMP/none.log"
stop_pid "$SERVER"
# The host's KVM settings: one vmhost_kvm_info series with the module and its key parameters.
mkdir -p "$TEST_TMP/info" && cp -a "$VMHOST_FIXTURES/serve/proc" "$TEST_TMP/info/" && cp -a "$VMHOST_FIXTURES/kvmhost-intel/sys" "$TEST_TMP/info/"
serve_start "$TEST_TMP/info.log" "$TEST_TMP/info" --no-kvm || die "cannot start"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/info.txt" || fail "scrape failed"
check "vmhost_kvm_info names kvm_intel and its parameters" grep -qx 'vmhost_kvm_info{module="kvm_intel",vendor="intel",device="1",ept="Y",vpid="Y",enable_apicv="Y",unrestricted_guest="Y",pml="Y",nested="Y"} 1' "$TEST_TMP/info.txt"
stop_pid "$SERVER"
check "no KVM module: no vmhost_kvm_info series" sh -c "[ -s '$TEST_TMP/none.txt' ] && ! grep -q '^vmhost_kvm_info' '$TEST_TMP/none.txt'"
finish
