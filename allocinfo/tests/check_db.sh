#!/usr/bin/env bash
# record/report/plot over SQLite: a tag that grows by a fixed step in
# every snapshot must be reported as a leak suspect with the rate derived
# here (step / interval), a tag that shrinks once must not, and the
# database must hold what the captures held. TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. "$HERE/tap.sh"

base=$HERE/samples/linux-6.12-x86_64.txt
db=$W/a.db
# report leaks' defaults: at least 4 snapshots, a line that grew 256 KiB
t0=1700000000 interval=60 step=65536 snaps=6 late_from=2 late_step=102400
leak_file=fs/leaky.c leak_line=77 leak_func=leaky_alloc
# snapshot k: the capture, plus fs/leaky.c growing by $step each time,
# plus mm/slub.c:2474 going up and down (not a leak), plus a tag that
# only exists from snapshot $late_from on and grows by $late_step (a leak
# that started late)
for k in $(seq 0 $((snaps - 1))); do
	awk -v k="$k" -v step="$step" -v lf="$late_from" -v ls="$late_step" '
	NR <= 2 { print; next }
	$3 == "mm/slub.c:2474" { $1 = $1 + (k % 2 ? 8192 : -8192) * k; printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	{ print }
	END {
		printf "%12d %8d fs/leaky.c:77 func:leaky_alloc \n", 4096 + k * step, 1 + k * 3
		if (k >= lf) printf "%12d %8d drivers/late.c:5 [latemod] func:late_alloc \n", ls * (k - lf + 1), k
	}' "$base" > "$W/snap$k.txt"
	"$BIN" record -q -d "$db" -f "$W/snap$k.txt" --time $((t0 + k * interval)) --label "k=$k" ||
		nok "record snapshot $k"
done

# what is in the database, read with SQL, against the captures read with awk
if command -v sqlite3 > /dev/null; then
	check "the database holds $snaps snapshots" "$snaps" "$(sqlite3 "$db" 'SELECT count(*) FROM snapshot')"
	# only what changed: every line of the first capture, then per capture
	# the lines that differ from the previous one (and the tags gone)
	want=$(for k in $(seq 0 $((snaps - 1))); do
		if [ "$k" = 0 ]; then awk 'FNR > 2 { n++ } END { print n }' "$W/snap0.txt"; continue; fi
		awk 'FNR <= 2 { next } { k = $0; sub(/^ *-?[0-9]+ +[0-9]+ /, "", k) }
		     FNR == NR { old[k] = $1 " " $2; next }
		     { if (old[k] != $1 " " $2) n++; delete old[k] }
		     END { for (k in old) n++; print n + 0 }' "$W/snap$((k - 1)).txt" "$W/snap$k.txt"
	done | awk '{ s += $1 } END { print s }')
	check "samples: the first capture's lines, then only the changed ones ($want rows)" "$want" \
		"$(sqlite3 "$db" 'SELECT count(*) FROM sample')"
	want=$(awk 'FNR > 2 { s += $1 } END { printf "%d\n", s }' "$W/snap4.txt")
	check "snapshot 5 total_bytes is the capture's sum" "$want" "$(sqlite3 "$db" 'SELECT total_bytes FROM snapshot WHERE id = 5')"
	check "schema version 2" 2 "$(sqlite3 "$db" 'PRAGMA user_version')"
else
	nok "the sqlite3 command is installed (make deps)"
fi

# every snapshot is read back as it was recorded, from its changes
bad=""
for k in $(seq 0 $((snaps - 1))); do
	[ "$("$BIN" top -q -b -H -n 0 -s name -f "$W/snap$k.txt")" = "$("$BIN" report top -d "$db" --at $((k + 1)) -b -H -n 0 -s name)" ] || bad="$bad $((k + 1))"
done
check "report top --at K is top of capture K, for every K" "" "$bad"

# leaks: the planted tag, at step/interval bytes per second
rate=$(awk -v s="$step" -v i="$interval" 'BEGIN { printf "%+.2f", s / i }')
out=$("$BIN" report leaks --grace 0 -d "$db" -b -H)
line=$(printf '%s\n' "$out" | grep " $leak_file:$leak_line func:$leak_func")
check "leaks: $leak_file:$leak_line is a suspect at $rate bytes/s" "$rate" "$(echo "$line" | awk '{ print $1 }')"
check "leaks: it grew $((step * (snaps - 1))) bytes, on a straight line (FIT 1.00), in $((snaps - 1))/$((snaps - 1)) steps" \
	"+$((step * (snaps - 1))) 4096 $((4096 + step * (snaps - 1))) 1.00 $((snaps - 1))/$((snaps - 1))" \
	"$(echo "$line" | awk '{ print $2, $3, $4, $5, $6 }')"
late=$(awk -v s="$late_step" -v i="$interval" 'BEGIN { printf "%+.2f", s / i }')
check "leaks: the late tag counts from its first snapshot ($late bytes/s)" "$late" \
	"$(printf '%s\n' "$out" | grep 'drivers/late.c:5 \[latemod\] func:late_alloc' | awk '{ print $1 }')"
if printf '%s\n' "$out" | grep -q 'mm/slub.c:2474'; then
	nok "leaks: a tag that went down once is no suspect" "$out"
else
	ok "leaks: a tag that went down once is no suspect"
fi
check "leaks: nothing else is a suspect" 2 "$(printf '%s\n' "$out" | grep -c .)"
out=$("$BIN" report leaks --grace 0 -d "$db" -b -H --min-snapshots $((snaps - late_from + 1)))
check "leaks --min-snapshots $((snaps - late_from + 1)) drops the late tag ($((snaps - late_from)) snapshots)" 1 "$(printf '%s\n' "$out" | grep -c .)"
mid=$(awk -v a="$rate" -v b="$late" 'BEGIN { printf "%.0f", (a + b) / 2 }')
out=$("$BIN" report leaks --grace 0 -d "$db" -b -H --min-rate "$mid")
check "leaks --min-rate $mid keeps the faster one only" "$(awk -v a="$rate" -v b="$late" 'BEGIN { print (a > b) ? "fs/leaky.c:77" : "drivers/late.c:5" }')" \
	"$(printf '%s\n' "$out" | awk '{ print $8 }')"
g1=$((step * (snaps - 1))) g2=$((late_step * (snaps - late_from - 1)))
out=$("$BIN" report leaks --grace 0 -d "$db" -b -H --min-growth $(( (g1 < g2 ? g1 : g2) + 1 )))
check "leaks --min-growth one byte more than the smaller growth ($g1, $g2): the other one" \
	"$([ $g1 -gt $g2 ] && echo fs/leaky.c:77 || echo drivers/late.c:5)" "$(printf '%s\n' "$out" | awk '{ print $8 }')"

# growth: first to last, computed here with awk
want=$(awk -v last="$W/snap$((snaps - 1)).txt" '
	FNR <= 2 { next }
	{ k = $0; sub(/^ *-?[0-9]+ +[0-9]+ /, "", k); sub(/ +$/, "", k) }
	FILENAME != last { a[k] = $1; next }
	{ b[k] = $1 }
	END { for (k in b) if (b[k] - a[k] != 0) print b[k] - a[k], k }' "$W/snap0.txt" "$W/snap$((snaps - 1)).txt" | sort -k1,1nr -k2)
got=$("$BIN" report growth -d "$db" -b -H -n 0 | grep -v '^#' | awk '{ i = ($5 == "new" || $5 == "gone") ? 6 : 5; s = $i; for (j = i + 1; j <= NF; j++) s = s " " $j; print $1 + 0, s }' | sort -k1,1nr -k2)
check "growth: first to last snapshot, every changed tag" "$want" "$got"

# top at a snapshot equals top of the capture
check "report top --at 3 is top of the capture" \
	"$("$BIN" top -q -b -H -n 15 -f "$W/snap2.txt")" "$("$BIN" report top -d "$db" --at 3 -b -H -n 15)"
check "report top --at @T picks the last snapshot at or before T" \
	"$("$BIN" top -q -b -H -n 5 -f "$W/snap3.txt")" \
	"$("$BIN" report top -d "$db" --at @$((t0 + 3 * interval + 59)) -b -H -n 5)"
check "report snapshots lists them" "$snaps" "$("$BIN" report snapshots -d "$db" -H | grep -c 'k=')"

# leaks by regression: a steady grower under jitter is found, noise is not.
# 20 snapshots 120 s apart: fs/jitter.c grows 143 B/s with up to +-30 KiB of
# jitter, fs/noise.c only jitters. The expected rate (least-squares slope)
# and fit (R^2) are computed here with awk; the documented rule: slope > 0,
# R^2 >= 0.8 and a line that grew 256 KiB (and rises in both halves).
jdb=$W/jitter.db jdt=120
for k in $(seq 0 19); do
	awk -v k="$k" -v dt=$jdt 'BEGIN {
		srand(42); for (i = 0; i <= k; i++) { j = int((rand() * 2 - 1) * 30720); z = int((rand() * 2 - 1) * 30720) }
		print "allocinfo - version: 1.0"
		printf "%12d %8d fs/jitter.c:1 func:jitter_alloc \n", 1048576 + 143 * dt * k + j, 100 + k
		printf "%12d %8d fs/noise.c:1 func:noise_alloc \n", 1048576 + z, 100
		printf "%12d %8d fs/steady.c:1 func:steady_alloc \n", 4096, 1
	}' > "$W/j$k.txt"
	"$BIN" record -q -d "$jdb" -f "$W/j$k.txt" --time $((t0 + k * jdt))
done
fit() {	# fit FILE-PATTERN: "slope r2" of bytes over time for tag $1
	for k in $(seq 0 19); do awk -v t=$((k * jdt)) -v tag="$1" '$3 == tag { print t, $1 }' "$W/j$k.txt"; done |
	awk '{ n++; x[n] = $1; y[n] = $2; sx += $1; sy += $2 }
	END { mx = sx / n; my = sy / n
		for (i = 1; i <= n; i++) { sxx += (x[i] - mx) ^ 2; syy += (y[i] - my) ^ 2; sxy += (x[i] - mx) * (y[i] - my) }
		printf "%+.2f %.4f\n", sxy / sxx, syy ? sxy * sxy / (sxx * syy) : 0 }'
}
read -r jslope jr2 <<< "$(fit fs/jitter.c:1)"
read -r nslope nr2 <<< "$(fit fs/noise.c:1)"
awk -v r="$jr2" 'BEGIN { exit !(r >= 0.8) }' && ok "the jittery grower fits a line (R^2 $jr2 >= 0.8)" || nok "the jittery grower fits a line (R^2 $jr2)"
awk -v r="$nr2" -v s="$nslope" 'BEGIN { exit !(r < 0.8 || s <= 0) }' && ok "the noise does not (R^2 $nr2, slope $nslope)" || nok "the noise does not (R^2 $nr2, slope $nslope)"
grew=$(for k in $(seq 1 19); do awk '$3 == "fs/jitter.c:1" { print $1 }' "$W/j$((k - 1)).txt" "$W/j$k.txt" | tr '\n' ' '; echo; done | awk '$2 < $1' | wc -l)
[ "$grew" -gt 0 ] && ok "the jittery grower went down $grew times" || nok "the jittery grower went down at least once"
out=$("$BIN" report leaks --grace 0 -d "$jdb" -b -H)
check "leaks: the jittery grower is a suspect at its least-squares slope ($jslope B/s) and fit ($jr2)" \
	"$jslope $(printf '%.2f' "$jr2")" "$(printf '%s\n' "$out" | awk '$NF == "func:jitter_alloc" { print $1, $5 }')"
check "leaks: neither the noise nor the steady tag" 1 "$(printf '%s\n' "$out" | grep -c .)"
out=$("$BIN" report leaks --grace 0 -d "$jdb" -b -H --min-fit 0.999; echo "exit $?")
check "leaks --min-fit 0.999 is stricter than the jitter" "exit 0" "$out"

# report leaks: exit status 4 when there is a suspect (for cron and alerts)
"$BIN" report leaks --grace 0 -d "$db" > /dev/null
check "report leaks exits 4 when it finds suspects" 4 $?
"$BIN" report leaks --grace 0 -d "$db" --min-rate 1e12 > /dev/null
check "and 0 when it finds none" 0 $?

# several hosts: record --host, report --host
hdb=$W/hosts.db
for k in 0 1 2 3; do
	"$BIN" record -q -d "$hdb" -f "$W/snap$k.txt" --time $((t0 + k * interval)) --host web1
	"$BIN" record -q -d "$hdb" -f "$base" --time $((t0 + k * interval)) --host db1
done
check "record --host: the snapshots carry the names given" "db1 4
web1 4" "$(sqlite3 "$hdb" 'SELECT host, count(*) FROM snapshot GROUP BY host ORDER BY host' | tr '|' ' ')"
"$BIN" report leaks --grace 0 -d "$hdb" > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 2 ] && grep -q "db1" "$W/err" && grep -q "web1" "$W/err" && grep -q -- "--host" "$W/err"; then
	ok "report leaks on a database of two hosts: usage error naming them and --host"
