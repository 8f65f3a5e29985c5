#!/usr/bin/env bash
# boot.sh [options] [CMD]: boot a built kernel under QEMU with the
# project's initramfs, run CMD (a shell command line) in the guest, print
# its output, and exit with its exit status.
#
#   -k ID       build to boot (build/obj/ID; default: profiling)
#   -m SIZE     guest memory, QEMU syntax (default 512M)
#   -c N        vCPUs (default 2)
#   -n N        NUMA nodes; memory is split evenly, CPUs round robin
#   -a ARGS     extra kernel command line
#   -t SECS     hard timeout of the whole boot (default 300)
#   -i          -icount shift=0: the guest clock counts instructions
#   -H MAXMEM   memory hotplug: 4 DIMM slots, up to MAXMEM in all (QEMU
#               syntax), and QEMU's QMP monitor on DIR/qmp.sock; the
#               guest asks for QMP commands by printing lines
#               "#QMP {json}", which scripts/qmp-relay.py sends (log:
#               DIR/qmp.log). No -n with -H.
#   -x CPIO     one more archive unpacked over the build's initramfs
#               (files only some boots need, e.g. perf and its libraries)
#   -o DIR      keep console.log, out.log, status there (default
#               build/boot/last)
#   -p ARGS     load the TCG plugin build/plugin/libpftag-cache.so (built
#               by scripts/qemu-plugin.sh when out of date) with ARGS, its
#               comma-separated arguments, e.g. out=FILE (default output:
#               DIR/qemu.log); -p '' for none. See bench/plugin/pftag-cache.c
#   -q          do not print the guest's output (it stays in DIR/out.log)
#   -d          dry run: print the QEMU command line and stop
#
# Environment equivalents: KERNEL MEM CPUS NUMA APPEND TIMEOUT ICOUNT OUT
# QUIET DRYRUN EXTRA_INITRD HOTPLUG, PLUGIN (set, even empty: -p), and CMD.
# ACCEL=kvm uses KVM (the default is TCG: KVM is
# not usable on every machine, and -icount needs TCG).
#
# Exit status: the command's own, or 124 when the timeout fired and 125
# when the guest died without reporting one (a panic); the message says
# which and where the console log is.
STEP=boot
. "$(dirname "$0")/lib.sh"

KERNEL=${KERNEL:-profiling}
MEM=${MEM:-512M}
CPUS=${CPUS:-2}
NUMA=${NUMA:-1}
APPEND=${APPEND:-}
TIMEOUT=${TIMEOUT:-300}
ICOUNT=${ICOUNT:-0}
OUT=${OUT:-$BUILD/boot/last}
QUIET=${QUIET:-0}
DRYRUN=${DRYRUN:-0}
ACCEL=${ACCEL:-tcg}
CMD=${CMD:-}
EXTRA_INITRD=${EXTRA_INITRD:-}
HOTPLUG=${HOTPLUG:-}
PLUGIN_ON=${PLUGIN+1}
PLUGIN=${PLUGIN:-}

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts "k:m:c:n:a:t:o:x:p:H:iqdh" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	m) MEM=$OPTARG ;;
	c) CPUS=$OPTARG ;;
	n) NUMA=$OPTARG ;;
	a) APPEND=$OPTARG ;;
	t) TIMEOUT=$OPTARG ;;
	o) OUT=$OPTARG ;;
	i) ICOUNT=1 ;;
	H) HOTPLUG=$OPTARG ;;
	x) EXTRA_INITRD=$OPTARG ;;
	p) PLUGIN=$OPTARG PLUGIN_ON=1 ;;
	q) QUIET=1 ;;
	d) DRYRUN=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || CMD="$*"
[ -n "$CMD" ] || CMD="cat /proc/version"

case "$CPUS$NUMA$TIMEOUT" in *[!0-9]*) die "-c, -n and -t take whole numbers" "e.g. -c 2 -n 2 -t 300" ;; esac
[ "$NUMA" -ge 1 ] && [ "$CPUS" -ge 1 ] && [ "$TIMEOUT" -ge 1 ] ||
	die "-c, -n and -t must be at least 1" "e.g. -c 2 -n 2 -t 300"
