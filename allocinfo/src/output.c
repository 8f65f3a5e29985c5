// SPDX-License-Identifier: GPL-2.0
/*
 * Text output: human sizes, a tag as the kernel prints it, the table of
 * tags that top and report top print.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

/* 1023 -> "1023B", 4096 -> "4.0KiB", -3276800 -> "-3.1MiB" */
const char *ai_human_d(double v, char *buf, size_t n)
{
	static const char *const unit[] = {
		"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};
	double d = fabs(v);
	int u = -1;

	if (d < 1024) {
		snprintf(buf, n, "%.0fB", v);
		return buf;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	/* 1023.96 KiB would round to "1024.0KiB": go one unit up */
	if (d >= 1023.95 && u < 5) {
		d /= 1024;
		u++;
	}
	snprintf(buf, n, "%s%.1f%s", v < 0 ? "-" : "", d, unit[u]);
	return buf;
}

const char *ai_human(int64_t v, char *buf, size_t n)
{
	return ai_human_d((double)v, buf, n);
}

/* a 128-bit integer, exact or human; sign: a '+' before positive values */
const char *ai_fmt_i128(__int128 v, int exact, int sign, char *buf, size_t n)
{
	char tmp[48];
	size_t k = sizeof(tmp);
	unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;

	if (!exact) {
		ai_human_d((double)v, tmp, sizeof(tmp));
		snprintf(buf, n, "%s%s", sign && v > 0 ? "+" : "", tmp);
		return buf;
	}
	tmp[--k] = '\0';
	do {
		tmp[--k] = '0' + (int)(u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--k] = '-';
	else if (sign && v > 0)
		tmp[--k] = '+';
	snprintf(buf, n, "%s", tmp + k);
	return buf;
}

const char *ai_fmt_size(int64_t v, int exact, char *buf, size_t n)
{
	if (exact) {
		snprintf(buf, n, "%lld", (long long)v);
		return buf;
	}
	return ai_human(v, buf, n);
}

/* The tag as the kernel prints it: file:line [module] func:name extra */
void ai_fmt_tag(FILE *f, const struct ai_tag *t)
{
	fprintf(f, "%s:%u", t->file, t->line);
	if (*t->module)
		fprintf(f, " [%s]", t->module);
	fprintf(f, " func:%s", t->func);
	if (*t->extra)
		fprintf(f, " %s", t->extra);
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

/*
 * Print tags as a table; shared with `report top`. cols (or NULL) adds
 * columns: AVG, the average allocation (bytes / calls), and RATE, the
 * bytes/s of each tag since the previous refresh of top --watch (NAN:
 * not known yet, or a new tag).
 */
void ai_print_tags(FILE *f, struct ai_tag **v, size_t n, size_t total_n,
		   const struct ai_common *co, const struct ai_cols *cols)
{
	size_t i, shown = co->limit && co->limit < n ? co->limit : n;
	int w = co->exact ? 15 : 10;
	int avg = cols && cols->avg, rate = cols && cols->rate;
	__int128 sum = 0;
	unsigned __int128 calls = 0;
	size_t neg = 0;
	char b[64];

	if (!co->no_header) {
		fprintf(f, "%*s %10s  ", w, "SIZE", "CALLS");
		if (avg)
			fprintf(f, "%*s  ", w, "AVG");
		if (rate)
			fprintf(f, "%14s  ", co->exact ? "BYTES/S" : "RATE");
		fputs("TAG\n", f);
	}
	for (i = 0; i < n; i++) {
		sum += v[i]->bytes;
		calls += v[i]->calls;
		neg += v[i]->bytes < 0;
		if (i >= shown)
			continue;
		fprintf(f, "%*s %10llu  ", w,
			ai_fmt_size(v[i]->bytes, co->exact, b, sizeof(b)),
			(unsigned long long)v[i]->calls);
		if (avg)
			fprintf(f, "%*s  ", w, v[i]->calls ?
				ai_fmt_size(v[i]->bytes / (int64_t)(v[i]->calls > INT64_MAX ?
					    INT64_MAX : v[i]->calls), co->exact, b, sizeof(b)) : "-");
		if (rate)
			fprintf(f, "%14s  ", ai_fmt_rate(cols->rate[i], co->exact, b, sizeof(b)));
		ai_fmt_tag(f, v[i]);
		tag_marks(f, v[i]);
		fputc('\n', f);
	}
	if (!co->no_header) {
		fprintf(f, "%*s %10llu  ", w,
			ai_fmt_size(sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ?
				    INT64_MIN : (int64_t)sum, co->exact, b, sizeof(b)),
			calls > UINT64_MAX ? UINT64_MAX : (unsigned long long)calls);
		if (avg)
			fprintf(f, "%*s  ", w, "");
		if (rate)
			fprintf(f, "%14s  ", "");
		fprintf(f, "total of %zu tag%s", n, n == 1 ? "" : "s");
		if (n != total_n)
			fprintf(f, " matching (of %zu)", total_n);
		if (shown != n)
			fprintf(f, ", %zu shown", shown);
		if (neg)
			fprintf(f, ", %zu NEGATIVE (broken accounting)", neg);
		fputc('\n', f);
	}
}

/* bytes/s: "+205B/s", exact "+204.80"; NAN: "-" */
const char *ai_fmt_rate(double r, int exact, char *b, size_t n)
{
	char h[24];

	if (isnan(r)) {
		snprintf(b, n, "-");
		return b;
	}
	if (exact) {
		snprintf(b, n, "%+.2f", r);
		return b;
	}
	ai_human((int64_t)llround(fabs(r)), h, sizeof(h));
	snprintf(b, n, "%s%s/s", r < 0 ? "-" : r > 0 ? "+" : "", h);
	return b;
}

/* 90 -> "90 s", 5400 -> "1.5 h" */
const char *ai_fmt_duration(double s, char *b, size_t n)
{
	if (s < 120)
		snprintf(b, n, "%g s", round(s * 100) / 100);
	else if (s < 7200)
		snprintf(b, n, "%g min", round(s / 60 * 10) / 10);
	else if (s < 2 * 86400)
		snprintf(b, n, "%g h", round(s / 3600 * 10) / 10);
	else
		snprintf(b, n, "%g d", round(s / 86400 * 10) / 10);
	return b;
}
