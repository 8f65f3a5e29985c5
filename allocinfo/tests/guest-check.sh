#!/bin/sh
# Guest check of allocinfo against the live /proc/allocinfo (POSIX sh,
# busybox). /proc/allocinfo changes between two reads, so the exact
# checks run on one snapshot copied to /tmp and read with -f; the live
# read only gets a sanity check. TAP output, exit 1 on any failure.
#
# usage: guest-check.sh [ALLOCINFO_BINARY]
#   ALLOCINFO_PROC=FILE reads FILE instead of /proc/allocinfo (host tests)
AI=${1:-allocinfo}
PROC=${ALLOCINFO_PROC:-/proc/allocinfo}
T=${TMPDIR:-/tmp}/allocinfo-check.$$
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "$2" ] && printf '%s\n' "$2" | head -20 | sed 's/^/#   /'
}
check() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1" "want: $2
got:  $3"; fi; }

# the live reads use the tool's default input unless told otherwise
live=""
[ -n "${ALLOCINFO_PROC:-}" ] && live="-f $PROC"
mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
if [ ! -r "$PROC" ]; then
	nok "$PROC is readable"
	echo "1..$n"
	exit 1
fi
cat "$PROC" > "$T/snap"

# the tag lines of the snapshot, summed by "file:line [module] func:name",
# as awk reads them: fields 3.. joined by one space
awk '/^allocinfo - version:/ || /^#/ { next } NF >= 4 {
	sub(/\r$/, "")
	k = $3
	for (i = 4; i <= NF; i++)
		k = k " " ($i ~ /^module:/ ? "[" substr($i, 8) "]" : $i)
	b[k] += $1; c[k] += $2
} END { for (k in b) printf "%d %d %s\n", b[k], c[k], k }' "$T/snap" | sort > "$T/want"

# 1. top --bytes of the snapshot: every tag, same sums, in size order
"$AI" top -f "$T/snap" --bytes -H -n 0 > "$T/top" 2> "$T/err"
check "allocinfo top -f snapshot exits 0" 0 $?
check "no messages about the snapshot" "" "$(cat "$T/err")"
sed 's/  ([0-9]* lines)//; s/  NEGATIVE//' "$T/top" | awk '{ k = $3; for (i = 4; i <= NF; i++) k = k " " $i; printf "%d %d %s\n", $1, $2, k }' | sort > "$T/got"
if cmp -s "$T/want" "$T/got"; then
	ok "top lists every tag of the snapshot with awk's sums ($(wc -l < "$T/want") tags)"
else
	nok "top lists every tag of the snapshot with awk's sums" "$(diff "$T/want" "$T/got" | head -10)"
fi
sorted=$(awk '{ print $1 }' "$T/top" | sort -n -r -c 2>&1 && echo sorted)
check "top is in size order" "sorted" "$sorted"
want=$(sort -k1,1nr "$T/want" | head -n 1 | awk '{ print $1 }')
check "the largest tag's size ($want)" "$want" "$(head -n 1 "$T/top" | awk '{ print $1 }')"
want=$(awk '{ s += $1 } END { printf "%d\n", s }' "$T/want")
got=$("$AI" top -f "$T/snap" --bytes -n 1 | awk '/total of/ { print $1 }')
check "top's total is awk's sum ($want bytes)" "$want" "$got"

# 2. export --format=prometheus of the snapshot, every tag (--all)
"$AI" export --format=prometheus --all -f "$T/snap" > "$T/prom"
check "export --format=prometheus exits 0" 0 $?
awk '
# the value of label NAME="..." in s, backslash escapes undone
function label(s, name,    i, c, v) {
	i = index(s, name "=\"")
	if (!i)
		return ""
	s = substr(s, i + length(name) + 2)
	v = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\"")
			break
		if (c == "\\") {
			i++
			c = substr(s, i, 1)
			if (c == "n")
				c = "\n"
		}
		v = v c
	}
	return v
}
/^allocinfo_bytes\{/ {
	m = label($0, "module")
	# the labels in order: file, line, func, module; read past each
	rest = $0
	f = label(rest, "file")
	l = label(rest, "line")
	fn = label(substr(rest, index(rest, ",line=")), "func")
	# built-in code is module="vmlinux", as in allocinfo_module_bytes
	printf "%s:%s %sfunc:%s %s\n", f, l, (m == "vmlinux" ? "" : "[" m "] "), fn, $NF
}' "$T/prom" | sort > "$T/pgot"
awk '{ k = $3; for (i = 4; i <= NF && $i !~ /^func:/; i++) k = k " " $i; printf "%s %s %s\n", k, $i, $1 }' "$T/want" |
	awk '{ b = $NF; $NF = ""; sub(/ $/, ""); print $0, b }' | sort > "$T/pwant"
# lines with 2.0 key:value pairs: the labels leave them out
if cmp -s "$T/pwant" "$T/pgot"; then
	ok "prometheus allocinfo_bytes equals awk's sums for every tag"
else
	nok "prometheus allocinfo_bytes equals awk's sums for every tag" "$(diff "$T/pwant" "$T/pgot" | head -10)"
fi
check "one allocinfo_calls per allocinfo_bytes" "$(grep -c '^allocinfo_bytes{' "$T/prom")" "$(grep -c '^allocinfo_calls{' "$T/prom")"
check "HELP and TYPE for both metrics" 4 "$(grep -c -E '^# (HELP|TYPE) allocinfo_(bytes|calls) ' "$T/prom")"

# 3. the live file: readable, sane, close to the snapshot
"$AI" top -n 5 $live > "$T/live" 2> "$T/lerr"
check "allocinfo top on the live $PROC exits 0" 0 $?
check "no messages about the live file" "" "$(cat "$T/lerr")"
nt=$(wc -l < "$T/want" | tr -d ' ')
[ "$nt" -gt 5 ] && nt=5
check "$nt tags, a header and a total" $((nt + 2)) "$(wc -l < "$T/live" | tr -d ' ')"
lt=$("$AI" top --bytes -n 0 -H $live | wc -l | tr -d ' ')
st=$(wc -l < "$T/want" | tr -d ' ')
# tags only appear (module load) or stay: allow a few for modules
if [ "$lt" -ge $((st - 50)) ] && [ "$lt" -le $((st + 50)) ]; then
	ok "the live file has about as many tags as the snapshot ($lt vs $st)"
else
	nok "the live file has about as many tags as the snapshot" "$lt vs $st"
fi
"$AI" export --format=prometheus --all $live > "$T/lprom"
check "live prometheus export exits 0" 0 $?
check "live export: one series per tag line" "$lt" "$(grep -c '^allocinfo_bytes{' "$T/lprom")"

echo "1..$n"
[ "$failed" -eq 0 ]
