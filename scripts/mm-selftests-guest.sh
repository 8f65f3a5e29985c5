#!/bin/sh
# run.sh [NAME...]: the kernel's mm selftests in the busybox guest, in the
# order and with the setup of their run_vmtests.sh (which needs bash),
# each with a timeout of its own. Installed as /opt/mm-selftests/run.sh by
# scripts/mm-selftests.sh, with the static test binaries beside it; runs
# the tests NAME... only, when given.
#
# For every test it prints
#   ### begin NAME: COMMAND
#   (the test's output)
#   ### end NAME rc=RC seconds=S
# where RC is the exit status (kselftest: 0 pass, 4 skip, anything else a
# failure), 124 when the timeout killed the test, or "notbuilt" when the
# binary did not build (the reason, from unbuilt.txt, is the output).
# The kernel log gets "mm-selftests: begin NAME" and "end NAME" lines, so
# that a warning in the console log can be put down to its test. The
# last line is "### mm-selftests: done".
#
# A test runs in a session of its own: its timeout kills every process
# the test started (the kselftest harness forks one per case), not only
# the first, which busybox timeout would.
cd /opt/mm-selftests || exit 1
LOGS=/tmp/mm-selftests
mkdir -p "$LOGS"
SELECTED=" $* "
ksft_skip=4
VM=/proc/sys/vm
THP=/sys/kernel/mm/transparent_hugepage

now() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
selected() { [ "$SELECTED" = "  " ] || case $SELECTED in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
seconds() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }

# The transparent hugepage settings at the start; every test gets them
# back after it (thp_settings.c restores them itself, unless it is killed).
THP_FILES="enabled defrag shmem_enabled use_zero_page khugepaged/defrag
	khugepaged/pages_to_scan khugepaged/scan_sleep_millisecs
	khugepaged/alloc_sleep_millisecs khugepaged/max_ptes_none
	khugepaged/max_ptes_swap khugepaged/max_ptes_shared"
thp_read() { sed 's/.*\[\(.*\)\].*/\1/' "$THP/$1"; }
mkdir -p /tmp/mm-selftests-thp
for f in $THP_FILES; do
	[ -r "$THP/$f" ] && thp_read "$f" > "/tmp/mm-selftests-thp/$(echo "$f" | tr / _)"
done
thp_restore() {
	for f in $THP_FILES; do
		s=/tmp/mm-selftests-thp/$(echo "$f" | tr / _)
		[ -f "$s" ] && [ "$(thp_read "$f")" != "$(cat "$s")" ] && cat "$s" > "$THP/$f" 2> /dev/null
	done
	return 0
}

# Swap, on a zram device (the kernels of `make mm-selftests` have it):
# MADV_PAGEOUT swaps pages out only where there is swap, and khugepaged's,
# cow's and uffd-unit-tests' swap cases need it.
swap=none
if [ -w /sys/block/zram0/disksize ] && echo 512M > /sys/block/zram0/disksize &&
	mkswap /dev/zram0 > /dev/null && swapon /dev/zram0; then
	swap="512 MiB on zram0"
fi

# Huge pages as run_vmtests.sh sets them: 256 MiB, or 2 a CPU if more.
hp_kb=$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo)
nr_cpus=$(nproc)
need_kb=$((256 * 1024))
[ $((hp_kb * nr_cpus * 2)) -le $need_kb ] || need_kb=$((hp_kb * nr_cpus * 2))
need_pages=$((need_kb / hp_kb))
hp_orig=$(cat $VM/nr_hugepages)
free_hp() { awk '$1 == "HugePages_Free:" { print $2 }' /proc/meminfo; }
tries=2
while [ $tries -gt 0 ] && [ "$(free_hp)" -lt $need_pages ]; do
	echo 3 > $VM/drop_caches
	echo $((need_pages - $(free_hp) + $(cat $VM/nr_hugepages))) > $VM/nr_hugepages
	tries=$((tries - 1))
done
freepgs=$(free_hp)
[ "$freepgs" -ge $need_pages ] || echo "Not enough huge pages available ($freepgs < $need_pages)"
HP=$(cat $VM/nr_hugepages)

# A user for on-fault-limit, which must not run as root.
grep -q '^nobody:' /etc/passwd 2> /dev/null || {
	grep -q '^root:' /etc/passwd 2> /dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd
	echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >> /etc/passwd
	echo 'root:x:0:' >> /etc/group
	echo 'nogroup:x:65534:' >> /etc/group
}

begin() {
	echo "### begin $1: $2"
	echo "mm-selftests: begin $1" > /dev/kmsg
}
end() {
	echo "### end $1 rc=$2 seconds=$3"
	echo "mm-selftests: end $1 rc=$2" > /dev/kmsg
}

