#!/usr/bin/env bash
# The database as a fleet uses it: snapshot quality (incomplete captures
# refused, or kept and marked), boot and machine ids, a reboot inside a
# leak, databases of allocinfo 1 upgraded in place, damaged, read-only
# and locked databases, merge past a bad source, the record options'
# ranges. The synthetic hosts are directories: ALLOCINFO_SYSROOT=DIR
# reads DIR/proc/allocinfo, DIR/etc/machine-id and the rest. TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap.sh"
tap_workdir
if ! command -v sqlite3 > /dev/null; then
	nok "the sqlite3 command is installed (make deps)"
	echo "# $n tests, $failed failed"
	exit 1
fi
base=$HERE/samples/linux-6.12-x86_64.txt
t0=1700000000 dt=300
# capture K of a host with a leak: the sample plus fs/leaky.c at
# start + K * step bytes
start=1048576 step=204800
leak_rate=$(awk -v s=$step -v d=$dt 'BEGIN { printf "%+.2f", s / d }')
capture() {	# capture K [FILE]: to stdout
	cat "$base"
	printf '%12d %8d fs/leaky.c:77 func:leaky_alloc \n' $((start + $1 * step)) $((1 + $1))
}
# a synthetic host: DIR with the files allocinfo reads
mkhost() {	# mkhost DIR NAME MACHINE-ID BOOT-ID
	mkdir -p "$1/proc/sys/kernel/random" "$1/etc" "$1/proc/sys/vm"
	echo "$2" > "$1/proc/sys/kernel/hostname"
	echo "6.12.0-test" > "$1/proc/sys/kernel/osrelease"
	echo "$3" > "$1/etc/machine-id"
	echo "$4" > "$1/proc/sys/kernel/random/boot_id"
	echo 1 > "$1/proc/sys/vm/mem_profiling"
}
sq() { sqlite3 "$1" "$2" 2>&1; }

# ---- snapshot quality: what is not a complete capture is refused ----
db=$W/q.db
rec() {	# rec K FILE [OPTIONS]: record FILE as capture K of host web1
	local k=$1 f=$2
	shift 2
	"$BIN" record -q -d "$db" -f "$f" --time $((t0 + k * dt)) --host web1 --machine-id m-web1 --boot-id b1 "$@"
}
for k in 0 1 2 3 4 5; do capture $k > "$W/c$k.txt"; done
# 6: cut in the middle of a line; 7: cut at a line boundary (half the tags);
# 8: the header only; 9: empty; 10: garbage; 11: /dev/null
capture 6 | head -c $(( $(capture 6 | wc -c) / 2 )) > "$W/c6.txt"
capture 7 | head -n $(( $(capture 7 | wc -l) / 2 )) > "$W/c7.txt"
head -n 2 "$base" > "$W/c8.txt"
: > "$W/c9.txt"
for i in $(seq 762); do echo "garbage line $i"; done > "$W/c10.txt"
for k in 0 1 2 3 4 5; do rec $k "$W/c$k.txt"; done
i=6
for f in "$W/c6.txt" "$W/c7.txt" "$W/c8.txt" "$W/c9.txt" "$W/c10.txt" /dev/null; do
	rec $i "$f" 2> "$W/err"
	rc=$?
	row=$(sq "$db" "SELECT status, (SELECT count(*) FROM sample WHERE snapshot_id = snapshot.id) FROM snapshot WHERE taken_at = $((t0 + i * dt))")
	check "record of $(basename "$f") ($(case $i in 6) echo cut mid-line;; 7) echo cut at a line end;; 8) echo header only;; 9) echo empty;; 10) echo garbage;; *) echo /dev/null;; esac)): exit 3, refused, no samples" \
		"3 refused|0" "$rc $row"
	grep -q "not recorded: " "$W/err" || nok "and it says why" "$(cat "$W/err")"
	i=$((i + 1))
done
# half of it, and the line cut: what is gone says so too
want=$(awk 'FNR <= 2 || $4 ~ /^\[/ { next } FNR == NR { k[$3 " " $4] = 1; next } { delete k[$3 " " $4] } END { print length(k) }' "$W/c5.txt" <(sed '$d' "$W/c6.txt"))
check "the reason of the capture cut mid-line" "1 malformed line(s); $want tag(s) of the kernel that snapshot 6 of the same boot had are missing (cut short?)" \
	"$(sq "$db" "SELECT problem FROM snapshot WHERE taken_at = $((t0 + 6 * dt))")"
