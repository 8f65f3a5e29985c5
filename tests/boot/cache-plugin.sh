#!/usr/bin/env bash
# The QEMU TCG plugin bench/plugin/pftag-cache.c (built by
# scripts/qemu-plugin.sh): its arguments on the host, then two guests
# running bench/plugin/marker-loop.c, whose loops of known loads and
# stores sit between the window markers: 5 instructions and one access an
# iteration. The counts must be what the loops make, the misses near 0 or
# near one per access (two for an access that spans two lines), as the
# model must give: 16 KiB fits L1, 512 KiB fits L2 only, 4 MiB neither.
# One guest runs with -icount (counts exact to 1 %), the other with
# MTTCG, warm=on, and windows on two vCPUs at once (5 %). About a minute.
# CACHE_KERNEL= picks the kernel build (default: profiling).
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/cache-plugin
k=${CACHE_KERNEL:-profiling}
so=$BUILD/plugin/libpftag-cache.so
N=262144 # a multiple of every loop's cycle: a window ends where the next starts
RUNS=3

rm -rf "$o"
mkdir -p "$o/root"
if ! out=$("$TOP/scripts/qemu-plugin.sh" 2>&1); then
	fail "scripts/qemu-plugin.sh builds the plugin" "$out"
	done_testing
fi
ok "scripts/qemu-plugin.sh builds the plugin"
check "a second run has nothing to do and is quiet" bash -c '[ -z "$("$1" 2>&1)" ]' _ "$TOP/scripts/qemu-plugin.sh"

# load ARGS: QEMU (-machine none) loads the plugin with ARGS and quits.
load() {
	echo quit | timeout 30 qemu-system-x86_64 -machine none -nodefaults -display none \
		-monitor stdio -plugin "$so${1:+,$1}" 2>&1 | sed -n 's/^\((qemu) \)*\(pftag-cache: \|qemu-system\)/\2/p'
	return "${PIPESTATUS[1]}"
}
check_fails "l1= with a size not a power of two is refused" 'pftag-cache: error: l1=3000/8/64: .*powers of two' load l1=3000/8/64
check_fails "l2= without a line size is refused" 'pftag-cache: error: l2= wants SIZE/WAYS/LINE' load l2=1M/16
check_fails "an unknown argument is refused" "pftag-cache: error: unknown argument 'bogus=1'" load bogus=1
load "out=$o/model.log,l1=64K/4/128,l2=2M/8/64" > /dev/null
eq "l1= and l2= set the model, written to out=" "pftag-cache: model l1=65536/4/128 l2=2097152/8/64 lru" "$(cat "$o/model.log" 2>/dev/null)"

if [ ! -f "$BUILD/obj/$k/.pftag-built" ]; then
	skip "the guest's counts" "kernel build $k is missing (make build CONFIG=$k)"
	done_testing
fi
if ! out=$(gcc -static -O2 -Wall -o "$o/root/marker-loop" "$TOP/bench/plugin/marker-loop.c" 2>&1); then
	fail "marker-loop builds (static)" "$out"
	done_testing
fi
(cd "$o/root" && echo marker-loop | cpio -o -H newc --quiet -R 0:0) > "$o/extra.cpio"

