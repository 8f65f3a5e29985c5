#!/usr/bin/env bash
# series.sh [-r REV] [OUT]: write the series of $TREE (base..HEAD, or
# base..REV) as a complete, numbered, `git am`-able patch series with a
# cover letter into OUT (default build/series).
#
# patches/ holds only edits of existing files; the new files (the
# overlay) are carried here, each in the first patch that refers to it:
#
#   - its path (a MAINTAINERS F: line, a Kconfig source line, a document),
#     or the path of the new directory it is in;
#   - its object or program in the Makefile or Kbuild of its directory
#     (obj-... += NAME.o, TEST_GEN_PROGS := NAME);
#   - an #include of it (<linux/NAME.h> for include/linux/NAME.h, or
#     "NAME.h" from its own directory);
#   - a toctree entry of its directory (Documentation);
#   - for a kselftest, its directory in the TARGETS of
#     tools/testing/selftests/Makefile (the whole directory comes along).
#
# A reference made by a new file counts once that file is in: a new
# header included only by a new .c file comes with that .c file. A new
# file no patch refers to is an error. The patches are made on commits
# of their own in $TREE's object store: no branch and no work tree change.
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
mapfile -t commits < <(git_ rev-list --reverse "base..$head")
[ ${#commits[@]} -gt 0 ] || die "$TREE has no commit on top of base" "run 'make assemble'"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_INDEX_FILE="$tmp/index"

# The new files of the series, and the directories that are new with them.
git_ diff --name-only --diff-filter=A base "$head" > "$tmp/new"
: > "$tmp/newdirs"
while read -r f; do
	d=$(dirname "$f")
	while [ "$d" != . ] && ! git_ cat-file -e "base:$d" 2> /dev/null; do
		echo "$d"
		d=$(dirname "$d")
	done
done < "$tmp/new" | LC_ALL=C sort -u > "$tmp/newdirs"
cp "$tmp/new" "$tmp/unplaced"
: > "$tmp/placed"

# added_lines TREE1 TREE2: "PATH<TAB>LINE" for every line TREE2 adds.
added_lines() {
	git_ diff -U0 --no-color --no-ext-diff --no-renames "$1" "$2" | awk '
		/^diff --git / { hdr = 1; next }
		hdr && /^\+\+\+ / { path = substr($0, 7); next }
		/^@@/ { hdr = 0; next }
		!hdr && /^\+/ { print path "\t" substr($0, 2) }'
}

# referenced LINES: the unplaced new files that LINES (from added_lines)
# refer to, by the rules at the top.
referenced() {
	awk -F '\t' -v newdirs="$tmp/newdirs" '
		function q(s) { gsub(/[][\\.^$*+?(){}|\/]/, "\\\\&", s); return s }
		# the word W, optionally followed by .o, not part of a longer name
		function word(line, w) {
			return line ~ ("(^|[^A-Za-z0-9_.-])" q(w) "(\\.o)?([^A-Za-z0-9_.-]|$)")
		}
		function path_in(line, p) {
			return line ~ ("(^|[^A-Za-z0-9_./-])" q(p) "(/|[^A-Za-z0-9_.-]|$)")
		}
		FILENAME == newdirs { isnewdir[$0] = 1; next }
		FILENAME == ARGV[2] { cand[++n] = $0; next }
		{
			lpath = $1; line = substr($0, length($1) + 2)
			ldir = lpath; sub(/\/[^\/]*$/, "", ldir); if (ldir == lpath) ldir = "."
			lbase = lpath; sub(/.*\//, "", lbase)
			for (i = 1; i <= n; i++) {
				p = cand[i]
				if (p in found || p == lpath) continue
				dir = p; sub(/\/[^\/]*$/, "", dir); if (dir == p) dir = "."
				base = p; sub(/.*\//, "", base)
				stem = base; sub(/\.[^.]*$/, "", stem)
				hit = path_in(line, p)
				# a new directory it is in, named by its path
				for (d = dir; !hit && (d in isnewdir); sub(/\/?[^\/]*$/, "", d))
					hit = path_in(line, d)
				# its object or program in its directory s Makefile
				if (!hit && ldir == dir && (lbase == "Makefile" || lbase == "Kbuild") &&
				    base != "Makefile" && base != "Kbuild")
					hit = word(line, stem)
				# an #include of it
				if (!hit && base ~ /\.h$/) {
					rel = p
					if (sub(/^(arch\/[^\/]*\/)?include\//, "", rel) &&
					    line ~ ("^[ \t]*#[ \t]*include[ \t]*<" q(rel) ">"))
						hit = 1
					if (ldir == dir && line ~ ("^[ \t]*#[ \t]*include[ \t]*\"" q(base) "\""))
						hit = 1
				}
				# a toctree entry of its directory
				if (!hit && base ~ /\.rst$/ && ldir == dir && lbase ~ /\.rst$/ &&
				    line ~ ("^[ \t]+" q(stem) "(\\.rst)?[ \t]*$"))
					hit = 1
				# a kselftest directory in the selftests TARGETS
				if (!hit && lpath == "tools/testing/selftests/Makefile" && line ~ /TARGETS/ &&
				    p ~ /^tools\/testing\/selftests\/[^\/]+\//) {
					t = p; sub(/^tools\/testing\/selftests\//, "", t); sub(/\/.*/, "", t)
					hit = word(line, t)
				}
				if (hit) found[p] = 1
			}
		}
		END { for (p in found) print p }
	' "$tmp/newdirs" "$tmp/unplaced" "$1" | LC_ALL=C sort
}

# place FILE...: add new files to the private index with their content at HEAD.
place() {
	local f mode blob
	for f in "$@"; do
		read -r mode _ blob _ < <(git_ ls-tree "$head" -- "$f")
		git_ update-index --add --cacheinfo "$mode,$blob,$f"
	done
}

# Committer of the new commits and of the cover letter: the series' last author.
GIT_COMMITTER_NAME=$(git_ show -s --format=%an "$head")
GIT_COMMITTER_EMAIL=$(git_ show -s --format=%ae "$head")
GIT_COMMITTER_DATE=$(git_ show -s --format=%ad --date=iso-strict "$head")
export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE

parent=$base
prev=$(git_ rev-parse "base^{tree}")
n=0
for c in "${commits[@]}"; do
	subject=$(git_ show -s --format=%s "$c")
	# The commit's tree without the new files not placed yet.
	git_ read-tree "$c"
	mapfile -t drop < "$tmp/unplaced"
	[ ${#drop[@]} -eq 0 ] || git_ update-index --force-remove -- "${drop[@]}"
	mapfile -t keep < "$tmp/placed"
	[ ${#keep[@]} -eq 0 ] || place "${keep[@]}"
	tree=$(git_ write-tree)
	# A commit that changes only new files (the overlay) is no patch.
	[ "$tree" != "$prev" ] || continue
	from=$prev
	while :; do
		added_lines "$from" "$tree" > "$tmp/lines"
		mapfile -t now < <(referenced "$tmp/lines")
		[ ${#now[@]} -gt 0 ] || break
		place "${now[@]}"
		printf '%s\n' "${now[@]}" >> "$tmp/placed"
		grep -vxF -f <(printf '%s\n' "${now[@]}") "$tmp/unplaced" > "$tmp/rest" || true
		mv "$tmp/rest" "$tmp/unplaced"
		for f in "${now[@]}"; do note "$f comes with: $subject"; done
		from=$tree
		tree=$(git_ write-tree)
	done
	git_ show -s --format=%B "$c" > "$tmp/msg"
	parent=$(GIT_AUTHOR_NAME=$(git_ show -s --format=%an "$c") \
		GIT_AUTHOR_EMAIL=$(git_ show -s --format=%ae "$c") \
		GIT_AUTHOR_DATE=$(git_ show -s --format=%ad --date=iso-strict "$c") \
		git_ commit-tree "$tree" -p "$parent" -F "$tmp/msg")
	prev=$tree
	n=$((n + 1))
done
unset GIT_INDEX_FILE

if [ -s "$tmp/unplaced" ]; then
	die "no patch of the series refers to the new file(s) $(paste -sd ' ' "$tmp/unplaced"), so no patch would carry them" \
	    "refer to each from the patch that needs it: its object in its directory's Makefile, an #include, its path in MAINTAINERS, or its directory in tools/testing/selftests/Makefile TARGETS"
fi
[ "$(git_ rev-parse "$parent^{tree}")" = "$(git_ rev-parse "$head^{tree}")" ] ||
	die "the series does not add up to $rev of $TREE" "report this: scripts/series.sh has a bug"
# The commits, for check-bisect.sh (which builds and boots each).
[ "$rev" != HEAD ] || git_ update-ref refs/pftag/series "$parent"

# The patches, and the cover letter from its template.
rm -rf "$out"
mkdir -p "$out"
git_ format-patch -q --cover-letter --numbered --subject-prefix="$prefix" --base="$base" \
	--zero-commit --no-signature -o "$out" "base..$parent"
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
