// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_pages: allocates a known number of pages at known orders from
 * known call sites, so that tests can derive the exact bytes and calls
 * /proc/allocinfo must show for them. Every allocation line carries a
 * "SITE:" marker; the tests find the line numbers by that marker.
 *
 *   insmod pftag_pages.ko counts=A,B,C,...  A order-0 pages (SITE:order0),
 *                                           B order-1, C order-2, ...
 *                                           allocations (SITE:orderN)
 *   echo 1 > /sys/kernel/debug/pftag_pages/free    frees them all
 *   echo 1 > /sys/kernel/debug/pftag_pages/free_shared
 *                                       frees them all while holding an
 *                                       extra reference on each (the
 *                                       allocations are not compound, so
 *                                       __free_pages() frees the tail
 *                                       chunks at once and the final
 *                                       put_page() the first page)
 *   rmmod pftag_pages                               frees what is left,
 *                                                   unless keep=1
 *   insmod pftag_pages.ko ... give=1                hands the pages to
 *                                                   pftag_keeper (loaded
 *                                                   first), which frees
 *                                                   them when told to
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "pftag_keeper.h"

#define MAX_ALLOCS 4096

static unsigned int counts[NR_PAGE_ORDERS];
static int nr_counts;
module_param_array(counts, uint, &nr_counts, 0444);
MODULE_PARM_DESC(counts, "allocations per order, from order 0");
static bool keep;
module_param(keep, bool, 0444);
MODULE_PARM_DESC(keep, "leave the pages allocated at unload");
static bool give;
module_param(give, bool, 0444);
MODULE_PARM_DESC(give, "hand the pages to pftag_keeper");

static struct page *pages[MAX_ALLOCS];
static unsigned int page_orders[MAX_ALLOCS];
static unsigned int nr_pages_held;
static DEFINE_MUTEX(lock);
static struct dentry *dir;

static struct page *alloc_one(unsigned int order)
{
	if (!order)
		return alloc_page(GFP_KERNEL); /* SITE:order0 */
	return alloc_pages(GFP_KERNEL, order); /* SITE:orderN */
}

static void free_all(void)
{
	mutex_lock(&lock);
	while (nr_pages_held) {
		nr_pages_held--;
		__free_pages(pages[nr_pages_held], page_orders[nr_pages_held]);
	}
	mutex_unlock(&lock);
}

static void free_all_shared(void)
{
	mutex_lock(&lock);
	while (nr_pages_held) {
		struct page *page = pages[--nr_pages_held];

		get_page(page);
		__free_pages(page, page_orders[nr_pages_held]);
		put_page(page);
	}
	mutex_unlock(&lock);
}

static ssize_t free_write(struct file *file, const char __user *buf,
			  size_t len, loff_t *ppos)
{
	free_all();
	return len;
}

static const struct file_operations free_fops = {
	.write = free_write,
};

static ssize_t free_shared_write(struct file *file, const char __user *buf,
				 size_t len, loff_t *ppos)
{
	free_all_shared();
	return len;
}

static const struct file_operations free_shared_fops = {
	.write = free_shared_write,
};

static int __init pftag_pages_init(void)
{
	unsigned int order, i;

	for (order = 0; order < nr_counts; order++) {
		for (i = 0; i < counts[order]; i++) {
			struct page *page;

			if (nr_pages_held == MAX_ALLOCS) {
				pr_err("pftag_pages: more than %d allocations asked\n", MAX_ALLOCS);
				free_all();
				return -EINVAL;
			}
			page = alloc_one(order);
			if (!page) {
				free_all();
				return -ENOMEM;
			}
			pages[nr_pages_held] = page;
			page_orders[nr_pages_held++] = order;
		}
	}
	if (give) {
		bool (*store)(struct page *page, unsigned int order);

		store = symbol_get(pftag_keeper_store);
		if (!store) {
			pr_err("pftag_pages: give=1 needs pftag_keeper loaded\n");
			free_all();
			return -ENOENT;
		}
		while (nr_pages_held && store(pages[nr_pages_held - 1],
					      page_orders[nr_pages_held - 1]))
			nr_pages_held--;
		symbol_put(pftag_keeper_store);
	}
	dir = debugfs_create_dir("pftag_pages", NULL);
	debugfs_create_file("free", 0200, dir, NULL, &free_fops);
	debugfs_create_file("free_shared", 0200, dir, NULL, &free_shared_fops);
	return 0;
}

static void __exit pftag_pages_exit(void)
{
	debugfs_remove(dir);
	if (!keep)
		free_all();
}

module_init(pftag_pages_init);
module_exit(pftag_pages_exit);
MODULE_DESCRIPTION("Known page allocations for allocation profiling tests");
MODULE_LICENSE("GPL");
