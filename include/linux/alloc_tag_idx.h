/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation tag indices
 *
 * Every allocation tag has a small number, its index, which pages and slab
 * objects carry instead of a pointer to the tag: in the spare bits of
 * page->flags, in 2 or 4 bytes of page_ext, in 2 or 4 bytes a slab object.
 * The kernel's tags are numbered at boot in section order, a module's tags
 * at its load (mm/pgalloc_tag.c, mm/alloc_tag_module.c). How the
 * allocator stores and decodes an index is mm's business
 * (mm/alloc_tag_storage.h); this is what the rest of the kernel may know
 * of it.
 */
#ifndef _LINUX_ALLOC_TAG_IDX_H
#define _LINUX_ALLOC_TAG_IDX_H

#include <linux/alloc_tag.h>
#include <linux/bits.h>
#include <linux/limits.h>

/* Reserved indices; tags are numbered from ALLOC_TAG_IDX_FIRST. */
#define ALLOC_TAG_IDX_NONE	0UL	/* no tag */
#define ALLOC_TAG_IDX_EMPTY	1UL	/* untagged on purpose (set_codetag_empty()) */
#define ALLOC_TAG_IDX_FIRST	2UL

/* Number of tags @bits bits can index, besides the reserved indices. */
static inline unsigned long alloc_tag_idx_capacity(unsigned int bits)
{
	if (bits >= BITS_PER_LONG)
		return ULONG_MAX - ALLOC_TAG_IDX_FIRST + 1;
	if (bits < 1)
		return 0;
	return (1UL << bits) - ALLOC_TAG_IDX_FIRST;
}

#ifdef CONFIG_MEM_ALLOC_PROFILING

/*
 * The top bit of a tag's idx field: set while the tag is chosen for
 * capture and capture runs (mm/alloc_tag_capture.c). The allocation hooks
 * test the field once, as a signed number: above 0, it is the index to
 * store and there is nothing else to do; else they go out of line, for a
 * module tag without an index as for a chosen tag. The tag's index is
 * the field without the bit (alloc_tag_idx()).
 */
#define ALLOC_TAG_IDX_CAPTURE	BIT(BITS_PER_LONG - 1)

/* The index of @tag, ALLOC_TAG_IDX_NONE if it has none. */
static inline unsigned long alloc_tag_idx(const struct alloc_tag *tag)
{
	return READ_ONCE(tag->idx) & ~ALLOC_TAG_IDX_CAPTURE;
}

/* The index a tag reference stands for. */
static inline unsigned long alloc_tag_ref_to_idx(union codetag_ref *ref)
{
	if (!ref->ct)
		return ALLOC_TAG_IDX_NONE;
	if (is_codetag_empty(ref))
		return ALLOC_TAG_IDX_EMPTY;
	return alloc_tag_idx(ct_to_alloc_tag(ref->ct));
}

/* The codetag of index @idx, the empty one, or NULL if none. */
struct codetag *alloc_tag_idx_to_ct(unsigned long idx);

void alloc_tag_module_list_assert_held(void);
void alloc_tag_module_idx_get(struct alloc_tag *tags, unsigned long nr,
			      const char *modname);
void alloc_tag_module_idx_put(struct alloc_tag *tags, unsigned long nr, bool live);
void alloc_tag_lock_module_list(bool lock);

#endif /* CONFIG_MEM_ALLOC_PROFILING */

#endif /* _LINUX_ALLOC_TAG_IDX_H */
