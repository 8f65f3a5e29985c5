// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page allocation tags as indices, in page->flags or in page_ext.
 *
 * Memory allocation profiling records in every allocated page which tag
 * (allocation call site) allocated it. Instead of a pointer in page_ext, a
 * page carries the tag's index: in the spare bits of page->flags, up to 32
 * of them (ALLOC_TAG_IDX_WIDTH, include/linux/page-flags-layout.h), when
 * the indices fit them, in 2 (or 4) bytes of page_ext otherwise. This file
 * numbers the tags, decides, once, where page tags are kept, and does the
 * work of the page hooks whose static-key gates are in alloc_tag_storage.h.
 *
 * Indices: 0 is "no tag", 1 is "untagged on purpose", the kernel's tags
 * follow in section order, module tags after them. A kernel tag is found
 * from its index by its place in the section; a module tag through a
 * table (alloc_tag_module_map) that is filled at module load
 * (alloc_tag_module.c).
 * Every tag also keeps its own index (alloc_tag::idx), so both directions take
 * constant time on the allocation and free paths.
 *
 * Storage: alloc_tag_storage_init() runs before the buddy allocator hands
 * out its first page. If the kernel's tags plus a headroom for modules fit
 * the bits, page tags go to page->flags and page_ext is not allocated for
 * them at all; otherwise each page gets a page_ext slot of 16 bits, or of
 * 32 when the tags and the headroom do not fit 16, instead of the 64-bit
 * pointer page_ext used to hold. Either way profiling stays on and
 * /proc/allocinfo reads the same. Slab objects carry the same index, in
 * 16 or 32 bits by the same rule (mm/slub.c), so with 16 the index space
 * ends at 2^16.
 *
 * A module that loads when the index space is full still loads; the tags
 * that got no index are counted, and the pages and slab objects they
 * allocate are not charged to any tag.
 */

#include <linux/alloc_tag.h>
#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/pgalloc_tag.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "alloc_tag_storage.h"

#undef pr_fmt
#define pr_fmt(fmt) "alloc_tag: " fmt

/* Module tag indices at most: a map of 2 MiB with 8-byte pointers. */
#define MODULE_IDX_MAX		BIT(18)

/* Indices kept free for module tags when choosing page-flags storage. */
#define MODULE_IDX_HEADROOM	4096UL

DEFINE_STATIC_KEY_FALSE(alloc_tag_page_flags);
DEFINE_STATIC_KEY_FALSE(alloc_tag_page_ext_wide);
DEFINE_STATIC_KEY_FALSE(alloc_tag_slab_wide);

unsigned long alloc_tag_kernel_idx_end __ro_after_init;

static enum alloc_tag_storage_request storage_request __initdata;
static unsigned int idx_bits_cap __initdata = UINT_MAX;
static unsigned long module_headroom __initdata = MODULE_IDX_HEADROOM;

/* What alloc_tag_storage_init() decided, for the report. */
static const char *storage_reason __ro_after_init = "profiling disabled";
static unsigned int idx_bits __ro_after_init;
static unsigned long idx_capacity __ro_after_init;
unsigned long alloc_tag_kernel_tags __ro_after_init;
static unsigned long boot_headroom __ro_after_init;

/* Size of the module index space (alloc_tag_module.c hands it out). */
unsigned long alloc_tag_module_space __ro_after_init;

/* Counters for the report. */
static atomic_long_t unindexed_allocs;		/* page allocations not charged */
static atomic_long_t unindexed_pages;
static atomic_long_t unindexed_slab_allocs;	/* slab allocations not charged */
static atomic_long_t unindexed_slab_bytes;

/*
 * Debug builds: the indices that were ever stored in a page, a bit each,
 * for the count of tags that allocated pages since boot (page_tags). A
 * module index set here and released at unload is counted in
 * paged_idx_released and cleared, so that the next module's tag that
 * gets it is counted on its own.
 */
static unsigned long *paged_idx __ro_after_init;
static unsigned long paged_idx_nbits __ro_after_init;
static unsigned long paged_idx_released;	/* under mod_lock */

