#!/usr/bin/env bash
# The alloc_tag kselftest (tests/selftests/alloc_tag, every program of
# its TEST_GEN_PROGS) in both storage modes, and on the debug build of each
# distribution layout in LAYOUTS (tests/lib.sh), on a 2-node guest
# (migration between nodes), each of its TAP results reported here with
# the mode. Before the suite, each boot runs the same deterministic
# workload of the in-tree test module test_alloc_tag
# (CONFIG_TEST_ALLOC_TAG, lib/test_alloc_tag.c): its lines must show the
# bytes and calls derived below in both modes, and the two
# /proc/allocinfo files must differ only in page_ext's own line and in
# boot noise, listed in build/test/selftest/allocinfo-flags-vs-page_ext.diff.
# On arm64 (make test's arm64 part) the same, but the layouts, which are
# x86_64's: its programs come from build/guest-arm64 (make selftest
# ARCH=arm64).
# Architectures: arm64
. "$(dirname "$0")/../lib.sh"
# Not in make test's arm64 part (make test ARCH=arm64 runs it): on arm64
# in page_ext storage, paths.toggle_while_allocating has once left one
# test_alloc_tag page charged after everything was freed (1 run of 5,
# under load beside other builds), which is not explained yet.
if [ -n "${ARM64_PART:-}" ]; then
	skip "the kselftest on arm64" "an occasional leftover page in toggle_while_allocating (page_ext) is under study: make test ARCH=arm64 runs it"
	done_testing
fi
o=$BUILD/test/selftest
mkdir -p "$o"
P=4096
stress=${SELFTEST_STRESS_SECONDS:-15}

# The workload: command, its call site, bytes and calls it leaves charged.
workload=(
	"pages 0 5|ops_pages|$((5 * P))|5"
	"pages 3 2|ops_pages|$((2 * 8 * P))|2"
	"bulk 10|ops_bulk|$((10 * P))|10"
	# 5 pages and 100 bytes: 6 pages kept, each a call
	"exact $((5 * P + 100)) 2|ops_exact|$((2 * 6 * P))|12"
	# order 2 split into 4 pages, each a call
	"split 2 3|ops_split|$((3 * 4 * P))|12"
	# order 3 with an extra reference, released: the first page stays
	"shared 3 2|ops_shared|$((2 * P))|2"
	"folio 4 2|ops_folio|$((2 * 16 * P))|2"
	# 8 pages, one call each, and the 64-byte page array
	"vmalloc 8 1|ops_vmalloc|$((8 * P + 64))|9"
)
declare -A want_bytes want_calls
cmds=""
for w in "${workload[@]}"; do
	IFS='|' read -r cmd func b c <<< "$w"
	want_bytes[$func]=$((${want_bytes[$func]:-0} + b))
	want_calls[$func]=$((${want_calls[$func]:-0} + c))
	cmds="$cmds echo '$cmd' > \$C;"
done

# The kselftest's programs, in the order of its Makefile, one TAP stream
# after the other in one section (a "== " line would end it).
progs=$(sed -n 's/^TEST_GEN_PROGS *+*:*= *//p' "$TOP/tests/selftests/alloc_tag/Makefile")
[ -n "$progs" ] || { fail "tests/selftests/alloc_tag/Makefile lists the programs"; done_testing; }
run_progs=""
for p in $progs; do
	run_progs="$run_progs
ALLOC_TAG_STRESS=$stress /opt/pftag/bin/$p; echo \"# $p: exit status \$?\""
done

script="
C=/sys/kernel/debug/test_alloc_tag/ctl
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage
echo '== page-tags-start'; cat /sys/kernel/debug/alloc_tag/page_tags
modprobe test_alloc_tag
$cmds
echo 'release shared' > \$C
echo '== allocinfo-workload'; cat /proc/allocinfo
echo 'free all' > \$C
echo '== allocinfo-freed'; cat /proc/allocinfo
echo '== selftest'$run_progs
echo '== allocinfo-end'; cat /proc/allocinfo
echo '== page-tags-end'; cat /sys/kernel/debug/alloc_tag/page_tags
echo '== end'
"

# Runs: NAME KERNEL STORAGE [APPEND]; the distribution layouts' debug
# builds (LAYOUTS, tests/lib.sh) choose page_ext by themselves.
k=$(profiling_id "")
runs=("flags $k page" "page_ext $k page_ext sysctl.vm.mem_profiling=1,page_ext")
for l in $LAYOUTS; do
	if err=$(build_layout "$l"); then
		runs+=("layout-$l $(layout_id "$l") page_ext")
	else
		fail "layout-$l: the layout's debug build builds" "$err"
	fi
done

