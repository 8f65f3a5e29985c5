#!/usr/bin/env bash
# series.sh [-r REV] [OUT]: write the series of $TREE (base..HEAD, or
# base..REV) as a numbered, `git am`-able patch series with a cover letter
# into OUT (default build/series): the patches of patches/, numbered for
# mailing, with the base commit named.
#
# The cover letter's subject and text come from patches/cover-letter.txt
# (first line the subject, then the text; lines starting with # are
# dropped). SUBJECT_PREFIX=... replaces "PATCH" (e.g. "PATCH v2", "RFC").
STEP=series
. "$(dirname "$0")/lib.sh"

rev=HEAD
if [ "${1:-}" = -r ]; then
	rev=${2:?usage: series.sh [-r REV] [OUT]}
	shift 2
fi
out=${1:-$BUILD/series}
cover=${COVER:-$TOP/patches/cover-letter.txt}
prefix=${SUBJECT_PREFIX:-PATCH}
[ -d "$TREE/.git" ] || [ -f "$TREE/.git" ] || die "$TREE is not assembled" "run 'make assemble'"
[ -f "$cover" ] || die "the cover letter template $cover is missing" "restore it from git"
git_() { git -C "$TREE" -c core.abbrev=12 -c diff.renames=true -c diff.algorithm=myers \
	-c diff.noprefix=false -c diff.mnemonicPrefix=false -c format.signature= "$@"; }

[ "$rev" != HEAD ] || [ -z "$(git_ status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted edits" "commit them (see 'Editing the series' in README.md) and run make series again"
base=$(git_ rev-parse -q --verify 'base^{commit}') || die "$TREE has no tag 'base'" "run 'make assemble FORCE=1'"
head=$(git_ rev-parse -q --verify "$rev^{commit}") || die "$rev is no commit of $TREE" "name a commit of base..HEAD"
git_ merge-base --is-ancestor "$base" "$head" || die "$rev is not on top of base in $TREE" "name a commit of base..HEAD"
[ -z "$(git_ rev-list --merges "base..$head")" ] ||
	die "base..$rev in $TREE has merge commits" "make the history linear (git rebase base)"
n=$(git_ rev-list --count "base..$head")
[ "$n" -gt 0 ] || die "$TREE has no commit on top of base" "run 'make assemble'"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The patches, and the cover letter from its template.
rm -rf "$out"
mkdir -p "$out"
git_ format-patch -q --cover-letter --numbered --subject-prefix="$prefix" --base="$base" \
	--zero-commit --no-signature -o "$out" "base..$head"
letter=$(find "$out" -name '0000-*.patch')
[ -n "$letter" ] || die "git format-patch wrote no cover letter" "check $out"
ver=$(tree_version "$TREE")
sed -e '/^#/d' -e "s/@VERSION@/$ver/g" "$cover" > "$tmp/cover"
subj=$(sed -n '1{/^$/q;p}' "$tmp/cover")
[ -n "$subj" ] || die "$cover has no subject (its first line that is not a comment)" "write one"
sed '1d' "$tmp/cover" | sed '/./,$!d' > "$tmp/blurb"
# Its date is the last patch's, so the same series gives the same files.
awk -v subj="$subj" -v blurb="$tmp/blurb" -v date="$(git_ show -s --format=%aD "$head")" '
	!d && /^Date: / { print "Date: " date; d = 1; next }
	!s && sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) { s = 1 }
	/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) print l; b = 1; next }
	{ print }
	END { if (!s || !b) exit 1 }
' "$letter" > "$tmp/letter" || die "the cover letter of git format-patch has no subject or blurb placeholder" \
	"check the git version (2.39 works)"
cp "$tmp/letter" "$letter"
rm -f "$out"/*.orig
note "wrote $n patches and a cover letter to ${out#"$TOP"/} (Linux $ver, base-commit $(git_ rev-parse --short=12 base))"
