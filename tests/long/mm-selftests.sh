#!/usr/bin/env bash
# The kernel's own mm selftests (tools/testing/selftests/mm), built by
# scripts/mm-selftests.sh and run by scripts/mm-selftests-guest.sh, on
# five configurations of three kernels, each in a 2 GiB guest of 2 nodes
# and 4 vCPUs (the kernels' NR_CPUS; migration needs 3):
#   baseline   the kernel without profiling (build baseline+mm-selftests),
#   flags      the profiling kernel, page tags in page flags (its default),
#   page_ext   the profiling kernel with sysctl.vm.mem_profiling=1,page_ext,
#   debug, debug-page_ext   the same two on the debug build
#              (CONFIG_MEM_ALLOC_PROFILING_DEBUG), whose checks warn.
# Every kernel has scripts/config/mm-selftests.config on top of its usual
# fragments: what the tests need (madvise(), userfaultfd, KSM, swap,
# memory failure, ...), so that none fails for want of an option; the
# kernels of `make test` and `make bench` do not get it.
# Every test that passes on baseline must pass in every mode: a test
# that passes without profiling and fails with it points at the series.
# A test may fail only if tests/long/mm-selftests.known lists it, with
# its reason, and then only as it fails on baseline; a listed test that
# passes is reported, so that the list does not rot. After the suite, no
# /proc/allocinfo counter may be negative, and no console may show a
# warning or BUG.
#
# Not part of `make test`: about 55 minutes with the kernels built (five
# boots of about 18 minutes under TCG, two at a time), the three kernels'
# builds on top: `make mm-selftests`. NO_BUILD=1 boots the kernels as
# they are built; MM_SELFTESTS="NAME ..." runs those tests only;
# MM_SELFTESTS_CONFIGS="baseline flags" those configurations only;
# MM_SELFTESTS_JOBS=N boots N guests at a time (default 2).
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/mm-selftests
cpio=$BUILD/mm-selftests/mm-selftests.cpio
mkdir -p "$o"

# name|build|kernel arguments
configs=(
	"baseline|baseline+mm-selftests|"
	"flags|profiling+mm-selftests|"
	"page_ext|profiling+mm-selftests|sysctl.vm.mem_profiling=1,page_ext"
	"debug|profiling+debug+mm-selftests|"
	"debug-page_ext|profiling+debug+mm-selftests|sysctl.vm.mem_profiling=1,page_ext"
)
want_configs=${MM_SELFTESTS_CONFIGS:-baseline flags page_ext debug debug-page_ext}
# The hard limit of a boot: the suite's own timeouts keep it well below.
boot_timeout=${MM_SELFTESTS_BOOT_TIMEOUT:-3600}
jobs=${MM_SELFTESTS_JOBS:-2}
known_file=$TOP/tests/long/mm-selftests.known

