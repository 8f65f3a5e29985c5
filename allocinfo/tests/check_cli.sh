#!/usr/bin/env bash
# Command line: --help for every command, usage errors exit 2, unreadable
# input exits 1, the man page renders, the guest check passes on the
# samples under busybox sh. TAP output.
set -u
BIN=${1:?binary}
STATIC=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap.sh"
s=$HERE/samples/linux-6.12-x86_64.txt
W0=$(mktemp -d)

for c in top tree diff export record report prune merge plot; do
	out=$("$BIN" "$c" --help); rc=$?
	if [ $rc -eq 0 ] && [[ $out == "usage: allocinfo $c"* ]]; then ok "$c --help"; else nok "$c --help" "$rc $out"; fi
	out=$("$BIN" help "$c")
	[[ $out == "usage: allocinfo $c"* ]] && ok "help $c" || nok "help $c"
done
"$BIN" --help | grep -q '^exit status' && ok "--help documents the exit status" || nok "--help documents the exit status"

for args in "" "frobnicate" "top --sort=weight -f $s" "top -n x -f $s" "top --min 12Q -f $s" \
	"tree --by colour -f $s" "tree --depth 0 -f $s" "diff $s" "diff - -" "export -F xml -f $s" \
	"record" "record -d /tmp/x.db -i 0" "report -d" "report nonsense -d /tmp/x.db" "top extra -f $s"; do
	"$BIN" $args > /dev/null 2>&1
	check "usage error exits 2: allocinfo $args" 2 $?
done
"$BIN" top -f /nonexistent/allocinfo > /dev/null 2> "$HERE/../build/err.txt"
check "an unreadable input exits 1" 1 $?
grep -q 'cannot read /nonexistent/allocinfo' "$HERE/../build/err.txt" && ok "and says which file" || nok "and says which file"
"$BIN" top -f "$HERE" > /dev/null 2>&1
check "a directory as input exits 1" 1 $?

# bounded input: an endless or binary one stops early with what it is,
# never read until memory runs out (ulimit -v: 1 GiB would do for a
# capture of a million tags; past the bound is an error, not an OOM)
lim_run() { (ulimit -v 1048576; timeout 60 "$@"); }
lim_run "$BIN" top -f /dev/zero > /dev/null 2> "$W0/err"
rc=$?
if [ $rc = 1 ] && grep -q 'cannot read /dev/zero: line 1 is longer than .* bytes: not a capture' "$W0/err"; then
	ok "top -f /dev/zero: exit 1, its first line too long, not a capture"
else nok "top -f /dev/zero: exit 1, its first line too long, not a capture" "exit $rc: $(head -c 300 "$W0/err")"; fi
lim_run "$BIN" record -d "$W0/z.db" -f /dev/zero > /dev/null 2> "$W0/err"
rc=$?
if [ $rc = 1 ] && grep -q 'not a capture' "$W0/err" && [ ! -e "$W0/z.db" ]; then
	ok "record -f /dev/zero: exit 1, not a capture, no database made"
else nok "record -f /dev/zero: exit 1, not a capture, no database made" "exit $rc: $(head -c 300 "$W0/err")"; fi
# short lines without end: the bound on bytes (the man page says 256 MiB)
mib=$(sed -n 's/.*at most \([0-9]*\) MiB.*/\1/p' "$HERE/../allocinfo.1" | head -1)
yes '        4096        1 a.c:1 func:a ' | lim_run "$BIN" top -f - > /dev/null 2> "$W0/err"
rc=$?
if [ -n "$mib" ] && [ $rc = 1 ] && grep -q "cannot read (stdin): more than $mib MiB: not a capture" "$W0/err"; then
	ok "an endless stdin of tag lines: exit 1 past the man page's $mib MiB, not a capture"
else nok "an endless stdin of tag lines: exit 1 past the man page's bound (${mib:-none found})" "exit $rc: $(head -c 300 "$W0/err")"; fi
# a JSON export on one line (jq -c) is not held to the text's line length
python3 -c '
import json, sys
tags = [{"file": "a%d.c" % i, "line": i, "module": None, "func": "f%d" % i, "bytes": 4096, "calls": 1}
        for i in range(2000)]
sys.stdout.write(json.dumps({"version": "1.0", "tags": tags}))' > "$W0/one-line.json"
check "a JSON export of 2,000 tags on one line ($(wc -c < "$W0/one-line.json") bytes) is read" \
	"0 2000" "$("$BIN" export -F json -f "$W0/one-line.json" > "$W0/out.json"; echo $? \
	"$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tags"]))' "$W0/out.json")")"

# sizes: --min accepts 4096, 4K, 4KiB, 1.5M
for m in 4096 4K 4KiB 4k; do
	check "--min $m" "$("$BIN" top -H -b -n 0 -f "$s" --min 4096 | wc -l)" "$("$BIN" top -H -b -n 0 -f "$s" --min $m | wc -l)"
done
check "--min 1.5M" "$(awk 'NR > 2 && $1 >= 1572864' "$s" | wc -l)" "$("$BIN" top -H -b -n 0 -f "$s" --min 1.5M | wc -l)"

