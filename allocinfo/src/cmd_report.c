// SPDX-License-Identifier: GPL-2.0
/* report: growth, leak suspects, top tags and snapshots from a database. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

/* report leaks: the defaults (documented) */
#define LEAK_MIN_SNAPS 4
#define LEAK_MIN_FIT 0.8
#define LEAK_MIN_GROWTH (256.0 * 1024)
#define LEAK_GRACE 3600.0	/* s after the boot's first snapshot */
#define LEAK_RECENT 7200.0	/* s: the recent window */


static const char report_help[] =
"usage: allocinfo report [KIND] -d DB [OPTIONS]\n"
"Read a database written by 'allocinfo record'. KIND is one of:\n"
"\n"
"  growth     (default) the change of each tag from the first snapshot to\n"
"             the last (or --from/--to), with its rate in bytes/s\n"
"  leaks      leak suspects within one boot, judged after a grace period\n"
"             (--grace, 1h from the boot's first snapshot): tags whose bytes\n"
"             follow a rising line over the snapshots since then, or over\n"
"             the recent window (--recent, 2h, ending at the newest one):\n"
"             the least-squares slope (RATE) is > 0, the line explains at\n"
"             least --min-fit of their variance (FIT, R^2), grew by at\n"
"             least --min-growth, rises in both halves of the window (not\n"
"             one step) and does not level off (the second half at least\n"
"             half as steep as the first: not a warm-up); a recent rise\n"
"             after a steeper one is a warm-up slowing down. Leaks that\n"
"             stopped are listed with the bytes they hold. A module\n"
"             reloaded in the boot continues its tags. Incomplete\n"
"             snapshots are skipped, and said so. Exit status 4 when there\n"
"             is a suspect, 5 when the window is too short to judge (its\n"
"             snapshots all at one time), 0 otherwise\n"
"  top        the largest tags of one snapshot (--at)\n"
"  snapshots  the snapshots in the database, with their status\n"
"\n"
"  -d, --db DB          the database\n"
"      --host NAME      only the snapshots of host NAME (a node name, or a\n"
"                       machine id); needed when the database holds several\n"
"      --all-hosts      leaks: every host of the database, one after another\n"
"      --from SNAP      first snapshot of the range (default first)\n"
"      --to SNAP        last snapshot of the range (default last)\n"
"      --at SNAP        top: the snapshot (default last)\n"
"                       SNAP is an id, 'first', 'last' or @T: the last\n"
"                       snapshot taken at or before Unix time T (first, last\n"
"                       and @T pick complete snapshots)\n"
"      --boot last|all  leaks: the last boot of the range (default), or each\n"
"                       boot on its own\n"
"      --min-snapshots K  leaks: at least K snapshots (default 4)\n"
"      --min-rate R     leaks: at least R bytes/s (default: any growth)\n"
"      --min-growth SIZE  leaks: the line grew by at least SIZE over the\n"
"                       window (default 256K)\n"
"      --min-fit F      leaks: R^2 of at least F, 0..1 (default 0.8)\n"
"      --grace AGE      leaks: judge the snapshots taken AGE after the boot's\n"
"                       first one (default 1h; 0: all of them)\n"
"      --recent AGE     leaks: the recent window (default 2h)\n"
"      --ignore GLOB    leaks: leave out the tags whose function matches GLOB\n"
"                       (whose file, with a '/' in GLOB); may be repeated\n"
"      --ignore-file FILE  leaks: the same, one GLOB a line ('#' comments)\n"
"      --no-default-ignore  leaks: also the tags of expected growth, left\n"
"                       out by default: the page cache and anonymous memory\n"
"                       (the list: README.md, allocinfo(1))\n"
"  -F, --format FMT     leaks: text (default), json, or prometheus (the\n"
"                       suspects as metrics, for node_exporter's textfile\n"
"                       collector)\n"
"  -o, --output FILE    leaks: write to FILE, atomically (see export)\n"
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