# skip NAME REASON: a test this guest cannot run, reported as a skip.
skip() {
	selected "$1" || return 0
	begin "$1" "-"
	echo "SKIP: $2"
	end "$1" $ksft_skip 0.00
}

# t NAME SECONDS CMD...: run CMD with a timeout of SECONDS.
t() {
	name=$1 secs=$2
	shift 2
	selected "$name" || return 0
	begin "$name" "$*"
	# The test's binary: the first word "./NAME" of CMD.
	for exe in "$@"; do
		case $exe in ./*) break ;; esac
	done
	case $exe in
	./*)
		if [ ! -x "$exe" ]; then
			why=$(sed -n "s|^${exe#./}: ||p" unbuilt.txt)
			echo "not built: ${why:-no such binary}"
			end "$name" notbuilt 0.00
			return 0
		fi ;;
	esac
	to=$LOGS/$name.timeout
	rm -f "$to"
	start=$(now)
	setsid "$@" > "$LOGS/$name" 2>&1 < /dev/null &
	pid=$!
	setsid sh -c "sleep $secs; echo > $to; kill -TERM -$pid; sleep 5; kill -KILL -$pid" \
		> /dev/null 2>&1 < /dev/null &
	wd=$!
	wait $pid
	rc=$?
	stop=$(now)
	# The watchdog's session, and the watchdog itself in case it has
	# not got to setsid() yet (a quick test under TCG ends before that).
	kill -KILL -$wd 2> /dev/null
	kill -KILL $wd 2> /dev/null
	wait $wd 2> /dev/null
	# What the test left running.
	kill -KILL -$pid 2> /dev/null
	awk 1 "$LOGS/$name"
	if [ -e "$to" ]; then
		echo "TIMEOUT: killed after $secs s"
		rc=124
	fi
	end "$name" $rc "$(seconds $((stop - start)))"
	thp_restore
	[ "$(cat $VM/nr_hugepages)" = "$HP" ] || echo "$HP" > $VM/nr_hugepages
}

# Before a hugetlb test, as run_vmtests.sh: free what can be freed.
defrag() {
	echo 3 > $VM/drop_caches
	echo 1 > $VM/compact_memory
}

echo "### mm-selftests: start $(uname -r), $nr_cpus CPUs, $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) kB, $HP huge pages of $hp_kb kB, swap: $swap"

# hugetlb
defrag; t hugepage-mmap 120 ./hugepage-mmap
if [ -w /proc/sys/kernel/shmmax ]; then
	shmmax=$(cat /proc/sys/kernel/shmmax) shmall=$(cat /proc/sys/kernel/shmall)
	echo 268435456 > /proc/sys/kernel/shmmax
	echo 4194304 > /proc/sys/kernel/shmall
fi
defrag; t hugepage-shm 120 ./hugepage-shm
if [ -n "${shmmax:-}" ]; then
	echo "$shmmax" > /proc/sys/kernel/shmmax
	echo "$shmall" > /proc/sys/kernel/shmall
fi
defrag; t map_hugetlb 120 ./map_hugetlb
defrag; t hugepage-mremap 120 ./hugepage-mremap
defrag; t hugepage-vmemmap 120 ./hugepage-vmemmap
defrag; t hugetlb-madvise 120 ./hugetlb-madvise
defrag; t hugetlb_dio 120 ./hugetlb_dio
# One huge page, and only one, for these two.
hp_set=$HP
HP=1; echo 1 > $VM/nr_hugepages
# 10,000 rounds of two threads faulting and discarding a huge page: a
# race that TCG does not get through in minutes. 10 s of it, reported as
# a timeout.
defrag; t hugetlb_fault_after_madv 10 ./hugetlb_fault_after_madv
defrag; t hugetlb_madv_vs_map 120 ./hugetlb_madv_vs_map
HP=$hp_set; echo $HP > $VM/nr_hugepages

# mmap, gup
t map_fixed_noreplace 60 ./map_fixed_noreplace
t gup_test-u 120 ./gup_test -u
t gup_test-a 120 ./gup_test -a
t gup_test-ct 120 ./gup_test -ct -F 0x1 0 19 0x1000
t gup_longterm 300 ./gup_longterm

# userfaultfd: the hugetlb runs get half the free huge pages each.
half_mb=$((freepgs * hp_kb / 1024 / 2))
t uffd-unit-tests 300 ./uffd-unit-tests
t uffd-stress-anon 300 ./uffd-stress anon 20 16
t uffd-stress-hugetlb 300 ./uffd-stress hugetlb "$half_mb" 32
t uffd-stress-hugetlb-private 300 ./uffd-stress hugetlb-private "$half_mb" 32
t uffd-stress-shmem 300 ./uffd-stress shmem 20 16
t uffd-stress-shmem-private 300 ./uffd-stress shmem-private 20 16
HP=$hp_orig; echo $HP > $VM/nr_hugepages

t compaction_test 300 ./compaction_test
t on-fault-limit 60 su -s /bin/sh -c ./on-fault-limit nobody
t map_populate 60 ./map_populate
t mlock-random-test 120 ./mlock-random-test
t mlock2-tests 120 ./mlock2-tests
t mrelease_test 120 ./mrelease_test
# Its 2 GiB regions, never populated, do not fit the heuristic
# overcommit of a 1 GiB guest (run_vmtests.sh leaves overcommit alone).
# Without address randomization: the case "with 40MB Preamble" maps the
# preamble with MAP_FIXED_NOREPLACE below a destination it checks alone,
# about 50 MiB up, and the heap, which x86-64 places anywhere in the
# GiB after the binary (arch_randomize_brk()), lies there in about one
# run in ten: EEXIST, on every kernel alike.
o=$(cat $VM/overcommit_memory)
r=$(cat /proc/sys/kernel/randomize_va_space)
echo 1 > $VM/overcommit_memory
echo 0 > /proc/sys/kernel/randomize_va_space
t mremap_test 300 ./mremap_test
echo "$o" > $VM/overcommit_memory
echo "$r" > /proc/sys/kernel/randomize_va_space
# It maps 4 huge pages of each size that has them free; run_vmtests.sh
# leaves it the huge pages the machine had before (none here), where it
# skips every size. 8 of 2 MiB; 1 GiB pages do not fit a node of 1 GiB.
HP=8; echo 8 > $VM/nr_hugepages
t thuge-gen 120 ./thuge-gen
HP=$hp_orig; echo $HP > $VM/nr_hugepages
if ! grep -qw cgroup2 /proc/filesystems; then
	why="needs cgroup v2 with the hugetlb controller: this kernel has no cgroup2 file system"
else
	why="a bash script (the guest has busybox sh)"
fi
skip charge_reserved_hugetlb "$why"
skip hugetlb_reparenting_test "$why"

if grep -qw la57 /proc/cpuinfo; then
	# Its wrapper (va_high_addr_switch.sh, bash) checks the kernel's
	# page table levels and the CPU's la57; a kernel without 5-level
	# paging hides la57. Its hugetlb cases get the 6 huge pages
	# run_vmtests.sh gives them on arm64 (on x86 it leaves none).
	HP=6; echo 6 > $VM/nr_hugepages
	t va_high_addr_switch 120 ./va_high_addr_switch --run-hugetlb
	HP=$hp_orig; echo $HP > $VM/nr_hugepages
else
	skip va_high_addr_switch "the CPU or the kernel has no 5-level paging (no la57 in /proc/cpuinfo)"
fi
o=$(cat $VM/overcommit_memory)
echo 1 > $VM/overcommit_memory
t virtual_address_range 300 ./virtual_address_range
echo "$o" > $VM/overcommit_memory

# has_module NAME: this kernel has module NAME (busybox's modprobe has no
# dry run).
has_module() {
	grep -q "/$1\.ko:" "/lib/modules/$(uname -r)/modules.dep" 2> /dev/null
}
if has_module test_vmalloc; then
	# test_vmalloc.sh smoke, as run_vmtests.sh runs it: the module runs
	# its cases while it loads and then refuses to stay (EAGAIN, which
	# modprobe reports as an error, and test_vmalloc.sh ignores). The
	# result is in its "Summary:" lines in the kernel log: a pass when
	# there are some and every one has "failed: 0", but those of
	# align_shift_alloc_test, which lib/test_vmalloc.c says "is supposed
	# to be failed".
	cat > "$LOGS/test_vmalloc.sh" << 'EOF'
dmesg -c > /dev/null
modprobe test_vmalloc test_loop_count=10000 test_repeat_count=10
echo "modprobe: exit status $?"
dmesg | grep -E 'Summary:|Failed'
n=$(dmesg | grep -c 'Summary:')
bad=$(dmesg | grep 'Summary:' | grep -v 'Summary: align_shift_alloc_test ' | grep -vc ' failed: 0 ')
echo "$n summaries, $bad with failures"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
EOF
	t test_vmalloc 600 sh "$LOGS/test_vmalloc.sh"
	rmmod test_vmalloc 2> /dev/null
else
	skip test_vmalloc "no test_vmalloc module in this kernel (CONFIG_TEST_VMALLOC)"
fi
t mremap_dontunmap 120 ./mremap_dontunmap
if has_module test_hmm; then
	modprobe test_hmm
	t hmm-tests 300 ./hmm-tests
	rmmod test_hmm 2> /dev/null
else
	skip hmm-tests "no test_hmm module in this kernel (CONFIG_TEST_HMM)"
fi
t madv_populate 120 ./madv_populate
[ ! -w /proc/sys/kernel/yama/ptrace_scope ] || echo 0 > /proc/sys/kernel/yama/ptrace_scope
t memfd_secret 60 ./memfd_secret

# KSM. Its smart scan (on by default since 6.7) skips a page that has
# not merged for a growing number of scans, while ksm_tests waits a fixed
# two full scans after MADV_MERGEABLE: -N -m 1's first page, alone for
# hundreds of scans before its twin is made, is then often skipped in
# both, and neither merges (pages_volatile 2). On the baseline kernel
# under TCG, 5 runs of 30 failed so, and none of 30 with smart_scan=0.
# Off for ksm_tests, as LTP's KSM tests run; ksm_functional_tests, whose
# pages all start together, gets the default back.
KSM=/sys/kernel/mm/ksm
[ ! -w $KSM/smart_scan ] || { smart_scan=$(cat $KSM/smart_scan); echo 0 > $KSM/smart_scan; }
# -H and -P time the merge of 100 MiB, 70 to 85 s under TCG, more on
# the debug build with other guests beside it: the runner gives them
# 300 s, and the test's own limit (120 s of scanning) decides.
t ksm_tests-H 300 ./ksm_tests -H -s 100
t ksm_tests-P 300 ./ksm_tests -P -s 100
t ksm_tests-M 120 ./ksm_tests -M -p 10
t ksm_tests-U 120 ./ksm_tests -U
t ksm_tests-Z-z0 120 ./ksm_tests -Z -p 10 -z 0
t ksm_tests-Z-z1 120 ./ksm_tests -Z -p 10 -z 1
t ksm_tests-N-m1 120 ./ksm_tests -N -m 1
t ksm_tests-N-m0 120 ./ksm_tests -N -m 0
[ -z "${smart_scan:-}" ] || echo "$smart_scan" > $KSM/smart_scan
t ksm_functional_tests 120 ./ksm_functional_tests

t protection_keys_32 300 ./protection_keys_32
t protection_keys_64 300 ./protection_keys_64
t soft-dirty 60 ./soft-dirty
t pagemap_ioctl 300 ./pagemap_ioctl
t cow 600 ./cow
t khugepaged 300 ./khugepaged
t khugepaged-s2 300 ./khugepaged -s 2
t transhuge-stress 60 ./transhuge-stress -d 20
t split_huge_page_test 300 ./split_huge_page_test
# Its two hugetlb cases map a huge page each and move it to the other
# node: 8 huge pages, spread over both nodes (without any, both fail on
# mmap()).
HP=8; echo 8 > $VM/nr_hugepages
t migration 300 ./migration
HP=$hp_orig; echo $HP > $VM/nr_hugepages
t mkdirty 60 ./mkdirty
t mdwe_test 60 ./mdwe_test

# Built by the Makefile, not run by 6.12's run_vmtests.sh.
t mseal_test 60 ./mseal_test
t seal_elf 60 ./seal_elf
t droppable 60 ./droppable
t pkey_sighandler_tests_32 60 ./pkey_sighandler_tests_32
t pkey_sighandler_tests_64 60 ./pkey_sighandler_tests_64

# run_vmtests.sh -d (destructive: they poison pages; the guest is
# thrown away after the run). Both get the 8 huge pages run_vmtests.sh
# gives the first: without them the second skips every case.
if [ -r $VM/enable_soft_offline ]; then
	eso=$(cat $VM/enable_soft_offline)
fi
HP=8; echo 8 > $VM/nr_hugepages
t hugetlb-soft-offline 120 ./hugetlb-soft-offline
[ -z "${eso:-}" ] || echo "$eso" > $VM/enable_soft_offline
t hugetlb-read-hwpoison 120 ./hugetlb-read-hwpoison
HP=$hp_orig; echo $HP > $VM/nr_hugepages

# Binaries no line above runs (a newer tree): listed, not run.
for f in *; do
	# (the files with a dot are the tests' own, e.g. pagemap_ioctl's copy
	# of its source)
	case $f in *.*) continue ;; esac
	[ -x "$f" ] && [ "$f" != run.sh ] && [ "$f" != write_to_hugetlbfs ] || continue
	grep -qE "\./$f( |\$)" "$0" || echo "### unlisted $f"
done
echo "### mm-selftests: done"
