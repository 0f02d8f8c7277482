# What each make target installs (scripts/deps/, scripts/install-deps.sh): make and make run only
# what building and running vmhost needs, never a service or a test tool, not even through a
# package's dependencies; every tool the tests and benchmarks run in make check's sets; no
# service started while apt runs; make run's build configures without cmocka.
. "$VMHOST_TESTS/lib.sh"
SRC=$(cd "$VMHOST_TESTS/.." && pwd)
DEPS=$SRC/scripts/install-deps.sh
set_of() { "$DEPS" --list "$@"; }
has() { grep -qx -- "$2" <<<"$1"; }
lacks() { ! has "$@"; }

BUILD_SET=$(set_of build)
CHECK_SET=$(set_of test package)
check "the build set is not empty" [ -n "$BUILD_SET" ]
check "every list is in a set (scripts/deps/build, test or package), none loose in scripts/deps" \
	[ -z "$(find "$SRC/scripts/deps" -maxdepth 1 -name '*.txt')" ]
SERVICES="ksmtuned libvirt-daemon-system libvirt-daemon prometheus chromium qemu-system-x86 libcmocka-dev"
for pkg in $SERVICES; do
	check "make run does not install $pkg" lacks "$BUILD_SET" "$pkg"
done

for pkg in $BUILD_SET; do
	check "README's table names $pkg, which make run installs" grep -qw -- "$pkg" "$SRC/README.md"
done

# The build set is what the Debian package needs to build (its Build-Depends), and the compiler.
build_depends=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$SRC/packaging/debian/control" | sed 's/^Build-Depends://; /^[A-Z]/d' |
	tr ',' '\n' | awk '{ print $1 }' | grep -v '^debhelper' | grep .)
for pkg in $build_depends build-essential; do
	check "the build set has $pkg (Build-Depends)" has "$BUILD_SET" "$pkg"
done

# Every tool a test or benchmark runs comes from make check's sets: COMMAND PACKAGE.
TOOLS="jq jq
bc bc
strace strace
sqlite3 sqlite3
chromium chromium
curl curl
openssl openssl
python3 python3
wrk wrk
prometheus prometheus
promtool prometheus
tmux tmux
virsh libvirt-clients
libvirtd libvirt-daemon-system
virtlogd libvirt-daemon-system
qemu-system-x86_64 qemu-system-x86
busybox busybox-static
pgrep procps
ksmtuned ksmtuned
clang clang
lintian lintian
dpkg-buildpackage dpkg-dev
systemd-analyze systemd
lexgrog man-db
groff groff-base
git git
hardening-check devscripts"
while read -r tool pkg; do
	grep -rqw -- "$tool" "$SRC/tests" "$SRC/bench" "$SRC/fuzz" --include='*.sh' ||
		{ fail "$tool is not run by any test: its row in this table is stale"; continue; }
	check "$tool (run by a test or benchmark) is installed by make check: $pkg" has "$CHECK_SET" "$pkg"
done <<<"$TOOLS"
check "the unit tests' cmocka is in make check's sets" has "$CHECK_SET" libcmocka-dev

# Through dependencies too: what apt would bring for the build set (no recommends, as installed).
if apt-cache show --no-all-versions build-essential >/dev/null 2>&1; then
	apt_knows() { apt-cache show --no-all-versions "$@" >/dev/null 2>&1; }
	check "apt knows every package of every set" apt_knows $BUILD_SET $CHECK_SET
	closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $BUILD_SET 2>/dev/null | grep -v '^ ' | sort -u)
	check "the build set's dependencies are many ($(wc -l <<<"$closure"))" [ "$(wc -l <<<"$closure")" -gt 20 ]
	for pkg in $SERVICES; do
		check "no dependency of the build set is $pkg" lacks "$closure" "$pkg"
	done
else
	skip_part "apt has no package lists here (apt-get update): every listed name known, the dependency closure"
fi

# make run's build: vmhost alone, configured without cmocka; with the tests it needs cmocka.
PC=$TEST_TMP/pkgconfig
mkdir -p "$PC"
for dir in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	for pc in "$dir"/*.pc; do
		[ -e "$pc" ] && [ "${pc##*/}" != cmocka.pc ] && ln -sf "$pc" "$PC/"
	done