struct row {
	struct ai_tag t;
	int64_t a, b;	/* bytes in from / to */
	uint64_t ca, cb;
	int has_a, has_b;
	double rate;
	int64_t d;
	int64_t snaps, grew;
	double fit;
	int recent;		/* leaks: found in the recent window only */
	int64_t reloads;	/* leaks: its module reloaded in the boot */
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

static int64_t pick_or_die(sqlite3 *db, const char *spec, const char *opt)
{
	int64_t id = ai_db_pick(db, spec);
	struct ai_db_snap sn;

	if (id < 0)
		ai_die("report: %s %s: no such snapshot%s", opt, spec ? spec : "last",
		       !spec || !strcmp(spec, "first") || !strcmp(spec, "last") ||
		       spec[0] == '@' ? " (complete ones count)" : "");
	if (!ai_db_snap_info(db, id, &sn) && sn.status == AI_SNAP_REFUSED)
		ai_die("report: %s %s: snapshot %lld was refused (%s): it has no samples", opt,
		       spec, (long long)id, sn.problem);
	return id;
}

static double snap_time(sqlite3 *db, int64_t id)
{
	struct ai_db_snap sn;

	return ai_db_snap_info(db, id, &sn) ? 0 : sn.taken_at;
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

/* UTC; a time that gmtime() cannot take (recorded by an older allocinfo) is '?' */
static void fmt_time(double t, char *b, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!isfinite(t) || t < 0 || t > 253402300799.0 || !gmtime_r(&s, &tm) ||
	    !strftime(b, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(b, n, "?(%.6g)", t);
}

static int report_snapshots(sqlite3 *db, const struct ai_common *co)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT id, taken_at, ntags, total_bytes,"
				" skipped_lines, source, label, status, problem, host, boot_id"
				" FROM snapshot WHERE (:host IS NULL OR " AI_HOSTKEY " = :host)"
				" ORDER BY " AI_HOSTKEY ", taken_at, id");
	char tb[48], b[32];

	if (!co->no_header)
		printf("%6s  %-20s %7s %*s %7s  %-10s %-8s  %-14s %s\n", "ID", "TAKEN (UTC)",
		       "TAGS", co->exact ? 15 : 10, "SIZE", "SKIPPED", "STATUS", "BOOT",
		       "HOST", "SOURCE");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *label = (const char *)sqlite3_column_text(st, 6);
		const char *problem = (const char *)sqlite3_column_text(st, 8);
		const char *boot = (const char *)sqlite3_column_text(st, 10);

		fmt_time(sqlite3_column_double(st, 1), tb, sizeof(tb));
		printf("%6lld  %-20s %7lld %*s %7lld  %-10s %-8.8s  %-14s %s", sqlite3_column_int64(st, 0),
		       tb, sqlite3_column_int64(st, 2), co->exact ? 15 : 10,
		       ai_fmt_size(sqlite3_column_int64(st, 3), co->exact, b, sizeof(b)),
		       sqlite3_column_int64(st, 4), sqlite3_column_text(st, 7),
		       boot && *boot ? boot : "-", sqlite3_column_text(st, 9),
		       sqlite3_column_text(st, 5));
		if (label && *label)
			printf("  (%s)", label);
		if (problem && *problem)
			printf("  [%s]", problem);
		putchar('\n');
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		ai_db_die(db, "reading the snapshots");
	return 0;
}

static int report_growth(sqlite3 *db, const struct ai_common *co,
			 const char *from, const char *to)
{
	struct ai_db_state sa, sb;
	int64_t a, b;
	double dt;
	struct ai_common fco = *co;
	struct row *r = NULL;
	size_t n = 0, i, shown = 0, cap;
	int w = co->exact ? 15 : 10;
	char b1[32], b2[32], b3[40], b4[48];

	pick_range(db, from, to, &a, &b);
	dt = snap_time(db, b) - snap_time(db, a);
	ai_db_state_init(&sa, db);
	ai_db_state_init(&sb, db);
	ai_db_state_load(&sa, a);
	ai_db_state_load(&sb, b);
	ai_db_state_names(&sb);
	fco.has_min = 0;
	cap = sa.cap > sb.cap ? sa.cap : sb.cap;
	r = xcalloc(cap + 1, sizeof(*r));
	for (i = 0; i < cap; i++) {
		struct row x = { 0 };

		x.has_a = i < sa.cap && sa.calls[i] >= 0;
		x.has_b = i < sb.cap && sb.calls[i] >= 0;
		if (!x.has_a && !x.has_b)
			continue;
		if (i >= sb.nnames || !sb.names[i].file)
			ai_die("database: a sample of tag %zu, which is not in the tag table", i);
		x.t = sb.names[i];
		x.a = x.has_a ? sa.bytes[i] : 0;
		x.ca = x.has_a ? sa.calls[i] : 0;
		x.b = x.has_b ? sb.bytes[i] : 0;
		x.cb = x.has_b ? sb.calls[i] : 0;
		if (__builtin_sub_overflow(x.b, x.a, &x.d))
			x.d = x.b > x.a ? INT64_MAX : INT64_MIN;
		x.rate = dt > 0 ? (double)x.d / dt : 0;
		if (!ai_match(&fco, &x.t) || (!x.d && x.ca == x.cb) ||
		    (co->has_min && llabs(x.d) < co->min))
			continue;
		r[n++] = x;
	}
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
	free(r);
	ai_db_state_free(&sa);
	ai_db_state_free(&sb);
	return 0;
}

/* ---- leaks ---- */

/* a least-squares line fitted point by point (Welford's updates) */
struct fit {
	double n, mt, my, ctt, cty, cyy;
};

static void fit_add(struct fit *f, double t, double y)
{
	double dt = t - f->mt, dy = y - f->my;

	f->n += 1;
	f->mt += dt / f->n;
	f->my += dy / f->n;
	f->ctt += dt * (t - f->mt);
	f->cty += dt * (y - f->my);
	f->cyy += dy * (y - f->my);
}

static double fit_slope(const struct fit *f)
{
	return f->ctt > 0 ? f->cty / f->ctt : 0;
}

/* R^2: the share of the variance of y the line explains (0 when y is flat) */
static double fit_r2(const struct fit *f)
{
	return f->ctt > 0 && f->cyy > 0 ? f->cty * f->cty / (f->ctt * f->cyy) : 0;
}

/* the standard error of the slope (0 with fewer than 3 points) */
static double fit_slope_err(const struct fit *f)
{
	double rss;

	if (f->n < 3 || !(f->ctt > 0))
		return 0;
	rss = f->cyy - f->cty * f->cty / f->ctt;
	return rss > 0 ? sqrt(rss / (f->n - 2) / f->ctt) : 0;
}

/* a series thinned to at most SER_MAX points, each the mean of SER_PER of them */
#define SER_MAX 128

struct pt {
	double t, y;
};

/* one tag in one boot; points relative to its first judged one */
struct acc {
	int seen, on;		/* on: a point after the grace period */
	int64_t first_b, last_b;
	double first_t, last_t, mid, rfirst_t, rmid;
	size_t last_ord;
	int64_t count, grew, rcount, reloads;
	struct fit all, lo, hi;	/* since the grace period: every point, each half */
	struct fit rec, rlo, rhi;	/* the recent window and its halves */
	struct fit early, pre;	/* the points before the grace period's end, before the window */
	struct pt *ser;		/* the points since the grace period, thinned */
	size_t nser, per, fill;
	double st, sy;		/* the point being summed */
};

struct leak_opts {
	const struct ai_common *co;
	int64_t min_snaps;
	double min_rate, min_fit, min_growth;
	double grace, recent;	/* seconds */
	const char **ignore;
	size_t nignore;
	int all_boots;
};

/* a stopped leak: it grew as a leak does, then stopped, still holding its bytes */
struct stopped {
	struct ai_tag t;
	int64_t held;		/* bytes above its first judged point */
	double rate, fit, start, stop;
};

/* one boot's analysis of one host */
struct boot_rep {
	char boot_id[64];
	char host[256];		/* the node name of its last snapshot */
	int64_t from, to;
	size_t nsnaps;
	double t0, t1;
	double judged_from;	/* t0 + grace */
	size_t njudged;		/* snapshots after the grace period */
	int judged;		/* enough of them to judge */
	int too_short;		/* several snapshots, all at one time */
	struct row *r;
	size_t n;
	struct stopped *stop;
	size_t nstop;
	size_t nignored;	/* suspects left out as expected growth */
	char ignored[256];	/* the first of them */
};

struct host_rep {
	char *name, *machine_id;
	struct boot_rep *boots;
	size_t nboots;
	size_t skipped;		/* incomplete or refused snapshots in the range */
	char skipped_text[512];
	size_t earlier_boots, earlier_snaps;	/* not analysed (--boot last) */
	size_t shared;		/* systems running at once under its machine id (clones) */
	double last_t;
	int empty;		/* no complete snapshot */
};

static int ignored(const struct leak_opts *o, const struct ai_tag *t)
{
	size_t i;

	for (i = 0; i < o->nignore; i++) {
		const char *g = o->ignore[i];

		if (strchr(g, '/') ? !fnmatch(g, t->file, 0) : !fnmatch(g, t->func, 0))
			return 1;
	}
	return 0;
}

static void ser_add(struct acc *a, double t, double y)
{
	size_t i;

	if (!a->ser) {
		a->ser = xmalloc(SER_MAX * sizeof(*a->ser));
		a->per = 1;
	}
	a->st += t;
	a->sy += y;
	if (++a->fill < a->per)
		return;
	a->ser[a->nser].t = a->st / a->fill;
	a->ser[a->nser].y = a->sy / a->fill;
	a->nser++;
	a->st = a->sy = 0;
	a->fill = 0;
	if (a->nser < SER_MAX)
		return;
	/* full: every two points made one, each now of twice as many */
	for (i = 0; i < SER_MAX / 2; i++) {
		a->ser[i].t = (a->ser[2 * i].t + a->ser[2 * i + 1].t) / 2;
		a->ser[i].y = (a->ser[2 * i].y + a->ser[2 * i + 1].y) / 2;
	}
	a->nser = SER_MAX / 2;
	a->per *= 2;
}

/* the tag starts again (its module reloaded, its bytes given back) */
static void acc_restart(struct acc *a)
{
	struct acc b = { .seen = a->seen, .last_b = a->last_b, .last_ord = a->last_ord,
			 .reloads = a->reloads };

	free(a->ser);
	*a = b;
}

/*
 * The test of a window (every point since the grace period, or the
 * recent ones): a rising line (slope > 0, at least --min-rate, R^2 of at
 * least --min-fit, grown by at least --min-growth over the window), that
 * rises in both halves (not one step: each half's slope at least a
 * quarter of the line's) and does not level off (the second half's
 * slope at least half the first's: a warm-up that saturates does not).
 */
static int leak_like(const struct fit *all, const struct fit *lo, const struct fit *hi,
		     double span, const struct leak_opts *o)
{
	double slope = fit_slope(all);

	if (all->n < o->min_snaps || !(span > 0) || !(slope > 0) || slope < o->min_rate ||
	    fit_r2(all) < o->min_fit || slope * span < o->min_growth)
		return 0;
	if (lo->n < 2 || hi->n < 2 || fit_slope(lo) < slope / 4 || fit_slope(hi) < slope / 4)
		return 0;
	return fit_slope(hi) >= fit_slope(lo) / 2;
}

/*
 * The points before a window rose faster than those in it: levelling
 * off. Faster beyond twice the standard error of their slope: the few
 * points of a grace period under jitter can rise fast by chance.
 */
static int slowing(const struct fit *before, const struct fit *in)
{
	return before->n >= 3 &&
	       fit_slope(before) - 2 * fit_slope_err(before) > 1.5 * fit_slope(in);
}

/*
 * A leak that stopped: the thinned series splits where two lines fit it
 * best; the part before is leak_like(), the part after (at least half
 * the recent window long) grows by less than a quarter of --min-growth,
 * and the tag still holds at least --min-growth more than at the start.
 */
static int stopped_leak(const struct acc *a, const struct leak_opts *o, struct stopped *out)
{
	const struct pt *p = a->ser;
	size_t n = a->nser, k, best = 0, i;
	double best_sse = INFINITY;

	if (n < 8 || p[n - 1].y < o->min_growth)
		return 0;
	for (k = 4; k + 4 <= n; k++) {
		struct fit f1 = { 0 }, f2 = { 0 };
		double sse;

		for (i = 0; i < k; i++)
			fit_add(&f1, p[i].t, p[i].y);
		for (i = k; i < n; i++)
			fit_add(&f2, p[i].t, p[i].y);
		sse = f1.cyy * (1 - fit_r2(&f1)) + f2.cyy * (1 - fit_r2(&f2));
		if (sse < best_sse) {
			best_sse = sse;
			best = k;
		}
	}
	if (!best)
		return 0;
	{
		struct fit f1 = { 0 }, l1 = { 0 }, h1 = { 0 }, f2 = { 0 };
		double mid = (p[0].t + p[best - 1].t) / 2, span2 = p[n - 1].t - p[best].t;
		struct leak_opts lo = *o;

		for (i = 0; i < best; i++) {
			fit_add(&f1, p[i].t, p[i].y);
			if (p[i].t <= mid)
				fit_add(&l1, p[i].t, p[i].y);
			if (p[i].t >= mid)
				fit_add(&h1, p[i].t, p[i].y);
		}
		for (i = best; i < n; i++)
			fit_add(&f2, p[i].t, p[i].y);
		lo.min_snaps = 4;
		if (!leak_like(&f1, &l1, &h1, p[best - 1].t - p[0].t, &lo))
			return 0;
		if (span2 < o->recent / 2 || fit_slope(&f2) * span2 >= o->min_growth / 4)
			return 0;
		out->rate = fit_slope(&f1);
		out->fit = fit_r2(&f1);
		out->start = p[0].t;
		out->stop = p[best - 1].t;
	}
	return 1;
}

static struct row *add_row(struct boot_rep *br)
{
	br->r = xrealloc(br->r, (br->n + 1) * sizeof(*br->r));
	memset(&br->r[br->n], 0, sizeof(*br->r));
	return &br->r[br->n++];
}

static void analyse_boot(struct ai_db_state *st, const struct ai_db_snap *sn, size_t n,
			 const struct leak_opts *o, struct boot_rep *br)
{
	struct acc *acc = NULL;
	size_t cap = 0, k, i;
	double tend = sn[n - 1].taken_at, tjudge = sn[0].taken_at + o->grace;
	double trec = tend - o->recent;

	memset(br, 0, sizeof(*br));
	snprintf(br->boot_id, sizeof(br->boot_id), "%s", sn[0].boot_id);
	snprintf(br->host, sizeof(br->host), "%s", sn[n - 1].host);
	br->from = sn[0].id;
	br->to = sn[n - 1].id;
	br->nsnaps = n;
	br->t0 = sn[0].taken_at;
	br->t1 = tend;
	br->judged_from = tjudge;
	for (k = 0; k < n; k++)
		br->njudged += sn[k].taken_at >= tjudge;
	br->too_short = n > 1 && !(tend > br->t0);
	br->judged = !br->too_short && br->njudged >= (size_t)o->min_snaps;
	if (!br->judged)
		return;
	for (k = 0; k < n; k++) {
		double t = sn[k].taken_at;

		ai_db_state_load(st, sn[k].id);
		if (st->cap > cap) {
			acc = xrealloc(acc, st->cap * sizeof(*acc));
			memset(acc + cap, 0, (st->cap - cap) * sizeof(*acc));
			cap = st->cap;
		}
		for (i = 0; i < st->cap; i++) {
			struct acc *a = &acc[i];
			int64_t y = st->bytes[i];
			double rt, ry;

			if (st->calls[i] < 0)
				continue;
			if (a->seen && a->last_ord + 1 != k) {
				/*
				 * Absent from a snapshot since it appeared: its
				 * module was unloaded, and is back. Bytes kept
				 * through the reload continue the series; bytes
				 * given back start it again.
				 */
				a->reloads++;
				if (y < a->last_b)
					acc_restart(a);
			}
			a->seen = 1;
			if (a->on)
				a->grew += y > a->last_b;
			a->last_b = y;
			a->last_ord = k;
			if (t < trec)
				fit_add(&a->pre, t - br->t0, (double)y);
			if (t < tjudge) {
				fit_add(&a->early, t - br->t0, (double)y);
				continue;
			}
			if (!a->on) {
				a->on = 1;
				a->first_b = y;
				a->first_t = t;
				a->mid = (t + tend) / 2;
			}
			a->last_t = t;
			a->count++;
			rt = t - a->first_t;
			ry = (double)y - (double)a->first_b;
			fit_add(&a->all, rt, ry);
			if (t <= a->mid)
				fit_add(&a->lo, rt, ry);
			if (t >= a->mid)
				fit_add(&a->hi, rt, ry);
			if (t >= trec) {
				if (!a->rcount++) {
					a->rfirst_t = t;
					a->rmid = (t + tend) / 2;
				}
				fit_add(&a->rec, rt, ry);
				if (t <= a->rmid)
					fit_add(&a->rlo, rt, ry);
				if (t >= a->rmid)
					fit_add(&a->rhi, rt, ry);
			}
			ser_add(a, rt, ry);
		}
	}
	ai_db_state_names(st);
	for (i = 0; i < cap; i++) {
		struct acc *a = &acc[i];
		struct row x = { 0 };
		struct stopped sp = { 0 };
		int whole, recent, stop = 0;

		if (!a->on || a->last_ord != n - 1 || !(a->last_t > a->first_t))
			goto next;
		/*
		 * Not when the tag grew half as fast again before the window
		 * (in the grace period; before the recent window): a warm-up
		 * slowing down.
		 */
		whole = leak_like(&a->all, &a->lo, &a->hi, a->last_t - a->first_t, o) &&
			!slowing(&a->early, &a->all);
		/* the recent window alone: a leak that began late */
		recent = !whole && a->rcount < a->count &&
			 leak_like(&a->rec, &a->rlo, &a->rhi, a->last_t - a->rfirst_t, o) &&
			 !slowing(&a->pre, &a->rec);
		if (!whole && !recent)
			stop = stopped_leak(a, o, &sp);
		if ((!whole && !recent && !stop) || i >= st->nnames || !st->names[i].file)
			goto next;
		x.t = st->names[i];
		if (!ai_match(o->co, &x.t))
			goto next;
		if (ignored(o, &x.t)) {
			if (!stop && !br->nignored++)
				snprintf(br->ignored, sizeof(br->ignored), "%s:%u func:%s",
					 x.t.file, x.t.line, x.t.func);
			goto next;
		}
		/* the state's strings go with it: the row keeps its own */
		x.t.file = xstrdup(x.t.file);
		x.t.module = xstrdup(x.t.module);
		x.t.func = xstrdup(x.t.func);
		if (stop) {
			sp.t = x.t;
			sp.held = a->last_b - a->first_b;
			sp.start += a->first_t;
			sp.stop += a->first_t;
			br->stop = xrealloc(br->stop, (br->nstop + 1) * sizeof(*br->stop));
			br->stop[br->nstop++] = sp;
			goto next;
		}
		x.a = a->first_b;
		x.b = a->last_b;
		if (__builtin_sub_overflow(x.b, x.a, &x.d))
			x.d = x.b > x.a ? INT64_MAX : INT64_MIN;
		x.rate = fit_slope(whole ? &a->all : &a->rec);
		x.fit = fit_r2(whole ? &a->all : &a->rec);
		x.snaps = a->count;
		x.grew = a->grew;
		x.recent = !whole;
		x.reloads = a->reloads;
		*add_row(br) = x;
next:
		free(a->ser);
	}
	if (br->n)
		qsort(br->r, br->n, sizeof(*br->r), cmp_row);
	free(acc);
}

/* the boot ids of SN */
static size_t count_boots(const struct ai_db_snap *sn, size_t n)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(sn[j].boot_id, sn[i].boot_id); j++)
			;
		k += j == i;
	}
	return k;
}

