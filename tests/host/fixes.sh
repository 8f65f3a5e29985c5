#!/usr/bin/env bash
# Fixes first: the patches that fix the 6.12 base (those with a Fixes:
# tag) open the series, before any patch of the feature, and apply to the
# pristine base plus the fixes before them, as a stable tree would take
# them in order. A fix marked for stable (Cc: stable@vger.kernel.org)
# must also apply alone to the pristine base; a fix without that line
# must say why it is not for stable ("Not for stable" in its message).
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/lib.sh" 2> /dev/null
set +e
tree=$BUILD/linux
[ -d "$tree/.git" ] || "$TOP/scripts/assemble.sh" > /dev/null 2>&1 || { fail "make assemble works"; done_testing; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t all < <(series_patches "$TOP/patches/series")
fixes=() order=
for p in "${all[@]}"; do
	if grep -q '^Fixes: ' "$TOP/patches/$p"; then
		fixes+=("$p")
		order+=F
	else
		order+=.
	fi
done
check "the series has fixes of the base (patches with a Fixes: tag)" test ${#fixes[@]} -gt 0
check "every fix comes before every feature patch (order: $order)" \
	bash -c "[[ '$order' =~ ^F*\.*$ ]]"

GIT_INDEX_FILE=$tmp/index git -C "$tree" read-tree base
for p in "${fixes[@]}"; do
	if out=$(GIT_INDEX_FILE=$tmp/index git -C "$tree" apply --cached "$TOP/patches/$p" 2>&1); then
		ok "$p applies to the base plus the fixes before it"
	else
		fail "$p applies to the base plus the fixes before it" "$out"
	fi
	if grep -q '^Cc: stable@vger.kernel.org' "$TOP/patches/$p"; then
		if out=$(GIT_INDEX_FILE=$tmp/alone git -C "$tree" read-tree base &&
			 GIT_INDEX_FILE=$tmp/alone git -C "$tree" apply --cached --check "$TOP/patches/$p" 2>&1); then
			ok "$p (for stable) applies alone to the pristine base"
		else
			fail "$p (for stable) applies alone to the pristine base" "$out"
		fi
	else
		check "$p (not marked for stable) says why: \"Not for stable\"" \
			grep -q '^Not for stable' "$TOP/patches/$p"
	fi
done
done_testing
