// SPDX-License-Identifier: GPL-2.0
/*
 * Every page path at once: workers allocate and free through every
 * test_alloc_tag command, migrate, compact, split THPs and load and
 * unload test_alloc_tag_pages, for ALLOC_TAG_STRESS seconds, and while
 * profiling is switched off and on; afterwards every site they charged
 * must be back at its exact start.
 *
 * Environment:
 *   ALLOC_TAG_STRESS    seconds of the concurrent stress test (default 10)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "alloc_tag_lib.h"

static sig_atomic_t stop;	/* set by SIGALRM */

#define READ_STOP() __atomic_load_n(&stop, __ATOMIC_RELAXED)

static void on_alarm(int sig)
{
	stop = 1;
}

#define NR_WORKERS 4

/*
 * Rounds each worker completed (slot: ops a, ops b, migration, modules),
 * in memory the forked workers share with the test.
 */
static unsigned long *worker_rounds;

static void worker_round_done(int slot)
{
	__atomic_add_fetch(&worker_rounds[slot], 1, __ATOMIC_RELAXED);
}

/* @slot: 0 or 1, the worker's counter, and its random seed less one. */
static void worker_ops(int slot)
{
	unsigned int seed = slot + 1;

	while (!READ_STOP()) {
		int order = rand_r(&seed) % 5;

		ops("pages %d 2", order);
		ops("bulk 16");
		ops("exact %ld 1", 3 * page_size + 1);
		ops("split %d 1", order);
		ops("shared %d 2", order + 1);
		ops("folio %d 1", order);
		ops("vmalloc %d 1", 1 + order);
		ops("release shared");
		if (rand_r(&seed) & 1)
			ops("free pages");
		ops("free split");
		ops("free shared");
		if (rand_r(&seed) % 4 == 0)
			ops("free all");
		worker_round_done(slot);
	}
	ops("free all");
}

static void worker_migrate(void)
{
	const long pages = 256, huge = 2 << 20;
	int two = nr_nodes() >= 2, thp = !access(THP_SPLIT, W_OK), node = 1;
	void **addr = calloc(pages, sizeof(void *));
	int *nodes = calloc(pages, sizeof(int)), *status = calloc(pages, sizeof(int));
	char *p = anon_pages(pages), buf[128];
	long i, n = 0;

	for (i = 0; i < pages; i++)
		addr[i] = p + i * page_size;
	while (!READ_STOP()) {
		if (two) {
			for (i = 0; i < pages; i++)
				nodes[i] = node;
			syscall(SYS_move_pages, 0, pages, addr, nodes, status, 0);
			node ^= 1;
		}
		if (++n % 8 == 0 || !two)
			write_str("/proc/sys/vm/compact_memory", "1");
		if (thp) {
			char *h = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			char *a = (char *)(((unsigned long)h + huge - 1) & ~(huge - 1));

			for (i = 0; i < huge; i += page_size)
				a[i] = 1;
			snprintf(buf, sizeof(buf), "%d,0x%lx,0x%lx", getpid(),
				 (unsigned long)a, (unsigned long)a + huge);
			write_str(THP_SPLIT, buf);
			munmap(h, 2 * huge);
		}
		worker_round_done(2);
	}
	munmap(p, pages * page_size);
}

static void worker_modules(void)
{
	while (!READ_STOP()) {
		if (!load_module(PAGES_MOD, "counts=1,1,1") &&
		    !unload_module(PAGES_MOD))
			worker_round_done(3);
	}
}

static pid_t spawn(void (*fn)(void), unsigned int seconds)
{
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGALRM, on_alarm);
		alarm(seconds);
		fn();
		_exit(0);
	}
	return pid;
}

static unsigned int stress_seconds(void)
{
	const char *env = getenv("ALLOC_TAG_STRESS");

	return env && atoi(env) > 0 ? atoi(env) : 10;
}

static void ops_worker_a(void) { worker_ops(0); }
static void ops_worker_b(void) { worker_ops(1); }

/*
 * Every page path at once for @seconds: test_alloc_tag kinds, migration, modules.
 * Returns -1, with no worker started, when the shared round counters cannot
 * be mapped.
 */
