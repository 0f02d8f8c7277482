#!/bin/sh
# Installs the Debian packages vmhost needs to build and test, when they are missing.
# Package lists live in scripts/deps/*.txt, one package per line, one file per feature.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
missing=""
for pkg in $(cat "$here"/deps/*.txt | sed 's/#.*//'); do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