/* the first snapshot of the boot of the last one */
static double first_of_last(const struct ai_db_snap *sn, size_t n)
{
	size_t i;

	for (i = 0; i < n && strcmp(sn[i].boot_id, sn[n - 1].boot_id); i++)
		;
	return sn[i].taken_at;
}

/* the leaks of the host picked (ai_db_host), over [from, to] */
static void analyse_host(sqlite3 *db, struct ai_db_state *st, const char *from,
			 const char *to, const struct leak_opts *o, struct host_rep *h)
{
	struct ai_db_snap *sn, *ok;
	size_t n, nok = 0, i, j, seg;
	int64_t a, b;
	double ta, tb;

	ai_db_snapshots(db, &sn, &n);
	for (i = 0; i < n && sn[i].status != AI_SNAP_OK; i++)
		;
	if (i == n) {
		h->empty = 1;
		free(sn);
		return;
	}
	pick_range(db, from, to, &a, &b);
	/*
	 * The window: from --from (or the first snapshot) to --to (or the
	 * last one, complete or not: captures refused since the last
	 * complete one are said too).
	 */
	ta = from ? snap_time(db, a) : -INFINITY;
	tb = to ? snap_time(db, b) : INFINITY;
	if (!from)
		a = INT64_MIN;
	if (!to)
		b = INT64_MAX;
	ok = xmalloc((n + 1) * sizeof(*ok));
	for (i = 0; i < n; i++) {
		if (sn[i].taken_at < ta || sn[i].taken_at > tb ||
		    (sn[i].taken_at == ta && sn[i].id < a) ||
		    (sn[i].taken_at == tb && sn[i].id > b))
			continue;
		if (sn[i].status == AI_SNAP_OK) {
			ok[nok++] = sn[i];
			continue;
		}
		/* said in the report: which, and why */
		if (!h->skipped++)
			snprintf(h->skipped_text, sizeof(h->skipped_text), "snapshot %lld %s (%s)",
				 (long long)sn[i].id, ai_snap_status_name(sn[i].status),
				 sn[i].problem);
	}
	free(sn);
	h->last_t = nok ? ok[nok - 1].taken_at : 0;
	/*
	 * A boot id back after another one: two systems running at once
	 * under one machine id (a cloned image). Each boot is then analysed
	 * apart, its snapshots together; the boots still running at the
	 * end are the last ones.
	 */
	for (i = 1, seg = 1; i < nok; i++)
		seg += !!strcmp(ok[i].boot_id, ok[i - 1].boot_id);
	if (seg > count_boots(ok, nok)) {
		struct ai_db_snap *g = xmalloc((nok + 1) * sizeof(*g));
		size_t ng = 0;

		h->shared = 0;
		for (i = 0; i < nok; i++) {
			if (!*ok[i].boot_id)
				continue;
			for (j = 0; j < i && strcmp(ok[j].boot_id, ok[i].boot_id); j++)
				;
			if (j < i)
				continue;
			for (j = i, seg = ng; j < nok; j++)
				if (!strcmp(ok[j].boot_id, ok[i].boot_id))
					g[ng++] = ok[j];
			/* --boot last: the boots whose last snapshot is after another's first */
			if (!o->all_boots && g[ng - 1].taken_at < first_of_last(ok, nok)) {
				h->earlier_boots++;
				h->earlier_snaps += ng - seg;
				continue;
			}
			h->shared++;
			h->nboots++;
			h->boots = xrealloc(h->boots, h->nboots * sizeof(*h->boots));
			analyse_boot(st, g + seg, ng - seg, o, &h->boots[h->nboots - 1]);
		}
		free(g);
		free(ok);
		return;
	}
	/* boots: runs of the same boot id, in time order */
	for (i = 0; i < nok; i = j) {
		for (j = i + 1; j < nok && !strcmp(ok[j].boot_id, ok[i].boot_id); j++)
			;
		if (j < nok && !o->all_boots) {
			h->earlier_boots++;
			h->earlier_snaps += j - i;
			continue;
		}
		seg = h->nboots++;
		h->boots = xrealloc(h->boots, h->nboots * sizeof(*h->boots));
		analyse_boot(st, ok + i, j - i, o, &h->boots[seg]);
	}
	free(ok);
}

