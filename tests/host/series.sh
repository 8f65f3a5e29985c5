#!/usr/bin/env bash
# make series: the generated series is complete and reviewable. Applied
# with `git am` on the pristine base, it gives the assembled tree file for
# file; every patch is signed off; no patch refers to a new file (an
# object in a Makefile, an #include, a selftests TARGETS entry, a path)
# that only a later patch adds; the cover letter is filled in and says
# nothing of how the series is made. A new file no patch refers to stops
# `make series`, naming the file.
#
# SERIES_REV=COMMIT checks the series of base..COMMIT of build/linux
# instead of HEAD; SERIES_DIR=DIR checks the patches in DIR (made from
# HEAD or SERIES_REV) instead of making them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/lib.sh" 2> /dev/null
set +e
tree=$TREE
tmp=$(mktemp -d)
# The scratch clone holds a whole kernel tree: on tmpfs when there is room.
scratch=
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
   [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 4000000 ]; then
	scratch=$(mktemp -d -p /dev/shm series-test.XXXXXX)
else
	mkdir -p "$BUILD/test"
	scratch=$(mktemp -d -p "$BUILD/test" series-test.XXXXXX)
fi
trap 'rm -rf "$tmp" "$scratch"' EXIT
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.org
git_() { git -C "$tree" "$@"; }

if ! out=$("$TOP/scripts/assemble.sh" 2>&1); then
	fail "the tree assembles" "$out"
	done_testing
fi
rev=${SERIES_REV:-HEAD}
head=$(git_ rev-parse "$rev^{commit}")
base=$(git_ rev-parse "base^{commit}")

