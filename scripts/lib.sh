# Shared helpers of the project's scripts. Source it; do not run it.
# shellcheck shell=bash

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
STEP=${STEP:-$(basename "$0" .sh)}

# The kernel release the series is made for, recorded in one place.
SERIES_KERNEL=$(cat "$TOP/scripts/KERNEL_VERSION")
TARBALL=${TARBALL:-/usr/src/linux-source-6.12.tar.xz}
TREE=${TREE:-$BUILD/linux}
# Directories of the project whose files are new kernel files (the
# overlay): DIR lands at the same path in the kernel tree, DIR=KDIR under
# KDIR instead.
OVERLAY_DIRS="mm include lib tests/selftests/alloc_tag=tools/testing/selftests/alloc_tag"

# die MESSAGE [WAY-OUT]: stop this step with a message naming it and the
# way out, and a non-zero exit.
die() {
	printf '%s: error: %s\n' "$STEP" "$1" >&2
	[ $# -lt 2 ] || printf '%s: way out: %s\n' "$STEP" "$2" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "$STEP" "$*" >&2
}

# Print the version (VERSION.PATCHLEVEL.SUBLEVEL) of a kernel tree's Makefile.
tree_version() {
	awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3} /^SUBLEVEL =/ {s=$3}
	     END { if (v == "") exit 1; print v "." p "." s }' "$1/Makefile"
}

# overlay_map [SRC]: "PROJECT-PATH KERNEL-PATH" of every overlay file of
# SRC (default $TOP), paths relative to SRC and to the kernel tree, sorted.
overlay_map() {
	local src=${1:-$TOP} d p f
	for d in $OVERLAY_DIRS; do
		p=${d%%=*}
		[ -d "$src/$p" ] || continue
		(cd "$src" && find "$p" -type f) | while read -r f; do
			printf '%s %s\n' "$f" "${d#*=}${f#"$p"}"
		done
	done | LC_ALL=C sort
}

# Every file of the overlay, relative to $TOP, sorted.
overlay_files() {
	overlay_map | cut -d' ' -f1
}

# overlay_dirs: the project's overlay directories.
overlay_dirs() {
	local d
	for d in $OVERLAY_DIRS; do echo "${d%%=*}"; done
}

# project_path KERNEL-PATH: where a new kernel file lives in the project;
# fails when it is outside every overlay directory.
project_path() {
	local d k
	for d in $OVERLAY_DIRS; do
		k=${d#*=}
		case "$1" in "$k"/*) echo "${d%%=*}${1#"$k"}"; return 0 ;; esac
	done
	return 1
}

# Patch names listed in a series file, in order (comments and blanks skipped).
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$1"
}

# The architecture the kernels are built for: ARCH=x86_64 (the default,
# what the series is made and measured on), i386 (32-bit x86: a 4-byte
# word) or arm64 (cross-built with Debian's gcc-aarch64-linux-gnu, booted
# on QEMU's virt machine). A build for another architecture is the build
# of the same config with the fragment arch-ARCH last
# (scripts/config/arch-ARCH.config), in a build directory of its own.
PFTAG_ARCH=${ARCH:-x86_64}
ARCHES="x86_64 i386 arm64"
case " $ARCHES " in
*" $PFTAG_ARCH "*) ;;
*) die "ARCH=$PFTAG_ARCH is not an architecture the project builds" "use one of: $ARCHES" ;;
esac

# arch_frag: the fragment of $PFTAG_ARCH's builds, none for x86_64.
arch_frag() {
	[ "$PFTAG_ARCH" = x86_64 ] || echo "arch-$PFTAG_ARCH"
}

# build_arch DOTCONFIG: the architecture a configured build is for.
build_arch() {
	if grep -q '^CONFIG_X86_32=y' "$1" 2> /dev/null; then echo i386
	elif grep -q '^CONFIG_ARM64=y' "$1" 2> /dev/null; then echo arm64
	else echo x86_64; fi
}

# arch_image ARCH: the kernel image of ARCH's builds, in the build directory.
arch_image() {
	case $1 in
	arm64) echo arch/arm64/boot/Image ;;
	*) echo arch/x86/boot/bzImage ;;
	esac
}

# arch_cross ARCH: the prefix of ARCH's cross tools, none for x86.
arch_cross() {
	case $1 in
	arm64) echo aarch64-linux-gnu- ;;
	esac
}

# arch_kbuild ARCH: kbuild's ARCH for ARCH's builds.
arch_kbuild() {
	case $1 in
	i386) echo i386 ;;
	arm64) echo arm64 ;;
	*) echo x86 ;;
	esac
}

# arch_need_gcc ARCH: die unless ARCH's compiler is installed.
arch_need_gcc() {
	local cross
	cross=$(arch_cross "$1")
	command -v "${cross}gcc" > /dev/null ||
		die "${cross}gcc, the compiler of ARCH=$1, is not installed" "run 'make deps ARCH=$1' (as root)"
}

# arch_qemu ARCH: the QEMU that boots ARCH's kernels.
arch_qemu() {
	case $1 in
	i386) echo qemu-system-i386 ;;
	arm64) echo qemu-system-aarch64 ;;
	*) echo qemu-system-x86_64 ;;
	esac
}

# arch_busybox ARCH: the static busybox of ARCH's guests: the host's for
# x86_64, else Debian's busybox-static of that architecture, which
# scripts/deps.sh unpacks under build/deps.
arch_busybox() {
	case $1 in
	x86_64) echo /bin/busybox ;;
	*) echo "$BUILD/deps/busybox-static-$1/bin/busybox" ;;
	esac
}

# The build directory name of config NAME with extra FRAGMENTS (and the
# architecture's fragment, last).
obj_id() {
	local id=$1 f
	for f in $2 $(arch_frag); do
		f=$(basename "$f" .config)
		id="$id+$f"
	done
	echo "$id"
}

# Print a command line so that it can be pasted into a shell.
show_cmd() {
	local a sep=""
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then printf '%s%s' "$sep" "$a"
		else printf "%s'%s'" "$sep" "${a//\'/\'\\\'\'}"; fi
		sep=" "
	done
	echo
}

# series_inputs PATCHES SRC TARBALL_ID: a hash of everything the assembly
# reads, to tell whether build/linux is up to date.
series_inputs() {
	local patches=$1 src=$2
	{
		echo "$3"
		cat "$patches/series"
		series_patches "$patches/series" | while read -r p; do
			[ ! -f "$patches/$p" ] || sha1sum "$patches/$p"
		done
		overlay_map "$src" | while read -r f k; do
			echo "$k $(sha1sum < "$src/$f")"
		done
	} | sha1sum | cut -c1-40
}
