// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of page allocation tags in page->flags (mm/pgalloc_tag.c),
 * and of slab objects' tag indices (mm/slub.c).
 */
#include <kunit/test.h>
#include <linux/alloc_tag.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/pgalloc_tag.h>
#include <linux/slab.h>

#include "alloc_tag_storage.h"
#include "slab.h"

/* kfence's pool: the objects slab_kfence_untaggable() cycles through. */
#ifdef CONFIG_KFENCE
#define KFENCE_OBJECTS	CONFIG_KFENCE_NUM_OBJECTS
#else
#define KFENCE_OBJECTS	0
#endif

/* Every bit of page->flags outside the index field. */
#define OTHER_BITS	(~ALLOC_TAG_IDX_FLAGS)

static void skip_without_field(struct kunit *test)
{
	if (!ALLOC_TAG_IDX_WIDTH)
		kunit_skip(test, "this config leaves no spare bit in page->flags");
}

/*
 * Indices at the edges of the field, and the reserved ones; those that do
 * not fit a narrow field (2 and 3 in 1 bit) are left out by the generator.
 */
static const unsigned long edge_idx[] = {
	ALLOC_TAG_IDX_NONE, ALLOC_TAG_IDX_EMPTY, ALLOC_TAG_IDX_FIRST, 3,
	ALLOC_TAG_IDX_MASK >> 1, (ALLOC_TAG_IDX_MASK >> 1) + 1,
	ALLOC_TAG_IDX_MASK - 1, ALLOC_TAG_IDX_MASK,
};

static const void *edge_idx_gen_params(const void *prev, char *desc)
{
	const unsigned long *idx = prev ? (const unsigned long *)prev + 1 : edge_idx;

	for (; idx < edge_idx + ARRAY_SIZE(edge_idx); idx++) {
		if (*idx <= ALLOC_TAG_IDX_MASK) {
			snprintf(desc, KUNIT_PARAM_DESC_SIZE, "index %#lx", *idx);
			return idx;
		}
	}
	return NULL;
}

/* An index stored in page->flags reads back unchanged; no other bit moves. */
static void idx_round_trip(struct kunit *test)
{
	const unsigned long *idx = test->param_value;
	static const unsigned long patterns[] = { 0UL, ~0UL, ~0UL / 0xff * 0xa5 };
	struct page *page;
	int i;

	skip_without_field(test);
	page = kunit_kzalloc(test, sizeof(*page), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);

	for (i = 0; i < ARRAY_SIZE(patterns); i++) {
		page->flags = patterns[i];
		pgalloc_tag_idx_write(page, *idx);
		KUNIT_EXPECT_EQ(test, pgalloc_tag_idx_read(page), *idx);
		KUNIT_EXPECT_EQ(test, page->flags & OTHER_BITS, patterns[i] & OTHER_BITS);
	}
}

/* The reserved indices decode to no tag and to the "empty" marker. */
static void reserved_idx(struct kunit *test)
{
	union codetag_ref ref;

	KUNIT_EXPECT_NULL(test, alloc_tag_idx_to_ct(ALLOC_TAG_IDX_NONE));
	set_codetag_empty(&ref);
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_to_ct(ALLOC_TAG_IDX_EMPTY), ref.ct);
	KUNIT_EXPECT_EQ(test, alloc_tag_ref_to_idx(&ref),
			ref.ct ? ALLOC_TAG_IDX_EMPTY : ALLOC_TAG_IDX_NONE);
	ref.ct = NULL;
	KUNIT_EXPECT_EQ(test, alloc_tag_ref_to_idx(&ref), ALLOC_TAG_IDX_NONE);
}

/* The largest index the storage of this boot can hold. */
static unsigned long idx_limit(void)
{
	if (alloc_tag_in_page_flags())
		return ALLOC_TAG_IDX_MASK;
	return BIT(page_alloc_tagging_ops.size * BITS_PER_BYTE) - 1;
}

static void skip_unindexed(struct kunit *test)
{
	if (!alloc_tag_kernel_idx_end)
		kunit_skip(test, "tags have no indices on this boot (profiling disabled)");
}

/* The first and the last kernel tag decode from the indices they carry. */
static void kernel_tag_round_trip(struct kunit *test)
{
	struct alloc_tag *first = __start_alloc_tags, *last = __stop_alloc_tags - 1;
	union codetag_ref ref;

	skip_unindexed(test);

	KUNIT_EXPECT_EQ(test, first->idx, ALLOC_TAG_IDX_FIRST);
	KUNIT_EXPECT_EQ(test, last->idx, alloc_tag_kernel_idx_end - 1);
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_to_ct(first->idx), &first->ct);
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_to_ct(last->idx), &last->ct);
	ref.ct = &last->ct;
	KUNIT_EXPECT_EQ(test, alloc_tag_ref_to_idx(&ref), last->idx);
	KUNIT_EXPECT_LE(test, alloc_tag_kernel_idx_end - 1, idx_limit());
	KUNIT_EXPECT_LE(test, alloc_tag_kernel_idx_end + alloc_tag_module_space - 1,
			idx_limit());
}

