#!/usr/bin/env bash
# The allocinfo tool's own host tests (allocinfo/tests: samples, record and
# report, command line) and a bounded fuzz run of its parser. Their TAP
# lines are passed through for the runner to count.
. "$(dirname "$0")/../lib.sh"
ai=$TOP/allocinfo
mkdir -p "$BUILD/test"
if ! out=$(make -s -C "$ai" all static asan 2>&1); then
	fail "allocinfo builds (host, static, sanitizers)" "$out"
	done_testing
fi
ok "allocinfo builds (host, static, sanitizers)"
make -s -C "$ai" test > "$BUILD/test/allocinfo-tool.out" 2>&1
rc=$?
# The sub-runner keeps one log per suite; each holds TAP lines.
for log in "$ai"/build/test/*.log; do
	grep -E '^(not )?ok ' "$log" | sed "s|^\(not \)\{0,1\}ok [0-9]* - |&allocinfo/$(basename "$log" .log): |"
	grep -E '^#   ' "$log" | head -20
done
[ $rc -eq 0 ] || fail "allocinfo's test runner exits 0" "$(tail -5 "$BUILD/test/allocinfo-tool.out")"

if out=$(make -s -C "$ai" fuzz-short FUZZ_SHORT_TIME=${FUZZ_SHORT_TIME:-30} 2>&1); then
	ok "the parser survives ${FUZZ_SHORT_TIME:-30} s of libFuzzer with ASan and UBSan"
else
	fail "the parser survives a bounded fuzz run" "$(tail -20 <<< "$out")"
fi
done_testing