static void free_hosts(struct host_rep *h, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < h[i].nboots; j++) {
			size_t k;

			for (k = 0; k < h[i].boots[j].n; k++) {
				free((char *)h[i].boots[j].r[k].t.file);
				free((char *)h[i].boots[j].r[k].t.module);
				free((char *)h[i].boots[j].r[k].t.func);
			}
			free(h[i].boots[j].r);
			for (k = 0; k < h[i].boots[j].nstop; k++) {
				free((char *)h[i].boots[j].stop[k].t.file);
				free((char *)h[i].boots[j].stop[k].t.module);
				free((char *)h[i].boots[j].stop[k].t.func);
			}
			free(h[i].boots[j].stop);
		}
		free(h[i].boots);
		free(h[i].name);
		free(h[i].machine_id);
	}
	free(h);
}

/* what the analysis judged, and what it could not */
static void print_judged(FILE *f, const struct boot_rep *br, const struct leak_opts *o)
{
	char t1[48], g[32], r[32];

	fmt_time(br->judged_from, t1, sizeof(t1));
	ai_fmt_duration(o->grace, g, sizeof(g));
	ai_fmt_duration(o->recent, r, sizeof(r));
	if (br->too_short)
		fprintf(f, "# too short to judge: the %zu snapshots were all taken at one time"
			" (captures imported without their times? record --time T)\n", br->nsnaps);
	else if (!br->judged)
		fprintf(f, "# not judged yet: the grace period after the boot (%s from its first"
			" snapshot) lasts until %s, and %lld snapshots after it are needed"
			" (%zu so far; --grace)\n", g, t1, (long long)o->min_snaps, br->njudged);
	else
		fprintf(f, "# judged: the %zu snapshots from %s (grace period %s after the boot's"
			" first snapshot; --grace), the whole of them and the recent %s (--recent)\n",
			br->njudged, t1, g, r);
}