/*
 * page_ext storage: the slot is aligned to its size, holds the largest
 * index, and the slots of neighbouring pages do not overlap it; where
 * page->flags has a spare bit, it marks the pages whose slot is their
 * index.
 */
static void page_ext_slot(struct kunit *test)
{
	size_t size = page_alloc_tagging_ops.size;
	struct page_ext *ext0, *ext1;
	unsigned long saved, saved_slot, next;
	struct alloc_tag *tag;
	struct page *page;

	skip_unindexed(test);
	if (alloc_tag_in_page_flags())
		kunit_skip(test, "page tags are kept in page flags on this boot");

	KUNIT_EXPECT_TRUE(test, size == 2 || size == 4);
	KUNIT_EXPECT_EQ(test, page_alloc_tagging_ops.offset % size, 0UL);
	KUNIT_EXPECT_EQ(test, page_ext_size % size, 0UL);
	KUNIT_EXPECT_EQ(test, page_ext_size % __alignof__(u16), 0UL);

	page = alloc_pages(GFP_KERNEL, 1);
	KUNIT_ASSERT_NOT_NULL(test, page);
	tag = pgalloc_tag_get(page);
	if (mem_alloc_profiling_enabled()) {
		KUNIT_EXPECT_NOT_NULL(test, tag);
		if (tag)
			KUNIT_EXPECT_STREQ(test, tag->ct.function, __func__);
	}

	ext0 = page_ext_get(page);
	if (!ext0) {
		__free_pages(page, 1);
		KUNIT_FAIL_AND_ABORT(test, "an allocated page has no page_ext");
	}
	ext1 = page_ext_next(ext0);
	saved = pgalloc_tag_ext_idx_load(page, ext0);
	KUNIT_EXPECT_EQ(test, saved, tag ? tag->idx : ALLOC_TAG_IDX_NONE);
	/* Only the first page of an allocation carries the tag. */
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_load(page + 1, ext1), ALLOC_TAG_IDX_NONE);
	if (ALLOC_TAG_EXT_MARKED) {
		KUNIT_EXPECT_EQ(test, !!(page[0].flags & ALLOC_TAG_EXT_MARK), !!tag);
		KUNIT_EXPECT_EQ(test, page[1].flags & ALLOC_TAG_EXT_MARK, 0UL);
	}

	/* The slots are the pages' own: writing one leaves the other. */
	saved_slot = pgalloc_tag_ext_idx_read(ext0);
	next = pgalloc_tag_ext_idx_read(ext1);
	pgalloc_tag_ext_idx_write(ext0, idx_limit());
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_read(ext0), idx_limit());
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_read(ext1), next);
	pgalloc_tag_ext_idx_write(ext1, idx_limit());
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_read(ext0), idx_limit());
	pgalloc_tag_ext_idx_write(ext0, saved_slot);
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_load(page, ext0), saved);

	/*
	 * An index stored reads back and marks the page; "none" unmarks it
	 * without writing the slot, which then reads as none whatever it
	 * holds. Without a mark, "none" is written to the slot.
	 */
	pgalloc_tag_ext_idx_write(ext1, next);
	pgalloc_tag_ext_idx_store(page + 1, ext1, idx_limit());
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_load(page + 1, ext1), idx_limit());
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_load(page, ext0), saved);
	if (ALLOC_TAG_EXT_MARKED)
		KUNIT_EXPECT_NE(test, page[1].flags & ALLOC_TAG_EXT_MARK, 0UL);
	pgalloc_tag_ext_idx_store(page + 1, ext1, ALLOC_TAG_IDX_NONE);
	KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_load(page + 1, ext1), ALLOC_TAG_IDX_NONE);
	if (ALLOC_TAG_EXT_MARKED) {
		KUNIT_EXPECT_EQ(test, page[1].flags & ALLOC_TAG_EXT_MARK, 0UL);
		KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_read(ext1), idx_limit());
	} else {
		KUNIT_EXPECT_EQ(test, pgalloc_tag_ext_idx_read(ext1), ALLOC_TAG_IDX_NONE);
	}
	pgalloc_tag_ext_idx_write(ext1, next);
	page_ext_put(ext0);
	__free_pages(page, 1);
}

