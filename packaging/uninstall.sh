#!/bin/sh
# `make uninstall`: removes what `make install` put in place, from the same build (same PREFIX)
# and DESTDIR. The list is what the build installs now (staged into a temporary directory), so
# it does not depend on the install_manifest.txt of the last run. A config file that was changed
# since it was installed is kept (and said so); empty vmhost directories are removed.
# usage: uninstall.sh BUILD_DIR [DESTDIR]
set -eu
build=${1:?usage: uninstall.sh BUILD_DIR [DESTDIR]}
dest=${2:-}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage cmake --install "$build" >/dev/null
cd "$stage"
find . ! -type d | sed 's|^\./||' | sort | while read -r f; do
	target=$dest/$f
	[ -e "$target" ] || [ -L "$target" ] || continue
	case $f in
	etc/* | */etc/*)
		if ! cmp -s "$f" "$target"; then
			echo "uninstall: kept $target (changed since it was installed)"
			continue
		fi ;;
	esac
	rm -f "$target" && echo "uninstall: removed $target"
done
# Directories of vmhost's own (share/vmhost/grafana, etc/vmhost, ...), deepest first, if empty.
find . -depth -type d | sed 's|^\./||' | grep -E '(^|/)vmhost(/|$)' | while read -r d; do
	rmdir "$dest/$d" 2>/dev/null || true
done
