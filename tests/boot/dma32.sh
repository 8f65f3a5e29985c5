#!/usr/bin/env bash
# The tag blocks of a SLAB_CACHE_DMA32 cache's slabs come from kmalloc
# (1024-byte objects leave no space in the slab), and a new slab's flags
# carry the cache's __GFP_DMA32: the block's flags must keep only how hard
# to try and where, or kmalloc() reports "Unexpected gfp ... Fix your
# code!" with a stack dump as it makes a slab for the blocks. It does so
# only when its first try, a slab on the block's node with GFP_NOWAIT |
# __GFP_THISNODE, fails, which memory pressure makes happen: here
# fail_page_alloc fails every non-sleeping page allocation of the task
# that loads pftag_dma32 (tests/modules/pftag_dma32.c), which allocates
# 8192 objects, about 2,000 blocks. The debug build (it has fault
# injection), in both storages; every object allocated, no report.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/dma32
if ! out=$(build_profiling debug); then
	fail "the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
	done_testing
fi
F=/sys/kernel/debug/fail_page_alloc
script="
for a in 'task-filter 1' 'probability 100' 'interval 1' 'times -1' 'space 0' 'min-order 0' 'ignore-gfp-wait Y' 'ignore-gfp-highmem N' 'verbose 0'; do
	set -- \$a; echo \$2 > $F/\$1
done
echo '== faults'; cat $F/probability $F/ignore-gfp-wait
(echo 1 > /proc/self/make-it-fail; exec insmod /opt/pftag/modules/pftag_dma32.ko n=8192)
echo '== loaded'; dmesg | grep 'pftag_dma32: allocated' | sed 's/.*pftag_dma32: //'
echo '== report'; dmesg | grep -A3 'Unexpected gfp' || true
echo '== end'
"
for mode in flags page_ext; do
	append=$(mode_append "$mode")
	guest profiling+debug "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: fail_page_alloc fails the loader's non-sleeping allocations" "100 Y" "$(section faults "$f" | tr '\n' ' ' | sed 's/ $//')"
	eq "$mode: every object allocated and freed" "allocated and freed 8192 of 8192 objects" "$(section loaded "$f")"
	eq "$mode: no 'Unexpected gfp' report from a tag block's kmalloc" "" "$(section report "$f")"
done
done_testing
