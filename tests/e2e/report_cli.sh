#!/bin/bash
# record / growth / report from the command line: short real recordings, bad input, and what
# the HTML must (not) contain. Quick; runs under the sanitizers too.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/v.db

# A guest for the recording to see (32 MiB, not offered to KSM: other tests may be tuning it), and
# a busy one, whose vCPU thread spins, for the first screen to name (stopped once recorded).
fake_guest cli-guest -m 32M -fake-nomerge
GUEST=$SPAWNED
fake_guest cli-busy -m 4M -fake-nomerge -fake-vcpus 1 -smp 1 -fake-busy-vcpus
BUSY=$SPAWNED

# Three samples at least, however long each takes on this host: the recorder is stopped (TERM,
# which ends it as --duration does) once they are in, not given 0.5 s and hoped to fill them.
# --kvm-interval 0: no KVM read of the host's other VMs (libvirt's: up to 0.75 s)
"$VMHOST" record --db "$DB" --interval 0.1 --kvm-interval 0 >"$TEST_TMP/rec.out" &
REC=$!
adopt "$REC"
wait_for 60 eval '[ "$(sqlite3 "$DB" "SELECT count(*) FROM samples" 2>/dev/null)" -ge 3 ] 2>/dev/null' ||
	fail "no 3 samples in 60 s"
kill -TERM "$REC"
wait "$REC"
check "record exits 0" [ $? -eq 0 ]
# That recording as it stands, its last samples with the busy guest running (3 or more, so rates).
sqlite3 "$DB" ".backup '$TEST_TMP/busy.db'"
stop_pid "$BUSY"
check "samples in the database" ge "$(sqlite3 "$DB" 'SELECT count(*) FROM samples')" 3
check "schema version 7" [ "$(sqlite3 "$DB" 'PRAGMA user_version')" = 7 ]
check "WAL mode" [ "$(sqlite3 "$DB" 'PRAGMA journal_mode')" = wal ]
"$VMHOST" --json record --db "$DB" --interval 0.1 --duration 0.2 >"$TEST_TMP/rec.json"
check "record --json summary" jq -e '.samples >= 1 and .dropped_samples == 0' "$TEST_TMP/rec.json"

# What a user looks for: the guest that was running is listed, by its name and pid, and so is
# every VM series the recording wrote.
lists_guest() { jq -e --argjson pid "$2" 'any(.vms[]; .name == "cli-guest" and .pid == $pid)' "$1" >/dev/null; }
"$VMHOST" growth --db "$DB" --json >"$TEST_TMP/g.json"
check "growth --json lists the running guest by name and pid" lists_guest "$TEST_TMP/g.json" "$GUEST"
check "growth --json lists every recorded VM series" \
	[ "$(jq '.vms | length' "$TEST_TMP/g.json")" = "$(sqlite3 "$DB" 'SELECT count(*) FROM vms')" ]
"$VMHOST" growth --db "$DB" >"$TEST_TMP/g.txt"
check "growth human exits 0" [ $? -eq 0 ]
check "growth human names the guest" grep -Eq "^ *$GUEST +cli-guest " "$TEST_TMP/g.txt"
# ... and on a recording without VMs the same check fails (so it cannot pass on an empty list).
mkdir -p "$TEST_TMP/novm/proc"
cp "$VMHOST_FIXTURES/host-mixed/proc/meminfo" "$TEST_TMP/novm/proc/"
"$VMHOST" --proc-root "$TEST_TMP/novm/proc" --sys-root "$VMHOST_FIXTURES/host-mixed/sys" record \
	--db "$TEST_TMP/novm.db" --interval 0.1 --duration 0.3 --quiet
"$VMHOST" growth --db "$TEST_TMP/novm.db" --json >"$TEST_TMP/novm.json"
check "no VMs recorded: growth --json has none" jq -e '.vms == []' "$TEST_TMP/novm.json"
fails() { ! "$@"; }
check "no VMs recorded: the guest check fails" fails lists_guest "$TEST_TMP/novm.json" "$GUEST"
check "no VMs recorded: growth says so" sh -c "'$VMHOST' growth --db '$TEST_TMP/novm.db' | grep -q '^no VM samples in the last'"