else nok "report leaks on a database of two hosts: usage error naming them and --host" "exit $rc: $(cat "$W/err")"; fi
# 4 snapshots: the line of the planted leak grew 3 steps (below the default 256K)
out=$("$BIN" report leaks --grace 0 -d "$hdb" --host web1 -b -H --min-growth $((3 * step)))
check "report leaks --host web1 --min-growth $((3 * step)): the planted leak at $rate B/s" "$rate" "$(printf '%s\n' "$out" | grep " $leak_file:$leak_line " | awk '{ print $1 }')"
check "report leaks --host db1: nothing" "" "$("$BIN" report leaks --grace 0 -d "$hdb" --host db1 -b -H)"
check "report snapshots --host db1 lists its 4" 4 "$("$BIN" report snapshots -d "$hdb" --host db1 -H | grep -c .)"
check "report top --host web1 is its last capture" "$("$BIN" top -q -b -H -n 5 -f "$W/snap3.txt")" "$("$BIN" report top -d "$hdb" --host web1 -b -H -n 5)"
"$BIN" report growth -d "$hdb" --host nosuch > /dev/null 2> "$W/err"
check "report --host with no snapshot: exit 1" 1 $?
grep -q "no snapshot of host 'nosuch'" "$W/err" && ok "and says so" || nok "and says so" "$(cat "$W/err")"

