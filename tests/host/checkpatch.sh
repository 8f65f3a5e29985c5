#!/usr/bin/env bash
# The series passes the kernel's scripts/checkpatch.pl --strict without
# an error or a warning. CHECK-level remarks are shown, not failed: the
# one left is KUnit's usual kunit_test_suite() right after its struct.
# build/linux has no upstream history, so checkpatch cannot look up the
# commits that Fixes: tags name ("Unknown commit id"): that warning alone
# is set aside, and the tags' form is checked instead (12 hex digits and
# the quoted subject); the ids were taken from upstream's own Fixes: lines.
. "$(dirname "$0")/../lib.sh"
cp=$BUILD/linux/scripts/checkpatch.pl
[ -x "$cp" ] || { fail "checkpatch.pl is in build/linux" "run make assemble"; done_testing; }
while read -r p; do
	out=$(cd "$BUILD/linux" && ./scripts/checkpatch.pl --strict --no-tree --no-summary --terse \
		"$TOP/patches/$p" 2>&1)
	bad=$(grep -E ': (ERROR|WARNING):' <<< "$out" | grep -v ": WARNING: Unknown commit id '[0-9a-f]\{12\}'")
	eq "checkpatch --strict: $p has no error or warning" "" "$bad"
	fixes=$(grep '^Fixes: ' "$TOP/patches/$p" | grep -vE '^Fixes: [0-9a-f]{12} \("[^"]+"\)$')
	eq "the Fixes: tags of $p have the form <12 hex digits> (\"subject\")" "" "$fixes"
	grep -E ': CHECK:' <<< "$out" | sed 's/^/#   note: /'
done < <(. "$TOP/scripts/lib.sh"; series_patches "$TOP/patches/series")
# The new files as files too (the patches check only what they add).
while read -r f; do
	out=$(cd "$BUILD/linux" && ./scripts/checkpatch.pl --strict --no-tree --no-summary --terse \
		--file "$TOP/$f" 2>&1)
	bad=$(grep -E ': (ERROR|WARNING):' <<< "$out")
	eq "checkpatch --strict --file: $f has no error or warning" "" "$bad"
	grep -E ': CHECK:' <<< "$out" | sed 's/^/#   note: /'
done < <(. "$TOP/scripts/lib.sh"; overlay_files)
done_testing
