#!/usr/bin/env bash
# check-bisect.sh: build and boot every prefix of the series (base +
# overlay + patches 1..k, for every k), so that every patch builds and
# boots on its own. Each step is a build of the profiling config in
# build/obj/bisect (ccache makes the later steps cheaper) and one boot
# that must reach userspace and read /proc/allocinfo. Long: about one
# kernel build per patch. Not part of `make test`.
STEP=check-bisect
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"
wt=$BUILD/bisect-tree
git -C "$TREE" worktree remove --force "$wt" 2> /dev/null || true
rm -rf "$wt"
mapfile -t commits < <(git -C "$TREE" rev-list --reverse base..HEAD)
git -C "$TREE" worktree add -q --detach "$wt" "${commits[0]}" ||
	die "cannot make a work tree for the check" "check the free disk space"
trap 'git -C "$TREE" worktree remove --force "$wt" 2> /dev/null' EXIT

failed=0
for c in "${commits[@]}"; do
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c"
	note "building: $subject"
	# Options a later patch introduces do not exist yet: warn, do not fail.
	if ! TREE=$wt BUILD_ID=bisect CONFIG_CHECK=warn "$TOP/scripts/build.sh" profiling > /dev/null 2>&1; then
		note "FAIL (build): $subject (log: build/obj/bisect/build.log)"
		failed=1
		continue
	fi
	"$TOP/scripts/initramfs.sh" bisect
	if "$TOP/scripts/boot.sh" -k bisect -q -o "$BUILD/boot/bisect" -t 120 \
		'test "$(sed -n 1p /proc/allocinfo)" = "allocinfo - version: 1.0"'; then
		note "ok: $subject"
	else
		note "FAIL (boot): $subject (console: build/boot/bisect/console.log)"
		failed=1
	fi
done
[ $failed = 0 ] || die "some patch does not build or boot on its own (see above)" "fix that patch in build/linux and 'make export'"
note "every prefix of the series builds and boots"
