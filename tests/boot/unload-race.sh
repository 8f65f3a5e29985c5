#!/usr/bin/env bash
# A module unloads while its last pages are freed on another CPU. The
# unload frees its tags' per-CPU counters once their bytes sum to 0; a
# free that has updated bytes but not yet calls would then write memory
# that is no longer the tag's (typically the counters of the next module
# loaded, which then reads calls = 2^64-1). The uncharge updates bytes
# last, and the unload waits a grace period before freeing.
#
# Each round: pftag_keeper keeps 512 order-0 pages of pftag_pages
# (give=1); the keeper frees them on CPU 1 while pftag_pages unloads on
# CPU 0. Then pftag_pages loads again, allocates known pages and frees
# them: its lines must read exactly those pages, then 0; no tag anywhere
# may read below 0. The window is one instruction wide and cannot be hit
# on purpose (a round's outcome is printed: counters freed at unload, or
# kept as the pages were still live); the test fails on a stray write
# only when one happens.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/unload-race
M=/opt/pftag/modules
rounds=20
script="
for r in \$(seq $rounds); do
	insmod $M/pftag_keeper.ko
	insmod $M/pftag_pages.ko counts=512 give=1
	taskset -c 1 sh -c 'echo 1 > /sys/kernel/debug/pftag_keeper/free' &
	taskset -c 0 rmmod pftag_pages
	wait
	rmmod pftag_keeper
done
insmod $M/pftag_pages.ko counts=3,0,1
echo '== held'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free
echo '== freed'; grep '\\[pftag_pages\\]' /proc/allocinfo
rmmod pftag_pages
echo '== wrapped'; awk 'NR > 2 && (length(\$1) > 18 || length(\$2) > 18 || \$1 ~ /^-/)' /proc/allocinfo
echo '== reports'; dmesg | grep -c 'allocated at module unload' || true
echo '== warnings'; dmesg | grep -c 'WARNING' || true
echo '== crashes'; dmesg | grep -E 'BUG:|Oops|general protection' || true
echo '== end'
"
guest profiling "$o" "" "$script" || done_testing
f=$o/out.log
echo "#   info: $rounds rounds; unload reports of pages still live: $(section reports "$f")"
l0=$(site_line order0) l2=$(site_line orderN)
held=$(section held "$f")
eq "reloaded: order-0 site holds 3 pages, 3 calls" "$((3 * 4096)) 3" "$(tag_line "$held" "$l0" | awk '{ print $1, $2 }')"
eq "reloaded: order-2 site holds 1 allocation of 4 pages" "$((4 * 4096)) 1" "$(tag_line "$held" "$l2" | awk '{ print $1, $2 }')"
freed=$(section freed "$f")
eq "freed: order-0 site back to 0" "0 0" "$(tag_line "$freed" "$l0" | awk '{ print $1, $2 }')"
eq "freed: order-2 site back to 0" "0 0" "$(tag_line "$freed" "$l2" | awk '{ print $1, $2 }')"
eq "no tag's bytes or calls wrapped below 0" "" "$(section wrapped "$f")"
eq "every warning is an unload's report of pages still live" "$(section reports "$f")" "$(section warnings "$f")"
eq "no crash" "" "$(section crashes "$f")"
done_testing
