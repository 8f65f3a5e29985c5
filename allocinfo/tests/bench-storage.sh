#!/usr/bin/env bash
# Bytes per snapshot in the database: a series of N captures of 7,000 tags
# (as many as a distribution kernel with modules has), 5 minutes apart,
# in which CHANGE percent of the tags change between two captures (the
# rest stay as they were: most tags hold boot-time allocations, or
# nothing). Prints the database size over N after a checkpoint, and what
# the second half of the series added per snapshot (without the tag
# table and the first snapshot, which every database pays once).
#   tests/bench-storage.sh BINARY [N] [CHANGE...]
set -eu
BIN=${1:?binary}
N=${2:-100}
shift $(( $# >= 2 ? 2 : 1 ))
[ $# -gt 0 ] || set -- 2 10 30 100
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for pct in "$@"; do
	rm -f "$W"/s.db*
	for k in $(seq 0 $((N - 1))); do
		# 7,000 tags: 70% hold nothing (as in the captures of tests/samples);
		# each capture, pct% of all tags move (a tag picked at random)
		awk -v k="$k" -v pct="$pct" 'BEGIN {
			srand(7); print "allocinfo - version: 1.0"; print "#     <size>  <calls> <tag info>"
			for (i = 0; i < 7000; i++) {
				b[i] = (rand() < 0.7) ? 0 : int(exp(rand() * 14)) * 64
				c[i] = b[i] ? int(b[i] / 512) + 1 : 0
			}
			for (j = 1; j <= k; j++) {
				srand(1000 + j)
				for (i = 0; i < 7000; i++)
					if (rand() * 100 < pct) { d = int((rand() - 0.45) * 65536); b[i] = (b[i] + d > 0) ? b[i] + d : 0; c[i] = b[i] ? int(b[i] / 512) + 1 : 0 }
			}
			for (i = 0; i < 7000; i++)
				printf "%12d %8d d%d/sub%d/f%d.c:%d %sfunc:alloc_%d \n", b[i], c[i], i % 47, i % 13, i % 701, 100 + i, (i % 20 ? "" : "[mod" i % 7 "] "), i
		}' > "$W/c.txt"
		"$BIN" record -q -d "$W/s.db" -f "$W/c.txt" --time $((1700000000 + k * 300)) > /dev/null
		if [ $k = $((N / 2 - 1)) ]; then
			sqlite3 "$W/s.db" 'PRAGMA wal_checkpoint(TRUNCATE)' > /dev/null
			half=$(stat -c %s "$W/s.db")
		fi
	done
	sqlite3 "$W/s.db" 'PRAGMA wal_checkpoint(TRUNCATE)' > /dev/null
	size=$(stat -c %s "$W/s.db")
	printf '%3d%% of the tags change: %d snapshots, %d bytes, %d per snapshot; the last %d: %d per snapshot\n' \
		"$pct" "$N" "$size" $((size / N)) $((N - N / 2)) $(((size - half) / (N - N / 2)))
done