# human sizes
out=$(printf 'allocinfo - version: 1.0\n        1023        1 a.c:1 func:a \n        1024        1 a.c:2 func:b \n     1572864        1 a.c:3 func:c \n  1073741824        1 a.c:4 func:d \n       -4096        1 a.c:5 func:e \n' | "$BIN" top -H -f - | awk '{ print $1 }' | tr '\n' ' ')
check "human sizes" "1.0GiB 1.5MiB 1.0KiB 1023B -4.0KiB " "$out"

# export -o writes atomically
t=$(mktemp -d)
"$BIN" export -f "$s" -o "$t/allocinfo.prom"
check "export -o FILE writes FILE" "$("$BIN" export -f "$s")" "$(cat "$t/allocinfo.prom")"
check "and leaves no temporary file" "allocinfo.prom" "$(ls -A "$t")"
rm -rf "$t"

# duplicates: the sum is accurate:no when any of its lines is, in either order
W=$(mktemp -d)
trap 'rm -rf "$W" "$W0"' EXIT
dup_a='        4096        1 mm/x.c:1 func:f '
dup_b='        8192        2 mm/x.c:1 func:f accurate:no '
for order in ab ba; do
	if [ $order = ab ]; then l1=$dup_a l2=$dup_b; else l1=$dup_b l2=$dup_a; fi
	in=$(printf 'allocinfo - version: 2.0\n%s\n%s\n' "$l1" "$l2")
	check "duplicates ($order): top shows the sum as accurate:no" "12288 3 mm/x.c:1 func:f accurate:no (2 lines)" \
		"$(printf '%s\n' "$in" | "$BIN" top -b -H -f - | awk '{ $1 = $1; print }')"
	check "duplicates ($order): json extra says accurate no" '"extra":{"accurate":"no"}' \
		"$(printf '%s\n' "$in" | "$BIN" export -F json -f - | grep -o '"extra":{[^}]*}')"
	rm -f "$W/d.db"
	printf '%s\n' "$in" | "$BIN" record -q -d "$W/d.db" -f -
	if command -v sqlite3 > /dev/null; then
		check "duplicates ($order): record stores accurate:no" "accurate:no" "$(sqlite3 "$W/d.db" 'SELECT extra FROM sample')"
	fi
done

# long options are not abbreviated: diff has no --by, and --by is no --bytes
"$BIN" diff --by module "$s" "$s" > /dev/null 2> "$W/err"
check "diff --by module is a usage error (no abbreviation of --bytes)" 2 $?
grep -q -- "--by" "$W/err" && ok "and the message names --by" || nok "and the message names --by" "$(cat "$W/err")"
"$BIN" top --byte -f "$s" > /dev/null 2>&1
check "top --byte (an abbreviation) is a usage error" 2 $?
"$BIN" top --bytes=x -f "$s" > /dev/null 2>&1
check "top --bytes=x is a usage error" 2 $?
check "top --input=FILE and --sort=name still work" "$("$BIN" top -b -H -s name -f "$s")" "$("$BIN" top -b -H --sort=name --input="$s")"
# the hint names the command
"$BIN" diff --sort=weight "$s" "$s" > /dev/null 2> "$W/err"
grep -q "allocinfo diff --help" "$W/err" && ok "the usage hint names the command (allocinfo diff --help)" ||
	nok "the usage hint names the command (allocinfo diff --help)" "$(cat "$W/err")"
# a directory pattern: mm/ is everything under mm/
check "--path mm/ is --path 'mm/*'" "$("$BIN" top -b -H -n 0 -f "$s" --path 'mm/*')" "$("$BIN" top -b -H -n 0 -f "$s" --path mm/)"
[ -n "$("$BIN" top -b -H -n 0 -f "$s" --path mm/)" ] && ok "--path mm/ matches something" || nok "--path mm/ matches something"

# several patterns of a filter are OR-ed; !GLOB excludes
m=$HERE/samples/modules-dups-negative.txt
check "--module ttm --module virtio_net: both modules" "$(awk 'NR > 2 && ($4 == "[ttm]" || $4 == "[virtio_net]")' "$m" | wc -l)" \
	"$("$BIN" top -q -b -H -n 0 -f "$m" --module ttm --module virtio_net | wc -l)"
check "--module '!vmlinux': every module tag" "$(awk 'NR > 2 && $4 ~ /^\[/' "$m" | awk '{ print $4 }' | sort -u | wc -l)" \
	"$("$BIN" top -q -b -H -n 0 -f "$m" --module '!vmlinux' | awk '{ print $4 }' | sort -u | wc -l)"
check "--path '!mm/' --path '!fs/*': neither mm nor fs" "$(awk 'NR > 2 && $3 !~ /^(mm|fs)\//' "$s" | wc -l)" \
	"$("$BIN" top -q -b -H -n 0 -f "$s" --path '!mm/' --path '!fs/*' | wc -l)"
check "--path 'mm/*' --path '!mm/slub.c': includes, then excludes" "$(awk 'NR > 2 && $3 ~ /^mm\// && $3 !~ /^mm\/slub.c:/' "$s" | wc -l)" \
	"$("$BIN" top -q -b -H -n 0 -f "$s" --path 'mm/*' --path '!mm/slub.c' | wc -l)"

