#!/usr/bin/env bash
# bench-arm64.sh: `make bench ARCH=arm64`, what the series costs on arm64
# against no profiling and against stock Linux 6.12, in instructions.
# Builds, for arm64 (minimal set: base.config + mm.config + arch-arm64),
# the kernel without profiling (baseline), stock 6.12 with profiling
# (from the assembled tree's tag "base", in build/linux-stock), the
# series (profiling), and the series with the read barrier of the free
# path made a compiler barrier (profiling+no-rmb, in build/linux-no-rmb:
# a measurement of what smp_rmb(), a "dmb ishld" on arm64, costs, not a
# kernel to run: the barrier orders a freed page's index before the
# counter table it indexes). Each configuration boots in
# qemu-system-aarch64 -M virt -cpu max, 512 MiB, 2 vCPUs, TCG,
# -icount shift=0 (the guest clock counts instructions, so a figure
# repeats exactly), runs the microbenchmark (tests/modules/pftag_bench.c)
# and, in a boot of its own, the memory ledger after boot.
#
# What x86_64's make bench has and this has not: the distribution-like
# set and Debian's layout (x86_64 configs), perf (Debian's perf is the
# host's x86_64 binary), the instructions to userspace (read from x86's
# TSC), the cache model and the wall-clock phase.
#
# Writes bench/results/<date>-<host>-arm64.md (and -runN after the
# first of a day). Environment: NO_BUILD=1, LOOPS (20000), RUNS (3),
# OUT (build/bench-arm64), RESULTS (bench/results).
STEP=bench
. "$(dirname "$0")/lib.sh"

[ "$PFTAG_ARCH" = arm64 ] || die "bench-arm64.sh measures arm64 kernels, not ARCH=$PFTAG_ARCH" \
	"run make bench ARCH=arm64, or make bench for x86_64"
arch_need_gcc arm64
LOOPS=${LOOPS:-20000}
RUNS=${RUNS:-3}
OUT=${OUT:-$BUILD/bench-arm64}
RESULTS=${RESULTS:-$TOP/bench/results}

# name|build|kernel arguments, in the table's order.
CONFIGS=(
	"baseline|baseline|"
	"stock|stock|"
	"off|profiling|sysctl.vm.mem_profiling=0"
	"page_ext|profiling|sysctl.vm.mem_profiling=1,page_ext"
	"page-flags|profiling|"
	"page_ext-no-rmb|profiling+no-rmb|sysctl.vm.mem_profiling=1,page_ext"
	"page-flags-no-rmb|profiling+no-rmb|"
)

start=$(date +%s)
STOCK=$BUILD/linux-stock
NORMB=$BUILD/linux-no-rmb
[ -e "$STOCK/.git" ] || git -C "$TREE" worktree add -q --detach "$STOCK" base
git -C "$STOCK" checkout -q --detach base
# The series as assembled, its two smp_rmb() of the free path (both in
# mm/alloc_tag_storage.h) replaced by barrier().
head=$(git -C "$TREE" rev-parse HEAD)
[ -e "$NORMB/.git" ] || git -C "$TREE" worktree add -q --detach "$NORMB" "$head"
git -C "$NORMB" checkout -q -f --detach "$head"
h=$NORMB/mm/alloc_tag_storage.h
[ "$(grep -c '^	smp_rmb();$' "$h")" = 2 ] ||
	die "mm/alloc_tag_storage.h does not have the two smp_rmb() the no-rmb build replaces" \
		"update scripts/bench-arm64.sh to the series"
sed -i 's|^	smp_rmb();$|	barrier(); /* make bench ARCH=arm64: no smp_rmb() */|' "$h"

id_of() { obj_id "${1%%+*}" "$([[ $1 != *+* ]] || echo "${1#*+}")"; }
if [ "${NO_BUILD:-0}" != 1 ]; then
	"$TOP/scripts/build.sh" baseline
	TREE=$STOCK "$TOP/scripts/build.sh" stock
	"$TOP/scripts/build.sh" profiling
	TREE=$NORMB BUILD_ID=$(id_of profiling+no-rmb) "$TOP/scripts/build.sh" profiling
fi
for b in baseline stock profiling profiling+no-rmb; do
	[ -f "$BUILD/obj/$(id_of "$b")/.pftag-built" ] ||
		die "build/obj/$(id_of "$b") is not built" "run make bench ARCH=arm64 without NO_BUILD"
	"$TOP/scripts/initramfs.sh" "$(id_of "$b")"
done

# The benchmark's guest side over each build's initramfs: run-bench and
# the ledger's scripts, and the slab load cross-built.
rm -rf "$OUT"
root=$OUT/guest-root
mkdir -p "$root/opt/pftag/bench"
install -m 755 "$TOP/bench/guest/run-bench" "$TOP/bench/guest/pftag-ledger" "$root/opt/pftag/bench/"
"$(arch_cross arm64)gcc" -O2 -static -o "$root/opt/pftag/bench/pftag-slab" "$TOP/bench/guest/pftag-slab.c"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet -R 0:0) > "$OUT/bench.cpio"

boot() { # boot NAME BUILD APPEND DIR -- WHAT LOOPS RUNS
	local name=$1 build=$2 append=$3 dir=$4
	shift 5
	note "${dir#"$OUT"/}"
	"$TOP/scripts/boot.sh" -k "$(id_of "$build")" -c 2 -m 512M -i -x "$OUT/bench.cpio" -t 3600 -q \
		-o "$dir" -a "$append" "/opt/pftag/bench/run-bench $*" ||
		die "the $name guest failed (logs in $dir)" "see $dir/console.log"
}
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r name build append <<< "$c"
	boot "$name" "$build" "$append" "$OUT/minimal/icount/$name" -- info,micro "$LOOPS" "$RUNS"
done
for c in "${CONFIGS[@]}"; do
	IFS='|' read -r name build append <<< "$c"
	boot "$name" "$build" "$append" "$OUT/minimal/ledger/$name" -- info,ledger 0 0
done
for b in baseline stock profiling profiling+no-rmb; do
	cat "$BUILD/obj/$(id_of "$b")/.pftag-built" > "$OUT/release-$b"
done
# The read barriers of each build's kernel (dmb ishld, smp_rmb() on
# arm64), for the report: the no-rmb build has the free path's fewer.
for b in profiling profiling+no-rmb; do
	"$(arch_cross arm64)objdump" -d --no-show-raw-insn "$BUILD/obj/$(id_of "$b")/vmlinux" |
		grep -c 'dmb[[:space:]]*ishld' > "$OUT/rmb-$b" || true
done
git -C "$TREE" describe --always --tags HEAD > "$OUT/series-head" 2> /dev/null || true
secs=$(($(date +%s) - start))

mkdir -p "$RESULTS"
base=$RESULTS/$(date +%Y-%m-%d)-$(hostname -s)-arm64
n=2
while [ -e "$base.md" ]; do
	base=$RESULTS/$(date +%Y-%m-%d)-$(hostname -s)-arm64-run$n
	n=$((n + 1))
done
python3 "$TOP/scripts/bench-arm64-report.py" --out "$OUT" --md "$base.md" --seconds "$secs" \
	--configs "$(printf '%s\n' "${CONFIGS[@]}")"
note "results: ${base#"$TOP"/}.md ($secs s)"
