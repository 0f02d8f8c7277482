#!/bin/bash
# Done-when of the report at scale: 100 VMs recorded every 10 s for 30 days, thinned as the
# recorder thins (tests/helpers/report_fixture.sh), give a page under 3 MB that headless Chromium
# opens without network and without a console message; its first screen shows the host's memory
# stacked by VM and the VMs that cost most, by name; the table sorts by a column on click; the
# sharing map of the 100 VMs keeps each kind's VMs together and shows a cell's figures. The
# page's size and generation time are printed; the screenshot is kept as
# $VMHOST_BUILD/report_scale.png for a human to look at.
. "$VMHOST_TESTS/lib.sh"
command -v chromium >/dev/null || die "chromium is not installed (scripts/deps/test/store.txt)"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed (scripts/deps/test/store.txt)"
DB=$TEST_TMP/100.db
H=$TEST_TMP/report.html

"$VMHOST_TESTS/helpers/report_fixture.sh" "$VMHOST_BUILD/growth_fixture" "$DB" 100 30
check "fixture: 100 VMs" [ "$(sqlite3 "$DB" 'SELECT count(*) FROM vms')" = 100 ]
check "fixture: 30 days, raw samples for the last 2" \
	[ "$(sqlite3 "$DB" 'SELECT count(*) FROM samples WHERE resolution = 0')" = 17280 ]
t0=$(date +%s%N)
"$VMHOST" report --db "$DB" --out "$H" --title "100 VMs, 30 days" >/dev/null
check "report exits 0" [ $? -eq 0 ]
ms=$((($(date +%s%N) - t0) / 1000000))
size=$(stat -c %s "$H")
say "100 VMs x 30 days: $(stat -c %s "$DB") byte database, $size byte page in $ms ms"
check "the page is under 3 MB ($size bytes)" [ "$size" -lt 3145728 ]
check "links stay in the page" bash -c "! grep -Eo '(src|href)=\"[^\"#][^\"]*' '$H' | grep -q ."
check "nothing loaded from elsewhere" bash -c "! grep -Eqi 'url\\(|@import|<link|<iframe|<img' '$H'"
check "one inline script" [ "$(grep -c '<script>' "$H")" = 1 ]
check "five flagged VMs' sections open" [ "$(grep -c '<details class="vm flagged" id="vm-[0-9]*" open>' "$H")" = 5 ]
check "a section per VM" [ "$(grep -c '<details ' "$H")" = 100 ]