# a full output device is an error, not silence
if [ -w /dev/full ]; then
	for args in "top -f $s" "tree -f $s" "diff $s $m" "export -f $s" "export -F json -f $s" "top --help"; do
		"$BIN" $args > /dev/full 2> "$W/err"
		rc=$?
		if [ $rc = 1 ] && grep -q "write error" "$W/err"; then ok "allocinfo $args > /dev/full: write error, exit 1"
		else nok "allocinfo $args > /dev/full: write error, exit 1" "exit $rc: $(cat "$W/err")"; fi
	done
else
	nok "/dev/full is there, for the write error tests"
fi

# export -o: a unique temporary file, removed when the write fails
mkdir -p "$W/o"
( trap '' XFSZ; ulimit -f 1; "$BIN" export -f "$s" -o "$W/o/allocinfo.prom" ) > /dev/null 2> "$W/err"
rc=$?
if [ $rc = 1 ] && grep -q "write error" "$W/err"; then ok "export -o on a full disk (ulimit -f): write error, exit 1"
else nok "export -o on a full disk (ulimit -f): write error, exit 1" "exit $rc: $(cat "$W/err")"; fi
check "and leaves no file behind" "" "$(ls -A "$W/o")"
rm -rf "$W/o"/*
mkdir "$W/o/allocinfo.prom.tmp"
"$BIN" export -f "$s" -o "$W/o/allocinfo.prom" 2> "$W/err"
check "export -o does not depend on the name FILE.tmp being free" 0 $?
check "the file is readable by the collector (0644 under umask 022)" 644 "$( umask 022; rm -f "$W/o/allocinfo.prom"; "$BIN" export -f "$s" -o "$W/o/allocinfo.prom"; stat -c %a "$W/o/allocinfo.prom")"
if ! command -v strace > /dev/null; then
	nok "strace is installed (make deps)"
elif strace -o /dev/null true 2> /dev/null; then
	strace -f -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$W/strace" "$BIN" export -f "$s" -o "$W/o/allocinfo.prom"
	check "export -o syncs the file before renaming it" "sync rename" "$(grep -oE '^[0-9]+ +(fsync|fdatasync|rename[a-z0-9]*)' "$W/strace" | awk '{ print $2 }' | sed 's/^f\{0,1\}d\{0,1\}a\{0,1\}t\{0,1\}a\{0,1\}sync$/sync/; s/^rename.*/rename/' | head -n 2 | tr '\n' ' ' | sed 's/ $//')"
else
	# a sandbox that forbids ptrace: the tool is there, the check cannot run
	n=$((n + 1)); echo "ok $n - # SKIP ptrace not allowed here (strace)"
fi

# -o never harms: a regular file (or a new name) is replaced atomically,
# a character device or FIFO is written through (never replaced by a
# regular file), anything else is refused with a message. The device
# nodes are made here (as root), so that a broken build replaces these
# and not the system's; a user, who cannot replace those of /dev, gets
# /dev's. /dev/stdout is a link to /proc/self/fd/1: one is made here too.
mkdir -p "$W/nodes"
full=$W/nodes/full null=$W/nodes/null stdout=$W/nodes/stdout
if ! mknod "$full" c 1 7 2> /dev/null || ! mknod "$null" c 1 3 2> /dev/null; then
	[ -w /dev ] && nok "mknod: the -o tests need device nodes of their own (/dev is writable)"
	full=/dev/full null=/dev/null
fi
ln -s /proc/self/fd/1 "$stdout"
out_safe() {	# out_safe WHAT CMD...: CMD writes to $tgt
	local what=$1
	shift
	"$@" > "$W/o.out" 2> "$W/err"
	echo $? > "$W/rc"
}
out_safe x "$BIN" export -f "$s" -o "$full"
check "export -o $full (a full character device): exit 1" 1 "$(cat "$W/rc")"
check "and one message naming it, with errno" "allocinfo: write error on $full: No space left on device" "$(cat "$W/err")"
check "and $full is still a character device" "character special file" "$(stat -c %F "$full")"
out_safe x "$BIN" export -F json -f "$s" -o "$stdout"
check "export -o /dev/stdout writes to standard output (a file here)" "$("$BIN" export -F json -f "$s")" "$(cat "$W/o.out")"
check "export -o /dev/stdout on a pipe" "$("$BIN" export -f "$s" | md5sum)" "$("$BIN" export -f "$s" -o "$stdout" | md5sum)"
check "and /dev/stdout is still a link to /proc/self/fd/1" "/proc/self/fd/1" "$(readlink "$stdout")"
check "export -o /dev/null: exit 0, still a character device" "0 character special file" "$("$BIN" export -f "$s" -o "$null"; echo $?) $(stat -c %F "$null")"
mkfifo "$W/nodes/fifo"
( timeout 10 cat "$W/nodes/fifo" > "$W/fifo.out" ) &
timeout 10 "$BIN" export -f "$s" -o "$W/nodes/fifo"
wait
check "export -o FIFO writes through it" "$("$BIN" export -f "$s")" "$(cat "$W/fifo.out")"
check "and the FIFO is still a FIFO" "fifo" "$(stat -c %F "$W/nodes/fifo")"
echo old > "$W/nodes/real.prom"
ln -s real.prom "$W/nodes/link.prom"
"$BIN" export -f "$s" -o "$W/nodes/link.prom"
check "export -o SYMLINK replaces the file it points to" "$("$BIN" export -f "$s")" "$(cat "$W/nodes/real.prom")"
check "and the link stays a link" "symbolic link" "$(stat -c %F "$W/nodes/link.prom")"
ln -s nothere.prom "$W/nodes/dangling.prom"
for tgt in "$W/nodes" "$W/nodes/dangling.prom" $(mknod "$W/nodes/blk" b 7 250 2> /dev/null && echo "$W/nodes/blk"); do
	kind=$(stat -c %F "$tgt")
	out_safe x "$BIN" export -f "$s" -o "$tgt"
	if [ "$(cat "$W/rc")" = 1 ] && grep -q "not written" "$W/err" && [ "$(stat -c %F "$tgt")" = "$kind" ]; then
		ok "export -o $(basename "$tgt") ($kind): refused with a message, left as it was"
	else
		nok "export -o $(basename "$tgt") ($kind): refused with a message, left as it was" "exit $(cat "$W/rc"): $(cat "$W/err"); now $(stat -c %F "$tgt")"
	fi
