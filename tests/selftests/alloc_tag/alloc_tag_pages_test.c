// SPDX-License-Identifier: GPL-2.0
/*
 * Exact page accounting of memory allocation profiling (/proc/allocinfo),
 * whatever keeps the page tags (page->flags or page_ext): the file's
 * format, and every page allocator path of the test module test_alloc_tag
 * (CONFIG_TEST_ALLOC_TAG, lib/test_alloc_tag.c), each from its own call
 * site, driven through /sys/kernel/debug/test_alloc_tag/ctl. Every
 * expected byte and call count is derived from the sizes and counts the
 * test asks for, at the call sites the module owns.
 *
 * The helpers, and where the test modules are loaded from, are in
 * alloc_tag_lib.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "alloc_tag_lib.h"

TEST(allocinfo_format)
{
	struct allocinfo ai;
	struct site s;
	int i, neg = 0, odd = 0;

	const char *why = no_profiling();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, read_allocinfo(&ai));
	EXPECT_STREQ("allocinfo - version: 1.0", ai.header[0]);
	EXPECT_STREQ("#     <size>  <calls> <tag info>", ai.header[1]);
	EXPECT_EQ(0, ai.bad) TH_LOG("first bad line: '%s'", ai.bad_line);
	EXPECT_LT(100, ai.nr);
	for (i = 0; i < ai.nr; i++) {
		struct tag *t = &ai.tags[i];

		if (t->bytes < 0 || (long long)t->calls < 0) {
			neg++;
			TH_LOG("negative: %lld %llu %s:%d func:%s", t->bytes, t->calls,
			       t->file, t->line, t->func);
		}
		EXPECT_LT(0, t->line);
		/* A page allocator site charges whole pages. */
		if (!strcmp(t->func, "alloc_slab_page") && t->bytes % page_size) {
			odd++;
			TH_LOG("not whole pages: %lld %s:%d", t->bytes, t->file, t->line);
		}
	}
	EXPECT_EQ(0, neg);
	EXPECT_EQ(0, odd);
	s = site_of(&ai, "", "alloc_slab_page");
	EXPECT_LT(0, s.bytes) TH_LOG("mm/slub.c func:alloc_slab_page holds nothing");
	free_allocinfo(&ai);
}

FIXTURE(ops) {
	struct site start;
};

/* One page allocation path, run at every order. */
FIXTURE_VARIANT(ops) {
	const char *cmd;	/* test_alloc_tag command */
	const char *func;	/* its call site */
	int compound;
};

FIXTURE_VARIANT_ADD(ops, pages) {
	.cmd = "pages", .func = "ops_pages", .compound = 0,
};

FIXTURE_VARIANT_ADD(ops, folio) {
	.cmd = "folio", .func = "ops_folio", .compound = 1,
};

FIXTURE_SETUP(ops)
{
	const char *why = no_ops();

	if (why)
		SKIP(return, "%s", why);
	self->start = op(variant->func);
}

FIXTURE_TEARDOWN(ops)
{
	if (module_loaded(OPS))
		ops("free all");
}

/* Orders 0..MAX_PAGE_ORDER: the bytes and calls of each, then back to the start. */
TEST_F_TIMEOUT(ops, every_order, 120)
{
	int orders = nr_page_orders(), order;

	ASSERT_LT(0, orders) TH_LOG("cannot count the orders in /proc/buddyinfo");
	for (order = 0; order < orders; order++) {
		int n = order < 6 ? 3 : 1;
		struct site s;
		char what[64];

		snprintf(what, sizeof(what), "%s order %d x%d", variant->cmd, order, n);
		ASSERT_EQ(0, ops("%s %d %d", variant->cmd, order, n)) TH_LOG("%s", what);
		s = op(variant->func);
		EXPECT_SITE(s, self->start.bytes + n * (page_size << order),
			    self->start.calls + n, what);
		EXPECT_EQ(0, s.bytes % page_size);
		ASSERT_EQ(0, ops("free %s", variant->cmd));
		s = op(variant->func);
		EXPECT_SITE(s, self->start.bytes, self->start.calls, what);
	}
	/* One past MAX_PAGE_ORDER is refused by the module, nothing charged. */
	EXPECT_EQ(-EINVAL, ops("%s %d 1", variant->cmd, orders));
	EXPECT_NO_NEGATIVE();
}

