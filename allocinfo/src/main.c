// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo: read, compare, record and export /proc/allocinfo.
 *
 * This file holds the commands that work on one or two captures: top,
 * tree, diff and export. record, report and plot are in db.c and
 * plot.c.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"

/* ---- options shared by the commands ---- */

/* "mm/" is a directory: everything under it, as the glob mm/ then '*' */
static const char *dir_glob(const char *arg)
{
	size_t n = strlen(arg);
	char *p;

	if (!n || arg[n - 1] != '/')
		return arg;
	p = xmalloc(n + 2);
	memcpy(p, arg, n);
	strcpy(p + n, "*");
	ai_keep(p);
	return p;
}

/* GLOB includes, !GLOB excludes */
static void globs_add(struct ai_globs *g, const char *arg)
{
	int exc = arg[0] == '!';
	size_t *n = exc ? &g->nexc : &g->ninc;

	if (exc && !arg[1])
		ai_usage_err("%s: '!' wants a pattern after it ('!mm/*')", ai_cmd);
	if (*n == AI_MAX_GLOBS)
		ai_usage_err("%s: at most %d patterns per filter", ai_cmd, AI_MAX_GLOBS);
	(exc ? g->exc : g->inc)[(*n)++] = arg + exc;
}

static int globs_match(const struct ai_globs *g, const char *s)
{
	size_t i;

	for (i = 0; i < g->nexc; i++)
		if (!fnmatch(g->exc[i], s, 0))
			return 0;
	if (!g->ninc)
		return 1;
	for (i = 0; i < g->ninc; i++)
		if (!fnmatch(g->inc[i], s, 0))
			return 1;
	return 0;
}

int ai_common_opt(struct ai_common *co, int c, const char *arg)
{
	static const struct { int c; unsigned bit; } bits[] = {
		{ 'f', CO_INPUT }, { 'n', CO_LIMIT }, { 'm', CO_MIN },
		{ 'b', CO_EXACT }, { 'k', CO_KEEP }, { 'H', CO_NOHDR },
		{ 'q', CO_QUIET }, { OPT_MODULE, CO_FILTER },
		{ OPT_PATH, CO_FILTER }, { OPT_FUNC, CO_FILTER },
	};
	size_t i;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (bits[i].c == c)
			co->given |= bits[i].bit;
	switch (c) {
	case 'f':
		co->input = arg;
		return 1;
	case 'n':
		if (ai_parse_u64(arg, &co->limit) < 0)
			ai_usage_err("-n wants a number, not '%s'", arg);
		return 1;
	case 'm':
		if (ai_parse_size(arg, &co->min) < 0)
			ai_usage_err("--min wants a size such as 4096, 64K or 1.5M, not '%s'", arg);
		co->has_min = 1;
		return 1;
	case 'b':
		co->exact = 1;
		return 1;
	case 'k':
		co->keep_dups = 1;
		return 1;
	case 'H':
		co->no_header = 1;
		return 1;
	case 'q':
		co->quiet = 1;
		return 1;
	case OPT_MODULE:
		globs_add(&co->mod, arg);
		return 1;
	case OPT_PATH:
		globs_add(&co->path, dir_glob(arg));
		return 1;
	case OPT_FUNC:
		globs_add(&co->func, arg);
		return 1;
	}
	return 0;
}

/* An option given to a command (or a kind of report) that does not use it. */
void ai_not_here(const char *opt, const char *what)
{
	ai_usage_err("%s: %s does not apply to %s", ai_cmd, opt, what);
}

void ai_only(const struct ai_common *co, unsigned allowed, const char *what)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ CO_INPUT, "-f/--input" }, { CO_LIMIT, "-n" },
		{ CO_MIN, "-m/--min" }, { CO_EXACT, "-b/--bytes" },
		{ CO_KEEP, "-k/--keep-dups" }, { CO_NOHDR, "-H/--no-header" },
		{ CO_QUIET, "-q/--quiet" },
		{ CO_FILTER, "--module/--path/--func" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (co->given & names[i].bit & ~allowed)
			ai_not_here(names[i].name, what);
}

const char *ai_cmd;

