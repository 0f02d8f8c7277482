#!/bin/bash
# The plain build is hardened as Debian's package is (REVIEW S-L13, cmake/lib/hardening.cmake):
# hardening-check (devscripts: scripts/deps/test/hardening.txt) finds in the vmhost this build
# made a position-independent executable, the stack protector, fortified libc calls, read-only
# relocations bound at start, stack clash protection and CET's marks, and exits 0.
# CET's marks (IBT, SHSTK in .note.gnu.property) are kept by the linker only when every object
# has them, and a C library's start files without them (Debian 12's Scrt1.o and crti.o: its own
# /usr/bin/flock has none either) leave no program linked there marked: then each of vmhost's
# own objects must carry them, and hardening-check is asked for the rest (--nocfprotection).
. "$VMHOST_TESTS/lib.sh"
command -v hardening-check >/dev/null || die "hardening-check missing (apt install devscripts: scripts/deps/test/hardening.txt)"

cf=()
start_files="$(gcc -print-file-name=Scrt1.o) $(gcc -print-file-name=crti.o)"
if ! readelf -n $start_files | grep -q 'x86 feature: IBT, SHSTK' && [ "$(uname -m)" = x86_64 ]; then
	say "the C library's start files carry no CET marks ($start_files): vmhost's objects are checked for them"
	cf=(--nocfprotection)
	# The objects vmhost is linked from: libvmhostcore.a's members and those its link line names
	# (not every .o under CMakeFiles: a build tree keeps the objects of sources moved or removed since);
	# members are told apart by their place (src/cmd/top.c and src/core/sample/top.c are both top.c.o).
	readelf -n "$VMHOST_BUILD/libvmhostcore.a" | awk '/^File: / { f = $2 " #" ++k; all[f] } /x86 feature: IBT, SHSTK/ { ok[f] }
		END { for (f in all) { print f >"/dev/stderr"; if (!(f in ok)) print f } }' >"$TEST_TMP/unmarked" 2>"$TEST_TMP/objects"
	grep -o 'CMakeFiles/vmhost.dir/[^ ]*\.o' "$VMHOST_BUILD/CMakeFiles/vmhost.dir/link.txt" | while read -r o; do
		echo "$o" >>"$TEST_TMP/objects"
		readelf -n "$VMHOST_BUILD/$o" | grep -q 'x86 feature: IBT, SHSTK' || echo "$o" >>"$TEST_TMP/unmarked"
	done
	check "every one of vmhost's $(wc -l <"$TEST_TMP/objects") objects is marked IBT, SHSTK" \
		sh -c "[ -s '$TEST_TMP/objects' ] && [ ! -s '$TEST_TMP/unmarked' ]"
	head -5 "$TEST_TMP/unmarked"
fi

hardening-check "${cf[@]}" "$VMHOST" >"$TEST_TMP/report" 2>&1
rc=$?
cat "$TEST_TMP/report"
check "hardening-check $(basename "$VMHOST"): exit 0" [ "$rc" = 0 ]
[ ${#cf[@]} = 0 ] || sed -i '/Control flow integrity/d' "$TEST_TMP/report"
check "  ... and no feature it could not find" sh -c "! grep -E ': (no|unknown)' '$TEST_TMP/report'"
finish
