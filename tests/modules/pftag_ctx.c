// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_ctx: allocating helpers with several callers, for call-chain
 * capture (debugfs alloc_tag/capture). Each helper has one call site, so
 * one tag; three callers call it in a known ratio, so capture on the
 * helper's tag must show three chains, helper;caller;..., with exactly
 * those calls:
 *
 *   ctx_page_helper()   alloc_pages(GFP_KERNEL, 0)       SITE:page
 *   ctx_slab_helper()   kmalloc(CTX_SLAB_SIZE)            SITE:slab
 *   ctx_other_helper()  kmalloc(CTX_SLAB_SIZE), not chosen by the tests,
 *                       called as often as the others    SITE:other
 *
 *   ctx_caller_a() 90 calls, ctx_caller_b() 6, ctx_caller_c() 4 a round
 *   (module parameters calls_by_a, _b and _c).
 *
 * Write to /sys/kernel/debug/pftag_ctx/run: "pages", "slab" or "other"
 * for a round of calls of that helper, whose allocations are kept;
 * "free" frees every allocation kept. Unloading frees them too.
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#define CTX_SLAB_SIZE	200
#define CTX_ROUNDS_MAX	50
#define CTX_HELD_MAX	(CTX_ROUNDS_MAX * 100)

enum ctx_kind { CTX_PAGES, CTX_SLAB, CTX_OTHER };

/*
 * Calls a round by each caller. Parameters rather than constants: the
 * compiler would unroll a loop of a few constant iterations into as many
 * calls, each a call site, and so a chain, of its own.
 */
static unsigned int calls_by_a = 90, calls_by_b = 6, calls_by_c = 4;
module_param(calls_by_a, uint, 0644);
module_param(calls_by_b, uint, 0644);
module_param(calls_by_c, uint, 0644);
MODULE_PARM_DESC(calls_by_a, "calls of a helper by ctx_caller_a() a round");
MODULE_PARM_DESC(calls_by_b, "calls of a helper by ctx_caller_b() a round");
MODULE_PARM_DESC(calls_by_c, "calls of a helper by ctx_caller_c() a round");

/* protects held[], nr_held */
static DEFINE_MUTEX(ctx_lock);
static struct {
	enum ctx_kind kind;
	void *p;
} held[CTX_HELD_MAX];
static unsigned int nr_held;
static struct dentry *dir;

static noinline struct page *ctx_page_helper(void)
{
	return alloc_pages(GFP_KERNEL, 0);	/* SITE:page */
}

static noinline void *ctx_slab_helper(void)
{
	return kmalloc(CTX_SLAB_SIZE, GFP_KERNEL);	/* SITE:slab */
}

static noinline void *ctx_other_helper(void)
{
	return kmalloc(CTX_SLAB_SIZE, GFP_KERNEL);	/* SITE:other */
}

/* Keep @p, allocated by the helper of @kind; free it when full. */
static noinline void ctx_keep(enum ctx_kind kind, void *p)
{
	if (!p)
		return;
	if (nr_held == CTX_HELD_MAX) {
		if (kind == CTX_PAGES)
			__free_pages(p, 0);
		else
			kfree(p);
		return;
	}
	held[nr_held].kind = kind;
	held[nr_held].p = p;
	nr_held++;
}

static noinline void ctx_call(enum ctx_kind kind)
{
	switch (kind) {
	case CTX_PAGES:
		ctx_keep(kind, ctx_page_helper());
		break;
	case CTX_SLAB:
		ctx_keep(kind, ctx_slab_helper());
		break;
	case CTX_OTHER:
		ctx_keep(kind, ctx_other_helper());
		break;
	}
	barrier();
}

/*
 * The three callers. Each calls the helper through ctx_call(), so the
 * chains differ in the caller's frame alone. The count after the call
 * keeps the compiler from making it a tail call, which would take the
 * caller's frame out of the stack, and, a counter each, from folding the
 * three identical functions into one.
 */
static unsigned int calls_a, calls_b, calls_c;

static noinline void ctx_caller_a(enum ctx_kind kind)
{
	ctx_call(kind);
	WRITE_ONCE(calls_a, calls_a + 1);
}

static noinline void ctx_caller_b(enum ctx_kind kind)
{
	ctx_call(kind);
	WRITE_ONCE(calls_b, calls_b + 1);
}

static noinline void ctx_caller_c(enum ctx_kind kind)
{
	ctx_call(kind);
	WRITE_ONCE(calls_c, calls_c + 1);
}

static void ctx_round(enum ctx_kind kind)
{
	unsigned int i;

	for (i = 0; i < READ_ONCE(calls_by_a); i++)
		ctx_caller_a(kind);
	for (i = 0; i < READ_ONCE(calls_by_b); i++)
		ctx_caller_b(kind);
	for (i = 0; i < READ_ONCE(calls_by_c); i++)
		ctx_caller_c(kind);
}

static void ctx_free_all(void)
{
	unsigned int i;

	for (i = 0; i < nr_held; i++) {
		if (held[i].kind == CTX_PAGES)
			__free_pages(held[i].p, 0);
		else
			kfree(held[i].p);
	}
	nr_held = 0;
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	char *buf, *cmd;
	int err = 0;

	if (count >= PAGE_SIZE)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	cmd = strim(buf);

	mutex_lock(&ctx_lock);
	if (!strcmp(cmd, "free"))
		ctx_free_all();
	else if ((u64)nr_held + calls_by_a + calls_by_b + calls_by_c > CTX_HELD_MAX)
		err = -ENOSPC;
	else if (!strcmp(cmd, "pages"))
		ctx_round(CTX_PAGES);
	else if (!strcmp(cmd, "slab"))
		ctx_round(CTX_SLAB);
	else if (!strcmp(cmd, "other"))
		ctx_round(CTX_OTHER);
	else
		err = -EINVAL;
	mutex_unlock(&ctx_lock);
	kfree(buf);
	return err ? err : count;
}

static const struct file_operations run_fops = {
	.owner	= THIS_MODULE,
	.write	= run_write,
};

static int __init pftag_ctx_init(void)
{
	dir = debugfs_create_dir("pftag_ctx", NULL);
	debugfs_create_file("run", 0200, dir, NULL, &run_fops);
	return 0;
}

static void __exit pftag_ctx_exit(void)
{
	debugfs_remove_recursive(dir);
	mutex_lock(&ctx_lock);
	ctx_free_all();
	mutex_unlock(&ctx_lock);
}

module_init(pftag_ctx_init);
module_exit(pftag_ctx_exit);
MODULE_DESCRIPTION("Allocating helpers with three callers each, for call-chain capture");
MODULE_LICENSE("GPL");
