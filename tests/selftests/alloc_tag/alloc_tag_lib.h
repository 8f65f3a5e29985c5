/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the alloc_tag selftests share: /proc/allocinfo read into call
 * sites, the test modules (lib/test_alloc_tag.c, lib/test_alloc_tag_pages.c)
 * loaded and driven, and the reasons a machine cannot run a test.
 *
 * The test modules come from /lib/modules/$(uname -r), where
 * modules_install puts them (CONFIG_TEST_ALLOC_TAG=m), or from
 * $ALLOC_TAG_MODULES, a directory, when that is set.
 */
#ifndef ALLOC_TAG_LIB_H
#define ALLOC_TAG_LIB_H

#include <stddef.h>

#include "kselftest.h"

#define ALLOCINFO	"/proc/allocinfo"
#define PROFILING	"/proc/sys/vm/mem_profiling"
#define STORAGE		"/sys/kernel/debug/alloc_tag/storage"
#define OPS		"test_alloc_tag"
#define OPS_CTL		"/sys/kernel/debug/" OPS "/ctl"
#define PAGES_MOD	"test_alloc_tag_pages"
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_SPLIT	"/sys/kernel/debug/split_huge_pages"

/* Pages of noise tolerated at the kernel's shared anonymous fault site. */
#define ANON_SLACK	64

extern long page_size;

/* One line of /proc/allocinfo. */
struct tag {
	long long bytes;
	unsigned long long calls;
	char file[128];
	int line;
	char mod[64];
	char func[96];
};

struct allocinfo {
	struct tag *tags;
	int nr;
	char header[2][128];
	int bad;		/* lines that do not parse */
	char bad_line[256];	/* the first of them */
};

/* Sum of the lines of one call site (a function may hold several lines). */
struct site {
	long long bytes;
	long long calls;
	int lines;
};

/* /proc/allocinfo */
int read_allocinfo(struct allocinfo *ai);
void free_allocinfo(struct allocinfo *ai);
void settle(void);
struct site site_of(const struct allocinfo *ai, const char *mod, const char *func);
struct site site_now(const char *mod, const char *func);
struct site op(const char *func);
int negatives(char *msg, size_t len);
struct site migration_targets(void);
struct site anon_site(void);

/* Files */
char *read_file(const char *path, size_t *len);
int write_str(const char *path, const char *s);
int read_str(const char *path, char *buf, size_t len);
long read_long(const char *path);
long long field_of(const char *path, const char *key);

/* The test modules */
__printf(1, 2) int ops(const char *fmt, ...);
long ops_held(const char *kind);
int load_module(const char *name, const char *params);
int unload_module(const char *name);
int module_loaded(const char *name);

/* The machine */
int nr_page_orders(void);
int nr_nodes(void);
void no_thp(void);
char *anon_pages(long pages);
int pfns(char *p, long pages, long step, unsigned long long *pfn);

/* Why a test cannot run here, or NULL. */
const char *no_profiling(void);
const char *no_ops(void);
const char *no_pages_module(void);

#define EXPECT_SITE(_s, _bytes, _calls, _what) do {				\
	struct site __s = (_s);							\
	const char *__what = (_what);						\
	EXPECT_EQ((long long)(_bytes), __s.bytes) TH_LOG("%s: bytes", __what);	\
	EXPECT_EQ((long long)(_calls), __s.calls) TH_LOG("%s: calls", __what);	\
} while (0)

#define EXPECT_NEAR(_want, _got, _slack, _what) do {				\
	long long __w = (_want), __g = (_got), __sl = (_slack);		\
	EXPECT_TRUE(__g - __w >= -__sl && __g - __w <= __sl)			\
		TH_LOG("%s: want %lld (+-%lld), got %lld", _what, __w, __sl, __g); \
} while (0)

#define EXPECT_NO_NEGATIVE() do {						\
	char __m[1024];								\
	EXPECT_EQ(0, negatives(__m, sizeof(__m))) TH_LOG("negative: %s", __m);	\
} while (0)

#ifdef __KSELFTEST_HARNESS_H
/*
 * The tests that drive test_alloc_tag: skipped, with the reason, where
 * profiling is off or the module cannot be loaded; whatever a test left
 * held is freed after it.
 */
FIXTURE(paths) {
	int unused;
};

FIXTURE_SETUP(paths)
{
	const char *why = no_ops();

	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(paths)
{
	if (module_loaded(OPS))
		ops("free all");
}
#endif /* __KSELFTEST_HARNESS_H */

#endif /* ALLOC_TAG_LIB_H */