# counts LOG FIRST COUNT [V]: "insns loads stores l1_misses l2_misses"
# over the windows numbered FIRST..FIRST+COUNT-1 of LOG (of vCPU V when
# given): the least of the first three (an interrupt in a window only
# adds to them), the median of the misses (the first window of a working
# set pays its compulsory misses, and a previous loop may have left lines
# behind).
counts() {
	awk -v a="$2" -v b="$(($2 + $3 - 1))" -v v="${4:-}" '
		BEGIN { split("insns loads stores l1_misses l2_misses", k, " ") }
		/^pftag-cache: window=/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if (f["window"] < a || f["window"] > b || (v != "" && f["vcpu"] != v)) next
			n++
			for (i = 1; i <= 5; i++) x[i, n] = f[k[i]] + 0
		}
		END {
			for (i = 1; i <= 5; i++) {
				for (j = 1; j <= n; j++) {
					for (m = j; m > 1 && y[m - 1] > x[i, j]; m--) y[m] = y[m - 1]
					y[m] = x[i, j]
				}
				printf "%s%d", (i > 1 ? " " : ""), (i <= 3 ? y[1] : y[int((n + 1) / 2)])
			}
			print ""
		}' "$1"
}
# near PCT VALUE TARGET: VALUE within PCT % of TARGET, or at most PCT % of
# N for a TARGET of 0.
near() {
	if [ "$3" -eq 0 ]; then
		[ "$2" -le $((N * $1 / 100)) ]
	else
		[ "$2" -ge $(($3 - $3 * $1 / 100)) ] && [ "$2" -le $(($3 + $3 * $1 / 100)) ]
	fi
}
# expect PCT NAME "INSNS LOADS STORES L1 L2" "COUNTS": each count within
# PCT % of what is wanted ("-" for any).
expect() {
	local pct=$1 name=$2 want got bad="" i=0 f
	read -ra want <<< "$3"
	read -ra got <<< "$4"
	for f in insns loads stores l1_misses l2_misses; do
		[ "${want[$i]}" = - ] || near "$pct" "${got[$i]:-x}" "${want[$i]}" 2> /dev/null ||
			bad="$bad $f=${got[$i]:-none} (want ${want[$i]} +-$pct %)"
		i=$((i + 1))
	done
	if [ -z "$bad" ]; then ok "$name: $4"; else fail "$name" "counts:$bad"; fi
}
# Every run pins loops to CPUs 0 and 1: say so when one is missing.
cpus_online='on=$(cat /sys/devices/system/cpu/online); [ "$on" = 0-1 ] || { echo "online CPUs are $on, not 0-1: the windows cannot be pinned"; exit 3; };'
# boot_plugin NAME ARGS ICOUNT SCRIPT: run SCRIPT in a 2-vCPU guest (with
# -icount when ICOUNT is 1) under the plugin with ARGS; the plugin's
# lines go to $o/NAME.log. Fails the test (returns 1) when the guest
# does not get to the end.
boot_plugin() {
	local name=$1 args=$2 icount=$3 script=$4 out start
	start=$(date +%s)
	if ! out=$(ICOUNT=$icount "$TOP/scripts/boot.sh" -k "$k" -c 2 -o "$o/$name" -q -t 300 \
		-x "$o/extra.cpio" -p "out=$o/$name.log${args:+,$args}" "set -ex; $cpus_online $script" 2>&1); then
		# boot.sh says nothing when the guest's script itself failed:
		# its output and the console's last lines tell why.
		fail "$name: the guest runs marker-loop under the plugin" \
			"$(printf '%s\n--- guest output (%s):\n%s\n--- console, CPUs and last lines:\n%s\n%s' \
				"$out" "$o/$name/out.log" "$(tail -n 20 "$o/$name/out.log" 2>/dev/null)" \
				"$(grep -E 'smp|CPU[0-9 ]|Brought up' "$o/$name/console.log" 2>/dev/null | tail -n 8)" \
				"$(tail -n 10 "$o/$name/console.log" 2>/dev/null)")"
		return 1
	fi
	ok "$name: the guest runs marker-loop under the plugin ($(($(date +%s) - start)) s)"
}
# numbered LOG COUNT: LOG holds COUNT windows, numbered 1..COUNT in order.
numbered() {
	eq "$(basename "$1" .log): windows numbered 1..$2 in the order of the lines" "$(seq -s ' ' "$2")" \
		"$(sed -n 's/^pftag-cache: window=\([0-9]*\) .*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//')"
}
# Two instances at once, one a vCPU, started together once both are
# pinned: ARGS are marker-loop's after the CPU.
both() {
	echo "export MARKER_GO=/tmp/go; : > /tmp/go; /marker-loop 0 $1 & /marker-loop 1 $1 & sleep 1; echo go > /tmp/go; wait"
}

