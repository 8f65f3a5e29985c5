#!/usr/bin/env bash
# The tag index shares page->flags with bits that others change at run
# time. pftag_race (tests/modules/pftag_race.c) rewrites one page's index
# on CPU 0 while CPU 1 sets and clears PG_referenced, PG_locked and the
# bits next to the index field through the kernel's atomic helpers, in a
# guest whose vCPUs run in parallel (QEMU's multi-threaded TCG: with one
# thread for all vCPUs a read-modify-write is never interrupted). With the
# series' helper no flag update may be lost and no index torn, and the
# page's accounting comes out right; the same run with a plain
# read-modify-write of the field, the control, must lose updates, or the
# test could not have caught one. Page-flags storage, on the profiling
# kernel and on its debug build (whose checks look at the index at free).
. "$(dirname "$0")/../lib.sh"
secs=2
line=$(grep -n '/\* SITE:race \*/' "$TOP/tests/modules/pftag_race.c" | cut -d: -f1)
site="pftag_race.c:$line"

race_script() { # WRITE-KINDS...
	local k
	echo "M=/opt/pftag/modules/pftag_race.ko; R=/sys/kernel/debug/pftag_race/result"
	echo "echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage"
	for k in "$@"; do
		echo "echo '== $k'; insmod \$M seconds=$secs write=$k && cat \$R"
		echo "echo '== $k-lines'; grep '\\[pftag_race\\]' /proc/allocinfo"
		echo "rmmod pftag_race"
	done
	echo "echo '== allocinfo'; cat /proc/allocinfo"
	echo "echo '== console-warnings'; dmesg | grep -E 'WARNING|BUG:|Oops|allocated at module unload' || true"
	echo "echo '== end'"
}

for kernel in profiling profiling+debug; do
	kinds="helper"
	[ "$kernel" != profiling ] || kinds="helper plain"
	if [ "$kernel" != profiling ] &&
		! out=$(build_profiling debug); then
		fail "$kernel: the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
		continue
	fi
	o=$BUILD/test/flags-race/$kernel
	# shellcheck disable=SC2086 # kinds: several words
	ACCEL=tcg,thread=multi guest "$kernel" "$o" "" "$(race_script $kinds)" || continue
	f=$o/out.log
	eq "$kernel: page-flags storage" page "$(field storage "$(section storage "$f")")"
	r=$(section helper "$f")
	echo "#   info: $kernel: helper: $(tr '\n' ' ' <<< "$r")"
	w=$(field writes "$r") fl=$(field flips "$r") ov=$(field overlap "$r")
	[ "${w:-0}" -gt 0 ] && [ "${ov:-0}" -gt 0 ] &&
		ok "$kernel: the writer and the flipper ran side by side ($w writes, $ov of $fl flip rounds while the writer ran)" ||
		fail "$kernel: the writer and the flipper ran side by side" "$r"
	eq "$kernel: pgalloc_tag_idx_write() loses no flag update" 0 "$(field lost "$r")"
	eq "$kernel: every index reads back as written" 0 "$(field torn "$r")"
	eq "$kernel: flags and index as expected once both stopped" 1 "$(field end_ok "$r")"
	eq "$kernel: the raced page is still charged to $site (bytes, calls)" "4096 1" \
		"$(section helper-lines "$f" | awk -v s="$site" '$3 ~ "/" s "$" || $3 == s { print $1, $2 }')"
	if [[ $kinds == *plain* ]]; then
		r=$(section plain "$f")
		echo "#   info: $kernel: plain: $(tr '\n' ' ' <<< "$r")"
		[ "$(field lost "$r")" -gt 0 ] 2> /dev/null &&
			ok "$kernel: the control, a plain read-modify-write, loses updates ($(field lost "$r"))" ||
			fail "$kernel: the control, a plain read-modify-write, loses updates (else the test could not catch one)" "$r"
	fi
	eq "$kernel: no tag has negative bytes at the end" "" "$(section allocinfo "$f" | sed '1,2d' | awk '$1 < 0')"
	eq "$kernel: no warning, no unload with live pages" "" "$(section console-warnings "$f")"
done
done_testing
