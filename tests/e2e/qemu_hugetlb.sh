# Two real QEMUs (TCG, no guest kernel: held at the first instruction with -S) with 64 MiB of guest
# RAM on 2 MiB huge pages, in the two command-line forms hosts use: a memory-backend-file
# (libvirt, Proxmox) and the older -mem-path. Huge pages are in neither RSS nor PSS: vmhost must
# count them (hugetlb_bytes, memory_cost_bytes), recognise them from the process whatever the form
# (the pool's path says nothing of huge pages), and say KSM cannot merge that RAM. The test
# reserves 64 pages, mounts a hugetlbfs of its own, and gives every page and the mount back on any
# exit (the guests stopped by pid first).
. "$VMHOST_TESTS/lib.sh"
QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing (scripts/deps/qemu.txt)"
NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
FREE=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
if [ "$(id -u)" != 0 ] || [ ! -w $NR ]; then
	say "skipped: needs root and 2 MiB huge pages ($NR)"
	exit 77
fi
# One test at a time touches the pool (test_bench_alloc takes the same lock inside ctest).
exec 9>/run/lock/vmhost-hugepages.lock
flock -w 600 9 || die "the hugepages lock stayed taken for 10 minutes"

PAGES=64 # 2 x 64 MiB of 2 MiB pages
NR_SAVED="" MOUNTED=""
# Not under TEST_TMP: its name holds "huge", and the point is a path that says nothing of it.
POOL=$(mktemp -d /tmp/vmhost-pool.XXXXXX)
give_back() {
	[ -n "$MOUNTED" ] && umount "$POOL"
	rmdir "$POOL" 2>/dev/null
	[ -n "$NR_SAVED" ] && echo "$NR_SAVED" >$NR
}
on_cleanup give_back

NR_SAVED=$(cat $NR)
echo $((NR_SAVED + PAGES)) >$NR
free=$(cat $FREE)
if [ "$free" -lt $PAGES ]; then
	say "skipped: the kernel reserved only $free free 2 MiB pages of the $PAGES asked (memory too fragmented)"
	exit 77
fi
mount -t hugetlbfs -o pagesize=2M none "$POOL" || die "cannot mount hugetlbfs on $POOL"
MOUNTED=1

start() { # name, then the RAM options
	local name=$1
	shift
	spawn "$QEMU" -name "$name" -machine pc -accel tcg -smp 1 -nodefaults -display none \
		-monitor none -serial none -S "$@"
}
start hp-backend -m 64 -object memory-backend-file,id=pc.ram,size=64M,mem-path="$POOL",prealloc=on \
	-machine memory-backend=pc.ram
