# Helpers of the project's test scripts: TAP output that tests/run.sh
# counts. Source it.
# shellcheck shell=bash
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
T=$(basename "$0" .sh)
_n=0
_failed=0

# ok DESC / fail DESC [DETAIL] / skip DESC REASON
ok() { _n=$((_n + 1)); echo "ok $_n - $T: $1"; }
fail() {
	_n=$((_n + 1)); _failed=1
	echo "not ok $_n - $T: $1"
	[ $# -lt 2 ] || printf '%s\n' "$2" | sed 's/^/#   /'
}
skip() { _n=$((_n + 1)); echo "ok $_n - $T: $1 # SKIP $2"; }

# check DESC CMD...: pass when CMD succeeds.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$desc"; else fail "$desc" "$out"; fi
}
# check_fails DESC PATTERN CMD...: pass when CMD fails and its output
# matches the extended regex PATTERN.
check_fails() {
	local desc=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		fail "$desc" "the command succeeded: $out"
	elif ! grep -qE -- "$pat" <<< "$out"; then
		fail "$desc" "exit $rc, but the output lacks /$pat/: $out"
	else
		ok "$desc"
	fi
}
# eq DESC EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

done_testing() {
	echo "1..$_n"
	exit $_failed
}

# section NAME FILE: the lines between "== NAME" and the next "== " line
# of a guest's output (carriage returns dropped).
section() {
	tr -d '\r' < "$2" | awk -v n="== $1" '$0 == n { on = 1; next } /^== / { on = 0 } on'
}

# field KEY FILE-SECTION-TEXT: the value of "KEY: value" in a text.
field() {
	awk -v k="$1:" '$1 == k { print $2; exit }' <<< "$2"
}

# guest ID OUTDIR APPEND SCRIPT: boot build ID with the kernel arguments
# APPEND, run SCRIPT, keep the logs in OUTDIR. Fails the test (and
# returns 1) when the guest does not get to the end of the script; the
# "not ok" line itself says why (a summary that keeps only the result
# lines still shows it), the detail lines give the end of the console.
#
# One fault is the emulator's and is retried, once, saying so: under
# multi-threaded TCG (ACCEL=tcg,thread=multi, which boot/flags-race needs),
# QEMU 7.2 lets a vCPU run the int3 that text_poke_bp() left in code after
# the patch of a static key was done, and the guest dies with "Oops: int3".
# The first console log stays as console.int3.log.
guest() {
	local id=$1 out=$2 append=$3 script=$4 err rc boots
	for boots in 1 2; do
		rc=0
		err=$("$TOP/scripts/boot.sh" -k "$id" -o "$out" -q -a "$append" "$script" 2>&1) || rc=$?
		[ $boots -eq 1 ] && [ $rc -eq 125 ] && [[ ${ACCEL:-} == *thread=multi* ]] &&
			grep -q 'Oops: int3' "$out/console.log" 2> /dev/null || break
		mv "$out/console.log" "$out/console.int3.log"
		echo "#   info: $id: the guest died of QEMU's multi-threaded TCG fault (Oops: int3 after a static-key patch; $out/console.int3.log): booting once more"
	done
	[ $rc -ne 0 ] || return 0
	fail "boot with '$append' runs to the end: $(boot_failure $rc "$err")" "$err"
	return 1
}

# boot_failure RC OUTPUT: scripts/boot.sh's failure in one line.
boot_failure() {
	local why
	why=$(grep -m1 ': error: ' <<< "$2" | sed 's/^[a-z-]*: error: //')
	case $1 in
	124) echo "${why:-timed out}" ;;
	125) echo "${why:-the guest died}" ;;
	*) echo "exit status $1${why:+: $why}" ;;
	esac | cut -c1-200
}

# site_line NAME: the line number of pftag_pages.c's call site marked
# "/* SITE:NAME */" (the tests derive file:line from the source).
site_line() {
	grep -n "/\* SITE:$1 \*/" "$TOP/tests/modules/pftag_pages.c" | cut -d: -f1
}

# tag_line TEXT LINE: the allocinfo line of pftag_pages.c:LINE in TEXT.
tag_line() { awk -v l="pftag_pages.c:$2" '$3 ~ "/" l "$" || $3 == l' <<< "$1"; }

# mode_append MODE [STATE]: the boot argument that selects page tag
# storage MODE (flags, the default: none; page_ext) with profiling in
# STATE (1, the default, or 0: allowed and off).
mode_append() {
	case $1 in
	flags) [ "${2:-1}" = 1 ] || echo "sysctl.vm.mem_profiling=$2" ;;
	page_ext) echo "sysctl.vm.mem_profiling=${2:-1},page_ext" ;;
	*) echo "mode_append: no page tag storage mode '$1' (flags or page_ext)" >&2; return 1 ;;
	esac
}

# Warnings a guest shows that are not the profiling's: x86's topology
# check at boot, when QEMU's two nodes interleave the CPUs.
QEMU_TOPOLOGY_WARNING='smpboot.c:[0-9]+ topology_sane'

# debug_reports CONSOLE-LOG [EXPECTED-ERE]: what the debug checks of
# CONFIG_MEM_ALLOC_PROFILING_DEBUG said in a guest's console log, and every
# warning and BUG, but the lines matching EXPECTED-ERE (warnings a test
# provokes on purpose, or QEMU_TOPOLOGY_WARNING).
debug_reports() {
	grep -E 'alloc_tag was not|current->alloc_tag not set|WARNING|BUG:' "$1" |
		grep -vE "${2:-^$}"
}

