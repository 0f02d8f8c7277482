#!/bin/bash
# vmhost doctor --db names the writes behind a growing overhead: two fake guests grow 4 MB/s while
# `vmhost record` samples them for 15 s; one also writes a file at 12 MB/s (O_DIRECT, as
# cache=none would, so /proc/PID/io counts every byte). doctor --db gives both vm-overhead-growing,
# the writer's with "grew N MiB while it wrote N GiB", its written bytes (12 MB/s over the judged
# samples, within 30%) and the cache-mode advice; the guest that grows without writing keeps the
# plain wording, written_bytes 0 and no cache-mode advice.
. "$VMHOST_TESTS/lib.sh"
DB=$TEST_TMP/vmhost.db

fake_guest doctor-writer -m 64M -fake-grow 4000000 -fake-write 12000000 -fake-write-file "$TEST_TMP/disk.img"
WRITER=$SPAWNED
fake_guest doctor-leaker -m 64M -fake-grow 4000000
LEAKER=$SPAWNED
"$VMHOST" record --db "$DB" --interval 0.5 --duration 15 >/dev/null 2>"$TEST_TMP/record.err" || die "record failed: $(cat "$TEST_TMP/record.err")"

"$VMHOST" doctor --db "$DB" --warmup 0 --interval 0 --json >"$TEST_TMP/d.json"
check "doctor --db exits 0" [ $? -eq 0 ]
grow() { jq -c --argjson p "$1" '[.findings[] | select(.id == "vm-overhead-growing" and .pid == $p)]' "$TEST_TMP/d.json"; }
W=$(grow "$WRITER")
L=$(grow "$LEAKER")
say "writer: $W"
say "leaker: $L"
check "the writer is vm-overhead-growing" jq -e 'length == 1 and .[0].vm == "doctor-writer"' <<<"$W"
check "its summary names the growth and the writes" jq -e '.[0].summary | test("^memory beyond guest RAM grew [0-9]+ MiB while it wrote [0-9.]+ (MiB|GiB) ")' <<<"$W"
check "its advice is the disk's cache mode or size" jq -e '.[0].advice | contains("cache=none") and contains("write cache")' <<<"$W"
written=$(jq '.[0].evidence.written_bytes' <<<"$W")
growth=$(jq '.[0].evidence.growth_bytes' <<<"$W")
samples=$(jq '.[0].evidence.samples' <<<"$W")
span=$(awk -v n="${samples:-1}" 'BEGIN { print (n - 1) * 0.5 }')
check "it wrote at least what it grew ($written >= $growth)" awk -v w="${written:-0}" -v g="${growth:-1}" 'BEGIN { exit !(w >= g && g > 0) }'
check "written: 12 MB/s over the ~$span s judged ($written B)" near "${written:-0}" "$(awk -v s="$span" 'BEGIN { printf "%d", 12000000 * s }')" 30
check "the leaker is vm-overhead-growing too" jq -e 'length == 1 and .[0].vm == "doctor-leaker"' <<<"$L"
check "the leaker keeps the plain wording, without writes" jq -e '.[0].summary | test("^memory beyond guest RAM grows [0-9.]+ MiB per hour$")' <<<"$L"
check "the leaker wrote nothing (written_bytes 0, not null)" jq -e '.[0].evidence.written_bytes == 0' <<<"$L"
check "the leaker gets no write-cache advice" jq -e '.[0].advice | contains("write cache") | not' <<<"$L"
"$VMHOST" doctor --db "$DB" --warmup 0 --interval 0 >"$TEST_TMP/d.txt"
check "human: the writer's line with its writes" grep -Eq "^warning  vm-overhead-growing  doctor-writer \(pid $WRITER\): memory beyond guest RAM grew [0-9]+ MiB while it wrote" "$TEST_TMP/d.txt"
finish