# fixture PARENT SUBJECT PATH FILE [PATH FILE...]: a commit on PARENT
# that writes FILE at PATH, made in build/linux's object store (no
# branch, no work tree); prints its id.
fixture() {
	local parent=$1 subject=$2 t blob
	shift 2
	(
		export GIT_INDEX_FILE="$tmp/fixture.index"
		git_ read-tree "$parent"
		while [ $# -gt 0 ]; do
			blob=$(git_ hash-object -w "$2")
			git_ update-index --add --cacheinfo "100644,$blob,$1"
			shift 2
		done
		t=$(git_ write-tree)
		GIT_AUTHOR_NAME=Test GIT_AUTHOR_EMAIL=test@example.org GIT_AUTHOR_DATE=2024-11-17T00:00:00Z \
			git_ commit-tree "$t" -p "$parent" -m "$subject" -m "Signed-off-by: Test <test@example.org>"
	)
}

# 0. The rules on a series of one patch on the base: a new file no patch
#    refers to is named; a new header included only by a new file comes
#    with that file.
if [ -z "${SERIES_DIR:-}" ]; then
	echo '/* referred to by no patch */' > "$tmp/orphan.c"
	git_ show "$base:mm/Makefile" > "$tmp/Makefile"
	echo '# an edit, so that the commit is a patch' >> "$tmp/Makefile"
	c=$(fixture "$base" "mm: a file nobody builds" mm/Makefile "$tmp/Makefile" mm/pftag_orphan.c "$tmp/orphan.c")
	check_fails "a new file no patch refers to stops make series, naming it" \
		'mm/pftag_orphan\.c' "$TOP/scripts/series.sh" -r "$c" "$tmp/orphan"

	printf '#include "pftag_fixture.h"\n' > "$tmp/a.c"
	echo '/* included by pftag_fixture.c only */' > "$tmp/a.h"
	git_ show "$base:mm/Makefile" > "$tmp/Makefile"
	echo 'obj-y += pftag_fixture.o' >> "$tmp/Makefile"
	c=$(fixture "$base" "mm: a file and its header" \
		mm/pftag_fixture.c "$tmp/a.c" mm/pftag_fixture.h "$tmp/a.h" mm/Makefile "$tmp/Makefile")
	if out=$("$TOP/scripts/series.sh" -r "$c" "$tmp/withheader" 2>&1); then
		last=$(ls "$tmp/withheader" | grep -E '\.patch$' | LC_ALL=C sort | tail -n 1)
		eq "a new .c file and the new header it includes come with the patch that builds it" \
			"mm/Makefile mm/pftag_fixture.c mm/pftag_fixture.h" \
			"$(grep -oE '^diff --git a/[^ ]+' "$tmp/withheader/$last" | cut -c14- | tr '\n' ' ' | sed 's/ $//')"
	else
		fail "a new .c file and the new header it includes come with the patch that builds it" "$out"
	fi
fi

# 1. The series of build/linux.
out_dir=${SERIES_DIR:-$tmp/series}
if [ -z "${SERIES_DIR:-}" ]; then
	if ! out=$("$TOP/scripts/series.sh" -r "$head" "$out_dir" 2>&1); then
		fail "make series writes the series" "$out"
		done_testing
	fi
	ok "make series writes the series"
fi
mapfile -t patches < <(cd "$out_dir" && ls | grep -E '^[0-9]{4}-.*\.patch$' | grep -v '^0000-' | LC_ALL=C sort)
letter=$(cd "$out_dir" && ls | grep -E '^0000-.*\.patch$')
n=${#patches[@]}

# The patches are the commits of build/linux that edit existing files
# (a commit that only adds new files carries no patch), in order.
mapfile -t new < <(git_ diff --name-only --diff-filter=A base "$head")
excl=()
for f in "${new[@]}"; do excl+=(":(exclude)$f"); done
want=$(git_ rev-list --reverse "base..$head" | while read -r c; do
	git_ diff --quiet "$c^" "$c" -- . "${excl[@]}" || git_ show -s --format=%s "$c"
done)
got=$(for p in "${patches[@]}"; do
	git mailinfo -k /dev/null /dev/null < "$out_dir/$p" | sed -n 's/^Subject: //p' |
		sed -E 's/^\[PATCH[^]]*\] *//'
done)
eq "one patch per commit of build/linux that edits existing files, in order" "$want" "$got"
eq "the files are numbered 0001 to $n" "$(seq -f '%04g' 1 "$n")" "$(printf '%s\n' "${patches[@]}" | cut -c1-4)"
numbered=$(for p in "${patches[@]}"; do
	grep -m1 '^Subject: ' "$out_dir/$p" | sed -nE 's/^Subject: \[PATCH[^]]* 0*([0-9]+)\/([0-9]+)\].*/\1\/\2/p'
done)
eq "the subjects are numbered 1/$n to $n/$n" "$(seq 1 "$n" | sed "s|\$|/$n|")" "$numbered"

nosob=$(for p in "${patches[@]}"; do
	git mailinfo -k "$tmp/msg" /dev/null < "$out_dir/$p" > /dev/null
	grep -q '^Signed-off-by: ' "$tmp/msg" || echo "$p"
done)
eq "every patch has a Signed-off-by line" "" "$nosob"

# 2. The cover letter.
if [ -z "$letter" ]; then
	fail "there is a cover letter (0000-*.patch)"
else
	l=$out_dir/$letter
	check "the cover letter's subject is [PATCH 0/$n] and filled in" \
		grep -qE "^Subject: \[PATCH[^]]* 0*0/0*$n\] [^*]" "$l"
	check "the cover letter has its text" bash -c "! grep -q 'BLURB HERE\|SUBJECT HERE' '$l' && grep -q 'page->flags' '$l'"
	eq "the cover letter names the base commit" "base-commit: $base" "$(grep '^base-commit: ' "$l")"
fi
# Nothing in the messages says how the series is made.
how=$( { [ -z "$letter" ] || cat "$out_dir/$letter"
	for p in "${patches[@]}"; do
		git mailinfo -k "$tmp/msg" /dev/null < "$out_dir/$p" > /dev/null && cat "$tmp/msg"
	done; } | grep -niE 'overlay|make (series|export|assemble)|build/|patches/|bench/|cover-letter|assembly|@VERSION@|DRAFT NUMBERS')
eq "no message mentions how the series is made" "" "$how"

# 3. git am on the pristine base gives the assembled tree.
am=$scratch/linux
if ! out=$(git clone -q --shared --no-checkout "$tree" "$am" 2>&1 &&
	   git -C "$am" -c advice.detachedHead=false checkout -q "$base" 2>&1); then
	fail "a clone of the base to apply the series to" "$out"
	done_testing
fi
if out=$(cd "$out_dir" && git -C "$am" am -q "${patches[@]/#/$PWD/}" 2>&1); then
	ok "git am applies the $n patches on the pristine base"
else
	fail "git am applies the $n patches on the pristine base" "$out"
	git -C "$am" am --abort > /dev/null 2>&1
fi
applied=$(git -C "$am" rev-list --count "$base..HEAD")
eq "git am made one commit per patch" "$n" "$applied"
if [ "$(git -C "$am" rev-parse 'HEAD^{tree}')" = "$(git_ rev-parse "$head^{tree}")" ]; then
	ok "the applied series is the assembled tree, file for file"
else
	fail "the applied series is the assembled tree, file for file" \
		"$(git -C "$am" diff --name-status HEAD "$head" | head -40)"
fi

# 4. No patch refers to a new file that a later patch adds. For every
#    applied commit, the lines it adds are searched for references (words
#    of a Makefile or Kbuild line as objects or programs of its
#    directory, #include targets, TARGETS of the selftests, anything that
#    looks like a path); a reference to a new file of the series (or a
#    new directory) that this commit does not have yet is an error.
git -C "$am" diff --name-only --diff-filter=A "$base" HEAD | LC_ALL=C sort > "$tmp/new"
early=
for c in $(git -C "$am" rev-list --reverse "$base..HEAD"); do
	git -C "$am" diff -U0 --no-color --no-renames "$c^" "$c" | awk '
		/^diff --git / { hdr = 1; next }
		hdr && /^\+\+\+ / { path = substr($0, 7); next }
		/^@@/ { hdr = 0; next }
		hdr || !/^\+/ { next }
		{
			line = substr($0, 2)
			dir = path; if (!sub(/\/[^\/]*$/, "", dir)) dir = ""
			pre = dir == "" ? "" : dir "/"
			base = path; sub(/.*\//, "", base)
			if (base == "Makefile" || base == "Kbuild") {
				n = split(line, w, /[^A-Za-z0-9_.\/-]+/)
				for (i = 1; i <= n; i++) {
					if (w[i] == "") continue
					o = w[i]; sub(/\.o$/, "", o); sub(/\/$/, "", o)
					print pre o ".c"; print pre o ".S"; print pre o "/"
				}
			}
			if (match(line, /^[ \t]*#[ \t]*include[ \t]*[<"][^>"]*[>"]/)) {
				inc = substr(line, RSTART, RLENGTH); sub(/.*[<"]/, "", inc); sub(/[>"]$/, "", inc)
				print "include/" inc; print "arch/x86/include/" inc; print pre inc
			}
			n = split(line, w, /[^A-Za-z0-9_.\/-]+/)
			for (i = 1; i <= n; i++) if (w[i] ~ /\//) { p = w[i]; print p; sub(/\/$/, "", p); print p "/" }
		}' | LC_ALL=C sort -u > "$tmp/refs"
	# References to a file of the series, and to a new directory (one
	# the base does not have) that holds some.
	{
		LC_ALL=C comm -12 "$tmp/refs" "$tmp/new"
		awk 'FILENAME == ARGV[1] { if (/\/$/) dirs[$0] = 1; next }
		     { for (d in dirs) if (index($0, d) == 1) print d }' "$tmp/refs" "$tmp/new" |
		sort -u | while read -r d; do
			git -C "$am" cat-file -e "$base:${d%/}" 2> /dev/null ||
				awk -v d="$d" 'index($0, d) == 1' "$tmp/new"
		done
	} | LC_ALL=C sort -u > "$tmp/wanted"
	while read -r f; do
		if ! git -C "$am" cat-file -e "$c:$f" 2> /dev/null; then
			early+="$(git -C "$am" show -s --format=%s "$c"): refers to $f, which a later patch adds"$'\n'
		fi
	done < "$tmp/wanted"
done
eq "no patch refers to a new file before the patch that adds it" "" "${early%$'\n'}"

done_testing
