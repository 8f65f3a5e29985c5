#!/usr/bin/env bash
# The boot harness itself: a guest command's exit status and output come
# back to the host; a hang is cut off by the timeout with a clear error; a
# kernel that panics is reported as such; -n and -c give the guest its NUMA
# nodes and CPUs.
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

# -n 2 -c 2: the guest has two nodes of half the memory each and CPU n on
# node n (the kernel's NUMA emulation), and both CPUs (one socket each in
# SeaBIOS's MP table: the kernel has no ACPI).
out=$("$boot" -k profiling -o "$o/numa" -n 2 -c 2 -m 1G -q \
	'nproc; for c in 0 1; do ls -d /sys/devices/system/cpu/cpu$c/node*; done;
	 for n in /sys/devices/system/node/node*/meminfo; do awk "/MemTotal/ { print \$4 }" $n; done' 2>&1)
rc=$?
eq "the 2-node guest ran" 0 "$rc"
lines=$(tr -d '\r' < "$o/numa/out.log")
eq "a -c 2 guest brings up 2 CPUs" 2 "$(sed -n 1p <<< "$lines")"
eq "CPU 0 is on node 0, CPU 1 on node 1" \
	"/sys/devices/system/cpu/cpu0/node0 /sys/devices/system/cpu/cpu1/node1" "$(sed -n '2,3p' <<< "$lines" | tr '\n' ' ' | sed 's/ $//')"
n0=$(sed -n 4p <<< "$lines") n1=$(sed -n 5p <<< "$lines")
if [ -n "$n0" ] && [ -n "$n1" ] && [ -z "$(sed -n 6p <<< "$lines")" ] &&
	[ "$n0" -gt 400000 ] && [ "$n1" -gt 400000 ]; then
	ok "two nodes, each with about half of the 1 GiB (MemTotal kB: $n0, $n1)"
else
	fail "two nodes, each with about half of the 1 GiB" "$lines"
fi
fake=$BUILD/obj/harness-no-numa-emu
rm -rf "$fake" && mkdir -p "$fake/arch/x86/boot"
: > "$fake/arch/x86/boot/bzImage"; : > "$fake/initramfs.cpio"; echo fake > "$fake/.pftag-built"
echo '# CONFIG_NUMA_EMU is not set' > "$fake/.config"
check_fails "-n 2 on a build without NUMA emulation is refused, with the way out" \
	'needs NUMA emulation.*CONFIG_NUMA_EMU' "$boot" -k harness-no-numa-emu -n 2 -m 1G true
rm -rf "$fake"
cmd=$("$boot" -k profiling -d -c 2 -m 1G -i true)
check "-c 2 gives QEMU one socket per vCPU" grep -q -- '-smp 2,sockets=2,cores=1,threads=1 ' <<< "$cmd"
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