done
# a failed write leaves the previous file intact, with errno in one message
printf 'previous\n' > "$W/nodes/keep.prom"
( trap '' XFSZ; ulimit -f 8; "$BIN" export -f "$s" -o "$W/nodes/keep.prom" ) > /dev/null 2> "$W/err"
check "export -o on a full disk: exit 1, the previous file intact" "1 previous" "$? $(cat "$W/nodes/keep.prom")"
check "and one message, with errno" "1 1" "$(wc -l < "$W/err") $(grep -c 'write error on .*keep.prom.*: File too large' "$W/err")"
check "and no temporary file left" "keep.prom" "$(ls "$W/nodes" | grep keep)"

# -o replacing a file keeps its owner, group and mode; one who may not
# give it away is told so
mkdir -p "$W/own"
printf 'previous\n' > "$W/own/a.prom"
if [ "$(id -u)" = 0 ]; then
	chown 1234:5678 "$W/own/a.prom"; chmod 0640 "$W/own/a.prom"
	"$BIN" export -f "$s" -o "$W/own/a.prom" 2> "$W/err"
	check "export -o over a file of 1234:5678, mode 640: replaced, owner, group and mode kept" \
		"0 1234:5678 640 $("$BIN" export -f "$s" | md5sum)" "$? $(stat -c '%u:%g %a' "$W/own/a.prom") $(md5sum < "$W/own/a.prom")"
	if command -v setpriv > /dev/null; then
		chmod 755 "$W"; chown 65534:65534 "$W/own"; chown 1234:5678 "$W/own/a.prom"; chmod 0604 "$W/own/a.prom"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" export -f "$s" -o "$W/own/a.prom" 2> "$W/err"
		rc=$?
		if [ $rc = 0 ] && [ "$(stat -c '%u:%g %a' "$W/own/a.prom")" = "65534:65534 604" ] &&
			grep -q "a.prom: replaced, but its owner and group (1234:5678) could not be kept" "$W/err"; then
			ok "export -o by a user who may not chown: the mode kept, the lost owner said"
		else nok "export -o by a user who may not chown: the mode kept, the lost owner said" "exit $rc $(stat -c '%u:%g %a' "$W/own/a.prom"): $(cat "$W/err")"; fi
	else
		n=$((n + 1)); echo "ok $n - # SKIP setpriv (util-linux) is not installed: the test of a user who may not chown"
	fi
else
	n=$((n + 1)); echo "ok $n - # SKIP not root: chown to another owner, for the test that -o keeps it"
fi
# a temporary file does not survive SIGTERM; one left by SIGKILL, which
# cannot be caught, is removed by the next run for the same file once
# nobody holds it (strace delivers the signal at the sync before the rename)
rm -rf "$W/own"; mkdir -p "$W/own"; printf 'previous\n' > "$W/own/a.prom"
if command -v strace > /dev/null && strace -o /dev/null true 2> /dev/null; then
	strace -o /dev/null -e trace=fsync -e inject=fsync:signal=TERM "$BIN" export -f "$s" -o "$W/own/a.prom" 2> /dev/null
	check "export -o killed by SIGTERM before its rename: dies by the signal, no temporary file, the file as it was" \
		"143 a.prom previous" "$? $(ls -A "$W/own" | tr '\n' ' ')$(cat "$W/own/a.prom")"
	strace -o /dev/null -e trace=fsync -e inject=fsync:signal=KILL "$BIN" export -f "$s" -o "$W/own/a.prom" 2> /dev/null
	rc=$?
	left=$(ls -A "$W/own" | grep -v '^a\.prom$')
	check "export -o killed by SIGKILL leaves one temporary file, named as the man page says" \
		"137 1 yes" "$rc $(printf '%s\n' "$left" | grep -c .) $(case $left in a.prom.allocinfo-tmp.??????) echo yes;; *) echo "no ($left)";; esac)"
	# a run while another one holds its temporary file: that one is kept
	touch -d '1 min ago' "$W/own/$left"
	printf 'x\n' > "$W/own/a.prom.allocinfo-tmp.HELD00"; touch -d '1 min ago' "$W/own/a.prom.allocinfo-tmp.HELD00"
	flock "$W/own/a.prom.allocinfo-tmp.HELD00" sleep 30 & held=$!
	for _ in $(seq 50); do flock -n "$W/own/a.prom.allocinfo-tmp.HELD00" true 2> /dev/null || break; sleep 0.1; done
	"$BIN" export -f "$s" -o "$W/own/a.prom" 2> "$W/err"
	check "the next export -o: exit 0, the killed run's file removed (said), the held one kept" \
		"0 a.prom a.prom.allocinfo-tmp.HELD00 1" \
		"$? $(ls -A "$W/own" | tr '\n' ' ')$(grep -c "removed .*$left, a temporary file a killed run left" "$W/err")"
	kill $held 2> /dev/null; wait $held 2> /dev/null
