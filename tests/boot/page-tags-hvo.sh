#!/usr/bin/env bash
# debugfs alloc_tag/page_tags counts each live page allocation once, also
# the hugetlb folios whose vmemmap is optimised (hugetlb_free_vmemmap=on):
# their tail struct pages past the first vmemmap page are mapped onto the
# first one, so a walk that reads every pfn sees the head again (and its
# tag) every 64 pages, and in page_ext storage reads the stale slots of
# the tails. 64 huge pages are reserved and released, three times; each
# time the count of tagged allocations must grow by what hugetlb's call
# sites in /proc/allocinfo say they allocated meanwhile (the folios, the
# page HVO allocates for each folio's first vmemmap page, less the vmemmap
# pages the previous release allocated and this reservation frees), give
# or take what the rest of the guest allocated or freed: the median of
# the three errors must be within the difference of two idle reads, plus
# 16. The walk that reads each tail counts a folio 8 times.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/page-tags-hvo
n=64
rounds=3
P=/sys/kernel/debug/alloc_tag/page_tags
script="
echo '== hvo'; cat /proc/sys/vm/hugetlb_optimize_vmemmap
for i in 1 2 3; do grep tagged_allocations $P > /dev/null; done
echo '== idle'; grep tagged_allocations $P; grep tagged_allocations $P
for r in $(seq -s " " $rounds); do
	echo \"== hugetlb-before\$r\"; grep -E 'mm/hugetlb(_vmemmap)?\\.c:' /proc/allocinfo
	echo \"== before\$r\"; grep tagged_allocations $P
	echo $n > /proc/sys/vm/nr_hugepages
	echo \"== after\$r\"; grep tagged_allocations $P
	echo \"== hugetlb-after\$r\"; grep -E 'mm/hugetlb(_vmemmap)?\\.c:' /proc/allocinfo
	echo \"== reserved\$r\"; cat /proc/sys/vm/nr_hugepages
	echo 0 > /proc/sys/vm/nr_hugepages
done
echo '== end'
"
for mode in flags page_ext; do
	append="hugetlb_free_vmemmap=on $(mode_append "$mode")"
	guest profiling "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: hugetlb's vmemmap is optimised" 1 "$(section hvo "$f")"
	read -r i1 i2 < <(section idle "$f" | awk '{ printf "%s ", $2 }')
	noise=$(( (i2 > i1 ? i2 - i1 : i1 - i2) + 16 ))
	errs=() why=""
	for r in $(seq $rounds); do
		eq "$mode: round $r: $n huge pages reserved" "$n" "$(section reserved$r "$f")"
		b=$(field tagged_allocations "$(section before$r "$f")")
		a=$(field tagged_allocations "$(section after$r "$f")")
		# The calls hugetlb's sites made meanwhile: what page_tags must add.
		h=$(awk 'FNR == 1 { f++ } f == 1 { c[$3 " " $4] -= $2 } f == 2 { c[$3 " " $4] += $2 }
			END { for (k in c) s += c[k]; print s + 0 }' \
			<(section hugetlb-before$r "$f") <(section hugetlb-after$r "$f"))
		# The folios themselves: n allocations of the folio sites.
		fo=$(awk 'FNR == 1 { f++ } $4 ~ /^func:alloc_(buddy_hugetlb|gigantic)_folio$/ {
				c += (f == 1 ? -$2 : $2) } END { print c + 0 }' \
			<(section hugetlb-before$r "$f") <(section hugetlb-after$r "$f"))
		[ "$fo" = "$n" ] || why+="round $r: hugetlb's folio sites made $fo allocations for $n huge pages; "
		errs+=($((a - b - h)))
		echo "#   info: $mode: round $r: tagged allocations $b before, $a after $n huge pages; hugetlb's sites made $h allocations"
	done
	m=$(printf '%s\n' "${errs[@]}" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
	echo "#   info: $mode: page_tags minus hugetlb's allocations: ${errs[*]} (median $m); idle reads differ by $((noise - 16))"
	if [ -z "$why" ] && [ "$m" -ge $((-noise)) ] && [ "$m" -le "$noise" ]; then
		ok "$mode: page_tags counts each huge page once (median error $m of $rounds rounds, within $noise)"
	else
		fail "$mode: page_tags counts each huge page once" "${why}median error $m (${errs[*]}) beyond $noise of noise"
	fi
done
done_testing
