#!/usr/bin/env bash
# The monitoring files shipped in monitoring/: the alert rules pass
# 'promtool check rules' and their unit tests ('promtool test rules'), the
# export passes 'promtool check metrics' in every form, and every metric
# the rules and the Grafana dashboard use is one the export writes (or
# node_exporter's own) or report leaks -F prometheus writes. Without
# promtool its checks are SKIPs that say how to get it (never passes).
# TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
MON=$HERE/../monitoring
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TAP_DETAIL_LINES=40
. "$HERE/tap.sh"
s=$HERE/samples/format-2.0.txt

# the shapes' test is the tool's metrics of today: written again, it is
# the same file (else: python3 tests/monitoring/shapes.py BINARY
# tests/monitoring/allocinfo.shapes.test.yml, and look at the change)
if out=$(python3 "$HERE/monitoring/shapes.py" "$BIN" "$W/shapes.test.yml" 2>&1); then
	out=$(diff -u "$HERE/monitoring/allocinfo.shapes.test.yml" "$W/shapes.test.yml" | head -20) && [ -z "$out" ] &&
		ok "allocinfo.shapes.test.yml holds the metrics the tool writes for the shapes (shapes.py)" ||
		nok "allocinfo.shapes.test.yml holds the metrics the tool writes for the shapes (shapes.py)" "$out"
else
	nok "shapes.py: the tool names the leak and writes the shapes' metrics" "$out"
fi

# a database with a leak suspect, for the metrics of report leaks
for k in 0 1 2 3 4 5; do
	{ cat "$HERE/samples/linux-6.12-x86_64.txt"; printf '%12d %8d drivers/net/x.c:12 [xnet] func:x_alloc \n' $((1048576 + k * 204800)) $((k + 1)); } > "$W/c.txt"
	"$BIN" record -q -d "$W/l.db" -f "$W/c.txt" --time $((1700000000 + k * 300)) --host web1 --boot-id b1
done
"$BIN" report leaks --grace 0 -d "$W/l.db" -F prometheus > "$W/leaks.prom"
check_leaks=$?

metric_forms=("" "--by subsys" "--by module --by subsys --by file --by tag -n 3" "-n 2")
promtool_checks() {
	local args out
	if [ -z "$PROMTOOL" ]; then
		skip "promtool check rules allocinfo.rules.yml" "$PROMTOOL_HINT"
		skip "promtool test rules: the alerts fire (and only) as the tests say" "$PROMTOOL_HINT"
		skip "promtool test rules: exponential warm-ups and a leak under jitter" "$PROMTOOL_HINT"
		for args in "${metric_forms[@]}"; do skip "promtool check metrics: export $args" "$PROMTOOL_HINT"; done
		skip "promtool check metrics: report leaks -F prometheus" "$PROMTOOL_HINT"
		return
	fi
	out=$("$PROMTOOL" check rules "$MON/allocinfo.rules.yml" 2>&1) && ok "promtool check rules allocinfo.rules.yml" ||
		nok "promtool check rules allocinfo.rules.yml" "$out"
	out=$(cd "$HERE/monitoring" && "$PROMTOOL" test rules allocinfo.rules.test.yml 2>&1) &&
		ok "promtool test rules: the alerts fire (and only) as the tests say" ||
		nok "promtool test rules: the alerts fire (and only) as the tests say" "$out"
	out=$(cd "$HERE/monitoring" && "$PROMTOOL" test rules allocinfo.shapes.test.yml 2>&1) &&
		ok "promtool test rules: 200 MB exponential warm-ups never fire, a 2 KiB/s leak under +-5 MB of jitter does" ||
		nok "promtool test rules: exponential warm-ups and a leak under jitter (allocinfo.shapes.test.yml)" "$out"
	for args in "${metric_forms[@]}"; do
		out=$("$BIN" export -q -f "$s" $args | "$PROMTOOL" check metrics 2>&1) && [ -z "$out" ] &&
			ok "promtool check metrics: export $args" || nok "promtool check metrics: export $args" "$out"
	done
	out=$("$PROMTOOL" check metrics < "$W/leaks.prom" 2>&1) && [ -z "$out" ] && [ $check_leaks = 4 ] &&
		ok "promtool check metrics: report leaks -F prometheus (exit 4: a suspect)" ||
		nok "promtool check metrics: report leaks -F prometheus (exit $check_leaks)" "$out"
}
n_promtool=$n
promtool_checks
# without promtool, each of these is a SKIP that says how to get it:
# never a pass, and not a failure of the tool
if [ -n "$PROMTOOL" ]; then
	want=$((n - n_promtool))
	inner=$(PROMTOOL='' promtool_checks 2>&1)
	check "without promtool: each of its $want checks a SKIP saying how to get it; none passed, none failed" \
		"$want 0 0" "$(grep -c "^ok [0-9]* - promtool .* # SKIP promtool is not installed: make deps" <<< "$inner") \
