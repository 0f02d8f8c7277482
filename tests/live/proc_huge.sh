#!/bin/bash
# Real processes with huge /proc files: a fake guest whose command line is 1.1 MiB (nine
# 120 KiB arguments after its -name and -m), moved into a cgroup whose path is 4 KiB (16 nested
# directories of 250 characters in the unified hierarchy). mem, record and serve list it with
# its name and guest RAM; its cgroup is null (longer than vmhost keeps), never a cut path.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
CG=/sys/fs/cgroup/unified
[ -f /sys/fs/cgroup/cgroup.procs ] && CG=/sys/fs/cgroup
DIRS=""
on_cleanup 'for d in $DIRS; do rmdir "$d" 2>/dev/null; done'

big=$(head -c 122880 /dev/zero | tr '\0' x)
args=()
for i in $(seq 9); do args+=(-append "$big"); done
fake_guest huge -m 16M "${args[@]}"
G=$SPAWNED
size=$(wc -c <"/proc/$G/cmdline")
check "the fake guest's command line is over 1 MiB ($size bytes)" ge "$size" 1048576

d=$CG/vmhost-huge-$$
comp=$(head -c 250 /dev/zero | tr '\0' c)
mkdir "$d" && DIRS="$d"
for i in $(seq 16); do d=$d/$comp; mkdir "$d" || break; DIRS="$d $DIRS"; done
echo "$G" >"$d/cgroup.procs" || fail "cannot move the guest into the deep cgroup"
path=$(sed -n 's/^0:://p' "/proc/$G/cgroup")
check "its cgroup path is about 4 KiB (${#path} characters)" ge "${#path}" 4000

"$VMHOST" --json mem >"$TEST_TMP/mem.json" 2>"$TEST_TMP/mem.err"
check "mem: exit 0" [ $? -eq 0 ]
vm() { jq -e --argjson p "$G" "[.vms[] | select(.pid == \$p) | $1] == [true]" "$TEST_TMP/mem.json" >/dev/null; }
check "mem: the guest is listed with its name and 16 MiB of guest RAM" \
	vm '.name == "huge" and .guest_ram_bytes == 16777216 and .rss_bytes > 0'
check "mem: its cgroup is null, not a cut path" vm '.cgroup == null'
"$VMHOST" mem >"$TEST_TMP/mem.txt" 2>&1
check "mem's table has the guest's row" grep -Eq "^ *$G +huge +qemu +16.0 MiB" "$TEST_TMP/mem.txt"

"$VMHOST" record --db "$TEST_TMP/h.db" --interval 0.2 --duration 1 --kvm-interval 0 --quiet 2>"$TEST_TMP/rec.err"
check "record: exit 0" [ $? -eq 0 ]
check "record: the guest's series is named" [ "$(sqlite3 "$TEST_TMP/h.db" "SELECT name FROM vms WHERE pid = $G")" = huge ]

serve_start "$TEST_TMP/serve.log" "" --detail full || die "cannot start serve"
curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics" || fail "scrape"
check "serve: the guest's metrics are exported" grep -q "vmhost_vm_guest_ram_bytes{vm=\"huge\",pid=\"$G\"" "$TEST_TMP/metrics"
finish
