// SPDX-License-Identifier: GPL-2.0
/*
 * Page tags of hot-added memory: a DIMM hot-added, onlined movable, used
 * by test_alloc_tag, offlined and removed, twice at the same addresses;
 * and a DIMM's blocks offlined and onlined again and again while another
 * CPU allocates and frees pages in them.
 * The guest asks the host for each QEMU monitor command by printing a
 * "#QMP {json}" line, which the host relays to QEMU's QMP socket; the
 * environment says the host does (ALLOC_TAG_HOTPLUG=1), else the test
 * skips.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "alloc_tag_lib.h"

#define MEMORY_SYSFS	"/sys/devices/system/memory"
#define HOTPLUG_MAX_BLOCKS 4096

/*
 * Ask the host's QEMU monitor to run the QMP command @cmd with the
 * arguments @fmt (JSON members): scripts/boot.sh -H relays each output
 * line that starts with "#QMP " to QEMU's QMP socket.
 */
static void qmp(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	printf("#QMP {\"execute\": \"%s\", \"arguments\": {", cmd);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("}}\n");
	fflush(stdout);
}

/* The memory blocks present: @present[i] for block memoryi. */
static int memory_blocks(char *present)
{
	char path[128];
	int i, n = 0;

	for (i = 0; i < HOTPLUG_MAX_BLOCKS; i++) {
		snprintf(path, sizeof(path), MEMORY_SYSFS "/memory%d", i);
		present[i] = !access(path, F_OK);
		n += present[i];
	}
	return n;
}

/*
 * Wait up to @secs seconds until the blocks present differ from @before
 * by @want blocks more (added) or less (removed); @changed gets the
 * blocks that came or went. Returns how many did.
 */
static int wait_blocks(const char *before, char *changed, int want, int secs)
{
	static char now[HOTPLUG_MAX_BLOCKS];
	int i, n = 0, t;

	for (t = 0; t < secs * 10; t++) {
		memory_blocks(now);
		n = 0;
		for (i = 0; i < HOTPLUG_MAX_BLOCKS; i++) {
			changed[i] = now[i] != before[i];
			n += changed[i];
		}
		if (n >= abs(want))
			break;
		usleep(100000);
	}
	return n;
}

/* Write @state ("online_movable", "offline") to every block in @blocks. */
static int set_blocks(const char *blocks, const char *state)
{
	char path[128];
	int i, r;

	for (i = 0; i < HOTPLUG_MAX_BLOCKS; i++) {
		if (!blocks[i])
			continue;
		snprintf(path, sizeof(path), MEMORY_SYSFS "/memory%d/state", i);
		r = write_str(path, state);
		if (r)
			return r;
	}
	return 0;
}

/* Bytes a memory block spans (block_size_bytes, hex), 0 if unknown. */
static unsigned long block_bytes(void)
{
	char buf[64];

	if (read_str(MEMORY_SYSFS "/block_size_bytes", buf, sizeof(buf)))
		return 0;
	return strtoul(buf, NULL, 16);
}

/* First and one past the last page frame of the blocks in @blocks. */
static void block_pfns(const char *blocks, unsigned long *lo, unsigned long *hi)
{
	unsigned long block_pages = block_bytes() / page_size;
	int i;

	*lo = ~0UL;
	*hi = 0;
	for (i = 0; i < HOTPLUG_MAX_BLOCKS; i++) {
		if (!blocks[i])
			continue;
		if (i * block_pages < *lo)
			*lo = i * block_pages;
		*hi = (i + 1) * block_pages;
	}
}

/* "movable_pfns FIRST LAST" of test_alloc_tag's ctl. */
static void ops_movable_pfns(unsigned long *first, unsigned long *last)
{
	char *buf = read_file(OPS_CTL, NULL), *p;

	*first = *last = 0;
	p = buf ? strstr(buf, "movable_pfns ") : NULL;
	if (p)
		sscanf(p, "movable_pfns %lu %lu", first, last);
	free(buf);
}

/*
 * One round: hot-add a DIMM of @mib MiB (QMP ids hp@round, dimm@round),
 * online it movable, allocate @n movable pages at ops_movable (they land
 * in the new ZONE_MOVABLE), check the counters, free them, offline the
 * memory and remove the DIMM.
 */
