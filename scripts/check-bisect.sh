#!/usr/bin/env bash
# check-bisect.sh [-f N] [-n]: build and boot every patch of the series
# on its own. The steps are the commits of build/linux (one per patch of
# patches/, new files included, as `git am` gives them), every one built
# with the profiling config and booted once: the boot must reach
# userspace, read the /proc/allocinfo header and log no WARNING, BUG or
# Oops. Not part of `make test`.
#
#   -f N   start at step N (the earlier steps are taken as checked)
#   -n     dry run: print every step's commit and the commands, build and
#          boot nothing
#   -a     check again the steps that passed before (see below)
#
# Speed: one work tree (build/bisect/linux) and one build directory
# (build/obj/bisect) serve every step and every run; git checkout rewrites
# only the files a step changes, so each build is incremental, and ccache
# keeps the objects of earlier runs (same paths, same flags). Modules of
# the tests are not built; the boot is 256 MiB, 1 vCPU, 120 s at most.
# The result, one line per step, is printed and kept in
# build/bisect/result.txt, the logs of a failed step next to it.
#
# Resumable: a step that passed leaves a record in build/bisect/ok/,
# named by its commit and by the config fragments it was built with, as
# soon as it passed. A later run takes such a step as checked and says
# so (its line ends in ", before"): an interrupted run goes on where it
# stopped, and after a change to patch N only the steps from N on are
# redone (their commits are new). -a checks every step again.
STEP=check-bisect
. "$(dirname "$0")/lib.sh"

from=1 dry=0 again=0
while getopts "af:n" opt; do
	case $opt in
	a) again=1 ;;
	f) from=$OPTARG ;;
	n) dry=1 ;;
	*) die "usage: check-bisect.sh [-a] [-f N] [-n]" "see the comment at the top of scripts/check-bisect.sh" ;;
	esac
done
case $from in '' | *[!0-9]*) die "-f takes a step number" "e.g. -f 3" ;; esac

[ -d "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"
dir=$BUILD/bisect
wt=$dir/linux
id=bisect
mkdir -p "$dir"

top=$(git -C "$TREE" rev-parse HEAD)
mapfile -t commits < <(git -C "$TREE" rev-list --reverse "base..$top")
[ ${#commits[@]} -gt 0 ] || die "no commit to check on top of base" "run 'make assemble'"
[ "$from" -ge 1 ] && [ "$from" -le ${#commits[@]} ] ||
	die "-f $from: the steps are 1 to ${#commits[@]}" "pick one of them"

# The work tree: kept from the last run when it belongs to $TREE (a new
# base makes a new repository, and a new work tree).
if [ "$dry" = 0 ]; then
	if [ -e "$wt/.git" ] &&
	   [ "$(cd "$wt" && git rev-parse --path-format=absolute --git-common-dir 2> /dev/null)" = "$(cd "$TREE" && git rev-parse --path-format=absolute --git-common-dir)" ]; then
		git -C "$wt" reset -q --hard 2> /dev/null || true
	else
		git -C "$TREE" worktree prune
		rm -rf "$wt"
		git -C "$TREE" worktree add -q --detach "$wt" "${commits[from - 1]}" ||
			die "cannot make the work tree $wt" "check the free disk space"
	fi
fi

result=$dir/result.txt
okdir=$dir/ok
mkdir -p "$okdir"
# What a step's record depends on besides its commit: the fragments
# scripts/build.sh reads for the profiling config.
frags_sum=$(cat "$TOP"/scripts/config/{base,mm,profiling}.config | sha1sum | cut -c1-12)
[ "$dry" = 1 ] || { rm -f "$dir"/build-*.log "$dir"/boot-*.log "$dir"/console-*.log; : > "$result.new"; }
failed=0 k=0
for c in "${commits[@]}"; do
	k=$((k + 1))
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	line=$(printf '%2d/%d %s' "$k" ${#commits[@]} "$subject")
	[ "$k" -ge "$from" ] || continue
	if [ "$dry" = 1 ]; then
		echo "step $line"
		echo "  git -C ${wt#"$TOP"/} checkout -q --detach $(git -C "$TREE" rev-parse --short=12 "$c")"
		echo "  TREE=${wt#"$TOP"/} BUILD_ID=$id CONFIG_CHECK=warn TEST_MODULES=0 scripts/build.sh profiling"
		echo "  scripts/initramfs.sh $id"
		printf '  '
		"$TOP/scripts/boot.sh" -d -k "$id" -m 256M -c 1 -t 120 -o "$BUILD/boot/bisect" true | sed "s|$TOP/||g"
		continue
	fi
	rec=$okdir/$c-$frags_sum
	if [ "$again" = 0 ] && [ -s "$rec" ]; then
		echo "ok   $line ($(cat "$rec"), before)" | tee -a "$result.new"
		continue
	fi
	git -C "$wt" checkout -q -f --detach "$c" || die "cannot check out $c in $wt" "remove $wt and run again"
	note "step $line: building"
	t0=$SECONDS
	# Options a later patch introduces do not exist yet: warn, do not fail.
	if ! TREE=$wt BUILD_ID=$id CONFIG_CHECK=warn TEST_MODULES=0 "$TOP/scripts/build.sh" profiling > "$dir/build-$k.log" 2>&1; then
		cat "$BUILD/obj/$id/build.log" >> "$dir/build-$k.log" 2> /dev/null || true
		echo "FAIL (build) $line (log: ${dir#"$TOP"/}/build-$k.log)" | tee -a "$result.new"
		failed=1
		continue
	fi
	tb=$((SECONDS - t0))
	t0=$SECONDS
	"$TOP/scripts/initramfs.sh" "$id" > /dev/null 2>&1 || die "initramfs.sh $id failed" "run it by hand to see why"
	o=$BUILD/boot/bisect
	if ! "$TOP/scripts/boot.sh" -k "$id" -q -m 256M -c 1 -t 120 -o "$o" \
		'test "$(sed -n 1p /proc/allocinfo)" = "allocinfo - version: 1.0"' > "$dir/boot-$k.log" 2>&1; then
		cp "$o/console.log" "$dir/console-$k.log" 2> /dev/null || true
		echo "FAIL (boot) $line (console: ${dir#"$TOP"/}/console-$k.log)" | tee -a "$result.new"
		failed=1
		continue
	fi
	if w=$(grep -m3 -E 'WARNING|BUG:|Oops' "$o/console.log"); then
		cp "$o/console.log" "$dir/console-$k.log"
		echo "FAIL (warning) $line: $(head -n 1 <<< "$w") (console: ${dir#"$TOP"/}/console-$k.log)" | tee -a "$result.new"
		failed=1
		continue
	fi
	echo "build $tb s, boot $((SECONDS - t0)) s, $(date -u +%Y-%m-%d)" > "$rec"
	echo "ok   $line ($(cat "$rec"))" | tee -a "$result.new"
	rm -f "$dir/build-$k.log" "$dir/boot-$k.log"
done
[ "$dry" = 0 ] || exit 0
mv "$result.new" "$result"
[ $failed = 0 ] || die "some patch does not build or boot on its own (see above; all: ${result#"$TOP"/})" \
	"fix that patch in build/linux and 'make export'"
note "every step builds and boots (${result#"$TOP"/})"
