# vmhost ksm --json on frozen sysfs/procfs trees: a current kernel (advisor, smart_scan,
# ksm_zero_pages, general_profit), an older one without those files, KSM absent, and garbage.
# Also: tune's config validation, --dry-run on a fixture, and exit 77 without privilege.
. "$VMHOST_TESTS/lib.sh"
FX=$VMHOST_FIXTURES

ksm_json() { "$VMHOST" --proc-root "$FX/$1/proc" --sys-root "$FX/$1/sys" ksm --json --interval 0.1; }
field() { jq -r "$2" <<<"$1"; }

out=$(ksm_json ksm-new) || fail "ksm-new exits 0"
check "new: every file under its own name" test "$(field "$out" '[.run,.pages_to_scan,.sleep_millisecs,.pages_shared,.pages_sharing,.pages_unshared,.pages_volatile,.full_scans,.pages_scanned,.pages_skipped,.ksm_zero_pages,.general_profit,.smart_scan,.advisor_target_scan_time] | map(tostring) | join(" ")')" = "1 100 20 25000 100000 50000 12000 42 9876543 1200 3000 410000000 1 200"
check "new: advisor_mode is the selected word" test "$(field "$out" .advisor_mode)" = scan-time
check "new: saved_bytes = (sharing + zero) x page" test "$(field "$out" .saved_bytes)" = $(((100000 + 3000) * 4096))
check "new: sharing_ratio = sharing / shared" test "$(field "$out" .sharing_ratio)" = 4
check "new: ksmd CPU is measured (0 on a frozen tree)" test "$(field "$out" .ksmd_cpu_percent)" = 0
check "new: full scan estimated while running" test "$(field "$out" .full_scan_method)" = estimated
check "new: full_scan_seconds is a number" test "$(field "$out" '.full_scan_seconds | type')" = number
check "new: interval_seconds" ge "$(field "$out" .interval_seconds)" 0.1
check "new: profit is the kernel's file" test "$(field "$out" .general_profit_bytes)" = 410000000

out=$(ksm_json ksm-old) || fail "ksm-old exits 0"
check "old: no advisor_mode, smart_scan, ksm_zero_pages, general_profit keys" \
	test "$(field "$out" '[has("advisor_mode"),has("smart_scan"),has("ksm_zero_pages"),has("general_profit")] | map(tostring) | join(" ")')" = "false false false false"
check "old: saved_bytes from pages_sharing alone" test "$(field "$out" .saved_bytes)" = $((100000 * 4096))
check "old: profit computed by the kernel's formula" test "$(field "$out" .general_profit_bytes)" = $((100000 * 4096 - (25000 + 100000 + 50000 + 12000) * 64))

out=$(ksm_json ksm-absent) || fail "ksm-absent exits 0"
check "absent: present false, derived figures null" test "$(field "$out" '[.present,.saved_bytes,.full_scan_seconds] | map(tostring) | join(" ")')" = "false null null"
human=$("$VMHOST" --proc-root "$FX/ksm-absent/proc" --sys-root "$FX/ksm-absent/sys" ksm --interval 0.1)
check "absent: says so to humans" grep -q "not available" <<<"$human"

out=$(ksm_json ksm-bad) || fail "ksm-bad exits 0"
check "bad: unreadable numbers are left out, not made up" test "$(field "$out" '[has("pages_to_scan"),has("pages_sharing"),.saved_bytes,.ksmd_cpu_percent] | map(tostring) | join(" ")')" = "false false null null"
check "bad: an unbracketed advisor_mode is left out" test "$(field "$out" 'has("advisor_mode")')" = false

# The human form shows the same derived figures.
human=$("$VMHOST" --proc-root "$FX/ksm-new/proc" --sys-root "$FX/ksm-new/sys" ksm --interval 0.1)
check "human: saved and estimated scan" grep -q "full scan .*estimated" <<<"$human"

# Usage errors.
"$VMHOST" ksm --interval -1 >/dev/null 2>&1
check "bad --interval is a usage error" test $? -eq 2

