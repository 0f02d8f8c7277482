#!/bin/bash
# vmhost share keeps its map in the database record writes (here while record runs on it), and
# the report draws it: fake guests of known content (tests/helpers/fakeguest.c): img-1 and img-2
# hold 80% of one image, img-3 30% of it, other 80% of another image; the rest unique, 10% zero.
# Headless Chromium shows the heat map with img-1 and img-2 as its hottest cell off the diagonal,
# in the darkest colour, a cell's figures on hover, and no console message. A database that
# cannot take the map is a warning; the map is printed all the same.
. "$VMHOST_TESTS/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of other users' processes"
command -v chromium >/dev/null || die "chromium is not installed (scripts/deps/test/store.txt)"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed (scripts/deps/test/store.txt)"
cd "$TEST_TMP" || die "no $TEST_TMP"
DB=$TEST_TMP/vmhost.db
H=$TEST_TMP/report.html

pids=""
for g in img-1:0.8:7301 img-2:0.8:7301 img-3:0.3:7301 other:0.8:7302; do
	IFS=: read -r name frac seed <<<"$g"
	fake_guest "$name" -m 64 -fake-shared "$frac" -fake-zero 0.1 -fake-seed "$seed" -fake-guest "$RANDOM" -fake-nomerge
	pids="$pids --pid $SPAWNED"
done

