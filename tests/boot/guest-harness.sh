#!/usr/bin/env bash
# The boot harness itself: a guest command's exit status and output come
# back to the host; a hang is cut off by the timeout with a clear error; a
# kernel that panics is reported as such; the NUMA options reach QEMU.
. "$(dirname "$0")/../lib.sh"
boot=$TOP/scripts/boot.sh
o=$BUILD/test/guest-harness

out=$("$boot" -k profiling -o "$o/status" -q 'uname -r; exit 7' 2>&1)
rc=$?
eq "the guest command's exit status reaches the host" 7 "$rc"
want=$(cat "$BUILD/obj/profiling/.pftag-built")
eq "uname -r in the guest is the release just built" "$want" "$(tr -d '\r' < "$o/status/out.log")"

out=$("$boot" -k profiling -o "$o/timeout" -t 20 -q 'sleep 600' 2>&1)
rc=$?
eq "a guest that does not finish is killed at the timeout (exit 124)" 124 "$rc"
if grep -q 'did not finish within 20 s' <<< "$out"; then ok "the timeout is reported with its limit"; else
	fail "the timeout is reported with its limit" "$out"; fi

out=$("$boot" -k profiling -o "$o/panic" -t 120 -a 'rdinit=/no/such/init init=/no/such/init' -q true 2>&1)
rc=$?
eq "a kernel that panics is reported (exit 125)" 125 "$rc"
if grep -q 'the kernel died: .*Kernel panic' <<< "$out"; then ok "the panic message is quoted"; else
	fail "the panic message is quoted" "$out"; fi

cmd=$("$boot" -k profiling -d -n 2 -c 2 -m 1G -i true)
check "a 2-node guest gets two memory backends and NUMA nodes" \
	grep -q -- '-numa node,nodeid=0,memdev=m0,cpus=0 .*-numa node,nodeid=1,memdev=m1,cpus=1' <<< "$cmd"
check "-i gives the guest an instruction-counting clock" grep -q -- '-icount shift=0' <<< "$cmd"
check_fails "memory that does not split over the nodes is refused" 'does not split evenly' \
	"$boot" -k profiling -d -n 3 -m 1G true
cmd=$("$boot" -k profiling -d -m 2048 true)
check "a plain number of memory is MiB, as QEMU reads it (-m 2048: 2048M)" grep -q -- '-m 2048M ' <<< "$cmd"
cmd=$("$boot" -k profiling -d -m 1G true)
check "a size with a suffix is read as QEMU reads it (-m 1G: 1024M)" grep -q -- '-m 1024M ' <<< "$cmd"
check_fails "memory below 64 MiB is refused, with its size" "'1000K' is 1024000 bytes" \
	"$boot" -k profiling -d -m 1000K true
check_fails "memory that is not a size is refused" "'lots' is not a size" "$boot" -k profiling -d -m lots true
check_fails "a non-numeric CPU count is refused" 'whole numbers' "$boot" -k profiling -d -c two true
check_fails "a build that does not exist is named" "kernel build 'nosuch' is missing" "$boot" -k nosuch true
done_testing
