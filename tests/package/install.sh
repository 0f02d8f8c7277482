#!/bin/bash
# `make install` into a DESTDIR (the build's own PREFIX): every file in place, man pages that
# `man --warnings` renders clean and that carry every option of the help, units that
# `systemd-analyze verify` accepts (offline, --root on a copy of the tree), their sandboxing
# scores, the example ksm-tune.ini accepted by `ksm tune`, and `make uninstall` removing it all.
. "$VMHOST_TESTS/lib.sh"
SRC=$VMHOST_TESTS/..
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$VMHOST_BUILD/CMakeCache.txt")
[ -n "$prefix" ] || die "no CMAKE_INSTALL_PREFIX in $VMHOST_BUILD/CMakeCache.txt"
etc=$prefix/etc
[ "$prefix" = /usr ] && etc=/etc
ROOT=$TEST_TMP/root
DESTDIR=$ROOT cmake --install "$VMHOST_BUILD" >"$TEST_TMP/install.log" 2>&1 || { cat "$TEST_TMP/install.log"; die "cmake --install failed"; }
P=$ROOT$prefix
quiet() { "$@" >/dev/null 2>&1; }
say "installed into $ROOT with prefix $prefix"

check "the binary runs and is this build's" [ "$("$P/bin/vmhost" --version)" = "$("$VMHOST" --version)" ]
check "bash completion, as in contrib/" cmp -s "$P/share/bash-completion/completions/vmhost" "$SRC/contrib/bash-completion/vmhost"
check "example ksm-tune.ini in $etc/vmhost" cmp -s "$ROOT$etc/vmhost/ksm-tune.ini" "$SRC/contrib/ksm-tune.ini"
check "docs" test -s "$P/share/doc/vmhost/README.md" -a -s "$P/share/doc/vmhost/ksm.md" -a -s "$P/share/doc/vmhost/serve.md"
check "example web config" cmp -s "$P/share/doc/vmhost/examples/web-config.yml" "$SRC/contrib/web-config.yml"
check "Prometheus rules and scrape config" test -s "$P/share/vmhost/prometheus/alerts.yml" -a -s "$P/share/vmhost/prometheus/prometheus.yml"
check "Grafana dashboard" quiet jq -e '.panels | length > 0' "$P/share/vmhost/grafana/vmhost.json"
units=$(find "$ROOT" -path '*/systemd/system/*' -type f | sort)
check "three systemd units" [ "$(echo "$units" | wc -l)" = 3 ]

