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
# The blob ids of "index" lines and the line numbers of hunk headers
# follow the linux-source release the tree was assembled from (a Debian
# point release moves them); everything else must match byte for byte.
base_neutral() {
	local f
	mkdir -p "$2"
	for f in "$1"/*; do
		sed -E -e 's/^index [0-9a-f]+\.\.[0-9a-f]+/index BLOB..BLOB/' \
		    -e 's/^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@/@@ -N +N @@/' \
		    "$f" > "$2/${f##*/}"
	done
}
base_neutral "$TOP/patches" "$tmp/ours"
base_neutral "$tmp/patches" "$tmp/theirs"
d=$(diff -r "$tmp/ours" "$tmp/theirs" 2>&1)
eq "patches/ equals the export of build/linux, but for the base's line numbers and blob ids (make export writes it)" "" "$d"
for dir in $(overlay_dirs); do
	if [ -d "$TOP/$dir" ] || [ -d "$tmp/$dir" ]; then
		d=$(diff -r "$TOP/$dir" "$tmp/$dir" 2>&1)
		eq "$dir/ equals the new files of build/linux" "" "$d"
	fi
done
done_testing
