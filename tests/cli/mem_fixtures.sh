# vmhost mem on a frozen host tree: the whole output against golden files (JSON, CSV, human),
# plus the contract's shape and bad trees (empty, garbage, missing).
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES/host-mixed
roots="--proc-root $FX/proc --sys-root $FX/sys"

"$VMHOST" $roots mem --json | jq -S . >"$TEST_TMP/mem.json" || die "mem --json failed"
check "mem --json matches the golden file" diff -u "$FX/expected-mem.json" "$TEST_TMP/mem.json"
"$VMHOST" $roots --csv mem >"$TEST_TMP/mem.csv"
check "mem --csv matches the golden file" diff -u "$FX/expected-mem.csv" "$TEST_TMP/mem.csv"
"$VMHOST" $roots >"$TEST_TMP/overview.txt"
check "overview matches the golden file" diff -u "$FX/expected-overview.txt" "$TEST_TMP/overview.txt"

# Contract shape: every field of vmhost mem --json, with the right types.
shape='.host.mem_total_bytes|type=="number"' 
check "host fields are numbers" jq -e '(.host | [.mem_total_bytes, .mem_available_bytes, .page_size_bytes] | all(type=="number"))' "$TEST_TMP/mem.json"
check "ksm fields present" jq -e '.ksm | has("run") and has("pages_shared") and has("pages_sharing") and has("general_profit_bytes")' "$TEST_TMP/mem.json"
fields='pid name uuid vmm cgroup guest_ram_bytes rss_bytes rss_anon_bytes rss_file_bytes rss_shmem_bytes swap_bytes ksm_merging_pages ksm_zero_pages ksm_profit_bytes pss_bytes pss_method overhead_bytes overhead_method'
for f in $fields; do
	jq -e --arg f "$f" 'all(.vms[]; has($f))' "$TEST_TMP/mem.json" >/dev/null || fail "field $f missing in a VM"
done
check "skipped counts the vanished guest" jq -e '.skipped == 1' "$TEST_TMP/mem.json"
check "older kernel without ksm_stat gives null, not 0" jq -e '.vms[] | select(.name=="old") | .ksm_zero_pages == null and .ksm_profit_bytes == null' "$TEST_TMP/mem.json"
check "swtpm counted with web1" jq -e '.vms[] | select(.name=="web1") | .helpers == 1 and .rss_bytes == 2370715648' "$TEST_TMP/mem.json"
check "Proxmox name, uuid, cgroup" jq -e '.vms[] | select(.pid==1003) | .name=="db" and .uuid=="aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" and .cgroup=="/qemu.slice/100.scope"' "$TEST_TMP/mem.json"
check "--bytes prints raw numbers" sh -c "'$VMHOST' $roots mem --bytes | grep -q ' 2370715648 '"

# A tree without KSM: KSM figures are null, never 0.
mkdir -p "$TEST_TMP/noksm/sys"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" mem --json >"$TEST_TMP/noksm.json"
check "no KSM: ksm.run is null" jq -e '.ksm.run == null and .ksm.pages_sharing == null' "$TEST_TMP/noksm.json"
"$VMHOST" --proc-root "$FX/proc" --sys-root "$TEST_TMP/noksm/sys" >"$TEST_TMP/noksm.txt"
check "no KSM: the overview says so" grep -q "not available in this kernel" "$TEST_TMP/noksm.txt"

# No MemAvailable (kernels before 3.14): "n/a", never a made-up 0, in every form.
cp -r "$FX/proc" "$TEST_TMP/noavail"
grep -v '^MemAvailable:' "$FX/proc/meminfo" >"$TEST_TMP/noavail/meminfo"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" --bytes >"$TEST_TMP/noavail.txt"
check "no MemAvailable: --bytes says n/a" grep -q '^host  memory [0-9]*, available n/a' "$TEST_TMP/noavail.txt"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" >"$TEST_TMP/noavail.txt"
check "no MemAvailable: the overview says n/a" grep -q '^host  memory .*, available n/a' "$TEST_TMP/noavail.txt"
"$VMHOST" --proc-root "$TEST_TMP/noavail" --sys-root "$FX/sys" mem --json >"$TEST_TMP/noavail.json"
check "no MemAvailable: null in JSON" jq -e '.host.mem_available_bytes == null' "$TEST_TMP/noavail.json"

# Bad trees: clear errors, no crash.
mkdir -p "$TEST_TMP/bad/proc/77"
printf 'garbage\n' >"$TEST_TMP/bad/proc/meminfo"
"$VMHOST" --proc-root "$TEST_TMP/bad/proc" mem --json >"$TEST_TMP/bad.json" 2>"$TEST_TMP/bad.err"
rc=$?
check "garbage meminfo: exit 1" [ "$rc" = 1 ]
check "garbage meminfo: one-line error" grep -q '^vmhost: mem: reading host memory: ' "$TEST_TMP/bad.err"
check "garbage meminfo: JSON error document" jq -e '.error | test("meminfo")' "$TEST_TMP/bad.json"
cp "$FX/proc/meminfo" "$TEST_TMP/bad/proc/meminfo"
printf 'qemu-system-x86_64\0-m\0' >"$TEST_TMP/bad/proc/77/cmdline"
printf 'Name:\tqemu\nVmRSS:\t 10' >"$TEST_TMP/bad/proc/77/status"   # truncated
printf '77 (qemu) S 1 2' >"$TEST_TMP/bad/proc/77/stat"                # truncated
"$VMHOST" --proc-root "$TEST_TMP/bad/proc" --sys-root "$TEST_TMP/noksm/sys" mem --json >"$TEST_TMP/trunc.json"
check "truncated status: rss is null, not a cut number" jq -e '.vms[0].rss_bytes == null and .vms[0].pss_bytes == null' "$TEST_TMP/trunc.json"
check "dangling -m: QEMU's default RAM" jq -e '.vms[0].guest_ram_bytes == 134217728' "$TEST_TMP/trunc.json"
finish
