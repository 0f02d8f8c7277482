#!/bin/bash
# A --libvirt-uri that reaches no libvirt (qemu:///nonexistent) in top --batch, record and serve:
# each says so in one warning line on stderr (serve: its log), once per run and not every sample,
# "VM NAME: libvirt URI: ..." as exits names an unread VM, and goes on as before: exit 0, the
# libvirt VM with null exits, the other VMs read. The libvirt VM is a fake QEMU whose monitor is a
# file descriptor (what libvirt's command line gives) with a uuid; beside it the KVM firmware
# guest under a real QEMU whose exits QMP gives. No libvirtd is needed: the URI names none.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
for tool in sqlite3 curl; do
	command -v $tool >/dev/null || die "$tool missing (scripts/deps/test/)"
done
BAD=qemu:///nonexistent
NAME=vmhost-lvuri-$$
fake_guest "$NAME" -m 32M -fake-nomerge -uuid "$(cat /proc/sys/kernel/random/uuid)" \
	-chardev socket,id=charmonitor,fd=23,server=on,wait=off -mon chardev=charmonitor,id=monitor,mode=control
LV=$SPAWNED
fw_qemu --name lvuri-qmp-$$ --qmp "$TEST_TMP/qmp.sock"
QEMU=$SPAWNED

# said FILE CMD: the lines of FILE that say libvirt could not be reached, exactly one, of the form.
said() {
	local n
	n=$(grep -c "libvirt $BAD: " "$1")
	[ "$n" = 1 ] && grep -q "^vmhost: $2: warning: VM .*: libvirt $BAD: " "$1" ||
		{ say "$n lines in $1: $(cat "$1")"; return 1; }
}

timeout 20 "$VMHOST" top --batch --iterations 4 --interval 0.3 --libvirt-uri "$BAD" >"$TEST_TMP/top" 2>"$TEST_TMP/top.err"
rc=$?
col() { awk -F'\t' -v p="$1" '$1 == "vm" && $2 == p { e = $11 } END { print e }' "$TEST_TMP/top"; }
say "top --batch: exit $rc, EXITS/S $(col "$LV") (libvirt's) and $(col "$QEMU") (QMP's); stderr: $(cat "$TEST_TMP/top.err")"
check "top --batch --libvirt-uri $BAD: exit 0" [ $rc = 0 ]
check "top --batch: libvirt's reason said once over 4 frames" said "$TEST_TMP/top.err" top
check "top --batch: the libvirt VM's EXITS/S n/a, the QMP one's a number" \
	sh -c "[ '$(col "$LV")' = n/a ] && awk -v e='$(col "$QEMU")' 'BEGIN { exit !(e + 0 > 0) }'"

timeout 20 "$VMHOST" record --db "$TEST_TMP/r.db" --interval 0.3 --kvm-interval 0.3 --duration 1.5 --quiet \
	--libvirt-uri "$BAD" 2>"$TEST_TMP/rec.err"
rc=$?
rows() { sqlite3 "$TEST_TMP/r.db" "SELECT count(*) FROM kvm_samples k JOIN kvm_counters c ON c.id = k.counter_id JOIN vms v ON v.id = k.vm_id WHERE c.name = 'exits' AND v.pid = $1"; }
mem_rows() { sqlite3 "$TEST_TMP/r.db" "SELECT count(*) FROM vm_samples s JOIN vms v ON v.id = s.vm_id WHERE v.pid = $1"; }
say "record: exit $rc; exits rows $(rows "$LV") (libvirt's) and $(rows "$QEMU") (QMP's); memory rows $(mem_rows "$LV") (libvirt's); stderr: $(cat "$TEST_TMP/rec.err")"
check "record --libvirt-uri $BAD: exit 0" [ $rc = 0 ]
check "record: libvirt's reason said once over 5 samples" said "$TEST_TMP/rec.err" record
check "record: the libvirt VM's memory recorded every sample, its exits not" \
	sh -c "[ '$(mem_rows "$LV")' -ge 4 ] && [ '$(rows "$LV")' = 0 ]"
check "record: the QMP VM's exits recorded" ge "$(rows "$QEMU")" 4

serve_start "$TEST_TMP/serve.log" "" --min-interval 0 --libvirt-uri "$BAD" || die "serve did not start"
codes=""
for i in 1 2 3 4; do
	codes="$codes $(curl -s -m 5 -o "$TEST_TMP/m.$i" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")"
done
stop_pid "$SERVER"
series() { grep -c "^vmhost_kvm_events_total{.*pid=\"$1\".*event=\"exits\"" "$TEST_TMP/m.4"; }
say "serve: scrapes$codes; exits series $(series "$LV") (libvirt's) and $(series "$QEMU") (QMP's); log: $(grep -v listening "$TEST_TMP/serve.log")"
check "serve --libvirt-uri $BAD: every scrape answered" [ "$codes" = " 200 200 200 200" ]
check "serve: libvirt's reason said once in its log over 4 samples" said "$TEST_TMP/serve.log" serve
check "serve: no exits series for the libvirt VM, one for the QMP VM" sh -c "[ '$(series "$LV")' = 0 ] && [ '$(series "$QEMU")' = 1 ]"
finish