void ai_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ai_vwarn(fmt, ap);
	va_end(ap);
	if (ai_cmd)
		fprintf(stderr, "(try '%s %s --help')\n", ai_prog, ai_cmd);
	else
		fprintf(stderr, "(try '%s --help')\n", ai_prog);
	exit(AI_EXIT_USAGE);
}

/*
 * getopt_long() without abbreviations: GNU getopt takes any unique
 * prefix, so "--by" in a command without --by became "--bytes". A long
 * option must be spelled in full.
 */
int ai_getopt(int argc, char **argv, const char *so, const struct option *lo)
{
	int li = -1, c = getopt_long(argc, argv, so, lo, &li);
	const char *a;
	size_t n;

	if (c == -1 || li < 0 || optind < 1)
		return c;
	a = argv[optind - 1];
	if (optarg && optarg == argv[optind - 1] && optind >= 2)
		a = argv[optind - 2];
	if (strncmp(a, "--", 2))
		return c;
	n = strcspn(a + 2, "=");
	if (n != strlen(lo[li].name) || strncmp(a + 2, lo[li].name, n))
		ai_usage_err("%s: unknown option '%.*s' (long options are not abbreviated)",
			     ai_cmd ? ai_cmd : "allocinfo", (int)n + 2, a);
	return c;
}


int ai_match(const struct ai_common *co, const struct ai_tag *t)
{
	if (co->has_min && t->bytes < co->min)
		return 0;
	if (!globs_match(&co->mod, ai_module_name(t)) ||
	    !globs_match(&co->path, t->file) || !globs_match(&co->func, t->func))
		return 0;
	return 1;
}

struct ai_parse_opts ai_popts(const struct ai_common *co)
{
	struct ai_parse_opts o = {
		.err = co->quiet ? NULL : stderr,
		.keep_dups = co->keep_dups,
		.max_msgs = 1000,
	};
	return o;
}

void ai_load_or_die(struct ai_snap *s, const char *path,
		    const struct ai_common *co)
{
	struct ai_parse_opts o = ai_popts(co);

	if (ai_load(s, path, &o) < 0)
		exit(AI_EXIT_FATAL);
}

int ai_status(const struct ai_snap *s)
{
	return s->skipped || s->warnings ? AI_EXIT_SKIPPED : AI_EXIT_OK;
}

struct ai_tag **ai_select(const struct ai_snap *s, const struct ai_common *co,
			  size_t *np)
{
	struct ai_tag **v = xmalloc((s->ntags + 1) * sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < s->ntags; i++)
		if (ai_match(co, &s->tags[i]))
			v[n++] = &s->tags[i];
	*np = n;
	return v;
}

