#!/usr/bin/env bash
# tests/run.sh [PATTERN]: build the profiling kernel, run every test
# script (tests/host/*.sh, then the boot tests tests/boot/*.sh) whose path
# contains PATTERN, count the TAP results and print "N passed, N failed,
# N skipped". Exits non-zero when anything failed.
#
# With ARCH set to another architecture than x86_64 (scripts/lib.sh), the
# kernels are built for it, and only the tests whose header has the line
# "# Architectures: any", or one that names ARCH ("# Architectures:
# arm64"), run: the others are x86_64's (the distribution layouts, the
# benchmark, the x86_64 guest programs); the summary says how many were
# left out.
#
# A whole run on x86_64 ends with the arm64 part: this script again with
# ARCH=arm64 and ARM64_PART=1, its results counted with the rest: the tests
# marked for arm64 on the profiling kernel only (tests/lib.sh's
# arm64_part_skip(): its other kernels, the debug build and the GKI
# layout's, take `make test ARCH=arm64`). ARM64=0 leaves it out (make test
# ARM64=0); make test installs and builds what it needs. Its logs overwrite
# the x86_64 ones of the same tests in build/test (build/test/arm64.log
# keeps its output).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
pat=${1:-}
mkdir -p build/test
pass=0 failed=0 skipped=0
failures=()
ARCH=${ARCH:-x86_64}
left_out=0
# for_arch TEST: whether TEST runs for $ARCH.
for_arch() {
	[ "$ARCH" = x86_64 ] || grep -qxE "# Architectures: (any|([a-z0-9_]+ )*$ARCH( [a-z0-9_]+)*)" "$1" ||
		{ left_out=$((left_out + 1)); return 1; }
}

run_one() {
	local t=$1 name log rc=0 t0=$SECONDS
	name=${t#tests/}
	name=${name%.sh}
	log=build/test/${name//\//-}.log
	echo "== $name"
	"$t" > "$log" 2>&1 || rc=$?
	echo "-- $name: $((SECONDS - t0)) s"
	grep -E '^(not )?ok |^#' "$log" | grep -v '^# ' || true
	grep -E '^#   ' "$log" | head -40 || true
	local p f s
	p=$(grep -E '^ok ' "$log" | grep -vc '# SKIP')
	s=$(grep -Ec '^ok .*# SKIP' "$log")
	f=$(grep -Ec '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited $rc without reporting a failure (log: $log)"
		tail -n 20 "$log" | sed 's/^/#   /'
		f=1
	fi
	pass=$((pass + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" -eq 0 ] || failures+=("$name (log: $log)")
}

# The profiling kernel first: the boot tests and some host checks use it.
built=0
if scripts/build.sh profiling && scripts/initramfs.sh "$(. tests/lib.sh && profiling_id "")"; then
	built=1
else
	echo "not ok - the profiling kernel did not build: no boot test can run"
	failed=$((failed + 1))
	failures+=("kernel build")
fi

# The other kernels the boot tests need, the debug build, the generic
# KASAN build (tests/boot/slab.sh) and the debug build of each layout in
# LAYOUTS (tests/lib.sh), build in the background meanwhile, niced: the
# host tests and the first boot tests leave a core mostly idle (a guest
# runs on one host thread). Each kernel built in a run gets a mark in
# build/test/prebuilt (tests/lib.sh's build_profiling()), so a test that
# needs it goes on at once; a test that needs one not built yet waits for
# that kernel's lock and builds it itself if the background build has
# not (the background then finds the mark). Only for the whole suite: a
# PATTERN run builds what its tests ask for.
rm -rf build/test/prebuilt
mkdir -p build/test/prebuilt
PFTAG_TEST_RUN=$$.$(date +%s)
export PFTAG_TEST_RUN
prebuild_pid=""
if [ "$built" = 1 ] && [ -z "$pat" ] && [ -z "${ARM64_PART:-}" ]; then
	(
		. tests/lib.sh
		renice -n 10 -p "$BASHPID" > /dev/null
		kernels=(debug kasan-generic)
		for l in $LAYOUTS; do kernels+=("$(layout_frags "$l")"); done
		for frags in "${kernels[@]}"; do
			build_profiling "$frags" || exit 1
			echo "built $(profiling_id "$frags")"
		done
	) > build/test/prebuild.log 2>&1 &
	prebuild_pid=$!
fi

for t in tests/host/*.sh; do
	[ -z "$pat" ] || [[ $t == *$pat* ]] || continue
	for_arch "$t" || continue
	run_one "$t"
done

# The boot tests that need only the profiling kernel first, then those
# that need the debug build, then those that need a layout's: the later
# ones find their kernels built in the background meanwhile.
boot_tests=$(for t in tests/boot/*.sh; do
	if grep -q build_layout "$t"; then echo "2 $t"
	elif grep -q build_profiling "$t"; then echo "1 $t"
	else echo "0 $t"; fi
done | sort -s -k1,1n | cut -d' ' -f2)
for t in $boot_tests; do
	[ -z "$pat" ] || [[ $t == *$pat* ]] || continue
	[ "$built" = 1 ] || continue
	for_arch "$t" || continue
	run_one "$t"
done

# The background build is done by now (the tests that needed its kernels
# waited for the build lock); a failure of it shows in those tests.
[ -z "$prebuild_pid" ] || wait "$prebuild_pid" ||
	echo "# the background build of the debug kernels failed (log: build/test/prebuild.log)"

# The arm64 part: its own kernels, the tests marked for arm64.
if [ "$ARCH" = x86_64 ] && [ -z "$pat" ] && [ "${ARM64:-1}" != 0 ]; then
	echo
	echo "== the arm64 part (ARM64=0 leaves it out)"
	t0=$SECONDS
	out=build/test/arm64.log
	if ! command -v aarch64-linux-gnu-gcc > /dev/null; then
		echo "not ok - the arm64 part: aarch64-linux-gnu-gcc is not installed: run 'make deps ARCH=arm64' (as root), or make test ARM64=0"
		failed=$((failed + 1))
		failures+=("the arm64 part (no cross compiler)")
	else
		ARCH=arm64 ARM64_PART=1 tests/run.sh > "$out" 2>&1
		grep -E '^(not ok|== |-- )|^#   ' "$out" | head -200
		if summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out" | tail -1) && [ -n "$summary" ]; then
			read -r p _ f _ s _ <<< "$summary"
			pass=$((pass + p)) failed=$((failed + f)) skipped=$((skipped + s))
			[ "$f" -eq 0 ] || failures+=("the arm64 part (log: $out)")
			echo "-- arm64 part: $summary"
		else
			echo "not ok - the arm64 part ended without a summary (log: $out)"
			tail -n 20 "$out" | sed 's/^/#   /'
			failed=$((failed + 1))
			failures+=("the arm64 part (log: $out)")
		fi
	fi
	echo "-- arm64 part: $((SECONDS - t0)) s"
fi

echo
[ "$left_out" = 0 ] || echo "ARCH=$ARCH: $left_out tests are x86_64's only and were not run (make test without ARCH runs them)"
echo "$pass passed, $failed failed, $skipped skipped ($((SECONDS / 60)) min $((SECONDS % 60)) s)"
if [ $failed -gt 0 ]; then
	printf 'failed: %s\n' "${failures[@]}"
	exit 1
fi