# the tags of the kernel (no [module]) of capture 5, the last complete one, not in the half
want=$(awk 'FNR <= 2 || $4 ~ /^\[/ { next } FNR == NR { k[$3 " " $4] = 1; next } { delete k[$3 " " $4] } END { print length(k) }' "$W/c5.txt" "$W/c7.txt")
check "the reason of the capture cut at a line end: the $want tags of the kernel it lacks" \
	"$want tag(s) of the kernel that snapshot 6 of the same boot had are missing (cut short?)" \
	"$(sq "$db" "SELECT problem FROM snapshot WHERE taken_at = $((t0 + 7 * dt))")"
check "the reason of the header only, the empty, the garbage, /dev/null" "no tags (an empty, header-only or unreadable capture)" \
	"$(sq "$db" "SELECT DISTINCT problem FROM snapshot WHERE taken_at BETWEEN $((t0 + 8 * dt)) AND $((t0 + 11 * dt))")"
out=$("$BIN" report snapshots -d "$db" -H | awk '$6 == "refused"' | wc -l)
check "report snapshots lists the 6 refused captures as refused" 6 "$out"
"$BIN" report leaks --grace 0 -d "$db" -b > "$W/out"
check "report leaks: exit 4, the planted leak at $leak_rate B/s (6 complete snapshots)" "4 $leak_rate" \
	"$? $(awk '$NF == "func:leaky_alloc" { print $1 }' "$W/out")"
grep -q '^# skipped 6 incomplete or refused snapshot(s) of web1: snapshot 7 refused (1 malformed line(s);' "$W/out" &&
	ok "and it says what it skipped" || nok "and it says what it skipped" "$(cat "$W/out")"
# --keep-incomplete: stored, marked, skipped by report leaks
rec 12 "$W/c7.txt" --keep-incomplete 2> "$W/err"
check "record --keep-incomplete of a cut capture: exit 3, 'incomplete', its samples stored" "3 incomplete" \
	"$? $(sq "$db" "SELECT status FROM snapshot WHERE taken_at = $((t0 + 12 * dt))")"
check "report top --at that snapshot: its tags, marked nowhere else" "$("$BIN" top -q -b -H -n 0 -s name -f "$W/c7.txt")" \
	"$("$BIN" report top -d "$db" -b -H -n 0 -s name --at "$(sq "$db" "SELECT id FROM snapshot WHERE taken_at = $((t0 + 12 * dt))")")"
check "report top (the last complete snapshot) is capture 5" "$("$BIN" top -q -b -H -n 5 -f "$W/c5.txt")" "$("$BIN" report top -d "$db" -b -H -n 5)"
"$BIN" report leaks --grace 0 -d "$db" -b > "$W/out"
check "report leaks skips it too: the leak, and 7 skipped" "$leak_rate 7" \
	"$(awk '$NF == "func:leaky_alloc" { print $1 }' "$W/out") $(sed -n 's/^# skipped \([0-9]*\) .*/\1/p' "$W/out")"
# a newer format version is read, recorded complete, and said (exit 3)
sed '1s/1.0/3.0/' "$W/c5.txt" > "$W/v3.txt"
rec 13 "$W/v3.txt" 2> "$W/err"
check "a capture of format 3.0: recorded complete, exit 3 with a warning" "3 ok" "$? $(sq "$db" "SELECT status FROM snapshot WHERE taken_at = $((t0 + 13 * dt))")"

# ---- a reboot inside a leak ----
# boot b1: snapshots 0..5 leak; reboot; boot b2: 6..11 the same leak from
# where a new boot starts. Before boot ids, the drop hid the leak.
rdb=$W/reboot.db
for k in $(seq 0 11); do
	b=b1 kk=$k
	[ $k -ge 6 ] && b=b2 kk=$((k - 6))
	capture $kk > "$W/r.txt"
	"$BIN" record -q -d "$rdb" -f "$W/r.txt" --time $((t0 + k * dt)) --host web2 --machine-id m-web2 --boot-id $b
done
"$BIN" report leaks --grace 0 -d "$rdb" -b > "$W/out"
check "reboot inside the leak: report leaks finds it in the last boot at $leak_rate B/s over 6 snapshots" "4 $leak_rate 5/5" \
	"$? $(awk '$NF == "func:leaky_alloc" { print $1, $6 }' "$W/out")"
grep -q '^# not analysed: 6 snapshot(s) of 1 earlier boot(s) of web2 (--boot all)' "$W/out" &&
	ok "and says the earlier boot was not analysed" || nok "and says the earlier boot was not analysed" "$(cat "$W/out")"
check "--boot all: the leak in each boot" "$leak_rate
$leak_rate" "$("$BIN" report leaks --grace 0 -d "$rdb" -b -H --boot all | awk '$NF == "func:leaky_alloc" { print $1 }')"
check "report snapshots shows the boots" "b1 6
b2 6" "$("$BIN" report snapshots -d "$rdb" -H | awk '{ print $7 }' | sort | uniq -c | awk '{ print $2, $1 }')"

