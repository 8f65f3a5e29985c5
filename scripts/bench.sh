#!/usr/bin/env bash
# bench.sh: what the series costs against no profiling and against stock
# Linux 6.12. Builds, for two kernel configurations, the kernel without
# profiling (baseline), stock 6.12.117 with profiling (stock, from the
# assembled tree's tag "base"), the series (profiling) and the series on
# Debian's page->flags layout (profiling+layout-debian); boots eight
# guest configurations of each the same way (512 MiB, 2 vCPUs, TCG), runs
# every benchmark and writes bench/results/<date>-<host>.md, .json and a
# plot (.png).
#
# Kernel configurations ("sets"):
#   minimal   base.config + mm.config + the build's own fragment
#   distro    the same + distro.config: the options of Debian's kernel
#             that add work to the allocation and free paths
#
# Phases (every configuration in each, one after the other, so that the
# figures compared are taken side by side in one run):
#   1. -icount shift=0 (guest clock = instructions, exactly repeatable):
#      instructions to userspace, memory after boot, the microbenchmark
#      (tests/modules/pftag_bench.c), perf stat of hackbench (on one
#      vCPU) and of a page-fault loop; the baseline booted once more for
#      hackbench alone, to show how far it moves from boot to boot;
#      both sets.
#   2. the memory ledger, -icount too, a boot of its own: the bytes
#      profiling holds after boot and while a slab-heavy load holds
#      its objects (LEDGER_FILES tmpfs files, LEDGER_PAIRS AF_UNIX
#      socket pairs), with the slab in /proc/meminfo; both sets.
#   3. the cache model: the microbenchmark again, with the TCG plugin
#      bench/plugin/pftag-cache.c counting loads, stores and misses of a
#      modelled cache inside the measured loops only; both sets.
#   4. plain TCG, ROUNDS rounds (configurations interleaved): the same
#      microbenchmark and perf runs in wall-clock time; minimal set.
#   5. 4 GiB guests: memory after boot; minimal set.
#
# While the wall-clock guests run, the machine-wide kernel build lock is
# held, so that no kernel build of this project (another clone, another
# work tree) competes with them for the host's cores; the host's load
# average before and after each phase goes into the results.
#
# Environment: NO_BUILD=1 (measure the kernels as they are built),
# ROUNDS (3), LOOPS_ICOUNT (20000), LOOPS_CACHE (4000),
# LOOPS_ICOUNT_DISTRO and LOOPS_CACHE_DISTRO (a tenth of those),
# LOOPS_WALL (50000), RUNS_WALL (3 runs per boot), LEDGER_FILES
# (100000), LEDGER_PAIRS (10000), SETS ("minimal distro"), OUT
# (build/bench), RESULTS (bench/results).
STEP=bench
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-3}
LOOPS_ICOUNT=${LOOPS_ICOUNT:-20000}
LOOPS_CACHE=${LOOPS_CACHE:-4000}
# The distro set zeroes every page it allocates (init_on_alloc): an
# order-0 pair costs about 4,900 instructions there and an order-9 pair
# about 2.1 million, 400 times the minimal set's; at 20,000 pairs one
# boot took 11 minutes. It runs a tenth of the loops.
LOOPS_ICOUNT_DISTRO=${LOOPS_ICOUNT_DISTRO:-$((LOOPS_ICOUNT / 10))}
LOOPS_CACHE_DISTRO=${LOOPS_CACHE_DISTRO:-$((LOOPS_CACHE / 10))}
LOOPS_WALL=${LOOPS_WALL:-50000}
RUNS_WALL=${RUNS_WALL:-3}
LEDGER_FILES=${LEDGER_FILES:-100000}
LEDGER_PAIRS=${LEDGER_PAIRS:-10000}
SETS=${SETS:-minimal distro}
OUT=${OUT:-$BUILD/bench}
RESULTS=${RESULTS:-$TOP/bench/results}
MEM=512M
CPUS=2