static int spawn_workers(pid_t *pids, unsigned int seconds)
{
	if (!worker_rounds) {
		void *m = mmap(NULL, NR_WORKERS * sizeof(*worker_rounds),
			       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		worker_rounds = m;
	}
	memset(worker_rounds, 0, NR_WORKERS * sizeof(*worker_rounds));
	pids[0] = spawn(ops_worker_a, seconds);
	pids[1] = spawn(ops_worker_b, seconds);
	pids[2] = spawn(worker_migrate, seconds);
	pids[3] = spawn(worker_modules, seconds);
	return 0;
}

/* The sites the workers charge, before they run. */
struct worker_sites {
	struct site ops, targets, anon;
};

static struct worker_sites worker_sites(void)
{
	return (struct worker_sites){ op(""), migration_targets(), anon_site() };
}

/*
 * Wait for the workers, free what test_alloc_tag holds, and expect every site
 * they charge back at @w: exact but for the anon site's slack.
 */
static void expect_workers_undone(struct __test_metadata *_metadata, pid_t *pids,
				  struct worker_sites w)
{
	int i, status;

	for (i = 0; i < NR_WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("worker %d", i);
	}
	/* Every worker got round at least once: the paths really ran. */
	for (i = 0; i < NR_WORKERS; i++)
		EXPECT_LT(0, worker_rounds[i]) TH_LOG("worker %d completed no round", i);
	TH_LOG("rounds: test_alloc_tag %lu + %lu, migration %lu, module load+unload %lu",
	       worker_rounds[0], worker_rounds[1], worker_rounds[2], worker_rounds[3]);
	ASSERT_EQ(0, ops("free all"));
	EXPECT_SITE(op(""), w.ops.bytes, w.ops.calls, "every test_alloc_tag site at its start");
	EXPECT_EQ(0, module_loaded(PAGES_MOD));
	EXPECT_SITE(site_now(PAGES_MOD, ""), 0, 0, "test_alloc_tag_pages gone");
	EXPECT_SITE(migration_targets(), w.targets.bytes, w.targets.calls,
		    "migration target sites");
	EXPECT_NEAR(w.anon.bytes, anon_site().bytes, ANON_SLACK * page_size, "anon site");
	EXPECT_NO_NEGATIVE();
}

TEST_F_TIMEOUT(paths, stress, 1800)
{
	unsigned int seconds = stress_seconds();
	struct worker_sites w;
	pid_t pids[NR_WORKERS];
	const char *why = no_pages_module();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ops("free all"));
	settle();
	w = worker_sites();
	TH_LOG("%u seconds of concurrent allocation, free, split, migration and module load/unload",
	       seconds);
	ASSERT_EQ(0, spawn_workers(pids, seconds))
		TH_LOG("no shared memory for the workers' round counters: %s", strerror(errno));
	expect_workers_undone(_metadata, pids, w);
}

/* -------- profiling switched at run time -------- */

TEST_F_TIMEOUT(paths, toggle_while_allocating, 300)
{
	struct worker_sites w;
	pid_t pids[NR_WORKERS];
	struct site p0, f0;
	const char *why;
	char buf[16];
	int i;

	if (read_str(PROFILING, buf, sizeof(buf)) || write_str(PROFILING, "1"))
		SKIP(return, PROFILING " is read-only (CONFIG_MEM_ALLOC_PROFILING_DEBUG)");
	why = no_pages_module();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ops("free all"));
	p0 = op("ops_pages");
	f0 = op("ops_folio");

	/* 1. Pages allocated while on and freed while off: uncharged. */
	ASSERT_EQ(0, ops("pages 0 64"));
	EXPECT_SITE(op("ops_pages"), p0.bytes + 64 * page_size, p0.calls + 64,
		    "allocated while on");
	ASSERT_EQ(0, write_str(PROFILING, "0"));
	ASSERT_EQ(0, ops("free pages"));
	EXPECT_SITE(op("ops_pages"), p0.bytes, p0.calls, "allocated while on, freed while off");
	/*
	 * 2. Allocated while off, most likely the same pages (per-CPU lists
	 * are last in, first out): charged to nobody, and freed while on,
	 * uncharged from nobody.
	 */
	ASSERT_EQ(0, ops("folio 0 64"));
	ASSERT_EQ(0, write_str(PROFILING, "1"));
	ASSERT_EQ(0, ops("free folio"));
	EXPECT_SITE(op("ops_pages"), p0.bytes, p0.calls,
		    "pages allocated while off and freed while on leave other tags alone");
	EXPECT_SITE(op("ops_folio"), f0.bytes, f0.calls, "folio site, allocated while off");
	EXPECT_NO_NEGATIVE();

	/*
	 * 3. Switched off and on 40 times while every page path runs (the
	 * stress test's workers: every test_alloc_tag kind, migration,
	 * compaction, THP split, module load and unload): once everything
	 * is freed, every site is back to its exact start.
	 */
	settle();
	w = worker_sites();
	ASSERT_EQ(0, spawn_workers(pids, 5))
		TH_LOG("no shared memory for the workers' round counters: %s", strerror(errno));
	for (i = 0; i < 40; i++) {
		EXPECT_EQ(0, write_str(PROFILING, i & 1 ? "1" : "0"));
		usleep(100000);
	}
	EXPECT_EQ(0, write_str(PROFILING, "1"));
	expect_workers_undone(_metadata, pids, w);
}

TEST_HARNESS_MAIN
