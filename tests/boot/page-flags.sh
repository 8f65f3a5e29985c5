#!/usr/bin/env bash
# Page tags in page->flags and the page_ext fallback, booted three ways on
# the profiling kernel: the default (page flags), page_ext asked for on
# the command line, and a bit cap too small for the kernel's tags (must
# fall back). In each: the mode is reported; page_ext holds no tag memory
# in page-flags mode, and 2 bytes a page of the memory sections that hold
# RAM in page_ext mode, mapped in page_ext's window (the hooks' lookup);
# pftag_pages' known allocations show exactly their
# bytes and calls at their file:line and go back to zero when freed;
# page_tags finds the tags on pages; unloading with live pages and 20
# load/unload cycles leak no index. The /proc/allocinfo of the two
# storage modes is then compared whole. The same checks run on the debug
# build of each distribution layout in LAYOUTS (tests/lib.sh), which must
# choose page_ext by itself, report the spare bits of the real config it
# stands for, keep the debug checks silent, and count the tags that
# allocated pages since boot.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/page-flags
mkdir -p "$o"
mods=/opt/pftag/modules

# The known allocations: counts per order, from order 0.
counts=(5 3 2 1)
line0=$(site_line order0)
lineN=$(site_line orderN)
bytes0=$((counts[0] * 4096)) calls0=${counts[0]}
bytesN=0 callsN=0
for ((ord = 1; ord < ${#counts[@]}; ord++)); do
	bytesN=$((bytesN + counts[ord] * (4096 << ord)))
	callsN=$((callsN + counts[ord]))
done
csv=$(IFS=,; echo "${counts[*]}")

script="
echo '== compressed'; cat /proc/sys/vm/mem_profiling_compressed
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage
echo '== dmesg'; dmesg
echo '== memory'; grep 'System RAM' /proc/iomem
echo '== page-tags-boot'; cat /sys/kernel/debug/alloc_tag/page_tags
insmod $mods/pftag_pages.ko counts=$csv
echo '== page-tags-loaded'; cat /sys/kernel/debug/alloc_tag/page_tags
echo '== loaded'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo '== allocinfo-loaded'; cat /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free
echo '== page-tags-freed'; cat /sys/kernel/debug/alloc_tag/page_tags
echo '== freed'; grep '\\[pftag_pages\\]' /proc/allocinfo
rmmod pftag_pages
echo '== after-rmmod'; cat /sys/kernel/debug/alloc_tag/storage
insmod $mods/pftag_pages.ko counts=2 keep=1
rmmod pftag_pages
echo '== live-unload'; cat /sys/kernel/debug/alloc_tag/storage
echo '== live-unload-dmesg'; dmesg | grep -i 'pftag_pages'
i=0; while [ \$i -lt 20 ]; do insmod $mods/pftag_pages.ko counts=1,1 && rmmod pftag_pages; i=\$((i + 1)); done
echo '== cycles'; cat /sys/kernel/debug/alloc_tag/storage
echo '== page-tags-end'; cat /sys/kernel/debug/alloc_tag/page_tags
echo '== allocinfo'; cat /proc/allocinfo
echo '== end'
"

check_mode() { # NAME APPEND WANT-COMPRESSED [KERNEL]
	local name=$1 append=$2 want=$3 kernel=${4:-profiling} out=$o/$1 f st d
	guest "$kernel" "$out" "$append" "$script" || return
	f=$out/out.log
	eq "$name: /proc/sys/vm/mem_profiling_compressed" "$want" "$(section compressed "$f")"
	st=$(section storage "$f")
	d=$(section dmesg "$f")
	if [ "$want" = 1 ]; then
		eq "$name: debugfs reports page-flags storage" "page" "$(field storage "$st")"
		check "$name: the boot log says page flags, with bits, capacity and tags" \
			grep -qE 'alloc_tag: page tags in page flags: [0-9]+ spare bits, [0-9]+ usable, capacity [0-9]+ tags, [0-9]+ kernel tags indexed' <<< "$d"
		check "$name: no page_ext is allocated" bash -c "! grep -q 'bytes of page_ext' <<< \"\$1\"" _ "$d"
	else
		eq "$name: debugfs reports page_ext storage" "page_ext" "$(field storage "$st")"
		check "$name: the boot log gives the fallback, the index width and the reason" \
			grep -qE 'alloc_tag: page tags in page_ext: a 16-bit index, 2 bytes a page; .*: [a-z]' <<< "$d"
		eq "$name: debugfs reports a 2-byte index in page_ext" 2 "$(field page_ext_index_bytes "$st")"
		# 2 bytes for every page of every memory section (128 MiB,
		# 32768 pages on x86_64) that holds System RAM in /proc/iomem.
		local sections pages want
		sections=$(section memory "$f" | while IFS='- ' read -r a b _; do
			for ((x = 16#$a >> 27; x <= 16#$b >> 27; x++)); do echo "$x"; done
		done | sort -u | wc -l)
		pages=$((sections * 32768))
		want=$((2 * pages))
		eq "$name: page_ext takes 2 bytes a page: $want bytes for $pages pages" "$want" \
			"$(sed -n 's/.*allocated \([0-9]*\) bytes of page_ext.*/\1/p' <<< "$d")"
		# The window that spares the allocator's lookups the section:
		# x86_64's vmalloc space has room for it, and this kernel has
		# no KASAN_VMALLOC (mm/page_ext.c).
		check "$name: page_ext is mapped in a window" \
			grep -qE 'allocated [0-9]+ bytes of page_ext, mapped in a window' <<< "$d"
	fi
	check "$name: no warning or oops before the module tests" bash -c "! grep -qE 'WARNING|BUG:|Oops' <<< \"\$1\"" _ "$d"

	local loaded freed
	loaded=$(section loaded "$f")
	eq "$name: order-0 site pftag_pages.c:$line0 has $bytes0 bytes in $calls0 calls" \
		"$bytes0 $calls0" "$(tag_line "$loaded" "$line0" | awk '{ print $1, $2 }')"
	eq "$name: higher-order site pftag_pages.c:$lineN has $bytesN bytes in $callsN calls" \
		"$bytesN $callsN" "$(tag_line "$loaded" "$lineN" | awk '{ print $1, $2 }')"
	freed=$(section freed "$f")
	eq "$name: both sites are back to 0 bytes, 0 calls after the free" "0 0
0 0" "$( { tag_line "$freed" "$line0"; tag_line "$freed" "$lineN"; } | awk '{ print $1, $2 }')"

	local pt
	pt=$(section page-tags-boot "$f")
	[ "$(field distinct_kernel_tags "$pt")" -gt 0 ] 2> /dev/null &&
		ok "$name: page_tags finds kernel tags holding pages after boot" ||
		fail "$name: page_tags finds kernel tags holding pages after boot" "$pt"
	echo "#   info: $name: after boot, $(field distinct_tags "$pt") tags hold $(field tagged_allocations "$pt") page allocations"
	eq "$name: with pftag_pages loaded, its 2 call sites are the only module tags on pages" \
		2 "$(field distinct_module_tags "$(section page-tags-loaded "$f")")"
	eq "$name: after the free, no module tag is on a page" \
		0 "$(field distinct_module_tags "$(section page-tags-freed "$f")")"
	pt=$(section page-tags-end "$f")
	echo "#   info: $name: after the tests, $(field distinct_tags "$pt") tags hold $(field tagged_allocations "$pt") page allocations"

	local used0 used1 used2 held
	used0=$(field module_indices_used "$st")
	used1=$(field module_indices_used "$(section after-rmmod "$f")")
	eq "$name: unloading releases the module's indices" "$used0" "$used1"
	held=$(field module_indices_held_by_unloaded "$(section live-unload "$f")")
	[ "${held:-0}" -gt 0 ] && ok "$name: unloading with live pages keeps the indices ($held held)" ||
		fail "$name: unloading with live pages keeps the indices" "held: '$held'"
	used2=$(field module_indices_used "$(section cycles "$f")")
	eq "$name: 20 load/unload cycles leave the indices in use unchanged" \
		"$(field module_indices_used "$(section live-unload "$f")")" "$used2"
	check "$name: unloading with live pages warns and names the module" \
		grep -q 'pftag_pages.*allocated at module unload' <<< "$(section live-unload-dmesg "$f")"
	local neg
	neg=$(section allocinfo "$f" | sed '1,2d' | awk '$1 < 0')
	eq "$name: no tag has negative bytes at the end" "" "$neg"
}

check_mode flags "" 1
check_mode page_ext "sysctl.vm.mem_profiling=1,page_ext" 0
check_mode capped "mem_profiling_idx_bits=8" 0

# The distribution layouts (LAYOUTS, tests/lib.sh): their debug builds
# fall back to page_ext by themselves, with the spare bits of the real
# config each stands for, and pass the same checks.
for l in $LAYOUTS; do
	name=layout-$l
	if ! err=$(build_layout "$l"); then
		fail "$name: the layout's debug build builds" "$err"
		continue
	fi
	check_mode "$name" "" 0 "$(layout_id "$l")"
	f=$o/$name/out.log
	[ -s "$f" ] || continue
	# shellcheck disable=SC2046 # layout_real gives several arguments
	spare=$("$TOP/scripts/page-flags-layout.sh" $(layout_real "$l") | awk '$1 == "spare" { print $2 }')
	eq "$name: debugfs reports the spare bits of the real config ($spare)" "$spare" \
		"$(field spare_bits "$(section storage "$f")")"
	check "$name: the boot log says page_ext, the index, $spare spare bits and why" \
		grep -qE "alloc_tag: page tags in page_ext: a 16-bit index, 2 bytes a page; $spare spare bits in page flags, .*: kernel tags plus module headroom exceed the capacity" \
		<<< "$(section dmesg "$f")"
	c=$o/$name/console.log
	eq "$name: no debug check fired" "" \
		"$(grep -E 'alloc_tag was not|current->alloc_tag not set' "$c")"
	eq "$name: the only warning is the one the live unload asks for" \
		"$(grep -c 'allocated at module unload' "$c")" "$(grep -c 'WARNING:' "$c")"
	# bytes, calls, file name (the build directory differs), tag
	mod_lines() { section loaded "$1" | awk '{ sub(".*/", "", $3); print }'; }
	eq "$name: the test module's lines equal page-flags mode's" \
		"$(mod_lines "$o/flags/out.log")" "$(mod_lines "$f")"
	b=$(field tags_with_pages_since_boot "$(section page-tags-boot "$f")")
	e=$(field tags_with_pages_since_boot "$(section page-tags-end "$f")")
	[ "${b:-0}" -gt 0 ] 2> /dev/null && [ "${e:-0}" -ge "$b" ] &&
		ok "$name: the debug build counts tags with pages since boot ($b after boot, $e after the tests)" ||
		fail "$name: the debug build counts tags with pages since boot" "after boot: '$b', at the end: '$e'"
	pb=$(section page-tags-boot "$f") pe=$(section page-tags-end "$f")
	echo "#   info: $name: tags that allocated pages since boot: after boot $(field kernel_tags_with_pages_since_boot "$pb") kernel + $(field module_tags_with_pages_since_boot "$pb") module tags; after the module tests (22 loads of pftag_pages) $(field kernel_tags_with_pages_since_boot "$pe") + $(field module_tags_with_pages_since_boot "$pe"); of $(field kernel_tags "$(section storage "$f")") kernel tags"
done

# Whole-file comparison of the two storage modes after the same workload.
a=$(section allocinfo-loaded "$o/flags/out.log")
b=$(section allocinfo-loaded "$o/page_ext/out.log")
if [ -n "$a" ] && [ -n "$b" ]; then
	eq "both modes print the same header" "$(head -2 <<< "$a")" "$(head -2 <<< "$b")"
	d=$(diff <(sed '1,2d' <<< "$a" | awk '{ $1 = $2 = ""; print }') \
		<(sed '1,2d' <<< "$b" | awk '{ $1 = $2 = ""; print }'))
	eq "both modes list the same tags in the same order" "" "$d"
	eq "both modes give the test module the same bytes and calls" \
		"$(grep '\[pftag_pages\]' <<< "$a")" "$(grep '\[pftag_pages\]' <<< "$b")"
	pe_a=$(awk '$4 == "func:alloc_page_ext" { s += $1 } END { print s + 0 }' <<< "$a")
	pe_b=$(awk '$4 == "func:alloc_page_ext" { s += $1 } END { print s + 0 }' <<< "$b")
	eq "page_ext's own line is 0 in page-flags mode" 0 "$pe_a"
	[ "$pe_b" -gt 0 ] && ok "page_ext's own line is not 0 in page_ext mode ($pe_b bytes)" ||
		fail "page_ext's own line is not 0 in page_ext mode" "$pe_b"
	# The full diff, for the record: which tags differ in value.
	diff <(sed '1,2d' <<< "$a") <(sed '1,2d' <<< "$b") > "$o/allocinfo-flags-vs-page_ext.diff"
fi
done_testing