# The recorder under way (two samples in) before share, and on after it (a sample more, five at
# least) before it is stopped: not a 6 s recording with share 1.5 s into it, which a slow share
# could outlast.
samples() { sqlite3 "$DB" 'SELECT count(*) FROM samples' 2>/dev/null || echo 0; }
recorded() { [ "$(samples)" -ge "$1" ] 2>/dev/null; }
"$VMHOST" record --db "$DB" --interval 0.5 --quiet 2>"$TEST_TMP/record.err" &
RECORD=$!
adopt "$RECORD"
wait_for 60 recorded 2 || fail "the recorder wrote no samples"
"$VMHOST" share $pids --sample 1/8 --cpu-budget 0 --db "$DB" >"$TEST_TMP/share.out" 2>"$TEST_TMP/share.err"
check "share exits 0 beside a running recorder" [ $? -eq 0 ]
check "... and says where the map is kept" grep -q "^kept in $DB: 'vmhost report --db $DB' draws it$" "$TEST_TMP/share.out"
check "... without a warning" [ ! -s "$TEST_TMP/share.err" ]
n=$(samples)
wait_for 60 recorded $((n + 1 > 5 ? n + 1 : 5))
kill -0 "$RECORD" && kill -TERM "$RECORD"
wait "$RECORD"
check "record is not disturbed (exit $?)" [ $? -eq 0 ]
check "the recorder's samples are there" ge "$(sqlite3 "$DB" 'SELECT count(*) FROM samples')" 5
check "one share run of 4 VMs at 1/8" [ "$(sqlite3 "$DB" 'SELECT count(*), vm_count, sample_n FROM share_runs')" = "1|4|8" ]
ab=$(sqlite3 "$DB" "SELECT p.pages FROM share_pairs p JOIN share_vms a ON a.run_id = p.run_id AND a.vm = p.a
	JOIN share_vms b ON b.run_id = p.run_id AND b.vm = p.b WHERE a.name = 'img-1' AND b.name = 'img-2'")
check "img-1 with img-2: $ab pages kept, 80% of its 16384 within 3% of them" \
	awk -v g="${ab:-0}" 'BEGIN { d = g - 13107; if (d < 0) d = -d; exit !(d <= 0.03 * 16384) }'
check "other shares nothing with img-1" [ -z "$(sqlite3 "$DB" "SELECT p.pages FROM share_pairs p
	JOIN share_vms a ON a.run_id = p.run_id AND a.vm = p.a JOIN share_vms b ON b.run_id = p.run_id AND b.vm = p.b
	WHERE a.name = 'other' AND b.name = 'img-1'")" ]

"$VMHOST" report --db "$DB" --out "$H" >/dev/null
check "report exits 0" [ $? -eq 0 ]
check "the section" grep -q '<h2 id="sharing">Who shares memory with whom</h2>' "$H"
check "when, the sample rate and the error bound" grep -Eq 'Taken [0-9-]+ [0-9:]+ [A-Z]+ over 4 VMs \([0-9.]+ MiB of guest RAM read\), sampling 1/8 of the page hashes: each figure within &plusmn;[0-9.]+ [KM]iB' "$H"
id=$(sqlite3 "$DB" "SELECT id FROM vms WHERE name = 'img-1'")
check "img-1's name on the map links to its section" grep -q "<a href=\"#vm-$id\"><text class=\"r\"[^>]*>img-1</text></a>" "$H"
check "what merging everything would save against what KSM saves" \
	grep -Eq 'KSM could save <b>[0-9.]+ [KMG]?i?B</b>; <b>[0-9.]+ [KMG]?i?B</b> was saved then( \([0-9]+% of it\))?; KSM&apos;s counters show <b>[0-9.]+ [KMG]?i?B</b> saved now \(the last sample\)' "$H"

# The map as Chromium laid it out: names on the rows, figures, the cells of the darkest colour.
chrome --dump-dom "file://$H#cell=0,1" >"$TEST_TMP/map.dom" 2>"$TEST_TMP/map.log"
check "chromium opens the page" [ $? -eq 0 ]
python3 - "$TEST_TMP/map.dom" >"$TEST_TMP/map.txt" <<'PY'
import html.parser, re, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.svg = None; s.names = []; s.text = None; s.dark = ""; s.tip = None; s.tipping = False
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "svg" and a.get("id") == "sharemap": s.svg = a
        elif tag == "text" and a.get("class") == "r": s.text = ""
        elif tag == "path" and a.get("class") == "h8": s.dark += a["d"]
        elif tag == "p" and a.get("id") == "sharetip": s.tipping = True; s.tip = ""
    def handle_endtag(s, tag):
        if tag == "text" and s.text is not None: s.names.append(s.text); s.text = None
        if tag == "p": s.tipping = False
    def handle_data(s, d):
        if s.text is not None: s.text += d
        if s.tipping: s.tip += d
p = P(); p.feed(open(sys.argv[1]).read())
if not p.svg: sys.exit("no map")
n = int(p.svg["data-n"]); v = [float(x) for x in p.svg["data-mib"].split(",")]
i, j = max(((i, j) for i in range(n) for j in range(n) if i != j), key=lambda c: v[c[0] * n + c[1]])
dark = set()
for x, y, w in re.findall(r"M(\d+) (\d+)h(\d+)", p.dark):
    dark |= {(int(y), int(x) + k) for k in range(int(w))}
print("vms", n)
print("hottest", " ".join(sorted([p.names[i], p.names[j]])), v[i * n + j])
print("dark", (i, j) in dark)
print("tip", p.tip)
PY
check "the heat map of 4 VMs" grep -qx "vms 4" "$TEST_TMP/map.txt"
check "img-1 and img-2 are its hottest cell off the diagonal ($(grep hottest "$TEST_TMP/map.txt"))" \
	grep -Eq "^hottest img-1 img-2 (4[0-9]|5[0-9])" "$TEST_TMP/map.txt"
check "... in the darkest colour" grep -qx "dark True" "$TEST_TMP/map.txt"
check "a cell's figures on hover" grep -Eq "^tip [a-z0-9-]+ → [a-z0-9-]+: [0-9.]+ MiB of .* \(±[0-9.]+ MiB\)$" "$TEST_TMP/map.txt"
check "no console message" bash -c "! grep -h ':CONSOLE' '$TEST_TMP/map.log'"

# A database that cannot take the map: a warning, the map printed all the same.
"$VMHOST" share $pids --sample 1/64 --cpu-budget 0 --db "$TEST_TMP/no/such/dir/v.db" >"$TEST_TMP/nodb.out" 2>"$TEST_TMP/nodb.err"
check "no database: exit 0" [ $? -eq 0 ]
check "... the map printed" grep -q "^shared between VMs" "$TEST_TMP/nodb.out"
check "... and a warning that says why" grep -q "the sharing map is not kept in $TEST_TMP/no/such/dir/v.db: " "$TEST_TMP/nodb.err"
"$VMHOST" share $pids --sample 1/64 --cpu-budget 0 --db "$DB" --json >"$TEST_TMP/s.json" 2>/dev/null
check "--json: one JSON document, the map kept" bash -c "jq -e '.vms | length == 4' '$TEST_TMP/s.json' >/dev/null &&
	[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM share_runs')\" = 2 ]"
finish
