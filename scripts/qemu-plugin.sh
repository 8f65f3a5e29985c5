#!/usr/bin/env bash
# qemu-plugin.sh: build the QEMU TCG plugin bench/plugin/pftag-cache.c
# into build/plugin/libpftag-cache.so (BUILD= moves build/). It counts,
# per vCPU and inside windows the guest marks, the instructions, loads,
# stores and the misses of a modelled two-level data cache; the plugin's
# header comment says how to use it.
#
# Debian ships no QEMU plugin headers, so the header qemu-plugin.h of the
# installed QEMU's own version is taken from its Debian source package:
# a deb-src entry is added when there is none
# (/etc/apt/sources.list.d/pftag-deb-src.sources), the source is
# downloaded into build/plugin/src, and only include/qemu/qemu-plugin.h
# is extracted from the orig tarball. The header is kept in
# build/plugin/include/<source version>/, so later runs need neither
# root nor the network. Fetching it needs root (apt-get).
#
# Does nothing when the .so is newer than the plugin's source, this
# script and the header. The built plugin is loaded once by the
# installed qemu-system-x86_64 (-machine none) to prove the API versions
# agree.
STEP="qemu-plugin"
. "$(dirname "$0")/lib.sh"
set -euo pipefail

src=$TOP/bench/plugin/pftag-cache.c
dir=$(realpath -m "$BUILD/plugin")
so=$dir/libpftag-cache.so
qemu="qemu-system-x86_64"
apt_src=/etc/apt/sources.list.d/pftag-deb-src.sources
# The plugin API version (QEMU_PLUGIN_VERSION) each QEMU release speaks;
# an unknown release is checked by loading the plugin only.
declare -A api_of=([7.2]=1)

[ -f "$src" ] || die "the plugin source $src is missing" "check out bench/plugin/ from the project"
command -v "$qemu" > /dev/null || die "$qemu is not installed" "run 'make deps' (as root)"
srcver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2> /dev/null) && [ -n "$srcver" ] ||
	die "cannot tell the version of Debian's qemu-system-x86" "install it with 'make deps' (as root)"
# 1:7.2+dfsg-7+deb12u18 -> 7.2
upstream=${srcver#*:}
upstream=${upstream%%[+~-]*}
release=$(cut -d. -f1,2 <<< "$upstream")
inc=$dir/include/$srcver
hdr=$inc/qemu-plugin.h

if [ -f "$so" ] && [ -f "$hdr" ] && [ "$so" -nt "$src" ] && [ "$so" -nt "$0" ] && [ "$so" -nt "$hdr" ]; then
	exit 0
fi

# need_root WHAT WAY-OUT: stop unless root (apt-get is needed for WHAT).
need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (apt-get), and this is uid $(id -u)" "$2"
}

# apt_quiet LOG CMD...: run an apt command, its output in LOG.
apt_quiet() {
	local log=$1
	shift
	DEBIAN_FRONTEND=noninteractive "$@" > "$log" 2>&1
}

# The versions of Debian's qemu source package apt knows, one a line;
# none (and no failure, which set -e would make a silent exit) before the
# source lists were fetched.
src_versions() {
	{ apt-cache showsrc qemu 2> /dev/null || true; } | sed -n 's/^Version: //p' | sort -u
}

