#!/usr/bin/env bash
# make install: PREFIX and DESTDIR put every file where the README says,
# the systemd units name the installed program, pass 'systemd-analyze
# verify', and the commands of the service run (on a sample instead of
# /proc/allocinfo, into temporary paths). Nothing outside a temporary
# directory is touched. TAP output.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOPDIR=$(cd "$HERE/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -30 | sed 's/^/#   /'; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1" "want: $2
got:  $3"; fi; }

# a staging root, as a package build does
out=$(make -s -C "$TOPDIR" install DESTDIR="$W/root" PREFIX=/usr 2>&1) || nok "make install DESTDIR=... PREFIX=/usr" "$out"
want="/usr/bin/allocinfo
/usr/bin/allocinfo-plot
/usr/lib/systemd/system/allocinfo-record.service
/usr/lib/systemd/system/allocinfo-record.timer
/usr/share/allocinfo/allocinfo.rules.yml
/usr/share/allocinfo/grafana-allocinfo.json
/usr/share/man/man1/allocinfo.1"
check "make install DESTDIR=... PREFIX=/usr: the files" "$want" "$(cd "$W/root" && find . -type f | sed 's|^\.||' | sort)"
check "the service runs /usr/bin/allocinfo" "/usr/bin/allocinfo /usr/bin/allocinfo /usr/bin/allocinfo" \
	"$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$W/root/usr/lib/systemd/system/allocinfo-record.service" | tr '\n' ' ' | sed 's/ $//')"
check "no @BINDIR@ left" "" "$(grep -l '@' "$W/root/usr/lib/systemd/system/"* 2> /dev/null)"
out=$(make -s -C "$TOPDIR" uninstall DESTDIR="$W/root" PREFIX=/usr 2>&1)
check "make uninstall removes them" "" "$(cd "$W/root" && find . -type f)"

# NO_PLOT=1: no allocinfo-plot, and allocinfo says plot is not installed
make -s -C "$TOPDIR" install NO_PLOT=1 DESTDIR="$W/np" PREFIX=/usr > /dev/null 2>&1
check "make install NO_PLOT=1: allocinfo without allocinfo-plot" "allocinfo" "$(ls "$W/np/usr/bin")"
PATH="$W/np/none" "$W/np/usr/bin/allocinfo" --help | grep -q 'plot .*not installed' &&
	ok "and its --help says plot is not installed" || nok "and its --help says plot is not installed"

# a real prefix: the units can be verified and their commands run
pfx=$W/pfx
make -s -C "$TOPDIR" install PREFIX="$pfx" > /dev/null 2>&1
svc=$pfx/lib/systemd/system/allocinfo-record.service
tmr=$pfx/lib/systemd/system/allocinfo-record.timer
[ -x "$pfx/bin/allocinfo" ] && ok "make install PREFIX=$pfx" || nok "make install PREFIX=$pfx"
if command -v systemd-analyze > /dev/null; then
	out=$(systemd-analyze verify --man=no --recursive-errors=no "$svc" "$tmr" 2>&1) && [ -z "$out" ] &&
		ok "systemd-analyze verify: the service and the timer" || nok "systemd-analyze verify: the service and the timer" "$out"
else
	n=$((n + 1)); echo "ok $n - # SKIP systemd-analyze missing"
fi
check "the timer runs it every 5 minutes" "5min" "$(sed -n 's/^OnUnitActiveSec=//p' "$tmr")"
# the ExecStart lines, with the Environment= paths moved to $W and the
# sample read instead of /proc/allocinfo
mkdir -p "$W/textfile"
export ALLOCINFO_DB=$W/state/allocinfo.db ALLOCINFO_PROM=$W/textfile/allocinfo.prom ALLOCINFO_KEEP=30d
mkdir -p "$W/state"
s=$HERE/samples/linux-6.12-x86_64.txt
rc=0
while read -r cmd; do
	cmd=$(eval "echo \"$cmd\"")
	case $cmd in *" record "* | *" export "*) cmd="$cmd -f $s" ;; esac
	eval "$cmd" > "$W/out" 2>&1 || { rc=1; nok "service command: $cmd" "$(cat "$W/out")"; }
done < <(sed -n 's/^ExecStart=//p' "$svc" | sed 's/\${\([A-Z_]*\)}/$\1/g')
[ $rc = 0 ] && ok "the service's three commands run"
check "the database has the snapshot" 1 "$(sqlite3 "$ALLOCINFO_DB" 'SELECT count(*) FROM snapshot' 2> /dev/null)"
if command -v promtool > /dev/null; then
	out=$(promtool check metrics < "$ALLOCINFO_PROM" 2>&1) && ok "the exported file passes promtool check metrics" ||
		nok "the exported file passes promtool check metrics" "$out"
fi
for m in allocinfo_bytes allocinfo_module_bytes allocinfo_subsys_bytes allocinfo_profile_bytes; do
	grep -q "^# TYPE $m gauge" "$ALLOCINFO_PROM" && ok "the exported file has $m (what the rules and dashboard use)" ||
		nok "the exported file has $m"
done
check "50 tags one by one" 50 "$(grep -c '^allocinfo_bytes{' "$ALLOCINFO_PROM")"
echo "# $n tests, $failed failed"
[ "$failed" -eq 0 ]
