#!/usr/bin/env bash
# A fleet, synthetic and local: four hosts (directories read through
# ALLOCINFO_SYSROOT: /proc/allocinfo, machine id, boot id, node name), 12
# runs of the systemd service's commands 5 minutes apart (--time), with
# what a real fleet has: page cache warming up, heaps growing, slab
# jitter, a one-time step, a slow creep, a cache that fills and levels
# off, a module unloaded; a leak planted on web1 and web2, a capture cut
# short and a header-only one on web1, a reboot inside the leak on web2,
# web3 and web4 clean. Then: report leaks per host and --all-hosts over
# the merged databases and over the captures imported from directories
# find exactly the planted leak at the rate computed here from the
# captures (least squares, awk), exit 0 on the clean hosts; the suspects'
# metrics served by node_exporter (127.0.0.1, a port the kernel picks,
# under a timeout, killed at the end) and the alert rules' unit tests.
# TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap.sh"
tap_workdir
for tool in python3 curl; do
	command -v $tool > /dev/null || nok "$tool is installed (make deps)"
done
NE=$(command -v prometheus-node-exporter || command -v node_exporter) || nok "prometheus-node-exporter is installed (make deps)"

base=$HERE/samples/linux-6.12-x86_64.txt
t0=1700000000 dt=300 runs=12
# the leak: drivers/net/x.c:12 [xnet] func:x_alloc, 204,800 bytes every 5
# minutes (683 B/s) with up to 16 KiB of jitter either way
leak_step=204800
hosts="web1 web2 web3 web4"
mid() { echo "$(printf '%s' "$1" | md5sum | cut -c1-32)"; }