static void hotplug_round(struct __test_metadata *_metadata, int round, int mib, long n)
{
	static char before[HOTPLUG_MAX_BLOCKS], added[HOTPLUG_MAX_BLOCKS],
		    now[HOTPLUG_MAX_BLOCKS], gone[HOTPLUG_MAX_BLOCKS];
	unsigned long lo, hi, first, last;
	struct site s0, s1;
	int nb, want;
	char what[64];

	snprintf(what, sizeof(what), "round %d", round);
	memory_blocks(before);
	qmp("object-add", "\"qom-type\": \"memory-backend-ram\", \"id\": \"hp%d\", \"size\": %ld",
	    round, (long)mib << 20);
	qmp("device_add", "\"driver\": \"pc-dimm\", \"id\": \"dimm%d\", \"memdev\": \"hp%d\"",
	    round, round);
	/* The DIMM's blocks: its size over the block size. */
	ASSERT_LT(0, block_bytes());
	want = ((long)mib << 20) / block_bytes();
	nb = wait_blocks(before, added, want, 60);
	ASSERT_EQ(want, nb) TH_LOG("%s: %d of %d blocks appeared within 60 s of device_add",
				   what, nb, want);
	block_pfns(added, &lo, &hi);
	TH_LOG("%s: %d blocks added, pfns %#lx-%#lx", what, nb, lo, hi);
	ASSERT_EQ(0, set_blocks(added, "online_movable"));

	s0 = op("ops_movable");
	ASSERT_EQ(0, ops("movable 0 %ld", n));
	ASSERT_EQ(n, ops_held("movable"));
	ops_movable_pfns(&first, &last);
	EXPECT_TRUE(first >= lo && last < hi)
		TH_LOG("%s: movable pages at %#lx-%#lx, outside the new memory %#lx-%#lx",
		       what, first, last, lo, hi);
	s1 = op("ops_movable");
	EXPECT_SITE(s1, s0.bytes + n * page_size, s0.calls + n, what);
	ASSERT_EQ(0, ops("free movable"));
	EXPECT_SITE(op("ops_movable"), s0.bytes, s0.calls, "freed");
	EXPECT_NO_NEGATIVE();

	ASSERT_EQ(0, set_blocks(added, "offline")) TH_LOG("%s: offlining failed", what);
	memory_blocks(now);
	qmp("device_del", "\"id\": \"dimm%d\"", round);
	nb = wait_blocks(now, gone, -want, 60);
	EXPECT_EQ(want, nb) TH_LOG("%s: %d of %d blocks removed within 60 s of device_del",
				   what, nb, want);
	qmp("object-del", "\"id\": \"hp%d\"", round);
}

/* Why the hotplug tests skip: [0] without a monitor relay. */
static const char *const hotplug_skips[] = {
	"no monitor relay: run in a QEMU guest with memory slots whose host relays the \"#QMP \" output lines to QEMU's monitor, with ALLOC_TAG_HOTPLUG=1",
};

/* Why the hotplug tests cannot run here, NULL if they can. */
static const char *no_hotplug(void)
{
	if (!getenv("ALLOC_TAG_HOTPLUG"))
		return hotplug_skips[0];
	if (access(MEMORY_SYSFS "/block_size_bytes", R_OK))
		return "no " MEMORY_SYSFS ": kernel without CONFIG_MEMORY_HOTPLUG";
	return NULL;
}

/*
 * What offline_while_allocating's churning child shares with the test:
 * the stop flag, and what the child did.
 */
struct churn {
	int stop;		/* set by the test */
	int err;		/* an ops() write failed */
	long rounds;		/* rounds of CHURN_PAGES pages allocated and freed */
	long in_blocks;		/* rounds whose pages all lay in the cycled blocks */
};

#define CHURN_PAGES	64
#define OFFLINE_CYCLES	10

/*
 * The child: until @c->stop, on CPU 1, allocate CHURN_PAGES movable pages
 * and free them, counting the rounds whose pages lay in [@lo, @hi). It
 * ends by itself after two minutes, should the test end without stopping
 * it.
 */
static void churn_movable(struct churn *c, unsigned long lo, unsigned long hi)
{
	unsigned long first, last;
	cpu_set_t cpus;

	alarm(120);
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		if (ops("movable 0 %d", CHURN_PAGES)) {
			c->err = 1;
			return;
		}
		ops_movable_pfns(&first, &last);
		if (first >= lo && last < hi)
			c->in_blocks++;
		if (ops("free movable")) {
			c->err = 1;
			return;
		}
		c->rounds++;
	}
}

