#!/usr/bin/env bash
# Tree assembly: the real series applies; a patch that does not apply, a
# missing patch and a patch without Signed-off-by stop it with a message
# naming the patch, the kernel versions and the way out, and leave the
# assembled tree as it was. The overlay must be the new files as the
# series leaves them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/lib.sh" 2> /dev/null
set +e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
asm=$TOP/scripts/assemble.sh
tree=$BUILD/linux
[ -d "$tree/.git" ] || "$asm" > /dev/null 2>&1 || { fail "make assemble works"; done_testing; }

check "the project's series applies" "$asm" --check
check "assembling again with nothing changed is a no-op" "$asm"
head_before=$(git -C "$tree" rev-parse HEAD)

# A patch whose context does not match the tree.
cp -r "$TOP/patches" "$tmp/bad"
cat > "$tmp/bad/9999-bad.patch" <<'P'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.org>
Date: Sun, 17 Nov 2024 00:00:00 +0000
Subject: [PATCH] mm: a patch made for another tree

Signed-off-by: Test <test@example.org>
---
 mm/page_alloc.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/mm/page_alloc.c b/mm/page_alloc.c
--- a/mm/page_alloc.c
+++ b/mm/page_alloc.c
@@ -1,3 +1,3 @@
-// this line is not in Linux 6.12
+// nor is this one
 #include <linux/stddef.h>
 #include <linux/mm.h>
P
echo 9999-bad.patch >> "$tmp/bad/series"
check_fails "a patch that does not apply stops the assembly, naming it and both versions" \
	'patch [0-9]+ \(9999-bad.patch\) does not apply to Linux 6\.12\.[0-9]+ \(the series is made for 6\.12\.[0-9]+\)' \
	env PATCHES="$tmp/bad" "$asm"
eq "the failed assembly left build/linux where it was" "$head_before" "$(git -C "$tree" rev-parse HEAD)"
check "the failed assembly left build/linux clean" test -z "$(git -C "$tree" status --porcelain --untracked-files=no)"

cp -r "$TOP/patches" "$tmp/missing"
echo 9998-nowhere.patch >> "$tmp/missing/series"
check_fails "a series line without its patch file stops the assembly" 'names 9998-nowhere.patch, which does not exist' \
	env PATCHES="$tmp/missing" "$asm" --check

cp -r "$TOP/patches" "$tmp/nosob"
sed '/^Signed-off-by/d' "$tmp/bad/9999-bad.patch" > "$tmp/nosob/9997-nosob.patch"
echo 9997-nosob.patch >> "$tmp/nosob/series"
check_fails "a patch without Signed-off-by stops the assembly" '9997-nosob.patch has no Signed-off-by' \
	env PATCHES="$tmp/nosob" "$asm" --check

# Uncommitted edits in build/linux are not thrown away.
f=$tree/README
cp "$f" "$tmp/README.orig"
echo "local edit" >> "$f"
check_fails "assembling over uncommitted edits refuses, pointing to make export" \
	'uncommitted edits that are not in patches' env SRC="$tmp" "$asm"
check "the uncommitted edit survived" grep -q "local edit" "$f"
cp "$tmp/README.orig" "$f"

# A new overlay file that collides with an existing kernel file.
mkdir -p "$tmp/src/mm"
echo "/* not new */" > "$tmp/src/mm/page_alloc.c"
check_fails "an overlay file that already exists in the kernel is refused" \
	'overlay file mm/page_alloc.c already exists' env SRC="$tmp/src" "$asm" --check

# An overlay file edited outside the series, and one no patch adds.
for d in $(overlay_dirs); do
	[ ! -d "$TOP/$d" ] || { mkdir -p "$tmp/edited/$(dirname "$d")"; cp -r "$TOP/$d" "$tmp/edited/$d"; }
done
echo '/* edited here, not in a patch */' >> "$tmp/edited/mm/pgalloc_tag.c"
check_fails "an overlay file that differs from the series' version stops the assembly, naming it" \
	'mm/pgalloc_tag.c: differs from mm/pgalloc_tag.c as the series leaves it' env SRC="$tmp/edited" "$asm" --check
cp "$TOP/mm/pgalloc_tag.c" "$tmp/edited/mm/pgalloc_tag.c"
echo '/* new */' > "$tmp/edited/mm/pftag_stray.c"
check_fails "an overlay file that no patch adds stops the assembly, naming it" \
	'mm/pftag_stray.c: no patch of the series adds mm/pftag_stray.c' env SRC="$tmp/edited" "$asm" --check
done_testing