# 1. Exact counts, -icount: the guest's clock counts instructions, so the
# timer interrupts that fall into a window are as few as the window is
# short, however slow or busy the host. The cases, in the order they
# run: name, then marker-loop's arguments.
cases=(
	"l1-fit|0 load 16384 64 0"
	"l2-fit|0 load 524288 64 0"
	"no-fit|0 load 4194304 64 0"
	"store|0 store 16384 64 0"
	"span|0 load 4194304 128 60"
)
declare -A want=(
	[l1-fit]="$((5 * N)) $N 0 0 0"
	[l2-fit]="$((5 * N)) $N 0 $N 0"
	[no-fit]="$((5 * N)) $N 0 $N $N"
	[store]="$((5 * N)) 0 $N 0 0"
	[span]="$((5 * N)) $N 0 $((2 * N)) $((2 * N))"
)
script=""
for c in "${cases[@]}"; do script="$script /marker-loop ${c#*|} $N $RUNS;"; done
script="$script /marker-loop 0 empty 4096 0 0 1 $RUNS; $(both "load 16384 64 0 $N $RUNS")"
log=$o/icount.log
if boot_plugin icount "" 1 "$script"; then
	eq "icount: the first line describes the model" "pftag-cache: model l1=32768/8/64 l2=1048576/16/64 lru" "$(head -n 1 "$log")"
	numbered "$log" $(((${#cases[@]} + 1) * RUNS + 2 * RUNS))
	first=1
	for c in "${cases[@]}"; do
		name=${c%%|*}
		expect 1 "icount: $name (${c#*|})" "${want[$name]}" "$(counts "$log" "$first" "$RUNS")"
		first=$((first + RUNS))
	done
	eq "icount: an empty window counts nothing" "0 0 0 0 0" "$(counts "$log" "$first" "$RUNS")"
	first=$((first + RUNS))
	for v in 0 1; do
		eq "icount: two vCPUs: $RUNS windows of vCPU $v" "$RUNS" \
			"$(awk -v a="$first" -v v="vcpu=$v" '{ split($2, w, "=") } w[2] >= a && $3 == v' "$log" | wc -l)"
		expect 1 "icount: two vCPUs: vCPU $v (0 load 16384 64 0)" "${want[l1-fit]}" "$(counts "$log" "$first" $((2 * RUNS)) "$v")"
	done
fi

# 2. MTTCG (no -icount, the vCPUs are threads): two instances with
# windows at the same time, and warm=on: the warm-up before a window warms
# the model, so the first window of each working set already misses as
# the steady state does. The guest's clock runs in host time: interrupts
# add more, so 5 %.
log=$o/mttcg.log
script="/marker-loop 0 load 16384 64 0 $N 1; /marker-loop 0 load 524288 64 0 $N 1;"
script="$script /marker-loop 0 load 16384 64 0 $N 1; $(both "load 524288 64 0 $N $RUNS")"
if boot_plugin mttcg warm=on 0 "$script"; then
	eq "mttcg: the model line says warm" "pftag-cache: model l1=32768/8/64 l2=1048576/16/64 lru warm" "$(head -n 1 "$log")"
	numbered "$log" $((3 + 2 * RUNS))
	expect 5 "mttcg: warm=on: the first window of 16 KiB misses nothing" "$((5 * N)) $N - 0 0" "$(counts "$log" 1 1)"
	expect 5 "mttcg: warm=on: the first window of 512 KiB misses L1 only" "$((5 * N)) $N - $N 0" "$(counts "$log" 2 1)"
	expect 5 "mttcg: warm=on: 16 KiB again, warmed again" "$((5 * N)) $N - 0 0" "$(counts "$log" 3 1)"
	for v in 0 1; do
		eq "mttcg: two vCPUs at once: $RUNS windows of vCPU $v" "$RUNS" \
			"$(awk -v v="vcpu=$v" '{ split($2, w, "=") } w[2] > 3 && $3 == v' "$log" | wc -l)"
		expect 5 "mttcg: two vCPUs at once: vCPU $v (0 load 524288 64 0)" "${want[l2-fit]}" "$(counts "$log" 4 $((2 * RUNS)) "$v")"
	done
fi
done_testing