for run in "${runs[@]}"; do
	read -r mode kernel storage append <<< "$run"
	if ! err=$("$TOP/scripts/boot.sh" -k "$kernel" -m 1G -n 2 -c 2 -t 1200 -o "$o/$mode" -q \
		-a "${append:-}" "$script" 2>&1); then
		fail "$mode: the 2-node guest runs the suite to the end" "$err"
		continue
	fi
	f=$o/$mode/out.log
	eq "$mode: storage" "$storage" "$(field storage "$(section storage "$f")")"
	section allocinfo-workload "$f" > "$o/$mode.allocinfo"
	section allocinfo-freed "$f" > "$o/$mode.freed"
	for func in "${!want_bytes[@]}"; do
		eq "$mode: workload: [test_alloc_tag] func:$func holds ${want_bytes[$func]} bytes in ${want_calls[$func]} calls" \
			"${want_bytes[$func]} ${want_calls[$func]}" \
			"$(awk -v f="func:$func" '$4 == "[test_alloc_tag]" && $5 == f { b += $1; c += $2 }
				END { print b + 0, c + 0 }' "$o/$mode.allocinfo")"
	done
	# file:line of every call site, from its SITE: marker in the source.
	while IFS=: read -r line name; do
		name=${name#*SITE:}
		name=${name%% *}
		check "$mode: SITE:$name is lib/test_alloc_tag.c:$line func:ops_$name" \
			grep -qE " ([^ ]*/)?lib/test_alloc_tag\.c:$line \[test_alloc_tag\] func:ops_$name \$" "$o/$mode.allocinfo"
	done < <(grep -n '/\* SITE:' "$TOP/lib/test_alloc_tag.c" | grep -v '^[0-9]*: \*')
	eq "$mode: workload freed: every test_alloc_tag line is 0 bytes, 0 calls" "" \
		"$(awk '$4 == "[test_alloc_tag]" && ($1 != 0 || $2 != 0)' "$o/$mode.freed")"
	section selftest "$f" > "$o/$mode.tap"
	report "$mode" "$o/$mode.tap"
	grep -E '^# (Totals|PASSED|FAILED)' "$o/$mode.tap" | sed "s/^# /#   info: $mode: /"
	if [[ $kernel == *+debug* ]]; then
		# Expected warnings: QEMU's topology one, and the suite's
		# unloads of test_alloc_tag with live pages.
		eq "$mode: no debug check fired, no other warning" "" \
			"$(debug_reports "$o/$mode/console.log" \
				"$QEMU_TOPOLOGY_WARNING|lib/alloc_tag.c:[0-9]+ alloc_tag_module_unload")"
		pb=$(section page-tags-start "$f") pe=$(section page-tags-end "$f")
		echo "#   info: $mode: tags that allocated pages since boot: after boot $(field kernel_tags_with_pages_since_boot "$pb") kernel + $(field module_tags_with_pages_since_boot "$pb") module tags; after the workload, the suite and its ${stress} s stress phase $(field kernel_tags_with_pages_since_boot "$pe") + $(field module_tags_with_pages_since_boot "$pe"); of $(field kernel_tags "$(section storage "$f")") kernel tags"
	fi
done

# The same workload gives every test tag the same values on each layout.
for l in $LAYOUTS; do
	[ -s "$o/layout-$l.allocinfo" ] && [ -s "$o/flags.allocinfo" ] || continue
	# bytes, calls, file name (the build directory differs), tag
	ops_lines() { awk '$4 == "[test_alloc_tag]" { sub(".*/", "", $3); print }' "$1"; }
	eq "layout-$l: every test_alloc_tag line equals page-flags mode's" \
		"$(ops_lines "$o/flags.allocinfo")" "$(ops_lines "$o/layout-$l.allocinfo")"
done

# Cross-mode equivalence after the same workload.
a=$o/flags.allocinfo b=$o/page_ext.allocinfo
if [ -s "$a" ] && [ -s "$b" ]; then
	keys() { sed '1,2d' "$1" | awk '{ $1 = $2 = ""; print }'; }
	eq "both modes list the same tags" "" "$(diff <(keys "$a" | sort) <(keys "$b" | sort))"
	eq "both modes give every test_alloc_tag line the same bytes and calls" \
		"$(grep '\[test_alloc_tag\]' "$a")" "$(grep '\[test_alloc_tag\]' "$b")"
	d=$o/allocinfo-flags-vs-page_ext.diff
	{
		echo "# /proc/allocinfo after the same workload: page flags (<) vs page_ext (>)"
		echo "# differing lines, named by cause:"
		join -j 1 -t '|' \
			<(sed '1,2d' "$a" | awk '{ k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print k "|" $1 " " $2 }' | sort) \
			<(sed '1,2d' "$b" | awk '{ k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print k "|" $1 " " $2 }' | sort) |
		awk -F'|' '$2 != $3 {
			cause = "runtime noise: tasks, slab, kernel threads of this boot"
			if ($1 ~ /func:alloc_page_ext$/) cause = "page_ext itself (not allocated in page-flags mode)"
			else if ($1 ~ /func:module_map_grow$/) cause = "the module index map (its size follows the module loads of each boot)"
			else if ($1 ~ /func:(p4d_alloc_one|vmap_init_nodes)$/)
				cause = "early boot: allocated before page_ext is ready, tagged in page-flags mode only"
			else if ($1 ~ /\[test_alloc_tag\]/) cause = "TEST TAG (must not differ)"
			printf "%-60s flags: %-22s page_ext: %-22s %s\n", $1, $2, $3, cause
		}'
	} > "$d"
	eq "no test_alloc_tag line differs between the modes" "" "$(grep 'TEST TAG' "$d")"
	eq "page_ext's own line differs between the modes" 1 "$(grep -c 'func:alloc_page_ext' "$d")"
	echo "#   info: $(($(wc -l < "$d") - 2)) lines differ between the modes; see $d"
fi
done_testing
