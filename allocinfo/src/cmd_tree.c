// SPDX-License-Identifier: GPL-2.0
/* tree: memory summed by path prefix, module or subsystem. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

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

int cmd_tree(int argc, char **argv)
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
			ai_help(tree_help);
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