# long-running history: WAL, prune, merge
check "the database is in WAL mode (readers do not wait for record)" wal "$(sqlite3 "$db" 'PRAGMA journal_mode')"
cp "$db" "$W/p.db"
"$BIN" prune -d "$W/p.db" --keep 30d --now $((t0 + (snaps - 1) * interval)) > /dev/null
check "prune --keep 30d keeps the $snaps snapshots of 5 minutes" "$snaps" "$("$BIN" report snapshots -H -d "$W/p.db" | grep -c .)"
"$BIN" prune -d "$W/p.db" --keep 120 --now $((t0 + (snaps - 1) * interval)) > /dev/null 2> "$W/err"
check "prune --keep 120 (no unit) is a usage error, and removes nothing" "2 $snaps" "$? $("$BIN" report snapshots -H -d "$W/p.db" | grep -c .)"
grep -q "needs its unit: 120s for seconds, or 120m, 120h, 120d" "$W/err" && ok "and says how to write it" || nok "and says how to write it" "$(cat "$W/err")"
"$BIN" prune -d "$W/p.db" --keep 0 --now $((t0 + (snaps - 1) * interval)) > /dev/null 2> "$W/err"
check "prune --keep 0 without --all is a usage error, and removes nothing" "2 $snaps" "$? $("$BIN" report snapshots -H -d "$W/p.db" | grep -c .)"
grep -q -- "--all" "$W/err" && ok "and names --all" || nok "and names --all" "$(cat "$W/err")"
"$BIN" prune -d "$W/p.db" --keep 2m --now $((t0 + (snaps - 1) * interval)) > "$W/out"
check "prune --keep 2m keeps the snapshots of the last 2 minutes: 3" 3 "$("$BIN" report snapshots -H -d "$W/p.db" | grep -c .)"
check "and says what it removed" "removed $((snaps - 3)) snapshot(s); $("$BIN" report snapshots -H -d "$W/p.db" | grep -c .) left" "$(head -n 1 "$W/out")"
check "no tag is left without a sample" 0 "$(sqlite3 "$W/p.db" 'SELECT count(*) FROM tag WHERE id NOT IN (SELECT tag_id FROM sample)')"
check "no sample is left without its snapshot" 0 "$(sqlite3 "$W/p.db" 'SELECT count(*) FROM sample WHERE snapshot_id NOT IN (SELECT id FROM snapshot)')"
check "the leak is still found in what is left (3 snapshots, 2 steps)" "$rate" \
	"$("$BIN" report leaks --grace 0 -d "$W/p.db" -b -H --min-snapshots 3 --min-growth $((2 * step)) | grep " $leak_file:$leak_line " | awk '{ print $1 }')"