static void print_text(FILE *f, const struct host_rep *h, size_t nh, const struct ai_common *co,
		       int all_hosts, const struct leak_opts *o)
{
	int w = co->exact ? 15 : 10;
	char b1[32], b2[32], b3[40], b4[48];
	size_t i, k, j;

	for (i = 0; i < nh; i++) {
		const struct host_rep *x = &h[i];

		if (!co->no_header && x->empty)
			fprintf(f, "# host %s: no complete snapshot\n", x->name);
		if (!co->no_header && x->skipped)
			fprintf(f, "# skipped %zu incomplete or refused snapshot(s) of %s: %s%s\n",
			       x->skipped, x->name, x->skipped_text, x->skipped > 1 ? ", ..." : "");
		if (!co->no_header && x->shared > 1)
			fprintf(f, "# machine id %s is shared by %zu systems running at once (their boots"
				" interleave: cloned images?): each boot is analysed on its own, by its"
				" node name\n", x->machine_id, x->shared);
		if (!co->no_header && x->earlier_boots)
			fprintf(f, "# not analysed: %zu snapshot(s) of %zu earlier boot(s) of %s"
			       " (--boot all)\n", x->earlier_snaps, x->earlier_boots, x->name);
		for (k = 0; k < x->nboots; k++) {
			const struct boot_rep *br = &x->boots[k];
			size_t shown = 0;

			if (!co->no_header) {
				fprintf(f, "# %zu leak suspect(s) on %s over %zu snapshots (%.0f s, %lld -> %lld)",
				       br->n, x->shared > 1 ? br->host : x->name, br->nsnaps, br->t1 - br->t0,
				       (long long)br->from, (long long)br->to);
				if (*br->boot_id)
					fprintf(f, ", boot %.8s", br->boot_id);
				fputc('\n', f);
				print_judged(f, br, o);
				if (br->nignored)
					fprintf(f, "# %zu more left out as expected growth (%s%s;"
					       " --no-default-ignore)\n", br->nignored, br->ignored,
					       br->nignored > 1 ? ", ..." : "");
				if (br->n)
					fprintf(f, "%s%14s %*s %*s %*s %5s %7s %-6s  %s\n",
						all_hosts ? "HOST  " : "", co->exact ? "BYTES/S" : "RATE",
						w, "GROWTH", w, "FIRST", w, "LAST", "FIT", "GREW",
						"WINDOW", "TAG");
			}
			for (j = 0; j < br->n && (!co->limit || shown < co->limit); j++, shown++) {
				const struct row *r = &br->r[j];
				char grew[32];

				snprintf(b3, sizeof(b3), "%s%s", r->d > 0 ? "+" : "",
					 ai_fmt_size(r->d, co->exact, b1, sizeof(b1)));
				snprintf(grew, sizeof(grew), "%lld/%lld", (long long)r->grew,
					 (long long)r->snaps - 1);
				if (all_hosts)
					fprintf(f, "%s  ", x->shared > 1 ? br->host : x->name);
				fprintf(f, "%14s %*s ", ai_fmt_rate(r->rate, co->exact, b4, sizeof(b4)), w, b3);
				fprintf(f, "%*s ", w, ai_fmt_size(r->a, co->exact, b1, sizeof(b1)));
				fprintf(f, "%*s %5.2f %7s %-6s  ", w, ai_fmt_size(r->b, co->exact, b2, sizeof(b2)),
				       r->fit, grew, r->recent ? "recent" : "boot");
				ai_fmt_tag(f, &r->t);
				if (r->reloads)
					fprintf(f, "  (module reloaded %lld time(s))", (long long)r->reloads);
				fputc('\n', f);
			}
			if (br->nstop && !co->no_header)
				fprintf(f, "# %zu leak(s) that stopped on %s, still holding their bytes:\n"
					"%s%*s %14s %-20s %-20s  %s\n", br->nstop, x->name,
					all_hosts ? "HOST  " : "", w, "HELD", "RATE WAS", "GREW FROM (UTC)",
					"STOPPED (UTC)", "TAG");
			for (j = 0; j < br->nstop; j++) {
				const struct stopped *sp = &br->stop[j];
				char t1[48], t2[48];

				fmt_time(sp->start, t1, sizeof(t1));
				fmt_time(sp->stop, t2, sizeof(t2));
				if (all_hosts)
					fprintf(f, "%s  ", x->name);
				fprintf(f, "%*s %14s %-20s %-20s  ", w,
					ai_fmt_size(sp->held, co->exact, b1, sizeof(b1)),
					ai_fmt_rate(sp->rate, co->exact, b4, sizeof(b4)), t1, t2);
				ai_fmt_tag(f, &sp->t);
				fputs("  (stopped)\n", f);
			}
		}
	}
}