"$VMHOST" report --db "$DB" --out "$TEST_TMP/r.html" >/dev/null
check "report exits 0" [ $? -eq 0 ]
check "report has inline SVG charts" ge "$(grep -o '<svg' "$TEST_TMP/r.html" | wc -l)" 3
check "report's one script is inline" [ "$(grep -io '<script[^>]*>' "$TEST_TMP/r.html")" = "<script>" ]
check "report loads nothing from the network" bash -c "! grep -Eo '(src|href)=\"[^\"#][^\"]*' '$TEST_TMP/r.html' | grep -q ."
check "no temporary file left" [ ! -e "$TEST_TMP/r.html.tmp" ]
check "report charts the guest" grep -q "<figcaption>cli-guest (pid $GUEST)" "$TEST_TMP/r.html"
# The first screen's capacity line (docs/capacity.md): from the last sample's MemAvailable and the
# running VMs' overhead; no reclaim (not recorded), and none at all without a VM to size a guest by.
check "the capacity line, at the last sample, without reclaim" grep -Eq \
	'<p class="sub capacity">At the last sample: room for [0-9]+ more [0-9.]+ [KMG]iB guests? now \(MemAvailable less 10% of MemTotal' \
	"$TEST_TMP/r.html"
check "... that does not claim what reclaim gives" bash -c "! grep -q 'after reclaim' '$TEST_TMP/r.html'"
# The first screen names the busiest VMs, linked to their sections: the spinning guest by its CPU
# (at the last sample of the recording it ran through; none in r.html, where it had stopped).
"$VMHOST" report --db "$TEST_TMP/busy.db" --out "$TEST_TMP/busy.html" >/dev/null
check "the first screen names the busy guest among the busiest by CPU" grep -Eq \
	"<b>Busiest at the last sample:</b> CPU (<a [^>]*>[^<]*</a> [0-9]+%, )*<a href=\"#vm-[0-9]+\">cli-busy</a> [0-9]+%" "$TEST_TMP/busy.html"
check "... and not the idle one" bash -c "! grep -q 'Busiest at the last sample:.*>cli-guest<' '$TEST_TMP/busy.html'"
check "... nor a guest gone by the last sample" bash -c "! grep -q 'Busiest at the last sample:.*>cli-busy<' '$TEST_TMP/r.html'"
"$VMHOST" report --db "$TEST_TMP/novm.db" --out "$TEST_TMP/novm.html" >/dev/null
check "no VM recorded: no capacity line" bash -c "! grep -q 'class=\"sub capacity\"' '$TEST_TMP/novm.html'"
check "without a sharing map, one line on how to make one" \
	grep -Fq "No sharing map in this database: <code>vmhost share --db $DB</code> makes one." "$TEST_TMP/r.html"
check "... and no map" bash -c "! grep -q 'id=\"sharemap\"' '$TEST_TMP/r.html'"
# A map as vmhost share keeps it (docs/record.md): three VMs, one read in part, one with a name to
# escape; a pair sharing nothing has no row. The map, its line and its escaping, also under ASan.
sqlite3 "$DB" "INSERT INTO share_runs VALUES (7, 1800000000000, 16, 4096, 3000, 90, 4096000, NULL, 3);
	INSERT INTO share_vms VALUES (7, 0, 11, 'web-a', 1000, 30, 100, 40, 512, NULL),
		(7, 1, 12, 'x<b>&\"''', 1000, 30, 100, 40, 512, 'vm-exited'), (7, 2, 13, 'web-b', 1000, 30, 100, 40, 512, NULL);
	INSERT INTO share_pairs VALUES (7, 0, 2, 800), (7, 2, 0, 790), (7, 1, 1, 64), (7, 0, 1, 16), (7, 1, 0, 16);"
"$VMHOST" report --db "$DB" --out "$TEST_TMP/m.html" >/dev/null
check "report with a sharing map exits 0" [ $? -eq 0 ]
check "the map of 3 VMs" grep -q '<svg id="sharemap" [^>]* data-n="3"' "$TEST_TMP/m.html"
check "... web-b, web-a, then x that shares a little with web-a" \
	[ "$(grep -o '<text class="r"[^>]*>[^<]*' "$TEST_TMP/m.html" | sed 's/.*>//' | tr '\n' ' ')" = "web-b web-a x&lt;b&gt;&amp;&quot;&apos; " ]
