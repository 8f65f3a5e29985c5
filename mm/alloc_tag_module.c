// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page allocation tag indices of module tags.
 *
 * A kernel tag's index follows from its place in the kernel's tag section
 * (pgalloc_tag.c). A module's tags get indices when the module loads, from
 * the module index space that the boot sized (alloc_tag_module_space), and
 * give them back when it unloads without live allocations. An allocation
 * that carries a module index finds its tag in a map, indexed by the index
 * less the kernel's, that grows as modules load, and its counters in the
 * free path's table of every index's counters, which grows with the map
 * and is read without a lock (alloc_tag_storage.h).
 */

#include <linux/alloc_tag.h>
#include <linux/alloc_tag_idx.h>
#include <linux/idr.h>
#include <linux/kmemleak.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "alloc_tag_storage.h"

#undef pr_fmt
#define pr_fmt(fmt) "alloc_tag: " fmt

/* Entries of the first map that is allocated: a page of pointers. */
#define MODULE_MAP_MIN		(PAGE_SIZE / sizeof(struct alloc_tag *))

/*
 * alloc_tag_module_map->tags[n] is the tag of index
 * alloc_tag_kernel_idx_end + n. Entries are published with WRITE_ONCE()
 * before the index is stored in the tag, so a page can carry an index only
 * after its entry is visible. Written under the alloc_tags codetag type's
 * mod_lock (the module load and unload callbacks), which also serializes
 * growing the map; read locklessly by alloc_tag_module_from_n(). It points
 * to an empty map until a module tag first gets an index.
 */
static struct alloc_tag_module_map module_map_empty;
static DEFINE_PER_CPU(struct alloc_tag_counters, unowned_counters);
struct alloc_tag alloc_tag_unowned = { .counters = &unowned_counters };
struct alloc_tag_module_map *alloc_tag_module_map = &module_map_empty;
static unsigned long module_map_bytes;		/* every map allocated */

/*
 * The free path's table of counters by index (alloc_tag_storage.h), under
 * the same rules as the map: entries written before their index is
 * published, under mod_lock, and the table replaced by a larger copy as
 * the map grows. Until the boot fills in the kernel's entries
 * (alloc_tag_idx_counters_init()), no tag has an index and the table is
 * the reserved indices' alone.
 */
static DEFINE_PER_CPU(struct alloc_tag_counters, untagged_counters);
static struct alloc_tag_counters __percpu *idx_counters_reserved[ALLOC_TAG_IDX_FIRST] = {
	[0 ... ALLOC_TAG_IDX_FIRST - 1] = &untagged_counters,
};
struct alloc_tag_counters __percpu **alloc_tag_idx_counters = idx_counters_reserved;
static unsigned long idx_counters_bytes;	/* every table allocated */
static DEFINE_IDA(module_idx_ida);	/* free module indices */

/* Counters for the report. */
static unsigned long module_idx_used;		/* under mod_lock */
static unsigned long module_idx_held;		/* kept by unloaded modules */
static unsigned long unindexed_tags;		/* tags loaded without an index */
static unsigned long unindexed_module_loads;	/* loads with such tags */

/*
 * A page carries an index that no tag owns: say so once, uncharge nothing.
 * Not a WARN: under panic_on_warn an accounting error would stop the
 * machine. The kernel is tainted (B, bad page) instead, with the stack.
 */
struct alloc_tag *alloc_tag_idx_unowned(unsigned long idx)
{
	static unsigned long reported;

	if (!test_and_set_bit(0, &reported)) {
		pr_err("page carries tag index %lu that no tag owns; its pages are not uncharged from any tag\n",
		       idx);
		dump_stack();
		add_taint(TAINT_BAD_PAGE, LOCKDEP_STILL_OK);
	}
	return NULL;
}

/**
 * alloc_tag_idx_counters_init - the free path's table, with the kernel's tags
 *
 * Return: false if there is no memory for it: the kernel's tags then get
 * no index, and profiling counts their allocations as unindexed.
 *
 * Context: early boot (alloc_tag_storage_init()), before any page carries
 * an index.
 */
bool __init alloc_tag_idx_counters_init(void)
{
	unsigned long nr = ALLOC_TAG_IDX_FIRST + alloc_tag_kernel_tags, i;
	struct alloc_tag_counters __percpu **table;

	table = memblock_alloc(nr * sizeof(*table), SMP_CACHE_BYTES);
	if (!table)
		return false;
	memcpy(table, idx_counters_reserved, sizeof(idx_counters_reserved));
	for (i = 0; i < alloc_tag_kernel_tags; i++)
		table[ALLOC_TAG_IDX_FIRST + i] = __start_alloc_tags[i].counters;
	idx_counters_bytes = nr * sizeof(*table);
	WRITE_ONCE(alloc_tag_idx_counters, table);
	return true;
}