static int __init setup_idx_bits(char *str)
{
	unsigned int bits;

	/* str is NULL for the bare name, given without "=" */
	if (!str || kstrtouint(str, 0, &bits) || bits > BITS_PER_LONG) {
		pr_err("mem_profiling_idx_bits=%s is not a number of bits from 0 to %d; the cap is not applied\n",
		       str ?: "", BITS_PER_LONG);
		return 0;
	}
	idx_bits_cap = bits;
	return 0;
}
early_param("mem_profiling_idx_bits", setup_idx_bits);

static int __init setup_module_headroom(char *str)
{
	unsigned long headroom;

	if (!str || kstrtoul(str, 0, &headroom)) {
		pr_err("mem_profiling_headroom=%s is not a number of tags; keeping %lu\n",
		       str ?: "", module_headroom);
		return 0;
	}
	module_headroom = headroom;
	return 0;
}
early_param("mem_profiling_headroom", setup_module_headroom);

void __init alloc_tag_request_storage(enum alloc_tag_storage_request request)
{
	storage_request = request;
}

static const char *storage_name(void)
{
	return alloc_tag_in_page_flags() ? "page flags" : "page_ext";
}

/* Whether @capacity indices hold the kernel's tags and the module headroom. */
static bool __init idx_fits(unsigned long capacity)
{
	return alloc_tag_kernel_tags <= capacity &&
	       capacity - alloc_tag_kernel_tags >= module_headroom;
}

/*
 * alloc_tag_storage_init - choose where page tags are kept
 *
 * Context: early boot, before memblock hands its pages to the buddy
 * allocator, so no page was allocated with a tag yet.
 */
void __init alloc_tag_storage_init(void)
{
	unsigned long capacity;
	struct alloc_tag *tag;
	bool wide;

	BUILD_BUG_ON(ALLOC_TAG_IDX_WIDTH && ALLOC_TAG_IDX_PGOFF !=
		     NR_PAGEFLAGS + ALLOC_TAG_IDX_SPARE - ALLOC_TAG_IDX_WIDTH);
	BUILD_BUG_ON(ALLOC_TAG_IDX_WIDTH > 32);

	if (mem_alloc_profiling_permanently_disabled())
		return;

	alloc_tag_kernel_tags = __stop_alloc_tags - __start_alloc_tags;
	idx_bits = min_t(unsigned int, ALLOC_TAG_IDX_WIDTH, idx_bits_cap);
	idx_capacity = alloc_tag_idx_capacity(idx_bits);
	boot_headroom = module_headroom;

	/*
	 * Slab objects, and pages in page_ext, keep the index in 16 bits if
	 * the kernel's tags and the module headroom fit them, in 32 otherwise
	 * (more tags than any kernel has).
	 */
	wide = !idx_fits(alloc_tag_idx_capacity(16));
	if (wide)
		static_branch_enable(&alloc_tag_slab_wide);

	if (storage_request == ALLOC_TAG_STORAGE_PAGE_EXT)
		storage_reason = "page_ext requested on the command line";
	else if (!idx_fits(idx_capacity))
		storage_reason = "kernel tags plus module headroom exceed the capacity";
	else
		storage_reason = NULL;

	if (storage_reason) {
		/*
		 * The slab's rule picks the slot. need_page_alloc_tagging()
		 * asks page_ext for it later in boot.
		 */
		page_alloc_tagging_ops.size = wide ? sizeof(u32) : sizeof(u16);
		if (wide)
			static_branch_enable(&alloc_tag_page_ext_wide);
		capacity = alloc_tag_idx_capacity(page_alloc_tagging_ops.size *
						  BITS_PER_BYTE);
	} else {
		static_branch_enable(&alloc_tag_page_flags);
		capacity = idx_capacity;
	}
	/* Every index must fit a slab object's slot too. */
	if (!wide)
		capacity = min(capacity, alloc_tag_idx_capacity(16));

	if (!alloc_tag_idx_counters_init()) {
		pr_err("no memory for the table of the %lu kernel tags' counters: no tag gets an index, and allocations are counted as unindexed, charged to no tag\n",
		       alloc_tag_kernel_tags);
		return;
	}
	for (tag = __start_alloc_tags; tag < __stop_alloc_tags; tag++)
		tag->idx = ALLOC_TAG_IDX_FIRST + (tag - __start_alloc_tags);
	alloc_tag_kernel_idx_end = ALLOC_TAG_IDX_FIRST + alloc_tag_kernel_tags;
	alloc_tag_module_space = min(capacity - alloc_tag_kernel_tags, MODULE_IDX_MAX);

	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
		unsigned long nbits = alloc_tag_kernel_idx_end + alloc_tag_module_space;

		paged_idx = memblock_alloc(BITS_TO_LONGS(nbits) * sizeof(long),
					   SMP_CACHE_BYTES);
		if (paged_idx)
			paged_idx_nbits = nbits;
	}

	if (!storage_reason) {
		pr_info("page tags in page flags: %u spare bits, %u usable, capacity %lu tags, %lu kernel tags indexed, %lu module indices, module headroom %lu; no page_ext for tags\n",
			ALLOC_TAG_IDX_SPARE, idx_bits, idx_capacity, alloc_tag_kernel_tags,
			alloc_tag_module_space, module_headroom);
		return;
	}
	pr_info("page tags in page_ext: a %zu-bit index, %zu bytes a page; %u spare bits in page flags, %u usable, capacity %lu tags, %lu kernel tags indexed, %lu module indices, module headroom %lu: %s\n",
		page_alloc_tagging_ops.size * BITS_PER_BYTE,
		page_alloc_tagging_ops.size, ALLOC_TAG_IDX_SPARE,
		idx_bits, idx_capacity, alloc_tag_kernel_tags, alloc_tag_module_space,
		module_headroom, storage_reason);
	if (storage_request == ALLOC_TAG_STORAGE_PAGE_FLAGS)
		pr_warn("page-flags storage (compressed) was requested but cannot be used: %s; profiling stays on with page_ext storage\n",
			storage_reason);
}

