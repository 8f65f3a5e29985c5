// SPDX-License-Identifier: GPL-2.0
/*
 * Test module of the alloc_tag kselftest (tools/testing/selftests/alloc_tag):
 * every way of allocating and freeing pages whose allocation tag must
 * follow the page, each from one known call site, driven from userspace,
 * so that the test can derive the exact bytes and calls /proc/allocinfo
 * must show. Every call site has its own function (allocinfo names it:
 * "[test_alloc_tag] func:ops_<site>") and a "SITE:" marker on its line,
 * from which a test can find the site's file:line.
 *
 * Commands written to /sys/kernel/debug/test_alloc_tag/ctl, one per write:
 *
 *   pages ORDER N     N alloc_pages(ORDER), not compound     SITE:pages
 *   bulk N            N pages from one alloc_pages_bulk_array SITE:bulk
 *                     (called again until all N are there)
 *   exact BYTES N     N alloc_pages_exact(BYTES)              SITE:exact
 *   split ORDER N     N alloc_pages(ORDER), each split_page() SITE:split
 *                     into 1 << ORDER pages held one by one
 *   shared ORDER N    N alloc_pages(ORDER), not compound, with SITE:shared
 *                     an extra reference (get_page())
 *   release shared    __free_pages() of each while the extra
 *                     reference is held: the tail chunks go back
 *                     to the allocator, the first page stays
 *   folio ORDER N     N folio_alloc(ORDER), compound          SITE:folio
 *   vmalloc PAGES N   N vmalloc(PAGES pages)                  SITE:vmalloc
 *   movable ORDER N   N alloc_pages(GFP_HIGHUSER_MOVABLE,     SITE:movable
 *                     ORDER): ZONE_MOVABLE first, such as
 *                     memory hot-added and onlined movable
 *   cache N           N pages in a cache that the module's    SITE:cache
 *                     shrinker gives back under memory pressure
 *   map ADDR N        N pages inserted into the calling       SITE:mapped
 *                     process's mapping at ADDR (an anonymous
 *                     PROT_READ mapping it made, not faulted);
 *                     the mapping holds the only reference, so
 *                     the pages are freed at munmap() or exit,
 *                     also after this module is gone
 *   free KIND         free everything held of KIND (for shared:
 *                     the extra references too), or "free all"
 *
 * Reading ctl gives "KIND COUNT" lines: what is held, "cache_shrunk",
 * the pages the shrinker gave back so far, and "movable_pfns FIRST LAST",
 * the lowest and highest page frame numbers of the movable pages held (0 0
 * when none). Unloading frees everything held (not the mapped pages:
 * they belong to the mappings).
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#define MAX_HELD 16384

enum ops_kind { K_PAGES, K_BULK, K_EXACT, K_SPLIT, K_SHARED, K_RELEASED, K_FOLIO,
		K_VMALLOC, K_MOVABLE, NR_KINDS };

static const char * const kind_names[NR_KINDS] = {
	"pages", "bulk", "exact", "split", "shared", "released", "folio", "vmalloc",
	"movable",
};

struct held {
	void *p;		/* struct page *, struct folio * or an address */
	unsigned int kind;
	unsigned int arg;	/* order or size in bytes */
};

/* protects held[], nr_held */
static DEFINE_MUTEX(ops_lock);
static struct held held[MAX_HELD];
static unsigned int nr_held;

/* protects cache_list, cache_count (the shrinker cannot take ops_lock) */
static DEFINE_SPINLOCK(cache_lock);
static LIST_HEAD(cache_list);
static unsigned long cache_count, cache_shrunk;
static struct shrinker *shrinker;
static struct dentry *dir;

/* The call sites: one function each, so allocinfo names them. */
static noinline struct page *ops_pages(unsigned int order)
{
	return alloc_pages(GFP_KERNEL | __GFP_NOWARN, order); /* SITE:pages */
}

static noinline unsigned long ops_bulk(unsigned long nr, struct page **array)
{
	return alloc_pages_bulk_array(GFP_KERNEL, nr, array); /* SITE:bulk */
}

static noinline void *ops_exact(size_t size)
{
	return alloc_pages_exact(size, GFP_KERNEL | __GFP_NOWARN); /* SITE:exact */
}

static noinline struct page *ops_split(unsigned int order)
{
	return alloc_pages(GFP_KERNEL | __GFP_NOWARN, order); /* SITE:split */
}

static noinline struct page *ops_shared(unsigned int order)
{
	return alloc_pages(GFP_KERNEL | __GFP_NOWARN, order); /* SITE:shared */
}

static noinline struct folio *ops_folio(unsigned int order)
{
	return folio_alloc(GFP_KERNEL | __GFP_NOWARN, order); /* SITE:folio */
}

static noinline void *ops_vmalloc(unsigned long size)
{
	return vmalloc(size); /* SITE:vmalloc */
}

static noinline struct page *ops_movable(unsigned int order)
{
	return alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, order); /* SITE:movable */
}

static noinline struct page *ops_cache(void)
{
	return alloc_page(GFP_KERNEL | __GFP_NOWARN); /* SITE:cache */
}