kernels=$(for c in "${configs[@]}"; do
	IFS='|' read -r name kernel _ <<< "$c"
	[[ " $want_configs " != *" $name "* ]] || echo "$kernel"
done | sort -u)
for k in $kernels; do
	# A build id is its config and its fragments:
	# profiling+debug+mm-selftests is the profiling config with
	# FRAGMENTS="debug mm-selftests".
	frags=${k#*+}
	[ "$frags" != "$k" ] || frags=
	if [ "${NO_BUILD:-0}" = 1 ]; then
		[ -f "$BUILD/obj/$k/.pftag-built" ] || { fail "NO_BUILD=1: the $k kernel is built" "no $BUILD/obj/$k/.pftag-built"; done_testing; }
		[ -f "$BUILD/obj/$k/initramfs.cpio" ] || "$TOP/scripts/initramfs.sh" "$k"
	elif ! out=$(FRAGMENTS=${frags//+/ } "$TOP/scripts/build.sh" "${k%%+*}" 2>&1 &&
		"$TOP/scripts/initramfs.sh" "$k" 2>&1); then
		fail "the $k kernel builds" "$(tail -20 <<< "$out")"
		done_testing
	fi
done
if ! out=$("$TOP/scripts/mm-selftests.sh" 2>&1); then
	fail "the mm selftests build" "$out"
	done_testing
fi
grep -E 'tests built|built with a fix' <<< "$out" | sed 's/^/#   info: /'

script="
sh /opt/mm-selftests/run.sh ${MM_SELFTESTS:-}
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage 2> /dev/null
echo '== negative'; [ ! -r /proc/allocinfo ] || awk 'NR > 2 && (\$1 < 0 || \$2 < 0)' /proc/allocinfo
echo '== end'
"

# results OUT-LOG: "NAME<TAB>STATUS<TAB>RC<TAB>SECONDS<TAB>LAST-LINE<TAB>
# FIRST-FAILURE" per test ("-" for none), STATUS one of pass skip fail
# timeout notbuilt, or "unfinished" for the test the guest was in when it
# stopped. An exit status 0 whose kselftest counts have no pass and no
# failure is a skip: the test ran nothing (it skipped every case, or left
# before the first, as pagemap_ioctl does without userfaultfd). The last
# line leaves out kselftest's closing counts; the first failure is the
# first "not ok", "Bail out!", error or failure line, if any.
results() {
	tr -d '\r' < "$1" | sed 's/\x1b\[[0-9;]*m//g' | awk -F'\t' '
		function out(st) { printf "%s\t%s\t%s\t%s\t%s\t%s\n", name, st, rc, s,
			last == "" ? "-" : last, first == "" ? "-" : first }
		/^### begin / { name = $0; sub(/^### begin /, "", name); sub(/:.*/, "", name)
			last = first = ""; allskip = 0; open = 1; next }
		/^### end / { split($0, f, " "); rc = f[4]; sub(/^rc=/, "", rc)
			s = f[5]; sub(/^seconds=/, "", s)
			st = rc == "0" ? "pass" : rc == "4" ? "skip" : rc == "notbuilt" ? "notbuilt" : rc == "124" ? "timeout" : "fail"
			# kselftest exits 0 when every case skipped: a skip here.
			if (st == "pass" && allskip) st = "skip"
			out(st); open = 0; next }
		/^### / { next }
		open && NF {
			l = $0; gsub(/\t/, " ", l)
			if (l ~ /^# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:/) allskip = 1
			if (l ~ /^# (Totals|Planned tests|PASSED|FAILED):?/) next
			last = l
			if (first == "" && l ~ /^not ok |Bail out!|ERROR|[Ee]rror:|\[FAIL|Fail([^e]|$)|TIMEOUT/) first = l
		}
		END { if (open) { rc = "-"; s = "-"; out("unfinished") } }'
}
# output NAME CONFIG: a test's output in one configuration.
output() {
	tr -d '\r' < "$o/$2/out.log" | awk -v n="$1" '
		index($0, "### begin " n ":") == 1 { on = 1; next }
		on && index($0, "### end " n " ") == 1 { exit }
		on'
}

# The known failures: "NAME REASON" a line, # comments.
declare -A known
[ -f "$known_file" ] || { fail "the known list $known_file exists"; done_testing; }
while read -r t why; do
	known[$t]=$why
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$known_file")

# boot NAME KERNEL APPEND: one configuration's guest; its exit status
# and seconds go to $o/NAME.boot, what boot.sh said to $o/NAME.err.
boot() {
	local start rc=0
	start=$(date +%s)
	"$TOP/scripts/boot.sh" -k "$2" -m 2G -n 2 -c 4 -t "$boot_timeout" -q \
		-x "$cpio" -o "$o/$1" -a "$3" "$script" > "$o/$1.err" 2>&1 || rc=$?
	echo "$rc $(($(date +%s) - start))" > "$o/$1.boot"
}
# The guests, $jobs at a time: each runs on one host thread (TCG,
# thread=single), and the suite is the same in every one.
for c in "${configs[@]}"; do
	IFS='|' read -r name kernel append <<< "$c"
	[[ " $want_configs " == *" $name "* ]] || continue
	rm -f "$o/$name.boot" "$o/$name.err"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	boot "$name" "$kernel" "$append" &
done
wait

declare -A status rcs last first
ran=()
for c in "${configs[@]}"; do
	IFS='|' read -r name kernel append <<< "$c"
	[[ " $want_configs " == *" $name "* ]] || continue
	read -r rc secs < "$o/$name.boot"
	err=$(cat "$o/$name.err")
	f=$o/$name/out.log
	if [ "$rc" -ne 0 ]; then
		fail "$name: the guest runs the suite to the end: $(boot_failure "$rc" "$err")" "$err"
	elif ! tr -d '\r' < "$f" | grep -q '^### mm-selftests: done$'; then
		fail "$name: the suite runs to the end" "$(tail -n 20 "$f")"
	else
		ok "$name: the suite runs to the end ($secs s)"
	fi
	ran+=("$name")
	results "$f" > "$o/$name.results"
	while IFS=$'\t' read -r t st r _ l f1; do
		status[$name:$t]=$st
		rcs[$name:$t]=$r
		last[$name:$t]=$l
		first[$name:$t]=$f1
	done < "$o/$name.results"
	p=$(awk -F'\t' '$2 == "pass"' "$o/$name.results" | wc -l)
	s=$(awk -F'\t' '$2 == "skip"' "$o/$name.results" | wc -l)
	x=$(awk -F'\t' '$2 == "fail" || $2 == "timeout" || $2 == "unfinished"' "$o/$name.results" | wc -l)
	n=$(awk -F'\t' '$2 == "notbuilt"' "$o/$name.results" | wc -l)
	to=$(awk -F'\t' '$2 == "timeout" { printf " %s", $1 }' "$o/$name.results")
	echo "#   info: $name: $p passed, $s skipped, $x failed${to:+ (timed out:$to)}, $n not built; boot $secs s"
	tr -d '\r' < "$f" | sed -n 's/^### unlisted /#   info: '"$name"': built but not run by the runner: /p'

	# Every configuration but baseline is a profiling one.
	if [ "$name" != baseline ]; then
		want=page
		[[ $name != *page_ext ]] || want=page_ext
		eq "$name: storage" "$want" "$(field storage "$(section storage "$f")")"
		eq "$name: no /proc/allocinfo counter is negative after the suite" "" "$(section negative "$f")"
	fi
	# Which test was running comes from the runner's lines in the kernel log.
	eq "$name: no warning or BUG in the console" "" \
		"$(tr -d '\r' < "$o/$name/console.log" | awk '
			/mm-selftests: begin / { t = $NF }
			/WARNING|BUG:|Oops|Kernel panic/ { print (t == "" ? "(boot)" : t) ": " $0 }' |
			grep -vE "$QEMU_TOPOLOGY_WARNING")"
done

# Test by test: what passes on baseline passes with profiling.
if [[ " ${ran[*]} " == *" baseline "* ]]; then
	while IFS=$'\t' read -r t st _ _ _; do
		[ "$st" = pass ] || continue
		for m in "${ran[@]}"; do
			[ "$m" != baseline ] || continue
			if [ "${status[$m:$t]:-missing}" = pass ]; then
				ok "$m: $t passes as on baseline"
			else
				fail "$m: $t passes as on baseline" "$m: ${status[$m:$t]:-missing}; its output:
$(output "$t" "$m" | tail -n 15)"
			fi
		done
	done < "$o/baseline.results"
fi

# Failures: only the listed ones, and on a profiling kernel only as on
# baseline (the same status and exit code). A listed test that passes is
# reported: the list says why it fails, and that has changed.
for m in "${ran[@]}"; do
	while IFS=$'\t' read -r t st r _ _ _; do
		case $st in
		fail | timeout | unfinished | notbuilt) ;;
		pass)
			[ -z "${known[$t]+x}" ] ||
				echo "#   info: $m: $t passes, but tests/long/mm-selftests.known lists it: ${known[$t]}" | cut -c1-220
			continue ;;
		*) continue ;;
		esac
		# A test that passes on baseline has its failure above.
		[ "$m" = baseline ] || [ "${status[baseline:$t]:-}" != pass ] || continue
		if [ -z "${known[$t]+x}" ]; then
			fail "$m: $t fails only if the known list has it" "$m: $st (exit $r); its output:
