// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_race: the tag index write in page->flags against concurrent
 * updates of the other bits of the same word.
 *
 * One page, allocated here. A writer kthread on CPU 0 rewrites the page's
 * index over and over, alternating two values that differ in every index
 * bit, and reads each back. A flipper kthread on CPU 1 sets and clears,
 * through the kernel's own atomic helpers, PG_referenced, PG_locked
 * (trylock_page() and unlock_page()), the page flag right below the index
 * field and the bit right above it (when that bit belongs to a field
 * updated at run time, not to the zone, node or section), and checks
 * after every step that these bits read as it left them.
 *
 *   insmod pftag_race.ko seconds=S write=helper   pgalloc_tag_idx_write()
 *   insmod pftag_race.ko seconds=S write=plain    a plain read-modify-write
 *                                                 of the field (the control:
 *                                                 it must lose updates)
 *
 * The guest must run its vCPUs in parallel (QEMU's multi-threaded TCG):
 * with one host thread for all vCPUs, a vCPU only yields between
 * translation blocks and a plain read-modify-write is never interrupted.
 *
 * /sys/kernel/debug/pftag_race/result, after the run:
 *   writes: N, flips: N  operations done by each thread (a flip: one round
 *                        of setting and clearing every watched bit)
 *   overlap: N           flip rounds done while the writer was running
 *   lost: N              flipper steps that found a watched bit not as left
 *   torn: N              index reads that differed from the value written
 *   end_ok: 0|1          the watched bits clear and the index as last
 *                        written, once both threads stopped
 *   lower_bit: N, upper_bit: N|none, index_shift: N, index_width: N
 *
 * The page gets its own index back before it is freed, at unload.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/pgalloc_tag.h>
#include <linux/seq_file.h>
/* mm-private: the page index helpers this module races (Kbuild adds mm/). */
#if __has_include("alloc_tag_storage.h")
#include "alloc_tag_storage.h"
#endif

#if defined(CONFIG_MEM_ALLOC_PROFILING) && defined(ALLOC_TAG_IDX_PGSHIFT)

static unsigned int seconds = 2;
module_param(seconds, uint, 0444);
static char *write = "helper";
module_param(write, charp, 0444);

static struct page *page;
static unsigned long own_idx;
static bool plain;
static int upper_bit = -1;
static unsigned long watched;

static atomic_t writer_running;
static bool stop;
static unsigned long writes, flips, overlap, lost, torn, last_idx;
static bool end_ok;
static struct dentry *dir;

static void plain_idx_write(struct page *p, unsigned long idx)
{
	unsigned long f = READ_ONCE(p->flags);

	f &= ~ALLOC_TAG_IDX_FLAGS;
	f |= (idx & ALLOC_TAG_IDX_MASK) << ALLOC_TAG_IDX_PGSHIFT;
	WRITE_ONCE(p->flags, f);
}

static int writer_fn(void *unused)
{
	unsigned long a = 0x5555555555555555UL & ALLOC_TAG_IDX_MASK;
	unsigned long b = ~a & ALLOC_TAG_IDX_MASK, idx = a;

	atomic_set(&writer_running, 1);
	while (!READ_ONCE(stop)) {
		idx = (writes & 1) ? b : a;
		if (plain)
			plain_idx_write(page, idx);
		else
			pgalloc_tag_idx_write(page, idx);
		if (pgalloc_tag_idx_read(page) != idx)
			torn++;
		if (!(++writes & 4095))
			cond_resched();
	}
	last_idx = idx;
	atomic_set(&writer_running, 0);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* One step of the flipper: @set or clear @bit, then check every watched bit. */
static void flip(int bit, bool set, unsigned long *expect)
{
	unsigned long now, diff;
	int b;

	if (bit == PG_locked) {
		/* trylock fails only if a stale store brought PG_locked back */
		if (set)
			trylock_page(page);
		else if (PageLocked(page))	/* else lost: counted below */
			unlock_page(page);
	} else if (set) {
		set_bit(bit, &page->flags);
	} else {
		clear_bit(bit, &page->flags);
	}
	if (set)
		*expect |= BIT(bit);
	else
		*expect &= ~BIT(bit);
	now = READ_ONCE(page->flags) & watched;
	if (now == *expect)
		return;
	lost++;
	/* Put back what was lost, atomically, and go on. */
	diff = now ^ *expect;
	for_each_set_bit(b, &diff, BITS_PER_LONG) {
		if (*expect & BIT(b))
			set_bit(b, &page->flags);
		else
			clear_bit(b, &page->flags);
	}
}

static int flipper_fn(void *unused)
{
	int bits[4] = { PG_referenced, PG_locked, ALLOC_TAG_IDX_PGSHIFT - 1, upper_bit };
	int nr = upper_bit >= 0 ? 4 : 3, i;
	unsigned long expect = 0;

	while (!atomic_read(&writer_running) && !READ_ONCE(stop))
		cpu_relax();
	while (!READ_ONCE(stop)) {
		for (i = 0; i < nr; i++)
			flip(bits[i], true, &expect);
		for (i = nr - 1; i >= 0; i--)
			flip(bits[i], false, &expect);
		flips++;
		if (atomic_read(&writer_running))
			overlap++;
		if (!(flips & 1023))
			cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int result_show(struct seq_file *m, void *v)
{
	seq_printf(m, "write: %s\nwrites: %lu\nflips: %lu\noverlap: %lu\nlost: %lu\ntorn: %lu\nend_ok: %d\n",
		   plain ? "plain" : "helper", writes, flips, overlap, lost, torn, end_ok);
	seq_printf(m, "lower_bit: %d\n", (int)ALLOC_TAG_IDX_PGSHIFT - 1);
	if (upper_bit >= 0)
		seq_printf(m, "upper_bit: %d\n", upper_bit);
	else
		seq_puts(m, "upper_bit: none\n");
	seq_printf(m, "index_shift: %d\nindex_width: %d\n", (int)ALLOC_TAG_IDX_PGSHIFT,
		   (int)ALLOC_TAG_IDX_WIDTH);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static int __init pftag_race_init(void)
{
	struct task_struct *w, *f;
	int up = ALLOC_TAG_IDX_PGSHIFT + ALLOC_TAG_IDX_WIDTH;

	if (!ALLOC_TAG_IDX_WIDTH) {
		pr_err("pftag_race: no index field in page->flags in this build\n");
		return -ENODEV;
	}
	if (!strcmp(write, "plain")) {
		plain = true;
	} else if (strcmp(write, "helper")) {
		pr_err("pftag_race: write=%s: use write=helper or write=plain\n", write);
		return -EINVAL;
	}
	if (!cpu_online(0) || !cpu_online(1)) {
		pr_err("pftag_race: needs CPUs 0 and 1 online\n");
		return -EINVAL;
	}
	/* Only a field that others update at run time, never zone, node, section. */
	if (up < BITS_PER_LONG && (!ZONES_WIDTH || up < ZONES_PGSHIFT))
		upper_bit = up;
	watched = BIT(PG_referenced) | BIT(PG_locked) | BIT(ALLOC_TAG_IDX_PGSHIFT - 1);
	if (upper_bit >= 0)
		watched |= BIT(upper_bit);

	page = alloc_page(GFP_KERNEL);	/* SITE:race */
	if (!page)
		return -ENOMEM;
	if (page->flags & watched) {
		pr_err("pftag_race: a new page has watched flags set: %#lx\n",
		       page->flags & watched);
		__free_page(page);
		return -EBUSY;
	}
	own_idx = pgalloc_tag_idx_read(page);

	w = kthread_create(writer_fn, NULL, "pftag_race_w");
	f = kthread_create(flipper_fn, NULL, "pftag_race_f");
	if (IS_ERR(w) || IS_ERR(f)) {
		if (!IS_ERR(w))
			kthread_stop(w);
		if (!IS_ERR(f))
			kthread_stop(f);
		__free_page(page);
		return -ENOMEM;
	}
	kthread_bind(w, 0);
	kthread_bind(f, 1);
	wake_up_process(w);
	wake_up_process(f);
	msleep(seconds * 1000);
	WRITE_ONCE(stop, true);
	kthread_stop(w);
	kthread_stop(f);

	end_ok = !(page->flags & watched) && pgalloc_tag_idx_read(page) == last_idx;
	/* Leave the page as it came: no watched bit, its own index. */
	page->flags &= ~watched;
	pgalloc_tag_idx_write(page, own_idx);

	dir = debugfs_create_dir("pftag_race", NULL);
	debugfs_create_file("result", 0444, dir, NULL, &result_fops);
	return 0;
}

static void __exit pftag_race_exit(void)
{
	debugfs_remove_recursive(dir);
	__free_page(page);
}

#else /* a kernel without the series' index field: nothing to race */

static int __init pftag_race_init(void)
{
	pr_err("pftag_race: this kernel has no tag index in page->flags\n");
	return -ENODEV;
}

static void __exit pftag_race_exit(void)
{
}

#endif

module_init(pftag_race_init);
module_exit(pftag_race_exit);
MODULE_DESCRIPTION("Races the page-flags tag index write against flag updates");
MODULE_LICENSE("GPL");
