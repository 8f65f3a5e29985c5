/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call chains of chosen allocation tags (mm/alloc_tag_capture.c).
 *
 * An operator chooses tags in debugfs (alloc_tag/capture/tags) and starts
 * capture; every allocation charged to a chosen tag then records its call
 * chain, once each in the stack depot, with the calls and bytes of each
 * chain. The allocation paths test a static key, on only while capture
 * runs with a tag chosen, and then a flag in the tag they charge.
 */
#ifndef _LINUX_ALLOC_TAG_CAPTURE_H
#define _LINUX_ALLOC_TAG_CAPTURE_H

#include <linux/alloc_tag.h>
#include <linux/codetag.h>
#include <linux/jump_label.h>

/* An iterator over every tag, for the holder of the module list lock. */
struct codetag_iterator alloc_tag_ct_iter(void);

#ifdef CONFIG_MEM_ALLOC_PROFILING_CAPTURE

/* ct.flags of a chosen tag (bit 0 is lib/alloc_tag.c's own-counters flag) */
#define ALLOC_TAG_CAPTURE	CODETAG_TYPE_FLAG(1)

/* On while capture runs with at least one tag chosen. */
DECLARE_STATIC_KEY_FALSE(alloc_tag_capture_on);

void *alloc_tag_capture(struct alloc_tag *tag, size_t bytes, void *ret);
void alloc_tag_capture_module_unload(struct alloc_tag *tags, unsigned long nr);

/*
 * Whether the allocation just charged to @tag is to be captured: one
 * patched NOP while capture is stopped or nothing is chosen, else a test
 * of a flag in the tag, whose counters the caller has just charged. The
 * callers test it last and end with alloc_tag_capture(), which returns
 * its last argument: a tail call, so that the hook costs the allocation
 * paths no stack frame and no register kept across a call.
 */
static __always_inline bool alloc_tag_capture_chosen(struct alloc_tag *tag)
{
	return static_branch_unlikely(&alloc_tag_capture_on) &&
	       unlikely(READ_ONCE(tag->ct.flags) & ALLOC_TAG_CAPTURE);
}

#else /* CONFIG_MEM_ALLOC_PROFILING_CAPTURE */

static inline bool alloc_tag_capture_chosen(struct alloc_tag *tag) { return false; }
static inline void *alloc_tag_capture(struct alloc_tag *tag, size_t bytes, void *ret)
{
	return ret;
}

static inline void alloc_tag_capture_module_unload(struct alloc_tag *tags,
						   unsigned long nr) {}

#endif /* CONFIG_MEM_ALLOC_PROFILING_CAPTURE */

#endif /* _LINUX_ALLOC_TAG_CAPTURE_H */
