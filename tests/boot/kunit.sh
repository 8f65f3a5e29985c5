#!/usr/bin/env bash
# The series' KUnit suite (pgalloc_tag), built in and run at boot with
# kunit.enable=1, in page-flags mode and in page_ext mode, and on the
# debug build of each distribution layout in LAYOUTS (tests/lib.sh); the console log
# is read with the kernel's own kunit.py parse. The one case about the
# page_ext slot skips in page-flags mode, and says why; every other case
# runs in both modes.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/kunit
kunit=$BUILD/linux/tools/testing/kunit/kunit.py

run_suite() { # NAME APPEND [KERNEL]
	local name=$1 out=$o/$1
	guest "${3:-profiling}" "$out" "kunit.enable=1 kunit.filter_glob=pgalloc_tag $2" "echo done" || return
	python3 "$kunit" parse --json="$out/kunit.json" "$out/console.log" > "$out/kunit.txt" 2>&1
	# One TAP line per case (per parameter for parametrised cases).
	python3 - "$out/kunit.json" "$name" "$out/console.log" <<'PY'
import json, re, sys
data = json.load(open(sys.argv[1]))
name = sys.argv[2]
reasons = {}
for line in open(sys.argv[3], errors="replace"):
    m = re.search(r"ok \d+ (\S+) # SKIP (.*)", line)
    if m:
        reasons[m.group(1)] = m.group(2).strip()
n = 0
def walk(group, prefix):
    global n
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub["name"] + ": ")
    for t in group.get("test_cases", []):
        n += 1
        label = prefix + t["name"]
        if t["status"] == "PASS":
            print(f"ok {n} - kunit {name}: {label}")
        elif t["status"] == "SKIP":
            print(f"ok {n} - kunit {name}: {label} # SKIP {reasons.get(t['name'], 'no reason given')}")
        else:
            print(f"not ok {n} - kunit {name}: {label} ({t['status']})")
walk(data, "")
if n == 0:
    print(f"not ok 1 - kunit {name}: the pgalloc_tag suite ran")
PY
}

run_suite flags ""
run_suite page_ext "sysctl.vm.mem_profiling=1,page_ext"
eq "page-flags mode: only the page_ext slot case skips, with the reason" \
	"ok 1 page_ext_slot # SKIP page tags are kept in page flags on this boot" \
	"$(grep -o 'ok [0-9]* [a-z_]* # SKIP .*' "$o/flags/console.log" | tr -d '\r' | sed 's/^ok [0-9]*/ok 1/')"
eq "page_ext mode: no case skips" "" "$(grep -o 'ok [0-9]* [a-z_]* # SKIP .*' "$o/page_ext/console.log" | tr -d '\r')"

# The debug build of each distribution layout (LAYOUTS, tests/lib.sh):
# page_ext by itself, so no case skips.
for l in $LAYOUTS; do
	if ! err=$(build_layout "$l"); then
		fail "layout-$l: the layout's debug build builds" "$err"
		continue
	fi
	run_suite "layout-$l" "" "$(layout_id "$l")"
	eq "layout-$l: no case skips" "" \
		"$(grep -o 'ok [0-9]* [a-z_]* # SKIP .*' "$o/layout-$l/console.log" 2> /dev/null | tr -d '\r')"
done
done_testing