check "... the figures in MiB in that order, row by row" grep -q 'data-mib="0,3.09,0,3.12,0,0.06,0,0.06,0.25"' "$TEST_TMP/m.html"
check "... a name escaped" grep -Fq ">x&lt;b&gt;&amp;&quot;&apos;</text>" "$TEST_TMP/m.html"
check "... the one read in part said so" grep -Fq "Read in part: x&lt;b&gt;&amp;&quot;&apos; (vm-exited)." "$TEST_TMP/m.html"
check "... KSM's savings then unknown: n/a; now the recording's" \
	grep -Eq "could save <b>3.91 MiB</b>; <b>n/a</b> was saved then; KSM&apos;s counters show <b>[0-9.]+ [KMG]?i?B</b> saved now \(the last sample\)\." "$TEST_TMP/m.html"
check "... no line on how to make one" bash -c "! grep -q 'No sharing map' '$TEST_TMP/m.html'"
# A database with sharing maps and no samples yet (vmhost share before any record): the page with
# the map, its charts empty; without a map such a database is still an error.
sqlite3 "$DB" ".backup '$TEST_TMP/maponly.db'"
sqlite3 "$TEST_TMP/maponly.db" "DELETE FROM kvm_samples; DELETE FROM vm_samples; DELETE FROM vms; DELETE FROM samples;"
"$VMHOST" report --db "$TEST_TMP/maponly.db" --out "$TEST_TMP/maponly.html" >/dev/null
check "only a sharing map, no samples: the report, exit 0" [ $? -eq 0 ]
check "... with the map" grep -q '<svg id="sharemap" [^>]* data-n="3"' "$TEST_TMP/maponly.html"
sqlite3 "$TEST_TMP/maponly.db" "DELETE FROM share_pairs; DELETE FROM share_vms; DELETE FROM share_runs;"
"$VMHOST" report --db "$TEST_TMP/maponly.db" --out "$TEST_TMP/empty.html" 2>"$TEST_TMP/empty.err" >/dev/null
check "neither samples nor a map: exit 1" [ $? -eq 1 ]
check "... no samples recorded yet" grep -q "no samples recorded yet" "$TEST_TMP/empty.err"