# capture HOST K BOOT-K: the sample with the host's workload at run K
# (BOOT-K: runs since its boot)
capture() {
	awk -v host="$1" -v k="$2" -v bk="$3" -v step=$leak_step '
	function jit(a, s) { return int((rand() * 2 - 1) * a) }
	BEGIN { srand(length(host) * 1000 + k * 7 + (host == "web2") * 13 + (host == "web3") * 17 + (host == "web4") * 19) }
	NR <= 2 { print; next }
	# slab jitter, page cache warming up, a heap growing (anonymous memory)
	$3 == "mm/slub.c:2474" { $1 = $1 + jit(2097152); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	$3 == "mm/filemap.c:1965" { $1 = $1 + 104857600 * (bk < 6 ? bk : 6) + jit(65536); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	$3 == "mm/memory.c:1078" { $1 = $1 + 30720000 * bk + jit(1048576); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	# the dentry cache steps up once by a page; a creep of 64 bytes; the
	# inode cache fills for 4 runs and levels off
	$3 == "fs/dcache.c:1650" { $1 = $1 + (bk >= 5 ? 4096 : 0); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	$3 == "fs/inode.c:267" { $1 = $1 + 1048576 * (bk < 4 ? bk : 4) + jit(8192); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	$3 == "kernel/fork.c:311" { $1 = $1 + 64 * int(bk / 2); printf "%12d %8d %s %s \n", $1, $2, $3, $4; next }
	{ print }
	END {
		# web3 unloads its xfs module after run 7
		if (host != "web3" || k < 8)
			printf "%12d %8d fs/xfs/xfs_buf.c:372 [xfs] func:xfs_buf_alloc_pages \n", 65536 + jit(16384), 16
		if (host == "web1" || host == "web2")
			printf "%12d %8d drivers/net/x.c:12 [xnet] func:x_alloc \n", 1048576 + step * bk + jit(16384), 100 + bk
	}' "$base"
}

mkdir -p "$W/textfile" "$W/cap"
for h in $hosts; do
	r=$W/hosts/$h
	mkdir -p "$r/proc/sys/kernel/random" "$r/proc/sys/vm" "$r/etc" "$W/cap/$h" "$W/textfile/$h"
	echo "$h" > "$r/proc/sys/kernel/hostname"
	echo 6.12.0-fleet > "$r/proc/sys/kernel/osrelease"
	mid "$h" > "$r/etc/machine-id"
	echo 1 > "$r/proc/sys/vm/mem_profiling"
done
# the service's runs: record, prune, export, report leaks; a JSON capture
# of each run kept for the import
for k in $(seq 0 $((runs - 1))); do
	for h in $hosts; do
		r=$W/hosts/$h
		bk=$k boot=1
		[ $h = web2 ] && [ $k -ge 6 ] && bk=$((k - 6)) boot=2
		echo "boot-$h-$boot" > "$r/proc/sys/kernel/random/boot_id"
		capture $h $k $bk > "$W/full.txt"
		cp "$W/full.txt" "$r/proc/allocinfo"
		# web1: run 7 cut in the middle of a line, run 9 the header only
		[ $h = web1 ] && [ $k = 7 ] && { head -n 300 "$W/full.txt"; printf '%12d %8d mm/sl' 4096 1; } > "$r/proc/allocinfo"
		[ $h = web1 ] && [ $k = 9 ] && head -n 2 "$W/full.txt" > "$r/proc/allocinfo"
		[ "$(cat "$r/proc/allocinfo")" = "$(cat "$W/full.txt")" ] && cp "$W/full.txt" "$W/truth-$h-$k.txt"
		export ALLOCINFO_SYSROOT=$r
		"$BIN" record -q -d "$W/$h.db" --time $((t0 + k * dt)) 2>> "$W/$h.journal"
		echo "$h $k record $?" >> "$W/status"
		"$BIN" prune -d "$W/$h.db" --keep 30d --now $((t0 + k * dt)) > /dev/null
		"$BIN" export -q --by tag --by module --by subsys -n 50 -o "$W/textfile/$h/allocinfo.prom"
		"$BIN" report leaks --grace 0 -d "$W/$h.db" -F prometheus -o "$W/textfile/$h/allocinfo-leaks.prom"
		echo "$h $k leaks $?" >> "$W/status"
		"$BIN" export -q -F json -o "$W/cap/$h/run-$(printf %02d $k).json"
		unset ALLOCINFO_SYSROOT
		# the capture's time: the run's, as record --time gave it
		python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["taken_at"] = float(sys.argv[2]); json.dump(j, open(sys.argv[1], "w"))' \
			"$W/cap/$h/run-$(printf %02d $k).json" $((t0 + k * dt)) 2> /dev/null
	done
done
check "record refused web1's two bad captures (exit 3) and nothing else" "web1 7 record 3
web1 9 record 3" "$(awk '$3 == "record" && $4 != 0' "$W/status")"

# the leak's rate: the least-squares slope of its bytes over the complete
# captures of the last boot, computed here
want_rate() {	# want_rate HOST FIRST-RUN
	for k in $(seq "$2" $((runs - 1))); do
		[ -e "$W/truth-$1-$k.txt" ] || continue
		awk -v t=$((k * dt)) '$3 == "drivers/net/x.c:12" { print t, $1 }' "$W/truth-$1-$k.txt"
	done | awk '{ n++; x[n] = $1; y[n] = $2; sx += $1; sy += $2 }
	END { mx = sx / n; my = sy / n
		for (i = 1; i <= n; i++) { sxx += (x[i] - mx) ^ 2; sxy += (x[i] - mx) * (y[i] - my) }
		printf "%+.2f\n", sxy / sxx }'
}
r1=$(want_rate web1 0) r2=$(want_rate web2 6)
echo "# planted: $leak_step bytes per $dt s; least squares over the captures: web1 $r1, web2 (last boot) $r2 B/s"

# each host's own database, the defaults
for h in $hosts; do
	"$BIN" report leaks --grace 0 -d "$W/$h.db" -b > "$W/$h.leaks"
	rc=$?
	got=$(awk '!/^#/ && $1 ~ /^[+-]/ { print $1, $NF }' "$W/$h.leaks")
	case $h in
	web1) check "web1: exactly the planted leak, at $r1 B/s, exit 4" "4 $r1 func:x_alloc" "$rc $got" ;;
	web2) check "web2 (rebooted inside the leak): exactly the planted leak in the new boot, at $r2 B/s, exit 4" "4 $r2 func:x_alloc" "$rc $got" ;;
	*) check "$h (no leak): no suspect, exit 0" "0 " "$rc $got" ;;
	esac
done
grep -q '^# skipped 2 incomplete or refused snapshot(s) of web1: snapshot 8 refused (1 malformed line(s)' "$W/web1.leaks" &&
	ok "web1: says what it skipped and why" || nok "web1: says what it skipped and why" "$(cat "$W/web1.leaks")"
grep -q '^# not analysed: 6 snapshot(s) of 1 earlier boot(s) of web2' "$W/web2.leaks" &&
	ok "web2: says the earlier boot was not analysed" || nok "web2: says the earlier boot was not analysed" "$(cat "$W/web2.leaks")"
grep -q 'more left out as expected growth' "$W/web4.leaks" &&
	ok "web4: says the page cache and heap growth were left out as expected" || nok "web4: says the expected growth was left out" "$(cat "$W/web4.leaks")"
out=$("$BIN" report leaks --grace 0 -d "$W/web4.db" -b -H --no-default-ignore | awk '{ print $NF }' | sort | tr '\n' ' ')
check "web4 --no-default-ignore: the heap's steady growth shows (the page cache levelled off)" "func:folio_prealloc " "$out"

# the fleet: the four databases merged, then --all-hosts
"$BIN" merge -d "$W/fleet.db" "$W"/web*.db > /dev/null
check "merge: 4 hosts, 48 snapshots" "4 48" "$(sqlite3 "$W/fleet.db" "SELECT count(DISTINCT machine_id), count(*) FROM snapshot" | tr '|' ' ')"
"$BIN" report leaks --grace 0 -d "$W/fleet.db" --all-hosts -b -H > "$W/all"
check "report leaks --all-hosts: exactly the planted leak on web1 and web2, at their rates, exit 4" \
	"4 web1 $r1 func:x_alloc
web2 $r2 func:x_alloc" "$? $(awk '{ print $1, $2, $NF }' "$W/all")"
"$BIN" report leaks --grace 0 -d "$W/fleet.db" --all-hosts -F json > "$W/all.json"
out=$(python3 - "$W/all.json" "$(mid web1)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = sorted((h["host"], h["machine_id"], x["func"], x["module"], x["line"]) for h in j["hosts"] for b in h["boots"] for x in b["suspects"])
print(len(j["hosts"]), s[0][1] == sys.argv[2], [(a, c, d, e) for a, b, c, d, e in s])
PY
)
check "report leaks --all-hosts -F json: 4 hosts by machine id, the 2 suspects" \
	"4 True [('web1', 'x_alloc', 'xnet', 12), ('web2', 'x_alloc', 'xnet', 12)]" "$out"

# the captures, one directory per host, imported in one call each
for h in $hosts; do
	"$BIN" record -q -d "$W/imp.db" --import "$W/cap/$h" 2> "$W/imp.err"
	echo "$h $?" >> "$W/imp.status"
done
check "record --import: exit 3 for web1 (2 refused), 0 for the others" "web1 3 web2 0 web3 0 web4 0" "$(tr '\n' ' ' < "$W/imp.status" | sed 's/ $//')"
check "the same suspects as the merged databases" "$(cat "$W/all")" "$("$BIN" report leaks --grace 0 -d "$W/imp.db" --all-hosts -b -H)"
"$BIN" record -q -d "$W/imp.db" --import "$W/cap/web2" 2> "$W/imp.err"
check "importing a directory again adds nothing" "0 48" "$? $(sqlite3 "$W/imp.db" 'SELECT count(*) FROM snapshot')"
grep -q '0 capture(s) recorded, 0 refused, 12 already there' "$W/imp.err" && ok "and says so" || nok "and says so" "$(cat "$W/imp.err")"

# the suspects served by node_exporter's textfile collector
"$BIN" report leaks --grace 0 -d "$W/fleet.db" --all-hosts -F prometheus -o "$W/textfile/allocinfo-leaks.prom"
check "report leaks --all-hosts -F prometheus: exit 4" 4 $?
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { local i; for i in $(seq $(($2 * 10))); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; return 1; }
if [ -n "$NE" ]; then
	mkdir -p "$W/served"
	cp "$W/textfile/allocinfo-leaks.prom" "$W/served/"
	pne=$(free_port)
	timeout 60 "$NE" --web.listen-address=127.0.0.1:$pne --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$W/served" > "$W/ne.log" 2>&1 &
	pids+=($!)
	if wait_http "http://127.0.0.1:$pne/metrics" 15; then
		curl -sf "http://127.0.0.1:$pne/metrics" > "$W/scrape"
		check "node_exporter (127.0.0.1:$pne) read the file without error" "node_textfile_scrape_error 0" "$(grep '^node_textfile_scrape_error' "$W/scrape")"
		# node_exporter writes the labels in its own order: parsed by name
		python3 - "$W/scrape" > "$W/served.txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r'^(allocinfo_leak_[a-z_]+)\{(.*)\} (\S+)$', line)
    if not m:
        continue
    l = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    if m.group(1) == "allocinfo_leak_rate_bytes_per_second":
        print("rate", l["nodename"], l["machine_id"], l["func"], l["module"], "%+.2f" % float(m.group(3)))
    elif m.group(1) == "allocinfo_leak_suspects":
        print("count", l["nodename"], m.group(3))
PY
		check "it serves the two suspects, by node name and machine id, at their rates" \
			"rate web1 $(mid web1) x_alloc xnet $r1
rate web2 $(mid web2) x_alloc xnet $r2" "$(grep '^rate' "$W/served.txt" | sort)"
		check "and the count of suspects of each host" "web1 1 web2 1 web3 0 web4 0" \
			"$(grep '^count' "$W/served.txt" | sort | awk '{ printf "%s%s %s", (NR > 1 ? " " : ""), $2, $3 }')"
	else
		nok "node_exporter answers on 127.0.0.1:$pne" "$(tail -5 "$W/ne.log")"
	fi
fi
# the per-host files the service wrote: the clean host says 0, web1 its suspect
check "the service's leaks file on web4: allocinfo_leak_suspects 0" "allocinfo_leak_suspects 0" "$(grep '^allocinfo_leak_suspects' "$W/textfile/web4/allocinfo-leaks.prom")"
check "on web1: its suspect" "x_alloc $r1" "$(sed -n 's/^allocinfo_leak_rate_bytes_per_second{.*func="\([^"]*\)".*} \(.*\)/\1 \2/p' "$W/textfile/web1/allocinfo-leaks.prom" | awk '{ printf "%s %+.2f\n", $1, $2 }')"
if [ -z "$PROMTOOL" ]; then
	skip "promtool test rules: growth that warms up does not fire, leaks do" "$PROMTOOL_HINT"
else
	out=$(cd "$HERE/monitoring" && "$PROMTOOL" test rules allocinfo.rules.test.yml allocinfo.shapes.test.yml 2>&1) &&
		ok "promtool test rules: growth that warms up does not fire, leaks do" || nok "promtool test rules" "$out"
fi

done_tap
