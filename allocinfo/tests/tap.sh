# tap.sh: what allocinfo's host tests share, sourced after HERE is set.
#   ok DESC               a passed test
#   nok DESC [DETAIL]     a failed one; DETAIL's first TAP_DETAIL_LINES
#                         lines (default 30) as "#   " lines
#   check DESC WANT GOT   ok if GOT is WANT, nok with both otherwise
#   skip DESC REASON      a test that could not run: "ok N - DESC # SKIP
#                         REASON", counted as skipped, never as passed
#   $PROMTOOL             promtool's path; empty when it is missing (or
#                         set empty, as the tests of the skips do), with
#                         $PROMTOOL_HINT the way to get it
#   done_tap              the closing "# N tests, N failed" line; its
#                         status is non-zero when anything failed
#   tap_workdir           a work directory $W and a list pids=() of
#                         background processes, killed and reaped, and $W
#                         removed, when the test exits
# shellcheck shell=bash
n=0 failed=0
TAP_DETAIL_LINES=${TAP_DETAIL_LINES:-30}
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | head -"$TAP_DETAIL_LINES" | sed 's/^/#   /'
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
PROMTOOL=${PROMTOOL-$(command -v promtool)}
PROMTOOL_HINT="promtool is not installed: make deps (Debian package prometheus), or promtool from https://prometheus.io/download/ on PATH"
check() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1" "want: $2
got:  $3"; fi; }
done_tap() { echo "# $n tests, $failed failed"; [ "$failed" -eq 0 ]; }

tap_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
	rm -rf "$W"
}
tap_workdir() {
	W=$(mktemp -d)
	pids=()
	trap tap_cleanup EXIT
}
