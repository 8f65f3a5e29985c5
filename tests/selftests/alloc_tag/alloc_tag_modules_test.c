// SPDX-License-Identifier: GPL-2.0
/*
 * Page tags of a module's pages across its unload: pages freed after
 * the module is gone, and load/unload cycles that must give back every
 * module index and leak no memory.
 *
 * Environment:
 *   ALLOC_TAG_CYCLES    module load/unload cycles (default 200)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "alloc_tag_lib.h"

/* Pages of a module freed after it is gone: the module inserts them into
 * this process's mapping, which holds the only reference; munmap() frees
 * them after the unload, through the kernel's own code.
 */
TEST_F_TIMEOUT(paths, free_after_module_unload, 120)
{
	const long pages = 16;
	struct site s0, s1;
	char *p, msg[1024];

	p = mmap(NULL, pages * page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	s0 = op("ops_mapped");
	ASSERT_EQ(0, ops("map %lx %ld", (unsigned long)p, pages));
	s1 = op("ops_mapped");
	EXPECT_SITE(s1, s0.bytes + pages * page_size, s0.calls + pages, "mapped pages");
	ASSERT_EQ(0, unload_module(OPS));
	ASSERT_EQ(0, module_loaded(OPS));
	/* Its next instance: fresh counters. */
	ASSERT_EQ(0, load_module(OPS, ""));
	EXPECT_SITE(op("ops_mapped"), 0, 0, "the next instance after load");
	ASSERT_EQ(0, munmap(p, pages * page_size));
	/* The old instance's pages are freed: nothing of this instance moves. */
	s1 = op("ops_mapped");
	EXPECT_SITE(s1, 0, 0, "the next instance after the old pages were freed");
	s1 = op("");
	EXPECT_SITE(s1, 0, 0, "all sites of the next instance");
	EXPECT_EQ(0, negatives(msg, sizeof(msg))) TH_LOG("negative: %s", msg);
}

TEST_F_TIMEOUT(paths, load_unload_cycles, 600)
{
	const char *env = getenv("ALLOC_TAG_CYCLES");
	int cycles = env ? atoi(env) : 200, i;
	long long used0, used1, pcpu0, pcpu1, avail0, avail1, core;
	char path[128];

	ASSERT_EQ(0, unload_module(OPS));
	used0 = field_of(STORAGE, "module_indices_used");
	pcpu0 = field_of("/proc/meminfo", "Percpu");
	avail0 = field_of("/proc/meminfo", "MemAvailable");
	ASSERT_EQ(0, load_module(OPS, ""));
	snprintf(path, sizeof(path), "/sys/module/%s/coresize", OPS);
	core = read_long(path);
	ASSERT_LT(0, core);
	ASSERT_EQ(0, ops("pages 1 2"));
	ASSERT_EQ(0, ops("free all"));
	ASSERT_EQ(0, unload_module(OPS));
	for (i = 1; i < cycles; i++) {
		ASSERT_EQ(0, load_module(OPS, "")) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, ops("split 1 1"));
		ASSERT_EQ(0, ops("free all"));
		ASSERT_EQ(0, unload_module(OPS)) TH_LOG("cycle %d", i);
	}
	used1 = field_of(STORAGE, "module_indices_used");
	pcpu1 = field_of("/proc/meminfo", "Percpu");
	avail1 = field_of("/proc/meminfo", "MemAvailable");
	TH_LOG("%d cycles: module_indices_used %lld -> %lld, Percpu %lld -> %lld kB", cycles,
	       used0, used1, pcpu0, pcpu1);
	TH_LOG("MemAvailable %lld -> %lld kB (module core %lld bytes)",
	       avail0, avail1, core);
	EXPECT_EQ(used0, used1);
	/* A leak of one module instance per cycle would cost cycles * core
	 * bytes; half of that is far above the noise of a quiet guest.
	 */
	EXPECT_GT((long long)cycles * core / 2 / 1024, avail0 - avail1);
	/* Per-CPU counters: a few tags of 16 bytes per CPU leaked per cycle
	 * would show; page-granular chunk population is the noise.
	 */
	EXPECT_GE(16LL, pcpu1 - pcpu0);
	ASSERT_EQ(0, load_module(OPS, ""));
}

TEST_HARNESS_MAIN
