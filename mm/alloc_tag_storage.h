/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation tag storage, for mm/ only: how pages and slab objects keep
 * their tag's index (include/linux/alloc_tag_idx.h), and the page hooks
 * the allocator calls. Page tags are in the spare bits of page->flags when
 * the indices fit them, else in a page_ext slot (mm/pgalloc_tag.c); module
 * tags are found through the module map (mm/alloc_tag_module.c).
 */
#ifndef _MM_ALLOC_TAG_STORAGE_H
#define _MM_ALLOC_TAG_STORAGE_H

#include <linux/alloc_tag_capture.h>
#include <linux/alloc_tag_idx.h>
#include <linux/pgalloc_tag.h>

#ifdef CONFIG_MEM_ALLOC_PROFILING

#include <linux/jump_label.h>
#include <linux/mm_types.h>
#include <linux/mmzone.h>
#include <linux/page_ext.h>
#include <linux/sched.h>

#include "internal.h"

/*
 * page_ext storage keeps the index in 2 bytes a page, or in 4 when the
 * indices need more than 16 bits (alloc_tag_page_ext_wide set).
 */
DECLARE_STATIC_KEY_FALSE(alloc_tag_page_ext_wide);
/*
 * Slab objects carry the same index, in 2 bytes an object, or in 4 when
 * the indices need more than 16 bits (alloc_tag_slab_wide set; mm/slub.c).
 */
DECLARE_STATIC_KEY_FALSE(alloc_tag_slab_wide);
/* Slab frees clear their objects' slots (lib/alloc_tag.c, mm/slub.c). */
DECLARE_STATIC_KEY_FALSE(alloc_tag_slab_free_clears);

/* The kernel's tags, indexed by their place in the section. */
extern struct alloc_tag __start_alloc_tags[], __stop_alloc_tags[];
/* One past the index of the kernel's last tag; module tags follow. */
extern unsigned long alloc_tag_kernel_idx_end;
/* How many kernel tags: alloc_tag_kernel_idx_end - ALLOC_TAG_IDX_FIRST. */
extern unsigned long alloc_tag_kernel_tags;

struct alloc_tag *alloc_tag_idx_unowned(unsigned long idx) __cold;
void alloc_tag_idx_sub_check(unsigned long idx) __cold;
struct alloc_tag *alloc_tag_idx_charged(unsigned long idx) __cold;
void alloc_tag_count_unindexed(unsigned int nr) __cold;
void alloc_tag_count_unindexed_slab(size_t bytes) __cold;
struct seq_file;
void alloc_tag_slab_show(struct seq_file *m);
void alloc_tag_slab_block_bytes(unsigned long *kmalloc, unsigned long *in_slab);
void alloc_tag_module_show(struct seq_file *m);
unsigned long alloc_tag_module_tags(void);
unsigned long alloc_tag_module_map_bytes(void);
unsigned long alloc_tag_idx_counters_bytes(void);
void alloc_tag_paged_idx_release(unsigned long idx);

/*
 * The index field of page->flags: a shift and a mask of at most 32 bits
 * (include/linux/page-flags-layout.h), which the compiler makes one
 * bit-field extract of where there is one (arm64's ubfx), and a shift and
 * a 32-bit and (or move) on x86-64.
 */
static inline unsigned long pgalloc_tag_idx_read(const struct page *page)
{
	if (!ALLOC_TAG_IDX_WIDTH)
		return ALLOC_TAG_IDX_NONE;
	return (READ_ONCE(page->flags) >> ALLOC_TAG_IDX_PGSHIFT) & ALLOC_TAG_IDX_MASK;
}

/*
 * Replace a page's index. Other bits of page->flags can change meanwhile:
 * whoever holds a reference sets and clears PG_locked, PG_referenced, ...
 * with atomic operations, and the callers (split, migration, the debug
 * check of the allocation hook) run on pages that others may reference.
 * Even a page that nobody references yet, in the allocation hook before
 * set_page_refcounted(), can have a flag set by a pfn walker that found
 * it (memory_failure() marks PG_hwpoison on free pages). A plain
 * read-modify-write could lose such an update: use a compare-and-exchange
 * loop.
 */