"$BIN" prune -d "$W/nosuch.db" --keep 30d > /dev/null 2>&1
check "prune of a missing database exits 1 and creates nothing" "1 no" "$? $([ -e "$W/nosuch.db" ] && echo yes || echo no)"
"$BIN" prune -d "$W/p.db" --keep 30x > /dev/null 2> "$W/err"
check "prune --keep 30x is a usage error" 2 $?
grep -q "30d" "$W/err" && ok "and shows the form (30d)" || nok "and shows the form (30d)" "$(cat "$W/err")"
cp "$W/p.db" "$W/p0.db"
"$BIN" prune -d "$W/p0.db" --keep 0 --all > "$W/out"
check "prune --keep 0 --all removes every snapshot" "0" "$("$BIN" report snapshots -H -d "$W/p0.db" | grep -c .)"
for d in 45s 90m 12h 30d 2w 1.5h; do
	"$BIN" prune -d "$W/p0.db" --keep $d > /dev/null || nok "prune --keep $d is taken"
done
ok "prune --keep takes 45s, 90m, 12h, 30d, 2w and 1.5h"
# merge: the databases of two hosts into one
rm -f "$W/web.db" "$W/dbh.db" "$W/m.db"
for k in 0 1 2 3; do
	"$BIN" record -q -d "$W/web.db" -f "$W/snap$k.txt" --time $((t0 + k * interval)) --host web1
	"$BIN" record -q -d "$W/dbh.db" -f "$base" --time $((t0 + k * interval)) --host db1
