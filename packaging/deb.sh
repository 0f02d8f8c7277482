#!/bin/sh
# `make deb`: the Debian package, built by Debian's tools (dpkg-buildpackage, debhelper) from a
# copy of the source tree in OUT/stage, so the checkout stays clean. Writes
# OUT/vmhost_VERSION_ARCH.deb; VERSION is CMakeLists.txt's project VERSION (a native package).
# usage: deb.sh [OUT]   (default build/deb)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/deb}
version=$(sed -n 's/^project(vmhost VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "deb: no project VERSION in CMakeLists.txt" >&2; exit 1; }
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/stage
tree=$stage/vmhost-$version
rm -rf "$stage"
mkdir -p "$tree"

# The source: what git tracks plus new files it does not ignore (never build/), else all of
# the tree but build directories.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -co --exclude-standard | while read -r f; do [ -e "$f" ] && echo "$f"; done) >"$stage/files"
	when=$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)
	what="git $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
else
	(cd "$src" && find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune -o ! -type d -print) >"$stage/files"
	when=$(date +%s)
	what="a source tree without git"
fi
(cd "$src" && tar -cf - -T "$stage/files") | tar -xf - -C "$tree"
cp -r "$src/packaging/debian" "$tree/debian"
cat >"$tree/debian/changelog" <<CHANGELOG
vmhost ($version) unstable; urgency=medium

  * Built by make deb from $what.

 -- $(sed -n 's/^Maintainer: //p' "$tree/debian/control")  $(date -R -u -d "@$when")
CHANGELOG

echo "deb: building vmhost $version ($arch) in $tree"
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc >"$stage/build.log" 2>&1) ||
	{ tail -n 40 "$stage/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $stage/build.log)" >&2; exit 1; }
deb=vmhost_${version}_${arch}.deb
mv "$stage/$deb" "$out/$deb"
mv "$stage"/vmhost_"$version"_"$arch".changes "$stage"/vmhost_"$version"_"$arch".buildinfo "$out/" 2>/dev/null || true
echo "$out/$deb"
