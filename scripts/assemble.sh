#!/usr/bin/env bash
# Assemble the kernel tree: Debian's pristine linux-source, then
# patches/series, one commit each, in the git repository $TREE
# (build/linux), branch "series". The patches are complete: each new file
# arrives with the patch that adds it. The overlay (mm/, include/, the
# selftests) holds the new files as the whole series leaves them, for
# reading at their kernel paths; it must match what the patches make. A
# developer edits in $TREE and runs `make export`, which writes both.
#
#   assemble.sh            bring $TREE up to date (only changed files are
#                          rewritten, so kbuild rebuilds only what changed)
#   assemble.sh --check    build the commits without touching the work
#                          tree; fails as the real run would
#   FORCE=1 assemble.sh    discard edits in $TREE that were not exported
#
# PATCHES (default patches/) and SRC (default the project top) can be
# pointed elsewhere; the tests use that.
STEP=assemble
. "$(dirname "$0")/lib.sh"

check_only=0
[ "${1:-}" = --check ] && check_only=1
PATCHES=${PATCHES:-$TOP/patches}
SRC=${SRC:-$TOP}
FORCE=${FORCE:-0}

[ -f "$TARBALL" ] ||
	die "kernel source $TARBALL is missing" \
	    "install Debian's linux-source-6.12 package (make deps), or set TARBALL=..."
[ -f "$PATCHES/series" ] || die "$PATCHES/series is missing" "restore it from git"

# Fixed identity and dates, so the same inputs give the same commits.
export GIT_COMMITTER_NAME="series assembly" GIT_COMMITTER_EMAIL="assembly@localhost"
export GIT_COMMITTER_DATE="2024-11-17T00:00:00Z"
git_() { git -C "$TREE" -c core.abbrev=12 -c advice.detachedHead=false "$@"; }

# 1. The pristine base, made once per tarball and kept as tag "base".
tarball_id=$(stat -c '%s-%Y' "$TARBALL")
if [ -d "$TREE/.git" ] && [ "$(cat "$TREE/.git/pftag-tarball" 2>/dev/null)" != "$tarball_id" ]; then
	[ "$check_only" = 0 ] || die "$TREE was made from another $TARBALL" "run make assemble first"
	if [ "$FORCE" != 1 ] && [ -n "$(git_ status --porcelain --untracked-files=no)" ]; then
		die "$TARBALL changed, and $TREE has uncommitted edits" \
		    "commit and 'make export' them, or 'make assemble FORCE=1' to drop them"
	fi
	note "$TARBALL changed since $TREE was made: making the base again"
	rm -rf "$TREE"
fi
if [ ! -d "$TREE/.git" ]; then
	[ "$check_only" = 0 ] || die "$TREE does not exist" "run make assemble first"
	note "extracting $TARBALL"
	rm -rf "$TREE.new"
	mkdir -p "$TREE.new"
	tar -xf "$TARBALL" -C "$TREE.new" --strip-components=1 ||
		die "cannot extract $TARBALL" "check the file (dpkg -V linux-source-6.12) and the free disk space"
	ver=$(tree_version "$TREE.new") || die "$TARBALL holds no kernel Makefile" "reinstall linux-source-6.12"
	(
		cd "$TREE.new"
		git init -q -b series
		git config gc.auto 0
		# Debian's top-level .gitignore ignores "/*": add with -f.
		git add -A -f
		GIT_AUTHOR_NAME="Debian linux-source-6.12" GIT_AUTHOR_EMAIL="debian-kernel@lists.debian.org" \
		GIT_AUTHOR_DATE="$GIT_COMMITTER_DATE" git commit -q -m "Linux $ver from Debian's linux-source-6.12"
		git tag base
	) || die "cannot make the base repository in $TREE.new" "check the free disk space and retry"
	echo "$tarball_id" > "$TREE.new/.git/pftag-tarball"
	mv "$TREE.new" "$TREE"
fi

base_ver=$(tree_version "$TREE")
if [ "$base_ver" != "$SERIES_KERNEL" ]; then
	note "warning: the series is made for $SERIES_KERNEL; the installed linux-source is $base_ver: trying it"
fi

# 2. Skip all work when neither the inputs nor the tree changed.
inputs=$(series_inputs "$PATCHES" "$SRC" "$tarball_id")
assembled=$(git_ rev-parse -q --verify refs/pftag/assembled || true)
head=$(git_ rev-parse HEAD)
dirty=$(git_ status --porcelain --untracked-files=no)
if [ "$check_only" = 0 ] && [ -n "$assembled" ] && [ "$head" = "$assembled" ] && [ -z "$dirty" ] &&
   [ "$(cat "$TREE/.git/pftag-inputs" 2>/dev/null)" = "$inputs" ]; then
	note "$TREE is up to date ($(git_ rev-list --count base..HEAD) commits on Linux $base_ver)"
	exit 0
