// SPDX-License-Identifier: GPL-2.0
/*
 * Page tags through what mm does to user memory: THP split, hugetlb
 * demote, migration between NUMA nodes, compaction and reclaim. The
 * counters of the kernel's own call sites are compared before and after;
 * at the shared anonymous fault site a few pages of noise (this process's
 * own stack and heap) are tolerated. A test skips, saying why, where the
 * machine lacks what it needs (THP, a 1 GiB huge page, two nodes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "alloc_tag_lib.h"

#define GIGANTIC	"/sys/kernel/mm/hugepages/hugepages-1048576kB"
#define HUGE_2M		"/sys/kernel/mm/hugepages/hugepages-2048kB"

#define MPOL_BIND	2

/* -------- userspace memory: THP split, hugetlb demote -------- */

TEST(thp_split)
{
	const long huge = 2 << 20, len = 4 * huge;
	struct site s0, s1, s2, s3;
	char buf[128], *p, *a;
	long long ah0;
	long k, i;

	const char *why = no_profiling();

	if (why)
		SKIP(return, "%s", why);
	settle();
	if (read_str(THP_ENABLED, buf, sizeof(buf)))
		SKIP(return, "no " THP_ENABLED ": kernel without THP");
	if (strstr(buf, "[never]") && write_str(THP_ENABLED, "always"))
		SKIP(return, "THP is off and cannot be turned on");
	if (access(THP_SPLIT, W_OK))
		SKIP(return, "no " THP_SPLIT);
	s0 = site_now("", "do_huge_pmd_anonymous_page");
	ah0 = field_of("/proc/meminfo", "AnonHugePages");
	p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	a = (char *)(((unsigned long)p + huge - 1) & ~(huge - 1));
	if (madvise(a, len, MADV_HUGEPAGE) && !strstr(buf, "[always]"))
		SKIP(goto out, "THP only on madvise(), and madvise() is not available (%s)",
		     strerror(errno));
	/* Every page non-zero: a split must not drop zero-filled pages. */
	for (i = 0; i < len; i += page_size)
		memset(a + i, 0x5a, 64);
	s1 = site_now("", "do_huge_pmd_anonymous_page");
	k = (field_of("/proc/meminfo", "AnonHugePages") - ah0) * 1024 / huge;
	if (k <= 0)
		SKIP(goto out, "no huge page could be faulted in");
	EXPECT_SITE(s1, s0.bytes + k * huge, s0.calls + k, "THP fault");
	snprintf(buf, sizeof(buf), "%d,0x%lx,0x%lx", getpid(), (unsigned long)a,
		 (unsigned long)a + len);
	ASSERT_EQ(0, write_str(THP_SPLIT, buf));
	s2 = site_now("", "do_huge_pmd_anonymous_page");
	/* Same bytes; every one of the 512 pages of a huge page is a call. */
	EXPECT_SITE(s2, s0.bytes + k * huge, s0.calls + k * (huge / page_size), "THP split");
	munmap(p, len + huge);
	p = NULL;
	s3 = site_now("", "do_huge_pmd_anonymous_page");
	EXPECT_SITE(s3, s0.bytes, s0.calls, "THP unmapped");
	EXPECT_NO_NEGATIVE();
out:
	if (p)
		munmap(p, len + huge);
}

/* Whether @file, a path, ends with the kernel source file @name. */
static int is_file(const char *file, const char *name)
{
	size_t l = strlen(file), n = strlen(name);

	return l >= n && !strcmp(file + l - n, name) && (l == n || file[l - n - 1] == '/');
}

/*
 * All lines of mm/hugetlb.c and mm/cma.c: a gigantic page is charged to
 * hugetlb.c when alloc_contig_pages() finds it anywhere, to cma.c when it
 * comes from the area hugetlb_cma= reserved (cma_alloc() allocates it).
 */
static struct site hugetlb_site(void)
{
	struct allocinfo ai;
	struct site s = { 0 };
	int i;

	if (read_allocinfo(&ai))
		return s;
	for (i = 0; i < ai.nr; i++) {
		const char *f = ai.tags[i].file;

		if (ai.tags[i].mod[0] || (!is_file(f, "mm/hugetlb.c") && !is_file(f, "mm/cma.c")))
			continue;
		s.bytes += ai.tags[i].bytes;
		s.calls += ai.tags[i].calls;
		s.lines++;
	}
	free_allocinfo(&ai);
	return s;
}

