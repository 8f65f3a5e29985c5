// SPDX-License-Identifier: GPL-2.0
/*
 * What the alloc_tag selftests share (alloc_tag_lib.h): /proc/allocinfo
 * read into call sites, the test modules loaded and driven, and the
 * reasons a machine cannot run a test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_tag_lib.h"

long page_size;

static void __attribute__((constructor)) init_page_size(void)
{
	page_size = sysconf(_SC_PAGESIZE);
}

char *read_file(const char *path, size_t *len)
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

int read_allocinfo(struct allocinfo *ai)
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

void free_allocinfo(struct allocinfo *ai)
{
	ai->tags = NULL;
}

/* Fault in what reading allocinfo and small files touches, and some stack. */
void settle(void)
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
struct site site_of(const struct allocinfo *ai, const char *mod, const char *func)
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

struct site site_now(const char *mod, const char *func)
{
	struct allocinfo ai;
	struct site s = { 0, 0, -1 };

	if (read_allocinfo(&ai))
		return s;
	s = site_of(&ai, mod, func);
	free_allocinfo(&ai);
	return s;
}

struct site op(const char *func)
{
	return site_now(OPS, func);
}

/* The lines with negative bytes, for the message; 0 when none. */
int negatives(char *msg, size_t len)
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

int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int read_str(const char *path, char *buf, size_t len)
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

long read_long(const char *path)
{
	char buf[64];

	if (read_str(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* "KEY: value" or "KEY value" of a file such as /proc/meminfo. */
long long field_of(const char *path, const char *key)
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

int ops(const char *fmt, ...)
{
	char cmd[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return write_str(OPS_CTL, cmd);
}

/* "KIND COUNT" of the module's ctl. */
long ops_held(const char *kind)
{
	return field_of(OPS_CTL, kind);
}

/*
 * The file of module @name: $ALLOC_TAG_MODULES/@name.ko when the
 * environment names a directory, else where modules_install puts it.
 */
static void module_path(const char *name, char *path, size_t len)
{
	const char *dir = getenv("ALLOC_TAG_MODULES");
	struct utsname u;

	if (dir && *dir) {
		snprintf(path, len, "%s/%s.ko", dir, name);
		return;
	}
	if (uname(&u))
		u.release[0] = '\0';
	snprintf(path, len, "/lib/modules/%s/kernel/lib/%s.ko", u.release, name);
}

/* modprobe @name @params: for a module installed compressed, or elsewhere. */
static int modprobe(const char *name, const char *params)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("modprobe", "modprobe", "-q", name, *params ? params : NULL, NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ENOENT;
}

/*
 * Load module @name with the parameters @params (one string, as
 * finit_module() takes them) unless it is loaded: finit_module() of its
 * file (module_path()), or, where that file does not exist and no
 * directory was named, modprobe. A negative errno when it cannot.
 */
int load_module(const char *name, const char *params)
{
	char path[256];
	int fd, ret = 0;

	module_path(name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		const char *dir = getenv("ALLOC_TAG_MODULES");

		ret = -errno;
		if (ret == -ENOENT && !(dir && *dir))
			return modprobe(name, params);
		return ret;
	}
	if (syscall(SYS_finit_module, fd, params, 0) && errno != EEXIST)
		ret = -errno;
	close(fd);
	return ret;
}

int unload_module(const char *name)
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

int module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

int nr_page_orders(void)
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

int nr_nodes(void)
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

/* The sites of the kernel functions @funcs (@n of them), summed. */
static struct site sites_sum(const char * const *funcs, size_t n)
{
	struct allocinfo ai;
	struct site s = { 0 }, one;
	size_t i;

	if (read_allocinfo(&ai))
		return s;
	for (i = 0; i < n; i++) {
		one = site_of(&ai, "", funcs[i]);
		s.bytes += one.bytes;
		s.calls += one.calls;
		s.lines += one.lines;
	}
	free_allocinfo(&ai);
	return s;
}

/* Every allocation site of a migration target, summed. */
struct site migration_targets(void)
{
	static const char * const funcs[] = {
		"compaction_alloc", "alloc_migration_target", "alloc_migration_target_by_mpol",
		"alloc_misplaced_dst_folio", "alloc_demote_folio",
	};

	return sites_sum(funcs, ARRAY_SIZE(funcs));
}

/*
 * Anonymous page faults: order 0 (folio_prealloc()) and mTHP sizes; where
 * the architecture has its own vma_alloc_zeroed_movable_folio() (arm64,
 * for MTE's tags), its order-0 pages are charged there instead.
 */
struct site anon_site(void)
{
	static const char * const funcs[] = {
		"folio_prealloc", "alloc_anon_folio", "vma_alloc_zeroed_movable_folio",
	};

	return sites_sum(funcs, ARRAY_SIZE(funcs));
}

/* Small pages only for this process (madvise() may be compiled out). */
void no_thp(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

/* Anonymous memory in small pages, every page written. */
char *anon_pages(long pages)
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
int pfns(char *p, long pages, long step, unsigned long long *pfn)
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

static int profiling_on(void)
{
	return read_long(PROFILING) == 1;
}

/* Why the tests cannot run here, or NULL: profiling must be on. */
const char *no_profiling(void)
{
	if (access(ALLOCINFO, R_OK))
		return "no " ALLOCINFO ": kernel without CONFIG_MEM_ALLOC_PROFILING";
	if (!profiling_on())
		return "memory allocation profiling is off: write 1 to " PROFILING
		       " or boot with sysctl.vm.mem_profiling=1";
	return NULL;
}

static char no_ops_reason[1024];

/* Why a test module cannot be loaded (@r, a negative errno), and the way out. */
static const char *cannot_load(const char *name, int r)
{
	char path[256];

	module_path(name, path, sizeof(path));
	snprintf(no_ops_reason, sizeof(no_ops_reason),
		 "cannot load %s (%s: %s): build the kernel with CONFIG_TEST_ALLOC_TAG=m and install its modules, or name their directory in ALLOC_TAG_MODULES",
		 name, path, strerror(-r));
	return no_ops_reason;
}

/* Why not, as no_profiling(), or test_alloc_tag cannot be loaded, or NULL. */
const char *no_ops(void)
{
	const char *why = no_profiling();
	int r;

	if (why)
		return why;
	if (!module_loaded(OPS)) {
		r = load_module(OPS, "");
		if (r)
			return cannot_load(OPS, r);
	}
	if (access(OPS_CTL, W_OK))
		return "no " OPS_CTL ": debugfs is not mounted on /sys/kernel/debug";
	return NULL;
}

/* Why test_alloc_tag_pages cannot be loaded and unloaded, or NULL. */
const char *no_pages_module(void)
{
	int r = load_module(PAGES_MOD, "counts=1");

	if (r)
		return cannot_load(PAGES_MOD, r);
	r = unload_module(PAGES_MOD);
	if (r) {
		snprintf(no_ops_reason, sizeof(no_ops_reason), "cannot unload %s: %s",
			 PAGES_MOD, strerror(-r));
		return no_ops_reason;
	}
	return NULL;
}