else
	n=$((n + 1)); echo "ok $n - # SKIP ptrace not allowed here (strace delivers the signals of the -o signal tests)"
	n=$((n + 1)); echo "ok $n - # SKIP ptrace not allowed here (strace delivers the signals of the -o signal tests)"
	n=$((n + 1)); echo "ok $n - # SKIP ptrace not allowed here (strace delivers the signals of the -o signal tests)"
fi
# standard output: one message, with errno
for args in "export -f $s" "export -F json -f $s" "export -F csv -f $s"; do
	"$BIN" $args > "$full" 2> "$W/err"
	check "allocinfo $args > full device: one message, with errno" "1 allocinfo: write error on standard output: No space left on device" "$? $(cat "$W/err")"
done

# an option that takes a value is given once; the filters and export --by add up
for args in "record -d $W/r.db -f $s -f $s" "top -n 3 -n 4 -f $s" "top -f $s --sort name -s size" \
	"export -F json -F csv -f $s" "export -o $W/a -o $W/b -f $s" "report leaks -d $W/r.db --min-fit 0.5 --min-fit 0.9" \
	"prune -d $W/r.db --keep 1d --keep 2d" "plot -d $W/r.db -o $W/p.png --by subsys --by module" "diff --seconds 1 --seconds 2 $s $s"; do
	"$BIN" $args > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 2 ] && grep -q "given twice" "$W/err"; then ok "allocinfo $args: 'given twice', exit 2"
	else nok "allocinfo $args: 'given twice', exit 2" "exit $rc: $(cat "$W/err")"; fi
done
check "record -f A -f B stored nothing" no "$([ -e "$W/r.db" ] && echo yes || echo no)"
check "--path mm/ --path fs/: both" "$(awk 'NR > 2 && $3 ~ /^(mm|fs)\//' "$s" | wc -l)" "$("$BIN" top -q -b -H -n 0 -f "$s" --path mm/ --path fs/ | wc -l)"
check "export --by tag --by subsys: both families" "2" "$("$BIN" export -f "$s" --by tag --by subsys | grep -cE '^# TYPE allocinfo_(bytes|subsys_bytes) ')"

# the header anywhere: sort -g -r /proc/allocinfo | allocinfo top -f -
for f in "$s" "$HERE/samples/format-2.0.txt"; do
	sort -g -r "$f" | "$BIN" top -b -H -n 0 -s name -f - > "$W/sorted" 2> "$W/err"
	rc=$?
	check "sort -g -r $(basename "$f") | top -f -: exit 0, no message" "0 " "$rc $(cat "$W/err")"
	check "and the same tags as the file" "$("$BIN" top -b -H -n 0 -s name -f "$f")" "$(cat "$W/sorted")"
done
sort -g -r "$HERE/samples/format-2.0.txt" | "$BIN" export -F json -f - | grep -q '"version":"2.0"' &&
	ok "a header read late still gives the version" || nok "a header read late still gives the version"
printf 'allocinfo - version: 1.0\n        4096        1 a.c:1 func:a \nallocinfo - version: 1.0\n        4096        1 a.c:2 func:b \n' |
	"$BIN" top -H -f - > /dev/null 2> "$W/err"
check "a second header is a malformed line (exit 3)" 3 $?
grep -q ':3: .*second header' "$W/err" && ok "and says so at its line" || nok "and says so at its line" "$(cat "$W/err")"

# JSON extra: long values kept, a repeated key written once
long=$(head -c 300 /dev/zero | tr '\0' v)
out=$(printf 'allocinfo - version: 2.0\n        4096        1 a.c:1 func:a note:%s \n' "$long" | "$BIN" export -F json -f - |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["tags"][0]["extra"].get("note", "")))')
check "json: a 300-character extra value is kept" 300 "$out"
out=$(printf 'allocinfo - version: 2.0\n        4096        1 a.c:1 func:a k:1 k:2 accurate:yes accurate:no \n' | "$BIN" export -F json -f -)
check "json: a repeated key is written once (the first value; accurate:no wins)" '"extra":{"k":"1","accurate":"no"}' \
	"$(printf '%s\n' "$out" | grep -o '"extra":{[^}]*}')"
printf '%s\n' "$out" | python3 -c 'import json, sys; json.load(sys.stdin)' && ok "json: still valid JSON" || nok "json: still valid JSON" "$out"

