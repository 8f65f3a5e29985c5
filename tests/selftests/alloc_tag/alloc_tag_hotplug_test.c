// SPDX-License-Identifier: GPL-2.0
/*
 * Page tags of hot-added memory: a DIMM hot-added, onlined movable, used
 * by test_alloc_tag, offlined and removed, twice at the same addresses.
 * The guest asks the host for each QEMU monitor command by printing a
 * "#QMP {json}" line, which the host relays to QEMU's QMP socket; the
 * environment says the host does (ALLOC_TAG_HOTPLUG=1), else the test
 * skips.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
	if (!getenv("ALLOC_TAG_HOTPLUG"))
		SKIP(return, "no monitor relay: %s",
		     "run in a QEMU guest with memory slots whose host relays the \"#QMP \" output lines to QEMU's monitor, with ALLOC_TAG_HOTPLUG=1");
	if (access(MEMORY_SYSFS "/block_size_bytes", R_OK))
		SKIP(return, "no " MEMORY_SYSFS ": kernel without CONFIG_MEMORY_HOTPLUG");
	hotplug_round(_metadata, 1, 256, 2048);
	hotplug_round(_metadata, 2, 256, 2048);
}

TEST_HARNESS_MAIN
