#!/usr/bin/env bash
# ARCH= of the two commands (scripts/lib.sh): an architecture the project
# does not build is refused naming those it does; the x86_64-only targets
# refuse another one before they build anything; a build for i386 has a
# directory of its own, named alike by the scripts and by the tests; and
# a build configured for 32-bit x86 boots in qemu-system-i386, on a CPU
# that says Intel, one for arm64 in qemu-system-aarch64 on the virt
# machine, its output on virtio consoles.
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_fails "ARCH=mips is refused" 'error: ARCH=mips is not an architecture the project builds' \
	env ARCH=mips "$TOP/scripts/build.sh" profiling
check_fails "ARCH=mips is refused, naming the architectures there are" 'way out: use one of: x86_64 i386 arm64$' \
	env ARCH=mips "$TOP/scripts/build.sh" profiling
for t in bench mm-selftests stress check-bisect; do
	check_fails "make $t ARCH=i386 is refused before it builds" \
		"make $t is for x86_64 only, not ARCH=i386" make -s -C "$TOP" -n "$t" ARCH=i386
done

eq "the scripts name the i386 debug build profiling+debug+arch-i386" profiling+debug+arch-i386 \
	"$(ARCH=i386 bash -c ". '$TOP/scripts/lib.sh'; obj_id profiling debug")"
eq "the tests name it alike" "$(ARCH=i386 bash -c ". '$TOP/scripts/lib.sh'; obj_id profiling debug")" \
	"$(ARCH=i386 bash -c ". '$TOP/tests/lib.sh'; profiling_id debug")"
eq "x86_64 builds keep their names" profiling+debug \
	"$(ARCH=x86_64 bash -c ". '$TOP/scripts/lib.sh'; obj_id profiling debug")"
eq "make names the i386 build as the scripts do" "scripts/boot.sh -k profiling+arch-i386" \
	"$(make -s -C "$TOP" -n boot ARCH=i386 | grep -o 'scripts/boot.sh -k [^ ]*')"

# boot.sh's dry run of builds configured for each architecture.
mkdir -p "$tmp/obj/b32" "$tmp/obj/b64" "$tmp/obj/a64"
printf 'CONFIG_X86_32=y\n' > "$tmp/obj/b32/.config"
printf 'CONFIG_X86_64=y\n' > "$tmp/obj/b64/.config"
printf 'CONFIG_ARM64=y\n' > "$tmp/obj/a64/.config"
b32=$(BUILD=$tmp "$TOP/scripts/boot.sh" -k b32 -d)
eq "a build for 32-bit x86 boots in qemu-system-i386" qemu-system-i386 "$(awk '{ print $5 }' <<< "$b32")"
check "its CPU says Intel (no Athlon SMP warning)" grep -q -- "-cpu max,vendor=GenuineIntel " <<< "$b32"
eq "an x86_64 build boots in qemu-system-x86_64" qemu-system-x86_64 \
	"$(BUILD=$tmp "$TOP/scripts/boot.sh" -k b64 -d | awk '{ print $5 }')"
a64=$(BUILD=$tmp "$TOP/scripts/boot.sh" -k a64 -d)
eq "an arm64 build boots in qemu-system-aarch64" qemu-system-aarch64 "$(awk '{ print $5 }' <<< "$a64")"
check "on the virt machine, from its Image" grep -q -- "-machine virt .*-kernel $tmp/obj/a64/arch/arm64/boot/Image" <<< "$a64"
check "its output and status on virtio consoles" grep -q -- "-device virtconsole,chardev=out .*-device virtconsole,chardev=status" <<< "$a64"
check_fails "memory hotplug (-H) is refused for arm64" '-H \(memory hotplug through ACPI\) is for x86 guests' \
	env BUILD="$tmp" "$TOP/scripts/boot.sh" -k a64 -m 1G -H 2G -d
done_testing
