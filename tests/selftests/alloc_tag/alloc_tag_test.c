// SPDX-License-Identifier: GPL-2.0
/*
 * Exact page accounting of memory allocation profiling (/proc/allocinfo),
 * whatever keeps the page tags (page->flags or page_ext).
 *
 * The kernel side is the test module pftag_ops (every page allocation path
 * from its own call site, driven through /sys/kernel/debug/pftag_ops/ctl);
 * userspace memory covers THP split, migration, compaction and reclaim.
 * Every expected byte and call count is derived from the sizes and counts
 * the test asks for. Counters are compared before and after, at the call
 * sites the test owns; at the kernel's shared anonymous fault site a few
 * pages of noise (this process's own stack and heap) are tolerated.
 *
 * Environment:
 *   ALLOC_TAG_MODULES   directory of pftag_ops.ko and pftag_pages.ko
 *                       (default /opt/pftag/modules)
 *   ALLOC_TAG_CYCLES    module load/unload cycles (default 200)
 *   ALLOC_TAG_STRESS    seconds of the concurrent stress test (default 10)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define ALLOCINFO	"/proc/allocinfo"
#define PROFILING	"/proc/sys/vm/mem_profiling"
#define STORAGE		"/sys/kernel/debug/alloc_tag/storage"
#define OPS_CTL		"/sys/kernel/debug/pftag_ops/ctl"
#define OPS		"pftag_ops"
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_SPLIT	"/sys/kernel/debug/split_huge_pages"
#define GIGANTIC	"/sys/kernel/mm/hugepages/hugepages-1048576kB"
#define HUGE_2M		"/sys/kernel/mm/hugepages/hugepages-2048kB"

/* Pages of noise tolerated at the kernel's shared anonymous fault site. */
#define ANON_SLACK	64

#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)

static long page_size;

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