# ---- identity: machine id and node name ----
mkhost "$W/h1" web3 0123456789abcdef0123456789abcdef boot-a
capture 0 > "$W/h1/proc/allocinfo"
ALLOCINFO_SYSROOT=$W/h1 "$BIN" record -q -d "$W/id.db"
check "record of the live file: node name, machine id, boot id and kernel of the host" \
	"web3|0123456789abcdef0123456789abcdef|boot-a|6.12.0-test|/proc/allocinfo" \
	"$(sq "$W/id.db" 'SELECT host, machine_id, boot_id, kernel, source FROM snapshot')"
echo web3-renamed > "$W/h1/proc/sys/kernel/hostname"
ALLOCINFO_SYSROOT=$W/h1 "$BIN" record -q -d "$W/id.db"
check "a renamed host is the same host (one machine id)" 1 "$("$BIN" report leaks --grace 0 -d "$W/id.db" -F json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["hosts"]))')"
# a clone: the same node name, another machine
mkhost "$W/h2" web3-renamed fedcba9876543210fedcba9876543210 boot-z
capture 0 > "$W/h2/proc/allocinfo"
ALLOCINFO_SYSROOT=$W/h2 "$BIN" record -q -d "$W/id.db"
"$BIN" report top -d "$W/id.db" --host web3-renamed > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 2 ] && grep -q "2 machines were called 'web3-renamed'" "$W/err" && grep -q fedcba9876543210fedcba9876543210 "$W/err"; then
	ok "two machines of one node name: --host NAME is a usage error listing their machine ids"
else nok "two machines of one node name: --host NAME is a usage error listing their machine ids" "exit $rc: $(cat "$W/err")"; fi
check "--host MACHINE-ID picks one" 1 "$("$BIN" report snapshots -d "$W/id.db" -H --host fedcba9876543210fedcba9876543210 | wc -l)"
# missing /proc/allocinfo: a hint, and no database
mkhost "$W/noprof" bare 11112222333344445555666677778888 boot-n
ALLOCINFO_SYSROOT=$W/noprof "$BIN" record -d "$W/none.db" 2> "$W/err"
check "record without /proc/allocinfo: exit 1, no database made" "1 no" "$? $([ -e "$W/none.db" ] && echo yes || echo no)"
grep -q "CONFIG_MEM_ALLOC_PROFILING" "$W/err" && ok "and the message says what the kernel lacks" || nok "and the message says what the kernel lacks" "$(cat "$W/err")"

# ---- a JSON capture says when and where it was taken ----
mkdir -p "$W/imp"
ALLOCINFO_SYSROOT=$W/h1 "$BIN" export -F json -o "$W/imp/a.json"
python3 - "$W/imp/a.json" <<'PY' || nok "the JSON capture has taken_at, host, machine_id, boot_id, kernel"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["host"] == "web3-renamed" and j["machine_id"] == "0123456789abcdef0123456789abcdef"
assert j["boot_id"] == "boot-a" and j["kernel"] == "6.12.0-test" and j["taken_at"] > 1.7e9
PY
# a JSON capture of a running system whose machine or boot is missing or
# not an id is refused, not filed under the machine importing it
mkdir -p "$W/ids"
python3 - "$W/imp/a.json" "$W/ids" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
cases = [("good", {}), ("mid-space", {"machine_id": "not an id"}), ("mid-none", {"machine_id": None}),
         ("boot-long", {"boot_id": "b" * 100}), ("boot-none", {"boot_id": None}),
         ("host-space", {"host": "web 3"}), ("ids-none", {"machine_id": None, "boot_id": None, "host": None})]
for i, (name, change) in enumerate(cases):
    c = dict(j, taken_at=1700000000 + 300 * i)
    for k, v in change.items():
        if v is None:
            del c[k]
        else:
            c[k] = v
    json.dump(c, open(os.path.join(sys.argv[2], "%d-%s.json" % (i, name)), "w"))
PY
"$BIN" record -q -d "$W/ids.db" --import "$W/ids" 2> "$W/err"
rc=$?
check "record --import of 6 JSON captures with a machine or boot id missing or not an id: exit 3, only the good one stored" \
	"3 1|0123456789abcdef0123456789abcdef|boot-a|0-good.json" \
	"$rc $(sq "$W/ids.db" "SELECT count(*), machine_id, boot_id, replace(source, '$W/ids/', '') FROM snapshot")"
