// SPDX-License-Identifier: GPL-2.0
/*
 * plot: a line chart of the largest tags over time, drawn with cairo
 * (PNG or SVG). It is built into its own program, allocinfo-plot (with
 * plot_main.c), so that allocinfo itself links no graphics library:
 * 'allocinfo plot' runs allocinfo-plot.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"


#include <cairo.h>
#include <cairo-svg.h>
#include <sqlite3.h>

#include "store.h"

static const char plot_help[] =
"usage: allocinfo plot -d DB -o FILE [OPTIONS]\n"
"Draw the largest tags of the last snapshot over all complete snapshots\n"
"of the database as a line chart, with cairo. FILE ending in .svg gives\n"
"SVG, anything else PNG.\n"
"\n"
"  -d, --db DB        the database written by 'allocinfo record'\n"
"  -o, --output FILE  the chart, written atomically (a failure leaves the\n"
"                     old one); a device or FIFO is written through\n"
"  -n N               the N largest tags (default 8, 1..20)\n"
"      --by KEY       tag (default), subsys or module: plot sums instead\n"
"      --width W      width in pixels (default 1100)\n"
"      --height H     height in pixels (default 600)\n"
"      --title TEXT   the chart's title\n"
"      --log          a logarithmic y axis (ticks at powers of 2; values\n"
"                     below 1 byte are left out)\n"
"  -v, --verbose      print the layout on stderr: title, ticks, legend\n"
"      --host NAME    the snapshots of host NAME (needed when the database\n"
"                     holds several hosts)\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only the tags that match (see 'top --help')\n"
"  -h, --help         this help\n";

static const double palette[][3] = {
	{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 },
	{ 0.84, 0.15, 0.16 }, { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	{ 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 }, { 0.74, 0.74, 0.13 },
	{ 0.09, 0.75, 0.81 },
};
#define NPAL (sizeof(palette) / sizeof(palette[0]))
#define AI_PLOT_MAX_LINES 20

struct line {
	char *label;
	double *v;	/* per snapshot; NAN when absent */
	double last;
};

