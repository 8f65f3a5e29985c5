#!/usr/bin/env bash
# Profiling switched on for the first time under slab load from several
# CPUs. The kernel boots with profiling off (sysctl.vm.mem_profiling=0, so
# it may be switched on later); pftag_churn (tests/modules/pftag_churn.c)
# allocates and frees from four threads through the three tag modes of
# the slab allocator (a call site's tag, its untagged twin, current's tag
# under kstrdup()), and profiling goes on while they run. An allocation
# that decided "no tag" before the switch and took its object after it
# must still write the object's slot, or the slot keeps the index of an
# object charged and freed in between, and the next free uncharges that
# tag a second time. Afterwards the threads free everything: each of the
# module's call sites must read 0 bytes and 0 calls, and no tag of the
# kernel may have wrapped below 0.
#
# The window is a few instructions wide and cannot be hit on purpose: the
# test asserts the counters after many steps around the switch (their
# number is printed); it fails on a double uncharge only when one happens.
#
# Slab frees clear their objects' slots while such allocations may be under
# way: from just before the switch until a Tasks RCU grace period after it,
# which the threads, rescheduling only with cond_resched(), hold off while
# they run. debugfs alloc_tag/storage's slab_free_clears_slots says whether
# frees clear: not before the switch, and not again, within 30 s, once the
# threads have stopped.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/switch-on
m=/opt/pftag/modules/pftag_churn.ko
storage=/sys/kernel/debug/alloc_tag/storage
script="
echo '== before'; cat /proc/sys/vm/mem_profiling
grep slab_free_clears_slots $storage
insmod $m threads=4
sleep 1
echo 1 > /proc/sys/vm/mem_profiling
echo '== after'; cat /proc/sys/vm/mem_profiling
sleep 3
echo '== churning'; grep slab_free_clears_slots $storage
echo 1 > /sys/kernel/debug/pftag_churn/stop
i=0
while grep -q 'slab_free_clears_slots: 1' $storage && [ \$i -lt 30 ]; do sleep 1; i=\$((i + 1)); done
echo '== settled'; grep slab_free_clears_slots $storage
echo '== lines'; grep '\\[pftag_churn\\]' /proc/allocinfo
echo '== wrapped'; awk 'NR > 2 && (length(\$1) > 18 || length(\$2) > 18 || \$1 ~ /^-/)' /proc/allocinfo
echo '== steps'; dmesg | grep 'pftag_churn: .* steps'
rmmod pftag_churn
echo '== warnings'; dmesg | grep -E 'WARNING|BUG:|Oops' | grep -vE '$QEMU_TOPOLOGY_WARNING' || true
echo '== end'
"
for mode in flags page_ext; do
	append=$(mode_append "$mode" 0)
	guest profiling "$o/$mode" "$append" "$script" || continue
	f=$o/$mode/out.log
	eq "$mode: booted off, switched on" "0 1" \
		"$(section before "$f" | head -1) $(section after "$f")"
	eq "$mode: slab frees clear no slot before the switch" "slab_free_clears_slots: 0" \
		"$(section before "$f" | grep slab_free_clears)"
	eq "$mode: slab frees stop clearing slots after the switch, the threads stopped" \
		"slab_free_clears_slots: 0" "$(section settled "$f")"
	echo "#   info: $mode: $(section steps "$f" | sed 's/.*pftag_churn: //'); 3 s after the switch, $(section churning "$f")"
	lines=$(section lines "$f")
	for site in kmalloc cache kstrdup; do
		line=$(grep -n "/\* SITE:$site \*/" "$TOP/tests/modules/pftag_churn.c" | cut -d: -f1)
		[ "$site" != kstrdup ] || continue # kstrdup's own site, in mm/util.c, is checked below
		eq "$mode: pftag_churn.c:$line ($site) is back to 0 bytes, 0 calls" "0 0" \
			"$(awk -v l="pftag_churn.c:$line" '$3 ~ "/" l "$" || $3 == l { print $1, $2 }' <<< "$lines")"
	done
	eq "$mode: no tag's bytes or calls wrapped below 0" "" "$(section wrapped "$f")"
	eq "$mode: no warning" "" "$(section warnings "$f")"
done
done_testing
