// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_bench: the cost of one allocation and free, measured in the
 * kernel on one pinned CPU, after the method of the original allocation
 * profiling series: loops of alloc_pages()/__free_pages() at a few orders
 * and of kmalloc()/kfree() of 8 to 240 bytes.
 *
 *   insmod pftag_bench.ko loops=20000 runs=3 cpu=1 ktag=0x... && rmmod pftag_bench
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
 * caches, so each timed loop starts warm; the batch cases at least one
 * whole batch, so that their per-CPU lists hold what the timed rounds
 * take from them.
 *
 * The cases:
 *   page-oN         alloc_pages(order N) and __free_pages(), a call site of
 *                   this module (a module tag)
 *   page-o0-ktag    the same at order 0, charged to a kernel tag: @ktag is
 *                   the address of one (the scripts pass __start_alloc_tags
 *                   from /proc/kallsyms), set around the allocation exactly
 *                   as alloc_hooks() does at a kernel call site
 *   page-o0-batch   @batch order-0 pages allocated, then all freed: the
 *                   pages differ from one operation to the next, so their
 *                   struct pages (and page_ext entries) are not cache-hot
 *   page-o0-batch-ktag  the same, charged to the kernel tag
 *   kmalloc-8-240   kmalloc()/kfree() of 8, 16, ..., 240 bytes
 *
 * Every timed loop is bracketed by two marker instructions, nopl with the
 * displacements "PFTS" and "PFTE": NOPs to a CPU, the start and end of a
 * window to the cache-model plugin of `make bench`, which counts loads,
 * stores and cache misses inside it.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

static unsigned int loops = 20000;
module_param(loops, uint, 0444);
MODULE_PARM_DESC(loops, "iterations (allocation + free) per case and run");
static unsigned int runs = 1;
module_param(runs, uint, 0444);
MODULE_PARM_DESC(runs, "how many times every case is measured");
static unsigned int cpu;
module_param(cpu, uint, 0444);
MODULE_PARM_DESC(cpu, "the CPU the benchmark thread is bound to");

static unsigned long ktag;
module_param(ktag, ulong, 0444);
MODULE_PARM_DESC(ktag, "address of a kernel allocation tag (0: skip the -ktag cases)");
static unsigned int batch = 4096;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "pages allocated before they are freed in the batch cases");

static const unsigned int orders[] = { 0, 1, 3, 9 };
/* kmalloc sizes: 8, 16, ..., 240 bytes, cycled through by the loop. */
#define KM_MIN 8
#define KM_STEP 8
#define KM_SIZES 30

static int result;
static DECLARE_COMPLETION(finished);

/* The window markers of the cache-model plugin: NOPs to the CPU. */
#define WINDOW_START()	asm volatile(".byte 0x0f, 0x1f, 0x80; .long 0x50465453" ::: "memory")
#define WINDOW_END()	asm volatile(".byte 0x0f, 0x1f, 0x80; .long 0x50465445" ::: "memory")

/*
 * An order-0 allocation charged to the kernel tag at @ktag, the way
 * alloc_hooks() charges a kernel call site's own tag.
 */
#ifdef CONFIG_MEM_ALLOC_PROFILING
#define alloc_page_ktag(gfp) \
	alloc_hooks_tag((struct alloc_tag *)ktag, alloc_pages_noprof(gfp, 0))
#else
#define alloc_page_ktag(gfp)	alloc_pages(gfp, 0)
#endif

static struct page **pages;

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

static int page_loop_ktag(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct page *page = alloc_page_ktag(GFP_KERNEL);

		if (!page)
			return -ENOMEM;
		__free_pages(page, 0);
	}
	return 0;
}

/* n pairs, in rounds of @batch allocations followed by their frees. */
static int batch_loop(unsigned int n, bool kernel_tag)
{
	unsigned int i, j, done = 0;
	int err = 0;

	while (done < n) {
		unsigned int nr = min(batch, n - done);

		for (i = 0; i < nr; i++) {
			pages[i] = kernel_tag ? alloc_page_ktag(GFP_KERNEL) :
						alloc_pages(GFP_KERNEL, 0);
			if (!pages[i]) {
				err = -ENOMEM;
				break;
			}
		}
		for (j = 0; j < i; j++)
			__free_pages(pages[j], 0);
		if (err)
			return err;
		done += nr;
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

enum bench_case { PAGE, PAGE_KTAG, BATCH, BATCH_KTAG, KMALLOC };

static int run_case(enum bench_case c, unsigned int order, unsigned int n)
{
	switch (c) {
	case PAGE:
		return page_loop(order, n);
	case PAGE_KTAG:
		return page_loop_ktag(n);
	case BATCH:
		return batch_loop(n, false);
	case BATCH_KTAG:
		return batch_loop(n, true);
	default:
		return kmalloc_loop(n);
	}
}

static int timed(const char *name, unsigned int run, enum bench_case c,
		 unsigned int order)
{
	unsigned int warm = loops / 8 + 1;
	u64 t0, t1;
	int err;

	if (c == BATCH || c == BATCH_KTAG)
		warm = max(warm, batch);
	err = run_case(c, order, warm);
	if (err)
		return err;
	t0 = ktime_get_ns();
	WINDOW_START();
	err = run_case(c, order, loops);
	WINDOW_END();
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
			err = timed(name, run, PAGE, orders[i]);
		}
		if (!err && ktag)
			err = timed("page-o0-ktag", run, PAGE_KTAG, 0);
		if (!err)
			err = timed("page-o0-batch", run, BATCH, 0);
		if (!err && ktag)
			err = timed("page-o0-batch-ktag", run, BATCH_KTAG, 0);
		if (!err)
			err = timed("kmalloc-8-240", run, KMALLOC, 0);
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
	if (!batch)
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING))
		ktag = 1;	/* no tags: the -ktag cases are the plain ones */
	pages = kvmalloc_array(batch, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	t = kthread_create(bench_thread, NULL, "pftag_bench");
	if (IS_ERR(t)) {
		kvfree(pages);
		return PTR_ERR(t);
	}
	kthread_bind(t, cpu);
	wake_up_process(t);
	wait_for_completion(&finished);
	kvfree(pages);
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
