#!/usr/bin/env bash
# deps.sh: install the Debian 12 packages the project needs, only those
# missing. Needs root (apt-get) when something is missing.
STEP=deps
. "$(dirname "$0")/lib.sh"
mkdir -p "$BUILD"

# package: what needs it
pkgs=(
	linux-source-6.12	# the kernel source the series applies to
	linux-config-6.12	# Debian's kernel configs: the distribution layouts are checked against them
	build-essential		# gcc, make
	flex bison bc		# kbuild
	libelf-dev libssl-dev	# objtool, sign-file
	cpio kmod		# initramfs, depmod
	xz-utils		# the source tarball
	ccache			# fast rebuilds
	qemu-system-x86		# the guest
	busybox-static		# the guest's userland
	python3			# kunit.py parse, result tables
	file			# checks of static binaries
	git
	linux-perf		# perf stat / perf bench in the guests of make bench
	gnuplot-nox		# the plot of make bench
)
# What another ARCH (scripts/lib.sh) needs besides: its compiler and QEMU,
# and the SQLite the guest's static allocinfo links (multiarch).
case $PFTAG_ARCH in
arm64) pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm libsqlite3-dev:arm64) ;;
esac
missing=()
# foreign_arch: for ARCH other than x86_64 (scripts/lib.sh), the
# architecture in dpkg's list (once, the package list updated then), for
# its packages: busybox-static and SQLite.
foreign_arch() {
	local a=$PFTAG_ARCH
	[ "$a" != x86_64 ] || return 0
	dpkg --print-foreign-architectures | grep -qx "$a" && return 0
	[ "$(id -u)" = 0 ] || die "ARCH=$a needs Debian's $a packages" "run 'make deps ARCH=$a' as root"
	note "adding $a to dpkg's architectures, for its busybox-static and SQLite"
	dpkg --add-architecture "$a" && apt-get update > "$BUILD/deps.log" 2>&1 ||
		die "apt-get update with the $a architecture failed (log: $BUILD/deps.log)" \
			"check the apt sources and the network, then run 'make deps ARCH=$a' again"
}
# arch_deps: for ARCH other than x86_64, Debian's busybox-static of that
# architecture, unpacked under build/deps (the host's own busybox-static
# stays).
arch_deps() {
	local a=$PFTAG_ARCH dir deb
	[ "$a" != x86_64 ] || return 0
	dir=$BUILD/deps/busybox-static-$a
	[ ! -x "$dir/bin/busybox" ] || return 0
	[ "$(id -u)" = 0 ] || die "ARCH=$a needs Debian's busybox-static:$a" "run 'make deps ARCH=$a' as root"
	rm -rf "$BUILD/deps/dl"
	mkdir -p "$BUILD/deps/dl"
	(cd "$BUILD/deps/dl" && apt-get download "busybox-static:$a") > "$BUILD/deps.log" 2>&1 || {
		apt-get update > /dev/null 2>&1 || true
		(cd "$BUILD/deps/dl" && apt-get download "busybox-static:$a") > "$BUILD/deps.log" 2>&1
	} || die "apt-get could not download busybox-static:$a (log: $BUILD/deps.log)" \
		"check the apt sources and the network, then run 'make deps ARCH=$a' again"
	deb=$(ls "$BUILD"/deps/dl/busybox-static_*_"$a".deb)
	rm -rf "$dir"
	dpkg-deb -x "$deb" "$dir.new" && mv "$dir.new" "$dir" ||
		die "could not unpack $deb" "check the free disk space, then run 'make deps ARCH=$a' again"
	rm -rf "$BUILD/deps/dl"
	note "busybox for $a guests: ${dir#"$TOP"/}/bin/busybox"
}
foreign_arch
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || { arch_deps; exit 0; }
note "installing: ${missing[*]}"
[ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]}" "run 'make deps' as root, or apt-get install them"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${missing[@]}" > "$BUILD/deps.log" 2>&1 || {
	apt-get update > /dev/null 2>&1 || true
	apt-get install -y --no-install-recommends "${missing[@]}" > "$BUILD/deps.log" 2>&1
} || die "apt-get could not install ${missing[*]} (log: $BUILD/deps.log)" \
	"check the apt sources and the network, then run 'make deps' again"
arch_deps