/*
 * Replace the module map, and the free path's table with it, by copies
 * large enough for index @n: twice the size, at least a page, at most the
 * module index space. The replaced ones are not freed: a CPU decoding a
 * page's index may have loaded their address and be about to read an
 * entry, without a lock or an RCU read-side section to wait for. What
 * stays allocated is less than the current copies' size (the sizes
 * double), and is reported in module_map_bytes and idx_counters_bytes;
 * kmemleak is told that the copies, once replaced and pointed to by
 * nothing, are kept on purpose.
 */
static bool module_map_grow(unsigned long n)
{
	struct alloc_tag_counters __percpu **table, **old_table = alloc_tag_idx_counters;
	struct alloc_tag_module_map *old = alloc_tag_module_map, *map;
	unsigned long size = max(old->size * 2, MODULE_MAP_MIN), i;
	unsigned long end = alloc_tag_kernel_idx_end;

	while (size <= n)
		size *= 2;
	size = min(size, alloc_tag_module_space);
	/* A failure is handled, and reported, by alloc_tag_module_idx_get(). */
	map = kvmalloc(struct_size(map, tags, size), GFP_KERNEL | __GFP_NOWARN);
	table = kvmalloc_array(end + size, sizeof(*table), GFP_KERNEL | __GFP_NOWARN);
	if (!map || !table) {
		kvfree(map);
		kvfree(table);
		return false;
	}
	kmemleak_not_leak(map);
	kmemleak_not_leak(table);
	map->size = size;
	memcpy(map->tags, old->tags, old->size * sizeof(map->tags[0]));
	memcpy(table, old_table, (end + old->size) * sizeof(*table));
	for (i = old->size; i < size; i++) {
		map->tags[i] = &alloc_tag_unowned;
		table[end + i] = alloc_tag_unowned.counters;
	}
	module_map_bytes += struct_size(map, tags, size);
	idx_counters_bytes += (end + size) * sizeof(*table);
	/*
	 * The copies' contents before their addresses, for the indices
	 * published before them, whose readers have no index store of this
	 * load to be ordered after: pairs with the readers' address
	 * dependency (tests/litmus/module-grow-copy.litmus).
	 */
	smp_store_release(&alloc_tag_module_map, map);
	/* The same for the table, read by __alloc_tag_sub_idx(). */
	smp_store_release(&alloc_tag_idx_counters, table);
	return true;
}

static bool module_idx_set(unsigned long n, struct alloc_tag *tag)
{
	if (n >= alloc_tag_module_map->size && !module_map_grow(n))
		return false;
	WRITE_ONCE(alloc_tag_module_map->tags[n], tag);
	WRITE_ONCE(alloc_tag_idx_counters[alloc_tag_kernel_idx_end + n], tag->counters);
	return true;
}

/**
 * alloc_tag_module_idx_get - give the tags of a loading module indices
 * @tags: the module's first tag
 * @nr: number of tags
 * @modname: module name, for the warning
 *
 * Tags that get no index (the space is full, or memory for the table is
 * short) keep index 0: their page allocations are counted as unindexed and
 * charged to no tag. The module loads either way.
 *
 * Context: module load, under the alloc_tags codetag type's mod_lock.
 */