/*
 * A DIMM's blocks offlined and onlined movable again, OFFLINE_CYCLES
 * times, while a child on another CPU allocates and frees movable pages,
 * which land in the blocks whenever they are online: each page is charged
 * and uncharged while the blocks' struct pages and page_ext are torn down
 * and built again around it. page_ext storage finds the page_ext of a
 * page being allocated or freed without RCU, as such a page keeps its
 * section from going offline. The call site's counters must come back
 * exact, none may go below 0, and the debug build's checks stay silent
 * (the host reads its console).
 */
TEST_F_TIMEOUT(paths, offline_while_allocating, 300)
{
	static char before[HOTPLUG_MAX_BLOCKS], added[HOTPLUG_MAX_BLOCKS],
		    now[HOTPLUG_MAX_BLOCKS], gone[HOTPLUG_MAX_BLOCKS];
	const char *why = no_hotplug();
	unsigned long lo, hi;
	struct churn *c;
	struct site s0;
	int nb, want, i, status;
	pid_t pid;

	if (why)
		SKIP(return, "%s", why);
	memory_blocks(before);
	qmp("object-add",
	    "\"qom-type\": \"memory-backend-ram\", \"id\": \"hpcycle\", \"size\": %ld",
	    256L << 20);
	qmp("device_add",
	    "\"driver\": \"pc-dimm\", \"id\": \"dimmcycle\", \"memdev\": \"hpcycle\"");
	ASSERT_LT(0, block_bytes());
	want = (256L << 20) / block_bytes();
	nb = wait_blocks(before, added, want, 60);
	ASSERT_EQ(want, nb) TH_LOG("%d of %d blocks appeared within 60 s of device_add", nb, want);
	block_pfns(added, &lo, &hi);
	ASSERT_EQ(0, set_blocks(added, "online_movable"));

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	s0 = op("ops_movable");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		churn_movable(c, lo, hi);
		_exit(0);
	}
	for (i = 0; i < OFFLINE_CYCLES; i++) {
		/* Time for the child to allocate in the online blocks. */
		usleep(200000);
		if (set_blocks(added, "offline") || set_blocks(added, "online_movable"))
			break;
	}
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	waitpid(pid, &status, 0);
	TH_LOG("%d cycles; the child: %ld rounds of %d pages, %ld in the cycled blocks %#lx-%#lx",
	       i, c->rounds, CHURN_PAGES, c->in_blocks, lo, hi);
	EXPECT_EQ(OFFLINE_CYCLES, i) TH_LOG("offlining or onlining failed in cycle %d", i + 1);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status) && !c->err)
		TH_LOG("the child failed (status %#x, ops error %d)", status, c->err);
	EXPECT_LT(0, c->in_blocks) TH_LOG("no round's pages lay in the cycled blocks");
	ops("free movable");
	EXPECT_SITE(op("ops_movable"), s0.bytes, s0.calls, "after the cycles");
	EXPECT_NO_NEGATIVE();
	munmap(c, sizeof(*c));

	ASSERT_EQ(0, set_blocks(added, "offline"));
	memory_blocks(now);
	qmp("device_del", "\"id\": \"dimmcycle\"");
	nb = wait_blocks(now, gone, -want, 60);
	EXPECT_EQ(want, nb) TH_LOG("%d of %d blocks removed within 60 s of device_del", nb, want);
	qmp("object-del", "\"id\": \"hpcycle\"");
}

/*
 * Memory hot-added through QEMU's monitor, used, offlined and removed,
 * twice: the second DIMM takes the first one's addresses, so its struct
 * pages (and page_ext) are built again where tagged pages were; counters
 * must be exact both times and no page may bring a stale index along
 * (the debug build checks every allocation for one). Needs a QEMU guest
 * with free memory slots (-m SIZE,slots=N,maxmem=MAX) whose host relays
 * the "#QMP " lines of this test's output to QEMU's monitor, and
 * ALLOC_TAG_HOTPLUG=1 set to say so.
 */
TEST_F_TIMEOUT(paths, memory_hotplug, 300)
{
	const char *why = no_hotplug();

	if (why)
		SKIP(return, "%s", why);
	hotplug_round(_metadata, 1, 256, 2048);
	hotplug_round(_metadata, 2, 256, 2048);
}

TEST_HARNESS_MAIN
