#!/usr/bin/env bash
# page-flags-layout.sh -c CONFIG | -f "FRAGMENT ..." [-s SET=VALUE ...]
#
# The layout of page->flags that a kernel configuration gives, on the
# assembled tree: the width of every field, the spare bits
# (ALLOC_TAG_IDX_SPARE) and the series' tag index field in them
# (ALLOC_TAG_IDX_WIDTH, at most 32), one "name value" line each (word,
# pageflags, sections, nodes, zones, last_cpupid, kasan_tag, lru_gen,
# lru_refs, spare, index).
#
#   -c CONFIG   a full .config (may be .xz), e.g. one of Debian's in
#               /usr/src/linux-config-6.12 (package linux-config-6.12)
#   -f FRAGS    tinyconfig plus scripts/config/FRAG.config for each FRAG,
#               in order, as scripts/build.sh configures a build (with
#               ARCH=arm64 or i386 in the environment, for that
#               architecture, its fragment last, with its compiler)
#   -s OPT=VAL  set an option after that (repeatable), e.g.
#               -s CONFIG_NR_CPUS=512; OPT=n turns it off
#
# CONFIG_MEM_ALLOC_PROFILING=y is always added (the spare-bit count is
# the series' and exists only with profiling). The kernel is not built:
# `make olddefconfig prepare` in a scratch directory (about 20 s) and one
# file compiled to assembler (scripts/layout-probe.c). Results are kept
# in build/obj/layout/ by the hash of the configuration and the tree.
STEP=page-flags-layout
. "$(dirname "$0")/lib.sh"

config="" frags="" sets=()
while getopts c:f:s: opt; do
	case $opt in
	c) config=$OPTARG ;;
	f) frags=$OPTARG ;;
	s) sets+=("$OPTARG") ;;
	*) die "unknown option" "usage: page-flags-layout.sh -c CONFIG | -f \"FRAGMENT ...\" [-s CONFIG_X=V ...]" ;;
	esac
done
[ -n "$config$frags" ] && [ -z "$config" -o -z "$frags" ] ||
	die "give one of -c CONFIG or -f \"FRAGMENT ...\"" \
		"e.g. page-flags-layout.sh -c /usr/src/linux-config-6.12/config.amd64_none_amd64.xz"
[ -e "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"

# The configuration text that goes into the scratch directory.
input=$(mktemp)
trap 'rm -f "$input"' EXIT
if [ -n "$config" ]; then
	[ -f "$config" ] || die "$config does not exist" \
		"for Debian's configs install linux-config-6.12 ('make deps' as root)"
	case $config in
	*.xz) xz -dc "$config" > "$input" ;;
	*) cat "$config" > "$input" ;;
	esac
else
	for f in $frags $(arch_frag); do
		p=$TOP/scripts/config/$f.config
		[ -f "$p" ] || die "config fragment $p does not exist" \
			"use one of: $(cd "$TOP/scripts/config" && ls *.config | sed 's/\.config$//' | tr '\n' ' ')"
		cat "$p" >> "$input"
	done
fi
for s in "${sets[@]}"; do
	[[ $s == CONFIG_*=* ]] || die "-s $s is not CONFIG_NAME=VALUE" "e.g. -s CONFIG_NR_CPUS=512"
	echo "$s" >> "$input"
done
echo CONFIG_MEM_ALLOC_PROFILING=y >> "$input"

key=$( { cat "$input"; echo "tiny=${frags:+1} arch=$PFTAG_ARCH"; git -C "$TREE" rev-parse HEAD;
	 cat "$TOP/scripts/layout-probe.c"; } | sha1sum | cut -c1-16)
obj=$BUILD/obj/layout/$key
if [ -f "$obj/layout.txt" ]; then
	cat "$obj/layout.txt"
	exit 0
fi

rm -rf "$obj"
mkdir -p "$obj"
karch=$(arch_kbuild "$PFTAG_ARCH")
cross=$(arch_cross "$PFTAG_ARCH")
arch_need_gcc "$PFTAG_ARCH"
kmake() {
	make -C "$TREE" O="$obj" ARCH="$karch" ${cross:+CROSS_COMPILE=$cross} -j"$(nproc)" \
		CC="ccache ${cross}gcc" HOSTCC="ccache gcc" "$@"
}
unset CCACHE_BASEDIR
if [ -n "$frags" ]; then
	kmake -s tinyconfig > "$obj/prepare.log" 2>&1 ||
		die "make tinyconfig failed (see $obj/prepare.log)" "check the tree with 'make assemble'"
	cat "$input" >> "$obj/.config"
else
	cp "$input" "$obj/.config"
fi
kmake -s olddefconfig >> "$obj/prepare.log" 2>&1 &&
	kmake prepare >> "$obj/prepare.log" 2>&1 ||
	die "configuring and preparing the tree failed (see $obj/prepare.log)" \
		"check the configuration given; the log names the option or file"
for s in "${sets[@]}"; do
	want=$s
	[[ $s != *=n ]] || want="# ${s%=n} is not set"
	grep -qx "$want" "$obj/.config" ||
		die "$s did not stick: olddefconfig changed it (see $obj/.config)" \
			"set the options it depends on too"
done

# The compiler command of kernel/bounds.s, which prepare just made, with
# the probe as its source.
cmd=$(sed -n 's|^savedcmd_kernel/bounds.s := ||p' "$obj/kernel/.bounds.s.cmd")
[ -n "$cmd" ] || die "no compiler command in $obj/kernel/.bounds.s.cmd" "the kbuild layout changed: update this script"
cmd=$(sed -e 's/-Wp,-MMD,[^ ]* //' -e 's/ -fverbose-asm//' -e 's/ -o kernel\/bounds.s [^ ]*$//' <<< "$cmd")
(cd "$obj" && eval "$cmd -w -o layout-probe.s $(printf %q "$TOP/scripts/layout-probe.c")") \
	> "$obj/probe.log" 2>&1 || die "the probe did not compile (see $obj/probe.log)" \
		"check scripts/layout-probe.c against include/linux/page-flags-layout.h"
sed -n 's/^[[:space:]]*\.ascii "\\nLAYOUT \([a-z_]*\) \([0-9]*\)\\n"$/\1 \2/p' \
	"$obj/layout-probe.s" > "$obj/layout.txt"
[ "$(wc -l < "$obj/layout.txt")" = 11 ] ||
	die "the probe's output has not the 11 fields expected (see $obj/layout-probe.s)" \
		"check scripts/layout-probe.c"
cat "$obj/layout.txt"
