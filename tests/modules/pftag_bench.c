// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_bench: the cost of one allocation and free, measured in the
 * kernel on one pinned CPU, after the method of the original allocation
 * profiling series: loops of alloc_pages()/__free_pages() at a few orders
 * and of kmalloc()/kfree() of 8 to 240 bytes.
 *
 *   insmod pftag_bench.ko loops=20000 runs=3 cpu=1 && rmmod pftag_bench
 *
 * runs the loops at load, on a kthread bound to @cpu, and prints one line
 * per case and run; the load returns when they are done:
 *
 *   pftag_bench: run=R case=page-o0 loops=N ns=T
 *   pftag_bench: run=R case=kmalloc-8-240 loops=N ns=T
 *   pftag_bench: done runs=R
 *
 * ns is the ktime_get_ns() delta of the whole loop; one loop iteration is
 * one allocation and its free. Under QEMU with -icount shift=0 the guest
 * clock counts instructions, so ns/loops is instructions per pair.
 * Every run first does loops/8 untimed iterations to fill the per-CPU
 * caches, so each timed loop starts warm.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

static unsigned int loops = 20000;
module_param(loops, uint, 0444);
MODULE_PARM_DESC(loops, "iterations (allocation + free) per case and run");
static unsigned int runs = 1;
module_param(runs, uint, 0444);
MODULE_PARM_DESC(runs, "how many times every case is measured");
static unsigned int cpu;
module_param(cpu, uint, 0444);
MODULE_PARM_DESC(cpu, "the CPU the benchmark thread is bound to");

static const unsigned int orders[] = { 0, 1, 3, 9 };
/* kmalloc sizes: 8, 16, ..., 240 bytes, cycled through by the loop. */
#define KM_MIN 8
#define KM_STEP 8
#define KM_SIZES 30

static int result;
static DECLARE_COMPLETION(finished);

static int page_loop(unsigned int order, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct page *page = alloc_pages(GFP_KERNEL, order);

		if (!page)
			return -ENOMEM;
		__free_pages(page, order);
	}
	return 0;
}

static int kmalloc_loop(unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		void *p = kmalloc(KM_MIN + k * KM_STEP, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		kfree(p);
		if (++k == KM_SIZES)
			k = 0;
	}
	return 0;
}

static int timed(const char *name, unsigned int run, unsigned int order, bool km)
{
	u64 t0, t1;
	int err;

	err = km ? kmalloc_loop(loops / 8 + 1) : page_loop(order, loops / 8 + 1);
	if (err)
		return err;
	t0 = ktime_get_ns();
	err = km ? kmalloc_loop(loops) : page_loop(order, loops);
	t1 = ktime_get_ns();
	if (err)
		return err;
	pr_info("pftag_bench: run=%u case=%s loops=%u ns=%llu\n", run, name, loops, t1 - t0);
	return 0;
}

static int bench_thread(void *unused)
{
	char name[16];
	unsigned int run, i;
	int err = 0;

	for (run = 1; run <= runs && !err; run++) {
		for (i = 0; i < ARRAY_SIZE(orders) && !err; i++) {
			snprintf(name, sizeof(name), "page-o%u", orders[i]);
			err = timed(name, run, orders[i], false);
		}
		if (!err)
			err = timed("kmalloc-8-240", run, 0, true);
	}
	if (!err)
		pr_info("pftag_bench: done runs=%u\n", runs);
	result = err;
	complete(&finished);
	return 0;
}

static int __init pftag_bench_init(void)
{
	struct task_struct *t;

	if (!loops || !runs)
		return -EINVAL;
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	t = kthread_create(bench_thread, NULL, "pftag_bench");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, cpu);
	wake_up_process(t);
	wait_for_completion(&finished);
	if (result) {
		pr_err("pftag_bench: failed: %d\n", result);
		return result;
	}
	return 0;
}

static void __exit pftag_bench_exit(void)
{
}

module_init(pftag_bench_init);
module_exit(pftag_bench_exit);
MODULE_DESCRIPTION("pftag: per-operation cost of page and slab allocation");
MODULE_LICENSE("GPL");
