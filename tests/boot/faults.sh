#!/usr/bin/env bash
# Fault injection (CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAILSLAB, their debugfs
# files and the stack-trace filter, in the debug build), in both storage
# modes, the debug checks on:
#   1. a module loads while every allocation made by the code that grows
#      the module index map fails (the filter's range is that function,
#      from /proc/kallsyms): the module loads, all of its tags are counted
#      as unindexed and its page allocations as unindexed, charged to no
#      tag; its unload gives everything back, and loaded again without
#      faults it gets indices and exact counters;
#   2. every page path of the in-tree test module test_alloc_tag
#      (CONFIG_TEST_ALLOC_TAG) while every allocation made from the
#      module's code fails: each command fails, no test_alloc_tag counter
#      moves; the same commands without faults then give the exact
#      counters (derived below), which go back to 0 when freed.
#   3. pftag_slab loads while every allocation of a slab's tag block
#      fails (the filter's range is slab_tag_block_create()): the objects
#      of its own new cache cannot be charged, and are counted as
#      untracked (slab_untracked_*), calls and bytes, instead of their
#      tags; freed, they uncharge nothing; loaded again without faults,
#      the same objects are charged exactly.
# Nothing may warn: no debug check, no WARNING, no BUG.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/faults
id=profiling+debug
P=4096
if ! out=$(build_profiling debug); then
	fail "the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
	done_testing
fi
ntags() { nm "$1" | grep -cE ' [dD] _alloc_tag(\.[0-9]+)?$'; }
pages_tags=$(ntags "$BUILD/obj/$id/testmods/pftag_pages.ko")
line0=$(site_line order0)
lineN=$(site_line orderN)
# pftag_pages counts=4,0,2: 4 order-0 pages and 2 order-2 allocations.
allocs=$((4 + 2)) pages=$((4 + 2 * 4))

# pftag_slab's objects a path, and the lines of its own cache's two sites.
slab_n=16
slab_src=$TOP/tests/modules/pftag_slab.c
slab_cache_line=$(grep -n '/\* SITE:cache \*/' "$slab_src" | cut -d: -f1)
slab_bulk_line=$(grep -n '/\* SITE:bulk \*/' "$slab_src" | cut -d: -f1)
slab_site() { awk -v l="pftag_slab.c:$2" '$3 ~ "/" l "$" || $3 == l { print $1, $2 }' <<< "$1"; }

# test_alloc_tag commands and what each leaves charged: site, bytes, calls.
cmds=(
	"pages 0 8|ops_pages|$((8 * P))|8"
	"pages 3 2|ops_pages|$((2 * 8 * P))|2"
	"bulk 16|ops_bulk|$((16 * P))|16"
	# 5 pages and 100 bytes: 6 pages kept, each a call
	"exact $((5 * P + 100)) 2|ops_exact|$((2 * 6 * P))|12"
	"split 2 2|ops_split|$((2 * 4 * P))|8"
	"folio 2 2|ops_folio|$((2 * 4 * P))|2"
	# 8 pages, one call each, and the 64-byte page array
	"vmalloc 8 2|ops_vmalloc|$((2 * (8 * P + 64)))|18"
	"movable 0 4|ops_movable|$((4 * P))|4"
)
declare -A want_bytes want_calls
list=""
for c in "${cmds[@]}"; do
	IFS='|' read -r cmd func b n <<< "$c"
	want_bytes[$func]=$((${want_bytes[$func]:-0} + b))
	want_calls[$func]=$((${want_calls[$func]:-0} + n))
	list="$list '$cmd'"
done

