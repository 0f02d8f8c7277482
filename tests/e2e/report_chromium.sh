#!/bin/bash
# Done-when: the report of a real recording (three fake guests, one growing) opens in headless
# Chromium; the screenshot is a real picture and the HTML holds the SVG charts. The PNG is kept
# as $VMHOST_BUILD/report_chromium.png for a human to look at.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/vmhost.db
command -v chromium >/dev/null || die "chromium is not installed (scripts/deps/test/store.txt)"

for g in "leaky -m 64M -fake-grow 3000000" "steady1 -m 64M" "steady2 -m 96M"; do
	set -- $g
	name=$1
	shift
	fake_guest_start "$name" "$@"
	[ "$name" = leaky ] && LEAKY=$SPAWNED
done
fake_guest_ready leaky steady1 steady2
"$VMHOST" record --db "$DB" --interval 0.5 --duration 15 --quiet
check "record exits 0" [ $? -eq 0 ]
# Judge with no time warm-up so the leaky guest is flagged in the report too.
"$VMHOST" report --db "$DB" --out "$TEST_TMP/report.html" --title "vmhost e2e report" --warmup 0 >/dev/null
check "report exits 0" [ $? -eq 0 ]
H=$TEST_TMP/report.html
check "host memory chart" grep -q "<figcaption>Where the host&apos;s memory goes" "$H"
check "... with the guests by name" grep -q "<span><i class=\"\" style=\"background:#[0-9a-f]*\"></i>leaky: " "$H"
check "KSM savings chart" grep -q "<figcaption>What KSM saves" "$H"
check "ksmd CPU chart" grep -q "<figcaption>What ksmd costs" "$H"
check "a chart for the leaky guest" grep -q "<figcaption>leaky (pid $LEAKY)" "$H"
check "the leaky guest is flagged, with its trend line" grep -q "overhead trend (Theil-Sen)" "$H"
check "charts are inline SVG with paths" ge "$(grep -o '<path class="area"' "$H" | wc -l)" 6
check "time axis has labelled ticks" ge "$(grep -o 'class="xlab"' "$H" | wc -l)" 8
check "no script from elsewhere, no network" bash -c "! grep -Eqi '<script [^>]*src|(src|href)=\"http' '$H'"
check "the leaky guest's section open, as flagged" grep -q "<details class=\"vm flagged\" id=\"vm-[0-9]*\" open><summary>leaky " "$H"

PROFILE=$(mktemp -d)
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$PROFILE" --screenshot="$TEST_TMP/report.png" --window-size=1280,2000 \
	"file://$H" >"$TEST_TMP/chromium.log" 2>&1
rc=$?
rm -rf "$PROFILE"
check "chromium exits 0" [ $rc -eq 0 ]
check "screenshot written" [ -s "$TEST_TMP/report.png" ]
size=$(stat -c %s "$TEST_TMP/report.png" 2>/dev/null || echo 0)
check "screenshot is a real picture ($size bytes)" ge "$size" 60000
check "screenshot is 1280x2000" [ "$(od -An -tx1 -j16 -N8 "$TEST_TMP/report.png" | tr -d ' \n')" = 00000500000007d0 ]
cp "$TEST_TMP/report.png" "$VMHOST_BUILD/report_chromium.png" 2>/dev/null
cp "$H" "$VMHOST_BUILD/report_chromium.html" 2>/dev/null
finish
