// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_dma32: n objects of 1024 bytes from a SLAB_CACHE_DMA32 cache of
 * its own, allocated at load and freed again, in the loading task. Such
 * a cache's slabs leave no space for their tag blocks, which come from
 * kmalloc, and a new slab's flags carry the cache's __GFP_DMA32; the
 * blocks' flags must not (kmalloc() would say "Unexpected gfp ... Fix
 * your code!" as it makes a slab for them). kmalloc() first tries a new
 * slab on the block's node with GFP_NOWAIT | __GFP_THISNODE, and only
 * when that fails with the flags it was given: tests/boot/dma32.sh makes
 * it fail (fail_page_alloc, for this task's non-sleeping allocations).
 *
 *   insmod pftag_dma32.ko n=N      allocates and frees N objects
 *                                  (default 8192), prints how many
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static unsigned int n = 8192;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "objects to allocate and free (1-65536)");

static int __init pftag_dma32_init(void)
{
	struct kmem_cache *cache;
	unsigned int i, got = 0;
	void **objs;

	if (!n || n > 65536) {
		pr_err("pftag_dma32: n=%u: give 1 to 65536\n", n);
		return -EINVAL;
	}
	objs = vcalloc(n, sizeof(*objs));
	if (!objs)
		return -ENOMEM;
	cache = kmem_cache_create("pftag_dma32", 1024, 0,
				  SLAB_NO_MERGE | SLAB_CACHE_DMA32, NULL);
	if (!cache) {
		vfree(objs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		objs[i] = kmem_cache_alloc(cache, GFP_KERNEL);
		got += !!objs[i];
	}
	for (i = 0; i < n; i++)
		if (objs[i])
			kmem_cache_free(cache, objs[i]);
	kmem_cache_destroy(cache);
	vfree(objs);
	pr_info("pftag_dma32: allocated and freed %u of %u objects\n", got, n);
	return 0;
}

static void __exit pftag_dma32_exit(void)
{
}

module_init(pftag_dma32_init);
module_exit(pftag_dma32_exit);
MODULE_DESCRIPTION("Objects of a DMA32 cache, whose slabs' tag blocks come from kmalloc");
MODULE_LICENSE("GPL");
