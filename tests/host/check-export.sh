#!/usr/bin/env bash
# build/linux and patches/ + overlay agree: exporting the assembled tree
# gives back the project's files byte for byte.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/lib.sh" 2> /dev/null
set +e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! out=$("$TOP/scripts/assemble.sh" 2>&1); then
	fail "the tree assembles" "$out"
	done_testing
fi
if ! out=$("$TOP/scripts/export.sh" "$tmp" 2>&1); then
	fail "the assembled tree exports" "$out"
	done_testing
fi
ok "the assembled tree exports"
d=$(diff -r "$TOP/patches" "$tmp/patches" 2>&1)
eq "patches/ equals the export of build/linux (make export writes it)" "" "$d"
for dir in $(overlay_dirs); do
	if [ -d "$TOP/$dir" ] || [ -d "$tmp/$dir" ]; then
		d=$(diff -r "$TOP/$dir" "$tmp/$dir" 2>&1)
		eq "$dir/ equals the new files of build/linux" "" "$d"
	fi
done
done_testing