$(grep '^ok .*promtool' <<< "$inner" | grep -vc '# SKIP') $(grep -c '^not ok' <<< "$inner")"
else
	skip "without promtool: its checks are SKIPs (checked where promtool is)" "$PROMTOOL_HINT"
fi
grep -q '^allocinfo_leak_rate_bytes_per_second{file="drivers/net/x.c",line="12",func="x_alloc",module="xnet"} ' "$W/leaks.prom" &&
	ok "report leaks -F prometheus: the suspect, labelled as allocinfo_bytes is" ||
	nok "report leaks -F prometheus: the suspect, labelled as allocinfo_bytes is" "$(cat "$W/leaks.prom")"

# the families join: built-in code is module="vmlinux" in allocinfo_bytes
# as in allocinfo_module_bytes, and every module of one is in the other
m=$HERE/samples/modules-dups-negative.txt
out=$("$BIN" export -q -f "$m" --by tag --by module | python3 -c '
import re, sys
t, g = set(), set()
for line in sys.stdin:
    a = re.match(r"^allocinfo_bytes\{.*,module=\"([^\"]*)\"", line)
    b = re.match(r"^allocinfo_module_bytes\{module=\"([^\"]*)\"\}", line)
    if a: t.add(a.group(1))
    if b: g.add(b.group(1))
print("ok" if t and t == g and "vmlinux" in t and "" not in t else "allocinfo_bytes %s, allocinfo_module_bytes %s" % (sorted(t), sorted(g)))')
check "export: the module labels of allocinfo_bytes and allocinfo_module_bytes are the same set (vmlinux for built-in code)" ok "$out"

# the functions the rules leave out as expected growth are those of the
# tool (src/model.c): the regex of AllocinfoTagGrowing, every time it is used
out=$(python3 - "$MON/allocinfo.rules.yml" "$HERE/../src/model.c" <<'PY'
import re, sys
rules, src = open(sys.argv[1]).read(), open(sys.argv[2]).read()
globs = re.findall(r'"([^"]+)"', re.search(r"ai_expected_growth\[\] = \{(.*?)NULL", src, re.S).group(1))
want = "|".join(g.replace("*", ".*") for g in globs)
used = re.findall(r'func!~"([^"]+)"', rules)
print("ok %d" % len(used) if used and all(u == want for u in used) else "rules: %s\ntool:  %s" % (used, want))
PY
)
check "the rules leave out the tool's functions of expected growth (3 windows)" "ok 3" "$out"

# every metric the export writes, in all its forms
echo 1 > "$W/mp"
for by in tag module subsys file; do
	ALLOCINFO_MEM_PROFILING=$W/mp "$BIN" export -q -f "$s" --by $by -n 2
done | cat - "$W/leaks.prom" | awk '$1 == "#" && $2 == "TYPE" { print $3 }' | sort -u > "$W/names"
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
# the dashboard shows the leaks: a panel for the suspects, their rates and
# the leaks that stopped (json.load: the file is JSON as Grafana imports it)
out=$(python3 - "$MON/grafana-allocinfo.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
want = ["allocinfo_leak_suspects", "allocinfo_leak_rate_bytes_per_second", "allocinfo_leak_stopped_bytes"]
have = {}
for p in d["panels"]:
    for t in p["targets"]:
        for m in want:
            if re.search(r"\b%s\b" % m, t["expr"]):
                have[m] = p["title"]
print(" ".join(m for m in want if m not in have) or "ok")
PY
)
check "the Grafana dashboard has leak panels (suspects, rate, stopped)" ok "$out"
done_tap