void alloc_tag_count_unindexed(unsigned int nr)
{
	atomic_long_inc(&unindexed_allocs);
	atomic_long_add(nr, &unindexed_pages);
}

void alloc_tag_count_unindexed_slab(size_t bytes)
{
	atomic_long_inc(&unindexed_slab_allocs);
	atomic_long_add(bytes, &unindexed_slab_bytes);
}

/* The codetag of index @idx, the empty one, or NULL if none. */
struct codetag *alloc_tag_idx_to_ct(unsigned long idx)
{
	if (idx >= ALLOC_TAG_IDX_FIRST) {
		struct alloc_tag *tag = alloc_tag_from_idx(idx);

		return tag ? &tag->ct : NULL;
	}
	if (idx == ALLOC_TAG_IDX_EMPTY) {
		union codetag_ref ref;

		set_codetag_empty(&ref);
		return ref.ct;
	}
	return NULL;
}

/* Debug builds: a page about to get @tag must carry no tag (index @old). */
static inline void alloc_tag_idx_add_check(unsigned long old, struct alloc_tag *tag)
{
	union codetag_ref ref = { .ct = alloc_tag_idx_to_ct(old) };

	alloc_tag_add_check(&ref, tag);
}

/* Debug builds: note that the tag of index @idx allocated a page. */
static __always_inline void note_paged_idx(unsigned long idx)
{
	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) &&
	    idx < paged_idx_nbits && !test_bit(idx, paged_idx))
		set_bit(idx, paged_idx);
}

/*
 * Debug builds: module index @idx is released; if it tagged a page, count
 * it and clear its bit for the tag that gets it next. Under mod_lock.
 */
void alloc_tag_paged_idx_release(unsigned long idx)
{
	if (idx < paged_idx_nbits && test_and_clear_bit(idx, paged_idx))
		paged_idx_released++;
}

/*
 * Give the 2^@order pages at @page, fresh from the allocator, the index
 * @idx of @tag, and charge the tag for them: in page_ext if @page_ext is
 * set, else in page->flags.
 *
 * Every page enters the free lists with index 0 (free_pages_prepare()
 * clears it, and in page_ext the mark, or pgalloc_tag_ext_sub() the
 * slot where there is no mark; struct pages and page_ext start zeroed),
 * so the old index is not read (but by the debug check). In page->flags
 * the new one is set with an OR, atomic for the reason
 * pgalloc_tag_flags_add() gives.
 */
