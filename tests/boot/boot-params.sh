#!/usr/bin/env bash
# The boot parameters: 6.12's sysctl.vm.mem_profiling forms, the storage
# suffixes, and garbage. A bad value gets one message naming the accepted
# forms and keeps the default; no form trips do_sysctl_args() into
# "Failed to set sysctl parameter".
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/boot-params
script="
echo '== state'; echo profiling \$(cat /proc/sys/vm/mem_profiling); echo compressed \$(cat /proc/sys/vm/mem_profiling_compressed)
echo '== write'; if echo 1 > /proc/sys/vm/mem_profiling 2>/dev/null; then echo writable; else echo refused; fi
echo '== dmesg'; dmesg
echo '== end'"

# boot_case NAME APPEND PROFILING COMPRESSED WRITE [MESSAGE-REGEX]
boot_case() {
	local name=$1 append=$2 want_p=$3 want_c=$4 want_w=$5 msg=${6:-} f st d
	guest profiling "$o/$name" "$append" "$script" || return
	f=$o/$name/out.log
	st=$(section state "$f")
	d=$(section dmesg "$f")
	eq "$name: mem_profiling, storage" "profiling $want_p compressed $want_c" "$(tr '\n' ' ' <<< "$st" | sed 's/ $//')"
	eq "$name: a run-time write of 1 is $want_w" "$want_w" "$(section write "$f")"
	check "$name: no 'Failed to set sysctl parameter'" bash -c "! grep -q 'Failed to set sysctl' <<< \"\$1\"" _ "$d"
	check "$name: no 'Malformed early option'" bash -c "! grep -q 'Malformed early option' <<< \"\$1\"" _ "$d"
	if [ -n "$msg" ]; then
		check "$name: the log says: $msg" grep -qE -- "$msg" <<< "$d"
	fi
}

forms='use 0, 1 or never, optionally followed by ,compressed or ,page_ext; keeping the default \(1\)'
boot_case default "" 1 1 writable
boot_case off "sysctl.vm.mem_profiling=0" 0 1 writable
boot_case on "sysctl.vm.mem_profiling=1" 1 1 writable
boot_case never "sysctl.vm.mem_profiling=never" 0 0 refused
boot_case compressed "sysctl.vm.mem_profiling=1,compressed" 1 1 writable
boot_case page_ext "sysctl.vm.mem_profiling=1,page_ext" 1 0 writable
boot_case compressed-capped "sysctl.vm.mem_profiling=1,compressed mem_profiling_idx_bits=8" 1 0 writable \
	'page-flags storage \(compressed\) was requested but cannot be used: .*profiling stays on with page_ext storage'
boot_case garbage "sysctl.vm.mem_profiling=banana" 1 1 writable "sysctl.vm.mem_profiling=banana is not understood: $forms"
boot_case bad-suffix "sysctl.vm.mem_profiling=1,zip" 1 1 writable "sysctl.vm.mem_profiling=1,zip is not understood: $forms"
boot_case empty "sysctl.vm.mem_profiling=" 1 1 writable "sysctl.vm.mem_profiling= is not understood: $forms"
boot_case bad-bits "mem_profiling_idx_bits=lots" 1 1 writable \
	'mem_profiling_idx_bits=lots is not a number of bits from 0 to 64; the cap is not applied'
boot_case bad-headroom "mem_profiling_headroom=-5" 1 1 writable \
	'mem_profiling_headroom=-5 is not a number of tags; keeping 4096'
# Given more than once (a boot loader's defaults, then an entry's own):
# the last one counts, at boot and in do_sysctl_args()'s replay of each.
boot_case repeated-on "sysctl.vm.mem_profiling=0 sysctl.vm.mem_profiling=1" 1 1 writable
boot_case repeated-off "sysctl.vm.mem_profiling=1,page_ext sysctl.vm.mem_profiling=0" 0 1 writable
boot_case repeated-never "sysctl.vm.mem_profiling=1 sysctl.vm.mem_profiling=never" 0 0 refused

# A parameter do_sysctl_args() does not replay: the early parameter takes
# "mem-profiling" for "mem_profiling", the sysctl file does not (its own
# "Failed to set" names it). The user's first write after boot, the boot's
# value again, is the user's and is acted on (refused: "never" is final),
# not taken for a replay and dropped.
name=unreplayed
if guest profiling "$o/$name" "sysctl.vm.mem-profiling=never" "
echo '== state'; cat /proc/sys/vm/mem_profiling
echo '== write'; if echo -n never > /proc/sys/vm/mem_profiling 2>/dev/null; then echo accepted; else echo refused; fi
echo '== end'"; then
	f=$o/$name/out.log
	eq "$name: the early parameter applied never" 0 "$(section state "$f")"
	eq "$name: a user's first write is acted on, not taken for a replay" refused "$(section write "$f")"
fi
done_testing