/* Module tags get indices at load, decode to themselves, give them back. */
static void module_table_grow_release(struct kunit *test)
{
	const unsigned long nr = 1100;	/* more than a page of map entries */
	const struct alloc_tag_module_map *map;
	struct alloc_tag *tags, *again, *last;
	struct alloc_tag_counters counters;
	unsigned long i, first;

	skip_unindexed(test);

	tags = kunit_kcalloc(test, nr, sizeof(*tags), GFP_KERNEL);
	again = kunit_kcalloc(test, nr, sizeof(*again), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tags);
	KUNIT_ASSERT_NOT_NULL(test, again);

	/* The last tag has counters: the free path uncharges it below. */
	last = &tags[nr - 1];
	last->counters = alloc_percpu(struct alloc_tag_counters);
	KUNIT_ASSERT_NOT_NULL(test, last->counters);

	/* Module loads and unloads wait while the helpers run. */
	alloc_tag_lock_module_list(true);
	alloc_tag_module_idx_get(tags, nr, "kunit");
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_GE(test, tags[i].idx, alloc_tag_kernel_idx_end);
		KUNIT_EXPECT_LE(test, tags[i].idx, idx_limit());
		KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_to_ct(tags[i].idx), &tags[i].ct);
		if (i)
			KUNIT_EXPECT_NE(test, tags[i].idx, tags[i - 1].idx);
	}

	/*
	 * The free path's table has every tag's counters, the rest of the
	 * map's entries alloc_tag_unowned's, and a page freed with the last
	 * tag's index uncharges that tag.
	 */
	map = READ_ONCE(alloc_tag_module_map);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_counters[tags[i].idx], tags[i].counters);
	KUNIT_EXPECT_PTR_EQ(test,
			    alloc_tag_idx_counters[alloc_tag_kernel_idx_end + map->size - 1],
			    alloc_tag_unowned.counters);
	/* The kernel's entries, and the reserved indices' counters, apart. */
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_counters[ALLOC_TAG_IDX_FIRST],
			    __start_alloc_tags[0].counters);
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_counters[ALLOC_TAG_IDX_NONE],
			    alloc_tag_idx_counters[ALLOC_TAG_IDX_EMPTY]);
	KUNIT_EXPECT_PTR_NE(test, alloc_tag_idx_counters[ALLOC_TAG_IDX_NONE],
			    alloc_tag_unowned.counters);
	alloc_tag_charge_pages(last, 2);
	pgalloc_tag_sub_idx(last->idx, 2);
	counters = alloc_tag_read(last);
	KUNIT_EXPECT_EQ(test, counters.calls, 0);
	KUNIT_EXPECT_EQ(test, counters.bytes, 0);

	first = tags[0].idx;
	alloc_tag_module_idx_put(tags, nr, false);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, tags[i].idx, ALLOC_TAG_IDX_NONE);

	/*
	 * A released index is no tag's: its entry is alloc_tag_unowned, and
	 * freeing a page that still carried it (a corrupted page->flags)
	 * uncharges that, which no line of /proc/allocinfo shows (debug
	 * builds warn instead). Charged back after, as no page was freed.
	 */
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_module_from_n(first - alloc_tag_kernel_idx_end),
			    &alloc_tag_unowned);
	KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_counters[first], alloc_tag_unowned.counters);
	if (!IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
		struct alloc_tag_counters c0 = alloc_tag_read(&alloc_tag_unowned), c1;

		pgalloc_tag_sub_idx(first, 1);
		c1 = alloc_tag_read(&alloc_tag_unowned);
		KUNIT_EXPECT_EQ(test, c0.calls - c1.calls, 1);
		KUNIT_EXPECT_EQ(test, c0.bytes - c1.bytes, 2 * PAGE_SIZE);
		alloc_tag_charge_pages(&alloc_tag_unowned, 1);
	}

	/* Released indices are handed out again: loads do not leak them. */
	alloc_tag_module_idx_get(again, nr, "kunit");
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_PTR_EQ(test, alloc_tag_idx_to_ct(again[i].idx), &again[i].ct);
	alloc_tag_module_idx_put(again, nr, false);
	alloc_tag_lock_module_list(false);
	free_percpu(last->counters);
}

static const unsigned int capacity_bits[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
};

/* The widths an index can have here: up to a word (a 32-bit page_ext slot). */
static const void *capacity_bits_gen_params(const void *prev, char *desc)
{
	const unsigned int *bits = prev ? (const unsigned int *)prev + 1 : capacity_bits;

	if (bits >= capacity_bits + ARRAY_SIZE(capacity_bits) || *bits > BITS_PER_LONG)
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u bits", *bits);
	return bits;
}

/*
 * With b bits, the largest tag index (capacity + 1, the indices starting
 * at 2) fits in b bits and one more tag would not.
 */
