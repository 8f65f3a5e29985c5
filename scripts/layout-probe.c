// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compiled (never linked) against a prepared kernel build directory by
 * scripts/page-flags-layout.sh: the widths of the fields of page->flags
 * that the configuration gives, as "LAYOUT name value" lines in the
 * assembler output. ALLOC_TAG_IDX_SPARE is the series' count of spare
 * bits, ALLOC_TAG_IDX_WIDTH the index field's share of them, at most 32
 * (include/linux/page-flags-layout.h).
 */
#include <linux/mm_types.h>

#define SHOW(name, val) \
	asm volatile(".ascii \"\\nLAYOUT " #name " %c0\\n\"" : : "i" (val))

void layout_probe(void);
void layout_probe(void)
{
	SHOW(word, BITS_PER_LONG);
	SHOW(pageflags, NR_PAGEFLAGS);
	SHOW(sections, SECTIONS_WIDTH);
	SHOW(nodes, NODES_WIDTH);
	SHOW(zones, ZONES_WIDTH);
	SHOW(last_cpupid, LAST_CPUPID_WIDTH);
	SHOW(kasan_tag, KASAN_TAG_WIDTH);
	SHOW(lru_gen, LRU_GEN_WIDTH);
	SHOW(lru_refs, __LRU_REFS_WIDTH);
	SHOW(spare, ALLOC_TAG_IDX_SPARE);
	SHOW(index, ALLOC_TAG_IDX_WIDTH);
}