done
configure() { PKG_CONFIG_LIBDIR=$PC cmake -S "$SRC" -B "$TEST_TMP/b" "$@" >"$TEST_TMP/configure.log" 2>&1; }
check "without cmocka, vmhost alone configures (-DVMHOST_TESTS=OFF)" configure -DVMHOST_TESTS=OFF
configure -DVMHOST_TESTS=ON
check "  ... and with the tests it does not: they need cmocka" sh -c "[ $? != 0 ] && grep -q cmocka '$TEST_TMP/configure.log'"
check "  ... and the same build directory goes back to vmhost alone" configure -DVMHOST_TESTS=OFF
make_n() { make -n -C "$SRC" BUILD="$TEST_TMP/b" "$1" 2>/dev/null; }
make_n run >"$TEST_TMP/run.n"
check "make run installs the build set only, and builds vmhost without its tests" sh -c "
	grep -qx 'scripts/install-deps.sh build' '$TEST_TMP/run.n' && [ \$(grep -c install-deps '$TEST_TMP/run.n') = 1 ] &&
	grep -q -- '-DVMHOST_TESTS=OFF' '$TEST_TMP/run.n' && ! grep -q -- '-DVMHOST_TESTS=ON' '$TEST_TMP/run.n'"
make_n check >"$TEST_TMP/check.n"
check "make check installs the build, test and package sets, and builds the tests" sh -c "
	grep -qx 'scripts/install-deps.sh build test package' '$TEST_TMP/check.n' && grep -q -- '-DVMHOST_TESTS=ON' '$TEST_TMP/check.n'"

# install-deps.sh with an apt-get that records what a service start would get from policy-rc.d.
FAKE=$TEST_TMP/fake
mkdir -p "$FAKE/bin"
cat >"$FAKE/bin/dpkg-query" <<'EOF2'
#!/bin/sh
exit 1
EOF2
cat >"$FAKE/bin/apt-get" <<'EOF2'
#!/bin/sh
[ "$1" = update ] && exit 0
"$VMHOST_POLICY_RC_D" ksmtuned start
echo "policy $?" >>"$FAKE_LOG"
[ -n "${FAKE_SIGNAL:-}" ] && kill -"$FAKE_SIGNAL" "$PPID"
exit "${FAKE_RC:-0}"
EOF2
chmod +x "$FAKE/bin/"*
# deps_with_fake_apt POLICY_PATH [VAR=VALUE...]: runs install-deps.sh build with the fake apt-get.
deps_with_fake_apt() {
	local policy=$1
	shift
	: >"$FAKE/log"
	env PATH="$FAKE/bin:$PATH" VMHOST_POLICY_RC_D="$policy" FAKE_LOG="$FAKE/log" "$@" "$DEPS" build >"$FAKE/out" 2>&1
}
if [ "$(id -u)" = 0 ]; then
	deps_with_fake_apt "$FAKE/policy-rc.d"
	check "while apt installs, policy-rc.d forbids starting a service (101)" [ "$(cat "$FAKE/log")" = "policy 101" ]
	check "  ... and is gone afterwards" [ ! -e "$FAKE/policy-rc.d" ]
	deps_with_fake_apt "$FAKE/policy-rc.d" FAKE_RC=100
	check "apt failing: install-deps fails, policy-rc.d removed" sh -c "[ $? != 0 ] && [ ! -e '$FAKE/policy-rc.d' ]"
	deps_with_fake_apt "$FAKE/policy-rc.d" FAKE_SIGNAL=TERM
	check "SIGTERM while apt runs: exit 143, policy-rc.d removed" sh -c "[ $? = 143 ] && [ ! -e '$FAKE/policy-rc.d' ]"
	printf '#!/bin/sh\nexit 0\n' >"$FAKE/own-policy" && chmod +x "$FAKE/own-policy"
	cp "$FAKE/own-policy" "$FAKE/own-policy.before"
	deps_with_fake_apt "$FAKE/own-policy"
	check "a policy-rc.d already there is used and left as it was" \
		sh -c "[ \"\$(cat '$FAKE/log')\" = 'policy 0' ] && cmp -s '$FAKE/own-policy' '$FAKE/own-policy.before'"
else
	skip_part "not root: install-deps.sh's policy-rc.d (it installs only as root)"
fi
finish