$(output "$t" "$m" | tail -n 15)"
		elif [ "$m" = baseline ]; then
			echo "#   info: baseline: $t: $st (exit $r), a known failure: ${known[$t]}" | cut -c1-220
		elif [[ " ${ran[*]} " != *" baseline "* ]]; then
			echo "#   info: $m: $t: $st (exit $r), a known failure (no baseline run to compare): ${known[$t]}" | cut -c1-220
		elif [ "${status[baseline:$t]:-missing}:${rcs[baseline:$t]:-}" = "$st:$r" ]; then
			ok "$m: $t fails as on baseline ($st, exit $r; known: ${known[$t]})"
		else
			fail "$m: $t fails as on baseline" "$m: $st (exit $r), baseline: ${status[baseline:$t]:-missing} (exit ${rcs[baseline:$t]:-}); its output:
$(output "$t" "$m" | tail -n 15)"
		fi
	done < "$o/$m.results"
done

# Every difference, either way, and what fails everywhere.
{
	printf '%-28s' test
	for c in "${ran[@]}"; do printf ' %-10s' "$c"; done
	echo
	cut -f1 "$o/${ran[0]}.results" | while read -r t; do
		printf '%-28s' "$t"
		for c in "${ran[@]}"; do printf ' %-10s' "${status[$c:$t]:-missing}"; done
		echo
	done
} > "$o/table.txt"
awk 'NR > 1 { for (i = 3; i <= NF; i++) if ($i != $2) { print "#   info: differs: " $0; next } }' "$o/table.txt"
cut -f1 "$o/${ran[0]}.results" | while read -r t; do
	all=1
	for c in "${ran[@]}"; do
		case ${status[$c:$t]:-missing} in fail | timeout | unfinished) ;; *) all=0 ;; esac
	done
	[ $all = 1 ] || continue
	r=${ran[0]}:$t
	echo "#   info: fails on every kernel: $t (${status[$r]}): ${last[$r]}" | cut -c1-220
	[ "${first[$r]}" = - ] || [ "${first[$r]}" = "${last[$r]}" ] ||
		echo "#   info:   first failure: ${first[$r]}" | cut -c1-220
done
echo "#   info: results per test: $o/table.txt; logs: $o/CONFIG/out.log, console.log"
done_testing