# Man pages: vmhost(8), one per command that `vmhost help` lists, a .so page per subcommand.
MAN=$P/share/man
commands=$("$VMHOST" help | awk '/^commands:$/ {on=1; next} on && /^$/ {on=0} on && $1 != "help" {print $1}')
check "vmhost(8)" test -s "$MAN/man8/vmhost.8"
for c in $commands; do
	check "vmhost-$c(8) exists" test -s "$MAN/man8/vmhost-$c.8"
	subs=$("$VMHOST" help "$c" | awk '/^commands:$/ {on=1; next} on && /^$/ {on=0} on {print $1}')
	for s in $subs; do
		check "vmhost-$c-$s(8) opens vmhost-$c(8)" grep -qx ".so man8/vmhost-$c.8" "$MAN/man8/vmhost-$c-$s.8"
	done
	# Every option the help lists is in the page (the page is generated from it: no drift).
	(cd "$MAN" && MANWIDTH=200 man -l "man8/vmhost-$c.8" 2>/dev/null | col -b) >"$TEST_TMP/page.txt"
	want=$( { "$VMHOST" help "$c"; for s in $subs; do "$VMHOST" help "$c" "$s"; done; } |
		grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	missing=$(for o in $want; do grep -qF -- "$o" "$TEST_TMP/page.txt" || echo "$o"; done)
	check "vmhost-$c(8) carries every option of its help${missing:+ (missing: $missing)}" [ -z "$missing" ]
done
for page in "$MAN"/man8/*.8; do
	name=$(basename "$page")
	warn=$(cd "$MAN" && LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "man8/$name" 2>&1 >/dev/null)
	check "man --warnings -l $name: clean${warn:+ ($warn)}" [ -z "$warn" ]
	warn=$(cd "$MAN" && groff -man -ww -z -Tutf8 "man8/$name" 2>&1; lexgrog "man8/$name" >/dev/null 2>&1 || echo "lexgrog cannot read NAME")
	check "groff -ww and lexgrog on $name: clean${warn:+ ($warn)}" [ -z "$warn" ]
done
check "man finds the pages by name (vmhost-ksm-tune)" sh -c "man -M '$MAN' -w vmhost-ksm-tune | grep -q man8/vmhost-ksm.8"

# Units: systemd-analyze verify, offline, on a copy of the tree with the host's own units
# (sysinit.target and friends) beside ours. Man pages: checked against the tree just above.
VROOT=$TEST_TMP/vroot
cp -a "$ROOT" "$VROOT" && mkdir -p "$VROOT/lib/systemd" && cp -r /lib/systemd/system "$VROOT/lib/systemd/" ||
	die "cannot make the verify root"
names=$(for u in $units; do basename "$u"; done)
# shellcheck disable=SC2086
out=$(systemd-analyze verify --man=no --root="$VROOT" $names 2>&1)
rc=$?
check "systemd-analyze verify: every unit clean${out:+ ($out)}" [ "$rc:$out" = "0:" ]
for u in $units; do
	for ref in $(sed -n 's/^Documentation=//p' "$u"); do
		case $ref in
		man:*) p=${ref#man:}; p=${p%(8)}; check "$(basename "$u"): $ref is installed" test -s "$MAN/man8/$p.8" ;;
		file://*) check "$(basename "$u"): $ref is installed" test -s "$ROOT${ref#file://}" ;;
		esac
	done
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
	[ -z "$exe" ] || check "$(basename "$u"): ExecStart is the installed binary ($exe)" [ "$exe" = "$prefix/bin/vmhost" ]
done
check "vmhost-serve.service keeps a state directory for --db" grep -qx 'StateDirectory=vmhost' "$ROOT$prefix/lib/systemd/system/vmhost-serve.service"
check "  ... under its dynamic user and strict read-only system" sh -c "grep -qx 'DynamicUser=yes' '$ROOT$prefix/lib/systemd/system/vmhost-serve.service' && grep -qx 'ProtectSystem=strict' '$ROOT$prefix/lib/systemd/system/vmhost-serve.service'"
# The verifier does catch a broken unit here (so a clean verdict above means something).
sed 's/^Restart=on-failure/Restart=sometimes/' "$VROOT$prefix/lib/systemd/system/vmhost-serve.service" >"$VROOT$prefix/lib/systemd/system/vmhost-broken.service"
check "systemd-analyze verify flags a bad value" sh -c "systemd-analyze verify --man=no --root='$VROOT' vmhost-broken.service 2>&1 | grep -q 'sometimes'"
rm -f "$VROOT$prefix/lib/systemd/system/vmhost-broken.service"
for unit in vmhost-serve.service vmhost-ksm-tune.service; do
	score=$(systemd-analyze security --offline=true --root="$VROOT" "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	say "systemd-analyze security $unit: exposure $score (0 best, 10 worst)"
	check "$unit: exposure at most 3.0 (its sandboxing holds)" le "${score:-10}" 3.0
done

# The example config: accepted as shipped (all defaults) and with every key uncommented.
if [ -r /sys/kernel/mm/ksm/run ]; then
	check "ksm tune --dry-run accepts the shipped ksm-tune.ini" \
		quiet "$P/bin/vmhost" ksm tune --dry-run --config "$ROOT$etc/vmhost/ksm-tune.ini" --interval 0.1 --duration 0.1
	sed 's/^#\([a-z]\)/\1/' "$ROOT$etc/vmhost/ksm-tune.ini" >"$TEST_TMP/all-keys.ini"
	check "  ... and every key it shows (a key the parser dropped would be an error)" \
		quiet "$P/bin/vmhost" ksm tune --dry-run --config "$TEST_TMP/all-keys.ini" --interval 0.1 --duration 0.1
else
	fail "no /sys/kernel/mm/ksm: cannot check the example ksm-tune.ini"
fi

# make uninstall: every file gone; a config file the operator changed is kept.
echo "cpu_budget = 10" >>"$ROOT$etc/vmhost/ksm-tune.ini"
"$SRC/packaging/uninstall.sh" "$VMHOST_BUILD" "$ROOT" >"$TEST_TMP/uninstall.log" 2>&1 || fail "uninstall.sh failed: $(cat "$TEST_TMP/uninstall.log")"
left=$(find "$ROOT" ! -type d | sed "s|^$ROOT||")
check "uninstall removes every file but the changed config${left:+ (left: $(echo $left))}" [ "$left" = "$etc/vmhost/ksm-tune.ini" ]
check "  ... and says it kept it" grep -q "kept .*ksm-tune.ini" "$TEST_TMP/uninstall.log"
check "  ... and removes vmhost's own empty directories" test ! -e "$P/share/vmhost" -a ! -e "$P/share/doc/vmhost"
finish