static inline void pgalloc_tag_idx_write(struct page *page, unsigned long idx)
{
	unsigned long old = READ_ONCE(page->flags), new;

	do {
		new = old & ~ALLOC_TAG_IDX_FLAGS;
		new |= (idx & ALLOC_TAG_IDX_MASK) << ALLOC_TAG_IDX_PGSHIFT;
	} while (!try_cmpxchg(&page->flags, &old, new));
}

/*
 * Module tags by index n = idx - alloc_tag_kernel_idx_end: entry n of the
 * map alloc_tag_module_map points to, &alloc_tag_unowned where no tag owns
 * the index.
 * The map starts empty; when module indices outgrow it, a copy twice as
 * large replaces it (mm/alloc_tag_module.c), and the old one is kept, never
 * freed, as lockless readers may still be reading it.
 */
struct alloc_tag_module_map {
	unsigned long size;			/* entries in tags[] */
	struct alloc_tag *tags[];
};

extern struct alloc_tag_module_map *alloc_tag_module_map;
/*
 * The module map's entry for an index no tag owns: not in the alloc_tags
 * section, so not in /proc/allocinfo. Its counters take the uncharge of
 * a page that carries such an index, so that the free path need not test
 * for it (debug builds do, and warn).
 */
extern struct alloc_tag alloc_tag_unowned;
extern unsigned long alloc_tag_module_space;
/*
 * The free path's table: entry idx is the per-CPU counters that the
 * uncharge of index idx goes to, for every index up to the module map's
 * end. A tag's entry is its counters, an index no tag owns has
 * alloc_tag_unowned's, and the reserved indices (ALLOC_TAG_IDX_NONE and
 * _EMPTY) have counters of their own that no report reads: freeing a page
 * that carries no tag costs the same two loads as any other, and no test.
 * The boot fills in the kernel's entries, a module's load and unload its
 * own (mm/alloc_tag_module.c); the table grows with the module map, as a
 * copy, and the old one is kept, as the map's are.
 */
extern struct alloc_tag_counters __percpu **alloc_tag_idx_counters;
bool __init alloc_tag_idx_counters_init(void);

/* The tag of kernel index @idx (ALLOC_TAG_IDX_FIRST up to the kernel's end). */
static __always_inline struct alloc_tag *alloc_tag_kernel_from_idx(unsigned long idx)
{
	return &__start_alloc_tags[idx - ALLOC_TAG_IDX_FIRST];
}

/*
 * The module map to look a page's index up in.
 *
 * A module tag's entry is written, in the map current at the time, before
 * its index (smp_wmb() in alloc_tag_module_idx_get()), and a page can only
 * carry the index after the allocating CPU read it from the tag. The read
 * barrier orders the load of the map after the caller's load of the index
 * from the page, so the map read here is that one or a later copy of it
 * (a compiler barrier on x86). The entry itself is reached through the
 * map's address.
 */
static __always_inline const struct alloc_tag_module_map *alloc_tag_module_map_load(void)
{
	/*
	 * The page's index before the map: pairs with smp_wmb() at module
	 * load, through the page's hand-off (tests/litmus/module-map-grow.litmus).
	 */
	smp_rmb();
	return READ_ONCE(alloc_tag_module_map);
}

/*
 * The tag of module index n (@idx - alloc_tag_kernel_idx_end), NULL beyond
 * the map and &alloc_tag_unowned within it if no tag owns it: a load of
 * the map and a load of its entry, no call.
 */
static __always_inline struct alloc_tag *alloc_tag_module_from_n(unsigned long n)
{
	const struct alloc_tag_module_map *map = alloc_tag_module_map_load();

	if (unlikely(n >= map->size))
		return NULL;
	return READ_ONCE(map->tags[n]);
}

/* The tag of module index @idx (>= alloc_tag_kernel_idx_end), NULL if none. */
static __always_inline struct alloc_tag *alloc_tag_module_from_idx(unsigned long idx)
{
	struct alloc_tag *tag = alloc_tag_module_from_n(idx - alloc_tag_kernel_idx_end);

	if (unlikely(!tag || tag == &alloc_tag_unowned))
		return alloc_tag_idx_unowned(idx);
	return tag;
}