# name|build|kernel arguments; the order is the table's.
CONFIGS=(
	"baseline|baseline|"
	"stock-off|stock|sysctl.vm.mem_profiling=0"
	"stock|stock|"
	"off|profiling|sysctl.vm.mem_profiling=0"
	"page_ext|profiling|sysctl.vm.mem_profiling=1,page_ext"
	"page-flags|profiling|"
	"fallback|profiling|mem_profiling_idx_bits=8"
	"debian-layout|profiling+layout-debian|"
	"stock-debian-layout|stock+layout-debian|"
	"baseline-debian-layout|baseline+layout-debian|"
)
# The kernels built for each set: NAME[+FRAGMENT...] (scripts/config).
# profiling+layout-debian has Debian's page->flags layout (1 spare bit):
# the series keeps page tags in page_ext there by itself.
# stock+layout-debian is stock 6.12 on that layout, which costs every
# kernel instructions of its own (1024 nodes: longer node masks to walk),
# the like-with-like comparison for debian-layout; baseline+layout-debian
# is no profiling on that layout, what both are measured against.
BUILDS="baseline profiling stock profiling+layout-debian stock+layout-debian baseline+layout-debian"
# build_frags B SET-FRAGMENTS: the FRAGMENTS of build B in a set.
build_frags() { local x=""; [[ $1 != *+* ]] || x=${1#*+}; echo ${x//+/ } $2; }
# set_loops SET N N_DISTRO: the loops of a phase in SET.
set_loops() { if [ "$1" = distro ]; then echo "$3"; else echo "$2"; fi; }
set_fragments() { case $1 in minimal) echo "" ;; distro) echo distro ;; *) die "unknown set $1" "use minimal or distro" ;; esac; }

command -v gnuplot > /dev/null || die "gnuplot is not installed" "run 'make deps' (as root)"
[ -x /usr/bin/perf ] || die "perf is not installed" "run 'make deps' (as root): Debian's linux-perf"

start=$(date +%s)
# Stock 6.12: the pristine base of the assembled tree, in a work tree of
# its own (build/linux-stock), built with the same fragments.
STOCK=$BUILD/linux-stock
[ -e "$STOCK/.git" ] || git -C "$TREE" worktree add -q --detach "$STOCK" base
git -C "$STOCK" checkout -q --detach base
for s in $SETS; do
	f=$(set_fragments "$s")
	for b in $BUILDS; do
		fr=$(build_frags "$b" "$f")
		id=$(obj_id "${b%%+*}" "$fr")
		if [ "${NO_BUILD:-0}" = 1 ]; then
			[ -f "$BUILD/obj/$id/.pftag-built" ] ||
				die "NO_BUILD=1, but build/obj/$id is not built" "run make bench without NO_BUILD"
		elif [ "${b%%+*}" = stock ]; then
			FRAGMENTS=$fr TREE=$STOCK "$TOP/scripts/build.sh" stock
		else
			FRAGMENTS=$fr "$TOP/scripts/build.sh" "${b%%+*}"
		fi
		"$TOP/scripts/initramfs.sh" "$id"
	done
done
"$TOP/scripts/qemu-plugin.sh"

rm -rf "$OUT"
mkdir -p "$OUT"
# The series the kernels were built from, now: the tree may move on while
# the guests run.
git -C "$TREE" describe --always --tags HEAD > "$OUT/series-head" 2> /dev/null || true
# The benchmark's userland, unpacked over the build's initramfs only on
# these boots (-x): perf with the shared libraries it links, at their
# host paths, and the static helpers.
root=$OUT/guest-root
mkdir -p "$root/opt/pftag/bench"
gcc -O2 -static -o "$root/opt/pftag/bench/pftag-clock" "$TOP/bench/guest/pftag-clock.c"
gcc -O2 -static -o "$root/opt/pftag/bench/pftag-faults" "$TOP/bench/guest/pftag-faults.c"
gcc -O2 -static -o "$root/opt/pftag/bench/pftag-slab" "$TOP/bench/guest/pftag-slab.c"
install -m 755 "$TOP/bench/guest/run-bench" "$root/opt/pftag/bench/run-bench"
install -m 755 "$TOP/bench/guest/pftag-ledger" "$root/opt/pftag/bench/pftag-ledger"
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

boot() { # boot NAME BUILD-ID APPEND DIR [boot.sh options] -- WHAT LOOPS RUNS
	local name=$1 build=$2 append=$3 dir=$4
	shift 4
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	note "${dir#"$OUT"/}"
	"$TOP/scripts/boot.sh" -k "$build" -c "$CPUS" -x "$OUT/bench.cpio" -t 1800 -q \
		-o "$dir" -a "$append" "${opts[@]}" \
		"LEDGER_FILES=$LEDGER_FILES LEDGER_PAIRS=$LEDGER_PAIRS /opt/pftag/bench/run-bench $*" ||
		die "the $name guest failed (logs in $dir)" "see $dir/console.log"
}

load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg"; }

# 1. Instructions.
load icount-start
for s in $SETS; do
	f=$(set_fragments "$s")
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name build append <<< "$c"
		boot "$name" "$(obj_id "$build" "$f")" "$append" "$OUT/$s/icount/$name" -m "$MEM" -i -- \
			clock,info,micro,hackbench,faults,memcg \
			"$(set_loops "$s" "$LOOPS_ICOUNT" "$LOOPS_ICOUNT_DISTRO")" 3
	done
	# hackbench's boot-to-boot repeatability: the baseline booted again.
	boot baseline "$(obj_id baseline "$f")" "" "$OUT/$s/icount/baseline-again" -m "$MEM" -i -- \
		hackbench 0 3