static int cmp_lineno(const void *a, const void *b)
{
	const struct ai_tag *x = *(struct ai_tag *const *)a;
	const struct ai_tag *y = *(struct ai_tag *const *)b;

	return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

static int cmp_name(const void *a, const void *b)
{
	return ai_tag_cmp_name(*(struct ai_tag *const *)a,
			       *(struct ai_tag *const *)b);
}

/*
 * Sorting by size or calls compares numbers held in a compact key array
 * instead of following each pointer: half the time on 100,000 tags.
 */
struct sort_key {
	uint64_t k1, k2;	/* descending */
	uint32_t lineno;	/* ascending */
	struct ai_tag *t;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 > y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 > y->k2 ? -1 : 1;
	if (x->lineno != y->lineno)
		return x->lineno < y->lineno ? -1 : 1;
	return ai_tag_cmp_name(x->t, y->t);
}

/* int64 to uint64 keeping the order */
static uint64_t ord64(int64_t v)
{
	return (uint64_t)v ^ (1ULL << 63);
}

int ai_sort_tags(struct ai_tag **v, size_t n, const char *key)
{
	struct sort_key *k;
	size_t i;
	int by_size = !strcmp(key, "size") || !strcmp(key, "bytes");

	if (!strcmp(key, "name")) {
		qsort(v, n, sizeof(*v), cmp_name);
		return 0;
	}
	if (!by_size && strcmp(key, "calls"))
		return -1;
	k = xmalloc((n + 1) * sizeof(*k));
	for (i = 0; i < n; i++) {
		k[i].k1 = by_size ? ord64(v[i]->bytes) : v[i]->calls;
		k[i].k2 = by_size ? v[i]->calls : ord64(v[i]->bytes);
		k[i].lineno = v[i]->lineno;
		k[i].t = v[i];
	}
	qsort(k, n, sizeof(*k), cmp_key);
	for (i = 0; i < n; i++)
		v[i] = k[i].t;
	free(k);
	return 0;
}

static void tag_marks(FILE *f, const struct ai_tag *t)
{
	if (t->nlines > 1)
		fprintf(f, "  (%u lines)", t->nlines);
	if (t->flags & AI_F_NEGATIVE)
		fputs("  NEGATIVE", f);
	if (t->flags & AI_F_SATURATED)
		fputs("  CLAMPED", f);
}

/* Print tags as a table; shared with `report top`. */
void ai_print_tags(FILE *f, struct ai_tag **v, size_t n, size_t total_n,
		   const struct ai_common *co)
{
	size_t i, shown = co->limit && co->limit < n ? co->limit : n;
	int w = co->exact ? 15 : 10;
	__int128 sum = 0;
	unsigned __int128 calls = 0;
	size_t neg = 0;
	char b[64];

	if (!co->no_header)
		fprintf(f, "%*s %10s  %s\n", w, "SIZE", "CALLS", "TAG");
	for (i = 0; i < n; i++) {
		sum += v[i]->bytes;
		calls += v[i]->calls;
		neg += v[i]->bytes < 0;
		if (i >= shown)
			continue;
		fprintf(f, "%*s %10llu  ", w,
			ai_fmt_size(v[i]->bytes, co->exact, b, sizeof(b)),
			(unsigned long long)v[i]->calls);
		ai_fmt_tag(f, v[i]);
		tag_marks(f, v[i]);
		fputc('\n', f);
	}
	if (!co->no_header) {
		fprintf(f, "%*s %10llu  total of %zu tag%s", w,
			ai_fmt_size(sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ?
				    INT64_MIN : (int64_t)sum, co->exact, b, sizeof(b)),
			calls > UINT64_MAX ? UINT64_MAX : (unsigned long long)calls,
			n, n == 1 ? "" : "s");
		if (n != total_n)
			fprintf(f, " matching (of %zu)", total_n);
		if (shown != n)
			fprintf(f, ", %zu shown", shown);
		if (neg)
			fprintf(f, ", %zu NEGATIVE (broken accounting)", neg);
		fputc('\n', f);
	}
}

/* ---- top ---- */

static const char top_help[] =
"usage: allocinfo top [OPTIONS]\n"
"Show the allocation tags that hold the most memory.\n"
"\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -n N               show N tags (default 20; 0 = all)\n"
"  -s, --sort KEY     size (default), calls or name\n"
"  -m, --min SIZE     only tags holding at least SIZE (4096, 64K, 1.5M)\n"
"      --module GLOB  only tags of modules matching GLOB (built-in code\n"
"                     is module 'vmlinux')\n"
"      --path GLOB    only tags whose source file matches GLOB ('mm/*';\n"
"                     'mm/' is the same: everything under mm/)\n"
"      --func GLOB    only tags whose function matches GLOB\n"
"                     A filter given several times keeps the tags that\n"
"                     match any of its patterns; '!GLOB' drops the tags\n"
"                     that match GLOB (--module '!vmlinux').\n"
"  -b, --bytes        exact byte counts instead of KiB/MiB/GiB\n"
"  -k, --keep-dups    list repeated file:line func lines apart (default:\n"
"                     summed, marked '(N lines)')\n"
"  -H, --no-header    no column header and no total line\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n"
"\n"
"Marks: NEGATIVE = negative bytes (broken kernel accounting); CLAMPED =\n"
"a sum of duplicates overflowed 64 bits. Exit: 0 ok, 1 fatal, 2 usage,\n"
"3 some input lines were skipped.\n";

#define COMMON_LONGOPTS \
	{ "input", required_argument, NULL, 'f' }, \
	{ "min", required_argument, NULL, 'm' }, \
	{ "bytes", no_argument, NULL, 'b' }, \
	{ "keep-dups", no_argument, NULL, 'k' }, \
	{ "no-header", no_argument, NULL, 'H' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "module", required_argument, NULL, OPT_MODULE }, \
	{ "path", required_argument, NULL, OPT_PATH }, \
	{ "func", required_argument, NULL, OPT_FUNC }, \
	{ "help", no_argument, NULL, 'h' }
#define COMMON_SHORTOPTS "f:n:m:bkHqh"

static void help(const char *text)
{
	fputs(text, stdout);
	exit(AI_EXIT_OK);
}

static int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "sort", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { .limit = 20 };
	const char *sort = "size";
	struct ai_snap s;
	struct ai_tag **v;
	size_t n;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "s:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 's')
			sort = optarg;
		else if (c == 'h')
			help(top_help);
		else
			ai_usage_err("top: bad option");
	}
	if (optind < argc)
		ai_usage_err("top: unexpected argument '%s'", argv[optind]);
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (ai_sort_tags(v, n, sort) < 0)
		ai_usage_err("top: --sort wants size, calls or name, not '%s'", sort);
	ai_print_tags(stdout, v, n, s.ntags, &co);
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