/* The tag of index @idx (>= ALLOC_TAG_IDX_FIRST), NULL if no tag owns it. */
static __always_inline struct alloc_tag *alloc_tag_from_idx(unsigned long idx)
{
	if (likely(idx < alloc_tag_kernel_idx_end))
		return alloc_tag_kernel_from_idx(idx);
	return alloc_tag_module_from_idx(idx);
}

/*
 * page_ext storage marks the pages whose slot holds an index with the
 * lowest spare bit of page->flags, where there is one (the bits that hold
 * the index in page-flags storage). free_pages_prepare() clears it with
 * the flags, so a page freed while profiling is off at run time loses its
 * tag without a page_ext lookup, and the page free hook only looks up the
 * page_ext of marked pages. Without a spare bit every page counts as
 * marked, and the free hook clears the slot itself.
 */
#define ALLOC_TAG_EXT_MARKED	(ALLOC_TAG_IDX_WIDTH > 0)
#define ALLOC_TAG_EXT_MARK	(ALLOC_TAG_EXT_MARKED ? BIT(ALLOC_TAG_IDX_PGSHIFT) : 0UL)

static inline bool pgalloc_tag_ext_marked(const struct page *page)
{
	return !ALLOC_TAG_EXT_MARKED || (READ_ONCE(page->flags) & ALLOC_TAG_EXT_MARK);
}

/*
 * page_ext storage: the page's index in its page_ext slot. The slot is
 * the page's own, written only by the page hooks of whoever owns the page,
 * so plain loads and stores do.
 */
static inline unsigned long pgalloc_tag_ext_idx_read(struct page_ext *page_ext)
{
	void *slot = page_ext_data(page_ext, &page_alloc_tagging_ops);

	if (static_branch_unlikely(&alloc_tag_page_ext_wide))
		return READ_ONCE(*(u32 *)slot);
	return READ_ONCE(*(u16 *)slot);
}

static inline void pgalloc_tag_ext_idx_write(struct page_ext *page_ext,
					     unsigned long idx)
{
	void *slot = page_ext_data(page_ext, &page_alloc_tagging_ops);

	if (static_branch_unlikely(&alloc_tag_page_ext_wide))
		WRITE_ONCE(*(u32 *)slot, idx);
	else
		WRITE_ONCE(*(u16 *)slot, idx);
}

/*
 * The index of @page, whose page_ext is @page_ext: its slot if the page is
 * marked, else none (the slot may hold the index of an earlier allocation).
 */
static inline unsigned long pgalloc_tag_ext_idx_load(const struct page *page,
						     struct page_ext *page_ext)
{
	if (!pgalloc_tag_ext_marked(page))
		return ALLOC_TAG_IDX_NONE;
	return pgalloc_tag_ext_idx_read(page_ext);
}

/*
 * Give @page, whose page_ext is @page_ext, the index @idx: the slot first,
 * then the mark, so that a marked page's slot is always its index. The
 * mark is set and cleared with atomic operations, for the reason
 * pgalloc_tag_idx_write() gives.
 */
static inline void pgalloc_tag_ext_idx_store(struct page *page,
					     struct page_ext *page_ext,
					     unsigned long idx)
{
	if (ALLOC_TAG_EXT_MARKED && idx == ALLOC_TAG_IDX_NONE) {
		atomic_long_andnot(ALLOC_TAG_EXT_MARK, (atomic_long_t *)&page->flags);
		return;
	}
	pgalloc_tag_ext_idx_write(page_ext, idx);
	if (ALLOC_TAG_EXT_MARKED && !(READ_ONCE(page->flags) & ALLOC_TAG_EXT_MARK))
		atomic_long_or(ALLOC_TAG_EXT_MARK, (atomic_long_t *)&page->flags);
}

/*
 * A page's tag reference, wherever its index is stored.
 * pgalloc_tag_ref_load() loads the index and decodes it into @ref (in
 * page_ext storage it also takes the page's page_ext);
 * pgalloc_tag_ref_store() encodes @ref and writes the index back if it
 * changed, and releases the page_ext. Every hook that changes a page's tag
 * goes through this pair, so the counter logic of alloc_tag_add() and
 * alloc_tag_sub() does not depend on the storage.
 */
struct pgalloc_tag_ref {
	union codetag_ref ref;
	unsigned long idx;			/* index as loaded */
	struct page *page;
	struct page_ext *page_ext;		/* page_ext storage: the page's entry */
};

