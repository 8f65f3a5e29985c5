#!/usr/bin/env bash
# A full module index space (page-flags mode, bits capped so that only a
# few module indices exist): a module that does not fit still loads and
# warns with its name and the numbers; its page allocations are counted
# as unindexed and charged to no tag (no negative bytes, nothing left
# behind after the free); unloading gives every index back.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/exhaustion
obj=$BUILD/obj/profiling
mods=/opt/pftag/modules

ntags() { nm "$1" | grep -cE ' [dD] _alloc_tag(\.[0-9]+)?$'; }
kernel=$(ntags "$obj/vmlinux")
many=$(ntags "$obj/testmods/pftag_many.ko")
pages_tags=$(ntags "$obj/testmods/pftag_pages.ko")
# The fewest bits that index the kernel's tags and at least one more.
bits=1
while [ $(((1 << bits) - 2)) -lt $((kernel + 1)) ]; do bits=$((bits + 1)); done
space=$(((1 << bits) - 2 - kernel))
if [ "$space" -ge "$many" ]; then
	fail "pftag_many ($many tags) overfills the $space module indices of $bits bits" "the test needs a bigger pftag_many"
	done_testing
fi
counts=(5 3 2 1)
allocs=0 pages=0
for ((ord = 0; ord < ${#counts[@]}; ord++)); do
	allocs=$((allocs + counts[ord]))
	pages=$((pages + counts[ord] * (1 << ord)))
done
csv=$(IFS=,; echo "${counts[*]}")

script="
S=/sys/kernel/debug/alloc_tag/storage
echo '== boot'; cat \$S
insmod $mods/pftag_many.ko
echo '== many'; cat \$S
insmod $mods/pftag_pages.ko counts=$csv
echo '== pages'; cat \$S
echo '== lines'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo '== warnings'; dmesg | grep 'got no page index'
echo 1 > /sys/kernel/debug/pftag_pages/free
echo '== freed'; cat \$S
echo '== freed-lines'; grep '\\[pftag_pages\\]' /proc/allocinfo
rmmod pftag_pages; rmmod pftag_many
echo '== unloaded'; cat \$S
echo '== allocinfo'; cat /proc/allocinfo
echo '== console-warnings'; dmesg | grep -E 'WARNING|BUG:' || true
echo '== end'"
guest profiling "$o" "mem_profiling_idx_bits=$bits mem_profiling_headroom=0" "$script" || done_testing
f=$o/out.log
b=$(section boot "$f")
eq "$bits usable bits: page-flags storage" "page" "$(field storage "$b")"
eq "the module index space is 2^$bits - 2 - $kernel kernel tags" "$space" "$(field module_index_space "$b")"
m=$(section many "$f")
eq "pftag_many takes every module index" "$space" "$(field module_indices_used "$m")"
eq "pftag_many's other tags are unindexed" "$((many - space))" "$(field unindexed_tags "$m")"
p=$(section pages "$f")
eq "pftag_pages' $pages_tags tags are unindexed too" "$((many - space + pages_tags))" "$(field unindexed_tags "$p")"
w=$(section warnings "$f")
check "the warning names pftag_many and its numbers" \
	grep -q "module pftag_many: $((many - space)) of $many allocation tags got no page index ($space of $space module indices in use)" <<< "$w"
check "the warning names pftag_pages" grep -q "module pftag_pages: $pages_tags of $pages_tags allocation tags got no page index" <<< "$w"
eq "pftag_pages' page allocations charged no tag" "0 0
0 0" "$(section lines "$f" | awk '{ print $1, $2 }')"
fr=$(section freed "$f")
eq "the $allocs allocations are counted as unindexed" "$allocs" "$(field unindexed_allocations "$fr")"
eq "their $pages pages are counted as unindexed" "$pages" "$(field unindexed_pages "$fr")"
eq "after the free, pftag_pages' lines are still 0, never negative" "0 0
0 0" "$(section freed-lines "$f" | awk '{ print $1, $2 }')"
u=$(section unloaded "$f")
eq "unloading both modules gives every index back" "0" "$(field module_indices_used "$u")"
eq "no unindexed tags are left" "0" "$(field unindexed_tags "$u")"
eq "no tag anywhere has negative bytes" "" "$(section allocinfo "$f" | sed '1,2d' | awk '$1 < 0')"
eq "no kernel warning" "" "$(section console-warnings "$f")"
done_testing
