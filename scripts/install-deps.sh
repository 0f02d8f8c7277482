#!/bin/sh
# Installs the Debian packages of the given sets that are missing. A set is a folder of lists in
# scripts/deps/ (one package a line, one file per feature):
#   build    what building and running vmhost needs (make, make run): compiler, cmake, headers
#   test     what the tests use (make check): cmocka, jq, QEMU, libvirt, Prometheus, Chromium...
#   package  Debian's packaging tools (make deb, and make check's package tests)
# While apt runs, no package's service starts (a policy-rc.d that refuses, removed afterwards,
# even on failure or a signal; one that is already there is left as it is).
# usage: install-deps.sh [--list] SET...   --list prints the sets' packages and installs nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=0
[ "${1:-}" = --list ] && { list=1; shift; }
[ $# -gt 0 ] || { echo "usage: install-deps.sh [--list] build|test|package..." >&2; exit 2; }
packages=""
for set in "$@"; do
	[ -d "$here/deps/$set" ] || { echo "install-deps: no package set '$set' in $here/deps" >&2; exit 2; }
	packages="$packages $(cat "$here/deps/$set"/*.txt | sed 's/#.*//')"
done
packages=$(printf '%s\n' $packages | sort -u)
if [ $list = 1 ]; then
	printf '%s\n' $packages
	exit 0
fi
missing=""
for pkg in $packages; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi

# invoke-rc.d and deb-systemd-invoke ask policy-rc.d first; 101 is "action forbidden".
policy=${VMHOST_POLICY_RC_D:-/usr/sbin/policy-rc.d}
made=""
trap '[ -z "$made" ] || rm -f "$policy"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
if (set -C && printf '#!/bin/sh\n# scripts/install-deps.sh: no service starts while it installs\nexit 101\n' >"$policy") 2>/dev/null; then
	made=1
	chmod 755 "$policy"
else
	echo "install-deps: $policy is already there: left as it is"
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
