#!/usr/bin/env bash
# guest() in tests/lib.sh boots once more when, and only when, a guest
# under multi-threaded TCG died of "Oops: int3" (QEMU 7.2's fault after a
# static-key patch). Checked with a stand-in for scripts/boot.sh in a copy
# of the tree's test helpers: a guest that dies of anything else, or of
# the same Oops under single-threaded TCG, still fails, and a second
# death is not retried again.
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests" "$tmp/scripts"
cp "$TOP/tests/lib.sh" "$tmp/tests/lib.sh"
# The stand-in: exits 125 with the console line of $FAKE_DEATHS[n] for
# its n-th run (counted in $tmp/runs), 0 once the list is used up.
cat > "$tmp/scripts/boot.sh" << 'EOF'
#!/usr/bin/env bash
out=
while getopts k:o:qa: o; do [ "$o" != o ] || out=$OPTARG; done
n=$(($(cat "$FAKE_RUNS" 2> /dev/null || echo 0) + 1))
echo $n > "$FAKE_RUNS"
mkdir -p "$out"
IFS=, read -ra deaths <<< "$FAKE_DEATHS"
d=${deaths[n - 1]:-}
[ -n "$d" ] || { echo booted > "$out/console.log"; exit 0; }
echo "$d" > "$out/console.log"
echo "boot: error: the guest died (console: $out/console.log)" >&2
exit 125
EOF
chmod +x "$tmp/scripts/boot.sh"

# try ACCEL DEATHS: the runs of the stand-in and guest()'s output and status.
try() {
	rm -rf "$tmp/runs" "$tmp/out"
	local out rc=0
	out=$(ACCEL=$1 FAKE_DEATHS=$2 FAKE_RUNS=$tmp/runs bash -c \
		'. "$0/tests/lib.sh"; guest k "$0/out" "" true' "$tmp" 2>&1) || rc=$?
	echo "runs=$(cat "$tmp/runs") rc=$rc"
	echo "$out"
}
int3='Oops: int3 SMP PTI'

r=$(try tcg,thread=multi "$int3")
eq "an int3 death under MTTCG boots once more" "runs=2 rc=0" "$(head -1 <<< "$r")"
grep -q 'QEMU.s multi-threaded TCG fault' <<< "$r" &&
	ok "the retry says why" || fail "the retry says why" "$r"
[ -f "$tmp/out/console.int3.log" ] &&
	ok "the first console log is kept" || fail "the first console log is kept" "$(ls "$tmp/out")"

r=$(try tcg,thread=multi "$int3,$int3")
eq "a second int3 death fails the boot" "runs=2 rc=1" "$(head -1 <<< "$r")"
grep -q '^not ok' <<< "$r" && ok "a second int3 death reports a failure" ||
	fail "a second int3 death reports a failure" "$r"

r=$(try tcg,thread=multi "Oops: general protection fault")
eq "another death under MTTCG is not retried" "runs=1 rc=1" "$(head -1 <<< "$r")"

r=$(try tcg "$int3")
eq "an int3 death under single-threaded TCG is not retried" "runs=1 rc=1" "$(head -1 <<< "$r")"
done_testing
