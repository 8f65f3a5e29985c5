#!/usr/bin/env bash
# Call-chain capture of chosen tags (debugfs alloc_tag/capture), with
# pftag_ctx: a page helper and a slab helper, each called by three callers
# 90, 6 and 4 times a round. With the helpers' tags chosen, capture shows
# exactly three chains a tag, helper;ctx_call;caller... (the slab helper
# returns kmalloc()'s result: where that is a tail call of the allocator,
# its frame is not on the stack, and its chains start at ctx_call, as an
# inlined helper's would), with exactly those calls, bytes = calls x the
# size /proc/allocinfo charges, and their sum is the tag's change in
# /proc/allocinfo; a third helper, not chosen, is charged as before. Then:
# max_chains=2 puts the third caller's calls in overflow_calls; every
# error a write can get, with its message; the module's chosen tags drop
# out when it unloads. In page-flags and page_ext storage on the profiling
# kernel, and on the debug build and the Debian layout's debug build,
# where start, stop and reset toggle for STRESS_SECONDS (default 10) under
# the kselftest's stress workers and the debug checks must stay silent.
# Last, a boot with stack_depot_disable=on, as Android's command line has
# it: choosing a tag and starting capture are refused with a message that
# says why and what to do, and /proc/allocinfo is as readable as ever.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/capture
mods=/opt/pftag/modules
page=4096	# x86_64
seconds=${STRESS_SECONDS:-10}

read -r -d '' script << 'EOF'
C=/sys/kernel/debug/alloc_tag/capture
R=/sys/kernel/debug/pftag_ctx/run
# w FILE TEXT: write TEXT to FILE of capture, say "ok" or the error and last_error.
w() {
	if echo "$2" > $C/$1 2> /tmp/err; then
		echo "$1 $2 => ok"
	else
		echo "$1 $2 => $(sed 's/.*: //' /tmp/err) | $(cat $C/last_error)"
	fi
}
# key FUNC: the tag of FUNC as /proc/allocinfo shows it.
key() { awk -v f="func:$1" '$NF == f { $1 = ""; $2 = ""; print; exit }' /proc/allocinfo; }
insmod MODS/pftag_ctx.ko
echo '== choose'
w tags "$(key ctx_page_helper)"
w tags "func:ctx_slab_helper"
w control start
echo '== tags'; cat $C/tags
echo '== before'; grep '\[pftag_ctx\]' /proc/allocinfo
echo pages > $R; echo slab > $R; echo other > $R
echo '== after'; grep '\[pftag_ctx\]' /proc/allocinfo
echo '== chains'; cat $C/chains
echo '== overflow'
w control stop
w max_chains 2
w control start
echo pages > $R
w control stop
echo '== chains2'; cat $C/chains
echo '== errors'
w max_chains 64
w tags 'nonsense'
w tags 'func:'
w tags 'mm/no_such_file.c:1'
w tags 'module:no_such_module'
w control bogus
w control start
w depth 8
w max_chains 8
w control stop
w depth 0
w depth 33
w depth 8
w depth 16
if echo 0 2> /dev/null > /proc/sys/vm/mem_profiling; then
	w control start
	echo 1 > /proc/sys/vm/mem_profiling
else
	echo 'control start => skip: the sysctl is read-only'
fi
w tags clear
echo '== enospc'
awk 'NR > 2 { print $3, ($4 ~ /^\[/ ? $4 " " $5 : $4) }' /proc/allocinfo | sort -u | head -80 > /tmp/keys
while read -r k; do
	echo "$k" > $C/tags 2> /tmp/err && continue
	echo "full at $(wc -l < $C/tags): $(sed 's/.*: //' /tmp/err) | $(cat $C/last_error)"
	break
done < /tmp/keys
echo "chosen $(wc -l < $C/tags)"
w tags clear
echo "chosen $(wc -l < $C/tags)"
echo '== unload'
echo free > $R
w tags 'module:pftag_ctx'
w control start
echo pages > $R
echo free > $R
rmmod pftag_ctx
echo "chosen $(wc -l < $C/tags)"
echo "in_chains $(grep -c '^tag ' $C/chains)"
w tags 'module:pftag_ctx'
w control stop
STRESS
echo '== dmesg'; dmesg
echo '== end'
EOF

