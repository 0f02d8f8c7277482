#!/bin/bash
# Bad /proc and /sys input through the binary, on copies of the host-mixed fixture made at test
# time: files unreadable (mode 000, read as nobody: root ignores modes), truncated, huge (a 1 MiB
# command line, a 4 KiB cgroup path); --proc-root at an empty directory, a symlink loop, a file;
# and stdout closed early (SIGPIPE). Each gives null figures, a skipped count or one clear line;
# never a crash or a made-up number. Decisions: docs/privileges.md "Faults in /proc and /sys".
. "$VMHOST_TESTS/lib.sh"
chmod 755 "$TEST_TMP"
fresh() { rm -rf "$TEST_TMP/h" && cp -r "$VMHOST_FIXTURES/host-mixed" "$TEST_TMP/h" && chmod -R a+rX "$TEST_TMP/h"; }
P=$TEST_TMP/h/proc
mem() { "$VMHOST" --proc-root "$P" --sys-root "$TEST_TMP/h/sys" mem "$@"; }
vm() { jq -c --argjson p "$2" '.vms[] | select(.pid == $p)' "$1"; }
field() { jq -r --argjson p "$2" ".vms[] | select(.pid == \$p) | .$3" "$1"; }
NOBODY="setpriv --reuid nobody --regid nogroup --clear-groups"

# --- unreadable, as nobody: the files a non-owner cannot read on a real host (ksm_stat,
# smaps_rollup), then ones every user can read there (status, cmdline, meminfo).
fresh
chmod 000 "$P/1001/ksm_stat" "$P/1001/smaps_rollup"
$NOBODY "$VMHOST" --proc-root "$P" --sys-root "$TEST_TMP/h/sys" --json mem --exact >"$TEST_TMP/acc.json" 2>"$TEST_TMP/acc.err"
check "EACCES on ksm_stat, smaps_rollup: exit 0" [ $? -eq 0 ]
check "... one warning naming the cause" sh -c "[ \$(wc -l <'$TEST_TMP/acc.err') = 1 ] && grep -q 'no permission to read some /proc files of 1 process' '$TEST_TMP/acc.err'"
check "... the VM is listed with null KSM figures" [ "$(field "$TEST_TMP/acc.json" 1001 ksm_merging_pages)" = null ]
check "... its PSS is not claimed exact (null or the estimate)" [ "$(field "$TEST_TMP/acc.json" 1001 pss_method)" != exact ]
check "... the other VMs keep their exact figures" [ "$(field "$TEST_TMP/acc.json" 1005 pss_method)" = exact ]
chmod 000 "$P/1003/status"
$NOBODY "$VMHOST" --proc-root "$P" --sys-root "$TEST_TMP/h/sys" --json mem >"$TEST_TMP/acc2.json" 2>/dev/null
check "EACCES on status: the VM is skipped and counted, not shown with zeros" \
	sh -c "[ -z \"\$(jq -c '.vms[] | select(.pid == 1003)' '$TEST_TMP/acc2.json')\" ] && [ \$(jq .skipped '$TEST_TMP/acc2.json') -ge 1 ]"
chmod 000 "$P/meminfo"
$NOBODY "$VMHOST" --proc-root "$P" --sys-root "$TEST_TMP/h/sys" mem >/dev/null 2>"$TEST_TMP/acc3.err"
check "EACCES on meminfo: exit 77 (a privilege is missing)" [ $? -eq 77 ]
check "... one line naming the file" sh -c "[ \$(wc -l <'$TEST_TMP/acc3.err') = 1 ] && grep -q 'reading host memory: .*/meminfo: Permission denied' '$TEST_TMP/acc3.err'"

# --- truncated: each file cut in the middle of a line.
fresh
cut_file() { head -c "$2" "$1" >"$1.cut" && mv "$1.cut" "$1"; }
cut_file "$P/meminfo" 60 # within MemAvailable
cut_file "$P/1001/status" $(($(grep -bo 'VmRSS:' "$P/1001/status" | cut -d: -f1) + 10)) # "VmRSS:\t 23"
cut_file "$P/1001/ksm_stat" 30
cut_file "$P/1001/smaps_rollup" 100
cut_file "$P/1003/cmdline" 60 # within "-smbios type=...": no final NUL, no -m
cut_file "$P/1005/stat" 40
: >"$P/1001/cgroup"
mem --json >"$TEST_TMP/cut.json" 2>"$TEST_TMP/cut.err"
check "truncated files: exit 0, no error" sh -c "[ $? = 0 ] && [ ! -s '$TEST_TMP/cut.err' ]"
check "truncated meminfo: the figures after the cut are null, before it kept" \
	jq -e '.host.mem_total_bytes == 67437461504 and .host.mem_available_bytes == null and .host.swap_total_bytes == null' "$TEST_TMP/cut.json"
