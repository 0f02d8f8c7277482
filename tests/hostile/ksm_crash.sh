#!/bin/bash
# A tuner that cannot leave KSM tuned (issue 41 item 5, REVIEW S-M4). KSM set to run 0,
# pages_to_scan 123, sleep_millisecs 37 (the issue's measurement); a `vmhost ksm tune` SIGKILLed
# once it changed them leaves them changed, written down in /run/vmhost/ksm.saved, and the next
# tuner puts them back as it starts, so its clean stop leaves every setting as it was before the
# first (the old one read the tuned values as the originals); `vmhost ksm status --restore` alone
# does the same (exit 0), and says so, or "nothing" (exit 0) when nothing was left; the unit runs
# it after every stop (ExecStopPost). `vmhost ksm tune | head -1` (SIGPIPE on its log) and a crash
# (SIGSEGV, SIGABRT) leave KSM restored too. Every KSM setting is compared, not only those three.
# Runs in a private mount namespace with a tmpfs /run (private_run.sh), so that vmhost takes its
# own locks and keeps its file in a /run/vmhost of its own while the harness holds the real lock.
. "$VMHOST_TESTS/hostile/private_run.sh"
ksm_save || skip "no KSM on this kernel ($KSM)"
SAVED=/run/vmhost/ksm.saved

knobs() { # every writable setting, one line
	local f
	for f in $KSM_KNOBS; do [ -f $KSM/$f ] && printf '%s=%s ' "$f" "$(cat $KSM/$f)"; done
}
[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
echo 0 >$KSM/run && echo 123 >$KSM/pages_to_scan && echo 37 >$KSM/sleep_millisecs || die "cannot set KSM"
BEFORE=$(knobs)
as_before() { [ "$(knobs)" = "$BEFORE" ] || { say "now:    $(knobs)"; say "before: $BEFORE"; return 1; }; }

# tuner_changing NAME: a tuner started (spawned, TUNER its pid) and seen changing KSM.
tuner_changing() {
	spawn "$VMHOST" ksm tune --interval 0.5 >"$TEST_TMP/$1.out" 2>"$TEST_TMP/$1.err"
	TUNER=$SPAWNED
	local end=$((SECONDS + 30))
	until [ "$(knobs)" != "$BEFORE" ]; do
		[ $SECONDS -lt $end ] || { cat "$TEST_TMP/$1.err"; die "the tuner ($1) changed nothing in 30 s"; }
		sleep 0.1
	done
	sleep 1 # a decision or two more
}
# kill_tuner SIG: the tuner killed by SIG; STATUS its wait status.
kill_tuner() {
	kill -"$1" "$TUNER"
	wait "$TUNER"
	STATUS=$?
	TEST_PIDS=${TEST_PIDS// $TUNER/}
}

tuner_changing first
check "the tuner wrote down what it changes first ($SAVED)" grep -q 'set sleep_millisecs 37' "$SAVED"
check "  ... root's alone (0600)" [ "$(stat -c '%a %U' "$SAVED")" = "600 root" ]
kill_tuner KILL
check "SIGKILL: KSM left changed (nothing in the process can restore)" [ "$STATUS" = 137 -a "$(knobs)" != "$BEFORE" ]
check "  ... and the file left" [ -f "$SAVED" ]
"$VMHOST" ksm tune --interval 0.5 --duration 3 >"$TEST_TMP/next.out" 2>"$TEST_TMP/next.err"
check "the next tuner runs (exit 0)" [ $? = 0 ]
check "  ... says it put back what the dead one left" grep -q 'put back the KSM settings a vmhost that died left changed' "$TEST_TMP/next.err"
check "  ... and its clean stop leaves every setting as before the first tuner" as_before
check "  ... and no file" [ ! -e "$SAVED" ]

tuner_changing second
kill_tuner KILL
"$VMHOST" ksm status --restore >"$TEST_TMP/restore.out" 2>"$TEST_TMP/restore.err"
check "ksm status --restore: exit 0" [ $? = 0 ]
check "  ... every setting as before" as_before
check "  ... says what it put back" grep -q "restored what vmhost (pid $TUNER) left changed in $KSM: .*sleep_millisecs=37" "$TEST_TMP/restore.out"
"$VMHOST" --json ksm status --restore >"$TEST_TMP/again.json" 2>&1
check "again, nothing left: exit 0, {\"restored\": false}" sh -c "[ $? = 0 ] && jq -e '.restored == false' '$TEST_TMP/again.json' >/dev/null"
check "the unit runs it after every stop" grep -qx 'ExecStopPost=/usr/bin/vmhost ksm status --restore' \
	"$VMHOST_TESTS/../contrib/systemd/vmhost-ksm-tune.service"

# The log's reader goes away: SIGPIPE (or EPIPE) is a stop, restored.
timeout 60 bash -c '"$0" ksm tune --interval 0.5 --verbose | head -1; exit "${PIPESTATUS[0]}"' "$VMHOST" \
	>"$TEST_TMP/head.out" 2>"$TEST_TMP/head.err"
rc=$?
check "ksm tune | head -1: the tuner stops (exit 0, got $rc)" [ "$rc" = 0 ]
check "  ... on the broken pipe" grep -q 'stopped on Broken pipe' "$TEST_TMP/head.err"
check "  ... every setting as before" as_before
check "  ... and no file" [ ! -e "$SAVED" ]

# A crash restores on its way out, and still dies by its signal.
for sig in SEGV ABRT; do
	tuner_changing "crash-$sig"
	n=$(kill -l "$sig")
	kill_tuner "$sig"
	check "SIG$sig: the tuner dies by it ($((128 + n)), got $STATUS)" [ "$STATUS" = $((128 + n)) ]
	check "  ... every setting as before" as_before
	check "  ... and no file" [ ! -e "$SAVED" ]
done
finish