check "and each refused one is named, with why and the way out (--host, --machine-id, --boot-id)" \
	"6 1 1 1 1 1 1" "$(grep -c 'not recorded: a JSON capture of a running system, but .*record it with --host NAME --machine-id ID --boot-id ID' "$W/err") \
$(grep -c '1-mid-space.json: not recorded: .*its machine_id is not an id' "$W/err") \
$(grep -c '2-mid-none.json: not recorded: .*it has no machine_id' "$W/err") \
$(grep -c '3-boot-long.json: not recorded: .*its boot_id is not an id' "$W/err") \
$(grep -c '4-boot-none.json: not recorded: .*it has no boot_id' "$W/err") \
$(grep -c '5-host-space.json: not recorded: .*its host is not a node name' "$W/err") \
$(grep -c '6-ids-none.json: not recorded: .*it has no machine_id' "$W/err")"
"$BIN" record -q -d "$W/ids.db" -f "$W/ids/2-mid-none.json" --host web3 --machine-id m-given --boot-id b-given 2> "$W/err"
check "record -f of one with --host NAME --machine-id ID --boot-id ID: stored as given" \
	"0 m-given|boot-a" "$? $(sq "$W/ids.db" "SELECT machine_id, boot_id FROM snapshot WHERE source LIKE '%2-mid-none.json'")"

# ---- the options' ranges ----
for t in 1e20 -5 nan $(( $(date +%s) + 3 * 86400 )); do
	"$BIN" record -q -d "$W/t.db" -f "$W/c0.txt" --time "$t" > /dev/null 2>&1
	check "record --time $t: usage error, nothing stored" "2 no" "$? $([ -e "$W/t.db" ] && echo yes || echo no)"
done
"$BIN" report snapshots -d "$db" --host nosuch > /dev/null 2> "$W/err"
check "report snapshots --host nosuch: exit 1, named, no (null)" "1 1 0" \
	"$? $(grep -c "report snapshots: no snapshot of host 'nosuch'" "$W/err") $(grep -c '(null)' "$W/err")"

# ---- databases of allocinfo 1: upgraded in place on first use ----
v1() {	# v1 FILE: the schema and rows allocinfo 1 wrote
	sqlite3 "$1" > /dev/null <<'SQL'
PRAGMA journal_mode = WAL;
CREATE TABLE snapshot (id INTEGER PRIMARY KEY, taken_at REAL NOT NULL, source TEXT NOT NULL,
	host TEXT NOT NULL, kernel TEXT NOT NULL, version TEXT NOT NULL, label TEXT NOT NULL DEFAULT '',
	ntags INTEGER NOT NULL, total_bytes INTEGER NOT NULL, total_calls INTEGER NOT NULL,
	skipped_lines INTEGER NOT NULL);
CREATE TABLE tag (id INTEGER PRIMARY KEY, file TEXT NOT NULL, line INTEGER NOT NULL,
	module TEXT NOT NULL, func TEXT NOT NULL, UNIQUE (file, line, module, func));
CREATE TABLE sample (snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
	tag_id INTEGER NOT NULL REFERENCES tag(id), bytes INTEGER NOT NULL, calls INTEGER NOT NULL,
	extra TEXT NOT NULL DEFAULT '', PRIMARY KEY (snapshot_id, tag_id)) WITHOUT ROWID;
CREATE INDEX sample_by_tag ON sample (tag_id, snapshot_id);
CREATE INDEX snapshot_by_time ON snapshot (taken_at);
INSERT INTO tag VALUES (1, 'fs/leaky.c', 77, '', 'leaky_alloc'), (2, 'mm/slub.c', 2474, '', 'alloc_slab_page'),
	(3, 'drivers/x.c', 5, 'xmod', 'x_alloc');
INSERT INTO snapshot VALUES (1, 1700000000, 'a', 'old1', '6.12', '1.0', '', 3, 0, 0, 0),
	(2, 1700000300, 'b', 'old1', '6.12', '1.0', '', 3, 0, 0, 0),
	(3, 1700000600, 'c', 'old1', '6.12', '1.0', '', 2, 0, 0, 4),
	(4, 1700000900, 'd', 'old1', '6.12', '1.0', '', 3, 0, 0, 0),
	(5, 1e20, 'e', 'old1', '6.12', '1.0', '', 3, 0, 0, 0);
INSERT INTO sample VALUES (1, 1, 1000000, 1, ''), (1, 2, 5000, 2, ''), (1, 3, 4096, 1, ''),
	(2, 1, 1300000, 2, ''), (2, 2, 5000, 2, ''), (2, 3, 4096, 1, ''),
	(3, 1, 1600000, 3, ''), (3, 2, 6000, 2, ''),
	(4, 1, 1900000, 4, ''), (4, 2, 5000, 2, ''), (4, 3, 4096, 1, ''),
	(5, 1, 2200000, 5, ''), (5, 2, 5000, 2, ''), (5, 3, 4096, 1, '');
PRAGMA user_version = 1;
SQL
}
v1 "$W/v1.db"
cp "$W/v1.db" "$W/v1-ro.db"
"$BIN" report snapshots -d "$W/v1.db" -H > "$W/out" 2> "$W/err"
check "a database of allocinfo 1 opens (report snapshots: exit 0, 5 rows)" "0 5" "$? $(wc -l < "$W/out")"
check "and is upgraded in place to version 2, without sample_by_tag" "2 0" \
	"$(sq "$W/v1.db" 'PRAGMA user_version') $(sq "$W/v1.db" "SELECT count(*) FROM sqlite_master WHERE name = 'sample_by_tag'")"