done
"$BIN" merge -d "$W/m.db" "$W/web.db" "$W/dbh.db" > "$W/out"
check "merge: both hosts, 4 snapshots each" "db1 4
web1 4" "$(sqlite3 "$W/m.db" 'SELECT host, count(*) FROM snapshot GROUP BY host ORDER BY host' | tr '|' ' ')"
check "merge: the same samples as the sources" "$(( $(sqlite3 "$W/web.db" 'SELECT count(*) FROM sample') + $(sqlite3 "$W/dbh.db" 'SELECT count(*) FROM sample') ))" \
	"$(sqlite3 "$W/m.db" 'SELECT count(*) FROM sample')"
check "merge: report leaks --host web1 as on web1's own database" "$("$BIN" report leaks --grace 0 -b -d "$W/web.db")" "$("$BIN" report leaks --grace 0 -b -d "$W/m.db" --host web1)"
check "merge: report top --host db1 as on db1's own database (ids aside)" "$("$BIN" report top -b -H -d "$W/dbh.db")" "$("$BIN" report top -b -H -d "$W/m.db" --host db1)"
"$BIN" merge -d "$W/m.db" "$W/web.db" > "$W/out"
check "merge again: nothing added (a snapshot already there is skipped)" 8 "$(sqlite3 "$W/m.db" 'SELECT count(*) FROM snapshot')"
grep -q "0 added, 4 already there" "$W/out" && ok "and says so" || nok "and says so" "$(cat "$W/out")"
echo "not a db" > "$W/junk2.db"
"$BIN" merge -d "$W/m.db" "$W/junk2.db" > /dev/null 2>&1
check "merge of a file that is not a database exits 1" 1 $?

# report top --avg: the AVG of top on the same capture
check "report top --avg --at 3 is top --avg of the capture" \
	"$("$BIN" top -q -b -H -n 10 --avg -f "$W/snap2.txt")" "$("$BIN" report top -d "$db" --at 3 -b -H -n 10 --avg)"

# a range that ends before it starts is a usage error
for args in "growth --from $snaps --to 1" "leaks --from 3 --to 1" "growth --from last --to first"; do
	"$BIN" report $args -d "$db" > "$W/out" 2> "$W/err"
	rc=$?
	if [ $rc = 2 ] && grep -q "after --to" "$W/err" && [ ! -s "$W/out" ]; then ok "report $args: usage error, nothing printed"
	else nok "report $args: usage error, nothing printed" "exit $rc: $(cat "$W/err" "$W/out")"; fi
