// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_keeper: keeps pages that another module allocated, so that they
 * can be freed after that module is gone (as page cache or network
 * buffers outlive the driver that allocated them).
 *
 *   pftag_pages give=1 hands its pages to pftag_keeper_store()
 *   echo 1 > /sys/kernel/debug/pftag_keeper/free frees every page kept
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "pftag_keeper.h"

#define MAX_KEPT 4096

static struct page *kept[MAX_KEPT];
static unsigned int kept_order[MAX_KEPT];
static unsigned int nr_kept;
static DEFINE_MUTEX(lock);
static struct dentry *dir;

bool pftag_keeper_store(struct page *page, unsigned int order)
{
	bool ok;

	mutex_lock(&lock);
	ok = nr_kept < MAX_KEPT;
	if (ok) {
		kept[nr_kept] = page;
		kept_order[nr_kept++] = order;
	}
	mutex_unlock(&lock);
	return ok;
}
/* GPL: symbol_get() takes only GPL symbols */
EXPORT_SYMBOL_GPL(pftag_keeper_store);

static void free_kept(void)
{
	mutex_lock(&lock);
	while (nr_kept) {
		nr_kept--;
		__free_pages(kept[nr_kept], kept_order[nr_kept]);
	}
	mutex_unlock(&lock);
}

static ssize_t free_write(struct file *file, const char __user *buf,
			  size_t len, loff_t *ppos)
{
	free_kept();
	return len;
}

static const struct file_operations free_fops = {
	.write = free_write,
};

static int __init pftag_keeper_init(void)
{
	dir = debugfs_create_dir("pftag_keeper", NULL);
	debugfs_create_file("free", 0200, dir, NULL, &free_fops);
	return 0;
}

static void __exit pftag_keeper_exit(void)
{
	debugfs_remove(dir);
	free_kept();
}

module_init(pftag_keeper_init);
module_exit(pftag_keeper_exit);
MODULE_DESCRIPTION("Keeps pages of other modules for allocation profiling tests");
MODULE_LICENSE("GPL");
