#!/usr/bin/env bash
# End to end, on loopback only: the export written for the textfile
# collector, served by Debian's prometheus-node-exporter, scraped with
# curl; then a Prometheus server scraping it every second while a planted
# leak grows, its query API asked for the leak, and the alert rules
# loaded. Both servers are this test's own processes on free ports of
# 127.0.0.1 (not the system's services), each under a timeout, killed at
# the end. TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap.sh"
tap_workdir
finish() { done_tap; exit; }

NE=$(command -v prometheus-node-exporter || command -v node_exporter)
PROM=$(command -v prometheus)
if [ -z "$NE" ] || ! command -v curl > /dev/null || ! command -v python3 > /dev/null; then
	nok "prometheus-node-exporter, curl and python3 are installed (make deps)"
	finish
fi

# a free TCP port on 127.0.0.1 (the kernel picks it)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_http URL SECONDS: until URL answers
wait_http() {
	local i
	for i in $(seq $(($2 * 10))); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}

base=$HERE/samples/linux-6.12-x86_64.txt
start=4194304 step=65536
# capture k: the sample plus fs/leaky.c growing by $step from 4 MiB (among
# the 50 largest tags, which the export writes one by one)
capture() {
	{ cat "$base"; printf '%12d %8d fs/leaky.c:77 func:leaky_alloc \n' $((start + $1 * step)) $((1 + $1)); } > "$W/cap.txt"
}
mkdir -p "$W/textfile"
export_k() {
	capture "$1"
	"$BIN" export -q -f "$W/cap.txt" --by tag --by module --by subsys -n 50 -o "$W/textfile/allocinfo.prom"
}
export_k 0

# node_exporter with the textfile collector only
pne=$(free_port)
timeout 120 "$NE" --web.listen-address=127.0.0.1:$pne --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$W/textfile" > "$W/ne.log" 2>&1 &
pids+=($!)
if ! wait_http "http://127.0.0.1:$pne/metrics" 15; then
	nok "node_exporter answers on 127.0.0.1:$pne" "$(tail -5 "$W/ne.log")"
	finish
fi
ok "node_exporter answers on 127.0.0.1:$pne"
curl -sf "http://127.0.0.1:$pne/metrics" > "$W/scrape"
check "the textfile collector read the file without error" "node_textfile_scrape_error 0" "$(grep '^node_textfile_scrape_error' "$W/scrape")"
want=$(grep '^allocinfo_bytes{file="fs/leaky.c"' "$W/textfile/allocinfo.prom" | awk '{ print $NF }')
check "scraped: the planted tag's allocinfo_bytes ($start)" "$start $start" \
	"$(grep '^allocinfo_bytes{.*file="fs/leaky.c"' "$W/scrape" | awk '{ printf "%d", $NF }') $want"
want=$(grep -c '^allocinfo_' "$W/textfile/allocinfo.prom")
check "scraped: every series of the file ($want)" "$want" "$(grep -c '^allocinfo_' "$W/scrape")"
want=$(awk 'NR > 2 && $3 ~ /^mm\// { s += $1 } END { print s }' "$base")
check "scraped: allocinfo_subsys_bytes{subsys=\"mm/\"} is the sum of mm/ ($want)" "$want" \
	"$(awk '/^allocinfo_subsys_bytes\{subsys="mm\/"\}/ { printf "%d", $NF }' "$W/scrape")"

if [ -z "$PROM" ]; then
	nok "prometheus is installed (make deps)"
	finish
fi
# a Prometheus server scraping it every second, with the alert rules
pp=$(free_port)
cat > "$W/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $HERE/../monitoring/allocinfo.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$pne']
YML
timeout 120 "$PROM" --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/tsdb" \
	--web.listen-address=127.0.0.1:$pp > "$W/prom.log" 2>&1 &
pids+=($!)
if ! wait_http "http://127.0.0.1:$pp/-/ready" 30; then
	nok "Prometheus is ready on 127.0.0.1:$pp" "$(tail -5 "$W/prom.log")"
	finish
fi
ok "Prometheus is ready on 127.0.0.1:$pp"
# the leak grows, one export a second
last=8
for k in $(seq 1 $last); do
	sleep 1
	export_k "$k"
done
sleep 3
q() { curl -sf --get "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1"; }
val() { python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(" ".join(sorted(x["value"][1] for x in r)))'; }
check "query API: the target is up" 1 "$(q 'up{job="node"}' | val)"
want=$((start + last * step))
check "query API: the planted leak's last value ($want bytes)" "$want" \
	"$(q 'max_over_time(allocinfo_bytes{file="fs/leaky.c"}[1m])' | val)"
check "query API: it grew over the last minute (deriv > 0)" 1 \
	"$(q 'count(deriv(allocinfo_bytes{file="fs/leaky.c"}[1m]) > 0)' | val)"
check "query API: nothing else grew" 1 \
	"$(q 'count(deriv(allocinfo_bytes[1m]) > 0)' | val)"
check "query API: allocinfo_bytes joins allocinfo_module_bytes on module (every series)" \
	"$(q 'count(allocinfo_bytes)' | val)" \
	"$(q 'count(allocinfo_bytes * on (instance, job, module) group_left () (allocinfo_module_bytes > 0))' | val)"
out=$(curl -sf "http://127.0.0.1:$pp/api/v1/rules" | python3 -c '
import json, sys
g = json.load(sys.stdin)["data"]["groups"]
print(" ".join(sorted(r["name"] + ":" + r["health"] for x in g for r in x["rules"])))')
check "the alert rules are loaded and evaluated" \
	"AllocinfoBrokenAccounting:ok AllocinfoExportStale:ok AllocinfoLeakSuspect:ok AllocinfoProfilingDisabled:ok AllocinfoSubsystemGrowing:ok AllocinfoTagGrowing:ok allocinfo:subsys_unexpected_bytes:ok" "$out"
finish
