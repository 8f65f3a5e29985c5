// SPDX-License-Identifier: GPL-2.0
/* report: growth, leak suspects, top tags and snapshots from a database. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char report_help[] =
"usage: allocinfo report [KIND] -d DB [OPTIONS]\n"
"Read a database written by 'allocinfo record'. KIND is one of:\n"
"\n"
"  growth     (default) the change of each tag from the first snapshot to\n"
"             the last (or --from/--to), with its rate in bytes/s\n"
"  leaks      leak suspects: tags present in every snapshot since they\n"
"             appeared (at least --min-snapshots of them) whose bytes\n"
"             follow a rising line: the least-squares slope of bytes\n"
"             over time (the RATE) is > 0 and the line explains at least\n"
"             --min-fit of their variance (R^2, default 0.5), so jitter\n"
"             around a steady growth is tolerated; exit status 4 when\n"
"             there is a suspect, 0 when there is none\n"
"  top        the largest tags of one snapshot (--at)\n"
"  snapshots  the snapshots in the database\n"
"\n"
"  -d, --db DB          the database\n"
"      --host NAME      only the snapshots of host NAME (record --host);\n"
"                       needed when the database holds several hosts\n"
"      --from SNAP      first snapshot of the range (default first)\n"
"      --to SNAP        last snapshot of the range (default last)\n"
"      --at SNAP        top: the snapshot (default last)\n"
"                       SNAP is an id, 'first', 'last' or @T: the last\n"
"                       snapshot taken at or before Unix time T\n"
"      --min-snapshots K  leaks: at least K snapshots (default 3)\n"
"      --min-rate R     leaks: at least R bytes/s (default: any growth)\n"
"      --min-fit F      leaks: R^2 of at least F, 0..1 (default 0.5)\n"
"  -n N                 show N tags (default 20; 0 = all)\n"
"  -s, --sort KEY       top: size, calls or name\n"
"      --avg            top: an AVG column, the average allocation size\n"
"  -m, --min SIZE       top: only tags of at least SIZE; growth: only\n"
"                       changes of at least SIZE either way\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                       only the tags that match (see 'top --help')\n"
"  -b, --bytes          exact byte counts and rates\n"
"  -H, --no-header      no column header\n"
"  -h, --help           this help\n";

struct series {
	int64_t tag;
	int64_t first_b, last_b;
	double first_t, last_t;
	int64_t ord_first, ord_last;
	int64_t count, grew;
	int ok;
	double slope, r2;	/* least squares of bytes over time */
};

/*
 * The least-squares line through the points (t[i], y[i]): its slope and
 * R^2, the share of the variance of y it explains (0 when y is flat).
 * Two passes over values taken relative to the first point, so that
 * large byte counts do not cancel out.
 */
static void fit_line(const double *t, const double *y, size_t n,
		     double *slope, double *r2)
{
	double mt = 0, my = 0, stt = 0, syy = 0, sty = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		mt += t[i] - t[0];
		my += y[i] - y[0];
	}
	mt /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		double dt = t[i] - t[0] - mt, dy = y[i] - y[0] - my;

		stt += dt * dt;
		syy += dy * dy;
		sty += dt * dy;
	}
	*slope = stt > 0 ? sty / stt : 0;
	*r2 = stt > 0 && syy > 0 ? sty * sty / (stt * syy) : 0;
}

struct row {
	struct ai_tag t;
	int64_t a, b;	/* bytes in from / to */
	uint64_t ca, cb;
	int has_a, has_b;
	double rate;
	int64_t d;
	int64_t snaps, grew;
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->rate != b->rate)
		return a->rate > b->rate ? -1 : 1;
	if (a->d != b->d)
		return a->d > b->d ? -1 : 1;
	return ai_tag_cmp_name(&a->t, &b->t);
}

static char *row_str(sqlite3_stmt *st, int col)
{
	const char *v = (const char *)sqlite3_column_text(st, col);

	return xstrdup(v ? v : "");
}

static void free_rows(struct row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)r[i].t.file);
		free((char *)r[i].t.module);
		free((char *)r[i].t.func);
	}
	free(r);
}

static int64_t pick_or_die(sqlite3 *db, const char *spec, const char *opt)
{
	int64_t id = ai_db_pick(db, spec);

	if (id < 0)
		ai_die("report: %s %s: no such snapshot", opt, spec ? spec : "last");
	return id;
}

static double snap_time(sqlite3 *db, int64_t id)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT taken_at FROM snapshot WHERE id = ?");
	double t = 0;

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return t;
}

