#!/usr/bin/env bash
# mm-selftests.sh: the kernel's own mm selftests
# (tools/testing/selftests/mm of the assembled tree), built statically for
# the busybox guest, and an archive for scripts/boot.sh -x that puts them,
# with their runner (scripts/mm-selftests-guest.sh), in /opt/mm-selftests.
#
# The tests are built by their own Makefile, from a copy of the selftests
# directory (the Makefile writes local_config.h and .mk beside its
# sources; build/linux stays as it is), against the UAPI headers of the
# tree (make headers into a directory of its own: it compiles two host
# tools and no kernel), with -static in EXTRA_CFLAGS, which every rule of
# the Makefile passes to the link (LDFLAGS misses the protection keys'
# rules). A test that does not build is listed, with the reason, in
# OUT/unbuilt.txt, which goes into the archive too: the guest reports it
# as not built instead of dropping it.
#
# Output (OUT, default build/mm-selftests):
#   bin/           the binaries as built
#   build.log      the Makefile's output
#   unbuilt.txt    "NAME: reason", one a line
#   fixes.txt      the tests built with a fix of their source's flags
#   mm-selftests.cpio  the archive for scripts/boot.sh -x
#
# Needs the static libraries of libnuma, libcap and liburing (Debian's
# libnuma-dev, libcap-dev and liburing-dev) and gcc -m32 for the 32-bit
# protection keys tests (gcc-multilib), installed here when missing.
STEP=mm-selftests
. "$(dirname "$0")/lib.sh"

OUT=${OUT:-$BUILD/mm-selftests}
[ -f "$TREE/tools/testing/selftests/mm/Makefile" ] ||
	die "no mm selftests in $TREE" "run 'make assemble'"

# The libraries the Makefile links (ksm_tests and migration: -lnuma;
# mlock-random-test and memfd_secret: -lcap; cow and gup_longterm:
# -luring when check_config.sh finds it; protection_keys_32 and
# pkey_sighandler_tests_32: gcc -m32).
pkgs=(libnuma-dev libcap-dev liburing-dev gcc-multilib)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]}" "apt-get install them (as root)"
	note "installing: ${missing[*]}"
	mkdir -p "$OUT"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
		> "$OUT/deps.log" 2>&1 ||
		die "apt-get could not install ${missing[*]} (log: $OUT/deps.log)" "check the apt sources"
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
hdr=$OUT/khdr
src=$OUT/src
bin=$OUT/bin
root=$OUT/root
st=tools/testing/selftests

# UAPI headers of the tree, in KHDR/usr/include: make headers, which
# headers_install only copies elsewhere (with rsync). Incremental: a few
# seconds when nothing changed.
make -s -C "$TREE" O="$hdr" headers > "$OUT/headers.log" 2>&1 ||
	die "make headers failed (log: $OUT/headers.log)" "look at the end of the log"

# The copy the Makefile runs in: the selftests' mm directory, lib.mk and
# the kselftest headers, the x86 compiler probes; the kernel directories
# the tests include from (-I of the tree's top) are links to the tree.
# Files are copied when newer (cp -u keeps the times), so that make
# rebuilds only what changed.
mkdir -p "$src/$st/x86" "$src/tools"
cp -a -u "$TREE/$st/mm" "$src/$st/"
cp -a -u "$TREE/$st/lib.mk" "$TREE/$st/kselftest.h" "$TREE/$st/kselftest_harness.h" "$src/$st/"
cp -a -u "$TREE/$st/x86/check_cc.sh" "$TREE/$st"/x86/trivial_*.c "$src/$st/x86/"
for d in mm lib include tools/include; do ln -sfn "$TREE/$d" "$src/$d"; done

margs=(-C "$src/$st/mm" OUTPUT="$bin" KHDR_INCLUDES="-isystem $hdr/usr/include" EXTRA_CFLAGS=-static)
mkdir -p "$bin"
note "building the mm selftests (log: $OUT/build.log)"
make -k -j"$(nproc)" "${margs[@]}" > "$OUT/build.log" 2>&1 || true