void alloc_tag_module_idx_get(struct alloc_tag *tags, unsigned long nr,
			      const char *modname)
{
	unsigned long i, missed = 0;

	alloc_tag_module_list_assert_held();
	if (!alloc_tag_kernel_idx_end)
		return;

	for (i = 0; i < nr; i++) {
		int n = -ENOSPC;

		if (alloc_tag_module_space)
			n = ida_alloc_max(&module_idx_ida, alloc_tag_module_space - 1,
					  GFP_KERNEL);
		if (n >= 0 && !module_idx_set(n, &tags[i])) {
			ida_free(&module_idx_ida, n);
			n = -ENOMEM;
		}
		if (n < 0) {
			WRITE_ONCE(tags[i].idx, ALLOC_TAG_IDX_NONE);
			missed++;
			continue;
		}
		/*
		 * The map and table entries (module_idx_set()) before the
		 * index. Pairs with smp_rmb() in alloc_tag_module_map_load()
		 * and __alloc_tag_sub_idx(): an allocating CPU reads
		 * tags[i].idx and ORs it, relaxed, into a page, and the
		 * freeing CPU loads the map (or the table) after the index
		 * from that page. smp_wmb() is not A-cumulative: the chain
		 * holds through the release with which the page (or object)
		 * passes from its allocator to its freer, which every hand-off
		 * between CPUs has (tests/litmus/tagidx-chain+release+dep.litmus;
		 * without it, tagidx-chain-nohandoff.litmus allows the stale
		 * entry). The same CPU needs none (tagidx-chain+samecpu.litmus).
		 */
		smp_wmb();
		WRITE_ONCE(tags[i].idx, alloc_tag_kernel_idx_end + n);
		module_idx_used++;
	}

	if (missed) {
		unindexed_tags += missed;
		unindexed_module_loads++;
		pr_warn("module %s: %lu of %lu allocation tags got no page index (%lu of %lu module indices in use); its page allocations from those tags are not profiled\n",
			modname, missed, nr, module_idx_used, alloc_tag_module_space);
	}
}

/**
 * alloc_tag_module_idx_put - release the indices of an unloading module
 * @tags: the module's first tag
 * @nr: number of tags
 * @live: some tag still has allocations
 *
 * With allocations still live, pages may carry the indices: they are kept,
 * with the module's tags, and counted as held.
 *
 * Context: module unload, under the alloc_tags codetag type's mod_lock.
 */
void alloc_tag_module_idx_put(struct alloc_tag *tags, unsigned long nr, bool live)
{
	unsigned long i;

	alloc_tag_module_list_assert_held();
	if (!alloc_tag_kernel_idx_end)
		return;

	for (i = 0; i < nr; i++) {
		unsigned long idx = tags[i].idx, n;

		if (idx == ALLOC_TAG_IDX_NONE) {
			unindexed_tags--;
			continue;
		}
		if (live) {
			module_idx_held++;
			continue;
		}
		alloc_tag_paged_idx_release(idx);
		n = idx - alloc_tag_kernel_idx_end;
		WRITE_ONCE(alloc_tag_module_map->tags[n], &alloc_tag_unowned);
		WRITE_ONCE(alloc_tag_idx_counters[idx], alloc_tag_unowned.counters);
		ida_free(&module_idx_ida, n);
		/*
		 * No page carries the index (the module has no live
		 * allocation) and the module's code no longer runs: nothing
		 * reads tags[i].idx concurrently but the allocation hook of
		 * a caller that still holds a pointer to the tag, which the
		 * module's unload rules out; WRITE_ONCE() for the readers'
		 * READ_ONCE().
		 */
		WRITE_ONCE(tags[i].idx, ALLOC_TAG_IDX_NONE);
		module_idx_used--;
	}
}

/* The module lines of the storage report (alloc_tag/storage in debugfs). */
void alloc_tag_module_show(struct seq_file *m)
{
	unsigned long used = READ_ONCE(module_idx_used);

	seq_printf(m, "module_indices_used: %lu\n", used);
	seq_printf(m, "module_indices_held_by_unloaded: %lu\n", READ_ONCE(module_idx_held));
	seq_printf(m, "module_indices_free: %lu\n", alloc_tag_module_space - used);
	seq_printf(m, "module_map_entries: %lu\n", READ_ONCE(alloc_tag_module_map)->size);
	seq_printf(m, "module_map_bytes: %lu\n", READ_ONCE(module_map_bytes));
	seq_printf(m, "counter_table_bytes: %lu\n", READ_ONCE(idx_counters_bytes));
	/* Each such free subtracted a call from alloc_tag_unowned. */
	seq_printf(m, "unowned_index_frees: %llu\n",
		   -alloc_tag_read(&alloc_tag_unowned).calls);
	seq_printf(m, "unindexed_module_loads: %lu\n", READ_ONCE(unindexed_module_loads));
	seq_printf(m, "unindexed_tags: %lu\n", READ_ONCE(unindexed_tags));
}

/* Loaded module tags, with an index or without. */
unsigned long alloc_tag_module_tags(void)
{
	return READ_ONCE(module_idx_used) + READ_ONCE(unindexed_tags);
}

/* The bytes of every module map allocated. */
unsigned long alloc_tag_module_map_bytes(void)
{
	return READ_ONCE(module_map_bytes);
}

/* The bytes of every table of counters by index allocated. */
unsigned long alloc_tag_idx_counters_bytes(void)
{
	return READ_ONCE(idx_counters_bytes);
}