/* --from and --to as snapshot ids, in time order, or a usage error */
static void pick_range(sqlite3 *db, const char *from, const char *to,
		       int64_t *a, int64_t *b)
{
	double ta, tb;

	*a = pick_or_die(db, from ? from : "first", "--from");
	*b = pick_or_die(db, to ? to : "last", "--to");
	ta = snap_time(db, *a);
	tb = snap_time(db, *b);
	if (ta > tb || (ta == tb && *a > *b))
		ai_usage_err("report: --from %s (snapshot %lld) is after --to %s"
			     " (snapshot %lld): swap them", from ? from : "first",
			     (long long)*a, to ? to : "last", (long long)*b);
}

static void fmt_time(double t, char *b, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(b, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int report_snapshots(sqlite3 *db, const struct ai_common *co)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT id, taken_at, ntags, total_bytes,"
				" skipped_lines, source, label, kernel, host FROM snapshot"
				" WHERE (:host IS NULL OR host = :host)"
				" ORDER BY taken_at, id");
	char tb[32], b[32];

	if (!co->no_header)
		printf("%6s  %-20s %7s %*s %7s  %-14s %s\n", "ID", "TAKEN (UTC)", "TAGS",
		       co->exact ? 15 : 10, "SIZE", "SKIPPED", "HOST", "SOURCE");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *label = (const char *)sqlite3_column_text(st, 6);

		fmt_time(sqlite3_column_double(st, 1), tb, sizeof(tb));
		printf("%6lld  %-20s %7lld %*s %7lld  %-14s %s", sqlite3_column_int64(st, 0),
		       tb, sqlite3_column_int64(st, 2), co->exact ? 15 : 10,
		       ai_fmt_size(sqlite3_column_int64(st, 3), co->exact, b, sizeof(b)),
		       sqlite3_column_int64(st, 4), sqlite3_column_text(st, 8),
		       sqlite3_column_text(st, 5));
		if (label && *label)
			printf("  (%s)", label);
		putchar('\n');
	}
	sqlite3_finalize(st);
	return 0;
}

static int report_growth(sqlite3 *db, const struct ai_common *co,
			 const char *from, const char *to)
{
	int64_t a, b;
	double dt;
	sqlite3_stmt *st;
	struct ai_common fco = *co;
	struct row *r = NULL;
	size_t n = 0, cap = 0, i, shown = 0;
	int w = co->exact ? 15 : 10;
	char b1[32], b2[32], b3[40], b4[48];

	pick_range(db, from, to, &a, &b);
	dt = snap_time(db, b) - snap_time(db, a);
	st = ai_db_prep(db,
		"SELECT t.file, t.line, t.module, t.func, sa.bytes, sa.calls,"
		" sb.bytes, sb.calls FROM tag t"
		" LEFT JOIN sample sa ON sa.tag_id = t.id AND sa.snapshot_id = ?1"
		" LEFT JOIN sample sb ON sb.tag_id = t.id AND sb.snapshot_id = ?2"
		" WHERE sa.tag_id IS NOT NULL OR sb.tag_id IS NOT NULL");

	fco.has_min = 0;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct row x = { 0 };

		x.t.file = row_str(st, 0);
		x.t.line = sqlite3_column_int64(st, 1);
		x.t.module = row_str(st, 2);
		x.t.func = row_str(st, 3);
		x.t.extra = "";
		x.has_a = sqlite3_column_type(st, 4) != SQLITE_NULL;
		x.has_b = sqlite3_column_type(st, 6) != SQLITE_NULL;
		x.a = sqlite3_column_int64(st, 4);
		x.ca = sqlite3_column_int64(st, 5);
		x.b = sqlite3_column_int64(st, 6);
		x.cb = sqlite3_column_int64(st, 7);
		if (__builtin_sub_overflow(x.b, x.a, &x.d))
			x.d = x.b > x.a ? INT64_MAX : INT64_MIN;
		x.rate = dt > 0 ? (double)x.d / dt : 0;
		if (!ai_match(&fco, &x.t) || (!x.d && x.ca == x.cb) ||
		    (co->has_min && llabs(x.d) < co->min)) {
			free((char *)x.t.file);
			free((char *)x.t.module);
			free((char *)x.t.func);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			r = xrealloc(r, cap * sizeof(*r));
		}
		r[n++] = x;
	}
	sqlite3_finalize(st);
	if (n)
		qsort(r, n, sizeof(*r), cmp_row);
	if (!co->no_header)
		printf("# snapshots %lld -> %lld, %.0f s\n%*s %14s %*s %*s %-4s  %s\n",
		       (long long)a, (long long)b, dt, w, "DELTA",
		       co->exact ? "BYTES/S" : "RATE", w, "FROM", w, "TO", "", "TAG");
	for (i = 0; i < n && (!co->limit || shown < co->limit); i++, shown++) {
		snprintf(b3, sizeof(b3), "%s%s", r[i].d > 0 ? "+" : "",
			 ai_fmt_size(r[i].d, co->exact, b1, sizeof(b1)));
		printf("%*s %14s %*s %*s %-4s  ", w, b3,
		       ai_fmt_rate(r[i].rate, co->exact, b4, sizeof(b4)),
		       w, r[i].has_a ? ai_fmt_size(r[i].a, co->exact, b1, sizeof(b1)) : "-",
		       w, r[i].has_b ? ai_fmt_size(r[i].b, co->exact, b2, sizeof(b2)) : "-",
		       !r[i].has_a ? "new" : !r[i].has_b ? "gone" : "");
		ai_fmt_tag(stdout, &r[i].t);
		putchar('\n');
	}
	free_rows(r, n);
	return 0;
}

