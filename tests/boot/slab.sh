#!/usr/bin/env bash
# Slab objects' tags as indices, on the profiling kernel in both page
# storage modes, on the debug build and on the distribution layouts:
# pftag_slab allocates n objects on every path that charges a slab object
# (kmalloc, kmem_cache_alloc, bulk, a merged cache, krealloc, kfree_rcu, a
# large kmalloc, __GFP_NO_OBJ_EXT, GFP_KERNEL_ACCOUNT, and the node and lru
# forms, each with its own functions since the call sites give their tag
# as an argument), and each call site must show exactly n calls and n
# times its cache's object size (slab_size in /sys/kernel/slab, the size
# the allocator gives each object), or n times the pages of a large
# kmalloc; after the free, 0 and 0. The storage report gives the index
# width and the tag blocks; the debug build's checks stay silent, KFENCE
# sampling too, and a generic KASAN build's on x86_64. The debug builds
# have memcg: there the module is loaded inside a memory cgroup, and its
# accounted objects are charged to it.
# For ARCH=i386 (tests/run.sh) the same on 32-bit kernels (memcg in every
# build there: scripts/config/arch-i386.config). For ARCH=arm64, also on
# Android GKI 6.12's page->flags layout (scripts/config/layout-gki.config,
# with tag-based KASAN) booted with GKI's command line: page tags in page
# flags with the spare bits scripts/page-flags-layout.sh computes, every
# site exact, KASAN silent.
# Architectures: any
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/slab
mkdir -p "$o"
mods=/opt/pftag/modules
src=$TOP/tests/modules/pftag_slab.c
n=16

sline() { grep -n "/\* SITE:$1 \*/" "$src" | cut -d: -f1; }
# sites TEXT LINE: "bytes calls" of pftag_slab.c:LINE in allocinfo TEXT.
site() { awk -v l="pftag_slab.c:$2" '$3 ~ "/" l "$" || $3 == l { print $1, $2 }' <<< "$1"; }

script="
for c in kmalloc-8 kmalloc-16 kmalloc-64 kmalloc-192 kmalloc-cg-64 pftag_slab_obj pftag_slab_merged; do
	[ -e /sys/kernel/slab/\$c ] && echo \"size \$c \$(cat /sys/kernel/slab/\$c/slab_size)\"
done > /tmp/sizes0
echo '== storage-boot'; cat /sys/kernel/debug/alloc_tag/storage
echo '== memory-boot'; cat /sys/kernel/debug/alloc_tag/memory
echo '== possible'; cat /sys/devices/system/cpu/possible
# With memcg: load the module inside a memory cgroup, so that its
# GFP_KERNEL_ACCOUNT objects are charged to it and their slabs' tag
# blocks hold memcg's vectors.
if grep -q '^memory' /proc/cgroups 2>/dev/null &&
	mount -t cgroup2 none /sys/fs/cgroup &&
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control &&
	mkdir /sys/fs/cgroup/pftag && echo \$\$ > /sys/fs/cgroup/pftag/cgroup.procs; then
	echo '== memcg'; cat /proc/self/cgroup
fi
insmod $mods/pftag_slab.ko n=$n
echo '== storage-loaded'; cat /sys/kernel/debug/alloc_tag/storage
echo '== memory-loaded'; cat /sys/kernel/debug/alloc_tag/memory
for c in kmalloc-8 kmalloc-16 kmalloc-64 kmalloc-192 kmalloc-cg-64 pftag_slab_obj pftag_slab_merged; do
	[ -e /sys/kernel/slab/\$c ] && echo \"size \$c \$(cat /sys/kernel/slab/\$c/slab_size)\"
done > /tmp/sizes
echo '== sizes'; cat /tmp/sizes
echo '== loaded'; grep '\\[pftag_slab\\]' /proc/allocinfo
echo 1 > /sys/kernel/debug/pftag_slab/free
echo '== freed'; grep '\\[pftag_slab\\]' /proc/allocinfo
echo '== storage'; cat /sys/kernel/debug/alloc_tag/storage
rmmod pftag_slab
echo '== kfence'; cat /sys/kernel/debug/kfence/stats 2>/dev/null
echo '== dmesg'; dmesg
echo '== end'
"

