#!/usr/bin/env bash
# CONFIG_MEM_ALLOC_PROFILING_DEBUG in both storage modes: the debug build
# boots in page flags and in page_ext, keeps the exact accounting of
# pftag_pages, refuses run-time writes to mem_profiling, and its checks
# ("alloc_tag was not cleared", "alloc_tag was not set", "current->alloc_tag
# not set") stay silent through boot and the workload.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/debug
id=profiling+debug
if ! out=$(build_profiling debug); then
	fail "the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
	done_testing
fi
ok "the debug build (FRAGMENTS=debug) builds"
line0=$(site_line order0)
lineN=$(site_line orderN)
# counts=4,0,2: 4 order-0 pages; 2 order-2 allocations of 4 pages each.
want0="$((4 * 4096)) 4" wantN="$((2 * 4 * 4096)) 2"
script="
echo '== compressed'; cat /proc/sys/vm/mem_profiling_compressed
echo '== write'; if echo 0 > /proc/sys/vm/mem_profiling 2>/dev/null; then echo writable; else echo refused; fi
insmod /opt/pftag/modules/pftag_pages.ko counts=4,0,2
echo '== loaded'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free
rmmod pftag_pages
echo '== freed'; grep '\\[pftag_pages\\]' /proc/allocinfo || true
echo '== end'"

for mode in flags page_ext; do
	append=$(mode_append "$mode")
	guest "$id" "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: storage" "$([ $mode = flags ] && echo 1 || echo 0)" "$(section compressed "$f")"
	eq "$mode: run-time writes to mem_profiling are refused" refused "$(section write "$f")"
	l=$(section loaded "$f")
	eq "$mode: pftag_pages.c:$line0 has $want0 (bytes calls)" "$want0" \
		"$(tag_line "$l" "$line0" | awk '{ print $1, $2 }')"
	eq "$mode: pftag_pages.c:$lineN has $wantN (bytes calls)" "$wantN" \
		"$(tag_line "$l" "$lineN" | awk '{ print $1, $2 }')"
	eq "$mode: no debug check fired" "" "$(debug_reports "$o/$mode/console.log")"
done
done_testing