# The stress part, for the debug builds: the kselftest's stress workers on
# both CPUs, meanwhile the busiest tags and the test module's chosen, and
# capture started, read, reset and stopped over and over.
read -r -d '' stress << 'EOF'
echo '== stress'
modprobe test_alloc_tag
(ALLOC_TAG_STRESS=SECONDS /opt/pftag/bin/alloc_tag_stress_test -t stress > /tmp/stress.log 2>&1; touch /tmp/stress.done) &
sort -k2 -n /proc/allocinfo | tail -8 | awk '{ $1 = ""; $2 = ""; print }' > /tmp/busy
while read -r k; do w tags "$k"; done < /tmp/busy
n=0
while [ ! -e /tmp/stress.done ]; do
	printf 'module:test_alloc_tag\n' > $C/tags 2> /dev/null
	echo start > $C/control
	sleep 0.2
	cat $C/chains > /tmp/chains
	echo reset > $C/control
	echo stop > $C/control
	n=$((n + 1))
done
echo "toggles $n"
grep -E '^(not )?ok [0-9]+ paths.stress' /tmp/stress.log
grep -c '^chain ' /tmp/chains
w tags clear
EOF

# chain TEXT TAG CALLER: "calls bytes" of TAG's chain through CALLER.
chain() {
	awk -v t="$2" -v c="$3" '$1 == "chain" && $2 == t && $0 ~ ";" c " " { print $5, $7 }' <<< "$1"
}
# tagl TEXT N: tag N's line of the chains file, its counters as "key value".
tagl() { awk -v t="$2" '$1 == "tag" && $2 == t { for (i = 3; i < NF; i += 2) print $i ":", $(i + 1) }' <<< "$1"; }
# delta BEFORE AFTER FUNC: "bytes calls" that FUNC's tag gained.
delta() {
	local b a
	b=$(awk -v f="func:$3" '$NF == f { print $1, $2 }' <<< "$1")
	a=$(awk -v f="func:$3" '$NF == f { print $1, $2 }' <<< "$2")
	[ -n "$a" ] && [ -n "$b" ] || return
	echo "$(( ${a% *} - ${b% *} )) $(( ${a#* } - ${b#* } ))"
}