fetch_header() {
	local log=$dir/apt.log pkgdir=$dir/src have orig member
	mkdir -p "$dir" "$pkgdir"
	need_root "fetching QEMU's plugin header (not cached yet: $hdr)" \
		"run 'sudo scripts/qemu-plugin.sh' once (with BUILD= as now); later builds use the cached header"
	command -v dpkg-source > /dev/null || {
		note "installing dpkg-dev (for apt-get source)"
		apt_quiet "$log" apt-get install -y --no-install-recommends dpkg-dev ||
			die "apt-get could not install dpkg-dev (log: $log)" "check the apt sources and the network"
	}
	# A deb-src entry: the binary sources' URIs, suites, components and
	# keys, once, in a file of our own.
	if ! grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		[ -f /etc/apt/sources.list.d/debian.sources ] ||
			die "no deb-src entry in the apt sources and no /etc/apt/sources.list.d/debian.sources to derive one from" \
				"add a deb-src line for bookworm main to /etc/apt/sources.list and run this again"
		note "adding $apt_src (deb-src of debian.sources)"
		sed -E 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$apt_src.new"
		mv "$apt_src.new" "$apt_src"
	fi
	# The source lists are read again after an update when they lack the
	# version (none yet, or stale).
	have=$(src_versions)
	if ! grep -qxF -- "$srcver" <<< "$have"; then
		note "apt-get update (source lists)"
		if [ -f "$apt_src" ]; then
			# Only our file: the binary lists stay as they are.
			apt_quiet "$log" apt-get update -o Dir::Etc::sourcelist="$apt_src" \
				-o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 ||
				die "apt-get update of $apt_src failed (log: $log)" "check the network and the apt sources"
		else
			apt_quiet "$log" apt-get update ||
				die "apt-get update failed (log: $log)" "check the network and the apt sources"
		fi
		have=$(src_versions)
	fi
	grep -qxF -- "$srcver" <<< "$have" ||
		die "the installed QEMU's source version $srcver is not in the source archive (it has: ${have//$'\n'/ })" \
			"install a qemu-system-x86 built from a source version the archive has, or add a deb-src entry of the suite that has $srcver"
	note "downloading the source of qemu $srcver into $pkgdir"
	(cd "$pkgdir" && apt_quiet "$log" apt-get source --download-only "qemu=$srcver") ||
		die "apt-get source --download-only qemu=$srcver failed (log: $log)" "check the network; the log says why"
	orig=$(ls "$pkgdir"/qemu_"${upstream}"*.orig.tar.* 2> /dev/null | head -n 1 || true)
	[ -n "$orig" ] || die "no orig tarball of qemu $srcver in $pkgdir" "look at $log; remove $pkgdir and run this again"
	rm -rf "$inc.new"
	mkdir -p "$inc.new"
	tar -xOf "$orig" --wildcards '*/include/qemu/qemu-plugin.h' > "$inc.new/qemu-plugin.h" ||
		die "$orig has no include/qemu/qemu-plugin.h" "this QEMU may be built without plugins; check the tarball"
	[ -s "$inc.new/qemu-plugin.h" ] ||
		die "$orig has no include/qemu/qemu-plugin.h" "this QEMU may be built without plugins; check the tarball"
	# Debian's own patches must leave the header alone, or it is not
	# the header of the installed binary.
	member=$(ls "$pkgdir"/qemu_"${srcver#*:}".debian.tar.* 2> /dev/null | head -n 1 || true)
	if [ -n "$member" ] && tar -xOf "$member" --wildcards 'debian/patches/*' 2> /dev/null |
		grep -c '^+++ .*include/qemu/qemu-plugin\.h' > /dev/null; then
		die "a Debian patch of qemu $srcver changes include/qemu/qemu-plugin.h, which this script does not apply" \
			"apply that patch to $inc.new/qemu-plugin.h by hand and move $inc.new to $inc"
	fi
	rm -rf "$inc"
	mv "$inc.new" "$inc"
	# The tarballs are not needed any more: the header is the cache.
	rm -rf "$pkgdir"
}

[ -f "$hdr" ] || fetch_header

hv=$(awk '$1 == "#define" && $2 == "QEMU_PLUGIN_VERSION" { print $3 }' "$hdr")
[ -n "$hv" ] || die "$hdr defines no QEMU_PLUGIN_VERSION" "remove $dir/include and run this again"
if [ -n "${api_of[$release]:-}" ] && [ "$hv" != "${api_of[$release]}" ]; then
	die "the header's plugin API version is $hv, but QEMU $upstream (Debian $srcver) speaks version ${api_of[$release]}" \
		"remove $dir/include and run this again to fetch the header of the installed version"
fi

command -v pkg-config > /dev/null && pkg-config --exists glib-2.0 || {
	need_root "installing libglib2.0-dev (its pkg-config flags are part of the build)" \
		"run 'sudo apt-get install libglib2.0-dev pkg-config'"
	note "installing libglib2.0-dev and pkg-config"
	apt_quiet "$dir/apt.log" apt-get install -y --no-install-recommends libglib2.0-dev pkg-config ||
		die "apt-get could not install libglib2.0-dev (log: $dir/apt.log)" "check the apt sources and the network"
}

mkdir -p "$dir"
# shellcheck disable=SC2046 # pkg-config's flags are words
gcc -shared -fPIC -O2 -Wall -I"$inc" $(pkg-config --cflags glib-2.0) \
	-o "$so.new" "$src" 2> "$dir/cc.log" ||
	die "the plugin does not compile: $(head -c 2000 "$dir/cc.log")" "fix $src"
[ ! -s "$dir/cc.log" ] || cat "$dir/cc.log" >&2

# The installed QEMU loads it (and refuses a plugin of another API
# version): -machine none, the monitor quits at once.
if ! out=$(echo quit | timeout 30 "$qemu" -machine none -nodefaults -display none \
	-monitor stdio -plugin "$so.new,out=/dev/null" 2>&1); then
	rm -f "$so.new"
	die "$qemu $upstream does not load the plugin: $out" \
		"remove $dir/include and run this again; compare QEMU_PLUGIN_VERSION in $hdr with what QEMU accepts"
fi
mv "$so.new" "$so"
note "built $so (QEMU $upstream, plugin API $hv)"
