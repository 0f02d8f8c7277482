#!/bin/sh
# Builds a tiny guest for end-to-end tests: a Debian kernel (taken from Debian's linux-image
# package, without installing it) and a busybox initramfs. Output: DIR/vmlinuz, DIR/initramfs.gz.
# The guest prints "vmhost-guest-up" on its serial console, touches some memory, then idles.
set -eu
out=${1:?usage: guest-image.sh DIR}
mkdir -p "$out"
cd "$out"
if [ ! -s vmlinuz ]; then
	if ! ls linux-image-*.deb >/dev/null 2>&1; then
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
		if [ -z "$pkg" ]; then
			apt-get update -qq
			pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
		fi
		echo "guest-image: fetching $pkg (Debian kernel, not installed)"
		apt-get download "$pkg" >/dev/null 2>&1 || { chmod 777 . && apt-get download "$pkg" >/dev/null; }
	fi
	rm -rf extract && mkdir extract
	dpkg-deb -x linux-image-*.deb extract
	cp extract/boot/vmlinuz-* vmlinuz
	rm -rf extract
fi
if [ ! -s initramfs.gz ]; then
	bb=$(command -v busybox || echo /bin/busybox)
	rm -rf root && mkdir -p root/bin root/proc root/sys root/dev root/tmp
	cp "$bb" root/bin/busybox
	for app in sh mount echo cat sleep dd head poweroff; do ln -s busybox root/bin/$app; done
	cat >root/init <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs -o size=64m tmp /tmp
# touch some guest memory, identical in every guest booted from this image
dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>/dev/null
echo vmhost-guest-up
while :; do sleep 3600; done
INIT
	chmod +x root/init
	(cd root && find . | cpio -o -H newc 2>/dev/null | gzip -1) >initramfs.gz
	rm -rf root
fi
echo "$out/vmlinuz $out/initramfs.gz"