# Build fixes of the tree's test sources, given as compiler flags (the
# sources stay as they are), tried only when the test did not build:
# "NAME|FLAGS|why". A binary built with its fix has a mark, BIN/.NAME.fix,
# older than the binary once make has rebuilt it without the fix; each
# fix in use is listed in OUT/fixes.txt.
fixes=(
	"khugepaged|-DKSFT_SKIP=4|6.12.117's khugepaged.c returns KSFT_SKIP without including kselftest.h, which defines it (4)"
)
: > "$OUT/fixes.txt"
for fx in "${fixes[@]}"; do
	IFS='|' read -r name flags why <<< "$fx"
	mark=$bin/.$name.fix
	if [ ! -x "$bin/$name" ]; then
		make "${margs[@]}" EXTRA_CFLAGS="-static $flags" "$bin/$name" >> "$OUT/build.log" 2>&1 &&
			touch "$mark"
	elif [ "$bin/$name" -nt "$mark" ]; then
		rm -f "$mark"
	fi
	[ ! -e "$mark" ] || echo "$name: built with $flags: $why" >> "$OUT/fixes.txt"
done

# What the Makefile means to build for this machine, from its own data.
# shellcheck disable=SC2207
want=($(make -pn "${margs[@]}" 2> /dev/null | sed -n 's/^TEST_GEN_FILES := //p' | tail -n 1))
[ ${#want[@]} -gt 0 ] || die "could not read TEST_GEN_FILES from the Makefile" "run: make -pn ${margs[*]}"
can_i386=$(make -pn "${margs[@]}" 2> /dev/null | sed -n 's/^CAN_BUILD_I386 := //p' | tail -n 1)

: > "$OUT/unbuilt.txt"
built=()
for f in "${want[@]}"; do
	name=$(basename "$f")
	if [ -x "$f" ] && file -L "$f" | grep -q 'statically linked'; then
		built+=("$name")
		continue
	fi
	if [ -x "$f" ]; then
		why="not statically linked: $(file -L "$f" | cut -d: -f2- | cut -c1-120)"
	else
		# Once more alone, for a log of its own.
		why=$(make "${margs[@]}" "$f" 2>&1 | grep -E 'error|cannot find|undefined reference' |
			head -n 1 | sed 's/^[^ ]*: //' | cut -c1-200 || true)
		why="does not build: ${why:-see $OUT/build.log}"
	fi
	printf '%s: %s\n' "$name" "$why" >> "$OUT/unbuilt.txt"
done
# The 32-bit variants are in TEST_GEN_FILES only where gcc -m32 links.
if [ "$can_i386" != 1 ]; then
	for t in protection_keys_32 pkey_sighandler_tests_32; do
		printf '%s: the Makefile builds it only when gcc -m32 links (gcc-multilib)\n' \
			"$t" >> "$OUT/unbuilt.txt"
	done
fi

rm -rf "$root"
mkdir -p "$root/opt/mm-selftests"
for name in "${built[@]}"; do
	strip -o "$root/opt/mm-selftests/$name" "$bin/$name"
done
install -m 755 "$TOP/scripts/mm-selftests-guest.sh" "$root/opt/mm-selftests/run.sh"
cp "$OUT/unbuilt.txt" "$root/opt/mm-selftests/unbuilt.txt"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet -R 0:0) > "$OUT/mm-selftests.cpio.new" ||
	die "cpio failed" "check the free disk space"
mv "$OUT/mm-selftests.cpio.new" "$OUT/mm-selftests.cpio"
[ ! -s "$OUT/fixes.txt" ] || note "built with a fix: $(cut -d: -f1 "$OUT/fixes.txt" | tr '\n' ' ')(see $OUT/fixes.txt)"
note "${#built[@]} tests built, $(wc -l < "$OUT/unbuilt.txt") not (see $OUT/unbuilt.txt); archive: $OUT/mm-selftests.cpio ($(du -k "$OUT/mm-selftests.cpio" | cut -f1) KiB)"