TEST_F_TIMEOUT(paths, hugetlb_demote, 120)
{
	const long giga = 1L << 30, huge = 2L << 20;
	struct site s0, s1, s2;

	if (access(GIGANTIC "/demote", W_OK))
		SKIP(return, "no 1 GiB huge page size with demote (" GIGANTIC "/demote)");
	if (read_long(GIGANTIC "/nr_hugepages") || read_long(HUGE_2M "/nr_hugepages"))
		SKIP(return, "huge page pools are already in use");
	s0 = hugetlb_site();
	write_str(GIGANTIC "/nr_hugepages", "1");
	if (read_long(GIGANTIC "/nr_hugepages") != 1) {
		write_str(GIGANTIC "/nr_hugepages", "0");
		SKIP(return, "no 1 GiB huge page could be allocated (MemTotal %lld kB)",
		     field_of("/proc/meminfo", "MemTotal"));
	}
	s1 = hugetlb_site();
	EXPECT_SITE(s1, s0.bytes + giga, s0.calls + 1, "1 GiB page");
	ASSERT_EQ(0, write_str(GIGANTIC "/demote", "1"));
	s2 = hugetlb_site();
	EXPECT_SITE(s2, s0.bytes + giga, s0.calls + giga / huge, "demoted to 2 MiB pages");
	write_str(GIGANTIC "/nr_hugepages", "0");
	write_str(HUGE_2M "/nr_hugepages", "0");
	EXPECT_SITE(hugetlb_site(), s0.bytes, s0.calls, "pools emptied");
}

/* -------- migration -------- */

/* Pages whose status (node) moved from a page-migration call. */
static long on_node(char *p, long pages, int node)
{
	void **addr = calloc(pages, sizeof(void *));
	int *status = calloc(pages, sizeof(int));
	long i, n = 0;

	for (i = 0; i < pages; i++)
		addr[i] = p + i * page_size;
	if (!syscall(SYS_move_pages, 0, pages, addr, NULL, status, 0))
		for (i = 0; i < pages; i++)
			n += status[i] == node;
	free(addr);
	free(status);
	return n;
}

TEST_F_TIMEOUT(paths, migrate_between_nodes, 300)
{
	const long pages = 2048;
	unsigned long mask0 = 1, mask1 = 2;
	struct site a0, t0, a1, t1;
	void **addr;
	int *nodes, *status;
	char *p;
	long i;

	if (nr_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes (boot with -n 2)");
	no_thp();
	settle();
	a0 = anon_site();
	t0 = migration_targets();
	p = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, syscall(SYS_mbind, p, pages * page_size, MPOL_BIND, &mask0, 64, 0));
	for (i = 0; i < pages; i++)
		p[i * page_size] = 1;
	EXPECT_EQ(pages, on_node(p, pages, 0));
	a1 = anon_site();
	EXPECT_NEAR(a0.bytes + pages * page_size, a1.bytes, ANON_SLACK * page_size, "anon faults");
	EXPECT_NEAR(a0.calls + pages, a1.calls, ANON_SLACK, "anon fault calls");

	/* move_pages() to node 1 */
	addr = calloc(pages, sizeof(void *));
	nodes = calloc(pages, sizeof(int));
	status = calloc(pages, sizeof(int));
	for (i = 0; i < pages; i++) {
		addr[i] = p + i * page_size;
		nodes[i] = 1;
	}
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, pages, addr, nodes, status, 0));
	EXPECT_EQ(pages, on_node(p, pages, 1));
	t1 = migration_targets();
	EXPECT_SITE(t1, t0.bytes, t0.calls, "migration target sites after move_pages()");
	EXPECT_NEAR(a1.bytes, anon_site().bytes, ANON_SLACK * page_size,
		    "anon site after move_pages()");

	/* migrate_pages() back to node 0: the mbind policy allows node 0 only. */
	ASSERT_LE(0, syscall(SYS_migrate_pages, 0, 64, &mask1, &mask0));
	EXPECT_EQ(pages, on_node(p, pages, 0));
	t1 = migration_targets();
	EXPECT_SITE(t1, t0.bytes, t0.calls, "migration target sites after migrate_pages()");
	EXPECT_NEAR(a1.bytes, anon_site().bytes, ANON_SLACK * page_size,
		    "anon site after migrate_pages()");
	EXPECT_NEAR(a1.calls, anon_site().calls, ANON_SLACK, "anon calls after migrate_pages()");

	munmap(p, pages * page_size);
	EXPECT_NEAR(a0.bytes, anon_site().bytes, ANON_SLACK * page_size, "anon site unmapped");
	EXPECT_SITE(migration_targets(), t0.bytes, t0.calls, "migration target sites at the end");
	EXPECT_NO_NEGATIVE();
	free(addr);
	free(nodes);
	free(status);
}