/* -------- the other paths, each from its own site -------- */

TEST_F(paths, bulk)
{
	const int n = 100;
	struct site s0 = op("ops_bulk"), s;

	ASSERT_EQ(0, ops("bulk %d", n));
	ASSERT_EQ(n, ops_held("bulk"));
	s = op("ops_bulk");
	/* Every page of the bulk is one call. */
	EXPECT_SITE(s, s0.bytes + n * page_size, s0.calls + n, "bulk");
	ASSERT_EQ(0, ops("free bulk"));
	EXPECT_SITE(op("ops_bulk"), s0.bytes, s0.calls, "bulk freed");
}

TEST_F(paths, exact)
{
	/* 5 pages and a bit: order 3 allocated, 6 pages kept, each a call. */
	const long size = 5 * page_size + 100, n = 4;
	const long kept = (size + page_size - 1) / page_size;
	struct site s0 = op("ops_exact"), s;

	ASSERT_EQ(0, ops("exact %ld %ld", size, n));
	s = op("ops_exact");
	EXPECT_SITE(s, s0.bytes + n * kept * page_size, s0.calls + n * kept, "exact");
	ASSERT_EQ(0, ops("free exact"));
	EXPECT_SITE(op("ops_exact"), s0.bytes, s0.calls, "exact freed");
}

TEST_F(paths, split_page)
{
	const int order = 3, n = 4;
	struct site s0 = op("ops_split"), s;

	ASSERT_EQ(0, ops("split %d %d", order, n));
	ASSERT_EQ(n << order, ops_held("split"));
	s = op("ops_split");
	/* The bytes stay, every piece counts as a call. */
	EXPECT_SITE(s, s0.bytes + (n << order) * page_size, s0.calls + (n << order), "split");
	ASSERT_EQ(0, ops("free split"));
	EXPECT_SITE(op("ops_split"), s0.bytes, s0.calls, "split freed");
}

/* Non-compound high-order pages freed with __free_pages() while an extra
 * reference is held: the tail chunks go, the first page stays until put.
 */
TEST_F(paths, free_with_extra_reference)
{
	static const int orders[] = { 0, 1, 2, 3, 5, 9 };
	struct site s0 = op("ops_shared"), s;
	long long bytes = 0;
	int i, n = ARRAY_SIZE(orders);

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ops("shared %d 1", orders[i]));
		bytes += page_size << orders[i];
	}
	EXPECT_SITE(op("ops_shared"), s0.bytes + bytes, s0.calls + n, "shared");
	ASSERT_EQ(0, ops("release shared"));
	s = op("ops_shared");
	EXPECT_SITE(s, s0.bytes + n * page_size, s0.calls + n, "released, first pages held");
	ASSERT_EQ(0, ops("free shared"));
	EXPECT_SITE(op("ops_shared"), s0.bytes, s0.calls, "extra references dropped");
	EXPECT_NO_NEGATIVE();
}

TEST_F(paths, vmalloc)
{
	/* 16 pages: one call each, and one for the 16-pointer page array
	 * (128 bytes, an exact kmalloc size).
	 */
	const long pages = 16, n = 2, array = pages * sizeof(void *);
	struct site s0 = op("ops_vmalloc"), s;

	ASSERT_EQ(0, ops("vmalloc %ld %ld", pages, n));
	s = op("ops_vmalloc");
	EXPECT_SITE(s, s0.bytes + n * (pages * page_size + array), s0.calls + n * (pages + 1),
		    "vmalloc");
	ASSERT_EQ(0, ops("free vmalloc"));
	EXPECT_SITE(op("ops_vmalloc"), s0.bytes, s0.calls, "vfree");
}

TEST_HARNESS_MAIN
