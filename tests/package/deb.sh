#!/bin/bash
# The Debian package as an operator meets it: `packaging/deb.sh` (what `make deb` runs) builds
# vmhost_VERSION_ARCH.deb with dpkg-buildpackage without touching the checkout, lintian finds
# no error, `dpkg -i` installs the binary, man pages, completion and units (not enabled) on
# this machine, systemd-analyze verifies the installed units, `dpkg -r` removes all but the
# conffile and `dpkg -P` that too. Serialized machine-wide (one vmhost package at a time).
. "$VMHOST_TESTS/lib.sh"
SRC=$(cd "$VMHOST_TESTS/.." && pwd)
[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i)"
for tool in dpkg-buildpackage dh lintian systemd-analyze man; do
	command -v $tool >/dev/null || die "$tool missing (scripts/deps/package/package.txt)"
done
exec 9>/run/lock/vmhost-package-test.lock
flock -w 900 9 || die "another package test holds /run/lock/vmhost-package-test.lock"
installed() { dpkg-query -W -f='${Status}' vmhost 2>/dev/null | grep -q 'ok installed'; }
known() { dpkg-query -W -f='${Status}' vmhost 2>/dev/null | grep -qv 'not-installed'; }
known && die "a vmhost package is already on this machine ($(dpkg-query -W -f='${Status}' vmhost)): not replacing it"

# Whatever happens, the package does not stay behind.
INSTALLED_BY_US=0
pkg_cleanup() {
	[ "$INSTALLED_BY_US" = 1 ] && known && dpkg -P vmhost >/dev/null 2>&1
}
on_cleanup pkg_cleanup

# dpkg_do ARGS...: dpkg, waiting while another dpkg or apt holds its lock (up to 2 min).
dpkg_do() {
	local i
	for i in $(seq 60); do
		dpkg "$@" >"$TEST_TMP/dpkg.log" 2>&1 && return 0
		grep -q 'lock' "$TEST_TMP/dpkg.log" || { cat "$TEST_TMP/dpkg.log"; return 1; }
		sleep 2
	done
	cat "$TEST_TMP/dpkg.log"
	return 1
}

