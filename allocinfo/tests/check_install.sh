#!/usr/bin/env bash
# make install: PREFIX and DESTDIR put every file where the README says,
# the systemd units name the installed program, pass 'systemd-analyze
# verify', and the commands of the service run to the end, as systemd
# runs them (on a synthetic host instead of this one, into temporary
# paths). Nothing outside a temporary directory is touched. TAP output.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOPDIR=$(cd "$HERE/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. "$HERE/tap.sh"

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
check "the service runs /usr/bin/allocinfo" "/usr/bin/allocinfo /usr/bin/allocinfo /usr/bin/allocinfo /usr/bin/allocinfo" \
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
	nok "systemd-analyze is installed (systemd; make deps)"
fi
check "the timer runs it every 5 minutes" "5min" "$(sed -n 's/^OnUnitActiveSec=//p' "$tmr")"
# The service as systemd runs it: its ExecStart lines in order, with the
# Environment= paths moved to $W, on a synthetic host (ALLOCINFO_SYSROOT:
# its /proc/allocinfo, machine id and boot id); a command whose exit
# status is neither 0 nor in SuccessExitStatus= stops the run, as it does
# under systemd. Run twice: a complete capture, then one cut short.
host=$W/host
mkdir -p "$host/proc/sys/kernel/random" "$host/etc" "$W/textfile" "$W/state"
echo web1 > "$host/proc/sys/kernel/hostname"
echo 0123456789abcdef0123456789abcdef > "$host/etc/machine-id"
echo 5a1b2c3d-0000-4000-8000-000000000001 > "$host/proc/sys/kernel/random/boot_id"
export ALLOCINFO_DB=$W/state/allocinfo.db ALLOCINFO_PROM=$W/textfile/allocinfo.prom \
	ALLOCINFO_LEAKS_PROM=$W/textfile/allocinfo-leaks.prom ALLOCINFO_KEEP=30d ALLOCINFO_SYSROOT=$host
success=" 0 $(sed -n 's/^SuccessExitStatus=//p' "$svc" | tr '\n' ' ') "
s=$HERE/samples/linux-6.12-x86_64.txt
run_service() {	# the commands that ran, "cmd:status ..."
	local cmd rc ran=""
	while read -r cmd; do
		cmd=$(eval "echo \"$cmd\"")
		eval "$cmd" > "$W/out" 2>> "$W/journal"
		rc=$?
		ran="$ran$(echo "$cmd" | awk '{ print $2 }'):$rc "
		case $success in *" $rc "*) ;; *) break ;; esac
	done < <(sed -n 's/^ExecStart=//p' "$svc" | sed 's/\${\([A-Z_]*\)}/$\1/g')
	echo "$ran" | sed 's/ $//'
}
cp "$s" "$host/proc/allocinfo"
check "the service on a complete capture: its four commands, exit 0" "record:0 prune:0 export:0 report:0" "$(run_service)"
check "the database has the snapshot, complete" "1|ok" "$(sqlite3 "$ALLOCINFO_DB" "SELECT count(*), min(status) FROM snapshot" 2> /dev/null)"
if [ -z "$PROMTOOL" ]; then
	skip "the exported file passes promtool check metrics" "$PROMTOOL_HINT"
else
	out=$("$PROMTOOL" check metrics < "$ALLOCINFO_PROM" 2>&1) && ok "the exported file passes promtool check metrics" ||
		nok "the exported file passes promtool check metrics" "$out"
fi
for m in allocinfo_bytes allocinfo_module_bytes allocinfo_subsys_bytes allocinfo_subsys_expected_bytes allocinfo_profile_bytes; do
	grep -q "^# TYPE $m gauge" "$ALLOCINFO_PROM" && ok "the exported file has $m (what the rules and dashboard use)" ||
		nok "the exported file has $m"
done
check "50 tags one by one" 50 "$(grep -c '^allocinfo_bytes{' "$ALLOCINFO_PROM")"
if [ -z "$PROMTOOL" ]; then
	skip "the leaks file passes promtool check metrics" "$PROMTOOL_HINT"
else
	out=$("$PROMTOOL" check metrics < "$ALLOCINFO_LEAKS_PROM" 2>&1) && ok "the leaks file passes promtool check metrics" ||
		nok "the leaks file passes promtool check metrics" "$out"
fi
check "the leaks file: no suspect after one snapshot" "allocinfo_leak_suspects 0" "$(grep '^allocinfo_leak_suspects' "$ALLOCINFO_LEAKS_PROM")"
# a capture cut short: record refuses it (exit 3) and the run goes on
head -c $(( $(stat -c %s "$s") / 2 )) "$s" > "$host/proc/allocinfo"
touch -d @1000000000 "$ALLOCINFO_PROM" "$ALLOCINFO_LEAKS_PROM"
check "the service on a capture cut short: record exits 3, the rest still runs" "record:3 prune:0 export:3 report:0" "$(run_service)"
check "and the export files are new again" "2" "$(find "$W/textfile" -name '*.prom' -newermt @1000000001 | wc -l)"
check "the database says why it refused it" "refused|1 malformed line(s)" \
	"$(sqlite3 "$ALLOCINFO_DB" "SELECT status, substr(problem, 1, 19) FROM snapshot ORDER BY id DESC LIMIT 1")"
grep -q "not recorded: 1 malformed line(s)" "$W/journal" && ok "and so does the journal (stderr)" || nok "and so does the journal (stderr)" "$(cat "$W/journal")"
unset ALLOCINFO_SYSROOT
done_tap