done
load icount-end
# 2. The memory ledger. A boot of its own: its "after boot" figures
#    follow nothing but boot, and the load's objects stay out of the
#    other phases.
for s in $SETS; do
	f=$(set_fragments "$s")
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name build append <<< "$c"
		boot "$name" "$(obj_id "$build" "$f")" "$append" "$OUT/$s/ledger/$name" -m "$MEM" -i -- \
			ledger 0 0
	done
done
# 3. Memory traffic: the cache model, inside the measured loops.
for s in $SETS; do
	f=$(set_fragments "$s")
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name build append <<< "$c"
		d=$OUT/$s/cache/$name
		mkdir -p "$OUT/$s/cache"
		boot "$name" "$(obj_id "$build" "$f")" "$append" "$d" -m "$MEM" -i \
			-p "out=$OUT/$s/cache/$name.log,warm=on" -- \
			micro "$(set_loops "$s" "$LOOPS_CACHE" "$LOOPS_CACHE_DISTRO")" 3
		mv "$OUT/$s/cache/$name.log" "$d/cache.log"
	done
done
# 4. Wall-clock time, configurations interleaved round by round. The
#    counts of phases 1 to 3 do not depend on the host's load; this
#    phase does, so it holds the machine-wide kernel build lock, and no
#    kernel build of this project competes with it for the host's cores.
exec 8> "${PFTAG_BUILD_LOCK:-/tmp/pftag-kernel-build.lock}"
if [ "$ROUNDS" -gt 0 ] && ! flock -n 8; then
	note "a kernel build is running on this machine: waiting for it before timing"
	flock 8
fi
[ "$ROUNDS" -eq 0 ] || load wall-start
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		IFS='|' read -r name build append <<< "$c"
		boot "$name" "$build" "$append" "$OUT/minimal/wall/$r/$name" -m "$MEM" -- \
			micro,hackbench,faults "$LOOPS_WALL" "$RUNS_WALL"
	done
done
[ "$ROUNDS" -eq 0 ] || load wall-end
# 5. Memory of a larger guest.
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r name build append <<< "$c"
	boot "$name" "$build" "$append" "$OUT/minimal/mem4g/$name" -m 4G -- info 0 0
done

for s in $SETS; do
	f=$(set_fragments "$s")
	for b in $BUILDS; do
		id=$(obj_id "${b%%+*}" "$(build_frags "$b" "$f")")
		size "$BUILD/obj/$id/vmlinux" | tail -n 1 > "$OUT/size-$id"
		cp "$BUILD/obj/$id/.config" "$OUT/config-$id"
		cat "$BUILD/obj/$id/.pftag-built" > "$OUT/release-$id"
	done
done
flock -u 8
secs=$(($(date +%s) - start))

host=$(hostname -s)
mkdir -p "$RESULTS"
# The previous run (PREVIOUS= names another): of the results already
# there, the newest by name, YYYY-MM-DD-HOST then -runN (none is run 1).
# Not the newest file: a clone gives every file the same time; nor the
# run of the most patches: the series was once longer than it is now.
prev=${PREVIOUS:-$(python3 - "$RESULTS" <<'PY'
import glob, os, re, sys
best = None
for f in glob.glob(os.path.join(sys.argv[1], "*.json")):
    m = re.match(r"(\d{4}-\d{2}-\d{2})-.*?(?:-run(\d+))?\.json$", os.path.basename(f))
    if not m:
        continue
    key = (m.group(1), int(m.group(2) or 1))
    if best is None or key > best[0]:
        best = (key, f)
print(best[1] if best else "")
PY
)}
# A run does not overwrite an earlier one of the same day and host.
base=$RESULTS/$(date +%Y-%m-%d)-$host
n=2
while [ -e "$base.json" ] || [ -e "$base.md" ]; do
	base=$RESULTS/$(date +%Y-%m-%d)-$host-run$n
	n=$((n + 1))
done
python3 "$TOP/scripts/bench-report.py" --out "$OUT" --md "$base.md" --png "$base.png" \
	--json "$base.json" ${prev:+--previous "$prev"} \
	--seconds "$secs" --rounds "$ROUNDS" --sets "$SETS" --configs "$(printf '%s\n' "${CONFIGS[@]}")"
note "results: ${base#"$TOP"/}.md, .json and .png ($secs s)"