version=$(sed -n 's/^project(vmhost VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
dirty_before=$(git -C "$SRC" status --porcelain 2>/dev/null)
start=$SECONDS
deb=$("$SRC/packaging/deb.sh" "$TEST_TMP/deb" | tail -n 1) || die "packaging/deb.sh failed"
say "built $deb in $((SECONDS - start)) s"
check "named vmhost_VERSION_ARCH.deb with CMakeLists.txt's version" [ "$deb" = "$TEST_TMP/deb/vmhost_${version}_$arch.deb" ]
check "the checkout is as it was (the build ran in a staging copy)" [ "$(git -C "$SRC" status --porcelain 2>/dev/null)" = "$dirty_before" ]
check "package version is the project's" [ "$(dpkg-deb -f "$deb" Version)" = "$version" ]
depends=$(dpkg-deb -f "$deb" Depends)
recommends=$(dpkg-deb -f "$deb" Recommends)
check "it recommends libbpf1, which exits --reasons loads to count in the kernel (Recommends: $recommends)" \
	sh -c "echo '$recommends' | grep -Eq '(^|, )libbpf1 \(>= [0-9.:]+\)'"
check "it depends on libmicrohttpd, which serve loads at run time (Depends: $depends)" \
	sh -c "echo '$depends' | grep -Eq '(^|, )libmicrohttpd[0-9a-z]* \(>= [0-9.]+\)'"
check "it depends on libsqlite3, which the commands that open a database load (Depends: $depends)" \
	sh -c "echo '$depends' | grep -Eq '(^|, )libsqlite3-0 \(>= [0-9.]+\)'"
check "it depends on libcrypt, which serve loads for basic auth (Depends: $depends)" \
	sh -c "echo '$depends' | grep -Eq '(^|, )libcrypt1 \(>= [0-9.:]+\)'"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$TEST_TMP/contents"
for f in /usr/bin/vmhost /usr/share/man/man8/vmhost.8.gz /usr/share/man/man8/vmhost-mem.8.gz \
	/usr/share/man/man8/vmhost-ksm-tune.8.gz /usr/share/bash-completion/completions/vmhost \
	/lib/systemd/system/vmhost-serve.service /lib/systemd/system/vmhost-serve.socket \
	/lib/systemd/system/vmhost-ksm-tune.service /etc/vmhost/ksm-tune.ini \
	/usr/share/vmhost/prometheus/alerts.yml /usr/share/vmhost/grafana/vmhost.json \
	/usr/share/doc/vmhost/ksm.md /usr/share/doc/vmhost/copyright /usr/share/doc/vmhost/examples/web-config.yml; do
	check "the package carries $f" grep -qxF "$f" "$TEST_TMP/contents"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles >"$TEST_TMP/conffiles" 2>/dev/null
check "/etc/vmhost/ksm-tune.ini is a conffile" grep -qx /etc/vmhost/ksm-tune.ini "$TEST_TMP/conffiles"

# lintian: no error. Its warnings and infos are printed for the record.
start=$SECONDS
lintian --fail-on error --display-info "$deb" >"$TEST_TMP/lintian.log" 2>&1
rc=$?
say "lintian ($((SECONDS - start)) s): $(grep -c '^E:' "$TEST_TMP/lintian.log") errors, $(grep -c '^W:' "$TEST_TMP/lintian.log") warnings, $(grep -c '^I:' "$TEST_TMP/lintian.log") infos"
grep '^[EWI]:' "$TEST_TMP/lintian.log" | sed "s/^/$TEST_NAME:   /"
check "lintian finds no error" [ "$rc" = 0 ]

# dpkg -i on this machine.
INSTALLED_BY_US=1
check "dpkg -i installs it" dpkg_do -i "$deb"
check "dpkg says it is installed" installed
check "/usr/bin/vmhost is this version" [ "$(/usr/bin/vmhost --version)" = "vmhost $version" ]
check "the installed vmhost records to a database (SQLite loaded by its soname)" \
	/usr/bin/vmhost record --db "$TEST_TMP/installed.db" --interval 0.2 --duration 0.5 --quiet
check "man finds vmhost-mem(8)" sh -c "man -w vmhost-mem | grep -qx /usr/share/man/man8/vmhost-mem.8.gz"
check "man finds vmhost-ksm-tune(8), the ksm page" sh -c "man -w vmhost-ksm-tune | grep -q /usr/share/man/man8/vmhost-ksm"
warn=$(for p in /usr/share/man/man8/vmhost*.8.gz; do LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null; done)
check "man --warnings on the installed pages: clean${warn:+ ($warn)}" [ -z "$warn" ]
check "bash completion installed where bash-completion loads it" \
	bash -c '. /usr/share/bash-completion/bash_completion; __load_completion vmhost && complete -p vmhost | grep -q _vmhost'
for u in vmhost-serve.socket vmhost-serve.service vmhost-ksm-tune.service; do
	state=$(systemctl --root=/ is-enabled "$u" 2>/dev/null)
	check "$u is installed but not enabled (is-enabled: $state)" [ "$state" = disabled ]
done
check "no unit linked into a .wants directory" sh -c "! ls /etc/systemd/system/*.wants/vmhost-* 2>/dev/null | grep -q ."
# Offline: no systemd as PID 1 here; verify reads the installed files (and `man` for
# Documentation=man:...) on this root.
out=$(systemd-analyze verify /lib/systemd/system/vmhost-serve.socket /lib/systemd/system/vmhost-serve.service \
	/lib/systemd/system/vmhost-ksm-tune.service 2>&1)
rc=$?
check "systemd-analyze verify on the installed units (with their man pages): clean${out:+ ($out)}" [ "$rc:$out" = "0:" ]
for u in vmhost-serve.service vmhost-ksm-tune.service; do
	say "systemd-analyze security --offline=true $u: $(systemd-analyze security --offline=true "$u" 2>/dev/null | tail -n 1 | sed 's/.*: //')"
done

# dpkg -r: everything gone but the conffile; dpkg -P: that too.
check "dpkg -r removes it" dpkg_do -r vmhost
check "  ... the binary, man pages, completion and units are gone" sh -c \
	"! ls /usr/bin/vmhost /usr/share/man/man8/vmhost* /usr/share/bash-completion/completions/vmhost /lib/systemd/system/vmhost-* 2>/dev/null | grep -q ."
check "  ... the conffile stays (dpkg -r keeps configuration)" test -f /etc/vmhost/ksm-tune.ini
check "dpkg -P purges it" dpkg_do -P vmhost
check "  ... /etc/vmhost is gone" test ! -e /etc/vmhost
check "  ... and dpkg no longer knows the package" sh -c "! dpkg-query -W -f='\${Status}' vmhost 2>/dev/null | grep -q installed"
INSTALLED_BY_US=0
finish