# A frozen host tree (tests/fixtures/host-mixed): what is stored is exactly what 'mem' shows,
# and unknown stays NULL.
FX=$VMHOST_FIXTURES/host-mixed
FDB=$TEST_TMP/fixture.db
"$VMHOST" --proc-root "$FX/proc" --sys-root "$FX/sys" record --db "$FDB" --interval 0.1 --duration 0.3 --quiet
check "record on the fixture tree" [ $? -eq 0 ]
check "three samples" [ "$(sqlite3 "$FDB" 'SELECT count(*) FROM samples')" = 3 ]
check "one series per VM" [ "$(sqlite3 "$FDB" 'SELECT group_concat(name) FROM (SELECT name FROM vms ORDER BY name)')" = "db,old,web1" ]
q() { sqlite3 "$FDB" "SELECT $1 FROM vm_samples JOIN vms ON id = vm_id WHERE name = '$2' LIMIT 1"; }
check "overhead as mem shows it (web1)" [ "$(q overhead web1)" = 227328000 ]
check "rss with helpers (web1)" [ "$(q rss web1)" = 2370715648 ]
check "KSM saved (web1)" [ "$(q ksm_saved web1)" = 619514905 ]
check "uuid and guest RAM (db)" [ "$(sqlite3 "$FDB" "SELECT uuid || ' ' || guest_ram_bytes FROM vms WHERE name = 'db'")" = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 4294967296" ]
check "unknown stays NULL (old kernel, no ksm_stat)" [ "$(q 'quote(ksm_zero_pages)' old)" = NULL ]
check "host memory stored" [ "$(sqlite3 "$FDB" 'SELECT count(*) FROM samples WHERE mem_total > 0 AND vm_count = 3')" = 3 ]
"$VMHOST" growth --db "$FDB" --json --warmup 0 >"$TEST_TMP/fg.json"
check "growth: three VMs, too few samples, none flagged" \
	jq -e '(.vms | length) == 3 and all(.vms[]; .flagged == false and .overhead_growth_bytes_per_hour == null)' "$TEST_TMP/fg.json"
"$VMHOST" report --db "$FDB" --out "$TEST_TMP/f.html" >/dev/null
check "fixture report names every VM" bash -c "grep -q '>web1 (pid 1001)' '$TEST_TMP/f.html' && grep -q '>db (pid 1003)' '$TEST_TMP/f.html'"
check "... each with its section (three VMs, within the default --charts)" [ "$(grep -c '<details class="vm' "$TEST_TMP/f.html")" = 3 ]
check "... and no line on charts left out" bash -c "! grep -q 'Charts of ' '$TEST_TMP/f.html'"
check "... nobody busy: the busiest line says none" grep -q '<b>Busiest at the last sample:</b> CPU none; vCPU delay none' "$TEST_TMP/f.html"
# --charts 1: the costliest VM's section only; the table still lists all three, linking that one.
"$VMHOST" report --db "$FDB" --out "$TEST_TMP/f1.html" --charts 1 >/dev/null
check "--charts 1: one section" [ "$(grep -c '<details class="vm' "$TEST_TMP/f1.html")" = 1 ]
check "... the line says which" grep -q 'Charts of 1 of the 3 VMs: the flagged, the busiest, then the costliest' "$TEST_TMP/f1.html"
check "... every VM in the table, one of them linked" \
	[ "$(grep -c '<tr[^>]*><td class="l">' "$TEST_TMP/f1.html") $(grep -c '<tr[^>]*><td class="l"><a href="#vm-' "$TEST_TMP/f1.html")" = "3 1" ]
"$VMHOST" report --db "$FDB" --out "$TEST_TMP/fall.html" --charts all >/dev/null
check "--charts all: every section" [ "$(grep -c '<details class="vm' "$TEST_TMP/fall.html")" = 3 ]
"$VMHOST" report --db "$FDB" --out "$TEST_TMP/fx.html" --charts 0 2>"$TEST_TMP/c0.err"
check "--charts 0: a usage error naming the choices" grep -q "charts takes a number of VMs or 'all', not '0'" "$TEST_TMP/c0.err"

# A recording of schema 5 (the vCPUs' delay as vcpu_wait_ms, no disks' table, no stalls), made from this one,
# its delay growing 0.5 s a second: report reads it as it is (no writer since the upgrade), and the
# next recorder renames the column in place keeping its figures.
F5=$TEST_TMP/fixture5.db
sqlite3 "$FDB" ".backup '$F5'"
drop7=$(for c in stall_wpcopy_us stall_swapin_us stall_reclaim_us stall_thrashing_us stall_compact_us stall_irq_us \
	wpcopy_count; do printf 'ALTER TABLE vm_samples DROP COLUMN %s; ' "$c"; done)
sqlite3 "$F5" "$drop7 ALTER TABLE vm_samples RENAME COLUMN vcpu_delay_ms TO vcpu_wait_ms; DROP TABLE vm_disk_samples;
	PRAGMA user_version = 5; UPDATE vm_samples SET vcpu_wait_ms = vcpu_wait_ms + (t_ms - (SELECT MIN(t_ms) FROM samples)) / 2"
delay_sum=$(sqlite3 "$F5" 'SELECT SUM(vcpu_wait_ms) FROM vm_samples')
last5=$(sqlite3 "$F5" 'SELECT MAX(t_ms) FROM vm_samples')
# delay_line FILE: web1's CPU chart draws its delay (a line in the delay's colour; none when unknown)
delay_line() { awk '/<figcaption>web1: CPU and delay/ {on = 1} on && /<polyline[^>]*stroke="#e45756"/ {found = 1} on && /<\/figure>/ {on = 0} END {exit !found}' "$1"; }
check "the fixture's recording draws web1's delay" delay_line "$TEST_TMP/f.html"
"$VMHOST" report --db "$F5" --out "$TEST_TMP/f5.html" >/dev/null 2>"$TEST_TMP/f5.err"
check "schema 5, not migrated: report exits 0" [ $? -eq 0 ]
check "... and draws web1's vCPU delay" delay_line "$TEST_TMP/f5.html"
check "... leaving the database as it is" [ "$(sqlite3 "$F5" 'PRAGMA user_version')" = 5 ]
"$VMHOST" --proc-root "$FX/proc" --sys-root "$FX/sys" record --db "$F5" --interval 0.1 --duration 0.2 --quiet
check "schema 5: a recorder migrates it to 7" [ "$(sqlite3 "$F5" 'PRAGMA user_version')" = 7 ]
check "... the delay's column renamed, its figures kept" \
	[ "$(sqlite3 "$F5" "SELECT SUM(vcpu_delay_ms) FROM vm_samples WHERE t_ms <= $last5")" = "$delay_sum" ]
"$VMHOST" report --db "$F5" --out "$TEST_TMP/f6.html" >/dev/null
check "... and the report still draws web1's vCPU delay" delay_line "$TEST_TMP/f6.html"

# KVM counters (debugfs fixture of two VMs, tests/fixtures/exits-amd, plus host memory and KSM
# from host-mixed): stored once, then only when they change; the report charts exits/s.
K=$TEST_TMP/kvmtree
mkdir -p "$K/sys/kernel/mm"
cp -r "$VMHOST_FIXTURES/exits-amd/proc" "$VMHOST_FIXTURES/exits-amd/sys" "$K/"
cp "$VMHOST_FIXTURES/host-mixed/proc/meminfo" "$K/proc/"
cp -r "$VMHOST_FIXTURES/host-mixed/sys/kernel/mm/ksm" "$K/sys/kernel/mm/"
KDB=$TEST_TMP/kvm.db
kq() { sqlite3 "$KDB" "$1"; }
"$VMHOST" --proc-root "$K/proc" --sys-root "$K/sys" record --db "$KDB" --interval 0.1 --kvm-interval 0.1 --duration 0.3 --quiet
check "record with KVM counters" [ $? -eq 0 ]
check "every counter named" ge "$(kq 'SELECT count(*) FROM kvm_counters')" 50
check "host-wide sums and both VMs" [ "$(kq 'SELECT count(DISTINCT vm_id) FROM kvm_samples')" = 3 ]
check "unchanged values are written once" [ "$(kq 'SELECT count(DISTINCT t_ms) FROM kvm_samples')" = 1 ]
exits() { kq "SELECT group_concat(value) FROM (SELECT value FROM kvm_samples k JOIN kvm_counters c ON c.id = counter_id JOIN vms v ON v.id = k.vm_id WHERE c.name = 'exits' AND v.name = '$1' ORDER BY t_ms)"; }
check "a VM's exits stored under its series" [ "$(exits mail)" = 38061725 ]
echo 38062725 >"$K/sys/kernel/debug/kvm/3101-14/exits"
echo 83136795 >"$K/sys/kernel/debug/kvm/exits"
"$VMHOST" --proc-root "$K/proc" --sys-root "$K/sys" record --db "$KDB" --interval 0.1 --kvm-interval 0.1 --duration 0.3 --quiet
check "a changed counter gets a new row" [ "$(exits mail)" = "38061725,38062725" ]
check "a new recorder writes its first sample whole, then changes only" [ "$(kq 'SELECT count(DISTINCT t_ms) FROM kvm_samples')" = 2 ]
"$VMHOST" report --db "$KDB" --out "$TEST_TMP/k.html" >/dev/null
check "report charts KVM exits" grep -q "<figcaption>KVM exits, all VMs" "$TEST_TMP/k.html"

# A VM exits while another runs on: the kernel's global file drops by the gone VM's count, the
# host row does not (it adds each VM's change: core/kvm_delta), so the chart has no false gap.
host_exits() { kq "SELECT value FROM kvm_samples k JOIN kvm_counters c ON c.id = counter_id WHERE c.name = 'exits' AND vm_id = 0 ORDER BY t_ms DESC LIMIT 1"; }
before=$(host_exits)
KK=$K/sys/kernel/debug/kvm
# The VM goes once the recorder's first sample is in (not 0.6 s after it started, which a slow
# start could leave before that sample); the recorder stops once the change is stored.
sampled() { ge "$(kq 'SELECT count(*) FROM samples' 2>/dev/null || echo 0)" "$1"; }
gone() { [ "$(exits ci-runner 2>/dev/null | tr , '\n' | tail -1)" = 45075070 ]; }
n=$(kq 'SELECT count(*) FROM samples')
spawn "$VMHOST" --proc-root "$K/proc" --sys-root "$K/sys" record --db "$KDB" --interval 0.1 --kvm-interval 0.1 --quiet
wait_for 60 sampled $((n + 1)) || fail "the recorder wrote no sample"
rm -rf "$KK/3101-14"
echo 45075070 >"$KK/3202-14/exits"
echo 45075070 >"$KK/exits"
wait_for 60 gone
stop_pid "$SPAWNED"
check "the other VM's change was recorded" [ "$(exits ci-runner | tr , '\n' | tail -1)" = 45075070 ]
check "a VM exiting does not lower the host row" [ "$(host_exits)" = $((before + 1000)) ]

# Bad input: one clear line, the right exit code, never a crash.
"$VMHOST" growth --db "$TEST_TMP/missing.db" 2>"$TEST_TMP/e1"
check "missing database: exit 1" [ $? -eq 1 ]
check "missing database: says so" grep -q "^vmhost: growth: opening the database: .*missing.db: No such file or directory (record one with 'vmhost record')" "$TEST_TMP/e1"
echo "just some text, not a database at all, long enough for a header" >"$TEST_TMP/text.db"
"$VMHOST" --json report --db "$TEST_TMP/text.db" --out "$TEST_TMP/x.html" >"$TEST_TMP/e2.json" 2>/dev/null
check "foreign file: exit 1" [ $? -eq 1 ]
check "foreign file: JSON error" jq -e '.error | test("not a vmhost database")' "$TEST_TMP/e2.json"
"$VMHOST" record --db "$TEST_TMP/text.db" --duration 0.1 2>/dev/null
check "record refuses a foreign file" [ $? -eq 1 ]
check "foreign file untouched" grep -q "just some text" "$TEST_TMP/text.db"
"$VMHOST" report --db "$DB" 2>/dev/null
check "report without --out: usage error" [ $? -eq 2 ]
"$VMHOST" record --interval abc 2>/dev/null
check "record --interval abc: usage error" [ $? -eq 2 ]
"$VMHOST" growth --threshold lots 2>/dev/null
check "growth --threshold lots: usage error" [ $? -eq 2 ]
"$VMHOST" growth --db "$DB" --consistency 2 2>/dev/null
check "growth --consistency 2: usage error" [ $? -eq 2 ]
"$VMHOST" report --db "$DB" --out "$TEST_TMP/no/such/dir/r.html" 2>"$TEST_TMP/e3"
check "report into a missing directory: exit 1" [ $? -eq 1 ]
check "... with the path" grep -q "no/such/dir/r.html: No such file" "$TEST_TMP/e3"
# The page is written beside OUT under a fresh name (O_EXCL|O_NOFOLLOW), never through a link
# planted at a name known in advance (the old fixed OUT.tmp): the link's target stays as it was,
# and OUT is a whole page.
echo "not yours" >"$TEST_TMP/victim"
ln -s "$TEST_TMP/victim" "$TEST_TMP/p.html.tmp"
"$VMHOST" report --db "$DB" --out "$TEST_TMP/p.html" >/dev/null 2>"$TEST_TMP/e4"
check "report beside a planted link: exit 0" [ $? -eq 0 ]
check "... the link's target untouched" [ "$(cat "$TEST_TMP/victim")" = "not yours" ]
check "... the page whole" grep -q '</html>' "$TEST_TMP/p.html"
check "... no temporary file left" [ -z "$(find "$TEST_TMP" -maxdepth 1 -name '.p.html.*')" ]
for c in record growth report; do
	"$VMHOST" $c --help | grep -q "usage: vmhost $c"
	check "$c --help" [ $? -eq 0 ]
done
# SQLite is loaded by the commands that open a database (src/store/sqlite.h): without it, record
# and report fail in one line that names it and make no file; mem does not need it.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	without_library sqlite3 "$VMHOST" record --db "$TEST_TMP/nolib.db" --duration 0.2 >/dev/null 2>"$TEST_TMP/nolib.err"
	rc=$?
	check "without libsqlite3 record fails in one line that names it (rc=$rc: $(cat "$TEST_TMP/nolib.err"))" sh -c "
		[ $rc = 1 ] && [ \$(wc -l <'$TEST_TMP/nolib.err') = 1 ] && grep -q 'libsqlite3.so.*apt install libsqlite3-0' '$TEST_TMP/nolib.err'"
	check "... and makes no database file" [ ! -e "$TEST_TMP/nolib.db" ]
	without_library sqlite3 "$VMHOST" report --db "$DB" --out "$TEST_TMP/nolib.html" 2>"$TEST_TMP/nolib-report.err"
	rc=$?
	check "without libsqlite3 report fails and names it (rc=$rc: $(cat "$TEST_TMP/nolib-report.err"))" sh -c "
		[ $rc = 1 ] && grep -q 'libsqlite3.so' '$TEST_TMP/nolib-report.err' && [ ! -e '$TEST_TMP/nolib.html' ]"
	without_library sqlite3 "$VMHOST" mem --json >"$TEST_TMP/nolib.json"
	check "without libsqlite3 mem works (the guest is in it)" \
		jq -e --argjson pid "$GUEST" '[.vms[] | select(.name == "cli-guest" and .pid == $pid)] | length == 1' "$TEST_TMP/nolib.json"
else
	skip_part "not root, or no unshare: record and report without libsqlite3 are not checked"
fi
finish
