#!/usr/bin/env bash
# The monitoring files shipped in monitoring/: the alert rules pass
# 'promtool check rules' and their unit tests ('promtool test rules'), the
# export passes 'promtool check metrics' in every form, and every metric
# the rules and the Grafana dashboard use is one the export writes (or
# node_exporter's own). TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
MON=$HERE/../monitoring
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -40 | sed 's/^/#   /'; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
s=$HERE/samples/format-2.0.txt

if command -v promtool > /dev/null; then
	out=$(promtool check rules "$MON/allocinfo.rules.yml" 2>&1) && ok "promtool check rules allocinfo.rules.yml" ||
		nok "promtool check rules allocinfo.rules.yml" "$out"
	out=$(cd "$HERE/monitoring" && promtool test rules allocinfo.rules.test.yml 2>&1) &&
		ok "promtool test rules: the alerts fire (and only) as the tests say" ||
		nok "promtool test rules: the alerts fire (and only) as the tests say" "$out"
	for args in "" "--by subsys" "--by module --by subsys --by file --by tag -n 3" "-n 2"; do
		out=$("$BIN" export -q -f "$s" $args | promtool check metrics 2>&1) && [ -z "$out" ] &&
			ok "promtool check metrics: export $args" || nok "promtool check metrics: export $args" "$out"
	done
else
	skip "promtool tests" "promtool not installed (Debian package prometheus; make deps)"
fi

# every metric the export writes, in all its forms
echo 1 > "$W/mp"
for by in tag module subsys file; do
	ALLOCINFO_MEM_PROFILING=$W/mp "$BIN" export -q -f "$s" --by $by -n 2
done | awk '$1 == "#" && $2 == "TYPE" { print $3 }' | sort -u > "$W/names"
dup=$("$BIN" export -q -f "$s" --by tag --by module --by subsys --by file | awk '$1 == "#" && $2 == "TYPE" { print $3 }' | sort | uniq -d)
[ -z "$dup" ] && ok "export with every --by: no metric name twice (one file for the collector)" ||
	nok "export with every --by: no metric name twice" "$dup"

# the names the rules and the dashboard use
python3 - "$MON/allocinfo.rules.yml" "$MON/grafana-allocinfo.json" "$W/names" <<'PY' > "$W/used" 2> "$W/err"
import json, re, sys
rules, dash, names = sys.argv[1:4]
exprs = []
for line in open(rules):
    m = re.match(r"\s*expr:\s*(.*)$", line)
    if m:
        exprs.append(("rules", m.group(1)))
d = json.load(open(dash))
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), "panel ids repeat"
for p in d["panels"]:
    assert p.get("targets"), "panel %s has no query" % p["title"]
    for t in p["targets"]:
        exprs.append(("dashboard", t["expr"]))
for q in d["templating"]["list"]:
    if q["type"] == "query":
        exprs.append(("dashboard", q["definition"]))
for where, e in exprs:
    for name in sorted(set(re.findall(r"\b((?:allocinfo|node)_[a-z_]+)\b", e))):
        print(where, name)
PY
if [ -s "$W/err" ]; then
	nok "the rules and the dashboard parse" "$(cat "$W/err")"
else
	ok "the dashboard is JSON with unique panel ids and a query in each panel"
	check_names() {
		local where=$1 missing
		missing=$(awk -v w="$where" '$1 == w { print $2 }' "$W/used" | sort -u | while read -r m; do
			case $m in node_textfile_mtime_seconds) continue ;; esac
			grep -qx "$m" "$W/names" || echo "$m"
		done)
		[ -z "$missing" ] && ok "every metric used by the $where is one the export writes ($(awk -v w="$where" '$1 == w' "$W/used" | sort -u | wc -l) names)" ||
			nok "every metric used by the $where is one the export writes" "missing: $missing"
	}
	check_names rules
	check_names dashboard
fi
echo "# $n tests, $failed failed"
[ "$failed" -eq 0 ]
