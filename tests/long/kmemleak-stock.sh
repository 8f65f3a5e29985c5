#!/usr/bin/env bash
# /proc/allocinfo with kmemleak on reads as stock 6.12's: the debug
# builds of the series and of stock 6.12 (FRAGMENTS=debug: kmemleak built
# in, off by default), booted with kmemleak=on, run the same module
# workload: pftag_pages (orders 0 and 2) and pftag_slab (objects on every
# slab path, 64 a path). Every call site of the two modules reads the same
# bytes and calls in both kernels, loaded and after the frees, in both
# page tag storage modes of the series. kmemleak's metadata of each
# object comes from its own SLAB_NOLEAKTRACE caches through the _noprof
# calls of mm/kmemleak.c, which has no call site of its own: charged to
# the allocation that kmemleak tracks (current's tag), it would show as
# more bytes at the workload's call sites than stock has.
#
# Not part of `make test`: stock's debug build (build/linux-stock, the
# assembled tree's tag "base", as `make bench` builds stock; about 12
# minutes cold) and three boots. Run it as tests/long/kmemleak-stock.sh.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/kmemleak-stock
TREE=${TREE:-$BUILD/linux}
STOCK=$BUILD/linux-stock
mods=/opt/pftag/modules

if ! out=$(build_profiling debug); then
	fail "the series' debug build builds" "$out"
	done_testing
fi
[ -e "$STOCK/.git" ] || git -C "$TREE" worktree add -q --detach "$STOCK" base
git -C "$STOCK" checkout -q --detach base
if ! out=$(FRAGMENTS=debug TREE=$STOCK "$TOP/scripts/build.sh" stock 2>&1 &&
	"$TOP/scripts/initramfs.sh" stock+debug 2>&1); then
	fail "stock 6.12's debug build builds" "$(tail -20 <<< "$out")"
	done_testing
fi

sites='pftag_(pages|slab)\.c:'
script="
k=/sys/kernel/debug/kmemleak
echo '== kmemleak'
if echo scan > \$k; then echo on; else echo off; fi
insmod $mods/pftag_pages.ko counts=4,0,2
insmod $mods/pftag_slab.ko n=64
echo '== loaded'
grep -E '$sites' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_slab/free
echo 1 > /sys/kernel/debug/pftag_pages/free
echo '== freed'
grep -E '$sites' /proc/allocinfo
echo '== end'"

# sites_of RUN SECTION: bytes, calls and call site of each line, sorted;
# a module's file without the build directory it was built in, which
# differs between the kernels.
sites_of() {
	section "$2" "$o/$1/out.log" | awk '{ sub(/.*\//, "", $3); print $1, $2, $3, $4 }' | sort -k3
}

guest stock+debug "$o/stock" "kmemleak=on" "$script" || done_testing
eq "stock: kmemleak is on" on "$(section kmemleak "$o/stock/out.log")"
n=$(sites_of stock loaded | awk '$1 != 0' | wc -l)
check "stock: the workload's call sites hold memory ($n)" test "$n" -ge 10
for mode in flags page_ext; do
	guest profiling+debug "$o/$mode" "kmemleak=on $(mode_append "$mode")" "$script" || continue
	eq "$mode: kmemleak is on" on "$(section kmemleak "$o/$mode/out.log")"
	for s in loaded freed; do
		eq "$mode: $s: every call site of the workload reads as stock's" \
			"$(sites_of stock "$s")" "$(sites_of "$mode" "$s")"
	done
done
done_testing