static void json_row(FILE *f, const struct row *r)
{
	fputs("{\"file\":", f);
	ai_json_str(f, r->t.file);
	fprintf(f, ",\"line\":%u,\"module\":", r->t.line);
	if (*r->t.module)
		ai_json_str(f, r->t.module);
	else
		fputs("null", f);
	fputs(",\"func\":", f);
	ai_json_str(f, r->t.func);
	fprintf(f, ",\"rate\":%.3f,\"growth\":%lld,\"first\":%lld,\"last\":%lld,\"fit\":%.4f,"
		"\"snapshots\":%lld,\"grew\":%lld,\"window\":\"%s\",\"reloads\":%lld}", r->rate,
		(long long)r->d, (long long)r->a, (long long)r->b, r->fit, (long long)r->snaps,
		(long long)r->grew, r->recent ? "recent" : "boot", (long long)r->reloads);
}

static void print_json(FILE *f, const struct host_rep *h, size_t nh, const struct leak_opts *o)
{
	size_t i, k, j;

	fprintf(f, "{\"grace_seconds\":%.0f,\"recent_seconds\":%.0f,\"hosts\":[", o->grace,
		o->recent);
	for (i = 0; i < nh; i++) {
		const struct host_rep *x = &h[i];

		fputs(i ? ",\n{\"host\":" : "\n{\"host\":", f);
		ai_json_str(f, x->name);
		fputs(",\"machine_id\":", f);
		ai_json_str(f, x->machine_id);
		fprintf(f, ",\"shared_by\":%zu,\"skipped_snapshots\":%zu,\"skipped\":",
			x->shared > 1 ? x->shared : 1, x->skipped);
		ai_json_str(f, x->skipped_text);
		fprintf(f, ",\"earlier_boots\":%zu,\"earlier_boot_snapshots\":%zu,\"boots\":[",
			x->earlier_boots, x->earlier_snaps);
		for (k = 0; k < x->nboots; k++) {
			const struct boot_rep *br = &x->boots[k];

			fputs(k ? ",{\"boot_id\":" : "{\"boot_id\":", f);
			ai_json_str(f, br->boot_id);
			fputs(",\"host\":", f);
			ai_json_str(f, br->host);
			fprintf(f, ",\"from\":%lld,\"to\":%lld,\"snapshots\":%zu,\"seconds\":%.3f,"
				"\"judged_from\":%.3f,\"judged_snapshots\":%zu,\"judged\":%s,"
				"\"too_short\":%s,\"ignored_as_expected\":%zu,\"suspects\":[",
				(long long)br->from, (long long)br->to, br->nsnaps, br->t1 - br->t0,
				br->judged_from, br->njudged, br->judged ? "true" : "false",
				br->too_short ? "true" : "false", br->nignored);
			for (j = 0; j < br->n; j++) {
				fputs(j ? ",\n" : "\n", f);
				json_row(f, &br->r[j]);
			}
			fputs("],\"stopped\":[", f);
			for (j = 0; j < br->nstop; j++) {
				const struct stopped *sp = &br->stop[j];

				fputs(j ? ",\n{\"file\":" : "\n{\"file\":", f);
				ai_json_str(f, sp->t.file);
				fprintf(f, ",\"line\":%u,\"module\":", sp->t.line);
				if (*sp->t.module)
					ai_json_str(f, sp->t.module);
				else
					fputs("null", f);
				fputs(",\"func\":", f);
				ai_json_str(f, sp->t.func);
				fprintf(f, ",\"held\":%lld,\"rate\":%.3f,\"fit\":%.4f,\"grew_from\":%.3f,"
					"\"stopped_at\":%.3f}", (long long)sp->held, sp->rate, sp->fit,
					sp->start, sp->stop);
			}
			fputs("]}", f);
		}
		fputs("]}", f);
	}
	fputs("\n]}\n", f);
}

/* the labels of a host, with --all-hosts: nodename and machine_id */
static void prom_host(FILE *f, const struct host_rep *x, int all_hosts, int more)
{
	if (!all_hosts) {
		if (!more)
			return;
		fputc('{', f);
		return;
	}
	fputs("{nodename=", f);
	ai_prom_str(f, x->name);
	fputs(",machine_id=", f);
	ai_prom_str(f, x->machine_id);
	if (more)
		fputc(',', f);
}

static void prom_end(FILE *f, int all_hosts, int more)
{
	if (all_hosts || more)
		fputc('}', f);
}

/* The gauges of report leaks with one sample a host. */
enum host_gauge {
	HG_SUSPECTS, HG_ANALYSED, HG_SKIPPED, HG_LAST_SNAPSHOT, HG_JUDGED, HG_STOPPED,
	NR_HOST_GAUGES
};

static const struct {
	const char *name, *help;
	int decimals;
} host_gauges[NR_HOST_GAUGES] = {
	[HG_SUSPECTS] = { "allocinfo_leak_suspects",
		"Allocation tags that report leaks finds growing steadily in the last boot.", 0 },
	[HG_ANALYSED] = { "allocinfo_leak_analysed_snapshots",
		"Complete snapshots of the last boot that report leaks analysed.", 0 },
	[HG_SKIPPED] = { "allocinfo_leak_skipped_snapshots",
		"Incomplete or refused snapshots in the window, left out of the analysis.", 0 },
	[HG_LAST_SNAPSHOT] = { "allocinfo_leak_last_snapshot_timestamp_seconds",
		"Time of the last complete snapshot analysed.", 3 },
	[HG_JUDGED] = { "allocinfo_leak_judged",
		"1 when the last boot is past its grace period and was judged, 0 when not yet.", 0 },
	[HG_STOPPED] = { "allocinfo_leak_stopped",
		"Allocation tags that grew as leaks do in the last boot, then stopped.", 0 },
};

static double host_gauge_value(const struct host_rep *x, enum host_gauge g)
{
	size_t k, n = 0;

	switch (g) {
	case HG_SUSPECTS:
		for (k = 0; k < x->nboots; k++)
			n += x->boots[k].n;
		return (double)n;
	case HG_ANALYSED:
		return x->nboots ? (double)x->boots[x->nboots - 1].nsnaps : 0;
	case HG_SKIPPED:
		return (double)x->skipped;
	case HG_JUDGED:
		return x->nboots && x->boots[x->nboots - 1].judged;
	case HG_STOPPED:
		for (k = 0; k < x->nboots; k++)
			n += x->boots[k].nstop;
		return (double)n;
	default:
		return x->last_t;
	}
}

static void print_prom_host_gauge(FILE *f, enum host_gauge g, const struct host_rep *h,
				  size_t nh, int all_hosts)
{
	const char *name = host_gauges[g].name;
	size_t i;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, host_gauges[g].help, name);
	for (i = 0; i < nh; i++) {
		fputs(name, f);
		prom_host(f, &h[i], all_hosts, 0);
		prom_end(f, all_hosts, 0);
		fprintf(f, " %.*f\n", host_gauges[g].decimals, host_gauge_value(&h[i], g));
	}
}