check "its snapshot with malformed lines is marked incomplete" "3|incomplete|4 malformed line(s) (recorded by allocinfo 1)" \
	"$(sq "$W/v1.db" "SELECT id, status, problem FROM snapshot WHERE status <> 'ok'")"
check "its time of 1e20 prints as '?', not a garbage date" 1 "$(grep -c '?(1e+20)' "$W/out")"
check "report top --at 2: its samples as they were" "1300000 2 fs/leaky.c:77 func:leaky_alloc|5000 2 mm/slub.c:2474 func:alloc_slab_page|4096 1 drivers/x.c:5 [xmod] func:x_alloc|" \
	"$("$BIN" report top -d "$W/v1.db" --at 2 -b -H | awk '{ $1 = $1; printf "%s|", $0 }')"
printf 'allocinfo - version: 1.0\n     2500000        6 fs/leaky.c:77 func:leaky_alloc \n        5000        2 mm/slub.c:2474 func:alloc_slab_page \n' > "$W/new.txt"
"$BIN" record -q -d "$W/v1.db" -f "$W/new.txt" --time 1700001200 --host old1
"$BIN" prune -d "$W/v1.db" --keep 1d --now 1700001200 > "$W/out"
check "prune also removes its snapshot stamped 1e20 (a time that cannot be)" "removed 1 snapshot(s); 5 left" "$(head -n 1 "$W/out")"
check "record added to it: growth from its first snapshot to the new one" "+1500000 -4096" \
	"$("$BIN" report growth -d "$W/v1.db" -b -H | awk '$NF == "func:leaky_alloc" || $NF == "func:x_alloc" { printf "%s ", $1 }' | sed 's/ $//')"
# read-only: a clear error naming the way out
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$W"
	ro() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
else
	chmod 555 "$W"
	ro() { "$@"; }
fi
chmod 644 "$W/v1-ro.db"
ro "$BIN" report snapshots -d "$W/v1-ro.db" > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 1 ] && grep -q "schema version 1" "$W/err" && grep -q "write access" "$W/err" && grep -q "copy" "$W/err"; then
	ok "a read-only database of allocinfo 1: exit 1, says it needs the upgrade and how (owner, or a copy)"
else nok "a read-only database of allocinfo 1: exit 1, says it needs the upgrade and how" "exit $rc: $(cat "$W/err")"; fi
ro "$BIN" report snapshots -H -d "$W/q.db" > "$W/out" 2> "$W/err"
check "a database it may read but not write (its WAL index cannot be made): read" \
	"0 $(sq "$W/q.db" 'SELECT count(*) FROM snapshot')" "$? $(wc -l < "$W/out")"
ro "$BIN" record -q -d "$W/q.db" -f "$W/c0.txt" --time $t0 > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 1 ] && grep -q "$W/q.db" "$W/err" && ! grep -q "not a SQLite database" "$W/err" && grep -qE "write access|no access" "$W/err"; then
	ok "record into a database it cannot write: exit 1, names it, says why (not 'not a SQLite database')"
else nok "record into a database it cannot write: exit 1, names it, says why" "exit $rc: $(cat "$W/err")"; fi
chmod 700 "$W"
# newer, other, damaged
cp "$W/q.db" "$W/v3.db"
sqlite3 "$W/v3.db" 'PRAGMA user_version = 3'
"$BIN" report snapshots -d "$W/v3.db" > /dev/null 2> "$W/err"
check "a database of a newer allocinfo: exit 1, says so" "1 1" "$? $(grep -c 'schema version 3; this allocinfo knows 2' "$W/err")"
sqlite3 "$W/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1)'
"$BIN" record -q -d "$W/other.db" -f "$W/c0.txt" > /dev/null 2> "$W/err"
check "record into another program's SQLite file: exit 1, left alone" "1 1 t" \
	"$? $(grep -c 'another program' "$W/err") $(sq "$W/other.db" "SELECT group_concat(name) FROM sqlite_master")"