/* Should be called only if mem_alloc_profiling_tagged() */
static inline bool pgalloc_tag_ref_load(struct page *page, struct pgalloc_tag_ref *pr)
{
	if (!page)
		return false;

	pr->page = page;
	if (alloc_tag_in_page_flags()) {
		pr->idx = pgalloc_tag_idx_read(page);
	} else {
		pr->page_ext = page_ext_get(page);
		if (!pr->page_ext)
			return false;
		pr->idx = pgalloc_tag_ext_idx_load(page, pr->page_ext);
	}
	pr->ref.ct = alloc_tag_idx_to_ct(pr->idx);
	return true;
}

static inline void pgalloc_tag_ref_store(struct pgalloc_tag_ref *pr)
{
	unsigned long idx = alloc_tag_ref_to_idx(&pr->ref);

	if (alloc_tag_in_page_flags()) {
		if (idx != pr->idx)
			pgalloc_tag_idx_write(pr->page, idx);
		return;
	}

	if (idx != pr->idx)
		pgalloc_tag_ext_idx_store(pr->page, pr->page_ext, idx);
	page_ext_put(pr->page_ext);
}

static inline void clear_page_tag_ref(struct page *page)
{
	if (mem_alloc_profiling_tagged()) {
		struct pgalloc_tag_ref pr;

		if (pgalloc_tag_ref_load(page, &pr)) {
			set_codetag_empty(&pr.ref);
			pgalloc_tag_ref_store(&pr);
		}
	}
}

void __pgalloc_tag_add(struct page *page, unsigned int order);
void __pgalloc_tag_add_ext(struct page *page, unsigned int order);
struct alloc_tag *__pgalloc_tag_get(struct page *page);

/*
 * Add @calls, then @bytes (see __alloc_tag_sub_idx()), to this CPU's
 * @counters. On x86 a per-CPU add is one instruction, through the segment
 * register. Elsewhere this_cpu_add() finds the CPU's area and keeps the
 * task on the CPU for each add (arm64: a system register read and an
 * atomic padded to the length of its LL/SC loop, in a preempt-off section
 * on preemptible kernels). There the area is found once and both adds are
 * atomic, with preemption on: a task that moves to another CPU meanwhile
 * adds to the first CPU's counters, atomically, and every sum is the same.
 * 64-bit only, where atomic_long_t is the counters' size and native.
 */
#define ALLOC_TAG_COUNTERS_ATOMIC	(IS_ENABLED(CONFIG_64BIT) && !IS_ENABLED(CONFIG_X86))

static __always_inline void alloc_tag_counters_add(struct alloc_tag_counters __percpu *counters,
						   long calls, long bytes)
{
	struct alloc_tag_counters *c;

	if (!ALLOC_TAG_COUNTERS_ATOMIC) {
		this_cpu_add(counters->calls, calls);
		this_cpu_add(counters->bytes, bytes);
		return;
	}
	c = raw_cpu_ptr(counters);
	atomic_long_add(calls, (atomic_long_t *)&c->calls);
	atomic_long_add(bytes, (atomic_long_t *)&c->bytes);
}

/* Charge an allocation of @bytes to @tag's per-CPU counters. */
static __always_inline void alloc_tag_charge(struct alloc_tag *tag, size_t bytes)
{
	alloc_tag_counters_add(tag->counters, 1, bytes);
}

/* Charge 2^@order pages to @tag's per-CPU counters. */
static __always_inline void alloc_tag_charge_pages(struct alloc_tag *tag,
						   unsigned int order)
{
	alloc_tag_charge(tag, PAGE_SIZE << order);
}

/*
 * Uncharge an allocation from the tag of index @idx (a page or a slab
 * object being freed): add @neg_bytes, its size negated, to the tag's
 * bytes. A subtraction would negate the size each time; the slab free
 * path keeps it negated in the cache (tag_free_bytes).
 */