static void capacity_arithmetic(struct kunit *test)
{
	unsigned int bits = *(const unsigned int *)test->param_value;
	u64 cap = alloc_tag_idx_capacity(bits);
	u64 max_value = BIT_ULL(bits) - 1;

	if (bits == 1) {
		KUNIT_EXPECT_EQ(test, cap, 0ULL);
		return;
	}
	KUNIT_EXPECT_LE(test, cap - 1 + ALLOC_TAG_IDX_FIRST, max_value);
	KUNIT_EXPECT_GT(test, cap + ALLOC_TAG_IDX_FIRST, max_value);
	KUNIT_EXPECT_EQ(test, alloc_tag_idx_capacity(0), 0UL);
}

/* A slab tag block's slot widths, in bytes. */
static const unsigned int slot_bytes[] = { sizeof(u16), sizeof(u32) };

static void slot_bytes_desc(const unsigned int *bytes, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u-byte slots", *bytes);
}

KUNIT_ARRAY_PARAM(slot_bytes, slot_bytes, slot_bytes_desc);

#define SLAB_SLOTS	7

/*
 * An index stored in a slab tag block's slot reads back unchanged, in
 * slots at both ends and in the middle; memcg's word and every other
 * slot keep their bytes. 2-byte slots take indices up to 0xffff, 4-byte
 * ones up to 0xffffffff.
 */
static void slab_slot_round_trip(struct kunit *test)
{
	unsigned int bytes = *(const unsigned int *)test->param_value;
	bool wide = bytes == sizeof(u32);
	const unsigned long idx[] = {
		ALLOC_TAG_IDX_NONE, ALLOC_TAG_IDX_EMPTY, ALLOC_TAG_IDX_FIRST,
		0x7fff, 0xffff, 0x10000, 0xffffffff,
	};
	const unsigned int offs[] = { 0, SLAB_SLOTS / 2, SLAB_SLOTS - 1 };
	size_t size = sizeof(struct slab_tag_block) + SLAB_SLOTS * bytes;
	struct slab_tag_block *block;
	u8 *before;
	int i, j;

	block = kunit_kmalloc(test, size, GFP_KERNEL);
	before = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, block);
	KUNIT_ASSERT_NOT_NULL(test, before);

	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		if (!wide && idx[i] > 0xffff)
			continue;
		for (j = 0; j < ARRAY_SIZE(offs); j++) {
			unsigned int off = offs[j];
			u8 *slot = (u8 *)block + sizeof(*block) + off * bytes;

			memset(block, 0xa5, size);
			memcpy(before, block, size);
			__slab_tag_idx_store(block, off, idx[i], wide);
			KUNIT_EXPECT_EQ(test, __slab_tag_idx_load(block, off, wide), idx[i]);
			/* Nothing outside the slot moved. */
			KUNIT_EXPECT_MEMEQ(test, block, before, slot - (u8 *)block);
			KUNIT_EXPECT_MEMEQ(test, slot + bytes,
					   before + (slot - (u8 *)block) + bytes,
					   size - (slot - (u8 *)block) - bytes);
		}
	}
}

/*
 * Whether __slab_tag_obj_index() finds objects @first..@last of @size
 * bytes, from their first byte and from their last.
 */
static bool slab_obj_index_ok(struct kunit *test, unsigned int size,
			      u64 first, u64 last)
{
	u64 mult = slab_tag_idx_mult(size), i;

	for (i = first; i <= last; i++) {
		if (__slab_tag_obj_index(i * size, mult) != i ||
		    __slab_tag_obj_index(i * size + size - 1, mult) != i) {
			KUNIT_FAIL(test, "%u-byte object %llu: index %lu, %lu from its end",
				   size, i, __slab_tag_obj_index(i * size, mult),
				   __slab_tag_obj_index(i * size + size - 1, mult));
			return false;
		}
	}
	return true;
}

/*
 * The multiply of slab_tag_obj_index() gives the index the division of
 * obj_to_index() does: every object of an order-3 slab, for every size a
 * cache's objects can have up to 8 KiB, and the last 16 objects of a slab
 * of the largest order, for those and for larger sizes up to that slab's
 * own.
 */
static void slab_obj_index_mult(struct kunit *test)
{
	const u64 largest = PAGE_SIZE << MAX_PAGE_ORDER;
	const unsigned int big[] = { 8200, 12288, 40000, 65544, 1U << 20, 1000008,
				     (unsigned int)largest / 3 & ~7U, (unsigned int)largest };
	unsigned int size, i;
	u64 n;

	for (size = 8; size <= 8192; size += 8) {
		if (!slab_obj_index_ok(test, size, 0, (PAGE_SIZE << 3) / size - 1))
			return;
		n = div_u64(largest, size);
		if (!slab_obj_index_ok(test, size, n - 16, n - 1))
			return;
	}
	for (i = 0; i < ARRAY_SIZE(big); i++) {
		n = div_u64(largest, big[i]);
		if (!slab_obj_index_ok(test, big[i], n > 16 ? n - 16 : 0, n - 1))
			return;
	}
}

