// SPDX-License-Identifier: GPL-2.0
/*
 * pftag_many: a module with 2048 allocation tags (32 lines of 64 kmalloc()
 * call sites, none of which runs). Loading it takes that many tag indices,
 * to fill a small index space (mem_profiling_idx_bits=) in tests.
 */
#include <linux/module.h>
#include <linux/slab.h>

static void *sink;
static int run;

#define SITE	do { if (run) sink = kmalloc(8, GFP_KERNEL); } while (0)
#define X4	SITE; SITE; SITE; SITE
#define X16	X4; X4; X4; X4
/* 64 tags on each line below */
#define X64	X16; X16; X16; X16

static noinline void pftag_many_sites(void)
{
	X64; X64; X64; X64; X64; X64; X64; X64;
	X64; X64; X64; X64; X64; X64; X64; X64;
	X64; X64; X64; X64; X64; X64; X64; X64;
	X64; X64; X64; X64; X64; X64; X64; X64;
}

static int __init pftag_many_init(void)
{
	pftag_many_sites();
	return 0;
}

static void __exit pftag_many_exit(void)
{
}

module_init(pftag_many_init);
module_exit(pftag_many_exit);
MODULE_DESCRIPTION("Many allocation tags for allocation profiling tests");
MODULE_LICENSE("GPL");