check "truncated status: no cut number (VmRSS 23 kB): RSS and what needs it null" \
	jq -e '.vms[] | select(.pid == 1001) | .rss_bytes == null and .overhead_bytes == null' "$TEST_TMP/cut.json"
mem --json --exact >"$TEST_TMP/cutx.json" 2>/dev/null
check "truncated ksm_stat, smaps_rollup (--exact): null KSM pages and PSS" \
	jq -e '.vms[] | select(.pid == 1001) | .ksm_merging_pages == null and .pss_bytes == null' "$TEST_TMP/cutx.json"
check "truncated cmdline: guest RAM unknown, not QEMU's 128 MiB default" \
	jq -e '.vms[] | select(.pid == 1003) | .guest_ram_bytes == null and .overhead_bytes == null' "$TEST_TMP/cut.json"
check "truncated stat: CPU seconds null, not 0" jq -e '.vms[] | select(.pid == 1005) | .cpu_seconds == null' "$TEST_TMP/cut.json"
check "empty cgroup file: cgroup null" jq -e '.vms[] | select(.pid == 1001) | .cgroup == null' "$TEST_TMP/cut.json"

# --- huge: a 1 MiB command line (its -m first), a 4 KiB cgroup path, a 1 MiB status.
fresh
{ cat "$P/1001/cmdline"; printf -- '-append\0'; head -c 1048576 /dev/zero | tr '\0' x; printf '\0'; } >"$P/1001/cmdline.big"
mv "$P/1001/cmdline.big" "$P/1001/cmdline"
deep=$(printf '/%0250d' $(seq 16) | tr 0 d)
printf '0::/qemu.slice%s/100.scope\n' "$deep" >"$P/1003/cgroup"
{ cat "$P/1005/status"; for i in $(seq 20000); do printf 'Junk%d:\t%0040d kB\n' "$i" 0; done; } >"$P/1005/status.big"
mv "$P/1005/status.big" "$P/1005/status"
mem --json >"$TEST_TMP/big.json" 2>"$TEST_TMP/big.err"
check "huge files: exit 0, no error" sh -c "[ $? = 0 ] && [ ! -s '$TEST_TMP/big.err' ]"
check "1 MiB cmdline: the VM keeps its name and 2 GiB of guest RAM" \
	jq -e '.vms[] | select(.pid == 1001) | .name == "web1" and .guest_ram_bytes == 2147483648' "$TEST_TMP/big.json"
check "4 KiB cgroup path: cgroup null (longer than vmhost keeps), the VM's memory figures kept" \
	jq -e '.vms[] | select(.pid == 1003) | .cgroup == null and .rss_bytes == 3114008576' "$TEST_TMP/big.json"
check "1 MiB status (no procfs gives one): that VM is skipped and counted, the others listed" \
	jq -e '([.vms[].pid] | sort) == [1001, 1003] and .skipped == 2' "$TEST_TMP/big.json"

# --- --proc-root at nothing usable: one line, exit 1.
mkdir -p "$TEST_TMP/empty"
ln -s loop "$TEST_TMP/loop"
ln -s . "$TEST_TMP/self"
: >"$TEST_TMP/file"
for root in empty loop file; do
	"$VMHOST" --proc-root "$TEST_TMP/$root" mem >"$TEST_TMP/$root.out" 2>"$TEST_TMP/$root.err"
	rc=$?
	check "--proc-root at $root: exit 1, nothing on stdout" sh -c "[ $rc = 1 ] && [ ! -s '$TEST_TMP/$root.out' ]"
	check "... one line naming meminfo under it ($(cat "$TEST_TMP/$root.err"))" \
		sh -c "[ \$(wc -l <'$TEST_TMP/$root.err') = 1 ] && grep -q 'mem: reading host memory: $TEST_TMP/$root/meminfo: ' '$TEST_TMP/$root.err'"