# an option a command does not use is a usage error, not ignored
for args in "export -b -f $s" "export -H -f $s" "export -k -f $s" "export -F prometheus -k -f $s" "diff -k $s $s" \
	"diff -f $s $s $s" "report snapshots -d $W/none.db --module x" "report snapshots -d $W/none.db -n 3" \
	"report growth -d $W/none.db --at 2" "report growth -d $W/none.db -s name" "report growth -d $W/none.db --min-rate 3" \
	"report top -d $W/none.db --from 1" "report top -d $W/none.db --min-snapshots 3" "report leaks -d $W/none.db -s name" \
	"report leaks -d $W/none.db --min 4K" "report leaks -d $W/none.db --at 1"; do
	"$BIN" $args > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 2 ] && grep -q "does not apply" "$W/err"; then ok "allocinfo $args: 'does not apply', exit 2"
	else nok "allocinfo $args: 'does not apply', exit 2" "exit $rc: $(cat "$W/err")"; fi
done
"$BIN" export -k -F json -f "$s" > /dev/null
check "export -k -F json is fine" 0 $?
# export -n N: the N largest tags (N series of each metric)
want=$(awk 'NR > 2 { print $1, $3 }' "$s" | sort -k1,1nr | head -n 5 | awk '{ print $2 }' | sort)
got=$("$BIN" export -n 5 -f "$s" | sed -n 's/^allocinfo_bytes{file="\([^"]*\)",line="\([0-9]*\)".*/\1:\2/p' | sort)
check "export -n 5: the 5 largest tags" "$want" "$got"

# the reading commands carry no graphics: plot is a separate program
PLOT=$(dirname "$BIN")/$(basename "$BIN" | sed 's/^allocinfo/allocinfo-plot/')
if command -v ldd > /dev/null && ldd "$BIN" > /dev/null 2>&1; then
	[ -x "$PLOT" ] && ok "allocinfo-plot is built next to allocinfo" || nok "allocinfo-plot is built next to allocinfo ($PLOT)"
	check "ldd allocinfo: no cairo, X11, xcb, fontconfig, freetype or pixman" "" \
		"$(ldd "$BIN" | grep -E 'libcairo|libX|libxcb|libfontconfig|libfreetype|libpixman|libpng' | awk '{ print $1 }' | tr '\n' ' ')"
	ldd "$PLOT" | grep -q libcairo && ok "ldd allocinfo-plot: cairo is there" || nok "ldd allocinfo-plot: cairo is there"
	out=$(LD_DEBUG=libs "$BIN" top -n 1 -f "$s" 2>&1 > /dev/null | grep -cE 'calling init: .*(libcairo|libX11|libfontconfig)')
	check "allocinfo top loads none of them at run time (LD_DEBUG)" 0 "$out"
	"$BIN" plot --help | grep -q '^usage: allocinfo plot' && ok "allocinfo plot runs allocinfo-plot" || nok "allocinfo plot runs allocinfo-plot"
	mkdir -p "$W/alone" && cp "$BIN" "$W/alone/allocinfo"
	PATH="$W/alone/none" "$W/alone/allocinfo" plot -d x.db -o x.png > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "allocinfo-plot" "$W/err"; then ok "without allocinfo-plot: plot exits 1 naming it"
	else nok "without allocinfo-plot: plot exits 1 naming it" "exit $rc: $(cat "$W/err")"; fi
	PATH="$W/alone/none" "$W/alone/allocinfo" --help | grep -q 'plot .*not installed' && ok "and --help says plot is not installed" || nok "and --help says plot is not installed"
else
	nok "ldd runs on $BIN (a dynamic build)"
fi

# export -n N (per tag): the kept series and allocinfo_other_bytes add up to the profile
out=$("$BIN" export -n 7 -f "$s")
check "export -n 7: kept + other = every tag's bytes ($(awk 'NR > 2 { s += $1 } END { print s }' "$s"))" \
	"$(awk 'NR > 2 { s += $1 } END { print s }' "$s")" \
	"$(printf '%s\n' "$out" | awk '/^allocinfo_bytes\{/ || /^allocinfo_other_bytes / { s += $NF } END { print s }')"
check "export: no metric ends in _total (they are all gauges)" "" "$("$BIN" export -f "$s" --by module | grep -E '^# TYPE' | awk '$3 ~ /_total$/ || $4 != "gauge"')"
# allocinfo_profiling_enabled, from /proc/sys/vm/mem_profiling (or $ALLOCINFO_MEM_PROFILING)
for v in 0 1; do
	echo $v > "$W/mp"
	check "export: mem_profiling $v gives allocinfo_profiling_enabled $v" "allocinfo_profiling_enabled $v" \
		"$(ALLOCINFO_MEM_PROFILING=$W/mp "$BIN" export -f "$s" | grep '^allocinfo_profiling_enabled')"
