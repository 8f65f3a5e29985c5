// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_slab: every way of allocating and freeing slab objects whose tag
 * profiling must charge and uncharge, each from one known call site, so
 * that tests can derive the exact bytes and calls /proc/allocinfo must
 * show. Every call site has its own function and a "SITE:" marker on its
 * line (the tests derive file:line from it).
 *
 * At load, n (module parameter) objects a path:
 *   kmalloc of 8, 64 and 192 bytes (sizes of kmalloc caches)  SITE:kmalloc
 *   kmem_cache_alloc() from a cache of the module's            SITE:cache
 *   kmem_cache_alloc_bulk() of n objects, from that cache      SITE:bulk
 *   kmem_cache_alloc() from a mergeable cache of 64 bytes      SITE:merged
 *   kmalloc(64), grown by krealloc() to 192 bytes              SITE:krealloc_old
 *                                                              SITE:krealloc
 *   kmalloc(64), to be freed with kfree_rcu()                  SITE:rcu
 *   kmalloc() of 3 pages and a byte (a large kmalloc: pages)   SITE:large
 *   kmalloc(64, __GFP_NO_OBJ_EXT): never charged               SITE:noext
 *   kmalloc(64, GFP_KERNEL_ACCOUNT) (kmalloc-cg-64 with memcg) SITE:account
 *   kmalloc_node() of 64 bytes, the size unknown to the compiler SITE:kmnode
 *   kzalloc_node(192) (a kmalloc cache known at compile time)  SITE:kznode
 *   kmem_cache_alloc_node() from the module's cache            SITE:cnode
 *   kmem_cache_alloc_lru() from the module's cache, no lru     SITE:clru
 *
 * Writing 1 to /sys/kernel/debug/pftag_slab/free frees everything (the
 * rcu objects with kfree_rcu(), then waits for them); unloading frees
 * what is still held.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

static unsigned int n = 16;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "objects allocated on each path at load");

#define MAX_N		1024
#define CACHE_SIZE	72
#define LARGE_SIZE	(3 * PAGE_SIZE + 1)

struct rcu_obj {
	struct rcu_head rcu;
	char data[64 - sizeof(struct rcu_head)];
};

enum { P_KMALLOC8, P_KMALLOC64, P_KMALLOC192, P_CACHE, P_BULK, P_MERGED,
	P_KREALLOC, P_RCU, P_LARGE, P_NOEXT, P_ACCOUNT, P_KMNODE, P_KZNODE,
	P_CNODE, P_CLRU, NR_PATHS };

/* protects held[] */
static DEFINE_MUTEX(slab_lock);
static void *held[NR_PATHS][MAX_N];
static struct kmem_cache *own_cache, *merged_cache;
static struct dentry *dir;

static noinline void *slab_kmalloc(size_t size)
{
	return kmalloc(size, GFP_KERNEL);	/* SITE:kmalloc */
}

static noinline void *slab_cache(void)
{
	return kmem_cache_alloc(own_cache, GFP_KERNEL);	/* SITE:cache */
}

static noinline int slab_bulk(void **p, unsigned int nr)
{
	return kmem_cache_alloc_bulk(own_cache, GFP_KERNEL, nr, p);	/* SITE:bulk */
}

static noinline void *slab_merged(void)
{
	return kmem_cache_alloc(merged_cache, GFP_KERNEL);	/* SITE:merged */
}

static noinline void *slab_krealloc(void)
{
	void *p = kmalloc(64, GFP_KERNEL);	/* SITE:krealloc_old */
	void *q;

	if (!p)
		return NULL;
	q = krealloc(p, 192, GFP_KERNEL);	/* SITE:krealloc */
	if (!q)
		kfree(p);
	return q;
}

static noinline void *slab_rcu(void)
{
	return kmalloc(sizeof(struct rcu_obj), GFP_KERNEL);	/* SITE:rcu */
}

static noinline void *slab_large(void)
{
	return kmalloc(LARGE_SIZE, GFP_KERNEL);	/* SITE:large */
}

static noinline void *slab_noext(void)
{
	return kmalloc(64, GFP_KERNEL | __GFP_NO_OBJ_EXT);	/* SITE:noext */
}

static noinline void *slab_account(void)
{
	return kmalloc(64, GFP_KERNEL_ACCOUNT);	/* SITE:account */
}

static noinline void *slab_kmalloc_node(size_t size)
{
	OPTIMIZER_HIDE_VAR(size);
	return kmalloc_node(size, GFP_KERNEL, NUMA_NO_NODE);	/* SITE:kmnode */
}