# size_mib WHAT SIZE: SIZE in MiB. QEMU's -m syntax: a number alone is
# MiB; K, M, G, T (optionally with B) scale it. Anything else, or less
# than 64 MiB, is refused.
size_mib() {
	local b
	case $2 in
	*[!0-9]*) b=$(numfmt --from=iec "${2%[bB]}" 2>/dev/null) ||
			die "$1 '$2' is not a size" "use QEMU's syntax, e.g. 512, 512M or 4G" ;;
	'') die "$1 is empty" "use QEMU's syntax, e.g. 512, 512M or 4G" ;;
	*) b=$((10#$2 * 1048576)) ;;
	esac
	[ "$((b / 1048576))" -ge 64 ] && [ "$((b % 1048576))" -eq 0 ] ||
		die "$1 '$2' is $b bytes: not a whole number of MiB, at least 64" \
		    "use QEMU's syntax, e.g. 512 (MiB), 512M or 4G"
	echo $((b / 1048576))
}
mem_mib=$(size_mib "guest memory" "$MEM") || exit
mem_arg=${mem_mib}M
if [ -n "$HOTPLUG" ]; then
	max_mib=$(size_mib "-H (the most memory with hotplug)" "$HOTPLUG") || exit
	[ "$max_mib" -gt "$mem_mib" ] ||
		die "-H $HOTPLUG leaves no room to hot-add memory: it must be more than the guest's $MEM" "e.g. -m 1G -H 4G"
	[ "$NUMA" -eq 1 ] || die "-H does not go with -n $NUMA" "drop -n: the hotplug tests use one node"
	mem_arg="${mem_mib}M,slots=4,maxmem=${max_mib}M"
fi
[ "$((mem_mib % NUMA))" -eq 0 ] || die "$MEM does not split evenly over $NUMA NUMA nodes" "pick a multiple"
[ -z "$PLUGIN_ON" ] || [ "$ACCEL" = tcg ] || die "-p (a TCG plugin) needs ACCEL=tcg, not $ACCEL" "drop ACCEL= or -p"

obj=$BUILD/obj/$KERNEL
# The QEMU of the build's architecture (scripts/lib.sh): an i386 build
# boots in qemu-system-i386, on the same "pc" machine; an arm64 build in
# qemu-system-aarch64, on the "virt" machine.
arch=$(build_arch "$obj/.config")
kernel=$obj/$(arch_image "$arch")
qemu_bin=$(arch_qemu "$arch")
[ "$arch" != arm64 ] || [ -z "$HOTPLUG" ] ||
	die "-H (memory hotplug through ACPI) is for x86 guests" "drop -H for an arm64 build"
if [ "$DRYRUN" != 1 ]; then
	[ -f "$obj/.pftag-built" ] && [ -f "$kernel" ] ||
		die "kernel build '$KERNEL' is missing (no $kernel)" "run 'make build CONFIG=${KERNEL%%+*}'"
	[ -f "$obj/initramfs.cpio" ] || "$TOP/scripts/initramfs.sh" "$KERNEL"
	[ -z "$EXTRA_INITRD" ] || [ -f "$EXTRA_INITRD" ] ||
		die "extra initramfs archive '$EXTRA_INITRD' does not exist" "build it first or drop -x"
	command -v "$qemu_bin" > /dev/null || die "$qemu_bin is not installed" "run 'make deps' (as root)"
	[ -z "$PLUGIN_ON" ] || "$TOP/scripts/qemu-plugin.sh"
fi

# TCG runs the vCPUs on one host thread (thread=single): with one thread
# per vCPU (MTTCG), QEMU 7.2 let a vCPU run code another vCPU had just
# patched through int3 (text_poke_bp() of a static key flipped at run
# time, CONFIG_JUMP_LABEL=y), and the guest died with "Oops: int3".
accel=$ACCEL
[ "$ACCEL" != tcg ] || accel=tcg,thread=single
# -cpu max says "AuthenticAMD" under TCG, and a 32-bit kernel warns
# that its family and model are "not suitable for SMP" (an Athlon check):
# an i386 guest's CPU says Intel instead.
cpu=max
[ "$arch" != i386 ] || cpu=max,vendor=GenuineIntel
# Three ports: the console, the command's output, its exit status. The
# virt machine has one UART: the other two are virtio consoles there
# (hvc0, hvc1; scripts/guest/init).
machine=pc console=ttyS0
ports=(-serial "file:$OUT/out.log" -serial "file:$OUT/status")
if [ "$arch" = arm64 ]; then
	machine=virt console=ttyAMA0
	ports=(-device virtio-serial-device
		-chardev "file,id=out,path=$OUT/out.log" -device virtconsole,chardev=out
		-chardev "file,id=status,path=$OUT/status" -device virtconsole,chardev=status)
fi
qemu=("$qemu_bin" -machine "$machine" -accel "$accel" -cpu "$cpu" -m "$mem_arg" -smp "$CPUS"
	-nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$OUT/initrd.cpio"
	-serial "file:$OUT/console.log" "${ports[@]}"
	-append "console=$console panic=-1 rdinit=/init $APPEND")
[ "$ICOUNT" != 1 ] || qemu+=(-icount shift=0,sleep=off)
[ -z "$HOTPLUG" ] || qemu+=(-qmp "unix:$OUT/qmp.sock,server=on,wait=off")
[ -z "$PLUGIN_ON" ] || qemu+=(-plugin "$BUILD/plugin/libpftag-cache.so${PLUGIN:+,$PLUGIN}")
if [ "$NUMA" -gt 1 ]; then
	for ((n = 0; n < NUMA; n++)); do
		cpus=""
		for ((c = n; c < CPUS; c += NUMA)); do cpus="$cpus,cpus=$c"; done
		qemu+=(-object "memory-backend-ram,id=m$n,size=$((mem_mib / NUMA))M"
			-numa "node,nodeid=$n,memdev=m$n$cpus")
	done
fi

if [ "$DRYRUN" = 1 ]; then
	show_cmd timeout -k 5 "$TIMEOUT" "${qemu[@]}"
	exit 0
fi

rm -rf "$OUT"
mkdir -p "$OUT"
: > "$OUT/out.log"
# The per-boot part of the initramfs: /run.sh, appended to the build's
# archive (the kernel unpacks concatenated archives in order).
mkdir -p "$OUT/run.d"
printf '%s\n' "$CMD" > "$OUT/run.d/run.sh"
(cd "$OUT/run.d" && echo run.sh | cpio -o -H newc --quiet -R 0:0) > "$OUT/run.cpio"
cat "$obj/initramfs.cpio" ${EXTRA_INITRD:+"$EXTRA_INITRD"} "$OUT/run.cpio" > "$OUT/initrd.cpio"
show_cmd timeout -k 5 "$TIMEOUT" "${qemu[@]}" > "$OUT/qemu.cmd"

start=$(date +%s.%N)
timeout -k 5 "$TIMEOUT" "${qemu[@]}" > "$OUT/qemu.log" 2>&1 &
qpid=$!
if [ "$QUIET" != 1 ]; then
	tail -n +1 -F --pid=$qpid "$OUT/out.log" 2> /dev/null &
	tpid=$!
fi
if [ -n "$HOTPLUG" ]; then
	python3 "$TOP/scripts/qmp-relay.py" "$OUT/qmp.sock" "$OUT/out.log" "$qpid" > "$OUT/qmp.log" 2>&1 &
	rpid=$!
fi
qrc=0
wait $qpid || qrc=$?
[ -z "$HOTPLUG" ] || wait "$rpid" || true
[ "$QUIET" = 1 ] || wait "$tpid" || true
rm -f "$OUT/initrd.cpio" "$OUT/run.cpio"
rm -rf "$OUT/run.d"
printf 'seconds=%.1f\n' "$(echo "$(date +%s.%N) - $start" | bc)" > "$OUT/time"

status=$(sed -n 's/^exit=\([0-9]*\).*/\1/p' "$OUT/status" 2>/dev/null | tail -n 1)
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	printf '%s: error: %s\n%s: way out: %s\n' "$STEP" \
		"the guest did not finish within $TIMEOUT s and was killed (console: $OUT/console.log)" "$STEP" \
		"look at the end of the console log for a hang; raise the limit with -t or TIMEOUT= if it was only slow" >&2
	tail -n 5 "$OUT/console.log" >&2 2>/dev/null || true
	exit 124
fi
if [ -z "$status" ]; then
	why="the guest stopped without reporting an exit status"
	panic=$(grep -m1 -E 'Kernel panic|BUG:|Oops' "$OUT/console.log" 2>/dev/null || true)
	[ -z "$panic" ] || why="the kernel died: $panic"
	[ "$qrc" -eq 0 ] || why="$why (qemu exited $qrc: $(head -c 300 "$OUT/qemu.log"))"
	printf '%s: error: %s\n%s: console log: %s\n' "$STEP" "$why" "$STEP" "$OUT/console.log" >&2
	tail -n 15 "$OUT/console.log" >&2 2>/dev/null || true
	exit 125
fi
exit "$status"
