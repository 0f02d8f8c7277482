#!/bin/bash
# Locks nobody else can hold (issue 41 item 4, REVIEW S-M3). As nobody, every lock file vmhost
# used to take is created (or, the recorder's database, opened read-only) and held with flock:
# /run/lock/vmhost-ksm.lock, /run/lock/vmhost-ksm-tune.lock (in the 1777 /run/lock) and a 0644
# vmhost.db. Then, as root, `ksm tune --dry-run`, a short `ksm tune`, a small `ksm sweep` and
# `record --duration` all run to their end, none refused nor kept waiting (they answered "already
# running", waited forever and "another recorder is writing"). nobody can neither make
# /run/vmhost before root nor open, make or hold anything in it after. In a private /run
# (private_run.sh); KSM saved and put back.
. "$VMHOST_TESTS/hostile/private_run.sh"
command -v setpriv >/dev/null || skip "setpriv missing"
ksm_save || skip "no KSM on this kernel ($KSM)"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
settings() { local f; for f in $KSM_KNOBS; do [ -f $KSM/$f ] && printf '%s=%s ' "$f" "$(cat $KSM/$f)"; done; }
BEFORE=$(settings)

check "nobody cannot make /run/vmhost before root does" sh -c "! ${NOBODY[*]} mkdir /run/vmhost 2>/dev/null"
DB_DIR=/run/hostile
mkdir -m 0755 "$DB_DIR" && "$VMHOST" record --db "$DB_DIR/vmhost.db" --duration 1 --interval 1 >/dev/null 2>&1 ||
	die "record cannot make a database"
chmod 0644 "$DB_DIR/vmhost.db"
for f in /run/lock/vmhost-ksm.lock /run/lock/vmhost-ksm-tune.lock "$DB_DIR/vmhost.db"; do
	# made if missing, opened read-only, locked, and held by the process spawn knows (the sleep)
	spawn "${NOBODY[@]}" bash -c '[ -e "$0" ] || : >"$0"; exec 9<"$0" && flock 9 && exec sleep 600' "$f"
	end=$((SECONDS + 10))
	while flock -n "$f" true 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
	check "nobody holds $f" sh -c "! flock -n '$f' true"
done

fake_guest hostile-locks -m 16 -fake-guest 1 # something for the sweep's scan to merge
run() { # NAME SECONDS COMMAND...: runs it under a timeout; its exit status in RC, output in TEST_TMP/NAME.*
	local name=$1 secs=$2
	shift 2
	timeout "$secs" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err"
	RC=$?
	[ "$RC" = 0 ] || sed 's/^/    /' "$TEST_TMP/$name.err"
}
run dry 60 "$VMHOST" ksm tune --dry-run --duration 1 --interval 0.5
check "ksm tune --dry-run runs (exit $RC)" [ "$RC" = 0 ]
run tune 60 "$VMHOST" ksm tune --duration 2 --interval 0.5
check "ksm tune runs to its --duration, not refused (exit $RC)" [ "$RC" = 0 ]
run sweep 120 "$VMHOST" --json ksm sweep --settings 4000/10 --scans 1 --timeout 60
check "ksm sweep runs, not kept waiting (exit $RC)" [ "$RC" = 0 ]
run record 60 "$VMHOST" record --db "$DB_DIR/vmhost.db" --duration 2 --interval 1
check "record writes the database nobody holds a flock on (exit $RC)" [ "$RC" = 0 ]
check "every KSM setting as before" [ "$(settings)" = "$BEFORE" ]

ino=$(stat -c '%d-%i' "$DB_DIR/vmhost.db")
for f in /run/vmhost/ksm.lock /run/vmhost/ksm-tune.lock "/run/vmhost/db-$ino.lock" /run/vmhost/planted; do
	check "nobody can neither open, make nor hold $f" sh -c "! ${NOBODY[*]} flock -n '$f' true 2>/dev/null"
done
check "  ... nor list /run/vmhost (root's, 0700)" sh -c "[ \"\$(stat -c '%a %U' /run/vmhost)\" = '700 root' ] && ! ${NOBODY[*]} ls /run/vmhost >/dev/null 2>&1"
finish
