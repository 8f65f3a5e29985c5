#!/usr/bin/env bash
# allocinfo (static build) against the live /proc/allocinfo of the
# profiling kernel: allocinfo/tests/guest-check.sh, run in the guest.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/allocinfo-guest
[ -x "$BUILD/guest/allocinfo" ] || { fail "the static allocinfo is in the guest" "run make allocinfo"; done_testing; }
# The check script travels in the command itself.
script="cat > /tmp/guest-check.sh <<'__EOF__'
$(cat "$TOP/allocinfo/tests/guest-check.sh")
__EOF__
sh /tmp/guest-check.sh /opt/pftag/bin/allocinfo"
"$TOP/scripts/boot.sh" -k profiling -o "$o" -q "$script" > "$o.err" 2>&1
rc=$?
tr -d '\r' < "$o/out.log" | grep -E '^(not )?ok |^#   ' | sed -E 's/^((not )?ok [0-9]+ - )/\1guest allocinfo: /'
[ $rc -eq 0 ] || fail "guest-check.sh exits 0 in the guest" "exit $rc: $(cat "$o.err")"
done_testing