sqlite3 "$W/q.db" 'PRAGMA wal_checkpoint(TRUNCATE)' > /dev/null
head -c $(( $(stat -c %s "$W/q.db") / 2 )) "$W/q.db" > "$W/cut.db"
"$BIN" report leaks --grace 0 -d "$W/cut.db" > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 1 ] && grep -q "damaged" "$W/err" && grep -q "cut.db" "$W/err"; then ok "a database cut in half: exit 1, 'damaged', named"
else nok "a database cut in half: exit 1, 'damaged', named" "exit $rc: $(cat "$W/err")"; fi
for cmd in "record -q -f $W/c0.txt" "prune --keep 30d" "report snapshots"; do
	cp "$W/cut.db" "$W/cut2.db"
	sum=$(md5sum < "$W/cut2.db")
	"$BIN" $cmd -d "$W/cut2.db" > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "is damaged" "$W/err" && grep -q "restore a copy" "$W/err" &&
	   [ "$(md5sum < "$W/cut2.db")" = "$sum" ]; then
		ok "${cmd%% *} on a database cut in half: exit 1, says it is damaged and what to do, writes nothing"
	else
		nok "${cmd%% *} on a database cut in half: exit 1, says it is damaged, writes nothing" "exit $rc: $(cat "$W/err")"
	fi
done

# ---- merge: past a bad source, never into itself ----
rm -f "$W/m.db"
start_t=$(date +%s.%N)
"$BIN" merge -d "$W/m.db" "$W/cut.db" "$W/rdb-none.db" "$W/reboot.db" "$W/other.db" "$W/q.db" > "$W/out" 2> "$W/err"
rc=$?
check "merge of 2 good and 3 bad sources: exit 1" 1 $rc
check "the good ones are merged" "m-web1 $(sq "$W/q.db" 'SELECT count(*) FROM snapshot')
m-web2 12" "$(sq "$W/m.db" 'SELECT machine_id, count(*) FROM snapshot GROUP BY machine_id' | tr '|' ' ')"
check "each bad one is reported, and the count" "3 1" "$(grep -c 'not merged:' "$W/err") $(grep -c '3 of 5 source(s) not merged' "$W/err")"
check "report leaks --host m-web2 as on its own database" "$("$BIN" report leaks --grace 0 -d "$W/reboot.db" -b -H)" "$("$BIN" report leaks --grace 0 -d "$W/m.db" -b -H --host m-web2)"
check "the refused snapshots come along, with their reasons" "$(sq "$W/q.db" "SELECT taken_at, status, problem FROM snapshot WHERE status <> 'ok' ORDER BY taken_at")" \
	"$(sq "$W/m.db" "SELECT taken_at, status, problem FROM snapshot WHERE status <> 'ok' ORDER BY taken_at")"
s0=$(date +%s.%N)
"$BIN" merge -d "$W/m.db" "$W/m.db" > /dev/null 2> "$W/err"
rc=$?
el=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a }')
check "merge of a database into itself: exit 1 at once (not a 5 s lock wait), says so" "1 0 1" "$rc $el $(grep -c 'is the database merged into' "$W/err")"

# ---- a locked database: a bounded wait, then a message naming it ----
"$BIN" record -q -d "$W/lock.db" -f "$W/c0.txt" --time $t0 --host l --machine-id m-l --boot-id b
# hold S: another process holds the write lock of lock.db for S seconds
hold() {
	python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[3], "w").close()
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")' "$W/lock.db" "$1" "$W/held" &
	pids+=($!)
	for _ in $(seq 50); do [ -e "$W/held" ] && break; sleep 0.1; done
	rm -f "$W/held"
}
hold 3
"$BIN" record -q -d "$W/lock.db" -f "$W/c1.txt" --time $((t0 + dt)) --host l --machine-id m-l --boot-id b --wait 1 2> "$W/err"
rc=$?
if [ $rc = 1 ] && grep -q "lock.db is locked by another process (waited 1 s" "$W/err"; then ok "record --wait 1 on a database held 3 s: exit 1, names it and the wait"
else nok "record --wait 1 on a database held 3 s: exit 1, names it and the wait" "exit $rc: $(cat "$W/err")"; fi
hold 2
"$BIN" record -q -d "$W/lock.db" -f "$W/c1.txt" --time $((t0 + dt)) --host l --machine-id m-l --boot-id b --wait 20
check "record --wait 20 on a database held 2 s: waits, records" "0 2" "$? $(sq "$W/lock.db" 'SELECT count(*) FROM snapshot')"
# record -i: a database locked longer than the wait, an input gone for a moment: skipped, not fatal
# (each window lasts 3 intervals of record -i, so that a loaded machine
# still has a snapshot fall in it)
cp "$W/c2.txt" "$W/live.txt"
"$BIN" record -q -d "$W/lock.db" -f "$W/live.txt" -i 0.5 -c 14 --host l --machine-id m-l --boot-id b --wait 0.2 2> "$W/ierr" &
rp=$!
sleep 0.7
hold 1.5
wait "${pids[-1]}"
mv "$W/live.txt" "$W/gone.txt"; sleep 1.5; mv "$W/gone.txt" "$W/live.txt"
wait $rp
rc=$?
got=$(( $(sq "$W/lock.db" 'SELECT count(*) FROM snapshot') - 2 ))
if [ $rc = 3 ] && [ "$got" -ge 2 ] && [ "$got" -lt 14 ] && grep -q "stayed locked" "$W/ierr" && grep -q "cannot read" "$W/ierr"; then
	ok "record -i past a locked database and a vanished input: exit 3, $got of 14 recorded, both said"
