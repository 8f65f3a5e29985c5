#!/usr/bin/env bash
# The stress test of the alloc_tag kselftest on the debug build
# (CONFIG_MEM_ALLOC_PROFILING_DEBUG), in both storage modes, on a 2-node
# guest: STRESS_SECONDS (default 20; `make stress`: 240) of concurrent
# allocation, free, split, THP split, migration, compaction and module
# load/unload on both CPUs; then every test tag must be back where it
# started, nothing negative, and the debug checks must have said nothing.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/stress
id=profiling+debug
seconds=${STRESS_SECONDS:-20}
if ! out=$(build_profiling debug); then
	fail "the debug build (FRAGMENTS=debug) builds" "$(tail -20 <<< "$out")"
	done_testing
fi
script="
modprobe test_alloc_tag
echo '== selftest'
ALLOC_TAG_STRESS=$seconds /opt/pftag/bin/alloc_tag_stress_test -t stress
echo '== end'
"
for mode in flags page_ext; do
	append=$(mode_append "$mode")
	if ! err=$("$TOP/scripts/boot.sh" -k "$id" -m 1G -n 2 -c 2 -t $((seconds * 4 + 300)) \
		-o "$o/$mode" -q -a "$append" "$script" 2>&1); then
		fail "$mode: the stress run gets to the end" "$err"
		continue
	fi
	tap=$(section selftest "$o/$mode/out.log")
	r=$(grep -E '^(not )?ok [0-9]+ paths.stress' <<< "$tap")
	# What the workers did, for the record (the selftest fails a worker
	# that completed no round).
	rounds=$(grep -o 'stress:rounds: .*' <<< "$tap" | head -n 1)
	[ -z "$rounds" ] || echo "#   info: $mode: $seconds s, ${rounds#stress:}"
	if [[ $r == "ok "* ]]; then
		ok "$mode: $seconds s of stress: every test tag back to its start, nothing negative"
	else
		fail "$mode: $seconds s of stress: every test tag back to its start, nothing negative" \
			"$(grep -E '^#' <<< "$tap" | tail -30)"
	fi
	# The one boot warning of this 2-node guest is not ours.
	eq "$mode: the debug checks reported nothing" "" \
		"$(debug_reports "$o/$mode/console.log" "$QEMU_TOPOLOGY_WARNING")"
done
done_testing
