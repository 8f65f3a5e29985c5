// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_bench: the cost of one allocation and free, measured in the
 * kernel on one pinned CPU, after the method of the original allocation
 * profiling series: loops of alloc_pages()/__free_pages() at a few orders
 * and of kmalloc()/kfree() of 8 to 240 bytes.
 *
 *   insmod pftag_bench.ko loops=20000 runs=3 cpu=1 ktag=0x... && rmmod pftag_bench
 *
 * runs the loops at load, each case on a kthread bound to @cpu, and prints
 * one line per case and run; the load returns when they are done:
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
 * memcg=1 measures the kmalloc case alone, as kmalloc-8-240-memcg, once a
 * memory cgroup has brought memcg's kmem accounting online, as on every
 * machine whose init creates cgroups (systemd): memcg's slab hooks then
 * run at every kmalloc() and kfree(), where they were patched NOPs. The
 * module refuses to load with memcg=1 while that accounting is offline.
 *
 * Before every case the module starts CPU @cpu afresh (settle=1, the
 * default): it takes the CPU offline, which frees the CPU's per-CPU page
 * lists to the buddy allocator, and back online, so that the loop starts
 * from empty lists whatever boot and the cases before it left there
 * (when those pages and a batch case's 4096 exceed pcp->high, the frees
 * overflow into the buddy allocator: 1.6 times the instructions a pair).
 * Before an order-1 or order-3 case it also leaves the buddy allocator
 * free blocks of that order: the watermark check of every allocation
 * above order 0 walks the free areas from the allocation's order up to
 * the first one that holds a block, 4 instructions a free area, so that
 * a loop read 4 or 8 instructions more a pair in a boot whose free areas
 * of orders 1 and 2 happened to be empty. The blocks are the upper
 * halves of order N+1 blocks, freed page by page onto the CPU's lists
 * before it goes offline; the lower halves stay allocated until the case
 * is done, so that the upper ones cannot merge.
 *
 * Every timed loop is bracketed by two marker instructions, nopl with the
 * displacements "PFTS" and "PFTE": NOPs to a CPU, the start and end of a
 * window to the cache-model plugin of `make bench`, which counts loads,
 * stores and cache misses inside it.
 */
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

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

static bool settle = true;
module_param(settle, bool, 0444);
MODULE_PARM_DESC(settle, "start every case from empty per-CPU lists and, at orders 1 to 3, free buddy blocks of its order (CPU hotplug)");

static bool memcg;
module_param(memcg, bool, 0444);
MODULE_PARM_DESC(memcg, "measure kmalloc alone, as kmalloc-8-240-memcg: memcg's kmem accounting must be online");

static const unsigned int orders[] = { 0, 1, 3, 9 };
/* kmalloc sizes: 8, 16, ..., 240 bytes, cycled through by the loop. */
#define KM_MIN 8
#define KM_STEP 8
#define KM_SIZES 30

/*
 * The window markers of the cache-model plugin: NOPs to an x86 CPU. The
 * plugin reads x86 guests only; elsewhere (arm64, where these bytes are
 * no instruction) the loops are bracketed by compiler barriers alone.
 */
#ifdef CONFIG_X86
#define WINDOW_START()	asm volatile(".byte 0x0f, 0x1f, 0x80; .long 0x50465453" ::: "memory")
#define WINDOW_END()	asm volatile(".byte 0x0f, 0x1f, 0x80; .long 0x50465445" ::: "memory")
#else
#define WINDOW_START()	barrier()
#define WINDOW_END()	barrier()
#endif

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

struct bench_run {
	const char *name;
	unsigned int run;
	enum bench_case c;
	unsigned int order;
	int err;
	struct completion done;
};

static int timed(struct bench_run *r)
{
	unsigned int warm = loops / 8 + 1;
	u64 t0, t1;
	int err;

	if (r->c == BATCH || r->c == BATCH_KTAG)
		warm = max(warm, batch);
	err = run_case(r->c, r->order, warm);
	if (err)
		return err;
	t0 = ktime_get_ns();
	WINDOW_START();
	err = run_case(r->c, r->order, loops);
	WINDOW_END();
	t1 = ktime_get_ns();
	if (err)
		return err;
	pr_info("pftag_bench: run=%u case=%s loops=%u ns=%llu\n", r->run, r->name, loops,
		t1 - t0);
	return 0;
}