static void print_prom(FILE *f, const struct host_rep *h, size_t nh, int all_hosts)
{
	static const char *const names[] = {
		"allocinfo_leak_rate_bytes_per_second", "allocinfo_leak_growth_bytes",
		"allocinfo_leak_fit",
	};
	static const char *const helps[] = {
		"Least-squares slope of the bytes of a leak suspect (report leaks).",
		"Bytes a leak suspect grew by over the window (last - first).",
		"R^2 of the line through the bytes of a leak suspect (1 = a straight line).",
	};
	size_t i, k, j, w;

	print_prom_host_gauge(f, HG_SUSPECTS, h, nh, all_hosts);
	for (w = 0; w < 3; w++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", names[w], helps[w], names[w]);
		for (i = 0; i < nh; i++)
			for (k = 0; k < h[i].nboots; k++)
				for (j = 0; j < h[i].boots[k].n; j++) {
					const struct row *r = &h[i].boots[k].r[j];

					fputs(names[w], f);
					prom_host(f, &h[i], all_hosts, 1);
					fputs("file=", f);
					ai_prom_str(f, r->t.file);
					fprintf(f, ",line=\"%u\",func=", r->t.line);
					ai_prom_str(f, r->t.func);
					fputs(",module=", f);
					ai_prom_str(f, ai_module_name(&r->t));
					prom_end(f, all_hosts, 1);
					if (w == 0)
						fprintf(f, " %.3f\n", r->rate);
					else if (w == 1)
						fprintf(f, " %lld\n", (long long)r->d);
					else
						fprintf(f, " %.4f\n", r->fit);
				}
	}
	print_prom_host_gauge(f, HG_ANALYSED, h, nh, all_hosts);
	print_prom_host_gauge(f, HG_SKIPPED, h, nh, all_hosts);
	print_prom_host_gauge(f, HG_LAST_SNAPSHOT, h, nh, all_hosts);
	print_prom_host_gauge(f, HG_JUDGED, h, nh, all_hosts);
	print_prom_host_gauge(f, HG_STOPPED, h, nh, all_hosts);
	fputs("# HELP allocinfo_leak_stopped_bytes Bytes a leak that stopped still holds (above its"
	      " first judged snapshot).\n# TYPE allocinfo_leak_stopped_bytes gauge\n", f);
	for (i = 0; i < nh; i++)
		for (k = 0; k < h[i].nboots; k++)
			for (j = 0; j < h[i].boots[k].nstop; j++) {
				const struct stopped *sp = &h[i].boots[k].stop[j];

				fputs("allocinfo_leak_stopped_bytes", f);
				prom_host(f, &h[i], all_hosts, 1);
				fputs("file=", f);
				ai_prom_str(f, sp->t.file);
				fprintf(f, ",line=\"%u\",func=", sp->t.line);
				ai_prom_str(f, sp->t.func);
				fputs(",module=", f);
				ai_prom_str(f, ai_module_name(&sp->t));
				prom_end(f, all_hosts, 1);
				fprintf(f, " %lld\n", (long long)sp->held);
			}
}

enum { FMT_TEXT, FMT_JSON, FMT_PROM };

static int report_leaks(sqlite3 *db, const struct ai_common *co, const char *host,
			int all_hosts, const char *from, const char *to,
			const struct leak_opts *o, int fmt, const char *out)
{
	struct ai_db_hostinfo *hi;
	struct ai_db_state st;
	struct host_rep *h;
	size_t nh = ai_db_hosts(db, &hi), i, k, found = 0, tooshort = 0;
	struct ai_out of;

	h = xcalloc(nh + 1, sizeof(*h));
	ai_db_state_init(&st, db);
	if (!all_hosts) {
		/* the host picked (or the only one): only it */
		const char *key;

		ai_db_host(db, host, "report leaks");
		key = ai_db_host_key();
		for (i = 0; i < nh && key && strcmp(hi[i].key, key); i++)
			;
		h[0].name = xstrdup(i < nh ? hi[i].name : "-");
		h[0].machine_id = xstrdup(i < nh ? hi[i].machine_id : "");
		analyse_host(db, &st, from, to, o, &h[0]);
		ai_db_hosts_free(hi, nh);
		nh = 1;
	} else {
		for (i = 0; i < nh; i++) {
			ai_db_select_key(hi[i].key);
			h[i].name = xstrdup(hi[i].name);
			h[i].machine_id = xstrdup(hi[i].machine_id);
			analyse_host(db, &st, from, to, o, &h[i]);
		}
	}
	ai_db_state_free(&st);
	if (all_hosts)
		ai_db_hosts_free(hi, nh);
	for (i = 0; i < nh; i++)
		for (k = 0; k < h[i].nboots; k++) {
			found += h[i].boots[k].n;
			tooshort += h[i].boots[k].too_short;
		}
	ai_out_open(&of, out);
	if (fmt == FMT_JSON)
		print_json(of.f, h, nh, o);
	else if (fmt == FMT_PROM)
		print_prom(of.f, h, nh, all_hosts);
	else
		print_text(of.f, h, nh, co, all_hosts, o);
	ai_out_commit(&of);
	free_hosts(h, nh);
	return found ? AI_EXIT_FOUND : tooshort ? AI_EXIT_SHORT : AI_EXIT_OK;
}

static int report_top(sqlite3 *db, const struct ai_common *co, const char *at,
		      const char *sort, int avg)
{
	struct ai_cols cols = { .avg = avg };
	int64_t id = pick_or_die(db, at, "--at");
	struct ai_snap s;
	struct ai_tag **v;
	size_t n;
	char tb[48];

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

/* --ignore-file FILE: one glob a line, '#' comments, kept for the command */
static void read_ignore_file(const char *path, const char ***v, size_t *n)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f)
		ai_die("report: cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strcspn(p, "#\r\n");
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == p)
			continue;
		*e = '\0';
		p = xstrdup(p);
		ai_keep(p);
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = p;
	}
	fclose(f);
}