static noinline void *slab_kzalloc_node(void)
{
	return kzalloc_node(192, GFP_KERNEL, NUMA_NO_NODE);	/* SITE:kznode */
}

static noinline void *slab_cache_node(void)
{
	return kmem_cache_alloc_node(own_cache, GFP_KERNEL, NUMA_NO_NODE); /* SITE:cnode */
}

static noinline void *slab_cache_lru(void)
{
	return kmem_cache_alloc_lru(own_cache, NULL, GFP_KERNEL);	/* SITE:clru */
}

/* The cache path @p's objects come from; NULL: kmalloc's, freed with kfree(). */
static struct kmem_cache *path_cache(unsigned int p)
{
	switch (p) {
	case P_CACHE:
	case P_CNODE:
	case P_CLRU:
		return own_cache;
	case P_MERGED:
		return merged_cache;
	default:
		return NULL;
	}
}

static void free_all(void)
{
	unsigned int i, p;

	for (i = 0; i < n; i++) {
		for (p = 0; p < NR_PATHS; p++) {
			void *obj = held[p][i];

			if (!obj || p == P_BULK)	/* freed in bulk below */
				continue;
			if (p == P_RCU)
				kfree_rcu((struct rcu_obj *)obj, rcu);
			else if (path_cache(p))
				kmem_cache_free(path_cache(p), obj);
			else
				kfree(obj);
		}
	}
	if (held[P_BULK][0])
		kmem_cache_free_bulk(own_cache, n, held[P_BULK]);
	memset(held, 0, sizeof(held));
	/* The rcu objects are freed before the write returns. */
	kvfree_rcu_barrier();
}

static int alloc_all(void)
{
	unsigned int i, p;

	for (i = 0; i < n; i++) {
		held[P_KMALLOC8][i] = slab_kmalloc(8);
		held[P_KMALLOC64][i] = slab_kmalloc(64);
		held[P_KMALLOC192][i] = slab_kmalloc(192);
		held[P_CACHE][i] = slab_cache();
		held[P_MERGED][i] = slab_merged();
		held[P_KREALLOC][i] = slab_krealloc();
		held[P_RCU][i] = slab_rcu();
		held[P_LARGE][i] = slab_large();
		held[P_NOEXT][i] = slab_noext();
		held[P_ACCOUNT][i] = slab_account();
		held[P_KMNODE][i] = slab_kmalloc_node(64);
		held[P_KZNODE][i] = slab_kzalloc_node();
		held[P_CNODE][i] = slab_cache_node();
		held[P_CLRU][i] = slab_cache_lru();
		for (p = 0; p < NR_PATHS; p++)
			if (p != P_BULK && !held[p][i])
				return -ENOMEM;
	}
	if (slab_bulk(held[P_BULK], n) != n)
		return -ENOMEM;
	return 0;
}

static ssize_t free_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	mutex_lock(&slab_lock);
	free_all();
	mutex_unlock(&slab_lock);
	return len;
}

static const struct file_operations free_fops = {
	.owner = THIS_MODULE,
	.write = free_write,
};

static int __init pftag_slab_init(void)
{
	int ret;

	if (n > MAX_N) {
		pr_err("pftag_slab: n=%u is more than %u\n", n, MAX_N);
		return -EINVAL;
	}
	own_cache = kmem_cache_create("pftag_slab_obj", CACHE_SIZE, 0, SLAB_NO_MERGE, NULL);
	merged_cache = kmem_cache_create("pftag_slab_merged", 64, 0, 0, NULL);
	if (!own_cache || !merged_cache) {
		ret = -ENOMEM;
		goto out;
	}
	ret = alloc_all();
	if (ret) {
		free_all();
		goto out;
	}
	dir = debugfs_create_dir("pftag_slab", NULL);
	debugfs_create_file("free", 0200, dir, NULL, &free_fops);
	return 0;
out:
	kmem_cache_destroy(merged_cache);
	kmem_cache_destroy(own_cache);
	return ret;
}

static void __exit pftag_slab_exit(void)
{
	debugfs_remove_recursive(dir);
	free_all();
	kmem_cache_destroy(merged_cache);
	kmem_cache_destroy(own_cache);
}

module_init(pftag_slab_init);
module_exit(pftag_slab_exit);
MODULE_DESCRIPTION("Slab objects allocated and freed on every path profiling charges");
MODULE_LICENSE("GPL");