/* ---- tree ---- */

static const char tree_help[] =
"usage: allocinfo tree [OPTIONS]\n"
"Sum the memory by source path prefix, by module or by subsystem.\n"
"\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"      --by KEY       path (default): a tree of directories and files;\n"
"                     module: one line per module ('vmlinux' = built in);\n"
"                     subsys: one line per top-level directory (mm/, fs/,\n"
"                     net/, ...); drivers/, arch/ and sound/ are split one\n"
"                     level further (drivers/gpu/, arch/x86/)\n"
"  -d, --depth N      path levels to show (default 2)\n"
"  -n N               at most N entries under each node (default 0 = all)\n"
"  -m, --min SIZE     only count tags holding at least SIZE\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only count the tags that match (see 'top --help')\n"
"  -b, --bytes        exact byte counts\n"
"  -H, --no-header    no column header and no total line\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n";

struct group {
	char *name;
	size_t parent;	/* index + 1; 0 = top level */
	int depth;
	int64_t bytes;
	uint64_t calls;
	size_t tags;
};

struct groups {
	struct group *g;
	size_t n, cap;
	struct ai_hmap m;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static size_t group_get(struct groups *gs, const char *name, size_t parent,
			int depth)
{
	size_t k;

	if ((gs->n + 1) * 2 > gs->m.mask) {
		struct ai_hmap nm;
		size_t i;

		ai_hmap_init(&nm, (gs->n + 1) * 2);
		for (i = 0; i < gs->n; i++) {
			k = str_hash(gs->g[i].name) & nm.mask;
			while (nm.slot[k])
				k = (k + 1) & nm.mask;
			nm.slot[k] = i + 1;
		}
		ai_hmap_free(&gs->m);
		gs->m = nm;
	}
	k = str_hash(name) & gs->m.mask;
	while (gs->m.slot[k]) {
		if (!strcmp(gs->g[gs->m.slot[k] - 1].name, name))
			return gs->m.slot[k] - 1;
		k = (k + 1) & gs->m.mask;
	}
	if (gs->n == gs->cap) {
		gs->cap = gs->cap ? gs->cap * 2 : 64;
		gs->g = xrealloc(gs->g, gs->cap * sizeof(*gs->g));
	}
	gs->g[gs->n] = (struct group){
		.name = xstrdup(name), .parent = parent, .depth = depth,
	};
	gs->m.slot[k] = ++gs->n;
	return gs->n - 1;
}

static void group_add(struct group *g, const struct ai_tag *t)
{
	if (__builtin_add_overflow(g->bytes, t->bytes, &g->bytes))
		g->bytes = t->bytes < 0 ? INT64_MIN : INT64_MAX;
	if (__builtin_add_overflow(g->calls, t->calls, &g->calls))
		g->calls = UINT64_MAX;
	g->tags++;
}

static const struct group *sort_base;

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = &sort_base[*(const size_t *)a];
	const struct group *y = &sort_base[*(const size_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct tree_out {
	struct groups *gs;
	size_t *order;		/* groups sorted by parent, then size */
	size_t *first;		/* first[p]: start of p's children in order */
	const struct ai_common *co;
	int64_t total;
};

static void print_group(struct tree_out *to, const struct group *g)
{
	char b[64], share[16];

	if (to->total > 0)
		snprintf(share, sizeof(share), "%5.1f%%",
			 100.0 * (double)g->bytes / (double)to->total);
	else
		snprintf(share, sizeof(share), "%6s", "-");
	printf("%*s %s %10llu %6zu  %*s%s\n", to->co->exact ? 15 : 10,
	       ai_fmt_size(g->bytes, to->co->exact, b, sizeof(b)), share,
	       (unsigned long long)g->calls, g->tags, 2 * (g->depth - 1), "",
	       g->name);
}

static void print_children(struct tree_out *to, size_t parent)
{
	size_t i, shown = 0;

	for (i = to->first[parent]; i < to->gs->n; i++) {
		const struct group *g = &to->gs->g[to->order[i]];

		if (g->parent != parent)
			break;
		if (to->co->limit && shown++ >= to->co->limit)
			break;
		print_group(to, g);
		print_children(to, to->order[i] + 1);
	}
}

static int cmd_tree(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "depth", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	const char *by = "path";
	uint64_t depth = 2;
	struct groups gs = { 0 };
	struct group all = { .name = "total", .depth = 1 };
	struct tree_out to = { .gs = &gs, .co = &co };
	struct ai_snap s;
	size_t i, ntags;
	struct ai_tag **v;
	char *buf;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "d:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == OPT_BY)
			by = optarg;
		else if (c == 'd') {
			if (ai_parse_u64(optarg, &depth) < 0 || !depth || depth > 64)
				ai_usage_err("tree: --depth wants 1..64, not '%s'", optarg);
		} else if (c == 'h')
			help(tree_help);
		else
			ai_usage_err("tree: bad option");
	}
	if (optind < argc)
		ai_usage_err("tree: unexpected argument '%s'", argv[optind]);
	if (strcmp(by, "path") && strcmp(by, "module") && strcmp(by, "subsys"))
		ai_usage_err("tree: --by wants path, module or subsys, not '%s'", by);

	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &ntags);
	ai_hmap_init(&gs.m, 64);
	buf = NULL;
	for (i = 0; i < ntags; i++) {
		const struct ai_tag *t = v[i];
		size_t len = strlen(t->file), parent = 0;

		group_add(&all, t);
		buf = xrealloc(buf, len + 2);
		if (!strcmp(by, "module")) {
			size_t g = group_get(&gs, ai_module_name(t), 0, 1);

			group_add(&gs.g[g], t);
		} else {
			/* walk the path components, skipping empty ones */
			const char *p = t->file;
			size_t bl = 0;
			uint64_t d = 0, want = depth;
			int subsys = !strcmp(by, "subsys");

			if (subsys) {
				want = 1;
				while (*p == '/')
					p++;
				if (!strncmp(p, "drivers/", 8) || !strncmp(p, "arch/", 5) ||
				    !strncmp(p, "sound/", 6))
					want = 2;
			}
			while (*p && d < want) {
				const char *e;
				size_t g;

				while (*p == '/')
					p++;
				if (!*p)
					break;
				e = p + strcspn(p, "/");
				if (subsys && d == 1 && !*e)
					break;	/* drivers/foo.c: stays in drivers/ */
				memcpy(buf + bl, p, e - p);
				bl += e - p;
				if (*e == '/')
					buf[bl++] = '/';
				buf[bl] = '\0';
				d++;
				p = e;
				if (subsys && d < want)
					continue;
				g = group_get(&gs, buf, parent, subsys ? 1 : d);
				group_add(&gs.g[g], t);
				parent = g + 1;
			}
			if (subsys && d == 1 && want == 2) {
				size_t g = group_get(&gs, buf, 0, 1);

				group_add(&gs.g[g], t);
			}
		}
	}
	free(buf);

	to.order = xmalloc((gs.n + 1) * sizeof(*to.order));
	to.first = xmalloc((gs.n + 1) * sizeof(*to.first));
	for (i = 0; i < gs.n; i++)
		to.order[i] = i;
	sort_base = gs.g;
	qsort(to.order, gs.n, sizeof(*to.order), cmp_group);
	for (i = 0; i <= gs.n; i++)
		to.first[i] = gs.n;
	for (i = gs.n; i-- > 0;)
		to.first[gs.g[to.order[i]].parent] = i;
	to.total = all.bytes;

	if (!co.no_header) {
		printf("%*s %6s %10s %6s  %s\n", co.exact ? 15 : 10, "SIZE",
		       "SHARE", "CALLS", "TAGS", !strcmp(by, "module") ? "MODULE" :
		       !strcmp(by, "subsys") ? "SUBSYSTEM" : "PATH");
		print_group(&to, &all);
	}
	print_children(&to, 0);

	for (i = 0; i < gs.n; i++)
		free(gs.g[i].name);
	free(gs.g);
	free(to.order);
	free(to.first);
	ai_hmap_free(&gs.m);
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

/* ---- diff ---- */

static const char diff_help[] =
"usage: allocinfo diff [OPTIONS] OLD NEW\n"
"Compare two captures ('-' for stdin): the change of each tag in bytes\n"
"and calls, the largest growth first. Tags only in NEW are marked 'new',\n"
"tags only in OLD 'gone'; unchanged tags are left out.\n"
"\n"
"  -n N               show N tags (default 0 = all that changed)\n"
"  -s, --sort KEY     growth (default), shrink, abs (largest change either\n"
"                     way), calls (growth in calls) or name\n"
"  -a, --all          also list the tags that did not change\n"
"  -m, --min SIZE     only tags whose change is at least SIZE either way\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only the tags that match (see 'top --help')\n"
"  -b, --bytes        exact byte counts\n"
"  -H, --no-header    no column header and no total line\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n";

struct delta {
	const struct ai_tag *o, *n, *t;	/* t: whichever exists */
	__int128 db;
	__int128 dc;
};

static int cmp_growth(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	if (x->db != y->db)
		return x->db > y->db ? -1 : 1;
	if (x->dc != y->dc)
		return x->dc > y->dc ? -1 : 1;
	return ai_tag_cmp_name(x->t, y->t);
}

static int cmp_shrink(const void *a, const void *b)
{
	return -cmp_growth(a, b);
}

static int cmp_abs(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	__int128 ax = x->db < 0 ? -x->db : x->db;
	__int128 ay = y->db < 0 ? -y->db : y->db;

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return cmp_growth(a, b);
}

static int cmp_dcalls(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	if (x->dc != y->dc)
		return x->dc > y->dc ? -1 : 1;
	return cmp_growth(a, b);
}

static int cmp_dname(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	return ai_tag_cmp_name(x->t, y->t);
}

static int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "sort", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 }, fco;
	const char *sort = "growth";
	int (*cmp)(const void *, const void *);
	struct ai_snap a, b;
	struct ai_hmap m;
	struct delta *d;
	unsigned char *seen;
	size_t i, nd = 0, nnew = 0, ngone = 0, nchg = 0, shown = 0;
	__int128 ot = 0, nt = 0;
	int all = 0, c, w;
	char b1[64], b2[64], b3[64];

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "s:a", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 's')
			sort = optarg;
		else if (c == 'a')
			all = 1;
		else if (c == 'h')
			help(diff_help);
		else
			ai_usage_err("diff: bad option");
	}
	ai_only(&co, CO_ALL & ~(CO_INPUT | CO_KEEP),
		"diff (it reads OLD and NEW, and always sums duplicates)");
	if (argc - optind != 2)
		ai_usage_err("diff: wants two inputs, OLD and NEW");
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		ai_usage_err("diff: only one of OLD and NEW can be stdin");
	if (!strcmp(sort, "growth"))
		cmp = cmp_growth;
	else if (!strcmp(sort, "shrink"))
		cmp = cmp_shrink;
	else if (!strcmp(sort, "abs"))
		cmp = cmp_abs;
	else if (!strcmp(sort, "calls"))
		cmp = cmp_dcalls;
	else if (!strcmp(sort, "name"))
		cmp = cmp_dname;
	else
		ai_usage_err("diff: --sort wants growth, shrink, abs, calls or name");
	fco = co;
	fco.has_min = 0;	/* --min applies to the change, below */

	ai_load_or_die(&a, argv[optind], &co);
	ai_load_or_die(&b, argv[optind + 1], &co);

	ai_hmap_init(&m, a.ntags);
	for (i = 0; i < a.ntags; i++) {
		size_t k = ai_tag_hash(&a.tags[i]) & m.mask;

		while (m.slot[k])
			k = (k + 1) & m.mask;
		m.slot[k] = i + 1;
	}
	seen = xcalloc(a.ntags + 1, 1);
	d = xmalloc((a.ntags + b.ntags + 1) * sizeof(*d));
	for (i = 0; i < b.ntags; i++) {
		const struct ai_tag *t = &b.tags[i], *o = NULL;
		size_t k = ai_tag_hash(t) & m.mask;

		while (m.slot[k]) {
			if (ai_tag_same(&a.tags[m.slot[k] - 1], t)) {
				o = &a.tags[m.slot[k] - 1];
				seen[m.slot[k] - 1] = 1;
				break;
			}
			k = (k + 1) & m.mask;
		}
		d[nd++] = (struct delta){
			.o = o, .n = t, .t = t,
			.db = (__int128)t->bytes - (o ? o->bytes : 0),
			.dc = (__int128)t->calls - (o ? o->calls : 0),
		};
	}
	for (i = 0; i < a.ntags; i++)
		if (!seen[i])
			d[nd++] = (struct delta){
				.o = &a.tags[i], .t = &a.tags[i],
				.db = -(__int128)a.tags[i].bytes,
				.dc = -(__int128)a.tags[i].calls,
			};
	qsort(d, nd, sizeof(*d), cmp);

	w = co.exact ? 15 : 10;
	if (!co.no_header)
		printf("%*s %11s %*s %*s %-4s  %s\n", w, "DELTA", "CALLS", w, "OLD",
		       w, "NEW", "", "TAG");
	for (i = 0; i < nd; i++) {
		const struct delta *x = &d[i];
		const char *st = !x->o ? "new" : !x->n ? "gone" : "";

		if (co.has_min && (x->db < 0 ? -x->db : x->db) < co.min)
			continue;
		if (!ai_match(&fco, x->t))
			continue;
		if (x->o)
			ot += x->o->bytes;
		if (x->n)
			nt += x->n->bytes;
		if (!x->o)
			nnew++;
		else if (!x->n)
			ngone++;
		else if (x->db || x->dc)
			nchg++;
		else if (!all)
			continue;
		if (co.limit && shown >= co.limit)
			continue;
		shown++;
		printf("%*s %11s ", w, ai_fmt_i128(x->db, co.exact, 1, b3, sizeof(b3)),
		       ai_fmt_i128(x->dc, 1, 1, b1, sizeof(b1)));
		printf("%*s ", w,
		       x->o ? ai_fmt_size(x->o->bytes, co.exact, b1, sizeof(b1)) : "-");
		printf("%*s %-4s  ", w,
		       x->n ? ai_fmt_size(x->n->bytes, co.exact, b2, sizeof(b2)) : "-", st);
		ai_fmt_tag(stdout, x->t);
		if ((x->o && x->o->bytes < 0) || (x->n && x->n->bytes < 0))
			fputs("  NEGATIVE", stdout);
		putchar('\n');
	}
	if (!co.no_header) {
		printf("%*s %11s %*s ", w, ai_fmt_i128(nt - ot, co.exact, 1, b3, sizeof(b3)),
		       "", w, ai_fmt_i128(ot, co.exact, 0, b1, sizeof(b1)));
		printf("%*s       total: %zu changed, %zu new, %zu gone\n", w,
		       ai_fmt_i128(nt, co.exact, 0, b2, sizeof(b2)), nchg, nnew, ngone);
	}
	ai_hmap_free(&m);
	free(seen);
	free(d);
	c = ai_status(&a) | ai_status(&b);
	ai_snap_free(&a);
	ai_snap_free(&b);
	return c;
}

