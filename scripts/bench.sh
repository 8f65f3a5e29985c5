#!/usr/bin/env bash
# bench.sh: what page-flags mode costs against page_ext and against no
# profiling. Builds the profiling and baseline kernels, boots five
# configurations the same way (512 MiB, 2 vCPUs, TCG), runs every
# benchmark and writes bench/results/<date>-<host>.md and a plot (.png).
#
# Phases (every configuration in each, one after the other, so that the
# figures compared are taken side by side in one run):
#   1. -icount shift=0 (guest clock = instructions, exactly repeatable):
#      instructions to userspace, memory after boot, the microbenchmark
#      (tests/modules/pftag_bench.c), perf stat of hackbench and of a
#      page-fault loop.
#   2. plain TCG, ROUNDS rounds (configurations interleaved): the same
#      microbenchmark and perf runs in wall-clock time.
#   3. 4 GiB guests: memory after boot.
#
# While the guests run, the machine-wide kernel build lock is held, so
# that no kernel build of this project (another clone, another work tree)
# competes with them for the host's cores; the host's load average before
# and after each phase goes into the results.
#
# Environment: ROUNDS (5), LOOPS_ICOUNT (20000), LOOPS_WALL (50000),
# RUNS_WALL (3 runs per boot), OUT (build/bench), RESULTS (bench/results).
STEP=bench
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-5}
LOOPS_ICOUNT=${LOOPS_ICOUNT:-20000}
LOOPS_WALL=${LOOPS_WALL:-50000}
RUNS_WALL=${RUNS_WALL:-3}
OUT=${OUT:-$BUILD/bench}
RESULTS=${RESULTS:-$TOP/bench/results}
MEM=512M
CPUS=2

# name|build|kernel arguments; the order is the table's.
CONFIGS=(
	"baseline|baseline|"
	"off|profiling|sysctl.vm.mem_profiling=0"
	"page_ext|profiling|sysctl.vm.mem_profiling=1,page_ext"
	"page-flags|profiling|"
	"fallback|profiling|mem_profiling_idx_bits=8"
)

command -v gnuplot > /dev/null || die "gnuplot is not installed" "run 'make deps' (as root)"
[ -x /usr/bin/perf ] || die "perf is not installed" "run 'make deps' (as root): Debian's linux-perf"

start=$(date +%s)
for b in baseline profiling; do
	"$TOP/scripts/build.sh" "$b"
	"$TOP/scripts/initramfs.sh" "$b"
done

# The benchmark's userland, unpacked over the build's initramfs only on
# these boots (-x): perf with the shared libraries it links, at their
# host paths, and two static helpers.
rm -rf "$OUT"
mkdir -p "$OUT"
root=$OUT/guest-root
mkdir -p "$root/opt/pftag/bench"
gcc -O2 -static -o "$root/opt/pftag/bench/pftag-clock" "$TOP/bench/guest/pftag-clock.c"
gcc -O2 -static -o "$root/opt/pftag/bench/pftag-faults" "$TOP/bench/guest/pftag-faults.c"
install -m 755 "$TOP/bench/guest/run-bench" "$root/opt/pftag/bench/run-bench"
# Debian's /usr/bin/perf is the binary itself (linux-perf 6.1 on Debian
# 12); perf stat and perf bench need nothing of its version but the
# kernel's perf_event_open().
cp /usr/bin/perf "$root/opt/pftag/bench/perf"
ldd /usr/bin/perf | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet -R 0:0) > "$OUT/bench.cpio"

boot() { # boot NAME BUILD APPEND DIR [boot.sh options] -- WHAT LOOPS RUNS
	local name=$1 build=$2 append=$3 dir=$4
	shift 4
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	note "${dir#"$OUT"/}"
	"$TOP/scripts/boot.sh" -k "$build" -c "$CPUS" -x "$OUT/bench.cpio" -t 900 -q \
		-o "$dir" -a "$append" "${opts[@]}" "/opt/pftag/bench/run-bench $*" ||
		die "the $name guest failed (logs in $dir)" "see $dir/console.log"
}

exec 8> "${PFTAG_BUILD_LOCK:-/tmp/pftag-kernel-build.lock}"
if ! flock -n 8; then
	note "a kernel build is running on this machine: waiting for it before measuring"
	flock 8
fi
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg"; }

# 1. Instructions.
load icount-start
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r name build append <<< "$c"
	boot "$name" "$build" "$append" "$OUT/icount/$name" -m "$MEM" -i -- \
		clock,info,micro,hackbench,faults "$LOOPS_ICOUNT" 2
done
load icount-end
# 2. Wall-clock time, configurations interleaved round by round.
load wall-start
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name build append <<< "$c"
		boot "$name" "$build" "$append" "$OUT/wall/$r/$name" -m "$MEM" -- \
			micro,hackbench,faults "$LOOPS_WALL" "$RUNS_WALL"
	done
done
load wall-end
# 3. Memory of a larger guest.
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r name build append <<< "$c"
	boot "$name" "$build" "$append" "$OUT/mem4g/$name" -m 4G -- info 0 0
done

for b in baseline profiling; do
	size "$BUILD/obj/$b/vmlinux" | tail -n 1 > "$OUT/size-$b"
	cp "$BUILD/obj/$b/.config" "$OUT/config-$b"
	cat "$BUILD/obj/$b/.pftag-built" > "$OUT/release-$b"
done
flock -u 8
secs=$(($(date +%s) - start))

host=$(hostname -s)
base=$RESULTS/$(date +%Y-%m-%d)-$host
mkdir -p "$RESULTS"
python3 "$TOP/scripts/bench-report.py" --out "$OUT" --md "$base.md" --png "$base.png" \
	--seconds "$secs" --rounds "$ROUNDS" --configs "$(printf '%s\n' "${CONFIGS[@]}")"
note "results: ${base#"$TOP"/}.md and .png ($secs s)"
