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
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
note "installing: ${missing[*]}"
[ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]}" "run 'make deps' as root, or apt-get install them"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${missing[@]}" > "$BUILD/deps.log" 2>&1 || {
	apt-get update > /dev/null 2>&1 || true
	apt-get install -y --no-install-recommends "${missing[@]}" > "$BUILD/deps.log" 2>&1
} || die "apt-get could not install ${missing[*]} (log: $BUILD/deps.log)" \
	"check the apt sources and the network, then run 'make deps' again"