static noinline struct page *ops_mapped(void)
{
	return alloc_page(GFP_KERNEL | __GFP_NOWARN); /* SITE:mapped */
}

static int hold(void *p, unsigned int kind, unsigned int arg)
{
	if (nr_held == MAX_HELD)
		return -ENOSPC;
	held[nr_held++] = (struct held){ .p = p, .kind = kind, .arg = arg };
	return 0;
}

static void release_one(struct held *h)
{
	switch (h->kind) {
	case K_PAGES:
	case K_SHARED:
	case K_MOVABLE:
		__free_pages(h->p, h->arg);
		break;
	case K_BULK:
	case K_SPLIT:
		__free_page(h->p);
		break;
	case K_RELEASED:
		put_page(h->p);
		break;
	case K_EXACT:
		free_pages_exact(h->p, h->arg);
		break;
	case K_FOLIO:
		folio_put(h->p);
		break;
	case K_VMALLOC:
		vfree(h->p);
		break;
	}
}

/* Free what is held of @kind (NR_KINDS: everything). ops_lock held. */
static void free_kind(unsigned int kind)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&ops_lock);
	for (i = 0; i < nr_held; i++) {
		struct held *h = &held[i];

		if (kind == NR_KINDS || h->kind == kind ||
		    (kind == K_SHARED && h->kind == K_RELEASED)) {
			if (h->kind == K_SHARED)
				put_page(h->p);	/* the extra reference */
			release_one(h);
		} else {
			held[n++] = *h;
		}
	}
	nr_held = n;
}

/* __free_pages() with the extra reference held. ops_lock held. */
static void release_shared(void)
{
	unsigned int i;

	for (i = 0; i < nr_held; i++) {
		if (held[i].kind != K_SHARED)
			continue;
		__free_pages(held[i].p, held[i].arg);
		held[i].kind = K_RELEASED;
		held[i].arg = 0;
	}
}

static int do_alloc(unsigned int kind, unsigned int arg, unsigned int n)
{
	unsigned int i, j;

	if (kind != K_VMALLOC && kind != K_EXACT && kind != K_BULK && arg > MAX_PAGE_ORDER)
		return -EINVAL;
	if (kind == K_BULK) {
		struct page **array;
		unsigned long got = 0;
		int ret = 0;

		if (n > MAX_HELD - nr_held)
			return -ENOSPC;
		array = kvcalloc(n, sizeof(*array), GFP_KERNEL);
		if (!array)
			return -ENOMEM;
		/* Fills the empty slots; a short fill is completed by a second call. */
		for (i = 0; got < n && i < 8; i++)
			got = ops_bulk(n, array);
		for (j = 0; j < n; j++)
			if (array[j])
				hold(array[j], K_BULK, 0);
		if (got < n)
			ret = -ENOMEM;
		kvfree(array);
		return ret;
	}
	for (i = 0; i < n; i++) {
		void *p = NULL;

		if (nr_held == MAX_HELD)
			return -ENOSPC;
		switch (kind) {
		case K_PAGES:
			p = ops_pages(arg);
			break;
		case K_EXACT:
			p = ops_exact(arg);
			break;
		case K_SPLIT:
			if (nr_held + (1U << arg) > MAX_HELD)
				return -ENOSPC;
			p = ops_split(arg);
			if (!p)
				break;
			split_page(p, arg);
			for (j = 0; j < (1U << arg); j++)
				hold((struct page *)p + j, K_SPLIT, 0);
			continue;
		case K_SHARED:
			p = ops_shared(arg);
			if (p)
				get_page(p);
			break;
		case K_FOLIO:
			p = ops_folio(arg);
			break;
		case K_VMALLOC:
			p = ops_vmalloc((unsigned long)arg << PAGE_SHIFT);
			break;
		case K_MOVABLE:
			p = ops_movable(arg);
			break;
		}
		if (!p)
			return -ENOMEM;
		hold(p, kind, kind == K_VMALLOC ? 0 : arg);
	}
	return 0;
}

static int do_cache(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct page *page = ops_cache();

		if (!page)
			return -ENOMEM;
		spin_lock(&cache_lock);
		list_add(&page->lru, &cache_list);
		cache_count++;
		spin_unlock(&cache_lock);
	}
	return 0;
}

/* Free up to @n cached pages (all: ULONG_MAX); returns how many. */
static unsigned long cache_free(unsigned long n)
{
	unsigned long done = 0;

	while (done < n) {
		struct page *page;

		spin_lock(&cache_lock);
		page = list_first_entry_or_null(&cache_list, struct page, lru);
		if (page) {
			list_del(&page->lru);
			cache_count--;
		}
		spin_unlock(&cache_lock);
		if (!page)
			break;
		__free_page(page);
		done++;
	}
	return done;
}

static unsigned long cache_shrink_count(struct shrinker *s, struct shrink_control *sc)
{
	return READ_ONCE(cache_count) ?: SHRINK_EMPTY;
}

