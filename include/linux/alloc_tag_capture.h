/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call chains of chosen allocation tags (mm/alloc_tag_capture.c).
 *
 * An operator chooses tags in debugfs (alloc_tag/capture/tags) and starts
 * capture; every allocation charged to a chosen tag then records its call
 * chain, once each in the stack depot, with the calls and bytes of each
 * chain. A chosen tag's index carries ALLOC_TAG_IDX_CAPTURE while capture
 * runs: the allocation hooks' test of the index sends its allocations out
 * of line, and the other tags' allocations pay nothing for capture.
 */
#ifndef _LINUX_ALLOC_TAG_CAPTURE_H
#define _LINUX_ALLOC_TAG_CAPTURE_H

#include <linux/alloc_tag.h>
#include <linux/alloc_tag_idx.h>
#include <linux/codetag.h>

/* An iterator over every tag, for the holder of the module list lock. */
struct codetag_iterator alloc_tag_ct_iter(void);

#ifdef CONFIG_MEM_ALLOC_PROFILING_CAPTURE

void *alloc_tag_capture(struct alloc_tag *tag, size_t bytes, void *ret);
void alloc_tag_capture_module_unload(struct alloc_tag *tags, unsigned long nr);

/*
 * Whether @idx, a tag's idx field as an allocation hook read it, is that
 * of a tag chosen for capture, with an index to store: the hook then
 * charges the allocation out of line and ends with alloc_tag_capture(),
 * which returns its last argument, as a tail call.
 */
static __always_inline bool alloc_tag_idx_chosen(unsigned long idx)
{
	return (long)idx < 0 && idx != ALLOC_TAG_IDX_CAPTURE;
}

#else /* CONFIG_MEM_ALLOC_PROFILING_CAPTURE */

static inline bool alloc_tag_idx_chosen(unsigned long idx) { return false; }
static inline void *alloc_tag_capture(struct alloc_tag *tag, size_t bytes, void *ret)
{
	return ret;
}

static inline void alloc_tag_capture_module_unload(struct alloc_tag *tags,
						   unsigned long nr) {}

#endif /* CONFIG_MEM_ALLOC_PROFILING_CAPTURE */

#endif /* _LINUX_ALLOC_TAG_CAPTURE_H */
