// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_param: allocates pages from a module parameter's setter, which
 * runs while the module loads, before its init function, so that tests
 * can check that such allocations are charged to their call site like
 * any other (the module's tags must be set up before its parameters are
 * parsed).
 *
 *   insmod pftag_param.ko pages=N   N order-0 pages from the setter
 *                                   (SITE:param), freed at unload
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>

#define MAX_PAGES 64

static struct page *held[MAX_PAGES];
static unsigned int nr_held;

static int pages_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int err;

	err = kstrtouint(val, 0, &n);
	if (err)
		return err;
	if (n > MAX_PAGES - nr_held)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct page *page = alloc_page(GFP_KERNEL); /* SITE:param */

		if (!page)
			return -ENOMEM;
		held[nr_held++] = page;
	}
	return 0;
}

static int pages_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", nr_held);
}

static const struct kernel_param_ops pages_ops = {
	.set = pages_set,
	.get = pages_get,
};
module_param_cb(pages, &pages_ops, NULL, 0444);
MODULE_PARM_DESC(pages, "order-0 pages to allocate while the module loads");

static int __init pftag_param_init(void)
{
	return 0;
}

static void __exit pftag_param_exit(void)
{
	while (nr_held)
		__free_page(held[--nr_held]);
}

module_init(pftag_param_init);
module_exit(pftag_param_exit);
MODULE_DESCRIPTION("allocation profiling test: pages from a parameter setter");
MODULE_LICENSE("GPL");