script="
S=/sys/kernel/debug/alloc_tag/storage
FP=/sys/kernel/debug/fail_page_alloc
FS=/sys/kernel/debug/failslab
M=/opt/pftag/modules
C=/sys/kernel/debug/test_alloc_tag/ctl
# inject START END: every page and slab allocation whose stack passes
# through [START, END) fails; stop: none does.
inject() {
	for d in \$FP \$FS; do
		echo N > \$d/ignore-gfp-wait; echo 0 > \$d/verbose
		echo \$1 > \$d/require-start; echo \$2 > \$d/require-end
		echo -1 > \$d/times; echo 100 > \$d/probability
	done
	echo N > \$FP/ignore-gfp-highmem; echo 0 > \$FP/min-order
}
stop() {
	for d in \$FP \$FS; do
		echo 0 > \$d/probability; echo 0 > \$d/require-start
		echo 0xffffffffffffffff > \$d/require-end
	done
}
# range SYMBOL: its address and the next higher symbol's.
range() {
	sort /proc/kallsyms | awk -v s=\"\$1\" 'a && \$1 != a { print \"0x\" a, \"0x\" \$1; exit }
		!a && \$3 == s { a = \$1 }'
}
# module_range MOD: from its lowest to its highest code symbol, and a page.
module_range() {
	sort /proc/kallsyms | awk -v m=\"[\$1]\" '\$4 == m && (\$2 == \"t\" || \$2 == \"T\") { if (!lo) lo = \$1; hi = \$1 }
		END { print \"0x\" lo, \"0x\" hi }' | { read lo hi; printf '%s 0x%x\n' \$lo \$((hi + 4096)); }
}
r=\$(range module_map_grow); [ -n \"\$r\" ] || r=\$(range alloc_tag_module_idx_get)
echo '== map-range'; echo \$r
echo '== boot'; cat \$S
inject \$r
insmod \$M/pftag_pages.ko counts=4,0,2; echo \"== insmod-rc\"; echo \$?
stop
echo '== loaded'; cat \$S
echo '== loaded-lines'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free
rmmod pftag_pages
echo '== unloaded'; cat \$S
insmod \$M/pftag_pages.ko counts=4,0,2
echo '== again'; cat \$S
echo '== again-lines'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free
rmmod pftag_pages
echo '== map-failure-reports'; dmesg | grep -cE 'page allocation failure|vmalloc error'

modprobe test_alloc_tag
r=\$(module_range test_alloc_tag)
echo '== ops-range'; echo \$r
inject \$r
echo '== ops-failed'
for c in $list; do
	if echo \"\$c\" > \$C 2> /dev/null; then echo \"succeeded: \$c\"; else echo \"failed: \$c\"; fi
done
stop
echo '== ops-held'; cat \$C
echo '== ops-lines-failed'; grep '\\[test_alloc_tag\\]' /proc/allocinfo
for c in $list; do echo \"\$c\" > \$C || echo \"command failed without faults: \$c\"; done
echo '== ops-lines'; grep '\\[test_alloc_tag\\]' /proc/allocinfo
echo 'free all' > \$C
echo '== ops-lines-freed'; grep '\\[test_alloc_tag\\]' /proc/allocinfo
rmmod test_alloc_tag

r=\$(range slab_tag_block_create)
echo '== block-range'; echo \$r
echo '== slab-boot'; cat \$S
inject \$r
insmod \$M/pftag_slab.ko n=$slab_n; echo '== slab-insmod-rc'; echo \$?
stop
echo '== slab-failed'; cat \$S
echo '== slab-size'; cat /sys/kernel/slab/pftag_slab_obj/slab_size
echo '== slab-lines-failed'; grep '\\[pftag_slab\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_slab/free
echo '== slab-lines-freed'; grep '\\[pftag_slab\\]' /proc/allocinfo
rmmod pftag_slab
insmod \$M/pftag_slab.ko n=$slab_n
echo '== slab-again'; cat \$S
echo '== slab-lines-again'; grep '\\[pftag_slab\\]' /proc/allocinfo
rmmod pftag_slab
echo '== negative'; awk 'NR > 2 && (\$1 < 0 || \$2 < 0)' /proc/allocinfo
echo '== end'"

for mode in flags page_ext; do
	append=$(mode_append "$mode")
	guest "$id" "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	b=$(section boot "$f")
	eq "$mode: storage" "$([ $mode = flags ] && echo page || echo page_ext)" "$(field storage "$b")"
	check "$mode: the map-growing code is found in /proc/kallsyms" grep -qE '^0x[0-9a-f]+ 0x[0-9a-f]+$' <(section map-range "$f")
	eq "$mode: the module loads while the index map cannot grow" 0 "$(section insmod-rc "$f")"
	eq "$mode: the failed map allocation is not reported as an allocation failure (it is handled)" \
		0 "$(section map-failure-reports "$f")"
	l=$(section loaded "$f")
	eq "$mode: the module index map did not grow" "0" "$(field module_map_entries "$l")"
	eq "$mode: one unindexed module load" "$(($(field unindexed_module_loads "$b") + 1))" "$(field unindexed_module_loads "$l")"
	eq "$mode: all $pages_tags tags of pftag_pages are unindexed" \
		"$(($(field unindexed_tags "$b") + pages_tags))" "$(field unindexed_tags "$l")"
	eq "$mode: its $allocs page allocations are counted as unindexed" \
		"$(($(field unindexed_allocations "$b") + allocs))" "$(field unindexed_allocations "$l")"
	eq "$mode: their $pages pages are counted as unindexed" \
		"$(($(field unindexed_pages "$b") + pages))" "$(field unindexed_pages "$l")"
	eq "$mode: its page allocations charged no tag" "0 0
0 0" "$(section loaded-lines "$f" | awk '{ print $1, $2 }')"
	u=$(section unloaded "$f")
	eq "$mode: the unload leaves no module index in use" 0 "$(field module_indices_used "$u")"
	eq "$mode: nor held" 0 "$(field module_indices_held_by_unloaded "$u")"
	eq "$mode: nor unindexed tags" "$(field unindexed_tags "$b")" "$(field unindexed_tags "$u")"
	a=$(section again "$f")
	eq "$mode: loaded again without faults, every tag is indexed" \
		"$(field unindexed_tags "$b")" "$(field unindexed_tags "$a")"
	check "$mode: and the map grew" test "$(field module_map_entries "$a")" -gt 0
	al=$(section again-lines "$f")
	eq "$mode: pftag_pages.c:$line0 has 4 pages in 4 calls" "$((4 * P)) 4" "$(tag_line "$al" "$line0" | awk '{ print $1, $2 }')"
	eq "$mode: pftag_pages.c:$lineN has 2 order-2 allocations" "$((2 * 4 * P)) 2" "$(tag_line "$al" "$lineN" | awk '{ print $1, $2 }')"

	read -r lo hi <<< "$(section ops-range "$f")"
	check "$mode: test_alloc_tag's code range, from /proc/kallsyms, is its code only (under 1 MiB)" \
		bash -c '[[ $1 =~ ^0x[0-9a-f]+$ && $2 =~ ^0x[0-9a-f]+$ ]] && (($2 > $1 && $2 - $1 < 1 << 20))' _ "$lo" "$hi"
	eq "$mode: every command fails while its allocations fail" "" "$(section ops-failed "$f" | grep -v '^failed: ')"
	eq "$mode: every command was tried" "${#cmds[@]}" "$(section ops-failed "$f" | grep -c '^failed: ')"
	eq "$mode: nothing is held after the failures" "" \
		"$(section ops-held "$f" | awk '$1 != "movable_pfns" && $2 != 0')"
	eq "$mode: no test_alloc_tag counter moved for the failed allocations" "" \
		"$(section ops-lines-failed "$f" | awk '$1 != 0 || $2 != 0')"
	ol=$(section ops-lines "$f")
	eq "$mode: every command succeeds without faults" "" "$(grep 'command failed' "$f")"
	for func in "${!want_bytes[@]}"; do
		eq "$mode: then func:$func holds ${want_bytes[$func]} bytes in ${want_calls[$func]} calls" \
			"${want_bytes[$func]} ${want_calls[$func]}" \
			"$(awk -v f="func:$func" '$5 == f { b += $1; c += $2 } END { print b + 0, c + 0 }' <<< "$ol")"
	done
	eq "$mode: every test_alloc_tag line is 0 once freed" "" \
		"$(section ops-lines-freed "$f" | awk '$1 != 0 || $2 != 0')"
	check "$mode: slab_tag_block_create is found in /proc/kallsyms" \
		grep -qE '^0x[0-9a-f]+ 0x[0-9a-f]+$' <(section block-range "$f")
	eq "$mode: pftag_slab loads while no tag block can be allocated" 0 "$(section slab-insmod-rc "$f")"
	sb=$(section slab-boot "$f") sf=$(section slab-failed "$f") sa=$(section slab-again "$f")
	osize=$(section slab-size "$f")
	ua=$(($(field slab_untracked_allocations "$sf") - $(field slab_untracked_allocations "$sb")))
	ub=$(($(field slab_untracked_bytes "$sf") - $(field slab_untracked_bytes "$sb")))
	check "$mode: the $((2 * slab_n)) objects of its own cache are counted untracked ($ua allocations)" \
		test "$ua" -ge $((2 * slab_n))
	check "$mode: with their bytes, $((2 * slab_n)) x $osize ($ub bytes)" \
		test "$ub" -ge $((2 * slab_n * osize))
	lf=$(section slab-lines-failed "$f")
	eq "$mode: its cache's sites charged nothing" "0 0
0 0" "$(slab_site "$lf" "$slab_cache_line"; slab_site "$lf" "$slab_bulk_line")"
	lf=$(section slab-lines-freed "$f")
	eq "$mode: freed, they uncharged nothing" "0 0
0 0" "$(slab_site "$lf" "$slab_cache_line"; slab_site "$lf" "$slab_bulk_line")"
	eq "$mode: loaded again without faults, nothing more is untracked" \
		"$(field slab_untracked_allocations "$sf")" "$(field slab_untracked_allocations "$sa")"
	lf=$(section slab-lines-again "$f")
	eq "$mode: and its cache's sites are charged exactly" "$((slab_n * osize)) $slab_n
$((slab_n * osize)) $slab_n" "$(slab_site "$lf" "$slab_cache_line"; slab_site "$lf" "$slab_bulk_line")"
	eq "$mode: no tag is negative" "" "$(section negative "$f")"
	eq "$mode: no debug check fired, no other warning" "" \
		"$(debug_reports "$o/$mode/console.log" "$QEMU_TOPOLOGY_WARNING")"
done
done_testing
