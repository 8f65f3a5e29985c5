// SPDX-License-Identifier: GPL-2.0
/*
 * The model: allocation tags, their key (file, line, module, func), the
 * hash set that pairs equal keys, and the sort orders.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"

uint64_t ai_tag_hash(const struct ai_tag *t)
{
	const char *strs[3] = { t->file, t->module, t->func };
	uint64_t h = 1469598103934665603ULL ^ t->line;
	int i;

	for (i = 0; i < 3; i++) {
		const unsigned char *c = (const unsigned char *)strs[i];

		for (; *c; c++)
			h = (h ^ *c) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

int ai_tag_same(const struct ai_tag *a, const struct ai_tag *b)
{
	return a->line == b->line && !strcmp(a->file, b->file) &&
	       !strcmp(a->func, b->func) && !strcmp(a->module, b->module);
}

void ai_hmap_init(struct ai_hmap *m, size_t n)
{
	size_t cap = 16;

	while (cap < n * 2)
		cap *= 2;
	m->slot = xcalloc(cap, sizeof(*m->slot));
	m->mask = cap - 1;
}

void ai_hmap_free(struct ai_hmap *m)
{
	free(m->slot);
	m->slot = NULL;
}

int ai_tag_cmp_name(const struct ai_tag *a, const struct ai_tag *b)
{
	int r = strcmp(a->file, b->file);

	if (r)
		return r;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	r = strcmp(a->module, b->module);
	if (r)
		return r;
	return strcmp(a->func, b->func);
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

	if (!strcmp(key, "input")) {
		qsort(v, n, sizeof(*v), cmp_lineno);
		return 0;
	}
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

const char *ai_module_name(const struct ai_tag *t)
{
	return *t->module ? t->module : "vmlinux";
}


/*
 * The group of a tag: by "module" its module (vmlinux for built-in
 * code), by "file" its source file, by "subsys" the top-level directory
 * of its file (mm/, fs/), one level further under drivers/, arch/ and
 * sound/ (drivers/gpu/), as tree --by subsys sums.
 */
void ai_group_name(const struct ai_tag *t, const char *by, char *b, size_t n)
{
	const char *p = t->file, *e;

	if (!strcmp(by, "module")) {
		snprintf(b, n, "%s", ai_module_name(t));
	} else if (!strcmp(by, "subsys")) {
		while (*p == '/')
			p++;
		e = strchr(p, '/');
		if (e && (!strncmp(p, "drivers/", 8) || !strncmp(p, "arch/", 5) ||
			  !strncmp(p, "sound/", 6)) && strchr(e + 1, '/'))
			e = strchr(e + 1, '/');
		snprintf(b, n, "%.*s", e ? (int)(e - p + 1) : (int)strlen(p), p);
	} else {
		snprintf(b, n, "%s", t->file);
	}
}

/*
 * Expected growth: the page cache and anonymous memory (heaps, their
 * page tables, swap cache, tmpfs) grow with the workload and are given
 * back under pressure. report leaks leaves these tags out by default,
 * export sums them in allocinfo_KEY_expected_bytes, and the alert rules
 * (monitoring/allocinfo.rules.yml) leave them out; the tests check that
 * the rules name the same functions. Globs of the function name.
 */
const char *const ai_expected_growth[] = {
	/* the page cache, its readahead and buffer heads */
	"__filemap_get_folio", "filemap_alloc_folio*", "filemap_create_folio",
	"do_read_cache_folio", "page_cache_ra_unbounded", "page_cache_ra_order",
	"ra_alloc_folio", "readahead_expand", "alloc_buffer_head",
	/* anonymous memory, huge pages of it, its page tables */
	"folio_prealloc", "alloc_anon_folio", "do_anonymous_page",
	"do_huge_pmd_anonymous_page", "vma_alloc_anon_folio_pmd", "alloc_charge_folio",
	"__pte_alloc_one*", "pte_alloc_one", "__pmd_alloc", "__pud_alloc",
	/* swap cache and tmpfs */
	"alloc_swap_folio", "__alloc_swap_folio", "__read_swap_cache_async",
	"shmem_alloc_folio", "shmem_alloc_and_add_folio",
	NULL
};

int ai_is_expected(const struct ai_tag *t)
{
	size_t i;

	for (i = 0; ai_expected_growth[i]; i++)
		if (!fnmatch(ai_expected_growth[i], t->func, 0))
			return 1;
	return 0;
}
