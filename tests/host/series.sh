#!/usr/bin/env bash
# The series is complete and reviewable. patches/ alone, applied with
# `git am` in the order of patches/series on the pristine base, gives the
# assembled tree file for file; so does `make series` (numbered, with a
# cover letter); every patch is signed off; no patch refers to a new file
# (an object in a Makefile, an #include, a selftests TARGETS entry, a
# path) that only a later patch adds; the cover letter is filled in and
# says nothing of how the series is made.
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

# One patch per commit of build/linux, in order.
want=$(git_ log --reverse --format=%s "base..$head")
got=$(for p in "${patches[@]}"; do
	git mailinfo -k /dev/null /dev/null < "$out_dir/$p" | sed -n 's/^Subject: //p' |
		sed -E 's/^\[PATCH[^]]*\] *//'
done)
eq "one patch per commit of build/linux, in order" "$want" "$got"
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

# 3b. patches/ alone: git am of patches/series on the pristine base gives
#     the assembled tree (what a maintainer applies from the repository).
if [ -z "${SERIES_REV:-}" ] && [ -z "${SERIES_DIR:-}" ]; then
	am2=$scratch/linux-patches
	mapfile -t own < <(series_patches "$TOP/patches/series")
	if out=$(git clone -q --shared --no-checkout "$tree" "$am2" 2>&1 &&
		 git -C "$am2" -c advice.detachedHead=false checkout -q "$base" 2>&1 &&
		 git -C "$am2" am -q "${own[@]/#/$TOP/patches/}" 2>&1); then
		ok "git am applies patches/ alone (${#own[@]} patches) on the pristine base"
	else
		fail "git am applies patches/ alone (${#own[@]} patches) on the pristine base" "$out"
		git -C "$am2" am --abort > /dev/null 2>&1
	fi
	if [ "$(git -C "$am2" rev-parse 'HEAD^{tree}' 2> /dev/null)" = "$(git_ rev-parse "$head^{tree}")" ]; then
		ok "patches/ applied is the assembled tree, file for file"
	else
		fail "patches/ applied is the assembled tree, file for file" \
			"$(git -C "$am2" diff --name-status HEAD "$head" 2>&1 | head -40)"
	fi
	rm -rf "$am2"
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
