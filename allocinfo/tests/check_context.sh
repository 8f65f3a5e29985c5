#!/usr/bin/env bash
# context: the kernel's call-chain capture files (debugfs
# alloc_tag/capture) read from samples (tests/context): the caller split
# and tree, JSON, Prometheus with bounded cardinality, malformed input;
# choose/start/stop against a directory that stands for debugfs, and a
# failed write reported with the kernel's last_error. TAP output.
set -u
BIN=${1:?binary}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap.sh"
tap_workdir
s=$HERE/context/xas_alloc.txt

out=$("$BIN" context --help); rc=$?
[ $rc -eq 0 ] && [[ $out == "usage: allocinfo context"* ]] && ok "context --help" || nok "context --help" "$out"

out=$("$BIN" context -f "$s" --min 4 --depth 0)
check "the split at the first function with several callers, small ones in other" \
	"  callers of xas_store: shmem_add_to_page_cache 90%, add_to_swap_cache 4%, other 6%" \
	"$(grep 'callers of xas_store' <<< "$out")"
check "a module tag's callers" \
	"  callers of ctx_call [pftag_ctx]: ctx_caller_a [pftag_ctx] 90%, ctx_caller_b [pftag_ctx] 6%, ctx_caller_c [pftag_ctx] 4%" \
	"$(grep 'callers of ctx_call' <<< "$out")"
out=$("$BIN" context -f "$s")
check "the tree: the common part, then each caller with its share" \
	" 99.0%  xas_alloc;xas_create;xas_store|90.0%    shmem_add_to_page_cache|1.0%  (overflow: chains past max_chains)" \
	"$(grep -o ' 99.0%  xas_alloc;xas_create;xas_store$' <<< "$out")|$(grep -o '90.0%    shmem_add_to_page_cache' <<< "$out")|$(grep -o '1.0%  (overflow.*' <<< "$out")"
out=$("$BIN" context -f "$s" --by calls --depth 1)
check "--by calls, --depth 1: a line a tag, and the overflow" "3" "$(grep -c '^  *[0-9.]*%  ' <<< "$out")"

out=$("$BIN" context -f "$s" --json -n 2)
if py=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["tags"]
print(len(t), [len(x["top"]) for x in t], t[0]["top"][0]["stack"][3], t[1]["module"], t[0]["calls"])
' <<< "$out" 2>&1); then
	check "JSON: two tags, the 2 largest chains each, frames innermost first" \
		"2 [2, 2] shmem_add_to_page_cache pftag_ctx 1000" "$py"
else
	nok "JSON parses" "$py"
fi

out=$("$BIN" context -f "$s" --prometheus --top 2)
check "Prometheus: tags x (top + other) series a metric" "6 6 2" \
	"$(grep -c '^allocinfo_context_bytes{' <<< "$out") $(grep -c '^allocinfo_context_calls{' <<< "$out") $(grep -c '^allocinfo_context_chains{' <<< "$out")"
check "Prometheus: no two series with the same labels" "" \
	"$(grep -v '^#' <<< "$out" | sed 's/ [0-9]*$//' | sort | uniq -d)"
check "Prometheus: other is the tag's total less its top chains" "60" \
	"$(grep '^allocinfo_context_calls{file="lib/xarray.c:378".*chain="other"}' <<< "$out" | awk '{ print $2 }')"
# Chains whose first four callers are the same share a series.
sed 's/xas_store;__xa_store;xa_store/xas_store;shmem_add_to_page_cache;shmem_alloc_and_add_folio/' "$s" > "$W/same.txt"
out=$("$BIN" context -f "$W/same.txt" --prometheus --top 5)
check "Prometheus: chains with the same label are summed" "920" \
	"$(grep '^allocinfo_context_calls{file="lib/xarray.c:378".*shmem_add_to_page_cache;shmem_alloc_and_add_folio"}' <<< "$out" | awk '{ print $2 }')"

out=$("$BIN" context -f "$HERE/context/empty.txt")
check "nothing chosen says how to choose" "no tag chosen: allocinfo context choose TAG, then start" "$out"
"$BIN" context -f "$HERE/context/malformed.txt" > "$W/out" 2> "$W/err"
check "malformed lines are skipped, exit 3" "3 2" "$? $(grep -c 'malformed line skipped' "$W/err")"
printf 'allocinfo - version: 1.0\n' > "$W/bad"
"$BIN" context -f "$W/bad" > /dev/null 2> "$W/err"
check "not a capture file: exit 1" "1" "$?"
grep -q "not a capture file" "$W/err" && ok "and says so" || nok "and says so" "$(cat "$W/err")"
"$BIN" context -d "$W/none" > /dev/null 2> "$W/err"
check "no capture directory: exit 1" "1" "$?"
grep -q "CONFIG_MEM_ALLOC_PROFILING_CAPTURE" "$W/err" && ok "and says what the kernel needs" || nok "and says what the kernel needs" "$(cat "$W/err")"

for args in "--by weight" "--json --prometheus" "frobnicate" "--depth 99" "-n 0" "choose" "show extra"; do
	"$BIN" context -f "$s" $args > /dev/null 2>&1
	check "usage error exits 2: context $args" 2 $?
done

# A directory that stands for debugfs: writes land in its files.
d=$W/capture
mkdir "$d"
: > "$d/tags"; : > "$d/control"; : > "$d/last_error"
"$BIN" context -d "$d" choose func:xas_alloc && check "choose writes the tag" "func:xas_alloc" "$(cat "$d/tags")"
: > "$d/tags"; "$BIN" context -d "$d" unchoose lib/xarray.c:378 && check "unchoose writes it with a -" "-lib/xarray.c:378" "$(cat "$d/tags")"
"$BIN" context -d "$d" start && check "start" "start" "$(cat "$d/control")"
: > "$d/control"; "$BIN" context -d "$d" stop && check "stop" "stop" "$(cat "$d/control")"
: > "$d/tags"; "$BIN" context -d "$d" clear && check "clear" "clear" "$(cat "$d/tags")"
cp "$s" "$d/chains"
"$BIN" context -d "$d" | grep -q 'callers of xas_store' && ok "show reads DIR/chains" || nok "show reads DIR/chains"
# A write the kernel refuses: /dev/full fails every write.
rm "$d/tags"; ln -s /dev/full "$d/tags"
echo "no tag lib/nofile.c:1: /proc/allocinfo lists the tags there are" > "$d/last_error"
"$BIN" context -d "$d" choose lib/nofile.c:1 2> "$W/err"
check "a refused write exits 1" 1 $?
check "and says why, with the kernel's last_error" \
	"allocinfo: context: tags 'lib/nofile.c:1': No space left on device: no tag lib/nofile.c:1: /proc/allocinfo lists the tags there are" \
	"$(cat "$W/err")"
done_tap