static __always_inline void pgalloc_tag_set_idx(struct page *page,
						struct page_ext *page_ext,
						struct alloc_tag *tag,
						unsigned int order,
						unsigned long idx)
{
	if (page_ext) {
		if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
			alloc_tag_idx_add_check(pgalloc_tag_ext_idx_load(page, page_ext),
						tag);
		/* The slot, then the mark, which a fresh page does not have. */
		pgalloc_tag_ext_idx_write(page_ext, idx);
		if (ALLOC_TAG_EXT_MARKED)
			atomic_long_or(ALLOC_TAG_EXT_MARK, (atomic_long_t *)&page->flags);
	} else if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) &&
		   pgalloc_tag_idx_read(page)) {
		alloc_tag_idx_add_check(pgalloc_tag_idx_read(page), tag);
		pgalloc_tag_idx_write(page, idx);
	} else {
		/*
		 * Not masked: page-flags storage is chosen only when every
		 * index given fits the field (alloc_tag_idx_capacity()).
		 * Debug builds check it, as a spill would change the LRU's
		 * and KASAN's bits.
		 */
		WARN_ONCE(IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) &&
			  (idx & ~ALLOC_TAG_IDX_MASK),
			  "tag index %lu is wider than page->flags' field: the page's other flags are corrupted\n",
			  idx);
		atomic_long_or(idx << ALLOC_TAG_IDX_PGSHIFT,
			       (atomic_long_t *)&page->flags);
	}
	alloc_tag_charge_pages(tag, order);
	note_paged_idx(idx);
}

/*
 * pgalloc_tag_add_idx() for a tag whose idx field is not above 0: a
 * module tag without an index, or a tag chosen for capture. Returns @tag
 * if it was charged (it is chosen), else NULL.
 */
static noinline __cold struct alloc_tag *
pgalloc_tag_add_idx_slow(struct page *page, struct page_ext *page_ext,
			 struct alloc_tag *tag, unsigned int order)
{
	unsigned long idx = alloc_tag_idx(tag);

	/*
	 * A module tag that got no index (the index space was full when the
	 * module loaded) cannot be stored in a page: its page allocations are
	 * counted, and charged to no tag.
	 */
	if (idx == ALLOC_TAG_IDX_NONE) {
		alloc_tag_count_unindexed(1U << order);
		/*
		 * Debug builds check, when a page is freed, that it had a
		 * tag: give the page "untagged on purpose" instead of none.
		 */
		if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
			if (page_ext)
				pgalloc_tag_ext_idx_store(page, page_ext, ALLOC_TAG_IDX_EMPTY);
			else
				pgalloc_tag_idx_write(page, ALLOC_TAG_IDX_EMPTY);
		}
		return NULL;
	}
	pgalloc_tag_set_idx(page, page_ext, tag, order, idx);
	return tag;
}

/*
 * Charge @tag for the 2^@order pages at @page and give them its index
 * (pgalloc_tag_set_idx()). Returns @tag if it is chosen for capture, for
 * the caller to capture the allocation, else NULL.
 */
static __always_inline struct alloc_tag *
pgalloc_tag_add_idx(struct page *page, struct page_ext *page_ext,
		    struct alloc_tag *tag, unsigned int order)
{
	unsigned long idx;

	if (unlikely(!tag)) {
		alloc_tag_add_check(NULL, tag);
		return NULL;
	}
	idx = READ_ONCE(tag->idx);
	if (unlikely((long)idx <= 0))
		return pgalloc_tag_add_idx_slow(page, page_ext, tag, order);
	pgalloc_tag_set_idx(page, page_ext, tag, order, idx);
	return NULL;
}

/*
 * The allocation hook out of line, one function a storage, called in
 * debug builds, for the check that the page carries no tag, and for the
 * tags the inline hooks (pgalloc_tag_flags_add(), pgalloc_tag_ext_add())
 * leave to it: a module tag without an index, a tag chosen for capture.
 */
