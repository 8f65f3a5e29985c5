#!/usr/bin/env bash
# The accounting bugs of the 6.12 base, each fixed by its own patch, in
# both storage modes. Each check here failed before its fix:
# - migration: after compaction moved pages, func:compaction_alloc holds
#   nothing (6.12 left 4095 bytes a migrated page, with 0 calls);
# - module counters: pages freed after their module unloaded are not
#   subtracted from the next instance of the module (6.12: -65536 bytes,
#   calls 2^64 - 2);
# - non-compound high-order pages freed with an extra reference held: the
#   debug build does not warn "alloc_tag was not set" for the tail chunks,
#   and the counters return to zero.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/base-bugs
M=/opt/pftag/modules
line0=$(site_line order0)
lineN=$(site_line orderN)

compact="
echo '== before'; grep 'func:compaction_alloc' /proc/allocinfo
dd if=/dev/zero of=/tmp/fill bs=1M count=200 2> /dev/null; sync; rm /tmp/fill
m0=\$(awk '\$1 == \"pgmigrate_success\" { print \$2 }' /proc/vmstat)
echo 1 > /proc/sys/vm/compact_memory
m1=\$(awk '\$1 == \"pgmigrate_success\" { print \$2 }' /proc/vmstat)
echo '== migrated'; echo \$((m1 - m0))
echo '== after'; grep 'func:compaction_alloc' /proc/allocinfo
echo '== end'"

uaf="
insmod $M/pftag_keeper.ko
insmod $M/pftag_pages.ko counts=0,0,0,2 give=1
echo '== given'; grep '\\[pftag_pages\\]' /proc/allocinfo
rmmod pftag_pages
insmod $M/pftag_pages.ko counts=0
echo 1 > /sys/kernel/debug/pftag_keeper/free
echo '== reloaded'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo '== end'"

for mode in flags page_ext; do
	append=$(mode_append "$mode")

	if guest profiling "$o/compact-$mode" "$append" "$compact"; then
		f=$o/compact-$mode/out.log
		n=$(section migrated "$f")
		[ "${n:-0}" -gt 0 ] 2> /dev/null && ok "$mode: compaction migrated pages ($n)" ||
			fail "$mode: compaction migrated pages" "migrated: '$n'"
		eq "$mode: after compaction, mm/compaction.c func:compaction_alloc holds 0 bytes in 0 calls" "0 0" \
			"$(section after "$f" | awk '$3 ~ /^mm\/compaction\.c:/ { b += $1; c += $2; n++ }
				END { if (n) print b, c; else print "no such line" }')"
	fi

	if guest profiling "$o/uaf-$mode" "$append" "$uaf"; then
		f=$o/uaf-$mode/out.log
		eq "$mode: the given pages are charged to pftag_pages.c:$lineN" "$((2 * 8 * 4096)) 2" \
			"$(tag_line "$(section given "$f")" "$lineN" | awk '{ print $1, $2 }')"
		eq "$mode: freeing them after the module is gone leaves its next instance at 0" "0 0
0 0" "$(section reloaded "$f" | awk '{ print $1, $2 }')"
	fi
done

# Non-compound pages freed with an extra reference: the debug build.
id=profiling+debug
if ! out=$(build_profiling debug); then
	fail "the debug build builds" "$(tail -20 <<< "$out")"
	done_testing
fi
shared="
insmod $M/pftag_pages.ko counts=0,2,1,1
echo '== loaded'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_pages/free_shared
echo '== freed'; grep '\\[pftag_pages\\]' /proc/allocinfo
echo '== end'"
for mode in flags page_ext; do
	append=$(mode_append "$mode")
	guest "$id" "$o/shared-$mode" "$append" "$shared" || continue
	f=$o/shared-$mode/out.log
	eq "$mode: orders 1, 1, 2, 3 charged to pftag_pages.c:$lineN" "$(((2 * 2 + 4 + 8) * 4096)) 4" \
		"$(tag_line "$(section loaded "$f")" "$lineN" | awk '{ print $1, $2 }')"
	eq "$mode: freed with an extra reference held, they are back to 0 bytes, 0 calls" "0 0" \
		"$(tag_line "$(section freed "$f")" "$lineN" | awk '{ print $1, $2 }')"
	eq "$mode: no debug warning for the tail chunks" "" \
		"$(debug_reports "$o/shared-$mode/console.log")"
done
done_testing
