// SPDX-License-Identifier: GPL-2.0
/*
 * The export formats: Prometheus text exposition format, JSON and CSV,
 * and the escaping each needs.
 */
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"

void ai_json_str(FILE *f, const char *s)
{
	ai_json_strn(f, s, strlen(s));
}

void ai_json_strn(FILE *f, const char *s, size_t n)
{
	const char *end = s + n;

	fputc('"', f);
	for (; s < end; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* RFC 4180: quote when the field holds a comma, quote or line break */
void ai_csv_str(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")] && *s != ' ' &&
	    (!*s || s[strlen(s) - 1] != ' ')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Prometheus label value: escape backslash, double quote and newline */
void ai_prom_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}


static void prom_labels(FILE *f, const struct ai_tag *t)
{
	fputs("{file=", f);
	ai_prom_str(f, t->file);
	fprintf(f, ",line=\"%u\",func=", t->line);
	ai_prom_str(f, t->func);
	/* vmlinux for built-in code, as in allocinfo_module_bytes: they join */
	fputs(",module=", f);
	ai_prom_str(f, ai_module_name(t));
	fprintf(f, ",accurate=\"%s\"}", t->flags & AI_F_INACCURATE ? "no" : "yes");
}

static void add_i64(int64_t *sum, int64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = v < 0 ? INT64_MIN : INT64_MAX;
}

static void add_u64(uint64_t *sum, uint64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = UINT64_MAX;
}

/* one series of an aggregated export */
struct pgroup {
	char *name;
	int64_t bytes, inaccurate, expected;
	uint64_t calls;
	size_t tags;
	size_t first;	/* input order of its first tag */
};

static int cmp_pgroup_size(const void *a, const void *b)
{
	const struct pgroup *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int cmp_pgroup_first(const void *a, const void *b)
{
	const struct pgroup *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static void help_type(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

/* tags summed by module, subsys or file, in input order of first tag */
static struct pgroup *group_tags(struct ai_tag **tags, size_t n, const char *by,
				 size_t *ng)
{
	struct pgroup *g = xcalloc(n + 1, sizeof(*g));
	struct ai_hmap m;
	size_t i, k, cnt = 0;
	char b[4096];

	ai_hmap_init(&m, n);
	for (i = 0; i < n; i++) {
		const struct ai_tag *t = tags[i];

		ai_group_name(t, by, b, sizeof(b));
		k = str_hash(b) & m.mask;
		while (m.slot[k] && strcmp(g[m.slot[k] - 1].name, b))
			k = (k + 1) & m.mask;
		if (!m.slot[k]) {
			g[cnt].name = xstrdup(b);
			g[cnt].first = i;
			m.slot[k] = ++cnt;
		}
		{
			struct pgroup *x = &g[m.slot[k] - 1];

			add_i64(&x->bytes, t->bytes);
			add_u64(&x->calls, t->calls);
			if (t->flags & AI_F_INACCURATE)
				add_i64(&x->inaccurate, t->bytes);
			if (ai_is_expected(t))
				add_i64(&x->expected, t->bytes);
			x->tags++;
		}
	}
	ai_hmap_free(&m);
	*ng = cnt;
	return g;
}

static int cmp_tag_size(const void *a, const void *b)
{
	const struct ai_tag *x = *(struct ai_tag *const *)a;
	const struct ai_tag *y = *(struct ai_tag *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

static int cmp_tag_input(const void *a, const void *b)
{
	const struct ai_tag *x = *(struct ai_tag *const *)a;
	const struct ai_tag *y = *(struct ai_tag *const *)b;

	return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

/*
 * Prometheus text format. Per tag (by NULL or "tag"): allocinfo_bytes and
 * allocinfo_calls with labels file, line, func, module and accurate. By
 * module, subsys or file: allocinfo_BY_bytes, _calls, _inaccurate_bytes
 * and _tags with one label, BY, and no line (which changes with every
 * kernel build). With a limit, the largest series are written and the
 * rest is summed in allocinfo_other_bytes and allocinfo_other_calls.
 * Every metric is a gauge: none is named _total.
 */
/* the series of one tag, the N largest, the rest summed in other */
static void prom_tags(FILE *f, struct ai_tag **tags, size_t n, uint64_t limit)
{
	struct ai_tag **v = xmalloc((n + 1) * sizeof(*v));
	int64_t other = 0;
	uint64_t ocalls = 0;
	size_t i, keep = n;

	memcpy(v, tags, n * sizeof(*v));
	if (limit && limit < n) {
		qsort(v, n, sizeof(*v), cmp_tag_size);
		keep = limit;
		for (i = keep; i < n; i++) {
			add_i64(&other, v[i]->bytes);
			add_u64(&ocalls, v[i]->calls);
		}
		qsort(v, keep, sizeof(*v), cmp_tag_input);
	}
	help_type(f, "allocinfo_bytes",
		  "Bytes allocated and not yet freed, per allocation tag (/proc/allocinfo).");
	for (i = 0; i < keep; i++) {
		fputs("allocinfo_bytes", f);
		prom_labels(f, v[i]);
		fprintf(f, " %lld\n", (long long)v[i]->bytes);
	}
	help_type(f, "allocinfo_calls",
		  "Allocations not yet freed, per allocation tag (/proc/allocinfo).");
	for (i = 0; i < keep; i++) {
		fputs("allocinfo_calls", f);
		prom_labels(f, v[i]);
		fprintf(f, " %llu\n", (unsigned long long)v[i]->calls);
	}
	help_type(f, "allocinfo_other_bytes",
		  "Bytes of the tags that --top left out of allocinfo_bytes (0 with --all).");
	fprintf(f, "allocinfo_other_bytes %lld\n", (long long)other);
	help_type(f, "allocinfo_other_calls",
		  "Allocations of the tags that --top left out of allocinfo_calls (0 with --all).");
	fprintf(f, "allocinfo_other_calls %llu\n", (unsigned long long)ocalls);
	free(v);
}

/* the series of the groups by module, subsys or file, as for tags */
static void prom_groups(FILE *f, struct ai_tag **tags, size_t n, const char *by,
			uint64_t limit)
{
	static const char *const what[] = {
		"bytes", "calls", "inaccurate_bytes", "expected_bytes", "tags"
	};
	static const char *const helps[] = {
		"Bytes allocated and not yet freed, summed by %s (/proc/allocinfo).",
		"Allocations not yet freed, summed by %s (/proc/allocinfo).",
		"Bytes of allocinfo_%s_bytes counted by tags marked accurate:no.",
		"Bytes of allocinfo_%s_bytes of expected growth: the page cache and anonymous memory.",
		"Allocation tags summed into each allocinfo_%s_bytes series.",
	};
	size_t ng, i, w, keep;
	struct pgroup *g = group_tags(tags, n, by, &ng);
	int64_t other = 0;
	uint64_t ocalls = 0;
	char name[64], help[160];

	keep = ng;
	if (limit && limit < ng) {
		qsort(g, ng, sizeof(*g), cmp_pgroup_size);
		keep = limit;
		for (i = keep; i < ng; i++) {
			add_i64(&other, g[i].bytes);
			add_u64(&ocalls, g[i].calls);
		}
		qsort(g, keep, sizeof(*g), cmp_pgroup_first);
	}
	for (w = 0; w < 5; w++) {
		snprintf(name, sizeof(name), "allocinfo_%s_%s", by, what[w]);
		snprintf(help, sizeof(help), helps[w], by);
		help_type(f, name, help);
		for (i = 0; i < keep; i++) {
			fprintf(f, "%s{%s=", name, by);
			ai_prom_str(f, g[i].name);
			if (w == 0)
				fprintf(f, "} %lld\n", (long long)g[i].bytes);
			else if (w == 1)
				fprintf(f, "} %llu\n", (unsigned long long)g[i].calls);
			else if (w == 2)
				fprintf(f, "} %lld\n", (long long)g[i].inaccurate);
			else if (w == 3)
				fprintf(f, "} %lld\n", (long long)g[i].expected);
			else
				fprintf(f, "} %zu\n", g[i].tags);
		}
	}
	snprintf(name, sizeof(name), "allocinfo_%s_other_bytes", by);
	snprintf(help, sizeof(help), "Bytes of the groups that --top left out of allocinfo_%s_bytes (0 with --all).", by);
	help_type(f, name, help);
	fprintf(f, "%s %lld\n", name, (long long)other);
	snprintf(name, sizeof(name), "allocinfo_%s_other_calls", by);
	snprintf(help, sizeof(help), "Allocations of the groups that --top left out of allocinfo_%s_calls (0 with --all).", by);
	help_type(f, name, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)ocalls);
	for (i = 0; i < ng; i++)
		free(g[i].name);
	free(g);
}

/*
 * Prometheus text format. Per tag ("tag", the default): allocinfo_bytes
 * and allocinfo_calls with labels file, line, func, module and accurate.
 * By module, subsys or file: allocinfo_BY_bytes, _calls,
 * _inaccurate_bytes and _tags with one label, BY, and no line (which
 * changes with every kernel build). Several may be asked for at once: one
 * file for the textfile collector, whose metric names must not repeat.
 * With a limit, each family keeps its largest series and sums the rest in
 * its _other_bytes and _other_calls. The unlabelled sums come once.
 * Every metric is a gauge: none is named _total.
 */
void ai_export_prom(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
		    size_t n, const struct ai_prom_opts *o)
{
	int64_t total = 0;
	uint64_t calls = 0;
	size_t i, neg = 0, inacc = 0;

	for (i = 0; i < n; i++) {
		add_i64(&total, tags[i]->bytes);
		add_u64(&calls, tags[i]->calls);
		neg += tags[i]->bytes < 0;
		inacc += !!(tags[i]->flags & AI_F_INACCURATE);
	}
	if (!o->nby)
		prom_tags(f, tags, n, o->limit);
	for (i = 0; i < o->nby; i++) {
		if (!strcmp(o->by[i], "tag"))
			prom_tags(f, tags, n, o->limit);
		else
			prom_groups(f, tags, n, o->by[i], o->limit);
	}
	help_type(f, "allocinfo_profile_bytes",
		  "Bytes over all the tags that match the filters, those left out by --top included.");
	fprintf(f, "allocinfo_profile_bytes %lld\n", (long long)total);
	help_type(f, "allocinfo_profile_calls",
		  "Allocations over all the tags that match the filters.");
	fprintf(f, "allocinfo_profile_calls %llu\n", (unsigned long long)calls);
	help_type(f, "allocinfo_tags", "Allocation tags that match the filters.");
	fprintf(f, "allocinfo_tags %zu\n", n);
	help_type(f, "allocinfo_inaccurate_tags",
		  "Tags marked accurate:no (format 2.0): their counters may be off.");
	fprintf(f, "allocinfo_inaccurate_tags %zu\n", inacc);
	help_type(f, "allocinfo_negative_tags",
		  "Tags with negative bytes (broken kernel accounting).");
	fprintf(f, "allocinfo_negative_tags %zu\n", neg);
	help_type(f, "allocinfo_skipped_lines", "Malformed input lines that were left out.");
	fprintf(f, "allocinfo_skipped_lines %zu\n", s->skipped);
	if (o->profiling >= 0) {
		help_type(f, "allocinfo_profiling_enabled",
			  "1 when memory allocation profiling is on (/proc/sys/vm/mem_profiling), 0 when off.");
		fprintf(f, "allocinfo_profiling_enabled %d\n", o->profiling);
	}
}

/* the pairs of extra string x, in order: key [*k, *v), value (*v, *e) */
static const char *pair(const char *x, const char **k, const char **v,
			const char **e)
{
	for (;;) {
		while (*x == ' ' || *x == '\t')
			x++;
		if (!*x)
			return NULL;
		*k = x;
		*e = x + strcspn(x, " \t");
		*v = memchr(x, ':', *e - x);
		if (*v)
			return *e;
		x = *e;	/* no colon: not a pair */
	}
}

/* the first value of key [k, k + n) in x, or NULL; *no: some value is "no" */
static const char *first_value(const char *x, const char *k, size_t n,
			       const char **vend, int *no)
{
	const char *pk, *pv, *pe, *found = NULL;

	*no = 0;
	while ((x = pair(x, &pk, &pv, &pe))) {
		if ((size_t)(pv - pk) != n || memcmp(pk, k, n))
			continue;
		if (pe - pv == 3 && !memcmp(pv + 1, "no", 2))
			*no = 1;
		if (!found) {
			found = pv + 1;
			*vend = pe;
		}
	}
	return found;
}

/*
 * The 2.0 pairs as a JSON object: a key written once, with its first
 * value (accurate:no wins over any other value of accurate).
 */
static void json_extra(FILE *f, const char *x)
{
	const char *all = x, *k, *v, *e, *fv, *fe;
	int first = 1, no;

	fputc('{', f);
	while ((x = pair(x, &k, &v, &e))) {
		fv = first_value(all, k, v - k, &fe, &no);
		if (fv != v + 1)
			continue;	/* a repeated key: written at its first place */
		if (!first)
			fputc(',', f);
		ai_json_strn(f, k, v - k);
		fputc(':', f);
		if (no && v - k == 8 && !memcmp(k, "accurate", 8))
			ai_json_str(f, "no");
		else
			ai_json_strn(f, v + 1, e - v - 1);
		first = 0;
	}
	fputc('}', f);
}

static void export_json(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
			size_t n)
{
	size_t i;

	fputs("{\"version\":", f);
	ai_json_str(f, s->version);
	fputs(",\"source\":", f);
	ai_json_str(f, s->name ? s->name : "");
	fprintf(f, ",\"skipped_lines\":%zu", s->skipped);
	/* where and when, when known: record reads them back from a capture */
	if (s->taken_at > 0)
		fprintf(f, ",\"taken_at\":%.3f", s->taken_at);
	{
		const char *k[] = { "host", "machine_id", "boot_id", "kernel" };
		const char *v[] = { s->id.host, s->id.machine_id, s->id.boot_id, s->id.kernel };
		size_t w;

		for (w = 0; w < 4; w++)
			if (*v[w]) {
				fprintf(f, ",\"%s\":", k[w]);
				ai_json_str(f, v[w]);
			}
	}
	fputs(",\"tags\":[", f);
	for (i = 0; i < n; i++) {
		const struct ai_tag *t = tags[i];

		fputs(i ? ",\n{\"file\":" : "\n{\"file\":", f);
		ai_json_str(f, t->file);
		fprintf(f, ",\"line\":%u,\"module\":", t->line);
		if (*t->module)
			ai_json_str(f, t->module);
		else
			fputs("null", f);
		fputs(",\"func\":", f);
		ai_json_str(f, t->func);
		fprintf(f, ",\"bytes\":%lld,\"calls\":%llu,\"lines\":%u,\"negative\":%s,"
			"\"clamped\":%s,\"extra\":",
			(long long)t->bytes, (unsigned long long)t->calls,
			t->nlines, t->bytes < 0 ? "true" : "false",
			t->flags & AI_F_SATURATED ? "true" : "false");
		json_extra(f, t->extra);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
}

static void export_csv(FILE *f, struct ai_tag **tags, size_t n)
{
	size_t i;

	fputs("bytes,calls,file,line,module,func,extra\r\n", f);
	for (i = 0; i < n; i++) {
		const struct ai_tag *t = tags[i];

		fprintf(f, "%lld,%llu,", (long long)t->bytes,
			(unsigned long long)t->calls);
		ai_csv_str(f, t->file);
		fprintf(f, ",%u,", t->line);
		ai_csv_str(f, t->module);
		fputc(',', f);
		ai_csv_str(f, t->func);
		fputc(',', f);
		ai_csv_str(f, t->extra);
		fputs("\r\n", f);
	}
}

void ai_export(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
	       size_t n, enum ai_export_fmt fmt)
{
	switch (fmt) {
	case AI_EXPORT_PROM: {
		struct ai_prom_opts o = { .nby = 0, .profiling = -1 };

		ai_export_prom(f, s, tags, n, &o);
		break;
	}
	case AI_EXPORT_JSON:
		export_json(f, s, tags, n);
		break;
	case AI_EXPORT_CSV:
		export_csv(f, tags, n);
		break;
	}
}
