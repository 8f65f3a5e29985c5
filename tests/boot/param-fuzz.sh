#!/usr/bin/env bash
# Bad input stays harmless: random forms of the series' three boot
# parameters (mem_profiling_idx_bits, mem_profiling_headroom,
# sysctl.vm.mem_profiling), many in each of a few boots, and random writes
# to /proc/sys/vm/mem_profiling, its read-only neighbour and the debugfs
# files. tests/boot/param-fuzz.py makes them from PARAM_FUZZ_SEED and keeps
# only forms that a model of the kernel's parsers refuses; the kernel must
# refuse each with a message that quotes it (the bare names, given without
# "=", included), keep every default (the storage report equals that of a
# boot without parameters), refuse every write and keep the value, and
# warn of nothing.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/param-fuzz
seed=${PARAM_FUZZ_SEED:-20261123}
boots=3
mkdir -p "$o"
forms=$(python3 "$TOP/tests/boot/param-fuzz.py" "$seed" "$boots") ||
	{ fail "param-fuzz.py makes the forms"; done_testing; }
echo "#   info: PARAM_FUZZ_SEED=$seed, $(grep -c ' cmdline ' <<< "$forms") parameters and $(grep -c ' write ' <<< "$forms") writes in $boots boots"

state="echo '== state'; cat /proc/sys/vm/mem_profiling /proc/sys/vm/mem_profiling_compressed
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage"
guest profiling "$o/reference" "" "$state
echo '== end'" || done_testing
ref_state=$(section state "$o/reference/out.log")
# The slab tag blocks' counts follow what each boot happened to allocate:
# not part of the comparison.
stable() { grep -v '^slab_tag_block'; }
ref_storage=$(section storage "$o/reference/out.log" | stable)

for ((b = 1; b <= boots; b++)); do
	append=$(awk -v b="$b" '$1 == "boot" && $2 == b && $3 == "cmdline" { printf "%s ", $4 }' <<< "$forms")
	# One guarded write a line: the value in single quotes (it has none).
	writes=$(awk -v b="$b" -v q="'" '$1 == "boot" && $2 == b && $3 == "write" {
		printf "if printf %%s %s%s%s 2>/dev/null > %s; then echo \"accepted %s %s\"; fi\n", q, $5, q, $4, $4, $5 }' <<< "$forms")
	guest profiling "$o/boot$b" "${append% }" "$state
echo '== writes'
$writes
echo '== after'; cat /proc/sys/vm/mem_profiling /proc/sys/vm/mem_profiling_compressed
echo '== dmesg'; dmesg
echo '== end'" || continue
	f=$o/boot$b/out.log
	d=$(section dmesg "$f")
	# The messages the forms must get, each as many times as forms give it
	# (the bare name and "NAME=" give the same one).
	msgs=$(awk -v b="$b" '$1 == "boot" && $2 == b && $3 == "cmdline" { print $4 }' <<< "$forms" |
		while read -r name; do
			key=${name%%=*} val=${name#*=}
			[ "$key" != "$name" ] || val=""
			case $key in
			mem_profiling_idx_bits) echo "$key=$val is not a number of bits" ;;
			mem_profiling_headroom) echo "$key=$val is not a number of tags" ;;
			*) echo "$key=$val is not understood" ;;
			esac
		done)
	missing=""
	while read -r want msg; do
		got=$(grep -cF -- "$msg" <<< "$d")
		[ "$got" -ge "$want" ] || missing+="'$msg' $got of $want times; "
	done < <(sort <<< "$msgs" | uniq -c)
	eq "boot $b: each of the $(wc -l <<< "$msgs") bad parameters gets a message that quotes it" "" "$missing"
	eq "boot $b: every default kept (mem_profiling, compressed)" "$ref_state" "$(section state "$f")"
	eq "boot $b: the storage report is that of a boot without parameters" "$ref_storage" "$(section storage "$f" | stable)"
	eq "boot $b: every write refused" "" "$(section writes "$f")"
	eq "boot $b: the values unchanged after the writes" "$ref_state" "$(section after "$f")"
	eq "boot $b: no 'Failed to set sysctl parameter', no 'Malformed early option'" "" \
		"$(grep -E 'Failed to set sysctl parameter|Malformed early option' <<< "$d")"
	eq "boot $b: no warning" "" "$(grep -E 'WARNING|BUG:|Oops' <<< "$d")"
done
done_testing
