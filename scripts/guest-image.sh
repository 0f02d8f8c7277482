#!/bin/sh
# Builds a tiny guest for end-to-end tests: a Debian kernel (taken from Debian's linux-image
# package, without installing it) and a busybox initramfs. Output: DIR/vmlinuz, DIR/initramfs.gz.
# The guest prints "vmhost-guest-up" on its serial console, touches some memory, then idles;
# with "vmhost.spin" on the kernel command line one shell loop keeps a vCPU busy. The virtio
# balloon driver (with the virtio PCI modules it needs) is loaded when the kernel has them, and
# the virtio disk's: with "vmhost.write=N" the guest writes N MiB to /dev/vda with O_DIRECT and
# prints "vmhost-write-done" (the I/O tests count what reached the host); a virtio NIC is brought up.
# With "vmhost.alloc=N" the guest, 3 s after it is up, prints "vmhost-alloc-start", fills N MiB of
# memory with random bytes (a tmpfs file: no page like another, so KSM merges none), frees it and
# prints "vmhost-alloc-freed" (the reclaim tests watch the host get that memory back, or not).
# With "vmhost.hold=N" it fills N MiB of a tmpfs with zeros, keeps it and prints "vmhost-hold-done"
# (a guest that uses its RAM: the capacity test starts guests that do).
set -eu
out=${1:?usage: guest-image.sh DIR}
mkdir -p "$out"
cd "$out"
# Bumped when the initramfs changes, so cached images are rebuilt.
version=7
[ "$(cat initramfs.version 2>/dev/null)" = $version ] || rm -f initramfs.gz
if [ ! -s vmlinuz ] || [ ! -s initramfs.gz ]; then
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
	rm -rf modules && mkdir modules
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_balloon virtio_blk failover net_failover virtio_net; do
		f=$(find extract/lib/modules -name "$m.ko*" | head -1)
		[ -n "$f" ] && cp "$f" modules/
	done
	rm -rf extract
fi
if [ ! -s initramfs.gz ]; then
	bb=$(command -v busybox || echo /bin/busybox)
	rm -rf root && mkdir -p root/bin root/proc root/sys root/dev root/tmp
	cp "$bb" root/bin/busybox
	for app in sh mount echo cat sleep dd head poweroff insmod grep ip rm mkdir umount; do ln -s busybox root/bin/$app; done
	mkdir -p root/lib/modules && cp modules/* root/lib/modules/ 2>/dev/null || true
	cat >root/init <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs -o size=64m tmp /tmp
mount -t devtmpfs dev /dev 2>/dev/null
# touch some guest memory, identical in every guest booted from this image
dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>/dev/null
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_balloon virtio_blk failover net_failover virtio_net; do
	for f in /lib/modules/$m.ko*; do [ -e "$f" ] && insmod "$f" 2>/dev/null; done
done
ip link set eth0 up 2>/dev/null # a virtio NIC takes what the host sends it
grep -q vmhost.spin /proc/cmdline && (while :; do :; done) &
echo vmhost-guest-up
for w in $(cat /proc/cmdline); do
	case $w in vmhost.write=*)
		dd if=/dev/zero of=/dev/vda bs=1M count=${w#vmhost.write=} oflag=direct 2>/dev/null && echo vmhost-write-done ;;
	vmhost.alloc=*)
		n=${w#vmhost.alloc=}
		sleep 3
		echo vmhost-alloc-start
		mkdir -p /alloc && mount -t tmpfs -o size=$((n + 1))m alloc /alloc
		dd if=/dev/urandom of=/alloc/fill bs=1M count=$n 2>/dev/null
		rm /alloc/fill && umount /alloc && echo vmhost-alloc-freed ;;
	vmhost.hold=*)
		n=${w#vmhost.hold=}
		mkdir -p /hold && mount -t tmpfs -o size=$((n + 1))m hold /hold
		dd if=/dev/zero of=/hold/fill bs=1M count=$n 2>/dev/null && echo vmhost-hold-done ;;
	esac
done
while :; do sleep 3600; done
INIT
	chmod +x root/init
	(cd root && find . | cpio -o -H newc 2>/dev/null | gzip -1) >initramfs.gz
	rm -rf root
	echo $version >initramfs.version
fi
echo "$out/vmlinuz $out/initramfs.gz"