static double nice_step(double range, int want)
{
	double raw = range / want, mag, f;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

static void text(cairo_t *cr, double x, double y, const char *s, double ax)
{
	cairo_text_extents_t ex;

	cairo_text_extents(cr, s, &ex);
	cairo_move_to(cr, x - ax * ex.x_advance, y);
	cairo_show_text(cr, s);
}

/* cairo's writer: the bytes go to the output file (see ai_out_open) */
static cairo_status_t write_out(void *closure, const unsigned char *data,
				unsigned int len)
{
	struct ai_out *o = closure;

	if (fwrite(data, 1, len, o->f) == len)
		return CAIRO_STATUS_SUCCESS;
	if (!o->err)
		o->err = errno;
	return CAIRO_STATUS_WRITE_ERROR;
}

/* the group a tag is plotted in: its name, or its module or subsystem */
static void group_name(const struct ai_tag *t, const char *by, char *b, size_t n)
{
	if (!strcmp(by, "tag"))
		snprintf(b, n, "%s%s%s%s (%s:%u)", t->func, *t->module ? " [" : "",
			 t->module, *t->module ? "]" : "", t->file, t->line);
	else
		ai_group_name(t, by, b, n);
}

int cmd_plot(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "height", required_argument, NULL, OPT_HEIGHT },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "log", no_argument, NULL, OPT_LOG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "func", required_argument, NULL, OPT_FUNC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { .limit = 8 };
	const char *dbpath = NULL, *out = NULL, *title = NULL, *by = "tag";
	const char *host = NULL;
	uint64_t width = 1100, height = 600;
	struct ai_db_snap *snaps;
	struct ai_db_state state;
	struct line *lines = NULL;
	size_t nsnaps, nlines = 0, i, j, k;
	struct ai_snap last;
	struct ai_tag **v;
	size_t nv;
	sqlite3 *db;
	cairo_surface_t *sf;
	struct ai_out o;
	cairo_t *cr;
	double x0, x1, y0, y1, tmin, tmax, vmin = 0, vmax = 0, step, tstep, tunit;
	const char *unit = "B";
	double div = 1;
	int svg, c, logy = 0, verbose = 0, by_given = 0;
	char b[1024], tb[64];

	while ((c = ai_getopt(argc, argv, "d:o:n:vh", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_BY:
			if (by_given++)
				ai_usage_err("plot: --by given twice (it takes one value)");
			by = optarg;
			break;
		case OPT_WIDTH:
		case OPT_HEIGHT:
			if (ai_parse_u64(optarg, c == OPT_WIDTH ? &width : &height) < 0 ||
			    (c == OPT_WIDTH ? width : height) < 300 ||
			    (c == OPT_WIDTH ? width : height) > 10000)
				ai_usage_err("plot: sizes are 300..10000 pixels");
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_HOST:
			host = optarg;
			break;
		case OPT_LOG:
			logy = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(plot_help, stdout);
			return 0;
		default:
			ai_usage_err("plot: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("plot: unexpected argument '%s'", argv[optind]);
	if (!dbpath || !out)
		ai_usage_err("plot: -d DB and -o FILE are needed");
	if (strcmp(by, "tag") && strcmp(by, "subsys") && strcmp(by, "module"))
		ai_usage_err("plot: --by wants tag, subsys or module");
	if (co.limit == 0 || co.limit > AI_PLOT_MAX_LINES)
		ai_usage_err("plot: -n wants 1..%d (more lines are unreadable; pick tags with --module, --path or --func)",
			     AI_PLOT_MAX_LINES);

	db = ai_db_open(dbpath, AI_DB_READ);
	ai_db_host(db, host, "plot");
	ai_db_snapshots(db, &snaps, &nsnaps);
	/* complete snapshots only: a capture cut in half is no point of a line */
	for (i = j = 0; i < nsnaps; i++)
		if (snaps[i].status == AI_SNAP_OK)
			snaps[j++] = snaps[i];
	if (j < nsnaps)
		ai_warn("plot: %zu incomplete or refused snapshot(s) left out ('report"
			" snapshots' says why)", nsnaps - j);
	nsnaps = j;
	if (!nsnaps)
		ai_die("plot: %s has no complete snapshots", dbpath);
	ai_db_state_init(&state, db);

	if (!strcmp(by, "tag")) {
		/* the largest tags of the last snapshot, with their history */
		ai_db_state_load(&state, snaps[nsnaps - 1].id);
		ai_db_state_snap(&state, &last, NULL);
		v = ai_select(&last, &co, &nv);
		ai_sort_tags(v, nv, "size");
		for (j = 0; j < nv && j < co.limit; j++) {
			lines = xrealloc(lines, (nlines + 1) * sizeof(*lines));
			group_name(v[j], by, b, sizeof(b));
			lines[nlines].label = xstrdup(b);
			lines[nlines].v = xmalloc(nsnaps * sizeof(double));
			for (i = 0; i < nsnaps; i++)
				lines[nlines].v[i] = NAN;
			nlines++;
		}
		free(v);
		ai_snap_free(&last);
	}
	for (i = 0; i < nsnaps; i++) {
		struct ai_snap s;

		ai_db_state_load(&state, snaps[i].id);
		ai_db_state_snap(&state, &s, NULL);
		v = ai_select(&s, &co, &nv);
		for (j = 0; j < nv; j++) {
			group_name(v[j], by, b, sizeof(b));
			for (k = 0; k < nlines; k++)
				if (!strcmp(lines[k].label, b))
					break;
			if (k == nlines) {
				if (!strcmp(by, "tag"))
					continue;
				/* sums: every group, the largest kept below */
				lines = xrealloc(lines, (nlines + 1) * sizeof(*lines));
				lines[k].label = xstrdup(b);
				lines[k].v = xmalloc(nsnaps * sizeof(double));
				for (size_t q = 0; q < nsnaps; q++)
					lines[k].v[q] = NAN;
				nlines++;
			}
			if (isnan(lines[k].v[i]))
				lines[k].v[i] = 0;
			lines[k].v[i] += (double)v[j]->bytes;
		}
		free(v);
		ai_snap_free(&s);
	}
	ai_db_state_free(&state);
	for (k = 0; k < nlines; k++) {
		lines[k].last = 0;
		for (i = nsnaps; i-- > 0;)
			if (!isnan(lines[k].v[i])) {
				lines[k].last = lines[k].v[i];
				break;
			}
	}
	/* largest last value first, keep co.limit */
	for (k = 0; k < nlines; k++)
		for (j = k + 1; j < nlines; j++)
			if (lines[j].last > lines[k].last) {
				struct line t = lines[k];

				lines[k] = lines[j];
				lines[j] = t;
			}
	while (nlines > co.limit) {
		nlines--;
		free(lines[nlines].label);
		free(lines[nlines].v);
	}
	if (!nlines) {
		ai_warn("plot: no tag matches the filters in %s; nothing drawn", dbpath);
		free(lines);
		free(snaps);
		sqlite3_close(db);
		return AI_EXIT_FATAL;
	}
	vmin = logy ? INFINITY : 0;
	for (k = 0; k < nlines; k++)
		for (i = 0; i < nsnaps; i++) {
			double y = lines[k].v[i];

			if (isnan(y))
				continue;
			if (logy) {
				/* a log axis shows what is above 0 */
				if (y < 1) {
					lines[k].v[i] = NAN;
					continue;
				}
				vmin = fmin(vmin, y);
			} else {
				vmin = fmin(vmin, y);
			}
			vmax = fmax(vmax, y);
		}
	if (logy) {
		/* ticks at powers of 2, every ystep-th one */
		double e0, e1;

		if (!isfinite(vmin))
			vmin = vmax = 1;
		e0 = floor(log2(vmin));
		e1 = ceil(log2(vmax));
		if (e1 <= e0)
			e1 = e0 + 1;
		step = 1;
		while ((e1 - e0) / step > 8)
			step = step < 2 ? 2 : step < 5 ? 5 : step < 10 ? 10 : step * 2;
		vmin = floor(e0 / step) * step;
		vmax = ceil(e1 / step) * step;
	} else {
		if (vmax <= vmin)
			vmax = vmin + 1024;
		if (vmax - vmin >= 1024.0 * 1024 * 1024) {
			unit = "GiB";
			div = 1024.0 * 1024 * 1024;
		} else if (vmax - vmin >= 1024.0 * 1024) {
			unit = "MiB";
			div = 1024.0 * 1024;
		} else if (vmax - vmin >= 1024.0) {
			unit = "KiB";
			div = 1024.0;
		}
		step = nice_step((vmax - vmin) / div, 6) * div;
		vmax = ceil(vmax / step) * step;
		vmin = floor(vmin / step) * step;
	}
	tmin = snaps[0].taken_at;
	tmax = snaps[nsnaps - 1].taken_at;
	if (tmax <= tmin)
		tmax = tmin + 1;
	tunit = tmax - tmin >= 7200 ? 3600 : tmax - tmin >= 300 ? 60 : 1;

	svg = strlen(out) > 4 && !strcmp(out + strlen(out) - 4, ".svg");
	/* a temporary file renamed over OUT at the end: a failure leaves the old chart */
	ai_out_open(&o, out);
	if (svg)
		sf = cairo_svg_surface_create_for_stream(write_out, &o, width, height);
	else
		sf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
	if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS)
		ai_die("plot: cannot create %s: %s", out,
		       cairo_status_to_string(cairo_surface_status(sf)));
	cr = cairo_create(sf);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       CAIRO_FONT_WEIGHT_NORMAL);

	/*
	 * The legend takes what its longest entry needs, up to 45% of the
	 * width: a wider chart shows longer tag names.
	 */
	cairo_set_font_size(cr, 11);
	{
		double need = 0, most = 0.45 * width;
		char hb[32];

		for (k = 0; k < nlines; k++) {
			cairo_text_extents_t ex;

			snprintf(b, sizeof(b), "%s  %s",
				 ai_human((int64_t)lines[k].last, hb, sizeof(hb)),
				 lines[k].label);
			cairo_text_extents(cr, b, &ex);
			need = fmax(need, ex.x_advance + 50);
		}
		x1 = width - fmin(need, most);
	}
	x0 = 80;
	y0 = height - 60;
	y1 = 50;

	/* time ticks at round numbers of the unit, as many as fit */
	{
		double room = x1 - x0, lw;
		cairo_text_extents_t ex;
		int tries;

		tstep = nice_step((tmax - tmin) / tunit, 8) * tunit;
		for (tries = 0; tries < 64; tries++) {
			snprintf(b, sizeof(b), "+%g%s", round((tmax - tmin) / tunit * 1000) / 1000,
				 tunit == 3600 ? "h" : tunit == 60 ? "min" : "s");
			cairo_text_extents(cr, b, &ex);
			lw = ex.x_advance + 12;
			if (tstep / (tmax - tmin) * room >= lw)
				break;
			tstep = nice_step(tstep / tunit * 1.5, 1) * tunit;
		}
	}

	/* title */
	{
		time_t t0 = (time_t)tmin;
		struct tm tm;

		gmtime_r(&t0, &tm);
		strftime(tb, sizeof(tb), "%Y-%m-%d %H:%M:%S UTC", &tm);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_font_size(cr, 16);
	snprintf(b, sizeof(b), "%s", title ? title :
		 !strcmp(by, "subsys") ? "allocinfo: largest subsystems over time" :
		 !strcmp(by, "module") ? "allocinfo: largest modules over time" :
		 "allocinfo: largest allocation tags over time");
	if (logy && !title)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), " (log scale)");
	text(cr, width / 2.0, 28, b, 0.5);
	if (verbose)
		fprintf(stderr, "title: %s\n", b);

	/* grid and axes */
	cairo_set_font_size(cr, 11);
	cairo_set_line_width(cr, 1);
	for (double yv = vmin; yv <= vmax + step / 2; yv += step) {
		double y = y0 - (yv - vmin) / (vmax - vmin) * (y0 - y1);
		char hb[32];

		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, x0, y);
		cairo_line_to(cr, x1, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		if (logy)
			snprintf(b, sizeof(b), "%s", ai_human_d(exp2(yv), hb, sizeof(hb)));
		else
			snprintf(b, sizeof(b), "%g %s", yv / div, unit);
		text(cr, x0 - 6, y + 4, b, 1);
		if (verbose)
			fprintf(stderr, "ytick: %s bytes %.0f\n", b, logy ? exp2(yv) : yv);
	}
	for (double tv = 0; tv <= tmax - tmin + tstep / 2; tv += tstep) {
		double x = x0 + tv / (tmax - tmin) * (x1 - x0);
		cairo_text_extents_t ex;

		if (x > x1 + 1)
			break;
		cairo_set_source_rgb(cr, 0.92, 0.92, 0.92);
		cairo_move_to(cr, x, y0);
		cairo_line_to(cr, x, y1);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		snprintf(b, sizeof(b), "+%g%s", round(tv / tunit * 1000) / 1000,
			 tunit == 3600 ? "h" : tunit == 60 ? "min" : "s");
		text(cr, x, y0 + 16, b, 0.5);
		if (verbose) {
			cairo_text_extents(cr, b, &ex);
			fprintf(stderr, "xtick: %s at %.1f width %.1f\n", b, x, ex.x_advance);
		}
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_rectangle(cr, x0, y1, x1 - x0, y0 - y1);
	cairo_stroke(cr);
	snprintf(b, sizeof(b), "time since %s (%zu snapshots)", tb, nsnaps);
	text(cr, (x0 + x1) / 2, height - 20, b, 0.5);

	/* the lines and the legend */
	for (k = 0; k < nlines; k++) {
		const double *col = palette[k % NPAL];
		int pen = 0;
		char hb[32];

		cairo_set_source_rgb(cr, col[0], col[1], col[2]);
		cairo_set_line_width(cr, 2);
		if (k >= NPAL) {
			double dash[] = { 6, 3 };

			cairo_set_dash(cr, dash, 2, 0);
		}
		for (i = 0; i < nsnaps; i++) {
			double x, y, yv = lines[k].v[i];

			if (isnan(yv)) {
				pen = 0;
				continue;
			}
			if (logy)
				yv = log2(yv);
			x = x0 + (snaps[i].taken_at - tmin) / (tmax - tmin) * (x1 - x0);
			y = y0 - (yv - vmin) / (vmax - vmin) * (y0 - y1);
			if (pen)
				cairo_line_to(cr, x, y);
			else
				cairo_move_to(cr, x, y);
			pen = 1;
			if (nsnaps <= 50) {
				cairo_stroke(cr);
				cairo_arc(cr, x, y, 2.5, 0, 2 * M_PI);
				cairo_fill(cr);
				cairo_move_to(cr, x, y);
			}
		}
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		cairo_move_to(cr, x1 + 15, y1 + 10 + 22 * k);
		cairo_line_to(cr, x1 + 35, y1 + 10 + 22 * k);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		/* shorten the label until it fits right of the chart */
		for (size_t keep = strlen(lines[k].label);; keep--) {
			cairo_text_extents_t ex;

			snprintf(b, sizeof(b), "%s  %.*s%s",
				 ai_human((int64_t)lines[k].last, hb, sizeof(hb)),
				 (int)keep, lines[k].label,
				 keep < strlen(lines[k].label) ? "~" : "");
			cairo_text_extents(cr, b, &ex);
			if (keep == 0 || x1 + 40 + ex.x_advance <= width - 8)
				break;
		}
		text(cr, x1 + 40, y1 + 14 + 22 * k, b, 0);
		if (verbose)
			fprintf(stderr, "legend: %s\n", b);
	}
	cairo_destroy(cr);
	/*
	 * A write error stops cairo's writer; the stream keeps its errno and
	 * ai_out_commit() reports it, with the file name, once.
	 */
	if (!svg)
		cairo_surface_write_to_png_stream(sf, write_out, &o);
	cairo_surface_finish(sf);
	if (!ferror(o.f) && cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS)
		ai_die("plot: cannot draw %s: %s", out,
		       cairo_status_to_string(cairo_surface_status(sf)));
	cairo_surface_destroy(sf);
	ai_out_commit(&o);
	cairo_debug_reset_static_data();	/* font caches: for leak checkers */
	for (k = 0; k < nlines; k++) {
		free(lines[k].label);
		free(lines[k].v);
	}
	free(lines);
	free(snaps);
	sqlite3_close(db);
	return 0;
}
