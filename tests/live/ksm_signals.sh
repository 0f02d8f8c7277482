# Killing `vmhost ksm tune` or `vmhost ksm sweep` with SIGTERM or SIGINT at several moments
# leaves every KSM setting as it was before they started; a second tune is refused.
. "$VMHOST_TESTS/lib.sh"
[ -d $KSM ] || skip "this kernel has no KSM"
ksm_save || die "cannot read KSM settings"
export VMHOST_TUNE_LOCK=$TEST_TMP/tune.lock

# Something to scan and merge: two small VM-like guests.
for i in 1 2; do fake_guest_start "sig$i" -m 32 -fake-guest "$i" -fake-volatile 0.1; done
fake_guest_ready sig1 sig2

settings() {
	local f
	for f in $KSM_KNOBS; do [ -f $KSM/$f ] && echo "$f=$(cat $KSM/$f)"; done
}
# Unusual starting points, so a missed restore shows.
start_state() { # RUN PAGES SLEEP ADVISOR
	[ -f $KSM/advisor_mode ] && echo none >$KSM/advisor_mode
	echo "$2" >$KSM/pages_to_scan
	echo "$3" >$KSM/sleep_millisecs
	[ -f $KSM/smart_scan ] && echo 0 >$KSM/smart_scan
	[ -f $KSM/advisor_mode ] && [ "$4" != none ] && echo "$4" >$KSM/advisor_mode
	echo "$1" >$KSM/run
}

# kill_at WHAT SIGNAL DELAY CMD...: runs CMD, signals it after DELAY, compares every setting.
kill_at() {
	local what=$1 sig=$2 delay=$3 before after rc
	shift 3
	before=$(settings)
	"$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
	local pid=$!
	adopt "$pid"
	sleep "$delay"
	kill -"$sig" "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	after=$(settings)
	if [ "$before" = "$after" ]; then
		pass "$what: $sig after ${delay}s leaves every KSM setting as before (exit $rc)"
	else
		fail "$what: $sig after ${delay}s changed settings: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
	fi
}

start_state 0 123 45 none
kill_at "tune" TERM 0.05 "$VMHOST" ksm tune --interval 0.2
kill_at "tune" INT 0.5 "$VMHOST" ksm tune --interval 0.2
start_state 1 321 33 none
kill_at "tune" TERM 1.3 "$VMHOST" ksm tune --interval 0.2
kill_at "tune" INT 2.5 "$VMHOST" ksm tune --interval 0.2 --cpu-budget 5
check "tune logged its decisions with reasons" grep -q "fast pages_to_scan=.*start:" "$TEST_TMP/out"
if [ -f $KSM/advisor_mode ]; then
	start_state 0 77 55 scan-time
	kill_at "tune (advisor was on)" TERM 1 "$VMHOST" ksm tune --interval 0.2
	start_state 0 123 45 none
fi
kill_at "sweep" TERM 0.05 "$VMHOST" ksm sweep --settings 2000/10,100/20 --scans 5
kill_at "sweep" INT 0.8 "$VMHOST" ksm sweep --settings 2000/10,100/20 --scans 5
start_state 1 321 33 none
kill_at "sweep" TERM 2 "$VMHOST" ksm sweep --settings 2000/10,100/20 --scans 5
kill_at "sweep" INT 4 "$VMHOST" ksm sweep --settings 2000/10,100/20 --scans 5
check "sweep says it restored" grep -q "every KSM setting restored" "$TEST_TMP/err"

# A second tune is refused while one runs.
"$VMHOST" ksm tune --interval 0.5 >"$TEST_TMP/a.out" 2>&1 &
a=$!
adopt "$a"
for _ in $(seq 50); do grep -q start "$TEST_TMP/a.out" && break; sleep 0.1; done
"$VMHOST" ksm tune --interval 0.5 --duration 1 >/dev/null 2>"$TEST_TMP/b.err"
rc=$?
check "second tune exits 1" test $rc -eq 1
check "second tune says why" grep -q "already running" "$TEST_TMP/b.err"
stop_pid "$a"
finish