static int report_leaks(sqlite3 *db, const struct ai_common *co,
			const char *from, const char *to, int64_t min_snaps,
			double min_rate, double min_fit)
{
	int64_t a, b;
	double ta, tb;
	sqlite3_stmt *st, *nm;
	struct series *sv = NULL, cur = { .tag = -1 };
	size_t nsv = 0, capsv = 0, i, n = 0, shown = 0;
	int64_t nsnaps;
	struct row *r;
	int w = co->exact ? 15 : 10;
	char b1[32], b2[32], b3[40], b4[48];
	double *pt, *py;

	pick_range(db, from, to, &a, &b);
	ta = snap_time(db, a);
	tb = snap_time(db, b);
	/* the snapshots of the range, numbered in time order */
	st = ai_db_prep(db, "SELECT count(*) FROM snapshot WHERE taken_at BETWEEN ?1 AND ?2"
		  " AND (:host IS NULL OR host = :host)");
	sqlite3_bind_double(st, 1, ta);
	sqlite3_bind_double(st, 2, tb);
	sqlite3_step(st);
	nsnaps = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	/* the points of one tag: at most one per snapshot of the range */
	pt = xmalloc((nsnaps + 1) * sizeof(*pt));
	py = xmalloc((nsnaps + 1) * sizeof(*py));

	st = ai_db_prep(db,
		"WITH sn AS (SELECT id, taken_at, row_number() OVER"
		" (ORDER BY taken_at, id) AS ord FROM snapshot"
		" WHERE taken_at BETWEEN ?1 AND ?2 AND (:host IS NULL OR host = :host))"
		" SELECT s.tag_id, sn.ord, sn.taken_at, s.bytes FROM sample s"
		" JOIN sn ON sn.id = s.snapshot_id ORDER BY s.tag_id, sn.ord");
	sqlite3_bind_double(st, 1, ta);
	sqlite3_bind_double(st, 2, tb);
	for (;;) {
		int more = sqlite3_step(st) == SQLITE_ROW;
		int64_t tag = more ? sqlite3_column_int64(st, 0) : -2;

		if (tag != cur.tag && cur.tag >= 0) {
			cur.ok = cur.ok && cur.count >= min_snaps &&
				 cur.ord_last == nsnaps && cur.last_t > cur.first_t;
			if (cur.ok) {
				fit_line(pt, py, cur.count, &cur.slope, &cur.r2);
				cur.ok = cur.slope > 0 && cur.r2 >= min_fit;
			}
			if (cur.ok) {
				if (nsv == capsv) {
					capsv = capsv ? capsv * 2 : 64;
					sv = xrealloc(sv, capsv * sizeof(*sv));
				}
				sv[nsv++] = cur;
			}
		}
		if (!more)
			break;
		{
			int64_t ord = sqlite3_column_int64(st, 1);
			double t = sqlite3_column_double(st, 2);
			int64_t by = sqlite3_column_int64(st, 3);

			if (tag != cur.tag) {
				cur = (struct series){
					.tag = tag, .first_b = by, .last_b = by,
					.first_t = t, .last_t = t, .ord_first = ord,
					.ord_last = ord, .count = 1, .ok = 1,
				};
				pt[0] = t;
				py[0] = (double)by;
				continue;
			}
			/* absent from a snapshot since it appeared: unloaded */
			if (ord != cur.ord_last + 1)
				cur.ok = 0;
			cur.grew += by > cur.last_b;
			cur.last_b = by;
			cur.last_t = t;
			cur.ord_last = ord;
			pt[cur.count] = t;
			py[cur.count] = (double)by;
			cur.count++;
		}
	}
	free(pt);
	free(py);
	sqlite3_finalize(st);

	r = xcalloc(nsv + 1, sizeof(*r));
	nm = ai_db_prep(db, "SELECT file, line, module, func FROM tag WHERE id = ?");
	for (i = 0; i < nsv; i++) {
		struct row x = { 0 };

		sqlite3_bind_int64(nm, 1, sv[i].tag);
		if (sqlite3_step(nm) != SQLITE_ROW)
			ai_db_die(db, "reading a tag");
		x.t.file = row_str(nm, 0);
		x.t.line = sqlite3_column_int64(nm, 1);
		x.t.module = row_str(nm, 2);
		x.t.func = row_str(nm, 3);
		x.t.extra = "";
		sqlite3_reset(nm);
		x.a = sv[i].first_b;
		x.b = sv[i].last_b;
		x.d = x.b - x.a;
		x.rate = sv[i].slope;
		x.snaps = sv[i].count;
		x.grew = sv[i].grew;
		if (x.rate < min_rate || !ai_match(co, &x.t)) {
			free((char *)x.t.file);
			free((char *)x.t.module);
			free((char *)x.t.func);
			continue;
		}
		r[n++] = x;
	}
	sqlite3_finalize(nm);
	free(sv);
	qsort(r, n, sizeof(*r), cmp_row);
	if (!co->no_header)
		printf("# %zu leak suspect(s) over %lld snapshots (%.0f s)\n"
		       "%14s %*s %*s %*s %7s  %s\n", n, (long long)nsnaps, tb - ta,
		       co->exact ? "BYTES/S" : "RATE", w, "GROWTH", w, "FIRST",
		       w, "LAST", "GREW", "TAG");
	for (i = 0; i < n && (!co->limit || shown < co->limit); i++, shown++) {
		char grew[32];

		snprintf(b3, sizeof(b3), "%s%s", r[i].d > 0 ? "+" : "",
			 ai_fmt_size(r[i].d, co->exact, b1, sizeof(b1)));
		snprintf(grew, sizeof(grew), "%lld/%lld", (long long)r[i].grew,
			 (long long)r[i].snaps - 1);
		printf("%14s %*s ", ai_fmt_rate(r[i].rate, co->exact, b4, sizeof(b4)), w, b3);
		printf("%*s ", w, ai_fmt_size(r[i].a, co->exact, b1, sizeof(b1)));
		printf("%*s %7s  ", w, ai_fmt_size(r[i].b, co->exact, b2, sizeof(b2)), grew);
		ai_fmt_tag(stdout, &r[i].t);
		putchar('\n');
	}
	free_rows(r, n);
	return n ? AI_EXIT_FOUND : AI_EXIT_OK;
}

