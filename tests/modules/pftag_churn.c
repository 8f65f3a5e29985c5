// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_churn: slab allocations and frees from several threads at once,
 * for as long as it is loaded, so that profiling can be switched on (or
 * off) under them. Each thread keeps a ring of objects and replaces the
 * oldest at every step, from three call sites:
 *
 *   kmalloc(64), its size known at compile time          SITE:kmalloc
 *   kmem_cache_alloc() from a cache of the module's      SITE:cache
 *   kstrdup(): kmalloc's _noprof function inside the
 *   call site of kstrdup() (mm/util.c), current's tag     SITE:kstrdup
 *
 * so that the allocator runs each of its tag modes: the call site's tag,
 * its untagged twin while profiling was never on, and current's tag.
 *
 *   insmod pftag_churn.ko threads=N   starts N threads (default 4)
 *   echo 1 > /sys/kernel/debug/pftag_churn/stop
 *                                     stops them, frees every object and
 *                                     prints the steps taken to the log
 *   rmmod pftag_churn                 the same, if not stopped yet
 */
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#define RING 64
#define MAX_THREADS 16

static unsigned int threads = 4;
module_param(threads, uint, 0444);
MODULE_PARM_DESC(threads, "threads allocating and freeing (1-16)");

struct churn {
	struct task_struct *task;
	void *kmalloced[RING];
	void *cached[RING];
	char *dup[RING];
	unsigned long steps;
};

static struct churn churn[MAX_THREADS];
static struct kmem_cache *cache;
static struct dentry *dir;
static DEFINE_MUTEX(stop_lock);
static bool stopped;

static noinline void *churn_kmalloc(void)
{
	return kmalloc(64, GFP_KERNEL);			/* SITE:kmalloc */
}

static noinline void *churn_cache(void)
{
	return kmem_cache_alloc(cache, GFP_KERNEL);	/* SITE:cache */
}

static noinline char *churn_kstrdup(void)
{
	return kstrdup("pftag_churn: a string of some length", GFP_KERNEL); /* SITE:kstrdup */
}

static int churn_fn(void *data)
{
	struct churn *c = data;
	unsigned int i = 0;

	while (!kthread_should_stop()) {
		kfree(c->kmalloced[i]);
		c->kmalloced[i] = churn_kmalloc();
		if (c->cached[i])
			kmem_cache_free(cache, c->cached[i]);
		c->cached[i] = churn_cache();
		kfree(c->dup[i]);
		c->dup[i] = churn_kstrdup();
		i = (i + 1) % RING;
		c->steps++;
		cond_resched();
	}
	return 0;
}

static void churn_stop(void)
{
	unsigned long steps = 0;
	unsigned int t, i;

	mutex_lock(&stop_lock);
	if (stopped)
		goto out;
	stopped = true;
	for (t = 0; t < threads; t++) {
		struct churn *c = &churn[t];

		if (c->task)
			kthread_stop(c->task);
		for (i = 0; i < RING; i++) {
			kfree(c->kmalloced[i]);
			if (c->cached[i])
				kmem_cache_free(cache, c->cached[i]);
			kfree(c->dup[i]);
		}
		steps += c->steps;
	}
	pr_info("pftag_churn: %u threads took %lu steps\n", threads, steps);
out:
	mutex_unlock(&stop_lock);
}

static ssize_t stop_write(struct file *file, const char __user *buf,
			  size_t count, loff_t *ppos)
{
	churn_stop();
	return count;
}

static const struct file_operations stop_fops = {
	.write = stop_write,
};

static int __init pftag_churn_init(void)
{
	unsigned int t;

	if (!threads || threads > MAX_THREADS) {
		pr_err("pftag_churn: threads=%u: give 1 to %d\n", threads, MAX_THREADS);
		return -EINVAL;
	}
	cache = kmem_cache_create("pftag_churn", 96, 0, SLAB_NO_MERGE, NULL);
	if (!cache)
		return -ENOMEM;
	for (t = 0; t < threads; t++) {
		struct task_struct *task;

		task = kthread_run(churn_fn, &churn[t], "pftag_churn/%u", t);
		if (IS_ERR(task)) {
			threads = t;
			churn_stop();
			kmem_cache_destroy(cache);
			return PTR_ERR(task);
		}
		churn[t].task = task;
	}
	dir = debugfs_create_dir("pftag_churn", NULL);
	debugfs_create_file("stop", 0200, dir, NULL, &stop_fops);
	return 0;
}

static void __exit pftag_churn_exit(void)
{
	debugfs_remove_recursive(dir);
	churn_stop();
	kmem_cache_destroy(cache);
}

module_init(pftag_churn_init);
module_exit(pftag_churn_exit);
MODULE_DESCRIPTION("Slab allocations from several threads, for switching profiling under them");
MODULE_LICENSE("GPL");
