#!/usr/bin/env bash
# debugfs alloc_tag/page_tags counts each live page allocation once, also
# the hugetlb folios whose vmemmap is optimised (hugetlb_free_vmemmap=on):
# their tail struct pages past the first vmemmap page are mapped onto the
# first one, so a walk that reads every pfn sees the head again (and its
# tag) every 64 pages, and in page_ext storage reads the stale slots of
# the tails. 64 huge pages are reserved; the count of tagged allocations
# must grow by what hugetlb's call sites in /proc/allocinfo say they
# allocated meanwhile (each folio, and the page HVO allocates for each
# folio's first vmemmap page), give or take what the rest of the guest
# allocated or freed (bounded by two idle reads), in both storages. The
# walk that reads each tail counts a folio 8 times.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/page-tags-hvo
n=64
P=/sys/kernel/debug/alloc_tag/page_tags
script="
echo '== hvo'; cat /proc/sys/vm/hugetlb_optimize_vmemmap
for i in 1 2 3; do grep tagged_allocations $P > /dev/null; done
echo '== idle'; grep tagged_allocations $P; grep tagged_allocations $P
echo '== hugetlb-before'; grep -E 'mm/hugetlb(_vmemmap)?\\.c:' /proc/allocinfo
echo '== before'; grep tagged_allocations $P
echo $n > /proc/sys/vm/nr_hugepages
echo '== after'; grep tagged_allocations $P
echo '== hugetlb-after'; grep -E 'mm/hugetlb(_vmemmap)?\\.c:' /proc/allocinfo
echo '== reserved'; cat /proc/sys/vm/nr_hugepages
echo 0 > /proc/sys/vm/nr_hugepages
echo '== end'
"
for mode in flags page_ext; do
	append="hugetlb_free_vmemmap=on $(mode_append "$mode")"
	guest profiling "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: hugetlb's vmemmap is optimised" 1 "$(section hvo "$f")"
	eq "$mode: $n huge pages reserved" "$n" "$(section reserved "$f")"
	read -r i1 i2 < <(section idle "$f" | awk '{ printf "%s ", $2 }')
	b=$(field tagged_allocations "$(section before "$f")")
	a=$(field tagged_allocations "$(section after "$f")")
	noise=$(( (i2 > i1 ? i2 - i1 : i1 - i2) + 16 ))
	d=$((a - b))
	# The calls hugetlb's sites made meanwhile: what page_tags must add.
	h=$(awk 'FNR == 1 { f++ } f == 1 { c[$3 " " $4] -= $2 } f == 2 { c[$3 " " $4] += $2 }
		END { for (k in c) s += c[k]; print s + 0 }' \
		<(section hugetlb-before "$f") <(section hugetlb-after "$f"))
	echo "#   info: $mode: tagged allocations $b before, $a after $n huge pages; hugetlb's sites made $h allocations (idle reads differ by $((noise - 16)))"
	if [ "$h" -ge "$n" ] && [ "$d" -ge $((h - noise)) ] && [ "$d" -le $((h + noise)) ]; then
		ok "$mode: page_tags counts each huge page once (+$d for hugetlb's $h allocations, within $noise)"
	else
		fail "$mode: page_tags counts each huge page once" "+$d for hugetlb's $h allocations of $n huge pages, beyond $noise of noise"
	fi
done
done_testing
