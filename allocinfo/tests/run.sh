#!/usr/bin/env bash
# Run every host test of allocinfo, print "N passed, N failed" and exit
# non-zero when anything failed. Called by `make test` with the binaries
# built.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
B=$HERE/../build
mkdir -p "$B/test"
pass=0 failed=0 skipped=0
PY=$(command -v python3 || true)

one() {
	local name=$1 log=$B/test/$1.log rc=0 p f s t0=$SECONDS
	shift
	echo "== $name"
	"$@" > "$log" 2>&1 || rc=$?
	grep -E '^not ok ' -A12 "$log" | grep -E '^(not ok|#   )' | head -60
	p=$(grep -E '^ok ' "$log" | grep -vc '# SKIP')
	s=$(grep -Ec '^ok .*# SKIP' "$log")
	f=$(grep -Ec '^not ok ' "$log")
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited $rc (log: $log)"
		tail -n 5 "$log"
		f=1
	fi
	echo "   $p passed, $f failed, $s skipped in $((SECONDS - t0)) s (log: $log)"
	pass=$((pass + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

if [ -n "$PY" ]; then
	one samples "$PY" "$HERE/check_samples.py" "$B/allocinfo" "$B/allocinfo-asan" "$B/allocinfo.static"
else
	echo "not ok - python3 is needed for the sample tests (make deps)"
	failed=$((failed + 1))
fi
one db bash "$HERE/check_db.sh" "$B/allocinfo"
LSAN_OPTIONS=suppressions=$HERE/lsan.supp:print_suppressions=0 one db-asan bash "$HERE/check_db.sh" "$B/allocinfo-asan"
one store bash "$HERE/check_store.sh" "$B/allocinfo"
LSAN_OPTIONS=suppressions=$HERE/lsan.supp:print_suppressions=0 one store-asan bash "$HERE/check_store.sh" "$B/allocinfo-asan"
one cli bash "$HERE/check_cli.sh" "$B/allocinfo" "$B/allocinfo.static"
one monitoring bash "$HERE/check_monitoring.sh" "$B/allocinfo"
one prometheus bash "$HERE/check_prometheus.sh" "$B/allocinfo"
one context bash "$HERE/check_context.sh" "$B/allocinfo"
LSAN_OPTIONS=suppressions=$HERE/lsan.supp:print_suppressions=0 one context-asan bash "$HERE/check_context.sh" "$B/allocinfo-asan"
one fleet bash "$HERE/check_fleet.sh" "$B/allocinfo"
[ -z "$PY" ] || one leaks "$PY" "$HERE/check_leaks.py" "$B/allocinfo"
# the scale check at a fifth of its size (make scale: 10,000 snapshots, minutes)
[ -z "$PY" ] || SCALE_SNAPSHOTS=${SCALE_SNAPSHOTS:-2000} one scale "$PY" "$HERE/check_scale.py" "$B/allocinfo" "$B/allocinfo-plot"
one install bash "$HERE/check_install.sh"

echo
echo "$pass passed, $failed failed, $skipped skipped ($((SECONDS / 60)) min $((SECONDS % 60)) s)"
[ "$failed" -eq 0 ]
