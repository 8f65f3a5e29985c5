#!/usr/bin/env bash
# The series' KUnit suite (pgalloc_tag), built in and run at boot with
# kunit.enable=1, in page-flags mode and in page_ext mode, on the debug
# build with kfence sampling every allocation it can
# (kfence.sample_interval=1), and on the debug build of each distribution
# layout in LAYOUTS (tests/lib.sh); the console log is read with the
# kernel's own kunit.py parse. Cases skip where their subject is missing,
# and say why: the page_ext slot's in page-flags mode, the DMA ones where
# the build has no such zone (the test kernels have no ZONE_DMA, the
# layout's has), kfence's where kfence is off (every run but the kfence
# one), the overflow one where tag blocks stay out of slabs. No run may
# show kmalloc's "Unexpected gfp" report (slab_dma32_blocks provokes the
# path); every run of slab_block_overflow shows its warning, once.
# For ARCH=i386 (tests/run.sh) the same on 32-bit kernels, whose few
# spare page-flags bits send page tags to page_ext by themselves.
# Architectures: any
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/kunit
kunit=$BUILD/linux/tools/testing/kunit/kunit.py

run_suite() { # NAME APPEND [KERNEL]
	local name=$1 out=$o/$1
	guest "${3:-$(profiling_id "")}" "$out" "kunit.enable=1 kunit.filter_glob=pgalloc_tag $2" "echo done" || return
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

# in_flags NAME: 1 when the run kept page tags in page flags (its boot
# log says where), else 0.
in_flags() {
	grep -q 'alloc_tag: page tags in page flags' "$o/$1/console.log" 2> /dev/null && echo 1 || echo 0
}
# skips NAME: the run's skipped cases, one line each, numbers left out.
skips() {
	grep -o 'ok [0-9]* [a-z0-9_]* # SKIP .*' "$o/$1/console.log" 2> /dev/null |
		tr -d '\r' | sed 's/^ok [0-9]* //'
}
# expected_skips BUILD-ID FLAGS KFENCE: the cases that must skip, in the
# suite's order: the page_ext slot's in page-flags mode (FLAGS=1), the
# DMA cases where the build has no such zone, kfence's unless KFENCE=1.
expected_skips() {
	local cfg=$BUILD/obj/$1/.config
	[ "$2" = 1 ] && echo "page_ext_slot # SKIP page tags are kept in page flags on this boot"
	grep -qE '^CONFIG_(KASAN|KMSAN|SLAB_FREELIST_HARDENED)=y' "$cfg" &&
		echo "slab_block_overflow # SKIP this build keeps tag blocks out of slabs"
	grep -q '^CONFIG_ZONE_DMA=y' "$cfg" || echo "kmalloc_dma_first # SKIP this config has no ZONE_DMA"
	grep -q '^CONFIG_ZONE_DMA32=y' "$cfg" || echo "slab_dma32_blocks # SKIP this config has no ZONE_DMA32"
	[ "$3" = 1 ] || echo "slab_kfence_untaggable # SKIP kfence is off on this boot (needs kfence.sample_interval=1)"
}
# overflow_warned NAME: slab_block_overflow's overwritten block was found
# at its slab's free, once, naming the cache (where the case ran).
overflow_warned() {
	local n
	grep -q 'ok [0-9]* slab_block_overflow # SKIP' "$o/$1/console.log" 2> /dev/null && return
	n=$(grep -c "pgalloc_tag_overflow: a slab's tag block was overwritten past its last object" \
		"$o/$1/console.log" 2> /dev/null)
	eq "$1: the overwritten tag block is reported once at its slab's free" 1 "${n:-0}"
}
# no_gfp_report NAME: no slab metadata asked kmalloc for a zone.
no_gfp_report() {
	eq "$1: no 'Unexpected gfp' report (slab metadata's flags)" "" \
		"$(grep -A1 'Unexpected gfp' "$o/$1/console.log" 2> /dev/null | tr -d '\r')"
}

run_suite flags ""
run_suite page_ext "sysctl.vm.mem_profiling=1,page_ext"
# The 64-bit test kernels have the bits for page flags; 32-bit ones not.
if [ "${ARCH:-x86_64}" = i386 ]; then
	eq "$ARCH: page tags went to page_ext by themselves" 0 "$(in_flags flags)"
else
	eq "page-flags mode: page tags are in page flags" 1 "$(in_flags flags)"
fi
eq "page-flags mode: only the cases whose subject is missing skip, with the reason" \
	"$(expected_skips "$(profiling_id "")" "$(in_flags flags)" 0)" "$(skips flags)"
eq "page_ext mode: only the cases whose subject is missing skip" \
	"$(expected_skips "$(profiling_id "")" 0 0)" "$(skips page_ext)"
no_gfp_report flags
overflow_warned flags
no_gfp_report page_ext
overflow_warned page_ext

# kfence serving what it can: the kfence case runs.
if arm64_part_skip "kfence: the suite on the debug build with KFENCE sampling"; then
	:
elif err=$(build_profiling debug); then
	run_suite kfence "kfence.sample_interval=1" "$(profiling_id debug)"
	eq "kfence: only the cases whose subject is missing skip" \
		"$(expected_skips "$(profiling_id debug)" "$(in_flags kfence)" 1)" "$(skips kfence)"
	no_gfp_report kfence
	overflow_warned kfence
else
	fail "kfence: the debug build (FRAGMENTS=debug) builds" "$err"
fi

# The debug build of each distribution layout (LAYOUTS, tests/lib.sh):
# page_ext by itself, so no case skips.
for l in $LAYOUTS; do
	if ! err=$(build_layout "$l"); then
		fail "layout-$l: the layout's debug build builds" "$err"
		continue
	fi
	run_suite "layout-$l" "" "$(layout_id "$l")"
	eq "layout-$l: only the cases whose subject is missing skip" \
		"$(expected_skips "$(layout_id "$l")" 0 0)" "$(skips "layout-$l")"
	no_gfp_report "layout-$l"
	overflow_warned "layout-$l"
done
done_testing