done
check "... the empty directory: 'no procfs there?'" grep -q 'No such file or directory (no procfs there?)' "$TEST_TMP/empty.err"
check "... the loop: the kernel's 'Too many levels of symbolic links'" grep -q 'Too many levels of symbolic links' "$TEST_TMP/loop.err"
"$VMHOST" --json --proc-root "$TEST_TMP/empty" mem >"$TEST_TMP/empty.json" 2>/dev/null
check "... with --json, the error document on stdout" jq -e '.error | test("meminfo")' "$TEST_TMP/empty.json"
# A tree whose process directories loop back on themselves (proc/1001 -> .): skipped, not followed.
fresh
rm -rf "$P/1002" && ln -s . "$P/1002"
timeout 20 "$VMHOST" --proc-root "$P" --sys-root "$TEST_TMP/h/sys" --json mem >"$TEST_TMP/selfloop.json" 2>/dev/null
check "a pid directory linking to its parent: exit 0, no hang, the other VMs listed" \
	sh -c "[ $? = 0 ] && jq -e '[.vms[].pid] | index(1001) != null' '$TEST_TMP/selfloop.json' >/dev/null"
"$VMHOST" --proc-root /proc --sys-root "$TEST_TMP/empty" --json mem >"$TEST_TMP/nosys.json" 2>"$TEST_TMP/nosys.err"
check "an empty --sys-root: exit 0, KSM null" sh -c "[ $? = 0 ] && jq -e '.ksm == null or .ksm.run == null' '$TEST_TMP/nosys.json' >/dev/null"

# --- SIGPIPE: 2000 VMs' output into `head`. vmhost dies of SIGPIPE as cat does (the shell's
# 141), silently; never a "Broken pipe" message or a crash.
fresh
mkdir "$P"/{3000..4999} # 2000 copies of VM 1005, one tee per file (a cp per VM takes 30 s)
for f in "$P"/1005/*; do tee "$P"/{3000..4999}/"${f##*/}" <"$f" >/dev/null; done
for form in "" --csv; do
	mem $form 2>"$TEST_TMP/pipe.err" | head -1 >/dev/null
	rc=${PIPESTATUS[0]}
	check "mem $form | head -1: killed by SIGPIPE (141), nothing on stderr" sh -c "[ $rc = 141 ] && [ ! -s '$TEST_TMP/pipe.err' ]"
done
mem --json 2>"$TEST_TMP/pipe.err" | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
check "mem --json | head -c 10: 141, nothing on stderr" sh -c "[ $rc = 141 ] && [ ! -s '$TEST_TMP/pipe.err' ]"
# Stopped (TERM, as --duration ends it) once 3 samples are in, however long they took.
mkfifo "$TEST_TMP/pipe"
"$VMHOST" --proc-root "$VMHOST_FIXTURES/host-mixed/proc" --sys-root "$VMHOST_FIXTURES/host-mixed/sys" record --db "$TEST_TMP/pipe.db" --interval 0.1 \
	--kvm-interval 0 2>"$TEST_TMP/pipe.err" >"$TEST_TMP/pipe" &
REC=$!
adopt "$REC"
head -1 <"$TEST_TMP/pipe" >/dev/null
wait_for 60 eval '[ "$(sqlite3 "$TEST_TMP/pipe.db" "SELECT count(*) FROM samples" 2>/dev/null)" -ge 3 ] 2>/dev/null'
kill -TERM "$REC"
wait "$REC"
rc=$?
check "record | head -1: 141 at its summary line, nothing on stderr, every sample kept" \
	sh -c "[ $rc = 141 ] && [ ! -s '$TEST_TMP/pipe.err' ] && [ \$(sqlite3 '$TEST_TMP/pipe.db' 'SELECT count(*) FROM samples') -ge 3 ]"
E=$VMHOST_FIXTURES/exits-intel
timeout 20 "$VMHOST" --proc-root "$E/proc" --sys-root "$E/sys" exits --log --interval 0.05 2>"$TEST_TMP/pipe.err" | head -2 >/dev/null
rc=${PIPESTATUS[0]}
check "exits --log | head -2: ends at the closed pipe (141), nothing on stderr" sh -c "[ $rc = 141 ] && [ ! -s '$TEST_TMP/pipe.err' ]"
finish