done
check "export of a capture: no allocinfo_profiling_enabled" "" "$("$BIN" export -f "$s" | grep '^allocinfo_profiling_enabled')"
"$BIN" export -F json --by module -f "$s" > /dev/null 2>&1
check "export -F json --by module is a usage error" 2 $?
# export's bounds: --top 0, --top with -n or --all, --all of json: usage
# errors that name the way out
for args in "--top 0|--all" "-n 0|--all" "--top 5 -n 5|give one" "--all --top 5|not both" \
	"-F json --all|does not apply" "--top x|--all for every tag"; do
	a=${args%|*} want=${args#*|}
	"$BIN" export $a -f "$s" > /dev/null 2> "$W/err"
	rc=$?
	if [ $rc = 2 ] && grep -q -e "$want" "$W/err"; then ok "export $a: exit 2, '$want'"
	else nok "export $a: exit 2, '$want'" "exit $rc: $(cat "$W/err")"; fi
done
# a host of 7,000 tags: by default 50 series a metric and other, not 14,000
awk -v n=7000 'NR <= 2 { print; next } END { for (i = 0; i < n; i++) printf "%12d %8d drivers/x/f%d.c:%d func:f%d \n", 4096 + i, 1, i % 97, i, i }' "$s" > "$W/host7000.txt"
want_other=$(awk 'NR > 2 { print $1 }' "$W/host7000.txt" | sort -nr | tail -n +51 | awk '{ s += $1 } END { print s }')
out=$("$BIN" export -q -f "$W/host7000.txt")
check "export of $(($(wc -l < "$W/host7000.txt") - 2)) tags: 50 allocinfo_bytes and 50 allocinfo_calls series, the rest ($want_other bytes) in other" \
	"50 50 $want_other" \
	"$(printf '%s\n' "$out" | awk '/^allocinfo_bytes\{/ { b++ } /^allocinfo_calls\{/ { c++ } /^allocinfo_other_bytes / { o = $2 } END { print b, c, o }')"
check "export --all of it: every tag" "$(($(wc -l < "$W/host7000.txt") - 2))" "$("$BIN" export -q --all -f "$W/host7000.txt" | grep -c '^allocinfo_bytes{')"

# top --avg: bytes / calls, computed here with awk (integer division, as C)
want=$(awk 'NR > 2 { printf "%d %d %s\n", $1, ($2 ? int($1 / $2) : -1), $3 }' "$s" | sort)
got=$("$BIN" top --avg -b -H -n 0 -f "$s" | awk '{ printf "%d %d %s\n", $1, ($3 == "-" ? -1 : $3), $4 }' | sort)
check "top --avg: AVG is bytes / calls for every tag" "$want" "$got"
check "top --avg -c 2 (a count without --watch) is a usage error" "2" \
	"$("$BIN" top --avg -c 2 -f "$s" > /dev/null 2>&1; echo $?)"
# top --watch: refreshes with rates; the file changes between them
wf=$W/watch.txt
awk -v k=0 'NR <= 2 { print; next } { print }' "$s" > "$wf"
"$BIN" top --watch 0.2 -c 3 -b -n 5 -f "$wf" > "$W/w0" 2>&1
check "top --watch 0.2 -c 3: three refreshes" 3 "$(grep -c '^# .*refresh' "$W/w0")"
check "an unchanged file: every rate after the first refresh is 0" "0.00" \
	"$(awk '/^# / { r++ } r > 1 && $3 ~ /^[+-]?[0-9.]+$/ { print $3 + 0 }' "$W/w0" | sort -u | awk '{ printf "%.2f", $1 }')"
# a tag that is not the largest grows 1 MiB every 0.1 s while top watches
grow=mm/page_ext.c:271
( for k in $(seq 1 40); do
	awk -v k=$k -v g=$grow 'NR <= 2 { print; next } $3 == g { printf "%12d %8d %s %s \n", $1 + k * 1048576, $2, $3, $4; next } { print }' "$s" > "$wf.new"
	mv "$wf.new" "$wf"; sleep 0.1
done ) &
wpid=$!
for i in $(seq 50); do cmp -s "$wf" "$s" || break; sleep 0.1; done
"$BIN" top --watch 0.3 -c 4 -b -s rate -n 3 -f "$wf" > "$W/w1" 2>&1
kill $wpid 2> /dev/null; wait $wpid 2> /dev/null
# each refresh: "# ..., S s since the last", then rows SIZE CALLS RATE TAG;
# the growing tag's rate must be its size change over S, within rounding
bad=$(awk -v g=$grow '
	/^# .* since the last/ { for (i = 1; i <= NF; i++) if ($i == "s" && $(i + 1) == "since") dt = $(i - 1); next }
	/^# / { dt = 0; next }
	$4 == g { if (prev != "" && dt > 0) { n++; want = ($1 - prev) / dt; if ((want - $3) ^ 2 > (0.02 * want + 1) ^ 2 * 4) print "size " prev " -> " $1 " over " dt " s: rate " $3 ", want " want } prev = $1 }
	END { if (!n) print "no two refreshes showed " g }' "$W/w1")
check "top --watch: RATE is the change of size over the time printed" "" "$bad"
check "top --watch -s rate: the growing tag ($grow, 7th by size) first once rates are known" "$grow" \
	"$(awk '/^# .* since the last/ { getline; getline; print $4; exit }' "$W/w1")"
"$BIN" top --watch 0.2 -f - < "$s" > /dev/null 2>&1
check "top --watch -f - (stdin read once) is a usage error" 2 $?
# diff --seconds: RATE = DELTA / seconds
m2=$HERE/samples/early-module-form.txt
want=$("$BIN" diff -b -H "$m" "$m2" | awk '{ printf "%.2f\n", $1 / 300 }')
got=$("$BIN" diff -b -H --seconds 300 "$m" "$m2" | awk '{ printf "%.2f\n", $3 }')
check "diff --seconds 300: RATE is DELTA / 300 for every tag" "$want" "$got"
touch -d @1700000000 "$W/old.txt"; cp "$m" "$W/old.txt"; touch -d @1700000000 "$W/old.txt"
cp "$m2" "$W/new.txt"; touch -d @1700000600 "$W/new.txt"
check "diff --seconds mtime: 600 s from the files' times" "$("$BIN" diff -b -H --seconds 600 "$m" "$m2")" \
	"$("$BIN" diff -b -H --seconds mtime "$W/old.txt" "$W/new.txt")"
"$BIN" diff --seconds mtime "$W/new.txt" "$W/old.txt" > /dev/null 2>&1
check "diff --seconds mtime with NEW older than OLD is a usage error" 2 $?

# JSON input: errors name the place and keep what was read
js='{"version":"2.0","tags":[
{"file":"a.c","line":1,"module":null,"func":"f","bytes":4096,"calls":1,"extra":{}},
{"file":"b.c","line":2,"module":"m","bytes":10,"calls":1,"extra":{}},
{"file":"c.c","line":3,"module":null,"func":"h","bytes":1.5,"calls":1}'
printf '%s\n' "$js" | "$BIN" top -b -H -f - > "$W/out" 2> "$W/err"
check "JSON: a tag without func and a fraction: exit 3" 3 $?
grep -q '(stdin):3: JSON: a tag without "func"' "$W/err" && ok "JSON: the tag without func is named by its line" ||
	nok "JSON: the tag without func is named by its line" "$(cat "$W/err")"
grep -q '(stdin):4: JSON: expected an integer, not a fraction at column' "$W/err" && ok "JSON: the syntax error by line and column" ||
	nok "JSON: the syntax error by line and column" "$(cat "$W/err")"
check "JSON: the tags read before are kept" "4096 1 a.c:1 func:f" "$(awk '{ $1 = $1; print }' "$W/out")"
printf '{"tags":[{"file":"a b.c","line":1,"func":"f","bytes":1,"calls":1}]}' | "$BIN" top -f - > /dev/null 2> "$W/err"
grep -q 'a file that is empty or not printable ASCII' "$W/err" && ok "JSON: a file name with a space is rejected" || nok "JSON: a file name with a space is rejected" "$(cat "$W/err")"
printf '{"tags":[{"file":"a.c","line":1,"func":"f","bytes":1,"calls":1,"extra":{"accurate":"no"}}]}' | "$BIN" export -f - | grep -q 'accurate="no"' &&
	ok "JSON: extra accurate:no is read back" || nok "JSON: extra accurate:no is read back"

# JSON input in linear time: 100,000 tags well within 15 s (line numbers
# for messages are counted forward, not from the start for each tag)
awk 'BEGIN { print "allocinfo - version: 1.0"; for (i = 0; i < 100000; i++) printf "%12d %8d d%d/f%d.c:%d func:f%d \n", i * 37 % 1000000, i % 1000, i % 50, i % 5000, i % 300, i }' > "$W/big.txt"
"$BIN" export -q -F json -f "$W/big.txt" > "$W/big.json"
timeout 15 "$BIN" top -n 5 -f "$W/big.json" > "$W/bigj.out" 2>&1
check "JSON input: 100,000 tags read within 15 s" 0 $?
check "and the same top as the text" "$("$BIN" top -n 5 -f "$W/big.txt")" "$(cat "$W/bigj.out")"

# the man page
if command -v man > /dev/null; then
	out=$(MANWIDTH=80 man -l "$HERE/../allocinfo.1" 2>&1 > /dev/null)
	check "allocinfo.1 renders without warnings" "" "$out"
	MANWIDTH=80 man -l "$HERE/../allocinfo.1" 2> /dev/null | grep -q 'EXIT STATUS' && ok "allocinfo.1 has EXIT STATUS" || nok "allocinfo.1 has EXIT STATUS"
	# every option of these commands' --help is in the man page (by its
	# long name, or its short one when it has one)
	MANWIDTH=80 man -l "$HERE/../allocinfo.1" 2> /dev/null > "$W/man.txt"
	for c in record prune plot export; do
		missing=$("$BIN" $c --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\1\2/p' | while read -r o; do
			short=${o%%,*} long=${o##* }
			[ "$short" != "$o" ] && grep -qE -- "(^|[^a-z-])$short([^a-z-]|$)" "$W/man.txt" && continue
			grep -qE -- "(^|[^a-z-])$long([^a-z-]|$)" "$W/man.txt" || echo "$long"
		done | tr '\n' ' ')
		check "allocinfo.1 documents every option of $c --help" "" "$missing"
	done
else
	nok "man is installed (man-db; make deps)"
fi

# the guest check, under busybox sh, with the static build
if [ -n "$STATIC" ] && command -v busybox > /dev/null; then
	for f in "$HERE"/samples/*.txt; do
		out=$(ALLOCINFO_PROC=$f busybox sh "$HERE/guest-check.sh" "$STATIC" 2>&1)
		if [ $? -eq 0 ]; then ok "guest-check.sh (busybox sh, static) on $(basename "$f")"
		else nok "guest-check.sh (busybox sh, static) on $(basename "$f")" "$(echo "$out" | grep -A3 '^not ok')"; fi
	done
else
	nok "busybox and the static build are there (make deps, make static)"
fi
done_tap
