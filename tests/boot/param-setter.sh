#!/usr/bin/env bash
# Pages allocated by a module parameter's setter, which runs while the
# module loads, before its init: in both storages they are charged to
# their call site like any other allocation (the module's tags are set up,
# and indexed, before its parameters are parsed), not counted as
# unindexed; unloading frees them back to zero.
. "$(dirname "$0")/../lib.sh"
mods=/opt/pftag/modules
n=3
page=4096	# x86_64
line=$(grep -n '/\* SITE:param \*/' "$TOP/tests/modules/pftag_param.c" | cut -d: -f1)
site="pftag_param.c:$line"

script="
S=/sys/kernel/debug/alloc_tag/storage
echo '== before'; cat \$S
echo '== insmod'; insmod $mods/pftag_param.ko pages=$n && echo loaded
echo '== loaded'; cat \$S
echo '== lines'; grep '\\[pftag_param\\]' /proc/allocinfo
rmmod pftag_param
echo '== unloaded-lines'; grep '\\[pftag_param\\]' /proc/allocinfo || true
echo '== console-warnings'; dmesg | grep -E 'WARNING|BUG:|got no page index' || true
echo '== end'"

for mode in flags page_ext; do
	append=$(mode_append "$mode")
	o=$BUILD/test/param-setter/$mode
	guest profiling "$o" "$append" "$script" || continue
	f=$o/out.log
	eq "$mode: pftag_param loads with pages=$n" "loaded" "$(section insmod "$f")"
	l=$(section lines "$f" | awk -v s="$site" '$3 ~ "/" s "$" || $3 == s')
	eq "$mode: the setter's $n pages are charged to $site" \
		"$((n * page)) $n" "$(awk '{ print $1, $2 }' <<< "$l")"
	eq "$mode: no allocation was counted as unindexed" \
		"$(field unindexed_allocations "$(section before "$f")")" \
		"$(field unindexed_allocations "$(section loaded "$f")")"
	eq "$mode: after rmmod nothing is left charged" "" \
		"$(section unloaded-lines "$f" | awk '$1 != 0 || $2 != 0')"
	eq "$mode: no warning" "" "$(section console-warnings "$f")"
done
done_testing