else nok "record -i past a locked database and a vanished input" "exit $rc, $got recorded: $(cat "$W/ierr")"; fi

# ---- text captures whose times were lost (copied without cp -p) ----
mkdir -p "$W/notime"
for k in 1 2 3; do cp "$W/c0.txt" "$W/notime/c$k.txt"; done
touch -d @1700000000 "$W/notime"/c*.txt
"$BIN" record -q -d "$W/notime.db" --import "$W/notime" --time mtime 2> "$W/err"
check "record --import --time mtime of 3 text captures sharing one time: exit 3, nothing recorded" "3 0 0" \
	"$? $(sq "$W/notime.db" 'SELECT count(*) FROM snapshot') $(sq "$W/notime.db" 'SELECT count(*) FROM tag')"
grep -q "cp -p" "$W/err" && grep -q -- "--time T" "$W/err" && ok "and says why and how to record them" ||
	nok "and says why and how to record them" "$(cat "$W/err")"
touch -d @1700000300 "$W/notime/c2.txt"; touch -d @1700000600 "$W/notime/c3.txt"
# a text capture holds no time: its file's is taken only when asked
"$BIN" record -q -d "$W/notime.db" --import "$W/notime" 2> "$W/err"
check "record --import of 3 text captures without --time mtime: exit 3, nothing recorded" "3 0" \
	"$? $(sq "$W/notime.db" 'SELECT count(*) FROM snapshot')"
check "and each is named, with the two ways to record it (--time mtime, -f FILE --time T)" 3 \
	"$(grep -c 'c[123].txt: not recorded: a text capture holds no time of its own: .*--time mtime; else record it with -f .*c[123].txt --time T' "$W/err")"
"$BIN" record -q -d "$W/notime.db" --import "$W/notime" --time 1700000000 > /dev/null 2> "$W/err"
check "record --import --time T (one time for every capture): usage error naming --time mtime and -f FILE --time T" "2 1" \
	"$? $(grep -c -- '--import takes --time mtime.*-f FILE --time T' "$W/err")"
"$BIN" record -q -d "$W/notime.db" --import "$W/notime" --time mtime 2> "$W/err"
check "with --time mtime and their times restored: the 3 recorded at them" "0 1700000000 1700000300 1700000600" \
	"$? $(sq "$W/notime.db" 'SELECT group_concat(CAST(taken_at AS INT), " ") FROM snapshot')"

# ---- a full disk: a small tmpfs of this test's own ----
# record stops with what is wrong and the way out, exit 1, and stores no
# part of the snapshot: both when the disk is full before the database's
# -shm file can be made, and when the snapshot's pages do not fit
full_disk() {
	local M=$W/fullfs c k before t1f
	mkdir -p "$M"
	if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=2m allocinfo-test "$M" 2> /dev/null; then
		for k in 1 2 3; do
			skip "record on a full disk" "a full disk needs a tmpfs of its own: mount -t tmpfs (root, outside a restricted container)"
		done
		return
	fi
	trap 'umount "$W/fullfs" 2> /dev/null; tap_cleanup' EXIT
	for k in 0 1 2; do capture $k > "$W/full$k.txt"; done
	"$BIN" record -q -d "$M/f.db" -f "$W/full0.txt" --time $t0 --host f --machine-id m-f --boot-id b-f
	before=$(sq "$M/f.db" 'SELECT count(*) FROM snapshot')
	# full before the database is opened: its -shm file cannot be made
	dd if=/dev/zero of="$M/fill" bs=4k 2> /dev/null
	"$BIN" record -q -d "$M/f.db" -f "$W/full1.txt" --time $((t0 + dt)) --host f --machine-id m-f --boot-id b-f 2> "$W/err"
	c=$?
	rm -f "$M/fill"
	if [ $c = 1 ] && grep -q "no space left on the file system of the database .*free space there" "$W/err" &&
		[ "$(sq "$M/f.db" 'SELECT count(*) FROM snapshot')" = "$before" ]; then
		ok "record on a full disk (no room for the -shm file): exit 1, 'no space left', the way out, nothing stored"
	else nok "record on a full disk (no room for the -shm file): exit 1, 'no space left', the way out, nothing stored" "exit $c: $(cat "$W/err")"; fi
	# full while the snapshot is written: a reader keeps -shm and -wal there
	python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])