void __pgalloc_tag_add(struct page *page, unsigned int order)
{
	struct alloc_tag *tag = pgalloc_tag_add_idx(page, NULL, current->alloc_tag, order);

	if (tag)
		alloc_tag_capture(tag, PAGE_SIZE << order, NULL);
}

void __pgalloc_tag_add_ext(struct page *page, unsigned int order)
{
	struct page_ext *page_ext = page_ext_from_owned_page(page);
	struct alloc_tag *tag;

	if (!page_ext)
		return;
	tag = pgalloc_tag_add_idx(page, page_ext, current->alloc_tag, order);
	if (tag)
		alloc_tag_capture(tag, PAGE_SIZE << order, NULL);
}

/*
 * A page index below ALLOC_TAG_IDX_FIRST has no tag to uncharge: "empty"
 * (untagged on purpose) is fine, "none" means the page lost its tag.
 */
void alloc_tag_idx_sub_check(unsigned long idx)
{
	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
		WARN_ONCE(idx == ALLOC_TAG_IDX_NONE, "alloc_tag was not set\n");
}

/*
 * The tag that index @idx is charged to, NULL for a reserved index, which
 * is checked (a page or object without a tag); an index that no tag owns
 * is warned of. Debug builds check every freed index with it.
 */
struct alloc_tag *alloc_tag_idx_charged(unsigned long idx)
{
	if (idx >= ALLOC_TAG_IDX_FIRST)
		return alloc_tag_from_idx(idx);
	alloc_tag_idx_sub_check(idx);
	return NULL;
}

/*
 * A page's index, wherever it is kept; reads, never writes. A page without
 * page_ext has no tag, and reads as untagged on purpose: no debug check.
 */
static inline unsigned long page_tag_idx_peek(struct page *page)
{
	struct page_ext *page_ext;
	unsigned long idx;

	if (alloc_tag_in_page_flags())
		return pgalloc_tag_idx_read(page);
	page_ext = page_ext_get(page);
	if (!page_ext)
		return ALLOC_TAG_IDX_EMPTY;
	idx = pgalloc_tag_ext_idx_load(page, page_ext);
	page_ext_put(page_ext);
	return idx;
}

/*
 * __pgalloc_tag_get - the tag a page is charged to, NULL if none
 *
 * Reads the page's tag and writes nothing. A page untagged on purpose has
 * no tag either.
 */
struct alloc_tag *__pgalloc_tag_get(struct page *page)
{
	return alloc_tag_idx_charged(page_tag_idx_peek(page));
}

/*
 * Split an allocation of 1 << @old_order pages into pieces of 1 << @new_order
 * pages: every new piece gets the original tag and counts as a call.
 */
void __pgalloc_tag_split(struct folio *folio, int old_order, int new_order)
{
	unsigned int nr_pages = 1 << new_order;
	struct alloc_tag *tag;
	int i;

	tag = pgalloc_tag_get(&folio->page);
	if (!tag)
		return;

	for (i = nr_pages; i < (1 << old_order); i += nr_pages) {
		struct pgalloc_tag_ref pr;

		if (pgalloc_tag_ref_load(folio_page(folio, i), &pr)) {
			/* Set new reference to point to the original tag */
			alloc_tag_ref_set(&pr.ref, tag);
			pgalloc_tag_ref_store(&pr);
		}
	}
}

/* Move the tag of @old to @new, which is replacing it (migration). */
void __pgalloc_tag_copy(struct folio *new, struct folio *old)
{
	struct alloc_tag *tag;
	struct pgalloc_tag_ref pr;

	/*
	 * A device page (ZONE_DEVICE: device-private memory that HMM migrates
	 * to and back from) never comes from the page allocator and goes back
	 * to its driver without an uncharge: it has no tag to give or take.
	 * Migrated to such a page, the source keeps its tag and gives it back
	 * when it is freed; migrated back, the new page keeps its own. The
	 * same happens in page_ext storage, as device memory has no page_ext.
	 */
	if (folio_is_zone_device(new) || folio_is_zone_device(old))
		return;

	tag = pgalloc_tag_get(&old->page);
	if (!tag)
		return;

	if (!pgalloc_tag_ref_load(&new->page, &pr))
		return;

	/* Clear the old ref to the original allocation tag. */
	clear_page_tag_ref(&old->page);
	/* Uncharge the tag of the target allocation (get_new_folio). */
	alloc_tag_sub(&pr.ref, folio_size(new));

	__alloc_tag_ref_set(&pr.ref, tag);

	pgalloc_tag_ref_store(&pr);
}

