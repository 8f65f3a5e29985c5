// SPDX-License-Identifier: GPL-2.0
/* diff: the change of each tag between two captures. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "allocinfo.h"
#include "cli.h"

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
"      --seconds S    OLD and NEW were taken S seconds apart: a RATE column,\n"
"                     each change in bytes/s; 'mtime': as far apart as the\n"
"                     files' modification times\n"
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

/*
 * --seconds S: the captures were taken S seconds apart; --seconds mtime:
 * as far apart as the files' modification times (a copy made with cp -p,
 * or written when captured).
 */
static double seconds_apart(const char *arg, const char *a, const char *b)
{
	struct stat sa, sb;
	double dt;
	char *e;

	if (!strcmp(arg, "mtime")) {
		if (!strcmp(a, "-") || !strcmp(b, "-") || stat(a, &sa) || stat(b, &sb) ||
		    !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode))
			ai_usage_err("diff: --seconds mtime wants two regular files (not stdin or /proc)");
		dt = (sb.st_mtim.tv_sec - sa.st_mtim.tv_sec) +
		     (sb.st_mtim.tv_nsec - sa.st_mtim.tv_nsec) / 1e9;
		if (!(dt > 0))
			ai_usage_err("diff: %s is not newer than %s (mtime); give --seconds S", b, a);
		return dt;
	}
	dt = strtod(arg, &e);
	if (*e || e == arg || !(dt > 0) || !isfinite(dt))
		ai_usage_err("diff: --seconds wants the seconds between OLD and NEW (> 0) or 'mtime', not '%s'",
			     arg);
	return dt;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "sort", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
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
	const char *secs = NULL;
	double dt = 0;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "s:a", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 's')
			sort = optarg;
		else if (c == 'a')
			all = 1;
		else if (c == OPT_SECONDS)
			secs = optarg;
		else if (c == 'h')
			ai_help(diff_help);
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

	if (secs)
		dt = seconds_apart(secs, argv[optind], argv[optind + 1]);
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
	if (!co.no_header) {
		if (secs)
			printf("# %s apart\n", ai_fmt_duration(dt, b1, sizeof(b1)));
		printf("%*s %11s ", w, "DELTA", "CALLS");
		if (secs)
			printf("%14s ", co.exact ? "BYTES/S" : "RATE");
		printf("%*s %*s %-4s  %s\n", w, "OLD", w, "NEW", "", "TAG");
	}
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
		if (secs)
			printf("%14s ", ai_fmt_rate((double)x->db / dt, co.exact, b1, sizeof(b1)));
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
		printf("%*s %11s ", w, ai_fmt_i128(nt - ot, co.exact, 1, b3, sizeof(b3)), "");
		if (secs)
			printf("%14s ", ai_fmt_rate((double)(nt - ot) / dt, co.exact, b1, sizeof(b1)));
		printf("%*s ", w, ai_fmt_i128(ot, co.exact, 0, b1, sizeof(b1)));
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

