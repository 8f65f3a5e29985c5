#!/usr/bin/env bash
# The litmus tests of tests/litmus/ give, under herd7 and the kernel's own
# memory model (tools/memory-model of Linux 6.12, linux-kernel.cfg), the
# result each states on its "Result:" line: Never, Sometimes or Always, and
# a data race flagged exactly where the line says DATARACE. Then a few
# copies of them with one barrier taken away, each of which must give the
# bad outcome: every barrier the tests rely on is needed.
#
# herd7 is not packaged by Debian. It is taken from $HERD7, from PATH,
# from $HERD7_DIR/bin/herd7 (default /tmp/herdtools7), or else built there
# with herd7-build.sh: $HERD7_BUILD, else ../shared/tools/ beside the
# repository's top, else /work/shared/tools/ (about 3 to 5 minutes, once;
# LITMUS_BUILD_HERD7=0 never builds). The memory model is unpacked from
# $LINUX_SOURCE_TAR (default /usr/src/linux-source-6.12.tar.xz, from the
# package linux-source-6.12) into build/litmus/, or taken from $LKMM_DIR.
# Without herd7 or the model every check is one clear SKIP, never a pass.
# With both in place the whole run takes a few seconds.
. "$(dirname "$0")/../lib.sh"
dir=$BUILD/litmus
mkdir -p "$dir"
herd_dir=${HERD7_DIR:-/tmp/herdtools7}
tar=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.12.tar.xz}
tests=("$TOP"/tests/litmus/*.litmus)

# find_herd7: set herd7 to the herd7 to use, or why to the reason there is none.
find_herd7() {
	local script log=$dir/herd7-build.log
	herd7='' why=''
	if [ -n "${HERD7:-}" ]; then
		[ -x "$HERD7" ] && herd7=$HERD7 && return 0
		why="HERD7=$HERD7 is not an executable"
		return 1
	fi
	herd7=$(command -v herd7) && return 0
	[ -x "$herd_dir/bin/herd7" ] && herd7=$herd_dir/bin/herd7 && return 0
	if [ "${LITMUS_BUILD_HERD7:-1}" = 0 ]; then
		why="not on PATH nor in $herd_dir/bin, and LITMUS_BUILD_HERD7=0"
		return 1
	fi
	if [ -n "${HERD7_BUILD:-}" ]; then
		script=$HERD7_BUILD
	else
		for script in "$TOP/../shared/tools/herd7-build.sh" /work/shared/tools/herd7-build.sh ""; do
			[ -z "$script" ] || [ -f "$script" ] && break
		done
	fi
	if [ -z "$script" ] || [ ! -f "$script" ]; then
		why="not on PATH nor in $herd_dir/bin, and no herd7-build.sh to build it${script:+ ($script is missing)} (set HERD7, HERD7_DIR or HERD7_BUILD)"
		return 1
	fi
	echo "#   info: building herd7 into $herd_dir with $script (log: $log)"
	# One build at a time, should two test runs get here together.
	if ! (flock 9 && { [ -x "$herd_dir/bin/herd7" ] ||
		nice -n 10 bash "$script" "$herd_dir"; }) > "$log" 2>&1 9> "$dir/herd7-build.lock"; then
		why="$script failed: $(grep -m1 'error:' "$log" || tail -n 1 "$log")"
		return 1
	fi
	[ -x "$herd_dir/bin/herd7" ] && herd7=$herd_dir/bin/herd7 && return 0
	why="$script ran but left no $herd_dir/bin/herd7"
	return 1
}

# find_lkmm: set lkmm to the memory model's folder, or why to the reason there is none.
find_lkmm() {
	local mm=$dir/memory-model tmp=$dir/unpack
	lkmm='' why=''
	if [ -n "${LKMM_DIR:-}" ]; then
		[ -f "$LKMM_DIR/linux-kernel.cfg" ] && lkmm=$LKMM_DIR && return 0
		why="LKMM_DIR=$LKMM_DIR has no linux-kernel.cfg"
		return 1
	fi
	# Unpacked before from this very tarball: the unpack takes 10 to 20 s.
	if [ -f "$mm/linux-kernel.cfg" ] && [ "$(cat "$mm/.from" 2> /dev/null)" = "$tar" ] &&
		[ "$mm/.from" -nt "$tar" ]; then
		lkmm=$mm
		return 0
	fi
	if [ ! -r "$tar" ]; then
		why="$tar is missing (install linux-source-6.12, or set LKMM_DIR)"
		return 1
	fi
	rm -rf "$mm" "$tmp"
	mkdir -p "$tmp"
	if ! tar -xJf "$tar" -C "$tmp" --wildcards '*/tools/memory-model' 2> "$dir/unpack.log" ||
		! mv "$tmp"/*/tools/memory-model "$mm" 2>> "$dir/unpack.log"; then
		why="tools/memory-model could not be unpacked from $tar: $(head -n 1 "$dir/unpack.log")"
		return 1
	fi
	rm -rf "$tmp"
	echo "$tar" > "$mm/.from"
	lkmm=$mm
}

if ! find_herd7; then
	skip "the litmus tests run under herd7" "herd7 not available: $why"
	done_testing
fi
if ! find_lkmm; then
	skip "the litmus tests run under herd7" "the kernel's memory model not available: $why"
	done_testing
fi
echo "#   info: $herd7 ($("$herd7" -version 2>&1 | head -n 1)), model $lkmm"

# run TEST: herd7's output for TEST, from the model's folder.
run() { (cd "$lkmm" && timeout 300 "$herd7" -conf linux-kernel.cfg "$1" 2>&1); }

# observed OUTPUT: the result herd7 observed, and "DATARACE" if it flagged one.
observed() {
	awk '$1 == "Observation" { r = $3 } $0 == "Flag data-race" { d = " DATARACE" }
		END { print r d }' <<< "$1"
}

[ -e "${tests[0]}" ] || { fail "tests/litmus has litmus tests"; done_testing; }
for t in "${tests[@]}"; do
	name=$(basename "$t" .litmus)
	want=$(grep -m1 -E '^[( ]\* Result: ' "$t" | awk '{ print $3 ($4 == "DATARACE" ? " DATARACE" : "") }')
	if [ -z "$want" ]; then
		fail "$name: has a Result: line"
		continue
	fi
	if [ "$(head -n 1 "$t")" != "C $name" ]; then
		fail "$name: its first line names it (C $name)" "$(head -n 1 "$t")"
		continue
	fi
	out=$(run "$t")
	got=$(observed "$out")
	if [ -z "${got%% *}" ]; then
		fail "$name: herd7 verifies it" "$out"
		continue
	fi
	eq "$name: $want, as its Result: line says" "$want" "$got"
done

# The barriers each carry a test: with one of them gone, the bad outcome
# is allowed. FILE|SED-SCRIPT|WHAT (the sed script runs on FILE).
while IFS='|' read -r file sedexpr what; do
	[ -n "$file" ] || continue
	t=$TOP/tests/litmus/$file
	m=$dir/mutant.litmus
	sed -e "$sedexpr" "$t" > "$m"
	if cmp -s "$t" "$m"; then
		fail "without $what, $file allows the bad outcome" "the edit '$sedexpr' changed nothing"
		continue
	fi
	out=$(run "$m")
	got=$(observed "$out")
	got=${got%% *}
	[ -n "$got" ] || { fail "without $what, $file is verified" "$out"; continue; }
	eq "without $what, $file allows the bad outcome" Sometimes "$got"
done << 'EOF'
tagidx-chain+release+acquire.litmus|s/^	smp_wmb();$//|alloc_tag_module_idx_get()'s smp_wmb()
tagidx-chain+release+dep.litmus|/^P2/,$ s/^	smp_rmb();$//|__alloc_tag_sub_idx()'s smp_rmb()
tagidx-chain+release+acquire.litmus|s/smp_store_release(pg, flags)/WRITE_ONCE(*pg, flags)/|the hand-off's release
tagidx-chain+samecpu.litmus|/^P1/,$ s/^	smp_rmb();$//|the free path's smp_rmb() (same CPU)
module-table-grow.litmus|/^P2/,$ s/^	smp_rmb();$//|__alloc_tag_sub_idx()'s smp_rmb() before the table's address
module-map-grow.litmus|/^P2/,$ s/^	smp_rmb();$//|alloc_tag_module_map_load()'s smp_rmb()
module-grow-copy.litmus|s/smp_store_release(\([a-z]*\), \([a-z_]*\))/WRITE_ONCE(*\1, \2)/|module_map_grow()'s smp_store_release()s
capture-mark+fix.litmus|s/^		smp_rmb();$//|the smp_rmb() in alloc_tag_capture()
capture-mark+fix.litmus|s/^	smp_wmb();$//|the smp_wmb() in capture_marks_update()
capture-drop.litmus|s/^	synchronize_rcu();$//|kvfree_rcu()'s grace period
capture-refill.litmus|s/atomic_set_release(busy, 0)/atomic_set(busy, 0)/|capture_refill_workfn()'s atomic_set_release()
EOF
rm -f "$dir/mutant.litmus"
done_testing