static int storage_show(struct seq_file *m, void *v)
{
	seq_printf(m, "storage: %s\n", storage_name());
	/* 0 in page-flags storage: page_ext is not asked for a slot. */
	seq_printf(m, "page_ext_index_bytes: %zu\n", page_alloc_tagging_ops.size);
	seq_printf(m, "fallback_reason: %s\n", storage_reason ?: "none");
	seq_printf(m, "spare_bits: %u\n", ALLOC_TAG_IDX_SPARE);
	seq_printf(m, "usable_bits: %u\n", idx_bits);
	seq_printf(m, "capacity: %lu\n", idx_capacity);
	seq_printf(m, "kernel_tags: %lu\n", alloc_tag_kernel_tags);
	seq_printf(m, "module_headroom_asked: %lu\n", boot_headroom);
	seq_printf(m, "module_index_space: %lu\n", alloc_tag_module_space);
	alloc_tag_module_show(m);
	seq_printf(m, "unindexed_allocations: %lu\n", atomic_long_read(&unindexed_allocs));
	seq_printf(m, "unindexed_pages: %lu\n", atomic_long_read(&unindexed_pages));
	seq_printf(m, "unindexed_slab_allocations: %lu\n",
		   atomic_long_read(&unindexed_slab_allocs));
	seq_printf(m, "unindexed_slab_bytes: %lu\n", atomic_long_read(&unindexed_slab_bytes));
	alloc_tag_slab_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(storage);

/*
 * How many tags allocated at least one page since boot: what an index
 * handed out on a tag's first page allocation, instead of to every tag at
 * boot, would need room for. Counted by debug builds only (a test on every
 * page allocation); the figure is exact but for a racing first allocation.
 */
static void page_tags_since_boot_show(struct seq_file *m)
{
	unsigned long kernel, module;

	if (!paged_idx) {
		seq_printf(m, "tags_with_pages_since_boot: not counted (%s)\n",
			   IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) ?
			   "no memory for its bitmap at boot" :
			   "needs CONFIG_MEM_ALLOC_PROFILING_DEBUG");
		return;
	}
	alloc_tag_lock_module_list(true);
	kernel = bitmap_weight(paged_idx, alloc_tag_kernel_idx_end);
	module = bitmap_weight(paged_idx, paged_idx_nbits) - kernel +
		 paged_idx_released;
	alloc_tag_lock_module_list(false);
	seq_printf(m, "tags_with_pages_since_boot: %lu\n", kernel + module);
	seq_printf(m, "kernel_tags_with_pages_since_boot: %lu\n", kernel);
	seq_printf(m, "module_tags_with_pages_since_boot: %lu\n", module);
}

/*
 * Which tags hold pages right now: every online page is read once. Only a
 * page that starts an allocation (or a piece of a split one) carries a
 * tag, so tagged_allocations counts live page allocations. Racy against
 * allocation and free by design: a snapshot for statistics.
 */