c.execute("SELECT count(*) FROM snapshot").fetchall()
open(sys.argv[2], "w").close()
time.sleep(60)' "$M/f.db" "$W/reading" &
	pids+=($!)
	for _ in $(seq 50); do [ -e "$W/reading" ] && break; sleep 0.1; done
	dd if=/dev/zero of="$M/fill" bs=4k 2> /dev/null
	"$BIN" record -q -d "$M/f.db" -f "$W/full2.txt" --time $((t0 + 2 * dt)) --host f --machine-id m-f --boot-id b-f 2> "$W/err"
	c=$?
	kill "${pids[-1]}"; wait "${pids[-1]}" 2> /dev/null
	rm -f "$M/fill"
	check "record when the snapshot does not fit: exit 1, 'no space left', the way out; after, nothing of it stored, the database intact" \
		"1 1 $before ok" "$c $(grep -c "no space left on the file system of the database .*free space there" "$W/err") \
$(sq "$M/f.db" 'SELECT count(*) FROM snapshot') $(sq "$M/f.db" 'PRAGMA integrity_check')"
	# record -i skips the snapshots that do not fit and goes on once there
	# is room again (exit 3); what it stores after is whole: its input
	# changes between two captures all along, and each snapshot is one
	cp "$W/full0.txt" "$W/live.txt"
	( while :; do for c in 1 0; do cp "$W/full$c.txt" "$W/live.tmp"; mv "$W/live.tmp" "$W/live.txt"; sleep 0.3; done; done ) &
	pids+=($!)
	"$BIN" record -q -d "$M/f.db" -f "$W/live.txt" -i 0.4 -c 12 --host f --machine-id m-f --boot-id b-f 2> "$W/err" &
	k=$!
	for _ in $(seq 100); do [ "$(sq "$M/f.db" 'SELECT count(*) FROM snapshot')" -gt "$before" ] && break; sleep 0.1; done
	dd if=/dev/zero of="$M/fill" bs=4k 2> /dev/null
	# a module loaded while the disk is full: its tag, new to the
	# database, is added by snapshots that are then rolled back
	t1f=$("$BIN" top -f "$W/full1.txt" -b -H -n 0 -s name)
	{ cat "$W/full1.txt"; printf '%12d %8d drivers/newmod/a.c:1 [newmod] func:newmod_alloc \n' 8192 2; } > "$W/full1n.txt"
	mv "$W/full1n.txt" "$W/full1.txt"
	sleep 1.6
	rm -f "$M/fill"
	wait $k
	c=$?
	kill "${pids[-1]}"; wait "${pids[-1]}" 2> /dev/null
	k=$(( $(sq "$M/f.db" 'SELECT count(*) FROM snapshot') - before ))
	local id bad=0 t0f t1n
	t0f=$("$BIN" top -f "$W/full0.txt" -b -H -n 0 -s name) t1n=$("$BIN" top -f "$W/full1.txt" -b -H -n 0 -s name)
	for id in $(sq "$M/f.db" "SELECT id FROM snapshot ORDER BY id LIMIT -1 OFFSET $before"); do
		out=$("$BIN" report top -d "$M/f.db" --at "$id" -b -H -n 0 -s name)
		[ "$out" = "$t0f" ] || [ "$out" = "$t1f" ] || [ "$out" = "$t1n" ] || bad=$((bad + 1))
	done
	grep -q newmod_alloc <<< "$t1n" || bad=$((bad + 1000))
	if [ $c = 3 ] && [ $k -ge 2 ] && [ $k -lt 12 ] && grep -q "snapshot skipped: no space left on the file system of the database" "$W/err" &&
		[ "$(sq "$M/f.db" 'PRAGMA integrity_check')" = ok ] && [ -z "$(sq "$M/f.db" 'PRAGMA foreign_key_check')" ] &&
		[ $bad = 0 ]; then
		ok "record -i on a disk full for a while: exit 3, $k of 12 recorded, each one of its inputs whole, the rest skipped and said"
	else nok "record -i on a disk full for a while: exit 3, some recorded, the rest skipped and said, the database intact" \
		"exit $c, $k recorded, $bad not as captured, $(sq "$M/f.db" 'PRAGMA integrity_check'): $(head -5 "$W/err")"; fi
	umount "$M"
}
full_disk

done_tap