/* ---- export ---- */

static const char export_help[] =
"usage: allocinfo export [OPTIONS]\n"
"Write the tags in a machine-readable format on stdout.\n"
"\n"
"  -F, --format FMT   prometheus (default): text exposition format for\n"
"                     node_exporter's textfile collector, metrics\n"
"                     allocinfo_bytes and allocinfo_calls with labels file,\n"
"                     line, func and module (\"\" for built-in code);\n"
"                     json: one object, tags in an array;\n"
"                     csv: RFC 4180, header bytes,calls,file,line,module,\n"
"                     func,extra\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -o, --output FILE  write to FILE atomically, as the textfile collector\n"
"                     wants: a unique FILE.XXXXXX, synced, then renamed\n"
"                     (removed on failure); default stdout\n"
"  -n N               only the N largest tags (default 0 = all), written in\n"
"                     input order\n"
"  -k, --keep-dups    json and csv: repeated file:line func lines apart\n"
"  -m, --min SIZE     only tags holding at least SIZE\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only the tags that match (see 'top --help')\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n"
"\n"
"Tags are written in input order.\n";

static int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	enum ai_export_fmt fmt = AI_EXPORT_PROM;
	const char *out = NULL;
	struct ai_snap s;
	struct ai_tag **v;
	char *tmp = NULL;
	FILE *f = stdout;
	size_t n;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "F:o:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 'F') {
			if (!strcmp(optarg, "prometheus") || !strcmp(optarg, "prom"))
				fmt = AI_EXPORT_PROM;
			else if (!strcmp(optarg, "json"))
				fmt = AI_EXPORT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = AI_EXPORT_CSV;
			else
				ai_usage_err("export: --format wants prometheus, json or csv");
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'h') {
			help(export_help);
		} else {
			ai_usage_err("export: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("export: unexpected argument '%s'", argv[optind]);
	ai_only(&co, CO_ALL & ~(CO_EXACT | CO_NOHDR), "export");
	if (fmt == AI_EXPORT_PROM && co.keep_dups)
		ai_not_here("-k/--keep-dups", "export --format prometheus (one series per tag)");
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (co.limit && co.limit < n) {
		/* the N largest, written in input order */
		ai_sort_tags(v, n, "size");
		n = co.limit;
		qsort(v, n, sizeof(*v), cmp_lineno);
	}
	if (out && strcmp(out, "-"))
		f = ai_atomic_open(out, &tmp);
	ai_export(f, &s, v, n, fmt);
	if (tmp)
		ai_atomic_commit(f, tmp, out);
	else if (fflush(f) || ferror(f))
		ai_die("write error on standard output");
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

/* ---- main ---- */

static const char main_help[] =
"usage: allocinfo COMMAND [OPTIONS]\n"
"Read, compare, record and export /proc/allocinfo (memory allocation\n"
"profiling).\n"
"\n"
"commands:\n"
"  top      the tags that hold the most memory\n"
"  tree     memory summed by path prefix, module or subsystem\n"
"  diff     the change of each tag between two captures\n"
"  export   Prometheus text format, JSON or CSV\n"
"  record   store snapshots in a SQLite database\n"
"  report   growth, leak suspects and top tags from a database\n"
#ifdef AI_NO_PLOT
"  plot     (not in this build: it was built without cairo)\n"
#else
"  plot     a PNG or SVG chart of the top tags over time\n"
#endif
"\n"
"Every command reads /proc/allocinfo by default, a file with -f FILE, or\n"
"stdin with -f -. 'allocinfo COMMAND --help' describes a command.\n"
"\n"
"exit status: 0 ok; 1 fatal error (unreadable input, database error);\n"
"2 bad command line; 3 done, but some input lines were malformed and\n"
"skipped (or the header was missing); 4 report leaks found suspects.\n";

/* Output lost to a full disk or a closed pipe is an error, not silence. */
static void check_stdout(void)
{
	int bad = ferror(stdout);

	errno = 0;
	if (fflush(stdout))
		bad = 1;
	if (bad) {
		if (errno)
			ai_warn("write error on standard output: %s", strerror(errno));
		else
			ai_warn("write error on standard output");
		_exit(AI_EXIT_FATAL);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "top", cmd_top }, { "tree", cmd_tree }, { "diff", cmd_diff },
		{ "export", cmd_export }, { "record", cmd_record },
		{ "report", cmd_report }, { "plot", cmd_plot },
	};
	size_t i;

	atexit(check_stdout);
	if (argc < 2)
		ai_usage_err("no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *h[] = { argv[2], "--help", NULL };

			for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (!strcmp(argv[2], cmds[i].name)) {
					ai_cmd = cmds[i].name;
					return cmds[i].fn(2, h);
				}
		}
		help(main_help);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("allocinfo %s\n", AI_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			ai_cmd = cmds[i].name;
			exit(cmds[i].fn(argc - 1, argv + 1));
		}
	ai_usage_err("unknown command '%s'", argv[1]);
}
