#!/usr/bin/env bash
# make bench: generate a 100,000-line /proc/allocinfo (with 5% duplicate
# keys and a module every 20 lines), then time allocinfo on it: read,
# parse, sum duplicates, sort and print the top 10. Prints the best and
# the median of RUNS runs, and the peak memory when GNU time is there.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
B=$HERE/../build
BIN=$B/allocinfo
LINES=${LINES:-100000}
RUNS=${RUNS:-15}
f=$B/bench-$LINES.txt
awk -v n="$LINES" 'BEGIN {
	srand(42)
	print "allocinfo - version: 1.0"
	print "#     <size>  <calls> <tag info>"
	for (i = 0; i < n; i++) {
		k = (i % 20 == 19) ? i - 1 : i	# some keys twice: inlined helpers
		calls = int(rand() * 5000)
		mod = (k % 20 == 3) ? " [mod" (k % 97) "]" : ""
		printf "%12d %8d drivers/sub%d/dir%d/file%d.c:%d%s func:function_%d \n", \
			calls * 64, calls, k % 31, k % 211, k % 2003, k, mod, k
	}
}' > "$f"
echo "input: $f ($(wc -l < "$f") lines, $(du -k "$f" | cut -f1) KiB)"

# wall time and CPU time (user + system) of RUNS runs: best and median
run() {
	local i out=$B/bench.times
	: > "$out"
	for i in $(seq "$RUNS"); do
		TIMEFORMAT='%R %U %S'
		{ time "$BIN" "$@" -f "$f" > /dev/null; } 2>> "$out"
	done
	awk -v what="$(basename "$BIN") $*" '{ w[NR] = $1 * 1000; c[NR] = ($2 + $3) * 1000 }
	function sort(a, n,    i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
	END { n = NR; sort(w, n); sort(c, n); m = int((n + 1) / 2)
		printf "%-36s wall best %5.0f ms, median %5.0f ms; cpu best %5.0f ms, median %5.0f ms\n", what, w[1], w[m], c[1], c[m] }' "$out"
}
run top -n 10
run top -n 10 --sort name
run tree --depth 3
run export --format=prometheus
BIN=$B/allocinfo.static run top -n 10
echo "(bash's time has 1 ms resolution; the machine's load: $(cut -d' ' -f1-3 /proc/loadavg))"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f "peak memory (top -n 10): %M KiB" "$BIN" top -n 10 -f "$f" > /dev/null
fi
