# vmhost doctor on this host's real KSM and real processes: ksmd scanning hard through guest RAM
# whose pages are all unique (nothing to merge) is ksm-cpu-without-gain; a fake QEMU that does not
# mark its RAM mergeable is vm-ksm-unmergeable (not-marked) while KSM runs, and the guest that does
# mark it is not; KSM scanning gently, or stopped, gives neither KSM finding. Takes the KSM lock
# (ctest RESOURCE_LOCK ksm); settings saved first and restored on every exit path (tests/lib.sh).
. "$VMHOST_TESTS/lib.sh"
[ -w $KSM/run ] || skip "needs root and KSM (/sys/kernel/mm/ksm/run not writable)"
ksm_save
echo 2 >$KSM/run
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode

findings() { jq -c "[.findings[] | select(.id == \"$1\")]" "$2"; }

# Every page of "unique" differs from every other: KSM can only scan it, never merge it.
fake_guest unique -m 256M -fake-guest 1 -fake-shared 0 -fake-zero 0 -fake-volatile 0 -fake-nothp
UNIQUE=$SPAWNED
fake_guest nomerge -m 32M -fake-guest 2 -fake-nomerge
NOMERGE=$SPAWNED
echo 20000 >$KSM/pages_to_scan
echo 10 >$KSM/sleep_millisecs
scans=$(cat $KSM/full_scans)
echo 1 >$KSM/run
# Past the first full scan (30 s at most, however busy the machine): ksmd now checksums the unique
# pages over and over and merges none of them.
for i in $(seq 300); do [ "$(cat $KSM/full_scans)" -gt "$scans" ] && break; sleep 0.1; done
[ "$(cat $KSM/full_scans)" -gt "$scans" ] || fail "ksmd finished no full scan in 30 s"
"$VMHOST" doctor --interval 2 --smaps-budget 0 --json >"$TEST_TMP/hard.json" || fail "doctor failed while KSM scans hard"
say "ksmd over the interval: $(findings ksm-cpu-without-gain "$TEST_TMP/hard.json")"
check "hard scanning of unique pages: ksm-cpu-without-gain" jq -e '[.findings[] | select(.id == "ksm-cpu-without-gain")] | length == 1 and .[0].vm == null and .[0].evidence.ksmd_cpu_percent >= 5 and .[0].evidence.pages_scanned_per_second > 0' "$TEST_TMP/hard.json"
check "the evidence carries the settings that cost it" jq -e '.findings[] | select(.id == "ksm-cpu-without-gain") | .evidence.pages_to_scan == 20000 and .evidence.sleep_millisecs == 10' "$TEST_TMP/hard.json"
check "the unmarked fake QEMU is vm-ksm-unmergeable (not-marked)" jq -e --argjson p "$NOMERGE" '[.findings[] | select(.id == "vm-ksm-unmergeable" and .pid == $p)] | length == 1 and .[0].vm == "nomerge" and .[0].evidence.ksm_unmergeable_reason == "not-marked"' "$TEST_TMP/hard.json"
check "the guest that marks its RAM is not" jq -e --argjson p "$UNIQUE" '[.findings[] | select(.id == "vm-ksm-unmergeable" and .pid == $p)] | length == 0' "$TEST_TMP/hard.json"
"$VMHOST" doctor --interval 1 --smaps-budget 0 --fail-on warning >"$TEST_TMP/hard.txt"
check "--fail-on warning: exit 1 on ksm-cpu-without-gain" [ $? -eq 1 ]
check "human: the finding's line" grep -q '^warning  ksm-cpu-without-gain  host: ksmd spends' "$TEST_TMP/hard.txt"

# Gentle scanning (the kernel's default 100 pages every 200 ms): ksmd costs next to nothing.
echo 100 >$KSM/pages_to_scan
echo 200 >$KSM/sleep_millisecs
# ksmd reads the settings between batches: one of 20000 pages begun before the write goes on at the
# old pace (0.2 s here, a tenth of doctor's interval, up to 9% of a CPU in it: CI saw the finding
# once). Wait until it scans at the new pace: under 1000 pages in half a second (the hard pace is
# 50 times that).
gentle() { local a; a=$(cat $KSM/pages_scanned); sleep 0.5; [ $(($(cat $KSM/pages_scanned) - a)) -lt 1000 ]; }
[ -f $KSM/pages_scanned ] || gentle() { sleep 0.5; } # before Linux 6.1: half a second, a batch's time more than twice
wait_for 10 gentle || fail "ksmd still scans hard 10 s after pages_to_scan went to 100"
"$VMHOST" doctor --interval 2 --smaps-budget 0 --json >"$TEST_TMP/gentle.json" || fail "doctor failed while KSM scans gently"
check "gentle scanning: no ksm-cpu-without-gain" [ "$(findings ksm-cpu-without-gain "$TEST_TMP/gentle.json")" = "[]" ]

# KSM stopped: nothing to say about its CPU, and an unmarked VM is then KSM's stop, not its own.
echo 2 >$KSM/run
"$VMHOST" doctor --interval 1 --smaps-budget 0 --json >"$TEST_TMP/stopped.json" || fail "doctor failed with KSM stopped"
check "KSM stopped: no ksm-cpu-without-gain" [ "$(findings ksm-cpu-without-gain "$TEST_TMP/stopped.json")" = "[]" ]
check "KSM stopped: no vm-ksm-unmergeable" [ "$(findings vm-ksm-unmergeable "$TEST_TMP/stopped.json")" = "[]" ]
# Debian's real ksmtuned (tests/helpers/run_ksmtuned: a copy of the script, its settings put back
# when it stops) while the kernel's advisor tunes too: ksm-tuners-fighting; advisor off: not.
if [ -f $KSM/advisor_mode ]; then
	spawn "$VMHOST_BUILD/run_ksmtuned" --interval 60 --duration 60 >"$TEST_TMP/ksmtuned.out"
	TUNED=$SPAWNED
	for i in $(seq 100); do grep -q '^loop=' "$TEST_TMP/ksmtuned.out" && break; sleep 0.1; done
	grep -q '^loop=' "$TEST_TMP/ksmtuned.out" || die "ksmtuned did not start: $(cat "$TEST_TMP/ksmtuned.out")"
	echo scan-time >$KSM/advisor_mode
	"$VMHOST" doctor --interval 0 --smaps-budget 0 --json >"$TEST_TMP/tuned.json" || fail "doctor failed with ksmtuned"
	say "with ksmtuned: $(findings ksm-tuners-fighting "$TEST_TMP/tuned.json")"
	check "real ksmtuned and the advisor: ksm-tuners-fighting" jq -e '[.findings[] | select(.id == "ksm-tuners-fighting")] | length == 1 and .[0].evidence.advisor_mode == "scan-time" and .[0].pid > 0' "$TEST_TMP/tuned.json"
	echo none >$KSM/advisor_mode
	"$VMHOST" doctor --interval 0 --smaps-budget 0 --json >"$TEST_TMP/tuned-alone.json"
	check "real ksmtuned alone: no ksm-tuners-fighting" [ "$(findings ksm-tuners-fighting "$TEST_TMP/tuned-alone.json")" = "[]" ]
	stop_pid "$TUNED"
else
	skip_part "this kernel has no KSM advisor: the ksmtuned/advisor case is not run"
fi
finish
