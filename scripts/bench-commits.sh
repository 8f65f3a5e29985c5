#!/usr/bin/env bash
# bench-commits.sh REV...: guest instructions per allocation + free of
# each commit REV of the assembled tree (build/linux), for the before and
# after figures of a hot-path patch's commit message.
#
# Every REV is checked out in build/linux (detached; the branch is
# restored at the end, and a tree with uncommitted edits is refused), so
# that only the files that differ are rebuilt and ccache hits; it is built
# with the profiling config as build/obj/steps and booted three times under
# -icount shift=0: profiling off (sysctl.vm.mem_profiling=0), page flags
# (the default) and page_ext (...=1,page_ext). The baseline (profiling not
# built in) is build/obj/baseline, built first if needed. Prints one table
# row per commit and mode; the full figures of every configuration are
# `make bench`'s.
#
# Environment: LOOPS (20000 pairs per case), FRAGMENTS (extra config
# fragments, as for make build).
STEP=bench-commits
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: bench-commits.sh REV..." "name commits of $TREE, e.g. HEAD~1 HEAD"
LOOPS=${LOOPS:-20000}
FRAGMENTS=${FRAGMENTS:-}
export FRAGMENTS
[ -e "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"
revs=()
for r in "$@"; do
	revs+=("$(git -C "$TREE" rev-parse --verify -q "$r^{commit}")") ||
		die "$r is not a commit of $TREE" "name one from 'git -C $TREE log --oneline'"
done

[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted edits" "commit or stash them first"
orig=$(git -C "$TREE" symbolic-ref -q --short HEAD || git -C "$TREE" rev-parse HEAD)
trap 'git -C "$TREE" checkout -q "$orig"' EXIT
base_id=$(obj_id baseline "$FRAGMENTS")
[ -f "$BUILD/obj/$base_id/.pftag-built" ] || "$TOP/scripts/build.sh" baseline
"$TOP/scripts/initramfs.sh" "$base_id"

guest_cmd='k=$(awk '\''$3 == "__start_alloc_tags" { print "0x" $1; exit }'\'' /proc/kallsyms)
insmod /opt/pftag/modules/pftag_bench.ko loops='"$LOOPS"' runs=1 cpu=1 ${k:+ktag=$k} &&
rmmod pftag_bench && dmesg | grep "pftag_bench:"'

out=$BUILD/bench-commits
mkdir -p "$out"
measure() { # measure LABEL BUILD-ID APPEND
	local dir=$out/$1
	"$TOP/scripts/boot.sh" -k "$2" -i -q -t 900 -o "$dir" -a "$3" "$guest_cmd" ||
		die "the guest of $1 failed" "see $dir/console.log"
	python3 "$TOP/scripts/bench-report.py" --parse-micro "$dir/out.log" |
		awk -v l="$1" '{ printf "| %s | %s | %.0f |\n", l, $1, $2 }'
}

printf '| commit / mode | case | instructions per pair |\n|---|---|---|\n'
measure baseline "$base_id" ""
for rev in "${revs[@]}"; do
	git -C "$TREE" checkout -q --detach "$rev"
	# Options of later patches (CONFIG_TEST_ALLOC_TAG) do not exist yet.
	BUILD_ID=steps CONFIG_CHECK=warn "$TOP/scripts/build.sh" profiling
	"$TOP/scripts/initramfs.sh" steps
	short=$(git -C "$TREE" log -1 --format=%h "$rev")
	measure "$short-off" steps "sysctl.vm.mem_profiling=0"
	measure "$short-page-flags" steps ""
	measure "$short-page_ext" steps "sysctl.vm.mem_profiling=1,page_ext"
done