/* The slots the kernel chose hold every index it hands out. */
static void slab_slot_width(struct kunit *test)
{
	unsigned long last = alloc_tag_kernel_idx_end + alloc_tag_module_space - 1;

	if (static_branch_unlikely(&alloc_tag_slab_wide))
		KUNIT_EXPECT_LE(test, last, 0xffffffffUL);
	else
		KUNIT_EXPECT_LE(test, last, 0xffffUL);
}

/*
 * An object of @cache from one of its slabs, not from kfence (kfence's
 * objects are counted from their own address). A macro, so that the
 * allocation's call site is the case's own, which the cases check.
 */
#define alloc_from_slab(test, cache) ({					\
	struct kmem_cache *__cache = (cache);				\
	void *__obj;							\
									\
	while (1) {							\
		__obj = kmem_cache_alloc(__cache, GFP_KERNEL);		\
		KUNIT_ASSERT_NOT_NULL(test, __obj);			\
		if (!is_kfence_address(__obj))				\
			break;						\
		kmem_cache_free(__cache, __obj);			\
	}								\
	__obj;								\
})

/*
 * An object allocated here carries, in its slab's tag block, the index of
 * this file's call site; its tag is charged the cache's object size and
 * one call, and uncharged at the free.
 */
static void slab_object_tag(struct kunit *test)
{
	struct kmem_cache *cache;
	struct alloc_tag *tag;
	struct alloc_tag_counters c0, c1, c2;
	struct slab_tag_block *block;
	struct slab *slab;
	unsigned long idx;
	unsigned int line, tries = 0;
	void *obj, *pin;
	bool clears;

	if (!mem_alloc_profiling_enabled())
		kunit_skip(test, "memory allocation profiling is off");
	cache = kmem_cache_create("pgalloc_tag_kunit", 40, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, cache);

	line = __LINE__ + 1;
	obj = alloc_from_slab(test, cache);
	slab = virt_to_slab(obj);
	block = slab_tag_block_of(READ_ONCE(slab->obj_exts));
	KUNIT_ASSERT_NOT_NULL(test, block);
	/* The address the objects' slots are counted from is the slab's. */
	KUNIT_EXPECT_EQ(test, block->addr, (unsigned long)slab_address(slab));
	idx = __slab_tag_idx_load(block, obj_to_index(cache, slab, obj),
				  static_branch_unlikely(&alloc_tag_slab_wide));
	KUNIT_ASSERT_GE(test, idx, ALLOC_TAG_IDX_FIRST);
	tag = alloc_tag_from_idx(idx);
	KUNIT_ASSERT_NOT_NULL(test, tag);
	KUNIT_EXPECT_EQ(test, tag->ct.lineno, line);
	KUNIT_EXPECT_STREQ(test, tag->ct.function, "slab_object_tag");

	/*
	 * While profiling is being first switched on, the free clears the
	 * slot (an allocation that writes none must find no tag there): the
	 * key is set for the free, as the switch sets it. Another object of
	 * the slab keeps the slab, and its block, from being freed with the
	 * object.
	 */
	do {
		pin = kmem_cache_alloc(cache, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pin);
		if (virt_to_slab(pin) == slab)
			break;
		kmem_cache_free(cache, pin);
	} while (++tries < 64);
	KUNIT_ASSERT_PTR_EQ_MSG(test, virt_to_slab(pin), slab,
				"no second object from the slab in 64 tries");
	c1 = alloc_tag_read(tag);
	clears = static_key_enabled(&alloc_tag_slab_free_clears);
	static_branch_enable(&alloc_tag_slab_free_clears);
	kmem_cache_free(cache, obj);
	if (!clears)
		static_branch_disable(&alloc_tag_slab_free_clears);
	c2 = alloc_tag_read(tag);
	KUNIT_EXPECT_EQ(test, c1.calls - c2.calls, 1);
	KUNIT_EXPECT_EQ(test, c1.bytes - c2.bytes, cache->size);
	KUNIT_EXPECT_EQ_MSG(test, __slab_tag_idx_load(block, obj_to_index(cache, slab, obj),
						      static_branch_unlikely(&alloc_tag_slab_wide)),
			    ALLOC_TAG_IDX_NONE, "the free left a tag in the object's slot");
	kmem_cache_free(cache, pin);
	c2 = alloc_tag_read(tag);

	/* Charged again at the same site: the counters move by as much. */
	c0 = c2;
	do {
		obj = kmem_cache_alloc(cache, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, obj);
		kmem_cache_free(cache, obj);
	} while (is_kfence_address(obj));
	c2 = alloc_tag_read(tag);
	KUNIT_EXPECT_EQ(test, c2.calls, c0.calls);
	KUNIT_EXPECT_EQ(test, c2.bytes, c0.bytes);
	kmem_cache_destroy(cache);
}