static unsigned long cache_shrink_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long done = cache_free(sc->nr_to_scan);

	spin_lock(&cache_lock);
	cache_shrunk += done;
	spin_unlock(&cache_lock);
	return done ?: SHRINK_STOP;
}

static int do_map(unsigned long addr, unsigned long n)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long i;
	int ret = 0;

	if (!mm || !n || !PAGE_ALIGNED(addr))
		return -EINVAL;
	mmap_write_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma || vma->vm_file || (vma->vm_flags & VM_WRITE) ||
	    n > (vma->vm_end - addr) >> PAGE_SHIFT) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct page *page = ops_mapped();

		if (!page) {
			ret = -ENOMEM;
			break;
		}
		ret = vm_insert_page(vma, addr + (i << PAGE_SHIFT), page);
		/* On success the mapping holds its own reference. */
		put_page(page);
		if (ret)
			break;
	}
out:
	mmap_write_unlock(mm);
	return ret;
}

static int kind_of(const char *name)
{
	int k;

	for (k = 0; k < NR_KINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	if (!strcmp(name, "all"))
		return NR_KINDS;
	return -EINVAL;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	char buf[64], cmd[16], what[16];
	unsigned long a, b;
	int n, kind, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%15s %lu %lu", cmd, &a, &b);
	if (n < 1)
		return -EINVAL;

	if (!strcmp(cmd, "map") && sscanf(buf, "%15s %lx %lu", cmd, &a, &b) == 3) {
		ret = do_map(a, b);
		return ret ?: len;
	}
	if (!strcmp(cmd, "cache") && n == 2) {
		ret = do_cache(a);
		return ret ?: len;
	}
	if ((!strcmp(cmd, "free") || !strcmp(cmd, "release")) &&
	    sscanf(buf, "%15s %15s", cmd, what) == 2) {
		if (!strcmp(cmd, "release")) {
			if (strcmp(what, "shared"))
				return -EINVAL;
			mutex_lock(&ops_lock);
			release_shared();
			mutex_unlock(&ops_lock);
			return len;
		}
		if (!strcmp(what, "cache")) {
			cache_free(ULONG_MAX);
			return len;
		}
		kind = kind_of(what);
		if (kind < 0)
			return kind;
		mutex_lock(&ops_lock);
		free_kind(kind);
		mutex_unlock(&ops_lock);
		if (kind == NR_KINDS)
			cache_free(ULONG_MAX);
		return len;
	}
	kind = kind_of(cmd);
	if (kind < 0 || kind == NR_KINDS || kind == K_RELEASED)
		return -EINVAL;
	if (kind == K_BULK) {
		if (n != 2)
			return -EINVAL;
		b = a;
		a = 0;
	} else if (n != 3) {
		return -EINVAL;
	}
	if (a > UINT_MAX || b > MAX_HELD)
		return -EINVAL;
	mutex_lock(&ops_lock);
	ret = do_alloc(kind, a, b);
	mutex_unlock(&ops_lock);
	return ret ?: len;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	unsigned int count[NR_KINDS] = { 0 }, i;
	unsigned long first = ULONG_MAX, last = 0;
	char buf[320];
	int n = 0;

	mutex_lock(&ops_lock);
	for (i = 0; i < nr_held; i++) {
		count[held[i].kind]++;
		if (held[i].kind == K_MOVABLE) {
			unsigned long pfn = page_to_pfn((struct page *)held[i].p);

			first = min(first, pfn);
			last = max(last, pfn + (1UL << held[i].arg) - 1);
		}
	}
	mutex_unlock(&ops_lock);
	for (i = 0; i < NR_KINDS; i++)
		n += scnprintf(buf + n, sizeof(buf) - n, "%s %u\n", kind_names[i], count[i]);
	spin_lock(&cache_lock);
	n += scnprintf(buf + n, sizeof(buf) - n, "cache %lu\ncache_shrunk %lu\n",
		       cache_count, cache_shrunk);
	spin_unlock(&cache_lock);
	n += scnprintf(buf + n, sizeof(buf) - n, "movable_pfns %lu %lu\n",
		       count[K_MOVABLE] ? first : 0, last);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.read = ctl_read,
	.write = ctl_write,
};

static int __init test_alloc_tag_init(void)
{
	shrinker = shrinker_alloc(0, "test_alloc_tag");
	if (!shrinker)
		return -ENOMEM;
	shrinker->count_objects = cache_shrink_count;
	shrinker->scan_objects = cache_shrink_scan;
	shrinker_register(shrinker);
	dir = debugfs_create_dir("test_alloc_tag", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &ctl_fops);
	return 0;
}

static void __exit test_alloc_tag_exit(void)
{
	debugfs_remove(dir);
	shrinker_free(shrinker);
	mutex_lock(&ops_lock);
	free_kind(NR_KINDS);
	mutex_unlock(&ops_lock);
	cache_free(ULONG_MAX);
}

module_init(test_alloc_tag_init);
module_exit(test_alloc_tag_exit);
MODULE_DESCRIPTION("Page allocation paths from known call sites, for the alloc_tag kselftest");
MODULE_LICENSE("GPL");