# The VMs table from a dumped DOM: "name<TAB>value of column COL" per row shown, in the page's order.
column() {
	python3 - "$1" "$2" <<'PY'
import html.parser, sys
class T(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.on = s.body = False; s.rows = []; s.cell = None
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "table" and a.get("id") == "vms": s.on = True
        elif s.on and tag == "tbody": s.body = True
        elif s.body and tag == "tr": s.rows.append(("hidden" in a, []))
        elif s.body and tag == "td": s.cell = [a.get("data-v", ""), ""]; s.rows[-1][1].append(s.cell)
    def handle_endtag(s, tag):
        if tag == "table": s.on = s.body = False
    def handle_data(s, d):
        if s.cell is not None: s.cell[1] += d
t = T(); t.feed(open(sys.argv[1]).read())
col = int(sys.argv[2])
for hidden, r in t.rows:
    if not hidden:
        print(r[0][1].split()[0] + "\t" + (r[col][0] if col else r[0][1].split()[0]))
PY
}
chrome --screenshot="$TEST_TMP/first.png" "file://$H" >"$TEST_TMP/shot.log" 2>&1
check "chromium takes the screenshot" [ $? -eq 0 ]
check "a real picture" ge "$(stat -c %s "$TEST_TMP/first.png" 2>/dev/null || echo 0)" 60000
cp "$TEST_TMP/first.png" "$VMHOST_BUILD/report_scale.png" 2>/dev/null

chrome --dump-dom "file://$H#first-screen" >"$TEST_TMP/first.dom" 2>"$TEST_TMP/first.log"
first=$(grep -o 'data-first-screen="[^"]*"' "$TEST_TMP/first.dom")
check "the stacked host chart on the first screen" grep -q "Where the host's memory goes" <<<"$first"
# The costliest VMs at the last sample, asked of the database itself.
top=$(sqlite3 "$DB" "SELECT v.name FROM vm_samples s JOIN vms v ON v.id = s.vm_id
	WHERE s.t_ms = (SELECT max(t_ms) FROM vm_samples) ORDER BY s.memory_cost DESC LIMIT 5")
for name in $top; do
	check "top consumer $name named on the first screen" grep -q "|$name: [0-9.]* GiB|" <<<"$first"
done
check "a VM that costs little is not" bash -c '! grep -q "|web-100: " <<<"$1"' - "$first"

# Column 6 is CPU, 0 the name. The page lists flagged VMs, then the costliest: not by CPU or name.
chrome --dump-dom "file://$H" >"$TEST_TMP/plain.dom" 2>"$TEST_TMP/plain.log"
column "$TEST_TMP/plain.dom" 6 | cut -f2 >"$TEST_TMP/cpu0"
check "100 rows" [ "$(wc -l <"$TEST_TMP/cpu0")" = 100 ]
check "at first not sorted by CPU" bash -c "! sort -g -r -c '$TEST_TMP/cpu0' 2>/dev/null"
chrome --dump-dom "file://$H#sort=cpu" >"$TEST_TMP/cpu.dom" 2>"$TEST_TMP/cpu.log"
column "$TEST_TMP/cpu.dom" 6 | cut -f2 >"$TEST_TMP/cpu1"
check "a click on CPU sorts the rows by it, highest first" sort -g -r -c "$TEST_TMP/cpu1"
check "... all 100 rows" [ "$(wc -l <"$TEST_TMP/cpu1")" = 100 ]
check "... and marks the column" grep -q 'data-key="cpu" data-num="" aria-sort="descending"' "$TEST_TMP/cpu.dom"
chrome --dump-dom "file://$H#sort=name" >"$TEST_TMP/name.dom" 2>"$TEST_TMP/name.log"
column "$TEST_TMP/name.dom" 0 | cut -f1 >"$TEST_TMP/names"
check "a click on VM sorts the rows by name" bash -c "LC_ALL=C sort -c '$TEST_TMP/names' && [ \$(wc -l <'$TEST_TMP/names') = 100 ]"
chrome --dump-dom "file://$H#filter=web-08" >"$TEST_TMP/filter.dom" 2>"$TEST_TMP/filter.log"
check "typing web-08 in the filter shows web-080 and web-085 only" \
	[ "$(column "$TEST_TMP/filter.dom" 0 | cut -f1 | sort | tr '\n' ' ')" = "web-080 web-085 " ]
# The sharing map of 100 VMs: every VM on its axes, one path per colour, the five kinds of VM
# (30% shared within a kind, 2% across) in five runs of rows, and a cell's figures on hover.
check "the sharing map names 100 VMs" [ "$(grep -o '<text class="r"' "$H" | wc -l)" = 100 ]
check "... each linked to its section" [ "$(grep -o '<a href="#vm-[0-9]*"><text class="r"' "$H" | wc -l)" = 100 ]
check "... in at most 8 paths" [ "$(grep -Eo '<path class="h[1-8]"' "$H" | wc -l)" -le 8 ]
check "... VMs of one kind side by side" [ "$(grep -o '<text class="r"[^>]*>[a-z]*' "$H" | sed 's/.*>//' | uniq | wc -l)" = 5 ]
chrome --dump-dom "file://$H#cell=0,1" >"$TEST_TMP/cell.dom" 2>"$TEST_TMP/cell.log"
check "a cell's figures on hover" grep -Eq 'id="sharetip">[a-z]+-[0-9]+ → [a-z]+-[0-9]+: [0-9.]+ MiB of ' "$TEST_TMP/cell.dom"
check "no console message" bash -c "! grep -h ':CONSOLE' '$TEST_TMP'/*.log"
finish
