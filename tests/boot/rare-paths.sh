#!/usr/bin/env bash
# Page paths a small guest never takes, each in a boot made for it, in
# both storage modes, on the debug build (page flags) and on the debug
# build of Debian's layout (page_ext by itself), the debug checks on in
# those two: the alloc_tag kselftest's
#   - paths.hugetlb_demote: a 1 GiB huge page allocated at run time from
#     the CMA area hugetlb_cma=1G reserves (a 5 GiB guest: QEMU puts 2 GiB above 4 GiB, where the area goes, below the early allocations at the top) and
#     demoted to 2 MiB pages; mm/hugetlb.c's lines keep the bytes, the
#     calls become one per 2 MiB page;
#   - paths.memory_hotplug: twice, a 256 MiB DIMM added through QEMU's
#     monitor (scripts/boot.sh -H), onlined movable, 2048 pages allocated
#     from it at [test_alloc_tag] func:ops_movable and freed, offlined and
#     removed; exact counters both times, the second DIMM at the first
#     one's addresses;
#   - paths.offline_while_allocating: a DIMM's blocks offlined and
#     onlined movable ten times while a child on the other CPU allocates
#     and frees pages in them (page_ext storage looks up the page_ext of
#     the pages it allocates and frees without RCU); the call site's
#     counters exact afterwards.
# Both must run here: a skip is a failure. After them: no negative
# counter (the tests check), and on the debug build no check fired.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/rare-paths
mkdir -p "$o"

script="
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage
echo '== selftest'
/opt/pftag/bin/alloc_tag_mm_test -t hugetlb_demote
ALLOC_TAG_HOTPLUG=1 /opt/pftag/bin/alloc_tag_hotplug_test -t memory_hotplug -t offline_while_allocating
echo '== end'
"

# Runs: NAME KERNEL STORAGE [APPEND]
runs=("flags profiling page" "page_ext profiling page_ext sysctl.vm.mem_profiling=1,page_ext")
if err=$(build_profiling debug); then
	runs+=("debug $(profiling_id debug) page")
else
	fail "debug: the debug build builds" "$err"
fi
for l in $LAYOUTS; do
	if err=$(build_layout "$l"); then
		runs+=("layout-$l $(layout_id "$l") page_ext")
	else
		fail "layout-$l: the layout's debug build builds" "$err"
	fi
done

for run in "${runs[@]}"; do
	read -r mode kernel storage append <<< "$run"
	if ! err=$("$TOP/scripts/boot.sh" -k "$kernel" -m 5G -H 6G -c 2 -t 900 -o "$o/$mode" -q \
		-a "hugetlb_cma=1G memhp_default_state=offline ${append:-}" "$script" 2>&1); then
		fail "$mode: the guest runs the tests to the end" "$err"
		continue
	fi
	f=$o/$mode/out.log
	eq "$mode: storage" "$storage" "$(field storage "$(section storage "$f")")"
	section selftest "$f" | grep -v '^#QMP ' > "$o/$mode.tap"
	report "$mode" "$o/$mode.tap" skips-fail
	for t in hugetlb_demote memory_hotplug offline_while_allocating; do
		check "$mode: paths.$t ran" grep -qE "^(not )?ok [0-9]+ paths\.$t( |\$)" "$o/$mode.tap"
	done
	eq "$mode: QEMU took every monitor command" "" "$(grep '^error' "$o/$mode/qmp.log")"
	if [[ $kernel == *+debug* ]]; then
		eq "$mode: no debug check fired, no other warning" "" \
			"$(debug_reports "$o/$mode/console.log" "$QEMU_TOPOLOGY_WARNING")"
	fi
done
done_testing