# report MODE TAP-FILE [SKIPS-FAIL]: one TAP line here per result of
# a kselftest suite's TAP output, its failures with the test's log; with
# SKIPS-FAIL set, a skipped test is a failure (a boot made for it).
report() {
	local mode=$1 tap=$2 skips_fail=${3:-} n=0
	while IFS= read -r line; do
		local name rest
		case "$line" in
		"ok "* | "not ok "*) ;;
		*) continue ;;
		esac
		n=$((n + 1))
		rest=${line#ok }
		rest=${rest#not ok }
		name=$(awk '{ print $2 }' <<< "$rest")
		if [[ $line == "not ok "* ]]; then
			fail "$mode: $name" "$(awk -v t="$name" '
				$0 ~ "#  RUN +" t " " { on = 1; next }
				on && /^(not )?ok / { exit }
				on' "$tap")"
		elif [[ $line == *"# SKIP"* && -n $skips_fail ]]; then
			fail "$mode: $name" "skipped where it must run: ${line#*# SKIP }"
		elif [[ $line == *"# SKIP"* ]]; then
			skip "$mode: $name" "${line#*# SKIP }"
		else
			ok "$mode: $name"
		fi
	done < "$tap"
	[ "$n" -gt 0 ] || fail "$mode: the suite printed TAP results" "$(tail -20 "$tap")"
}

# Distribution layouts of page->flags (scripts/config/layout-*.config)
# that some boot tests run on too, each a debug build of its own: "debian"
# (Debian's amd64 layout, 1 spare bit) by default; LAYOUTS="debian nine"
# adds the 9-bit layout, one more kernel build (about 8 minutes cold),
# which `make test` leaves out to stay well inside CI's time.
LAYOUTS=${LAYOUTS-debian}
# The layouts are x86_64's: none for another ARCH (tests/run.sh).
[ "${ARCH:-x86_64}" = x86_64 ] || LAYOUTS=
DEBIAN_CONFIG=${DEBIAN_CONFIG:-/usr/src/linux-config-6.12/config.amd64_none_amd64.xz}

# layout_frags L: the fragments of layout L's build, after "profiling".
layout_frags() {
	case $1 in
	debian) echo "debug layout-debian" ;;
	nine) echo "debug layout-debian layout-nine" ;;
	*) echo "unknown layout '$1' (LAYOUTS takes: debian nine)" >&2; return 1 ;;
	esac
}
# profiling_id "FRAGMENTS": the build (scripts/build.sh) of the profiling
# kernel with FRAGMENTS, as scripts/lib.sh's obj_id() names it (the
# architecture's fragment last, for ARCH other than x86_64).
profiling_id() {
	local id=profiling f
	for f in $1; do id+="+$f"; done
	[ "${ARCH:-x86_64}" = x86_64 ] || id+="+arch-$ARCH"
	echo "$id"
}
# layout_id L: the build of layout L.
layout_id() { profiling_id "$(layout_frags "$1")"; }
# layout_real L: scripts/page-flags-layout.sh's arguments for the real
# configuration layout L stands for.
layout_real() {
	case $1 in
	debian) echo "-c $DEBIAN_CONFIG" ;;
	nine) echo "-c $DEBIAN_CONFIG -s CONFIG_MAXSMP=n -s CONFIG_NR_CPUS=512 -s CONFIG_NODES_SHIFT=6" ;;
	esac
}
# build_profiling "FRAGMENTS": build the profiling kernel with FRAGMENTS
# and its initramfs; prints the end of the output on failure. Skipped
# when this `make test` run's background build (tests/run.sh) has already
# built it: it leaves a mark in $PREBUILT holding the run's
# PFTAG_TEST_RUN, so the test need not wait for the build lock, which the
# background build holds for its next kernel. A test started by hand has
# no PFTAG_TEST_RUN and always builds.
# Within a run, one build of a kernel at a time: the background build and
# a test that asks for the same kernel take a lock of their own for it
# (build/test/prebuilt/ID.lock), and the second finds the mark and builds
# nothing; a build while the other's guest boots that kernel would take
# its files away (scripts/build.sh clears .pftag-built first).
PREBUILT=$BUILD/test/prebuilt
build_profiling() {
	local id out lk rc=0
	id=$(profiling_id "$1")
	if [ -n "${PFTAG_TEST_RUN:-}" ]; then
		mkdir -p "$PREBUILT"
		exec {lk}> "$PREBUILT/$id.lock"
		flock "$lk"
		if [ "$(cat "$PREBUILT/$id" 2>/dev/null)" = "$PFTAG_TEST_RUN" ]; then
			exec {lk}>&-
			return 0
		fi
	fi
	if out=$(FRAGMENTS=$1 "$TOP/scripts/build.sh" profiling 2>&1 &&
		"$TOP/scripts/initramfs.sh" "$id" 2>&1); then
		[ -z "${PFTAG_TEST_RUN:-}" ] || echo "$PFTAG_TEST_RUN" > "$PREBUILT/$id"
	else
		tail -20 <<< "$out"
		rc=1
	fi
	[ -z "${lk:-}" ] || exec {lk}>&-
	return "$rc"
}
# arm64_part_skip WHAT: in make test's arm64 part (ARM64_PART=1, tests/run.sh),
# which boots the profiling kernel only, report WHAT as skipped, saying
# where it runs, and return 0; else return 1.
arm64_part_skip() {
	[ -n "${ARM64_PART:-}" ] || return 1
	skip "$1" "make test's arm64 part boots the profiling kernel only: make test ARCH=arm64 runs this"
}
# build_layout L: the same for layout L's kernel.
build_layout() {
	local frags
	frags=$(layout_frags "$1" 2>&1) || { echo "$frags"; return 1; }
	build_profiling "$frags"
}