static int report_top(sqlite3 *db, const struct ai_common *co, const char *at,
		      const char *sort, int avg)
{
	struct ai_cols cols = { .avg = avg };
	int64_t id = pick_or_die(db, at, "--at");
	struct ai_snap s;
	struct ai_tag **v;
	size_t n;
	char tb[32];

	ai_db_load_tags(db, id, &s, NULL);
	v = ai_select(&s, co, &n);
	if (ai_sort_tags(v, n, sort) < 0)
		ai_usage_err("report: --sort wants size, calls or name");
	if (!co->no_header) {
		fmt_time(snap_time(db, id), tb, sizeof(tb));
		printf("# snapshot %lld, %s\n", (long long)id, tb);
	}
	ai_print_tags(stdout, v, n, s.ntags, co, &cols);
	free(v);
	ai_snap_free(&s);
	return 0;
}

/* the options of report that only some kinds use */
enum {
	R_FROM = 1 << 0, R_TO = 1 << 1, R_AT = 1 << 2, R_MIN_SNAPS = 1 << 3,
	R_MIN_RATE = 1 << 4, R_SORT = 1 << 5, R_MIN_FIT = 1 << 6, R_AVG = 1 << 7,
};

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "at", required_argument, NULL, OPT_AT },
		{ "min-snapshots", required_argument, NULL, OPT_MIN_SNAPS },
		{ "min-rate", required_argument, NULL, OPT_MIN_RATE },
		{ "min-fit", required_argument, NULL, OPT_MIN_FIT },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "avg", no_argument, NULL, OPT_AVG },
		{ "sort", required_argument, NULL, 's' },
		{ "min", required_argument, NULL, 'm' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "func", required_argument, NULL, OPT_FUNC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { .limit = 20 };
	const char *dbpath = NULL, *kind = "growth", *from = NULL, *to = NULL;
	const char *at = NULL, *sort = "size", *host = NULL;
	uint64_t min_snaps = 3;
	double min_rate = -INFINITY, min_fit = AI_LEAK_MIN_FIT;
	sqlite3 *db;
	char *e;
	int c, rc;
	unsigned given = 0;	/* R_* */
	int avg = 0;

	if (argc > 1 && argv[1][0] != '-') {
		kind = argv[1];
		argv++;
		argc--;
	}
	while ((c = ai_getopt(argc, argv, "d:n:s:m:bHh", lo)) != -1) {
		if (c != 'f' && ai_common_opt(&co, c, optarg))
			continue;
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case OPT_FROM:
			given |= R_FROM;
			from = optarg;
			break;
		case OPT_TO:
			given |= R_TO;
			to = optarg;
			break;
		case OPT_AT:
			given |= R_AT;
			at = optarg;
			break;
		case OPT_MIN_SNAPS:
			given |= R_MIN_SNAPS;
			if (ai_parse_u64(optarg, &min_snaps) < 0 || min_snaps < 2)
				ai_usage_err("report: --min-snapshots wants 2 or more");
			break;
		case OPT_MIN_RATE:
			given |= R_MIN_RATE;
			min_rate = strtod(optarg, &e);
			if (*e || e == optarg)
				ai_usage_err("report: --min-rate wants bytes per second");
			break;
		case OPT_HOST:
			host = optarg;
			break;
		case OPT_AVG:
			given |= R_AVG;
			avg = 1;
			break;
		case OPT_MIN_FIT:
			given |= R_MIN_FIT;
			min_fit = strtod(optarg, &e);
			if (*e || e == optarg || !(min_fit >= 0 && min_fit <= 1))
				ai_usage_err("report: --min-fit wants a number from 0 to 1, not '%s'",
					     optarg);
			break;
		case 's':
			given |= R_SORT;
			sort = optarg;
			break;
		case 'h':
			fputs(report_help, stdout);
			return 0;
		default:
			ai_usage_err("report: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("report: unexpected argument '%s'", argv[optind]);
	if (!dbpath)
		ai_usage_err("report: -d DB is needed");
	if (strcmp(kind, "snapshots") && strcmp(kind, "growth") &&
	    strcmp(kind, "leaks") && strcmp(kind, "top"))
		ai_usage_err("report: KIND is growth, leaks, top or snapshots, not '%s'", kind);
	{
		static const struct {
			const char *kind;
			unsigned co, own;
		} use[] = {
			{ "snapshots", CO_EXACT | CO_NOHDR, 0 },
			{ "growth", CO_LIMIT | CO_MIN | CO_EXACT | CO_NOHDR | CO_FILTER,
			  R_FROM | R_TO },
			{ "leaks", CO_LIMIT | CO_EXACT | CO_NOHDR | CO_FILTER,
			  R_FROM | R_TO | R_MIN_SNAPS | R_MIN_RATE | R_MIN_FIT },
			{ "top", CO_LIMIT | CO_MIN | CO_EXACT | CO_NOHDR | CO_FILTER,
			  R_AT | R_SORT | R_AVG },
		};
		static const struct { unsigned bit; const char *name; } names[] = {
			{ R_FROM, "--from" }, { R_TO, "--to" }, { R_AT, "--at" },
			{ R_MIN_SNAPS, "--min-snapshots" }, { R_MIN_RATE, "--min-rate" },
			{ R_SORT, "-s/--sort" }, { R_MIN_FIT, "--min-fit" },
			{ R_AVG, "--avg" },
		};
		char what[32];
		size_t i, j;

		for (i = 0; strcmp(use[i].kind, kind); i++)
			;
		snprintf(what, sizeof(what), "report %s", kind);
		ai_only(&co, use[i].co, what);
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			if (given & names[j].bit & ~use[i].own)
				ai_not_here(names[j].name, what);
	}
	db = ai_db_open(dbpath, AI_DB_READ);
	{
		char what[32];

		snprintf(what, sizeof(what), "report %s", kind);
		ai_db_host(db, host, strcmp(kind, "snapshots") ? what : NULL);
	}
	if (!strcmp(kind, "snapshots"))
		rc = report_snapshots(db, &co);
	else if (!strcmp(kind, "growth"))
		rc = report_growth(db, &co, from, to);
	else if (!strcmp(kind, "leaks"))
		rc = report_leaks(db, &co, from, to, min_snaps, min_rate, min_fit);
	else if (!strcmp(kind, "top"))
		rc = report_top(db, &co, at, sort, avg);
	else
		ai_usage_err("report: KIND is growth, leaks, top or snapshots, not '%s'", kind);
	sqlite3_close(db);
	return rc;
}