/*
 * A tag block in a slab's leftover space starts where slab->obj_exts can
 * carry it with its flag bits: its address leaves OBJEXTS_FLAGS_MASK
 * clear, whatever the objects end on (ARCH_SLAB_MINALIGN, by default
 * __alignof__(unsigned long long), is 8 on x86 but below 8 where a 32-bit
 * architecture aligns u64 to 4 or 2, under OBJEXTS_TAG_BLOCK with memcg),
 * and the charge of an object lands in it. Object sizes of 100 to 160
 * bytes in steps of 4; the case says how many blocks followed objects
 * that end off the flags' alignment.
 */
static void slab_block_flag_bits(struct kunit *test)
{
	unsigned int size, in_slab = 0, unaligned_end = 0;

	if (!mem_alloc_profiling_enabled())
		kunit_skip(test, "memory allocation profiling is off");
	for (size = 100; size <= 160; size += 4) {
		struct slab_tag_block *block;
		struct kmem_cache *cache;
		struct alloc_tag *tag;
		struct slab *slab;
		unsigned long end, idx;
		void *obj, *start;

		cache = kmem_cache_create("pgalloc_tag_flag_bits", size, 0, SLAB_NO_MERGE, NULL);
		KUNIT_ASSERT_NOT_NULL(test, cache);
		obj = alloc_from_slab(test, cache);
		slab = virt_to_slab(obj);
		block = slab_tag_block_of(READ_ONCE(slab->obj_exts));
		KUNIT_ASSERT_NOT_NULL(test, block);
		KUNIT_EXPECT_EQ_MSG(test, (unsigned long)block & OBJEXTS_FLAGS_MASK, 0UL,
				    "size %u: the tag block's address carries flag bits", size);
		start = slab_address(slab);
		end = slab->objects * cache->size;
		if ((void *)block > start && (void *)block < start + slab_size(slab)) {
			in_slab++;
			KUNIT_EXPECT_GE(test, (unsigned long)((void *)block - start), end);
			if (end & OBJEXTS_FLAGS_MASK)
				unaligned_end++;
		}
		idx = __slab_tag_idx_load(block, obj_to_index(cache, slab, obj),
					  static_branch_unlikely(&alloc_tag_slab_wide));
		tag = alloc_tag_from_idx(idx);
		KUNIT_EXPECT_NOT_NULL_MSG(test, tag, "size %u: the object's slot holds no tag",
					  size);
		if (tag)
			KUNIT_EXPECT_STREQ(test, tag->ct.function, "slab_block_flag_bits");
		kmem_cache_free(cache, obj);
		kmem_cache_destroy(cache);
	}
	kunit_info(test, "%u of %u blocks in their slab, %u past objects that end off the flags' alignment\n",
		   in_slab, (160 - 100) / 4 + 1, unaligned_end);
}

/*
 * A linear overflow of a slab's last object reaches the slab's tag block
 * in its leftover space: the slab's address first, then memcg's word. At
 * the slab's free the address is found wrong: a warning names the cache
 * (kunit.sh checks it), and memcg's code is not left to kfree() what the
 * overflow wrote there. The object is freed before the overflow, which
 * would misdirect the slot of every later allocation or free of the slab:
 * the check at the slab's free only limits the damage (kernels with
 * CONFIG_SLAB_FREELIST_HARDENED keep no block in a slab).
 */
static void slab_block_overflow(struct kunit *test)
{
	struct kmem_cache *cache;
	struct slab_tag_block *block;
	struct slab *slab;
	char *end;
	void *obj;

	if (!mem_alloc_profiling_enabled())
		kunit_skip(test, "memory allocation profiling is off");
	if (IS_ENABLED(CONFIG_KASAN) || IS_ENABLED(CONFIG_KMSAN) ||
	    IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED))
		kunit_skip(test, "this build keeps tag blocks out of slabs");
	/* 20 objects in an order-0 slab, 96 bytes left for a block of 56 */
	cache = kmem_cache_create("pgalloc_tag_overflow", 200, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, cache);
	if (cache->flags & SLAB_DEBUG_FLAGS) {
		kmem_cache_destroy(cache);
		kunit_skip(test, "slub_debug keeps tag blocks out of slabs");
	}
	obj = alloc_from_slab(test, cache);
	slab = virt_to_slab(obj);
	block = slab_tag_block_of(READ_ONCE(slab->obj_exts));
	KUNIT_ASSERT_NOT_NULL(test, block);
	KUNIT_ASSERT_TRUE_MSG(test, (void *)block > slab_address(slab) &&
			      (void *)block < slab_address(slab) + slab_size(slab),
			      "the slab's tag block is not in its leftover space");
	kmem_cache_free(cache, obj);

	end = slab_address(slab) + slab->objects * cache->size;
	memset(end, 0x5a, (char *)block->idx16 - end);
	kmem_cache_destroy(cache);
}