BACKEND=$SPAWNED
start hp-mempath -m 64 -mem-path "$POOL" -mem-prealloc
MEMPATH=$SPAWNED
hugetlb_kb() { awk '/^HugetlbPages:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
for i in $(seq 300); do
	[ "$(hugetlb_kb $BACKEND)" = 65536 ] && [ "$(hugetlb_kb $MEMPATH)" = 65536 ] && break
	kill -0 $BACKEND 2>/dev/null && kill -0 $MEMPATH 2>/dev/null || die "a QEMU exited while starting"
	sleep 0.1
done
# QEMU goes on starting after its RAM is allocated (RSS falls by ~5 MiB as its start-up threads
# end): the estimate and --exact are two runs, so both read a QEMU that has settled.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
was=""
for i in $(seq 40); do
	now="$(rss_kb $BACKEND) $(rss_kb $MEMPATH)"
	[ "$now" = "$was" ] && break
	was=$now
	sleep 0.25
done
say "HugetlbPages: backend $(hugetlb_kb $BACKEND) kB, mem-path $(hugetlb_kb $MEMPATH) kB; pool free $(cat $FREE)"

"$VMHOST" mem --pid $BACKEND --pid $MEMPATH --json >"$TEST_TMP/mem.json" || die "mem --json failed"
"$VMHOST" mem --pid $BACKEND --pid $MEMPATH --exact --json >"$TEST_TMP/exact.json" || die "mem --exact --json failed"
"$VMHOST" mem --pid $BACKEND --pid $MEMPATH >"$TEST_TMP/mem.txt" || die "mem failed"
get() { jq -r --argjson p "$1" ".vms[] | select(.pid == \$p) | $3" "$TEST_TMP/$2.json"; }
MIB64=67108864
for form in backend mempath; do
	pid=$BACKEND
	[ $form = mempath ] && pid=$MEMPATH
	check "$form: found as a QEMU VM" [ "$(get $pid mem .vmm)" = qemu ]
	check "$form: hugetlb_bytes 64 MiB" [ "$(get $pid mem .hugetlb_bytes)" = $MIB64 ]
	check "$form: reason hugetlbfs, ksm_mergeable false" \
		[ "$(get $pid mem '[.ksm_unmergeable_reason, .ksm_mergeable] | tostring')" = '["hugetlbfs",false]' ]
	oh=$(get $pid mem .overhead_bytes)
	ex=$(get $pid exact .overhead_bytes)
	check "$form: --exact finds guest RAM in the mappings" [ "$(get $pid exact .overhead_method)" = exact ]
	say "$form: rss $(get $pid mem .rss_bytes), pss $(get $pid mem .pss_bytes) ($(get $pid mem .pss_method); exact $(get $pid exact .pss_bytes)), overhead $oh (exact $ex), cost $(get $pid mem .memory_cost_bytes) (exact $(get $pid exact .memory_cost_bytes))"
	check "$form: overhead estimate within 10% of --exact's" near "$oh" "$ex" 10
	# Sampled PSS leaves the hugetlbfs mapping out of its file pages: the sampler alone (mem reads a
	# VM exactly where that costs less), against the exact read right after it (bench_pss_cost).
	if [ -r /proc/kpagecount ] && "$VMHOST_BUILD/bench_pss_cost" --sample $pid >"$TEST_TMP/sampled.$form" && [ -s "$TEST_TMP/sampled.$form" ]; then
		read -r _ _ _ method _ spss sbound _ sexact _ <"$TEST_TMP/sampled.$form"
		d=$((spss - sexact))
		say "$form: sampled PSS $spss bytes, bound $sbound, exact $sexact"
		check "$form: sampled PSS ($method) within its error bound of the exact one" le "${d#-}" "$sbound"
	fi
	# The overhead counts QEMU's shared library pages whole (it is resident memory), PSS divides
	# them among their users (here PSS is 0.7 of RSS): the cost holds the guest's 64 MiB and the
	# overhead at PSS weight, i.e. at least 64 MiB + overhead - (RSS - PSS).
	check "$form: memory_cost_bytes = PSS + 64 MiB >= 64 MiB + overhead at PSS weight" \
		[ "$(get $pid mem '[.memory_cost_bytes == .pss_bytes + 67108864, .memory_cost_bytes >= 67108864 + .overhead_bytes - (.rss_bytes - .pss_bytes)] | tostring')" = "[true,true]" ]
	check "$form: --exact: 64 MiB of private huge pages, cost = exact PSS + 64 MiB" \
		[ "$(get $pid exact '[.hugetlb_private_bytes, .hugetlb_shared_bytes, .memory_cost_bytes == .pss_bytes + 67108864] | tostring')" = "[$MIB64,0,true]" ]
	check "$form: --exact: numa_maps recognises its 64 MiB of hugetlbfs guest RAM over the nodes" \
		[ "$(get $pid exact '[.numa.nodes_source, ([.numa.hugetlb_nodes[]] | add)] | tostring')" = "[\"numa_maps\",$MIB64]" ]
done
check "host: at least the pages reserved here, used by at least these two" \
	jq -e '.host.hugetlb_total_bytes >= 134217728 and .host.hugetlb_used_bytes >= 134217728' "$TEST_TMP/mem.json"
check "the table has a HUGETLB column" grep -q ' HUGETLB ' "$TEST_TMP/mem.txt"
check "the table says which VMs hold the huge pages" grep -q '^huge pages held by: .*hp-backend 64.0 MiB.*hp-mempath 64.0 MiB\|^huge pages held by: .*hp-mempath 64.0 MiB.*hp-backend 64.0 MiB' "$TEST_TMP/mem.txt"
check "both forms named as unmergeable (hugetlbfs)" grep -q 'hp-backend (hugetlbfs).*hp-mempath (hugetlbfs)\|hp-mempath (hugetlbfs).*hp-backend (hugetlbfs)' "$TEST_TMP/mem.txt"
"$VMHOST" top --batch --json --iterations 1 --interval 0.2 >"$TEST_TMP/top.json" || die "top --batch --json failed"
check "top: memory_cost_bytes of both holds their 64 MiB of huge pages" \
	jq -e --argjson a $BACKEND --argjson b $MEMPATH '[.vms[] | select(.pid == $a or .pid == $b) | .memory_cost_bytes >= 67108864 + .pss_bytes] == [true, true]' "$TEST_TMP/top.json"
finish
