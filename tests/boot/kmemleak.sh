#!/usr/bin/env bash
# kmemleak finds nothing the series allocated and lost, in both storage
# modes: the debug build booted with kmemleak=on runs the KUnit case that
# grows the module map and counter table three times and releases them
# (module_table_grow_release), loads and unloads modules with many tags
# (pftag_many), slab objects on every path (pftag_slab) and pages
# (pftag_pages), keeps pftag_slab's objects while it scans twice (an
# object is reported only once it is older than 5 s), and reads the
# report. An unreferenced object fails the test when its allocation's
# backtrace goes through the series' code (alloc_tag, pgalloc_tag,
# codetag, the slab tag blocks); other unreferenced objects, the rest of
# the kernel's, are only counted in an info line.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/kmemleak
id=profiling+debug
mods=/opt/pftag/modules
if ! out=$(build_profiling debug); then
	fail "the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
	done_testing
fi
# The series' functions, as kmemleak's backtraces name them.
ours='alloc_tag|codetag|slab_tag_'
k=/sys/kernel/debug/kmemleak
script="
insmod $mods/pftag_many.ko
insmod $mods/pftag_pages.ko counts=4,0,2
echo 1 > /sys/kernel/debug/pftag_pages/free
rmmod pftag_pages
rmmod pftag_many
insmod $mods/pftag_slab.ko n=64
echo '== scan'
if echo scan > $k; then echo scanned; else echo 'no scan'; fi
sleep 6
echo scan > $k
echo '== report'
cat $k
echo '== end'
echo 1 > /sys/kernel/debug/pftag_slab/free
rmmod pftag_slab"

for mode in flags page_ext; do
	append="kmemleak=on kunit.enable=1 kunit.filter_glob=pgalloc_tag.module_table_grow_release $(mode_append "$mode")"
	guest "$id" "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: kmemleak is on and scans" scanned "$(section scan "$f")"
	check "$mode: the KUnit case that grows and releases the module map ran and passed" \
		grep -qE '^[[:space:]]*ok 1 module_table_grow_release' "$o/$mode/console.log"
	r=$(section report "$f")
	# An unreferenced object whose backtrace (the lines after "backtrace",
	# "function+offset/size", an address before it in older kernels) names
	# the series' code: its address and those functions.
	leaks=$(awk -v ours="$ours" '
		/^unreferenced object/ { if (hit) print obj; obj = $3; hit = 0; bt = 0; next }
		/^ +backtrace/ { bt = 1; next }
		bt && $0 ~ ours { hit = 1; obj = obj " " $NF }
		END { if (hit) print obj }' <<< "$r")
	eq "$mode: no unreferenced object allocated by the series' code" "" "$leaks"
	others=$(grep -c '^unreferenced object' <<< "$r")
	[ "$others" -eq 0 ] || echo "#   info: $mode: $others unreferenced objects in all (out.log)"
	eq "$mode: no debug check fired" "" "$(debug_reports "$o/$mode/console.log" "$QEMU_TOPOLOGY_WARNING")"
done
done_testing
