// SPDX-License-Identifier: GPL-2.0
/*
 * The export formats: Prometheus text exposition format, JSON and CSV,
 * and the escaping each needs.
 */
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
	fputs(",module=", f);
	ai_prom_str(f, t->module);
	fputc('}', f);
}

static void export_prom(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
			size_t n)
{
	long long total = 0;
	size_t i, neg = 0;

	fputs("# HELP allocinfo_bytes Bytes allocated and not yet freed, per allocation tag (/proc/allocinfo).\n"
	      "# TYPE allocinfo_bytes gauge\n", f);
	for (i = 0; i < n; i++) {
		fputs("allocinfo_bytes", f);
		prom_labels(f, tags[i]);
		fprintf(f, " %lld\n", (long long)tags[i]->bytes);
		if (__builtin_add_overflow(total, (long long)tags[i]->bytes, &total))
			total = tags[i]->bytes < 0 ? INT64_MIN : INT64_MAX;
		neg += tags[i]->bytes < 0;
	}
	fputs("# HELP allocinfo_calls Allocations not yet freed, per allocation tag (/proc/allocinfo).\n"
	      "# TYPE allocinfo_calls gauge\n", f);
	for (i = 0; i < n; i++) {
		fputs("allocinfo_calls", f);
		prom_labels(f, tags[i]);
		fprintf(f, " %llu\n", (unsigned long long)tags[i]->calls);
	}
	fprintf(f, "# HELP allocinfo_total_bytes Sum of allocinfo_bytes over the exported tags.\n"
		"# TYPE allocinfo_total_bytes gauge\n"
		"allocinfo_total_bytes %lld\n"
		"# HELP allocinfo_tags Allocation tags exported.\n"
		"# TYPE allocinfo_tags gauge\n"
		"allocinfo_tags %zu\n"
		"# HELP allocinfo_negative_tags Tags with negative bytes (broken kernel accounting).\n"
		"# TYPE allocinfo_negative_tags gauge\n"
		"allocinfo_negative_tags %zu\n"
		"# HELP allocinfo_skipped_lines Malformed input lines that were left out.\n"
		"# TYPE allocinfo_skipped_lines gauge\n"
		"allocinfo_skipped_lines %zu\n",
		total, n, neg, s->skipped);
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
	fprintf(f, ",\"skipped_lines\":%zu,\"tags\":[", s->skipped);
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
		fprintf(f, ",\"bytes\":%lld,\"calls\":%llu,\"lines\":%u,\"negative\":%s,\"extra\":",
			(long long)t->bytes, (unsigned long long)t->calls,
			t->nlines, t->bytes < 0 ? "true" : "false");
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
	case AI_EXPORT_PROM:
		export_prom(f, s, tags, n);
		break;
	case AI_EXPORT_JSON:
		export_json(f, s, tags, n);
		break;
	case AI_EXPORT_CSV:
		export_csv(f, tags, n);
		break;
	}
}