fi
if [ "$check_only" = 0 ] && [ "$FORCE" != 1 ]; then
	[ -z "$dirty" ] || die "$TREE has uncommitted edits that are not in patches/" \
		"commit them there and run 'make export', or 'make assemble FORCE=1' to drop them"
	[ -z "$assembled" ] || [ "$head" = "$assembled" ] ||
		die "$TREE has commits that are not in patches/ (HEAD moved since the last assembly)" \
		    "run 'make export' to keep them, or 'make assemble FORCE=1' to drop them"
fi

# 3. Build the commits on a private index; the work tree is not touched.
index="$TREE/.git/pftag-index"
export GIT_INDEX_FILE="$index"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$index"' EXIT
git_ read-tree base
parent=$(git_ rev-parse base)
n=0
while read -r p; do
	n=$((n + 1))
	[ -f "$PATCHES/$p" ] || die "patches/series names $p, which does not exist" "fix patches/series"
	git_ mailinfo -k "$tmp/msg" "$tmp/diff" < "$PATCHES/$p" > "$tmp/info" ||
		die "patch $p is not a mail-format patch" "regenerate it with 'make export'"
	subject=$(sed -n 's/^Subject: //p' "$tmp/info")
	subject=$(printf '%s' "$subject" | sed -E 's/^\[PATCH[^]]*\] *//')
	[ -n "$subject" ] || die "patch $p has no Subject" "regenerate it with 'make export'"
	grep -q '^Signed-off-by: ' "$tmp/msg" ||
		die "patch $p has no Signed-off-by line" "add one to its commit message"
	if ! git_ apply --cached --whitespace=nowarn "$tmp/diff" 2> "$tmp/apply.err"; then
		sed 's/^/  /' "$tmp/apply.err" >&2
		die "patch $n ($p) does not apply to Linux $base_ver (the series is made for $SERIES_KERNEL)" \
		    "rebase it in $TREE (git rebase -i base, fix, 'make export'), or install linux-source $SERIES_KERNEL"
	fi
	tree=$(git_ write-tree)
	parent=$(GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' "$tmp/info") \
		GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' "$tmp/info") \
		GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' "$tmp/info") \
		git_ commit-tree "$tree" -p "$parent" -F <(printf '%s\n\n' "$subject"; cat "$tmp/msg"))
done < <(series_patches "$PATCHES/series")

# The overlay is the series' new files as the last patch leaves them.
git_ diff --name-only --diff-filter=A base "$parent" > "$tmp/added"
bad=
while read -r f k; do
	if git_ cat-file -e "base:$k" 2>/dev/null; then
		die "overlay file $f already exists in Linux $base_ver (as $k)" \
		    "an edit of an existing file belongs in a patch: make it in $TREE and run 'make export'"
	fi
	if ! grep -qxF "$k" "$tmp/added"; then
		bad+="  $f: no patch of the series adds $k"$'\n'
	elif [ "$(git_ hash-object "$SRC/$f")" != "$(git_ rev-parse "$parent:$k")" ]; then
		bad+="  $f: differs from $k as the series leaves it"$'\n'
	fi
done < <(overlay_map "$SRC")
while read -r k; do
	f=$(project_path "$k") || die "the series adds $k, outside the overlay directories ($OVERLAY_DIRS)" \
		"put new kernel files under one of them, or add the directory to OVERLAY_DIRS in scripts/lib.sh"
	[ -f "$SRC/$f" ] || bad+="  $f: missing (the series adds $k)"$'\n'
done < "$tmp/added"
if [ -n "$bad" ]; then
	printf '%s' "$bad" >&2
	die "the overlay and patches/ disagree: the patches are the source, the overlay their copy" \
	    "make the change in $TREE (git commit --fixup, git rebase -i --autosquash base) and run 'make export'; or 'git checkout' the overlay files"
fi

if [ "$check_only" = 1 ]; then
	note "the series applies: $n patches on Linux $base_ver"
	exit 0
fi

# 4. Move the work tree to the new commit: git rewrites only the files
#    that differ, so their mtimes alone change.
unset GIT_INDEX_FILE
git_ checkout -q -f -B series "$parent" || die "cannot check out the assembled tree" "make assemble FORCE=1"
git_ update-ref refs/pftag/assembled "$parent"
echo "$inputs" > "$TREE/.git/pftag-inputs"
note "assembled $TREE: Linux $base_ver + $n patches"
