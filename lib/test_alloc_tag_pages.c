// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose allocation tags come and go with it, for the module
 * load and unload tests of the alloc_tag kselftest
 * (tools/testing/selftests/alloc_tag): at load it allocates counts[0]
 * order-0 pages, counts[1] order-1 blocks and so on, charged to its own
 * call sites, and at unload it frees them. Its lines in /proc/allocinfo
 * ("[test_alloc_tag_pages]") must show exactly those while it is loaded,
 * and vanish with it; the index its tags held must come back.
 *
 *   modprobe test_alloc_tag_pages counts=A,B,C,...
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>

#define MAX_ALLOCS 1024

static unsigned int counts[NR_PAGE_ORDERS];
static int nr_counts;
module_param_array(counts, uint, &nr_counts, 0444);
MODULE_PARM_DESC(counts, "allocations per order, from order 0");

static struct page *pages[MAX_ALLOCS];
static unsigned int page_orders[MAX_ALLOCS];
static unsigned int nr_held;

static noinline struct page *pages_alloc(unsigned int order)
{
	if (!order)
		return alloc_page(GFP_KERNEL | __GFP_NOWARN); /* SITE:order0 */
	return alloc_pages(GFP_KERNEL | __GFP_NOWARN, order); /* SITE:orderN */
}

static void free_held(void)
{
	while (nr_held) {
		nr_held--;
		__free_pages(pages[nr_held], page_orders[nr_held]);
	}
}

static int __init test_alloc_tag_pages_init(void)
{
	unsigned int order, i;

	for (order = 0; order < nr_counts; order++) {
		for (i = 0; i < counts[order]; i++) {
			struct page *page;

			if (nr_held == MAX_ALLOCS) {
				pr_err("more than %d allocations asked, none kept\n", MAX_ALLOCS);
				free_held();
				return -EINVAL;
			}
			page = pages_alloc(order);
			if (!page) {
				free_held();
				return -ENOMEM;
			}
			pages[nr_held] = page;
			page_orders[nr_held++] = order;
		}
	}
	return 0;
}

static void __exit test_alloc_tag_pages_exit(void)
{
	free_held();
}

module_init(test_alloc_tag_pages_init);
module_exit(test_alloc_tag_pages_exit);
MODULE_DESCRIPTION("Pages held while loaded, for the alloc_tag kselftest's module tests");
MODULE_LICENSE("GPL");
