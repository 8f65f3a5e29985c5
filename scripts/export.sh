#!/usr/bin/env bash
# export.sh [DIR]: write the series of $TREE (base..HEAD) back into the
# project: each commit becomes a complete patch in DIR/patches/ (git
# format-patch; a new file comes with the commit that adds it), and every
# file the series adds is also copied, as the last commit leaves it, to
# its kernel path under DIR (the overlay: mm/, include/, the selftests),
# for reading. DIR defaults to the project top. patches/series keeps the
# comment lines that stood before each patch.
STEP=export
. "$(dirname "$0")/lib.sh"

out=${1:-$TOP}
[ -d "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"
git_() { git -C "$TREE" -c core.abbrev=12 -c diff.renames=true -c diff.algorithm=myers \
	-c diff.noprefix=false -c diff.mnemonicPrefix=false -c format.signature= "$@"; }

[ -z "$(git_ status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted edits" "commit them (git commit or git commit --fixup, then git rebase -i base) and export again"

# The project must not have moved on since build/linux was assembled (or
# last exported): exporting would overwrite those changes with an older
# state, and delete overlay files the tree does not have.
if [ "$out" = "$TOP" ] &&
   [ "$(series_inputs "$TOP/patches" "$TOP" "$(cat "$TREE/.git/pftag-tarball")")" != \
     "$(cat "$TREE/.git/pftag-inputs" 2> /dev/null)" ]; then
	die "patches/ or the overlay changed since $TREE was assembled; exporting would undo that" \
	    "export to a folder (scripts/export.sh DIR) and merge by hand, or rebase your commits in $TREE onto a fresh 'make assemble'"
fi

mapfile -t added < <(git_ diff --name-only --diff-filter=A base HEAD)
for f in "${added[@]}"; do
	project_path "$f" > /dev/null || die "the series adds $f, outside the overlay directories ($OVERLAY_DIRS)" \
		"put new kernel files under one of them, or add the directory to OVERLAY_DIRS in scripts/lib.sh"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/patches"
git_ format-patch -q --zero-commit --no-signature -N -o "$tmp/patches" base..HEAD

# The series file: every patch keeps the comment lines that stood before
# it (the group headings); a new first patch inherits the file's head.
old="$TOP/patches/series"
[ -f "$old" ] || : > "$tmp/old-series"
[ ! -f "$old" ] || cp "$old" "$tmp/old-series"
(cd "$tmp/patches" && find . -name '*.patch' | sed 's|^\./||' | LC_ALL=C sort) |
awk '
	FNR == NR {
		if ($0 ~ /^[[:space:]]*(#|$)/) { block = block $0 "\n"; next }
		name = $0; sub(/[[:space:]]*#.*/, "", name)
		if (first == "") first = name
		blocks[name] = block; block = ""
		next
	}
	{
		if (FNR == 1 && first == "") { printf "%s", block; block = "" }
		else if ($0 in blocks) printf "%s", blocks[$0]
		else if (FNR == 1) printf "%s", blocks[first]
		print
	}
	END { printf "%s", block }
' "$tmp/old-series" - > "$tmp/patches/series"

if [ "$out" = "$TOP" ]; then
	rm -f "$TOP"/patches/*.patch
else
	mkdir -p "$out/patches"
fi
cp "$tmp"/patches/* "$out/patches/"
# The cover letter of `make series` is no commit: it stays as it is.
if [ "$out" != "$TOP" ] && [ -f "$TOP/patches/cover-letter.txt" ]; then
	cp "$TOP/patches/cover-letter.txt" "$out/patches/"
fi
for d in $(overlay_dirs); do
	[ "$out" != "$TOP" ] || rm -rf "${TOP:?}/$d"
done
for f in "${added[@]}"; do
	p=$(project_path "$f")
	mkdir -p "$out/$(dirname "$p")"
	git_ show "HEAD:$f" > "$out/$p"
	[ "$(git_ ls-tree HEAD -- "$f" | cut -c1-6)" != 100755 ] || chmod +x "$out/$p"
done
n=$(series_patches "$tmp/patches/series" | wc -l)
note "exported $n patches and ${#added[@]} new files to $out"
if [ "$out" = "$TOP" ]; then
	# build/linux is what the project now holds: the next assembly has
	# nothing to do until patches/ or the overlay change.
	git_ update-ref refs/pftag/assembled HEAD
	series_inputs "$TOP/patches" "$TOP" "$(cat "$TREE/.git/pftag-tarball")" > "$TREE/.git/pftag-inputs"
fi