/* the options of report that only some kinds use */
enum {
	R_FROM = 1 << 0, R_TO = 1 << 1, R_AT = 1 << 2, R_MIN_SNAPS = 1 << 3,
	R_MIN_RATE = 1 << 4, R_SORT = 1 << 5, R_MIN_FIT = 1 << 6, R_AVG = 1 << 7,
	R_MIN_GROWTH = 1 << 8, R_IGNORE = 1 << 9, R_FORMAT = 1 << 10, R_OUTPUT = 1 << 11,
	R_BOOT = 1 << 12, R_ALL_HOSTS = 1 << 13, R_GRACE = 1 << 14,
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
		{ "min-growth", required_argument, NULL, OPT_MIN_GROWTH },
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ "recent", required_argument, NULL, OPT_RECENT },
		{ "ignore", required_argument, NULL, OPT_IGNORE },
		{ "ignore-file", required_argument, NULL, OPT_IGNORE_FILE },
		{ "no-default-ignore", no_argument, NULL, OPT_NO_DEFAULT_IGNORE },
		{ "boot", required_argument, NULL, OPT_BOOT },
		{ "all-hosts", no_argument, NULL, OPT_ALL_HOSTS },
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
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
	const char *at = NULL, *sort = "size", *host = NULL, *out = NULL;
	struct leak_opts lo_ = {
		.min_snaps = LEAK_MIN_SNAPS, .min_rate = -INFINITY, .min_fit = LEAK_MIN_FIT,
		.min_growth = LEAK_MIN_GROWTH, .grace = LEAK_GRACE, .recent = LEAK_RECENT,
	};
	const char **ign = NULL;
	size_t nign = 0, i;
	uint64_t min_snaps = LEAK_MIN_SNAPS;
	int64_t size;
	int fmt = FMT_TEXT, no_default = 0, all_hosts = 0;
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
	while ((c = ai_getopt(argc, argv, "d:n:s:m:bHhF:o:", lo)) != -1) {
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
			if (ai_parse_u64(optarg, &min_snaps) < 0 || min_snaps < 3 ||
			    min_snaps > 1000000000)
				ai_usage_err("report: --min-snapshots wants 3 or more");
			break;
		case OPT_MIN_RATE:
			given |= R_MIN_RATE;
			lo_.min_rate = strtod(optarg, &e);
			if (*e || e == optarg || !isfinite(lo_.min_rate))
				ai_usage_err("report: --min-rate wants bytes per second");
			break;
		case OPT_MIN_GROWTH:
			given |= R_MIN_GROWTH;
			if (ai_parse_size(optarg, &size) < 0)
				ai_usage_err("report: --min-growth wants a size such as 0, 64K or 1M,"
					     " not '%s'", optarg);
			lo_.min_growth = (double)size;
			break;
		case OPT_GRACE:
			given |= R_GRACE;
			if (ai_parse_duration(optarg, &lo_.grace) < 0)
				ai_duration_err("report", "--grace", optarg);
			break;
		case OPT_RECENT:
			given |= R_GRACE;
			if (ai_parse_duration(optarg, &lo_.recent) < 0 || !(lo_.recent > 0))
				ai_duration_err("report", "--recent", optarg);
			break;
		case OPT_IGNORE:
			given |= R_IGNORE;
			ign = xrealloc(ign, (nign + 1) * sizeof(*ign));
			ign[nign++] = optarg;
			break;
		case OPT_IGNORE_FILE:
			given |= R_IGNORE;
			read_ignore_file(optarg, &ign, &nign);
			break;
		case OPT_NO_DEFAULT_IGNORE:
			given |= R_IGNORE;
			no_default = 1;
			break;
		case OPT_BOOT:
			given |= R_BOOT;
			if (strcmp(optarg, "last") && strcmp(optarg, "all"))
				ai_usage_err("report: --boot wants last or all, not '%s'", optarg);
			lo_.all_boots = !strcmp(optarg, "all");
			break;
		case OPT_ALL_HOSTS:
			given |= R_ALL_HOSTS;
			all_hosts = 1;
			break;
		case 'F':
			given |= R_FORMAT;
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "prometheus") || !strcmp(optarg, "prom"))
				fmt = FMT_PROM;
			else
				ai_usage_err("report: --format wants text, json or prometheus");
			break;
		case 'o':
			given |= R_OUTPUT;
			out = optarg;
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
			lo_.min_fit = strtod(optarg, &e);
			if (*e || e == optarg || !(lo_.min_fit >= 0 && lo_.min_fit <= 1))
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
			  R_FROM | R_TO | R_MIN_SNAPS | R_MIN_RATE | R_MIN_FIT | R_MIN_GROWTH |
			  R_IGNORE | R_FORMAT | R_OUTPUT | R_BOOT | R_ALL_HOSTS | R_GRACE },
			{ "top", CO_LIMIT | CO_MIN | CO_EXACT | CO_NOHDR | CO_FILTER,
			  R_AT | R_SORT | R_AVG },
		};
		static const struct { unsigned bit; const char *name; } names[] = {
			{ R_FROM, "--from" }, { R_TO, "--to" }, { R_AT, "--at" },
			{ R_MIN_SNAPS, "--min-snapshots" }, { R_MIN_RATE, "--min-rate" },
			{ R_SORT, "-s/--sort" }, { R_MIN_FIT, "--min-fit" },
			{ R_AVG, "--avg" }, { R_MIN_GROWTH, "--min-growth" },
			{ R_IGNORE, "--ignore/--ignore-file/--no-default-ignore" },
			{ R_FORMAT, "-F/--format" }, { R_OUTPUT, "-o/--output" },
			{ R_BOOT, "--boot" }, { R_ALL_HOSTS, "--all-hosts" },
			{ R_GRACE, "--grace/--recent" },
		};
		char what[32];
		size_t ui, j;

		for (ui = 0; strcmp(use[ui].kind, kind); ui++)
			;
		snprintf(what, sizeof(what), "report %s", kind);
		ai_only(&co, use[ui].co, what);
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			if (given & names[j].bit & ~use[ui].own)
				ai_not_here(names[j].name, what);
	}
	if (all_hosts && host)
		ai_usage_err("report: --all-hosts or --host NAME, not both");
	if (fmt == FMT_PROM && lo_.all_boots)
		ai_not_here("--boot all", "report leaks -F prometheus (the last boot's series)");
	if (fmt != FMT_TEXT && (co.no_header || co.exact || (co.given & CO_LIMIT)))
		ai_not_here("-H, -b and -n", "report leaks -F json or prometheus (every suspect,"
			    " exact)");
	lo_.co = &co;
	lo_.min_snaps = (int64_t)min_snaps;
	if (!no_default)
		for (i = 0; ai_expected_growth[i]; i++) {
			ign = xrealloc(ign, (nign + 1) * sizeof(*ign));
			ign[nign++] = ai_expected_growth[i];
		}
	lo_.ignore = ign;
	lo_.nignore = nign;
	db = ai_db_open(dbpath, AI_DB_READ);
	if (strcmp(kind, "leaks")) {
		char what[32];

		snprintf(what, sizeof(what), "report %s", kind);
		ai_db_host(db, host, strcmp(kind, "snapshots") || host ? what : NULL);
	}
	if (!strcmp(kind, "snapshots"))
		rc = report_snapshots(db, &co);
	else if (!strcmp(kind, "growth"))
		rc = report_growth(db, &co, from, to);
	else if (!strcmp(kind, "leaks"))
		rc = report_leaks(db, &co, host, all_hosts, from, to, &lo_, fmt, out);
	else
		rc = report_top(db, &co, at, sort, avg);
	free(ign);
	ai_db_select_key(NULL);
	sqlite3_close(db);
	return rc;
}