static int page_tags_show(struct seq_file *m, void *v)
{
	unsigned long nbits, pfn, allocs = 0, kernel = 0, module = 0;
	unsigned long *seen;
	struct zone *zone;

	nbits = alloc_tag_kernel_idx_end + alloc_tag_module_space;
	seen = bitmap_zalloc(nbits, GFP_KERNEL);
	if (!seen)
		return -ENOMEM;

	for_each_populated_zone(zone) {
		for (pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone); pfn++) {
			struct page *page = pfn_to_online_page(pfn);
			unsigned long idx;

			if (!(pfn % 4096))
				cond_resched();
			if (!page || page_zone(page) != zone)
				continue;
			/*
			 * A folio's tag is on its head: its tails are skipped,
			 * whose struct pages a vmemmap-optimised hugetlb folio
			 * maps onto its first ones (so they read as the head
			 * again), and whose page_ext slots may hold an earlier
			 * allocation's index. The order is read racily: kept
			 * within a gigantic folio's.
			 */
			if (PageHead(page))
				pfn += (1UL << min_t(unsigned int, compound_order(page),
						     PUD_SHIFT - PAGE_SHIFT)) - 1;
			idx = page_tag_idx_peek(page);
			if (idx < ALLOC_TAG_IDX_FIRST || idx >= nbits)
				continue;
			allocs++;
			if (__test_and_set_bit(idx, seen))
				continue;
			if (idx < alloc_tag_kernel_idx_end)
				kernel++;
			else
				module++;
		}
	}
	bitmap_free(seen);

	seq_printf(m, "tagged_allocations: %lu\n", allocs);
	seq_printf(m, "distinct_tags: %lu\n", kernel + module);
	seq_printf(m, "distinct_kernel_tags: %lu\n", kernel);
	seq_printf(m, "distinct_module_tags: %lu\n", module);
	page_tags_since_boot_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(page_tags);

/*
 * The ledger of the memory profiling itself holds, in bytes, by kind:
 *  page_ext_slots           the tag index slots of page_ext (page_ext
 *                           storage only; page_ext_all is every client's
 *                           entries, its own flags word included)
 *  slab_tag_blocks_kmalloc  slab tag blocks allocated apart from their slab
 *  slab_tag_blocks_in_slab  those in their slab's leftover space (no
 *                           allocation: not in the total)
 *  percpu_counters          the tags' per-CPU counters, on every possible CPU
 *  module_map               the module index map, every copy allocated
 *  counter_table            the free path's table of counters by index,
 *                           every copy allocated
 *  tag_indices              the index field of each kernel and module tag
 *  debug_bitmap             debug builds: the bitmap of indices that tagged pages
 */
static int memory_show(struct seq_file *m, void *v)
{
	unsigned long entries = page_ext_entries();
	unsigned long slots = entries * page_alloc_tagging_ops.size;
	unsigned long tags = alloc_tag_kernel_tags + alloc_tag_module_tags();
	unsigned long counters = (alloc_tag_kernel_tags + alloc_tag_own_counter_tags()) *
				 num_possible_cpus() * sizeof(struct alloc_tag_counters);
	unsigned long map = alloc_tag_module_map_bytes();
	unsigned long table = alloc_tag_idx_counters_bytes();
	unsigned long indices = tags * sizeof_field(struct alloc_tag, idx);
	unsigned long bitmap = paged_idx ? BITS_TO_LONGS(paged_idx_nbits) * sizeof(long) : 0;
	unsigned long blocks, in_slab;

	alloc_tag_slab_block_bytes(&blocks, &in_slab);
	seq_printf(m, "page_ext_slots: %lu\n", slots);
	seq_printf(m, "page_ext_all: %lu\n", entries * page_ext_size);
	seq_printf(m, "slab_tag_blocks_kmalloc: %lu\n", blocks);
	seq_printf(m, "slab_tag_blocks_in_slab: %lu\n", in_slab);
	seq_printf(m, "percpu_counters: %lu\n", counters);
	seq_printf(m, "module_map: %lu\n", map);
	seq_printf(m, "counter_table: %lu\n", table);
	seq_printf(m, "tag_indices: %lu\n", indices);
	seq_printf(m, "debug_bitmap: %lu\n", bitmap);
	seq_printf(m, "total: %lu\n",
		   slots + blocks + counters + map + table + indices + bitmap);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(memory);

static int __init alloc_tag_storage_debugfs_init(void)
{
	struct dentry *dir;

	if (mem_alloc_profiling_permanently_disabled())
		return 0;

	dir = debugfs_create_dir("alloc_tag", NULL);
	debugfs_create_file("storage", 0444, dir, NULL, &storage_fops);
	debugfs_create_file("page_tags", 0400, dir, NULL, &page_tags_fops);
	debugfs_create_file("memory", 0444, dir, NULL, &memory_fops);
	return 0;
}
late_initcall(alloc_tag_storage_debugfs_init);