/*
 * A constant-size kmalloc() with __GFP_DMA gets a DMA cache also when it
 * asks for no object extension: memory a device must reach comes first.
 * A size known only at run time takes the same choice.
 */
static void kmalloc_dma_first(struct kunit *test)
{
	size_t runtime_size = 64;
	struct kmem_cache *s;
	void *obj;

	if (!IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test, "this config has no ZONE_DMA");
	KUNIT_EXPECT_EQ(test, kmalloc_type(GFP_DMA | __GFP_NO_OBJ_EXT, 0), KMALLOC_DMA);

	obj = kmalloc(64, GFP_KERNEL | GFP_DMA | __GFP_NO_OBJ_EXT);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	s = virt_to_slab(obj)->slab_cache;
	KUNIT_EXPECT_TRUE_MSG(test, s->flags & SLAB_CACHE_DMA, "constant size: cache %s", s->name);
	kfree(obj);

	OPTIMIZER_HIDE_VAR(runtime_size);
	obj = kmalloc(runtime_size, GFP_KERNEL | GFP_DMA | __GFP_NO_OBJ_EXT);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	s = virt_to_slab(obj)->slab_cache;
	KUNIT_EXPECT_TRUE_MSG(test, s->flags & SLAB_CACHE_DMA, "run-time size: cache %s", s->name);
	kfree(obj);
}

/*
 * The slabs of a SLAB_CACHE_DMA32 cache whose tag blocks do not fit their
 * leftover space (1024-byte objects leave none) get blocks from kmalloc:
 * 32 MiB of objects, a thousand slabs or more, so that kmalloc's own
 * cache of the blocks' size must grow, past the free objects it had. The
 * blocks' flags must not carry the cache's zone: kmalloc() would fix them
 * up with an "Unexpected gfp" report as it makes a slab, which
 * tests/boot/kunit.sh looks for on the console. Every object is charged
 * to this call site, and uncharged.
 */