# check_ledger NAME OUT-LOG WORD: debugfs alloc_tag/memory adds up, and its
# kinds follow from the storage report's counts: the per-CPU counters of
# every kernel tag and indexed module tag on every possible CPU (16 bytes
# a tag and CPU), an index field of a WORD (the kernel's long, 8 or 4
# bytes) a tag, the counter table's entries a WORD each, page_ext slots only in
# page_ext storage, a whole number of slots; at boot and with pftag_slab
# loaded.
check_ledger() {
	local name=$1 f=$2 word=$3 cpus when mem st sum tags
	cpus=$(section possible "$f" | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) {
		split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }')
	for when in boot loaded; do
		mem=$(section "memory-$when" "$f") st=$(section "storage-$when" "$f")
		if [ -z "$mem" ] || [ -z "$st" ] || [ -z "$cpus" ]; then
			fail "$name: the ledger and the storage report are there ($when)" "$mem"
			continue
		fi
		sum=$(( $(field page_ext_slots "$mem") + $(field slab_tag_blocks_kmalloc "$mem") +
			$(field percpu_counters "$mem") + $(field module_map "$mem") +
			$(field counter_table "$mem") + $(field tag_indices "$mem") +
			$(field debug_bitmap "$mem") ))
		eq "$name: the ledger's total is the sum of its kinds ($when)" "$sum" "$(field total "$mem")"
		tags=$(( $(field kernel_tags "$st") + $(field module_indices_used "$st") ))
		eq "$name: per-CPU counters: $tags tags x $cpus CPUs x 16 bytes ($when)" \
			"$((tags * cpus * 16))" "$(field percpu_counters "$mem")"
		eq "$name: tag indices: $word bytes for each of $tags tags ($when)" \
			"$(( (tags + $(field unindexed_tags "$st")) * word ))" "$(field tag_indices "$mem")"
		eq "$name: module map bytes as the storage report has them ($when)" \
			"$(field module_map_bytes "$st")" "$(field module_map "$mem")"
		eq "$name: counter table bytes as the storage report has them ($when)" \
			"$(field counter_table_bytes "$st")" "$(field counter_table "$mem")"
		# The boot's table: a word for each kernel tag and the 2 reserved
		# indices; a module map's copy adds a table for it and the kernel's.
		local entries kidx
		entries=$(field module_map_entries "$st")
		kidx=$(( $(field kernel_tags "$st") + 2 ))
		if [ "$entries" = 0 ]; then
			eq "$name: counter table: $word bytes for each of $kidx kernel and reserved indices ($when)" \
				"$((kidx * word))" "$(field counter_table "$mem")"
		else
			check "$name: counter table: the boot's and at least one of $((kidx + entries)) entries ($when)" \
				test "$(field counter_table "$mem")" -ge "$(( (2 * kidx + entries) * word ))"
		fi
		local slot slots all
		slot=$(field page_ext_index_bytes "$st") slots=$(field page_ext_slots "$mem")
		all=$(field page_ext_all "$mem")
		if [ "$slot" = 0 ]; then
			eq "$name: no page_ext slots in page-flags storage ($when)" 0 "$slots"
		elif [ "$slots" -gt 0 ] && [ $((slots % slot)) = 0 ] && [ "$slots" -le "$all" ]; then
			ok "$name: page_ext slots: $((slots / slot)) of $slot bytes, within page_ext's $all ($when)"
		else
			fail "$name: page_ext slots are whole $slot-byte slots within page_ext ($when)" "$mem"
		fi
	done
}