static int case_thread(void *arg)
{
	struct bench_run *r = arg;

	r->err = timed(r);
	complete(&r->done);
	return 0;
}

/* Free buddy blocks of one order for the settled start (see above). */
#define SETTLE_BLOCKS 64
static struct page *held[SETTLE_BLOCKS];
static unsigned int held_order, nr_held;

/* On @cpu: free the upper halves onto its per-CPU lists, keep the lower. */
static long settle_blocks(void *arg)
{
	unsigned int order = (unsigned long)arg, half = 1U << order, j;

	held_order = order;

	for (nr_held = 0; nr_held < SETTLE_BLOCKS; nr_held++) {
		struct page *page = alloc_pages(GFP_KERNEL, order + 1);

		if (!page)
			return -ENOMEM;
		split_page(page, order + 1);
		for (j = half; j < 2 * half; j++)
			__free_page(page + j);
		held[nr_held] = page;
	}
	return 0;
}

static void release_blocks(void)
{
	unsigned int i, j;

	for (i = 0; i < nr_held; i++)
		for (j = 0; j < 1U << held_order; j++)
			__free_page(held[i] + j);
	nr_held = 0;
}

/*
 * Offline and online again: the CPU's per-CPU lists go to the buddy
 * allocator, where the freed halves become free blocks of their order.
 */
static int settle_cpu(unsigned int order)
{
	int err = 0;

	if (order >= 1 && order <= PAGE_ALLOC_COSTLY_ORDER)
		err = work_on_cpu(cpu, settle_blocks, (void *)(unsigned long)order);
	if (!err)
		err = remove_cpu(cpu);
	if (!err)
		err = add_cpu(cpu);
	if (err)
		pr_err("pftag_bench: cannot start CPU %u afresh (%d): load with settle=0 to measure without\n",
		       cpu, err);
	return err;
}

/* One case on a thread of its own, bound to @cpu. */
static int measure(const char *name, unsigned int run, enum bench_case c,
		   unsigned int order)
{
	struct bench_run r = { .name = name, .run = run, .c = c, .order = order };
	struct task_struct *t;
	int err = 0;

	init_completion(&r.done);
	if (settle)
		err = settle_cpu(order);
	if (!err) {
		t = kthread_run_on_cpu(case_thread, &r, cpu, "pftag_bench/%u");
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
		} else {
			wait_for_completion(&r.done);
			err = r.err;
		}
	}
	release_blocks();
	return err;
}

static int bench(void)
{
	char name[16];
	unsigned int run, i;
	int err = 0;

	for (run = 1; run <= runs && !err; run++) {
		if (memcg) {
			err = measure("kmalloc-8-240-memcg", run, KMALLOC, 0);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(orders) && !err; i++) {
			snprintf(name, sizeof(name), "page-o%u", orders[i]);
			err = measure(name, run, PAGE, orders[i]);
		}
		if (!err && ktag)
			err = measure("page-o0-ktag", run, PAGE_KTAG, 0);
		if (!err)
			err = measure("page-o0-batch", run, BATCH, 0);
		if (!err && ktag)
			err = measure("page-o0-batch-ktag", run, BATCH_KTAG, 0);
		if (!err)
			err = measure("kmalloc-8-240", run, KMALLOC, 0);
	}
	if (!err)
		pr_info("pftag_bench: done runs=%u\n", runs);
	return err;
}

static int __init pftag_bench_init(void)
{
	int err;

	if (!loops || !runs)
		return -EINVAL;
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	if (!batch)
		return -EINVAL;
	if (memcg && !memcg_kmem_online()) {
		pr_err("pftag_bench: memcg=1, but memcg's kmem accounting is offline: create a memory cgroup first (cgroup2: +memory in the root's cgroup.subtree_control, then mkdir)\n");
		return -EINVAL;
	}
	if (!IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING))
		ktag = 1;	/* no tags: the -ktag cases are the plain ones */
	pages = kvmalloc_array(batch, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	err = bench();
	kvfree(pages);
	if (err) {
		pr_err("pftag_bench: failed: %d\n", err);
		return err;
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