TEST_F_TIMEOUT(paths, compaction, 300)
{
	const long pages = 65536;	/* 256 MiB: across most of a node */
	struct site a0, t0, a1, m;
	struct site c0, c1;
	unsigned long long *before, *after;
	long migrated = 0;
	int attempt, round;
	char *p = NULL;
	long i;

	no_thp();
	/*
	 * The page frame tables are written before a0 is read, so that the
	 * anon site counts their pages in a0 and in every figure after it.
	 */
	before = calloc(pages / 2, sizeof(*before));
	after = calloc(pages / 2, sizeof(*after));
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);
	memset(before, 0xff, pages / 2 * sizeof(*before));
	memset(after, 0xff, pages / 2 * sizeof(*after));
	/*
	 * Compaction moves pages from the low end of a zone into free pages
	 * at its high end. Compact first, so that the free memory this
	 * test's pages come from lies low, where the migrate scanner finds
	 * them: after the earlier tests, they may otherwise all sit where
	 * the free scanner takes their holes as targets, and none moves.
	 */
	ASSERT_EQ(0, write_str("/proc/sys/vm/compact_memory", "1"));
	settle();
	a0 = anon_site();
	t0 = migration_targets();
	c0 = op("ops_pages");
	/*
	 * A region none of whose pages moved lay where the free scanner
	 * works; the compaction of it left free memory low, so a second
	 * region comes from there.
	 */
	for (attempt = 0; attempt < 2 && !migrated; attempt++) {
		if (p)
			munmap(p, pages * page_size);
		/* Every other page unmapped: free holes all over. */
		p = anon_pages(pages);
		ASSERT_NE(NULL, p);
		for (i = 0; i < pages; i += 2)
			munmap(p + i * page_size, page_size);
		a1 = anon_site();
		EXPECT_NEAR(a0.bytes + pages / 2 * page_size, a1.bytes,
			    ANON_SLACK * page_size, "anon half freed");
		ASSERT_EQ(0, pfns(p + page_size, pages, 2, before));
		/* Compaction moves what lies in its way: a few rounds may be needed. */
		for (round = 0; round < 5 && !migrated; round++) {
			ASSERT_EQ(0, write_str("/proc/sys/vm/compact_memory", "1"));
			ASSERT_EQ(0, pfns(p + page_size, pages, 2, after));
			for (i = 0; i < pages / 2; i++)
				migrated += before[i] != after[i];
		}
	}
	if (migrated <= 0) {
		munmap(p, pages * page_size);
		free(before);
		free(after);
		SKIP(return, "compaction moved none of this test's pages in two regions");
	}
	TH_LOG("compaction moved %ld of this test's %ld pages (region %d of 2)",
	       migrated, pages / 2, attempt);
	m = migration_targets();
	/* The targets took the tags of the pages they replace. */
	EXPECT_SITE(m, t0.bytes, t0.calls, "func:compaction_alloc and other target sites");
	EXPECT_NEAR(a1.bytes, anon_site().bytes, ANON_SLACK * page_size, "anon after compaction");
	EXPECT_NEAR(a1.calls, anon_site().calls, ANON_SLACK, "anon calls after compaction");
	c1 = op("ops_pages");
	EXPECT_SITE(c1, c0.bytes, c0.calls, "module site untouched");
	for (i = 1; i < pages; i += 2)
		munmap(p + i * page_size, page_size);
	EXPECT_NEAR(a0.bytes, anon_site().bytes, ANON_SLACK * page_size, "anon unmapped");
	free(before);
	free(after);
	EXPECT_NO_NEGATIVE();
}

/* -------- memory pressure -------- */

TEST_F_TIMEOUT(paths, memory_pressure, 300)
{
	long long total = field_of("/proc/meminfo", "MemTotal") * 1024;
	const long chunk = 1024;	/* pages per step */
	long cache = total / page_size / 8, steps = 0, held;
	struct site a0, t0, c, s;
	char **mem;
	long long shrunk0;
	int i;

	no_thp();
	settle();
	a0 = anon_site();
	t0 = migration_targets();
	shrunk0 = ops_held("cache_shrunk");
	ASSERT_EQ(0, ops("cache %ld", cache));
	c = op("ops_cache");
	EXPECT_SITE(c, cache * page_size, cache, "module cache");
	mem = calloc(total / page_size / chunk + 1, sizeof(char *));
	/* Fill anonymous memory until the shrinker gives pages back. */
	while (ops_held("cache_shrunk") == shrunk0) {
		/* Reclaim starts below the low watermarks, a few MiB. */
		if (field_of("/proc/meminfo", "MemFree") < 2048 ||
		    steps * chunk * page_size > total)
			break;
		mem[steps] = anon_pages(chunk);
		if (!mem[steps])
			break;
		steps++;
	}
	for (i = 0; i < steps; i++)
		munmap(mem[i], chunk * page_size);
	free(mem);
	/* Reclaim may still be running: read when the cache stands still. */
	do {
		held = ops_held("cache");
		usleep(200000);
	} while (held != ops_held("cache"));
	TH_LOG("%ld MiB of anon memory; the shrinker gave back %lld of %ld cached pages",
	       steps * chunk * page_size >> 20, ops_held("cache_shrunk") - shrunk0, cache);
	EXPECT_LT(shrunk0, ops_held("cache_shrunk")) TH_LOG("reclaim did not run");
	s = op("ops_cache");
	EXPECT_SITE(s, held * page_size, held, "module cache after reclaim");
	EXPECT_NEAR(a0.bytes, anon_site().bytes, ANON_SLACK * page_size, "anon back");
	EXPECT_NEAR(a0.calls, anon_site().calls, ANON_SLACK, "anon calls back");
	EXPECT_SITE(migration_targets(), t0.bytes, t0.calls, "migration target sites");
	ASSERT_EQ(0, ops("free cache"));
	EXPECT_SITE(op("ops_cache"), 0, 0, "module cache freed");
	EXPECT_NO_NEGATIVE();
}

TEST_HARNESS_MAIN
