#!/usr/bin/env bash
# The series passes the kernel's scripts/checkpatch.pl --strict without
# an error or a warning. CHECK-level remarks are shown, not failed: the
# one left is KUnit's usual kunit_test_suite() right after its struct.
. "$(dirname "$0")/../lib.sh"
cp=$BUILD/linux/scripts/checkpatch.pl
[ -x "$cp" ] || { fail "checkpatch.pl is in build/linux" "run make assemble"; done_testing; }
while read -r p; do
	out=$(cd "$BUILD/linux" && ./scripts/checkpatch.pl --strict --no-tree --no-summary --terse \
		"$TOP/patches/$p" 2>&1)
	bad=$(grep -E ': (ERROR|WARNING):' <<< "$out")
	eq "checkpatch --strict: $p has no error or warning" "" "$bad"
	grep -E ': CHECK:' <<< "$out" | sed 's/^/#   note: /'
done < <(. "$TOP/scripts/lib.sh"; series_patches "$TOP/patches/series")
# The new files of the overlay are not in any patch: check them as files.
while read -r f; do
	out=$(cd "$BUILD/linux" && ./scripts/checkpatch.pl --strict --no-tree --no-summary --terse \
		--file "$TOP/$f" 2>&1)
	bad=$(grep -E ': (ERROR|WARNING):' <<< "$out")
	eq "checkpatch --strict --file: $f has no error or warning" "" "$bad"
	grep -E ': CHECK:' <<< "$out" | sed 's/^/#   note: /'
done < <(. "$TOP/scripts/lib.sh"; overlay_files)
done_testing