static __always_inline void __alloc_tag_sub_idx(unsigned long idx, long neg_bytes)
{
	struct alloc_tag_counters __percpu *counters;

	/* Debug builds check the index, and warn of one that no tag owns. */
	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) && !alloc_tag_idx_charged(idx))
		return;
	/*
	 * The page's index before the table: pairs with smp_wmb() in
	 * alloc_tag_module_idx_get(), through the page's hand-off. The table
	 * read is the one the index's entry was written in, or a later copy
	 * of it (tests/litmus/tagidx-chain+release+dep.litmus,
	 * module-table-grow.litmus).
	 */
	smp_rmb();
	/*
	 * No bound: every index a page carries was a tag's, within the
	 * table. Plain, so that the entry's address folds into the load: an
	 * entry changes, at a module's load or unload, only while no page
	 * carries its index.
	 */
	counters = data_race(READ_ONCE(alloc_tag_idx_counters)[idx]);
	/*
	 * bytes last: a module's unload frees its tags' counters once their
	 * bytes sum to 0 (module_counters_free(), lib/alloc_tag.c), so no
	 * access may follow that store.
	 */
	alloc_tag_counters_add(counters, -1, neg_bytes);
}

/* Uncharge an allocation of @bytes from the tag of index @idx. */
static __always_inline void alloc_tag_sub_idx(unsigned long idx, size_t bytes)
{
	__alloc_tag_sub_idx(idx, -(long)bytes);
}

/* Uncharge 2^@order pages from the tag of index @idx (pages being freed). */
static __always_inline void pgalloc_tag_sub_idx(unsigned long idx, unsigned int order)
{
	alloc_tag_sub_idx(idx, PAGE_SIZE << order);
}

/*
 * page-flags storage: charge the 2^@order pages at @page, fresh from the
 * free lists, to current's tag. Inline in the allocator, where it costs
 * no call, no frame and no register saves. A page leaves the free lists
 * with index 0 (free_pages_prepare() clears it), so the index is set with
 * an OR. The OR is atomic although the hook runs before
 * set_page_refcounted(), when no reference holder can be changing the
 * page's flags: memory_failure() sets PG_hwpoison on any page, referenced
 * or not. Debug builds first check that the page carries no tag, out of
 * line (__pgalloc_tag_add()).
 */
static __always_inline void pgalloc_tag_flags_add(struct page *page, unsigned int order)
{
	struct alloc_tag *tag = current->alloc_tag;
	unsigned long idx;

	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
		__pgalloc_tag_add(page, order);
		return;
	}
	if (unlikely(!tag))
		return;
	idx = READ_ONCE(tag->idx);
	/*
	 * Out of line: a module tag that got no index (the index space was
	 * full when the module loaded), whose page allocations are counted
	 * and charged to no tag, and a tag chosen for capture, whose index
	 * carries ALLOC_TAG_IDX_CAPTURE, the field's sign.
	 */
	if (unlikely((long)idx <= 0)) {
		__pgalloc_tag_add(page, order);
		return;
	}
	/*
	 * Relaxed: whoever hands the page to another CPU releases it, and
	 * that release carries the module's entry along
	 * (tests/litmus/tagidx-chain-nohandoff.litmus shows what it needs).
	 */
	atomic_long_or(idx << ALLOC_TAG_IDX_PGSHIFT, (atomic_long_t *)&page->flags);
	alloc_tag_charge_pages(tag, order);
}

/*
 * page_ext storage: charge the 2^@order pages at @page, fresh from the
 * free lists, to current's tag: the index in the page's page_ext slot,
 * then the mark, which a fresh page does not have. Inline, as
 * pgalloc_tag_flags_add() is, and for the same cases out of line
 * (__pgalloc_tag_add_ext()). The page is the allocator's: its page_ext
 * is found without RCU (page_ext_from_owned_page()).
 */
static __always_inline void pgalloc_tag_ext_add(struct page *page, unsigned int order)
{
	struct alloc_tag *tag = current->alloc_tag;
	struct page_ext *page_ext;
	unsigned long idx;

	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
		__pgalloc_tag_add_ext(page, order);
		return;
	}
	if (unlikely(!tag))
		return;
	idx = READ_ONCE(tag->idx);
	if (unlikely((long)idx <= 0)) {
		__pgalloc_tag_add_ext(page, order);
		return;
	}
	page_ext = page_ext_from_owned_page(page);
	if (unlikely(!page_ext))
		return;
	pgalloc_tag_ext_idx_write(page_ext, idx);
	/* Relaxed, as pgalloc_tag_flags_add()'s OR is. */
	if (ALLOC_TAG_EXT_MARKED)
		atomic_long_or(ALLOC_TAG_EXT_MARK, (atomic_long_t *)&page->flags);
	alloc_tag_charge_pages(tag, order);
}