check_slab() { # NAME KERNEL APPEND
	local name=$1 kernel=$2 append=$3 out=$o/$1 f sizes loaded freed st
	guest "$kernel" "$out" "$append" "$script" || return
	f=$out/out.log
	sizes=$(section sizes "$f")
	size() { awk -v c="$1" '$2 == c { print $3 }' <<< "$sizes"; }
	local k8 k64 k192 kacc obj merged
	# An 8-byte kmalloc's cache: kmalloc-16 where the kernel's smallest
	# alignment is 16 (tag-based KASAN's granule) and kmalloc-8 is not made.
	k8=$(size kmalloc-8)
	k8=${k8:-$(size kmalloc-16)}
	k64=$(size kmalloc-64) k192=$(size kmalloc-192)
	kacc=$(size kmalloc-cg-64)
	kacc=${kacc:-$k64}
	obj=$(size pftag_slab_obj) merged=$(size pftag_slab_merged)
	if [ -z "$k8" ] || [ -z "$k64" ] || [ -z "$k192" ] || [ -z "$obj" ] || [ -z "$merged" ]; then
		fail "$name: /sys/kernel/slab gives the caches' object sizes" "$sizes"
		return
	fi
	loaded=$(section loaded "$f")
	freed=$(section freed "$f")
	local s want
	while read -r s want; do
		eq "$name: SITE:$s has $want after loading (bytes calls)" "$want" \
			"$(site "$loaded" "$(sline "$s")")"
		eq "$name: SITE:$s is back to 0 0 after the free" "0 0" \
			"$(site "$freed" "$(sline "$s")")"
	done <<- EOF
		kmalloc $((n * (k8 + k64 + k192))) $((3 * n))
		cache $((n * obj)) $n
		bulk $((n * obj)) $n
		merged $((n * merged)) $n
		krealloc_old 0 0
		krealloc $((n * k192)) $n
		rcu $((n * k64)) $n
		large $((n * 16384)) $n
		noext 0 0
		account $((n * kacc)) $n
		kmnode $((n * k64)) $n
		kznode $((n * k192)) $n
		cnode $((n * obj)) $n
		clru $((n * obj)) $n
	EOF
	if grep -q '^CONFIG_MEMCG=y' "$BUILD/obj/$kernel/.config"; then
		eq "$name: pftag_slab is loaded inside a memory cgroup (memcg's vectors in tag blocks)" \
			"0::/pftag" "$(section memcg "$f")"
	fi
	st=$(section storage "$f")
	eq "$name: slab indices take 2 bytes an object" 2 "$(field slab_index_bytes "$st")"
	local blocks
	blocks=$(( $(field slab_tag_blocks_in_slab "$st") + $(field slab_tag_blocks_kmalloc "$st") ))
	[ "$blocks" -gt 0 ] && ok "$name: slabs have tag blocks ($(field slab_tag_blocks_in_slab "$st") in their leftover space, $(field slab_tag_blocks_kmalloc "$st") allocated)" ||
		fail "$name: slabs have tag blocks" "$st"
	eq "$name: no object went untracked" 0 "$(field slab_untracked_allocations "$st")"
	local word=4
	grep -q '^CONFIG_64BIT=y' "$BUILD/obj/$kernel/.config" && word=8
	check_ledger "$name" "$f" "$word"
	local neg
	neg=$(section loaded "$f" | awk '$1 < 0 || $2 < 0')
	eq "$name: no negative counter" "" "$neg"
	eq "$name: no warning, BUG or debug report" "" \
		"$(debug_reports <(section dmesg "$f") "$QEMU_TOPOLOGY_WARNING")"
	if [[ $append == *kfence.sample_interval=* ]]; then
		local kf ka kfr
		kf=$(section kfence "$f")
		ka=$(awk -F: '/total allocations/ { print $2 + 0 }' <<< "$kf")
		kfr=$(awk -F: '/total frees/ { print $2 + 0 }' <<< "$kf")
		if [ "${ka:-0}" -gt 0 ] && [ "${kfr:-0}" -gt 0 ]; then
			ok "$name: KFENCE allocated $ka objects and freed $kfr, under the checks above"
		else
			fail "$name: KFENCE allocated and freed objects" "$kf"
		fi
	fi
}

check_slab flags "$(profiling_id "")" ""
check_slab page_ext "$(profiling_id "")" "sysctl.vm.mem_profiling=1,page_ext"
if arm64_part_skip "debug, debug-kfence: every site on the debug build, and with KFENCE"; then
	:
elif err=$(build_profiling debug 2>&1); then
	check_slab debug "$(profiling_id debug)" ""
	# KFENCE sampling every millisecond: its objects, one to a page
	# wherever kfence puts it, through the debug build's checks.
	check_slab debug-kfence "$(profiling_id debug)" "kfence.sample_interval=1"
else
	fail "the debug build builds" "$err"
fi
# Generic KASAN (x86_64; arm64 takes the tag-based one below): objects
# with KASAN's red zones and metadata, frees through its quarantine, every
# access checked.
if [ "${ARCH:-x86_64}" = x86_64 ]; then
	if err=$(build_profiling kasan-generic 2>&1); then
		check_slab kasan-generic "$(profiling_id kasan-generic)" ""
		check "kasan-generic: KASAN is on in the guest" \
			grep -q 'KernelAddressSanitizer initialized' "$o/kasan-generic/out.log"
	else
		fail "kasan-generic: the generic KASAN build builds" "$err"
	fi
fi
if [ "${ARCH:-x86_64}" = arm64 ] && ! arm64_part_skip "gki: every site on the GKI layout with tag-based KASAN"; then
	gki="sysctl.vm.mem_profiling=1 stack_depot_disable=on kasan.stacktrace=off"
	if ! err=$(build_profiling layout-gki 2>&1); then
		fail "gki: the GKI layout's build builds" "$err"
	elif ! spare=$("$TOP/scripts/page-flags-layout.sh" -f "base mm profiling layout-gki" 2>&1); then
		fail "gki: scripts/page-flags-layout.sh gives the GKI layout" "$spare"
	else
		spare=$(awk '$1 == "spare" { print $2 }' <<< "$spare")
		check_slab gki "$(profiling_id layout-gki)" "$gki"
		check "gki: page tags in page flags, $spare spare bits, as the layout gives" \
			grep -qE "alloc_tag: page tags in page flags: $spare spare bits, [0-9]+ usable" "$o/gki/out.log"
		echo "#   info: gki: $(grep -m1 -oE 'alloc_tag: page tags in [^;]*' "$o/gki/out.log")"
	fi
fi
# The distribution layouts' debug builds (LAYOUTS, tests/lib.sh): page_ext
# storage chosen by itself.
for l in $LAYOUTS; do
	if err=$(build_layout "$l" 2>&1); then
		check_slab "layout-$l" "$(layout_id "$l")" ""
	else
		fail "layout-$l: the layout's debug build builds" "$err"
	fi
done
done_testing
