#!/usr/bin/env bash
# initramfs.sh ID: the guest's root file system for build/obj/ID:
# Debian's static busybox, /init, the kernel's own modules (those the
# config makes =m, such as CONFIG_TEST_ALLOC_TAG's, stripped, under
# /lib/modules/RELEASE with their modules.dep, for modprobe), and the
# project's guest files and out-of-tree test modules under /opt/pftag.
# Written to build/obj/ID/initramfs.cpio. A build for another
# architecture than x86_64 gets that architecture's busybox, and not the
# static x86_64 programs of build/guest (allocinfo, the kselftest's): an
# arm64 build gets the kselftest's from build/guest-arm64 (make selftest
# ARCH=arm64) instead.
STEP=initramfs
. "$(dirname "$0")/lib.sh"

id=${1:?usage: initramfs.sh ID}
obj=$BUILD/obj/$id
[ -f "$obj/.pftag-built" ] || die "build/obj/$id is not built" "run 'make build CONFIG=${id%%+*}'"
arch=$(build_arch "$obj/.config")
busybox=${BUSYBOX:-$(arch_busybox "$arch")}
[ -f "$busybox" ] && file -L "$busybox" | grep -q 'statically linked' ||
	die "$busybox is not a static busybox" "install Debian's busybox-static (make deps${arch:+ ARCH=$arch})"

root=$obj/initramfs.d
rm -rf "$root" "$obj/initramfs.cpio"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,opt/pftag/bin}
cp "$busybox" "$root/bin/busybox"
# The applets of the host's busybox: the same Debian version, and the
# guest's may not run here.
for applet in $(/bin/busybox --list-full); do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done
install -m 755 "$TOP/scripts/guest/init" "$root/init"
# The kernel's modules as modules_install left them (scripts/build.sh);
# the build and source links point into the host, not into the guest.
[ ! -d "$obj/modroot/lib" ] || cp -a "$obj/modroot/lib" "$root/"
find "$root/lib/modules" -maxdepth 2 -type l \( -name build -o -name source \) -delete 2> /dev/null || true
# Guest-side scripts and static test programs of the project.
case $arch in
x86_64) guest_bins=$BUILD/guest ;;
arm64) guest_bins=$BUILD/guest-arm64 ;;
*) guest_bins= ;;
esac
for d in "$TOP/scripts/guest" $guest_bins; do
	[ -d "$d" ] || continue
	find "$d" -maxdepth 1 -type f ! -name init -exec cp {} "$root/opt/pftag/bin/" \;
done
mkdir -p "$root/opt/pftag/modules"
# (none in a build made with TEST_MODULES=0)
[ ! -d "$obj/testmods" ] || cp "$obj"/testmods/*.ko "$root/opt/pftag/modules/"
chmod -R a+rX "$root/opt/pftag"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet -R 0:0) > "$obj/initramfs.cpio.new" ||
	die "cpio failed" "check the free disk space"
mv "$obj/initramfs.cpio.new" "$obj/initramfs.cpio"