# tune: config validation with line numbers.
printf '[tune]\n# comment\ncpu_budget = 15\ninterval = zero\n' >"$TEST_TMP/bad.ini"
err=$("$VMHOST" ksm tune --dry-run --config "$TEST_TMP/bad.ini" 2>&1 >/dev/null)
rc=$?
check "tune: bad config exits 2" test $rc -eq 2
check "tune: bad config names file and line" grep -q "bad.ini:4: interval must be a number" <<<"$err"
printf '[tune]\nfast_pages_to_scan = 50\n' >"$TEST_TMP/range.ini"
err=$("$VMHOST" ksm tune --dry-run --config "$TEST_TMP/range.ini" 2>&1 >/dev/null)
check "tune: inconsistent config refused" grep -q "fast_pages_to_scan (50) is outside" <<<"$err"
printf '[daemon]\ncpu_budget = 15\n' >"$TEST_TMP/section.ini"
err=$("$VMHOST" ksm tune --dry-run --config "$TEST_TMP/section.ini" 2>&1 >/dev/null)
check "tune: unknown section refused with its line" grep -q "section.ini:2: unknown section \[daemon\]" <<<"$err"
"$VMHOST" ksm tune --dry-run --config "$TEST_TMP/missing.ini" >/dev/null 2>&1
check "tune: missing config is an error" test $? -eq 2

# tune --dry-run on a fixture: decisions with reasons, nothing written.
printf '[tune]\ncpu_budget = 12\ninterval = 0.2\nsmart_scan = no\n' >"$TEST_TMP/good.ini"
before=$(cat "$FX/ksm-new/sys/kernel/mm/ksm/pages_to_scan")
log=$("$VMHOST" --proc-root "$FX/ksm-new/proc" --sys-root "$FX/ksm-new/sys" ksm tune --dry-run --config "$TEST_TMP/good.ini" --duration 0.5)
check "dry run: logs the start decision with its reason" grep -q "(dry run) fast pages_to_scan=1000 sleep_millisecs=20 .*start:" <<<"$log"
check "dry run: several decisions" test "$(grep -c 'dry run' <<<"$log")" -ge 3
check "dry run: warns that ksmtuned runs (found by its cmdline)" grep -q "ksmtuned is running (pid 812)" <<<"$("$VMHOST" --proc-root "$FX/ksm-new/proc" --sys-root "$FX/ksm-new/sys" ksm tune --dry-run --duration 0.1 --interval 0.1 2>&1 >/dev/null)"
check "dry run: no ksmtuned warning without one" test -z "$("$VMHOST" --proc-root "$FX/ksm-old/proc" --sys-root "$FX/ksm-old/sys" ksm tune --dry-run --duration 0.1 --interval 0.1 2>&1 >/dev/null | grep ksmtuned)"
check "dry run: writes nothing" test "$(cat "$FX/ksm-new/sys/kernel/mm/ksm/pages_to_scan")" = "$before"
jlog=$("$VMHOST" --proc-root "$FX/ksm-new/proc" --sys-root "$FX/ksm-new/sys" --json ksm tune --dry-run --interval 0.2 --duration 0.3)
check "dry run --json: one object per decision with a reason" test "$(head -1 <<<"$jlog" | jq -r '.reason | startswith("start")')" = true

# Without privilege: exit 77 (tune, sweep, bench).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	np() { setpriv --reuid 65534 --regid 65534 --clear-groups "$VMHOST" "$@" >/dev/null 2>&1; }
	np ksm tune --interval 1
	check "tune without root exits 77" test $? -eq 77
	np ksm sweep --settings 100/20
	check "sweep without root exits 77" test $? -eq 77
	np bench ksm --quick
	check "bench ksm without root exits 77" test $? -eq 77
	np ksm tune --dry-run --duration 0.2 --interval 0.1
	check "tune --dry-run needs no root" test $? -eq 0
else
	skip_part "not root, or no setpriv: exit 77 without privilege is not checked"
fi
finish
