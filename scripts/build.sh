#!/usr/bin/env bash
# build.sh NAME: configure and build the assembled tree ($TREE) out of
# tree into build/obj/NAME, kernel and modules, with ccache.
#
# NAME selects scripts/config/NAME.config on top of base.config and
# mm.config; FRAGMENTS="a b" adds scripts/config/a.config ... (or paths)
# after it, and the build directory becomes build/obj/NAME+a+b.
# The kernel release carries the suffix -pftag-NAME[-a-b], so `uname -r`
# in the guest names the build that booted. BUILD_ID=... names the build
# directory instead; CONFIG_CHECK=warn builds even when a requested option
# does not exist (for trees in the middle of the series); TEST_MODULES=0
# skips the project's test modules (tests/modules). ARCH=i386 builds for
# 32-bit x86, ARCH=arm64 for arm64 with Debian's cross compiler
# (scripts/lib.sh): the fragment arch-ARCH comes last.
STEP=build
. "$(dirname "$0")/lib.sh"

name=${1:?usage: build.sh NAME}
FRAGMENTS=${FRAGMENTS:-}

frag_path() {
	case "$1" in
	*/*) echo "$1" ;;
	*) echo "$TOP/scripts/config/$1.config" ;;
	esac
}
frags=()
for f in base mm "$name" $FRAGMENTS $(arch_frag); do
	p=$(frag_path "$f")
	[ -f "$p" ] || die "config fragment $p does not exist" \
		"use one of: $(cd "$TOP/scripts/config" && ls *.config | sed 's/\.config$//' | tr '\n' ' ')"
	frags+=("$p")
done
id=${BUILD_ID:-$(obj_id "$name" "$FRAGMENTS")}
obj=$BUILD/obj/$id
suffix="-pftag-${id//+/-}"

command -v ccache > /dev/null || die "ccache is not installed" "run 'make deps' (as root)"
[ -e "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"

# No ccache base_dir: rewriting the compiler's paths to relative ones
# defeats kbuild's -fmacro-prefix-map, and __FILE__, which /proc/allocinfo
# prints, would read ../../linux/mm/... instead of mm/...
unset CCACHE_BASEDIR

# One kernel build at a time on this machine (a build takes every core):
# builds from other clones or work trees wait for the lock.
exec 9> "${PFTAG_BUILD_LOCK:-/tmp/pftag-kernel-build.lock}"
if ! flock -n 9; then
	note "another kernel build is running on this machine: waiting for it"
	flock 9
fi

# kbuild's ARCH, always given: a make run as `make test ARCH=i386` has
# ARCH in its environment too.
karch=$(arch_kbuild "$PFTAG_ARCH")
cross=$(arch_cross "$PFTAG_ARCH")
image=$(arch_image "$PFTAG_ARCH")
arch_need_gcc "$PFTAG_ARCH"
kmake() {
	make -C "$TREE" O="$obj" ARCH="$karch" ${cross:+CROSS_COMPILE=$cross} -j"$(nproc)" \
		CC="ccache ${cross}gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_TIMESTAMP="2024-11-17 00:00:00 UTC" KBUILD_BUILD_USER=pftag \
		KBUILD_BUILD_HOST=build LOCALVERSION= ${V:+V=$V} "$@"
}

# 1. Configuration: tinyconfig, then the fragments in order, then
#    olddefconfig; redone only when a fragment or the tree changed.
mkdir -p "$obj"
want=$( { cat "${frags[@]}"; echo "$suffix"; git -C "$TREE" rev-parse HEAD; } | sha1sum | cut -c1-40)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.pftag-config" 2>/dev/null)" != "$want" ]; then
	rm -f "$obj/.pftag-config"
	note "configuring $id from: ${frags[*]#"$TOP"/}"
	kmake -s tinyconfig > "$obj/config.log" 2>&1 ||
		die "make tinyconfig failed (see $obj/config.log)" "check the assembled tree with 'make assemble'"
	{ cat "${frags[@]}"; echo "CONFIG_LOCALVERSION=\"$suffix\""; } >> "$obj/.config"
	kmake -s olddefconfig >> "$obj/config.log" 2>&1 ||
		die "make olddefconfig failed (see $obj/config.log)" "fix the fragment it names"
	if ! STEP=config "$TOP/scripts/check-config.sh" "$obj/.config" "${frags[@]}"; then
		if [ "${CONFIG_CHECK:-}" != warn ]; then
			mv "$obj/.config" "$obj/.config.rejected"
			exit 1
		fi
		note "CONFIG_CHECK=warn: building with the options that exist"
	fi
	echo "$want" > "$obj/.pftag-config"
fi

# 2. Kernel and modules.
note "building $id in ${obj#"$TOP"/} (log: ${obj#"$TOP"/}/build.log)"
rm -f "$obj/.pftag-built"
if ! kmake "$(basename "$image")" modules > "$obj/build.log" 2>&1; then
	grep -E 'error|Error' "$obj/build.log" | head -20 >&2
	die "the kernel build failed (full log: $obj/build.log)" "fix the error above in $TREE, then 'make export'"
fi
# The kernel's own modules (only what the fragments make =m: the
# kselftest's CONFIG_TEST_ALLOC_TAG), stripped, for the initramfs.
rm -rf "$obj/modroot"
kmake -s INSTALL_MOD_PATH="$obj/modroot" INSTALL_MOD_STRIP=1 modules_install >> "$obj/build.log" 2>&1 ||
	die "modules_install failed (see $obj/build.log)" "check the free disk space and retry"
# The project's test modules (tests/modules), built against this kernel
# in a copy, so the source folder stays clean.
rm -rf "$obj/testmods"
if [ "${TEST_MODULES:-1}" != 0 ]; then
	cp -r "$TOP/tests/modules" "$obj/testmods"
	kmake M="$obj/testmods" modules >> "$obj/build.log" 2>&1 ||
		die "the test modules did not build (see $obj/build.log)" "fix tests/modules"
	"${cross}strip" --strip-debug "$obj"/testmods/*.ko
fi
# The release as kbuild wrote it: `make -s kernelrelease` would also print
# "Entering directory" lines when run under `make -C DIR` (MAKEFLAGS has w).
release=$(cat "$obj/include/config/kernel.release")
echo "$release" > "$obj/.pftag-built"
note "built $release: ${obj#"$TOP"/}/$image"