static char *read_file(const char *path, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += r;
		if (cap - n < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static int parse_line(char *s, struct tag *t)
{
	char *tok, *save, *colon;
	int pos = 0;

	memset(t, 0, sizeof(*t));
	if (sscanf(s, "%lld %llu %n", &t->bytes, &t->calls, &pos) != 2 || !pos)
		return -1;
	tok = strtok_r(s + pos, " ", &save);
	if (!tok)
		return -1;
	colon = strrchr(tok, ':');
	if (!colon || colon == tok || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -1;
	*colon = '\0';
	snprintf(t->file, sizeof(t->file), "%s", tok);
	t->line = atoi(colon + 1);
	tok = strtok_r(NULL, " ", &save);
	if (tok && tok[0] == '[') {
		size_t l = strlen(tok);

		if (l < 3 || tok[l - 1] != ']')
			return -1;
		snprintf(t->mod, sizeof(t->mod), "%.*s", (int)(l - 2), tok + 1);
		tok = strtok_r(NULL, " ", &save);
	}
	if (!tok || strncmp(tok, "func:", 5) || !tok[5])
		return -1;
	snprintf(t->func, sizeof(t->func), "%s", tok + 5);
	/* Format 2.0 may add key:value pairs; each must have both halves. */
	while ((tok = strtok_r(NULL, " ", &save))) {
		colon = strchr(tok, ':');
		if (!colon || colon == tok || !colon[1])
			return -1;
	}
	return 0;
}

/*
 * The file and its lines are read into two buffers mapped once and
 * reused: reading allocinfo must not fault in new anonymous pages, which
 * would show at the anonymous fault sites the tests watch. Call settle()
 * at the start of a test (in its own process) to fault them in first.
 */
#define MAX_TAGS	16384
#define MAX_FILE	(4 << 20)
static char *file_buf;
static struct tag *tag_buf;

static int read_allocinfo(struct allocinfo *ai)
{
	char *line, *save, copy[256];
	int fd, i = 0;
	ssize_t r;
	size_t n = 0;

	memset(ai, 0, sizeof(*ai));
	if (!file_buf) {
		file_buf = mmap(NULL, MAX_FILE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		tag_buf = mmap(NULL, MAX_TAGS * sizeof(*tag_buf), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (file_buf == MAP_FAILED || tag_buf == MAP_FAILED)
			return -1;
	}
	fd = open(ALLOCINFO, O_RDONLY);
	if (fd < 0)
		return -1;
	while (n < MAX_FILE - 1 && (r = read(fd, file_buf + n, MAX_FILE - 1 - n)) > 0)
		n += r;
	close(fd);
	file_buf[n] = '\0';
	ai->tags = tag_buf;
	for (line = strtok_r(file_buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		if (i < 2) {
			snprintf(ai->header[i], sizeof(ai->header[i]), "%s", line);
			continue;
		}
		if (ai->nr == MAX_TAGS)
			return -1;
		snprintf(copy, sizeof(copy), "%s", line);
		if (parse_line(line, &ai->tags[ai->nr])) {
			if (!ai->bad++)
				snprintf(ai->bad_line, sizeof(ai->bad_line), "%s", copy);
			continue;
		}
		ai->nr++;
	}
	return 0;
}

static void free_allocinfo(struct allocinfo *ai)
{
	ai->tags = NULL;
}

static long long field_of(const char *path, const char *key);

/* Fault in what reading allocinfo and small files touches, and some stack. */
static void settle(void)
{
	char stack[64 << 10];
	struct allocinfo ai;

	memset(stack, 1, sizeof(stack));
	asm volatile("" : : "r"(stack) : "memory");
	if (read_allocinfo(&ai))
		return;
	memset(file_buf, 0, MAX_FILE);
	memset(tag_buf, 0, MAX_TAGS * sizeof(*tag_buf));
	read_allocinfo(&ai);
	free_allocinfo(&ai);
	field_of("/proc/meminfo", "MemTotal");
}

/* The lines of function @func ("" for any) of module @mod ("" for the kernel). */
static struct site site_of(const struct allocinfo *ai, const char *mod, const char *func)
{
	struct site s = { 0 };
	int i;

	for (i = 0; i < ai->nr; i++) {
		const struct tag *t = &ai->tags[i];

		if (strcmp(t->mod, mod) || (*func && strcmp(t->func, func)))
			continue;
		s.bytes += t->bytes;
		s.calls += t->calls;
		s.lines++;
	}
	return s;
}

static struct site site_now(const char *mod, const char *func)
{
	struct allocinfo ai;
	struct site s = { 0, 0, -1 };

	if (read_allocinfo(&ai))
		return s;
	s = site_of(&ai, mod, func);
	free_allocinfo(&ai);
	return s;
}

static struct site op(const char *func)
{
	return site_now(OPS, func);
}

/* The lines with negative bytes, for the message; 0 when none. */
static int negatives(char *msg, size_t len)
{
	struct allocinfo ai;
	int i, n = 0, off = 0;

	*msg = '\0';
	if (read_allocinfo(&ai))
		return -1;
	for (i = 0; i < ai.nr; i++) {
		struct tag *t = &ai.tags[i];

		if (t->bytes >= 0 && (long long)t->calls >= 0)
			continue;
		n++;
		if (off < (int)len - 1)
			off += snprintf(msg + off, len - off, "%lld %llu %s:%d [%s] func:%s; ",
					t->bytes, t->calls, t->file, t->line, t->mod, t->func);
	}
	free_allocinfo(&ai);
	return n;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static long read_long(const char *path)
{
	char buf[64];

	if (read_str(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* "KEY: value" or "KEY value" of a file such as /proc/meminfo. */
static long long field_of(const char *path, const char *key)
{
	char *buf = read_file(path, NULL), *p;
	long long v = -1;
	size_t kl = strlen(key);

	if (!buf)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, kl) && (p[kl] == ':' || p[kl] == ' ')) {
			v = atoll(p + kl + 1);
			break;
		}
	}
	free(buf);
	return v;
}

static int ops(const char *fmt, ...)
{
	char cmd[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return write_str(OPS_CTL, cmd);
}

/* "KIND COUNT" of the module's ctl. */
static long ops_held(const char *kind)
{
	return field_of(OPS_CTL, kind);
}

static const char *modules_dir(void)
{
	const char *d = getenv("ALLOC_TAG_MODULES");

	return d && *d ? d : "/opt/pftag/modules";
}

static int load_module(const char *name, const char *params)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s.ko", modules_dir(), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0) && errno != EEXIST)
		ret = -errno;
	close(fd);
	return ret;
}

static int unload_module(const char *name)
{
	int i;

	/* A reader of the debugfs file may hold the module for a moment. */
	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, name, O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

static int module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

static int nr_page_orders(void)
{
	char *buf = read_file("/proc/buddyinfo", NULL), *p, *nl;
	int n = 0;

	if (!buf)
		return -1;
	/* "Node 0, zone   Normal   c0 c1 ... cMAX" */
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	p = strstr(buf, "zone");
	if (p) {
		strtok(p, " ");		/* "zone" */
		strtok(NULL, " ");	/* its name */
		while (strtok(NULL, " "))
			n++;
	}
	free(buf);
	return n;
}

static int nr_nodes(void)
{
	char path[64];
	int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
		if (access(path, F_OK))
			return n;
		n++;
	}
}

/* Every allocation site of a migration target, summed. */
static struct site migration_targets(void)
{
	static const char * const funcs[] = {
		"compaction_alloc", "alloc_migration_target", "alloc_migration_target_by_mpol",
		"alloc_misplaced_dst_folio", "alloc_demote_folio",
	};
	struct allocinfo ai;
	struct site s = { 0 }, one;
	unsigned int i;

	if (read_allocinfo(&ai))
		return s;
	for (i = 0; i < ARRAY_SIZE(funcs); i++) {
		one = site_of(&ai, "", funcs[i]);
		s.bytes += one.bytes;
		s.calls += one.calls;
		s.lines += one.lines;
	}
	free_allocinfo(&ai);
	return s;
}

/* Anonymous page faults: order 0 (folio_prealloc()) and mTHP sizes. */
static struct site anon_site(void)
{
	struct allocinfo ai;
	struct site s = { 0 }, m;

	if (read_allocinfo(&ai))
		return s;
	s = site_of(&ai, "", "folio_prealloc");
	m = site_of(&ai, "", "alloc_anon_folio");
	s.bytes += m.bytes;
	s.calls += m.calls;
	s.lines += m.lines;
	free_allocinfo(&ai);
	return s;
}

/* Small pages only for this process (madvise() may be compiled out). */
static void no_thp(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

/* Anonymous memory in small pages, every page written. */
static char *anon_pages(long pages)
{
	char *p = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i;

	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < pages; i++)
		p[i * page_size] = 1 + (i & 0x7f);
	return p;
}

/* The page frame of each page of @p, from /proc/self/pagemap (0: none). */
static int pfns(char *p, long pages, long step, unsigned long long *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	long i;

	if (fd < 0)
		return -1;
	for (i = 0; i < pages; i += step) {
		unsigned long long e = 0;
		off_t off = ((unsigned long)(p + i * page_size) / page_size) * 8;

		if (pread(fd, &e, 8, off) != 8)
			e = 0;
		pfn[i / step] = (e >> 63) & 1 ? e & ((1ULL << 55) - 1) : 0;
	}
	close(fd);
	return 0;
}

#define EXPECT_SITE(_s, _bytes, _calls, _what) do {				\
	struct site __s = (_s);							\
	EXPECT_EQ((long long)(_bytes), __s.bytes) TH_LOG("%s: bytes", _what);	\
	EXPECT_EQ((long long)(_calls), __s.calls) TH_LOG("%s: calls", _what);	\
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

static int profiling_on(void)
{
	return read_long(PROFILING) == 1;
}

/* Why the tests cannot run here, or NULL: profiling must be on. */
static const char *no_profiling(void)
{
	if (access(ALLOCINFO, R_OK))
		return "no " ALLOCINFO ": kernel without CONFIG_MEM_ALLOC_PROFILING";
	if (!profiling_on())
		return "memory allocation profiling is off (" PROFILING ")";
	return NULL;
}

static char no_ops_reason[256];

/* The same, and pftag_ops must be loaded (it is loaded here if not). */
static const char *no_ops(void)
{
	const char *why = no_profiling();
	int r;

	if (why)
		return why;
	if (!module_loaded(OPS)) {
		r = load_module(OPS, "");
		if (r) {
			snprintf(no_ops_reason, sizeof(no_ops_reason), "cannot load %s/%s.ko: %s",
				 modules_dir(), OPS, strerror(-r));
			return no_ops_reason;
		}
	}
	if (access(OPS_CTL, W_OK))
		return "no " OPS_CTL " (debugfs not mounted?)";
	return NULL;
}

/* ------------------------------------------------------------------ */

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
	const char *cmd;	/* pftag_ops command */
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

/* -------- the other paths of pftag_ops, each from its own site -------- */

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

/* -------- memory hotplug -------- */

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

/* "movable_pfns FIRST LAST" of pftag_ops's ctl. */
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
 * (the debug build checks every allocation for one). Needs a guest booted
 * with memory slots and the monitor relay (scripts/boot.sh -H), which
 * sets ALLOC_TAG_HOTPLUG.
 */
TEST_F_TIMEOUT(paths, memory_hotplug, 300)
{
	if (!getenv("ALLOC_TAG_HOTPLUG"))
		SKIP(return, "no hotplug slots and monitor relay (%s)",
		     "boot with scripts/boot.sh -H and ALLOC_TAG_HOTPLUG=1");
	if (access(MEMORY_SYSFS "/block_size_bytes", R_OK))
		SKIP(return, "no " MEMORY_SYSFS ": kernel without CONFIG_MEMORY_HOTPLUG");
	hotplug_round(_metadata, 1, 256, 2048);
	hotplug_round(_metadata, 2, 256, 2048);
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

/* -------- modules -------- */

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

/* -------- stress -------- */

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
		if (!load_module("pftag_pages", "counts=1,1,1") &&
		    !unload_module("pftag_pages"))
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
 * Every page path at once for @seconds: pftag_ops kinds, migration, modules.
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
 * Wait for the workers, free what pftag_ops holds, and expect every site
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
	TH_LOG("rounds: pftag_ops %lu + %lu, migration %lu, module load+unload %lu",
	       worker_rounds[0], worker_rounds[1], worker_rounds[2], worker_rounds[3]);
	ASSERT_EQ(0, ops("free all"));
	EXPECT_SITE(op(""), w.ops.bytes, w.ops.calls, "every pftag_ops site back to its start");
	EXPECT_EQ(0, module_loaded("pftag_pages"));
	EXPECT_SITE(site_now("pftag_pages", ""), 0, 0, "pftag_pages gone");
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
	char buf[16];
	int i;

	if (read_str(PROFILING, buf, sizeof(buf)) || write_str(PROFILING, "1"))
		SKIP(return, PROFILING " is read-only (CONFIG_MEM_ALLOC_PROFILING_DEBUG)");
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
	 * stress test's workers: every pftag_ops kind, migration,
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

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	return test_harness_run(argc, argv);
}
