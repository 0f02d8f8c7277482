#!/bin/bash
# The database follows no link and takes no one else's file (issue 41 item 4, REVIEW S-M5): root
# runs record and share in a directory another user (nobody) can write. A database path that is
# a symbolic link to a file in nobody's directory is refused by both, and nothing is made at the
# link's target (nor its -wal or -shm); a database nobody owns is refused and left as it was;
# share without --db writes no database at all (it wrote ./vmhost.db). record's refusal is an
# error (exit 1); share's is a warning, its map printed all the same (exit 0).
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: root is whom the planted files are aimed at"
command -v setpriv >/dev/null || skip "setpriv missing"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

chmod 0711 "$TEST_TMP"
WORK=$TEST_TMP/work # where root runs: nobody's to write
EVIL=$TEST_TMP/evil # nobody's own
mkdir "$WORK" "$EVIL" && chown nobody:nogroup "$WORK" "$EVIL" || die "cannot make nobody's directories"
"${NOBODY[@]}" ln -s "$EVIL/victim.db" "$WORK/vmhost.db" || die "nobody cannot plant a link"
"${NOBODY[@]}" ln -s "$EVIL/victim2.db" "$WORK/share.db" || die "nobody cannot plant a link"
nothing_in_evil() { [ -z "$(ls -A "$EVIL")" ]; }

# record, its default path a link
(cd "$WORK" && "$VMHOST" record --duration 1 --interval 1) >"$TEST_TMP/rec.out" 2>"$TEST_TMP/rec.err"
rc=$?
check "record refuses ./vmhost.db, a link: exit 1 (got $rc)" [ "$rc" = 1 ]
check "  ... saying it is a symbolic link" grep -q 'symbolic link' "$TEST_TMP/rec.err"
check "  ... and nothing is made at the link's target" nothing_in_evil

# share, --db a link, with a VM to map
fake_guest hostile-share -m 16 -fake-seed 41
GUEST=$SPAWNED
(cd "$WORK" && "$VMHOST" share --pid "$GUEST" --cpu-budget 0 --db share.db) >"$TEST_TMP/share.out" 2>"$TEST_TMP/share.err"
rc=$?
check "share --db LINK: the map printed (exit 0, got $rc)" [ "$rc" = 0 ]
check "  ... not kept, a warning saying the database is a symbolic link" grep -q 'not kept in share.db: a symbolic link' "$TEST_TMP/share.err"
check "  ... and nothing is made at the link's target" nothing_in_evil

# share without --db writes none
(cd "$WORK" && "$VMHOST" share --pid "$GUEST" --cpu-budget 0) >"$TEST_TMP/nodb.out" 2>"$TEST_TMP/nodb.err"
check "share without --db: exit 0" [ $? = 0 ]
check "  ... and no database written (the link at ./vmhost.db untouched, nothing behind it)" \
	sh -c "[ -L '$WORK/vmhost.db' ] && [ -z \"\$(ls -A '$EVIL')\" ]"
rm -f "$WORK/vmhost.db"
(cd "$WORK" && "$VMHOST" share --pid "$GUEST" --cpu-budget 0) >/dev/null 2>&1
check "  ... nor a new ./vmhost.db" [ ! -e "$WORK/vmhost.db" ]

# a database nobody owns (a real one: root recorded it, then it was given away)
"$VMHOST" record --db "$TEST_TMP/given.db" --duration 1 --interval 1 >/dev/null 2>&1 || die "record cannot make a database"
cp "$TEST_TMP/given.db" "$WORK/theirs.db" && chown nobody:nogroup "$WORK/theirs.db"
before=$(stat -c '%s %Y' "$WORK/theirs.db")
"$VMHOST" record --db "$WORK/theirs.db" --duration 1 --interval 1 >"$TEST_TMP/own.out" 2>"$TEST_TMP/own.err"
rc=$?
check "record refuses a database nobody owns: exit 1 (got $rc)" [ "$rc" = 1 ]
check "  ... saying whose it is not" grep -q "not this user's own file" "$TEST_TMP/own.err"
"$VMHOST" share --pid "$GUEST" --cpu-budget 0 --db "$WORK/theirs.db" >/dev/null 2>"$TEST_TMP/own_share.err"
check "share --db with it: a warning" grep -q "not kept in $WORK/theirs.db: not this user's own file" "$TEST_TMP/own_share.err"
check "  ... and the file is as it was" [ "$(stat -c '%s %Y' "$WORK/theirs.db")" = "$before" ]
check "  ... with no -wal or -shm beside it" sh -c "! ls '$WORK'/theirs.db-* 2>/dev/null | grep -q ."
finish