#define DMA32_OBJECTS	32768
static void slab_dma32_blocks(struct kunit *test)
{
	struct alloc_tag_counters c0, c1;
	struct kmem_cache *cache;
	struct alloc_tag *tag = NULL;
	unsigned int i, n, blocks = 0, kfenced = 0;
	void **objs;

	if (!IS_ENABLED(CONFIG_ZONE_DMA32))
		kunit_skip(test, "this config has no ZONE_DMA32");
	if (!mem_alloc_profiling_enabled())
		kunit_skip(test, "memory allocation profiling is off");
	objs = kunit_kcalloc(test, DMA32_OBJECTS, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	cache = kmem_cache_create("pgalloc_tag_dma32", 1024, 0,
				  SLAB_NO_MERGE | SLAB_CACHE_DMA32, NULL);
	KUNIT_ASSERT_NOT_NULL(test, cache);

	for (n = 0; n < DMA32_OBJECTS; n++) {
		struct slab_tag_block *block;
		struct slab *slab;
		unsigned long idx;

		objs[n] = kmem_cache_alloc(cache, GFP_KERNEL);
		if (!objs[n])
			break;
		if (is_kfence_address(objs[n])) {
			kfenced++;
			continue;
		}
		slab = virt_to_slab(objs[n]);
		block = slab_tag_block_of(READ_ONCE(slab->obj_exts));
		if (!block)
			continue;
		blocks++;
		idx = __slab_tag_idx_load(block, obj_to_index(cache, slab, objs[n]),
					  static_branch_unlikely(&alloc_tag_slab_wide));
		if (!tag && idx >= ALLOC_TAG_IDX_FIRST)
			tag = alloc_tag_from_idx(idx);
	}
	KUNIT_EXPECT_EQ(test, n, DMA32_OBJECTS);
	KUNIT_EXPECT_EQ_MSG(test, blocks + kfenced, n, "objects without a tag block");
	KUNIT_ASSERT_NOT_NULL(test, tag);
	c0 = alloc_tag_read(tag);
	for (i = 0; i < n; i++)
		kmem_cache_free(cache, objs[i]);
	c1 = alloc_tag_read(tag);
	/* The objects were charged to this call site, once each. */
	KUNIT_EXPECT_EQ(test, c0.calls - c1.calls, (u64)n);
	KUNIT_EXPECT_EQ(test, c0.bytes - c1.bytes, (u64)n * cache->size);
	kmem_cache_destroy(cache);
}

/*
 * An object of a cache whose objects are never tagged (SLAB_NOLEAKTRACE, as
 * kmemleak's own caches; SLAB_NO_OBJ_EXT is kmalloc's) is not charged when
 * kfence serves it, also on a kfence page whose block an
 * object of a tagged cache left: its slot says "no tag". First, objects
 * of a tagged cache cycle through kfence's pool (its free list is first
 * in, first out), so that kfence's pages have blocks; then objects of an
 * untagged cache are allocated until kfence serves one. Needs kfence on
 * (kfence.sample_interval=1).
 */
static void slab_kfence_untaggable(struct kunit *test)
{
	struct kmem_cache *tagged, *untagged;
	unsigned long deadline, idx;
	struct slab_tag_block *block;
	unsigned int hits = 0;
	void *obj;

	if (!IS_ENABLED(CONFIG_KFENCE) || !kfence_sample_interval)
		kunit_skip(test, "kfence is off on this boot (needs kfence.sample_interval=1)");
	if (!mem_alloc_profiling_enabled())
		kunit_skip(test, "memory allocation profiling is off");
	tagged = kmem_cache_create("pgalloc_tag_kfence", 64, 0, SLAB_NO_MERGE, NULL);
	untagged = kmem_cache_create("pgalloc_tag_kfence_noleak", 64, 0,
				     SLAB_NO_MERGE | SLAB_NOLEAKTRACE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, tagged);
	KUNIT_ASSERT_NOT_NULL(test, untagged);

	deadline = jiffies + 60 * HZ;
	while (hits < KFENCE_OBJECTS && time_before(jiffies, deadline)) {
		obj = kmem_cache_alloc(tagged, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, obj);
		if (is_kfence_address(obj))
			hits++;
		kmem_cache_free(tagged, obj);
		if (!is_kfence_address(obj))
			usleep_range(100, 200);
	}
	KUNIT_ASSERT_EQ_MSG(test, hits, KFENCE_OBJECTS,
			    "kfence served %u objects in 60 s", hits);

	deadline = jiffies + 60 * HZ;
	do {
		obj = kmem_cache_alloc(untagged, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, obj);
		if (is_kfence_address(obj))
			break;
		kmem_cache_free(untagged, obj);
		usleep_range(100, 200);
		obj = NULL;
	} while (time_before(jiffies, deadline));
	KUNIT_ASSERT_NOT_NULL_MSG(test, obj, "kfence served no untagged object in 60 s");

	block = slab_tag_block_of(READ_ONCE(virt_to_slab(obj)->obj_exts));
	KUNIT_EXPECT_NOT_NULL_MSG(test, block, "the kfence page kept no block of a tagged object");
	if (block) {
		idx = __slab_tag_idx_load(block, 0,
					  static_branch_unlikely(&alloc_tag_slab_wide));
		KUNIT_EXPECT_LT_MSG(test, idx, ALLOC_TAG_IDX_FIRST,
				    "an object of a never-tagged cache was charged to index %lu",
				    idx);
	}
	kmem_cache_free(untagged, obj);
	kmem_cache_destroy(untagged);
	kmem_cache_destroy(tagged);
}

static struct kunit_case pgalloc_tag_test_cases[] = {
	KUNIT_CASE_PARAM(idx_round_trip, edge_idx_gen_params),
	KUNIT_CASE(reserved_idx),
	KUNIT_CASE(kernel_tag_round_trip),
	KUNIT_CASE(page_ext_slot),
	KUNIT_CASE(module_table_grow_release),
	KUNIT_CASE_PARAM(capacity_arithmetic, capacity_bits_gen_params),
	KUNIT_CASE_PARAM(slab_slot_round_trip, slot_bytes_gen_params),
	KUNIT_CASE(slab_slot_width),
	KUNIT_CASE(slab_obj_index_mult),
	KUNIT_CASE(slab_object_tag),
	KUNIT_CASE(slab_block_flag_bits),
	KUNIT_CASE(slab_block_overflow),
	KUNIT_CASE(kmalloc_dma_first),
	KUNIT_CASE(slab_dma32_blocks),
	KUNIT_CASE(slab_kfence_untaggable),
	{}
};

static struct kunit_suite pgalloc_tag_test_suite = {
	.name = "pgalloc_tag",
	.test_cases = pgalloc_tag_test_cases,
};
kunit_test_suite(pgalloc_tag_test_suite);

MODULE_DESCRIPTION("KUnit tests of page allocation tag indices");
MODULE_LICENSE("GPL");