done
"$BIN" report growth --from 2 --to 2 -d "$db" > /dev/null
check "report growth --from 2 --to 2 (an empty range) is fine" 0 $?

# record every N seconds, a bounded count
"$BIN" record -q -d "$W/b.db" -f "$base" -i 0.2 -c 3
check "record -i 0.2 -c 3 takes 3 snapshots" 3 "$("$BIN" report snapshots -d "$W/b.db" -H | grep -c .)"
"$BIN" record -q -d "$W/b.db" -f - < "$base"
check "record reads stdin" 4 "$("$BIN" report snapshots -d "$W/b.db" -H | grep -c .)"

# errors
"$BIN" report leaks --grace 0 -d "$W/none.db" > /dev/null 2>&1
check "report on a missing database exits 1" 1 $?
echo "not a db" > "$W/junk.db"
"$BIN" report -d "$W/junk.db" > /dev/null 2>&1
check "report on a non-database exits 1" 1 $?
"$BIN" record -q -d "$W/c.db" -f "$HERE/samples/bad/truncated.txt"
check "record of a capture with malformed lines exits 3" 3 $?

# plot, when built in
if "$BIN" --help | grep -q 'plot     a PNG'; then
	"$BIN" plot -d "$db" -o "$W/p.png" -n 5 && "$BIN" plot -d "$db" -o "$W/p.svg" --by subsys
	hdr=$(od -An -tx1 -N24 "$W/p.png" | tr -d ' \n')
	check "plot writes a PNG (signature and IHDR)" "89504e470d0a1a0a0000000d49484452" "${hdr:0:32}"
	wh=$(( 16#${hdr:32:8} ))x$(( 16#${hdr:40:8} ))
	check "the PNG is 1100x600" "1100x600" "$wh"
	if grep -q '<svg' "$W/p.svg" && grep -q '</svg>' "$W/p.svg"; then ok "plot writes an SVG"; else nok "plot writes an SVG"; fi
	# the layout, as plot -v reports it on stderr
	longtag="drivers/gpu/drm/some_vendor/display/link_training_dp.c"
	ldb=$W/long.db
	for k in 0 1 2; do
		printf 'allocinfo - version: 1.0\n%12d        1 %s:1234 [somevendor_display_driver] func:dp_link_training_clock_recovery_sequence \n%12d 1 mm/a.c:1 func:a \n' \
			$((100000 + k * 4096)) "$longtag" $((50000 + k)) > "$W/l$k.txt"
		"$BIN" record -q -d "$ldb" -f "$W/l$k.txt" --time $((t0 + k * 7))
	done
	"$BIN" plot -v -d "$ldb" -o "$W/l.png" --width 2000 2> "$W/err"
	label=$(grep '^legend: ' "$W/err" | head -n 1)
	[[ $label == *"dp_link_training_clock_recovery_sequence [somevendor_display_driver] ($longtag:1234)" ]] &&
		ok "plot --width 2000: a 120-character legend is not cut" || nok "plot --width 2000: a 120-character legend is not cut" "$(cat "$W/err")"
	"$BIN" plot -v -d "$ldb" -o "$W/l.png" --width 500 2> "$W/err"
	[[ $(grep '^legend: ' "$W/err" | head -n 1) == *"~" ]] && ok "plot --width 500: the legend is cut, marked ~" || nok "plot --width 500: the legend is cut, marked ~" "$(cat "$W/err")"
	for w in 300 500 1100; do
		"$BIN" plot -v -d "$db" -o "$W/t.png" --width $w 2> "$W/err"
		# "xtick: LABEL at X width W": each label ends before the next begins
		out=$(awk '$1 == "xtick:" { x = $4; w = $6; if (n++ && x - w / 2 < px + pw / 2 + 4) print "overlap: " $0; px = x; pw = w } END { if (n < 2) print "fewer than 2 ticks" }' "$W/err")
		check "plot --width $w: x labels do not overlap" "" "$out"
	done
	"$BIN" plot -v -d "$db" -o "$W/s.png" --by subsys 2> "$W/err"
	grep -q '^title: .*subsystems' "$W/err" && ok "plot --by subsys: the title says subsystems" || nok "plot --by subsys: the title says subsystems" "$(grep title "$W/err")"
	"$BIN" plot -v -d "$db" -o "$W/s.png" --by module 2> "$W/err"
	grep -q '^title: .*modules' "$W/err" && ok "plot --by module: the title says modules" || nok "plot --by module: the title says modules" "$(grep title "$W/err")"
	"$BIN" plot -d "$db" -o "$W/n.png" -n 50 > /dev/null 2> "$W/err"
	check "plot -n 50 is a usage error (at most 20 lines), not silently 20" 2 $?
	"$BIN" plot -d "$db" -o "$W/e.png" --path 'nosuchdir/*' > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "no tag" "$W/err" && [ ! -e "$W/e.png" ]; then ok "plot with nothing matching: exit 1, no file"
	else nok "plot with nothing matching: exit 1, no file" "exit $rc: $(cat "$W/err")"; fi
	# plot -o: the previous chart survives a failed write; a device is not replaced
	cp "$W/p.png" "$W/keep.png"
	( trap '' XFSZ; ulimit -f 100; "$BIN" plot -d "$db" -o "$W/keep.png" --width 10000 --height 3000 ) 2> "$W/err"
	rc=$?
	check "plot on a full disk (ulimit -f): exit 1, the previous chart intact" "1 $(md5sum < "$W/p.png")" "$rc $(md5sum < "$W/keep.png")"
	check "and one message, with errno" "1 1" "$(wc -l < "$W/err") $(grep -c 'write error on .*keep.png.*File too large' "$W/err")"
	# a node of its own (as root): a broken build replaces it, not /dev/full
	full=$W/full
	mknod "$full" c 1 7 2> /dev/null || { [ -w /dev ] && nok "mknod: a device node to test plot -o with"; full=/dev/full; }
	"$BIN" plot -d "$db" -o "$full" 2> "$W/err"
	check "plot -o FULL-DEVICE: exit 1, errno, the device left a device" "1 allocinfo: write error on $full: No space left on device character special file" \
		"$? $(cat "$W/err") $(stat -c %F "$full")"
	"$BIN" plot -d "$db" -o "$W" 2> "$W/err"
	check "plot -o DIRECTORY: refused" "1 1" "$? $(grep -c 'is a directory: not written' "$W/err")"
	"$BIN" plot -v -d "$db" -o "$W/log.png" --log 2> "$W/err"
	check "plot --log exits 0" 0 $?
	# "ytick: LABEL bytes V": a constant ratio between ticks
	out=$(awk '$1 == "ytick:" { v = $4; if (n++ && pv > 0) r[v / pv] = 1; pv = v } END { k = 0; for (x in r) { k++; if (x <= 1) k = 99 } print (n >= 3 && k == 1) ? "log" : "not log: " n " ticks, " k " ratios" }' "$W/err")
	check "plot --log: y ticks at a constant ratio" log "$out"
else
	nok "allocinfo-plot is built next to $BIN (make test builds it)"
fi

# what report leaks cannot judge, it says: a window of one time (captures
# imported without their times) exits 5, and the grace period after the
# boot is stated with its end (the default, 1 h, as documented)
for k in 0 1 2 3 4; do
	"$BIN" record -q -d "$W/same.db" -f "$W/snap$k.txt" --time $t0
	"$BIN" record -q -d "$W/young.db" -f "$W/snap$k.txt" --time $((t0 + k * 300))
done
out=$("$BIN" report leaks --grace 0 -d "$W/same.db")
check "report leaks over 5 snapshots of one time: exit 5, 'too short to judge', no suspect" "5 1 " \
	"$? $(grep -c '^# too short to judge: the 5 snapshots were all taken at one time' <<< "$out") $(grep -v '^#' <<< "$out")"
check "and -F json says too_short" "True" \
	"$("$BIN" report leaks --grace 0 -d "$W/same.db" -F json | python3 -c 'import json, sys; print(json.load(sys.stdin)["hosts"][0]["boots"][0]["too_short"])')"
out=$("$BIN" report leaks -d "$W/young.db")
check "report leaks 20 minutes into a boot: exit 0, the grace period (1 h) and its end stated, no suspect" \
	"0 1 " "$? $(grep -c "^# not judged yet: the grace period after the boot (60 min from its first snapshot) lasts until $(date -u -d @$((t0 + 3600)) +%FT%TZ)" <<< "$out") $(grep -v '^#' <<< "$out")"
done_tap
