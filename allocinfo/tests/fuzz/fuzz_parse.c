// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the /proc/allocinfo parser: parse any bytes, with
 * and without summing duplicates, then sort and export the result in the
 * three formats, and in Prometheus format summed by module, subsys and
 * file with a top-N. Built with ASan and UBSan (make fuzz).
 */
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b)
{
	return ai_tag_cmp_name(*(struct ai_tag *const *)a,
			       *(struct ai_tag *const *)b);
}

static void one(const uint8_t *data, size_t size, int keep_dups, FILE *null)
{
	struct ai_parse_opts o = { .err = null, .keep_dups = keep_dups,
				   .max_msgs = 5 };
	struct ai_snap s = { .name = "fuzz" };
	char *buf = malloc(size + 1);
	struct ai_tag **v;
	size_t i;

	memcpy(buf, data, size);
	buf[size] = '\0';
	ai_parse_buffer(&s, buf, size, &o);
	v = malloc((s.ntags + 1) * sizeof(*v));
	for (i = 0; i < s.ntags; i++) {
		char h[64];

		v[i] = &s.tags[i];
		/* every string is terminated and inside the buffer */
		if (strlen(v[i]->file) > size || strlen(v[i]->func) > size ||
		    strlen(v[i]->module) > size || strlen(v[i]->extra) > size)
			abort();
		if (!*v[i]->file || !*v[i]->func)
			abort();
		if ((v[i]->bytes < 0) != !!(v[i]->flags & AI_F_NEGATIVE))
			abort();
		ai_human(v[i]->bytes, h, sizeof(h));
	}
	qsort(v, s.ntags, sizeof(*v), cmp);
	ai_export(null, &s, v, s.ntags, AI_EXPORT_PROM);
	ai_export(null, &s, v, s.ntags, AI_EXPORT_JSON);
	ai_export(null, &s, v, s.ntags, AI_EXPORT_CSV);
	{
		static const char *const by[] = { "module", "subsys", "file", "tag" };
		struct ai_prom_opts po = { .limit = 3, .nby = 0, .profiling = 1 };

		for (i = 0; i < 4; i++) {
			po.by[po.nby++] = by[i];
			ai_export_prom(null, &s, v, s.ntags, &po);
		}
	}
	free(v);
	ai_snap_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	one(data, size, 0, null);
	one(data, size, 1, null);
	return 0;
}