check_capture() { # NAME KERNEL APPEND STRESS(0|1)
	local name=$1 kernel=$2 append=$3 s out=$o/$1 f st=""
	# Spliced, not ${s/STRESS/...}: bash 5.2 puts the match for every &
	# of a replacement.
	[ "$4" != 1 ] || st="${stress%%SECONDS*}$seconds${stress#*SECONDS}"
	s="${script%%STRESS*}$st${script#*STRESS}"
	s="${s%%MODS*}$mods${s#*MODS}"
	rm -rf "$out"
	local rc=0
	err=$("$TOP/scripts/boot.sh" -k "$kernel" -m 1G -c 2 -t $((seconds * 4 + 400)) \
		-o "$out" -q -a "$append" "$s" 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		fail "$name: the guest gets to the end: $(boot_failure $rc "$err")" "$err"
		return
	fi
	f=$out/out.log
	local choose before after chains pd sd od size tl
	choose=$(section choose "$f")
	eq "$name: the helpers' tags are chosen, capture starts" "3" "$(grep -c '=> ok$' <<< "$choose")"
	eq "$name: tags lists the two chosen tags" "2" "$(section tags "$f" | grep -c 'pftag_ctx')"
	before=$(section before "$f") after=$(section after "$f") chains=$(section chains "$f")
	pd=$(delta "$before" "$after" ctx_page_helper)
	sd=$(delta "$before" "$after" ctx_slab_helper)
	od=$(delta "$before" "$after" ctx_other_helper)
	eq "$name: /proc/allocinfo: the page helper gained 100 pages" "$((100 * page)) 100" "$pd"
	size=$(( ${sd% *} / 100 ))
	eq "$name: /proc/allocinfo: the slab helper gained 100 objects of a size" "$((size * 100)) 100" "$sd"
	eq "$name: /proc/allocinfo: the helper not chosen is charged as the chosen one" "$sd" "$od"
	eq "$name: chains: a header and two tags" "capture - version: 1.0|2" \
		"$(head -1 <<< "$chains")|$(grep -c '^tag ' <<< "$chains")"
	local t unit want c
	for t in 0 1; do
		tl=$(tagl "$chains" $t)
		if grep -q ctx_page_helper <<< "$(grep "^tag $t " <<< "$chains")"; then
			unit=$page want=$pd
		else
			unit=$size want=$sd
		fi
		eq "$name: tag $t: 3 chains, nothing overflowed or unrecorded" "3 0 0" \
			"$(field chains "$tl") $(field overflow_calls "$tl") $(field unrecorded_calls "$tl")"
		eq "$name: tag $t: its calls and bytes are the change in /proc/allocinfo" "$want" \
			"$(field bytes "$tl") $(field calls "$tl")"
		for c in a:90 b:6 c:4; do
			eq "$name: tag $t: ctx_caller_${c%:*}'s chain: ${c#*:} calls, ${c#*:} x $unit bytes" \
				"${c#*:} $(( ${c#*:} * unit ))" "$(chain "$chains" $t "ctx_caller_${c%:*}")"
		done
	done
	eq "$name: every chain starts at its helper (the slab helper's at ctx_call where it tail-calls kmalloc), then a caller" "6" \
		"$(grep -cE '^chain [01] [0-9]+ .* stack (ctx_page_helper[^;]*;|(ctx_slab_helper[^;]*;)?)ctx_call[^;]*;ctx_caller_[abc]' <<< "$chains")"

	local c2
	c2=$(section chains2 "$f")
	tl=$(tagl "$c2" "$(awk '$1 == "tag" && /ctx_page_helper/ { print $2 }' <<< "$c2")")
	eq "$name: max_chains=2: two chains, the third caller's 4 calls in overflow" \
		"2 4 $((4 * page))" \
		"$(field chains "$tl") $(field overflow_calls "$tl") $(field overflow_bytes "$tl")"

	local errs
	errs=$(section errors "$f")
	while IFS='|' read -r what want; do
		local got
		got=$(grep -F -- "$what =>" <<< "$errs" | head -1)
		if [[ $got == *"=> $want"* ]]; then
			ok "$name: $what: $want"
		else
			fail "$name: $what: $want" "$got"
		fi
	done <<- 'EOT'
		max_chains 64|ok
		tags nonsense|Invalid argument | 'nonsense': not file:line
		tags func:|Invalid argument | 'func:': not file:line
		tags mm/no_such_file.c:1|No such file or directory | no tag mm/no_such_file.c:1
		tags module:no_such_module|No such file or directory | module no_such_module has no allocation tags: it is not loaded
		control bogus|Invalid argument | 'bogus': write start, stop or reset
		depth 8|Device or resource busy | depth cannot change while capture runs
		max_chains 8|Device or resource busy | max_chains cannot change while capture runs
		depth 0|Invalid argument | depth: a number from 1 to 32
		depth 33|Invalid argument | depth: a number from 1 to 32
	EOT
	got=$(grep -F 'control start =>' <<< "$errs" | tail -1)
	if [[ $got == *skip* ]]; then
		skip "$name: start with profiling off: EPERM" "${got#*skip: }"
	else
		eq "$name: start with profiling off: EPERM, and how to switch it on" \
			"control start => Operation not permitted | memory allocation profiling is off: switch it on first (sysctl vm.mem_profiling=1)" "$got"
	fi

	# A selection that does not fit is refused whole (a key may select
	# several tags: one function inlined in several files), and the
	# error says how many are chosen and how many more were asked.
	local full chosen more now
	full=$(section enospc "$f")
	now=$(grep -m1 '^chosen' <<< "$full" | cut -d' ' -f2)
	read -r chosen more < <(sed -n 's/.*No space left on device | \([0-9]*\) tags chosen and \([0-9]*\) more selected: at most 64 can be.*/\1 \2/p' <<< "$full")
	if [ -n "${chosen:-}" ] && [ "$chosen" = "$now" ] && [ "$now" -le 64 ] &&
		[ $((chosen + more)) -gt 64 ]; then
		ok "$name: past 64 chosen tags: ENOSPC naming the counts ($chosen chosen, $more more), the selection refused whole"
	else
		fail "$name: past 64 chosen tags: ENOSPC naming the counts, the selection refused whole" "$full"
	fi
	eq "$name: clear unchooses every tag" "chosen 0" "$(grep '^chosen' <<< "$full" | tail -1)"

	local un
	un=$(section unload "$f")
	eq "$name: unloading the module drops its chosen tags" "chosen 0|in_chains 0" \
		"$(grep '^chosen' <<< "$un")|$(grep '^in_chains' <<< "$un")"
	if grep -qF "tags module:pftag_ctx => No such file or directory | module pftag_ctx has no allocation tags: it is not loaded" <<< "$un"; then
		ok "$name: the unloaded module can no longer be chosen: ENOENT"
	else
		fail "$name: the unloaded module can no longer be chosen: ENOENT" "$un"
	fi
	grep -q 'alloc_tag capture: module pftag_ctx unloaded, its 3 chosen tags dropped' "$f" &&
		ok "$name: the unload says what it dropped" ||
		fail "$name: the unload says what it dropped" "$(grep 'alloc_tag capture' "$f")"

	if [ "$4" = 1 ]; then
		local st
		st=$(section stress "$f")
		if grep -qE '^ok [0-9]+ paths.stress' <<< "$st"; then
			ok "$name: $seconds s of stress with capture toggled: every test tag exact ($(grep toggles <<< "$st"))"
		elif [ ! -x "$BUILD/guest/alloc_tag_stress_test" ]; then
			fail "$name: $seconds s of stress with capture toggled: every test tag exact" \
				"the guest has no alloc_tag_stress_test: run 'make selftest' (make test does)"
		else
			fail "$name: $seconds s of stress with capture toggled: every test tag exact" "$st"
		fi
	fi
	eq "$name: no warning, BUG or debug report" "" \
		"$(debug_reports "$out/console.log" "$QEMU_TOPOLOGY_WARNING")"
}

check_capture flags profiling "" 0
check_capture page_ext profiling "sysctl.vm.mem_profiling=1,page_ext" 0
if err=$(build_profiling debug 2>&1); then
	check_capture debug "$(profiling_id debug)" "" 1
else
	fail "the debug build builds" "$err"
fi
for l in $LAYOUTS; do
	if err=$(build_layout "$l" 2>&1); then
		check_capture "layout-$l" "$(layout_id "$l")" "" 1
	else
		fail "layout-$l: the layout's debug build builds" "$err"
	fi
done

nodepot='
C=/sys/kernel/debug/alloc_tag/capture
for w in "tags func:kmalloc_trace_noprof" "control start"; do
	echo "${w#* }" > $C/${w%% *} 2> /tmp/err && echo "$w => ok" || echo "$w => $(sed "s/.*: //" /tmp/err) | $(cat $C/last_error)"
done
echo "== control"; cat $C/control
echo "== allocinfo"; wc -l < /proc/allocinfo
'
if guest profiling "$o/nodepot" "stack_depot_disable=on" "$nodepot"; then
	why="the stack depot keeps no call chain: it is disabled (boot without stack_depot_disable=on) or has no memory (see the boot log)"
	f=$o/nodepot/out.log
	eq "stack_depot_disable=on: choosing a tag is refused, saying why" \
		"tags func:kmalloc_trace_noprof => Operation not supported | $why" "$(grep '^tags ' "$f" | tr -d '\r')"
	eq "stack_depot_disable=on: start is refused, saying why" \
		"control start => Operation not supported | $why" "$(grep '^control ' "$f" | tr -d '\r')"
	eq "stack_depot_disable=on: capture stays stopped" "stopped" "$(section control "$f")"
	check "stack_depot_disable=on: /proc/allocinfo is read as ever" \
		test "$(section allocinfo "$f")" -gt 100
fi
done_testing