/*
 * page_ext storage: the 2^@order pages at @page are being freed
 * (free_pages_prepare()); uncharge their tag, if they have one, whether
 * profiling is still on or not.
 *
 * The page must lose its index, or its next allocation, if made while
 * profiling is off at run time and so left untagged, would be uncharged
 * from that stale tag once profiling is back on. Where pages are marked,
 * free_pages_prepare() clears the mark with the flags, and only a marked
 * page's page_ext is looked up (every page's in debug builds, which check
 * that it had a tag). Without a mark the slot is cleared here, also while
 * profiling is off. As at allocation, the page_ext is found without RCU.
 */
static __always_inline void pgalloc_tag_ext_sub(struct page *page, unsigned int order)
{
	bool marked = pgalloc_tag_ext_marked(page);
	struct page_ext *page_ext;
	unsigned long idx;

	if (!IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) && !marked)
		return;
	page_ext = page_ext_from_owned_page(page);
	if (unlikely(!page_ext))
		return;
	idx = marked ? pgalloc_tag_ext_idx_read(page_ext) : ALLOC_TAG_IDX_NONE;
	if (!ALLOC_TAG_EXT_MARKED && idx != ALLOC_TAG_IDX_NONE)
		pgalloc_tag_ext_idx_write(page_ext, ALLOC_TAG_IDX_NONE);
	pgalloc_tag_sub_idx(idx, order);
}

/*
 * The page hooks: static-key gates (profiling on? which storage?), then
 * the storage's work inline: the index in page->flags, or in the page's
 * page_ext slot, an OR, and the per-CPU counters. With profiling off the
 * allocator's fast paths cost a patched NOP a hook. The hooks take the
 * order and read current themselves: an argument computed by the caller
 * (1 << order, current) would be computed, hoisted above the static key,
 * with profiling off too.
 */

/* Charge the allocation of the 2^@order pages at @page to current's tag. */
static __always_inline void pgalloc_tag_add(struct page *page, unsigned int order)
{
	if (mem_alloc_profiling_enabled()) {
		if (alloc_tag_in_page_flags())
			pgalloc_tag_flags_add(page, order);
		else
			pgalloc_tag_ext_add(page, order);
	}
}

/*
 * Uncharge the 2^@order pages at @page, which are being freed
 * (free_pages_prepare()), if they were charged: once profiling has been
 * on, whether it still is or not. Booted with profiling off, the hook is
 * one patched jump until profiling is first switched on.
 */
static __always_inline void pgalloc_tag_sub(struct page *page, unsigned int order)
{
	if (mem_alloc_profiling_tagged()) {
		if (alloc_tag_in_page_flags())
			pgalloc_tag_sub_idx(pgalloc_tag_idx_read(page), order);
		else
			pgalloc_tag_ext_sub(page, order);
	}
}

/* The tag a page is charged to, NULL if none; reads, never writes. */
static __always_inline struct alloc_tag *pgalloc_tag_get(struct page *page)
{
	if (mem_alloc_profiling_tagged())
		return __pgalloc_tag_get(page);
	return NULL;
}

static inline void pgalloc_tag_sub_pages(struct alloc_tag *tag, unsigned int nr)
{
	if (mem_alloc_profiling_tagged() && tag)
		this_cpu_sub(tag->counters->bytes, PAGE_SIZE * nr);
}

#else /* CONFIG_MEM_ALLOC_PROFILING */

static inline void clear_page_tag_ref(struct page *page) {}
static inline void pgalloc_tag_add(struct page *page, unsigned int order) {}
static inline void pgalloc_tag_sub(struct page *page, unsigned int order) {}
static inline struct alloc_tag *pgalloc_tag_get(struct page *page) { return NULL; }
static inline void pgalloc_tag_sub_pages(struct alloc_tag *tag, unsigned int nr) {}

#endif /* CONFIG_MEM_ALLOC_PROFILING */

#endif /* _MM_ALLOC_TAG_STORAGE_H */
