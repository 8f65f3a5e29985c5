// SPDX-License-Identifier: GPL-2.0
/*
 * context: the call chains of chosen tags, from the kernel's capture
 * (CONFIG_MEM_ALLOC_PROFILING_CAPTURE, debugfs alloc_tag/capture): choose
 * tags, start and stop capture, and show what it recorded as a caller
 * tree with percentages, as JSON, or in Prometheus' text format with the
 * top N chains of each tag.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"

#define CX_DIR		"/sys/kernel/debug/alloc_tag/capture"
/* frames after the tag's function that name a chain in Prometheus */
#define CX_LABEL_FRAMES	4

static const char context_help[] =
"usage: allocinfo context [show] [OPTIONS]\n"
"       allocinfo context choose|unchoose TAG...\n"
"       allocinfo context clear|start|stop|reset\n"
"Which call chains allocate at chosen tags: the callers of a helper\n"
"whose one line in /proc/allocinfo sums them all. The kernel records them\n"
"while capture runs (CONFIG_MEM_ALLOC_PROFILING_CAPTURE, in debugfs);\n"
"show reads what it recorded.\n"
"\n"
"  choose TAG...   choose tags: file:line, func:NAME (every tag of a\n"
"                  function), module:NAME, or a tag as /proc/allocinfo\n"
"                  writes it\n"
"  unchoose TAG... unchoose them; clear: unchoose every tag\n"
"  start, stop     start or stop capture; reset empties the counters\n"
"  show            (default) each chosen tag's callers: the split at the\n"
"                  first function with several callers, and the tree\n"
"\n"
"  -d, --dir DIR      the capture directory (default " CX_DIR ")\n"
"  -f, --input FILE   read the chains from FILE (- for stdin), not DIR/chains\n"
"      --by calls|bytes  percentages of calls or of bytes (default bytes)\n"
"  -m, --min PCT      callers under PCT percent go to \"other\" (default 1)\n"
"      --depth N      levels of the tree (default 8; 0: the split alone)\n"
"  -n, --top N        JSON and Prometheus: the N largest chains of a tag\n"
"                     (JSON default: all; Prometheus default: 5, the rest\n"
"                     in chain=\"other\")\n"
"      --json         JSON\n"
"      --prometheus   Prometheus text format, bounded: tags x (N + 1) series\n"
"  -h, --help         this help\n";

struct cx_chain {
	uint64_t calls, bytes;
	char **frames;
	size_t nframes;
};

struct cx_tag {
	char *site, *parts;	/* the site, and a copy cut into the next three */
	const char *file, *module, *func;
	char state[16];
	uint64_t calls, bytes, ovf_calls, ovf_bytes, unrec_calls, unrec_bytes;
	struct cx_chain *chains;
	size_t nchains, cap;
};

struct cx_data {
	struct cx_tag *tags;
	size_t ntags, cap;
	size_t skipped;
};

/* the value after word @key in the words @w[0..n) */
static int word_u64(char **w, size_t n, const char *key, uint64_t *v)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (!strcmp(w[i], key))
			return ai_parse_u64(w[i + 1], v);
	return -1;
}

/* split @s at blanks into at most @max words; returns how many */
static size_t split_words(char *s, char **w, size_t max)
{
	size_t n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t", &save); t && n < max; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

/* file:line [module] func:NAME into its parts */
static void site_parts(struct cx_tag *t)
{
	char *s = xstrdup(t->site), *w[4];
	size_t n = split_words(s, w, 4), i;

	t->parts = s;
	t->file = "";
	t->module = "";
	t->func = "";
	for (i = 0; i < n; i++) {
		size_t l = strlen(w[i]);

		if (!strncmp(w[i], "func:", 5))
			t->func = w[i] + 5;
		else if (w[i][0] == '[' && l > 2 && w[i][l - 1] == ']') {
			w[i][l - 1] = '\0';
			t->module = w[i] + 1;
		} else if (i == 0)
			t->file = w[i];
	}
}

static int parse_tag(struct cx_data *d, char *line)
{
	char *site = strstr(line, " site "), *w[32];
	struct cx_tag t;
	size_t n;

	memset(&t, 0, sizeof(t));
	if (!site)
		return -1;
	*site = '\0';
	t.site = xstrdup(site + 6);
	n = split_words(line, w, 32);
	if (n < 3 || strcmp(w[2], "state") || n < 4 ||
	    word_u64(w, n, "calls", &t.calls) || word_u64(w, n, "bytes", &t.bytes) ||
	    word_u64(w, n, "overflow_calls", &t.ovf_calls) ||
	    word_u64(w, n, "overflow_bytes", &t.ovf_bytes) ||
	    word_u64(w, n, "unrecorded_calls", &t.unrec_calls) ||
	    word_u64(w, n, "unrecorded_bytes", &t.unrec_bytes)) {
		free(t.site);
		return -1;
	}
	snprintf(t.state, sizeof(t.state), "%s", w[3]);
	site_parts(&t);
	if (d->ntags == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 8;
		d->tags = xrealloc(d->tags, d->cap * sizeof(*d->tags));
	}
	d->tags[d->ntags++] = t;
	return 0;
}

static int parse_chain(struct cx_data *d, char *line)
{
	char *stack = strstr(line, " stack "), *w[16], *f, *save = NULL;
	struct cx_chain c = { 0 };
	struct cx_tag *t;
	size_t n, cap = 0;

	if (!stack || !d->ntags)
		return -1;
	*stack = '\0';
	n = split_words(line, w, 16);
	if (n < 3 || word_u64(w, n, "calls", &c.calls) || word_u64(w, n, "bytes", &c.bytes))
		return -1;
	for (f = strtok_r(stack + 7, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		if (c.nframes == cap) {
			cap = cap ? 2 * cap : 16;
			c.frames = xrealloc(c.frames, cap * sizeof(*c.frames));
		}
		c.frames[c.nframes++] = xstrdup(f);
	}
	if (!c.nframes)
		return -1;
	t = &d->tags[d->ntags - 1];
	if (t->nchains == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->chains = xrealloc(t->chains, t->cap * sizeof(*t->chains));
	}
	t->chains[t->nchains++] = c;
	return 0;
}

static void cx_load(struct cx_data *d, const char *path)
{
	char *buf, *line, *save = NULL;
	size_t len, lineno = 0;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY) : 0, rc;

	if (fd < 0) {
		if (errno == ENOENT || errno == EACCES)
			ai_die("context: %s: %s (the kernel needs CONFIG_MEM_ALLOC_PROFILING_CAPTURE, debugfs mounted, and root)",
			       path, strerror(errno));
		ai_die("context: %s: %s", path, strerror(errno));
	}
	if ((rc = ai_read_fd(fd, &buf, &len)) < 0) {
		char msg[256];

		ai_die("context: %s: %s", path, ai_read_error(rc, len, msg, sizeof(msg)));
	}
	if (fd)
		close(fd);
	memset(d, 0, sizeof(*d));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int bad = 0;

		lineno++;
		if (lineno == 1) {
			if (strncmp(line, "capture - version: 1.", 21))
				ai_die("context: %s: not a capture file (its first line is not 'capture - version: 1.x')",
				       path);
			continue;
		}
		if (!strncmp(line, "tag ", 4))
			bad = parse_tag(d, line);
		else if (!strncmp(line, "chain ", 6))
			bad = parse_chain(d, line);
		else
			bad = -1;
		if (bad) {
			if (d->skipped++ < 5)
				ai_warn("context: %s:%zu: malformed line skipped", path, lineno);
		}
	}
	free(buf);
}

/* the caller tree: a node a frame, the tag's function at the root */
struct cx_node {
	const char *name;
	uint64_t calls, bytes;
	struct cx_node **kids;
	size_t nkids, cap;
};

static int by_bytes = 1;

static uint64_t node_val(const struct cx_node *n)
{
	return by_bytes ? n->bytes : n->calls;
}

static struct cx_node *node_kid(struct cx_node *p, const char *name)
{
	struct cx_node *k;
	size_t i;

	for (i = 0; i < p->nkids; i++)
		if (!strcmp(p->kids[i]->name, name))
			return p->kids[i];
	k = xcalloc(1, sizeof(*k));
	k->name = name;
	if (p->nkids == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4;
		p->kids = xrealloc(p->kids, p->cap * sizeof(*p->kids));
	}
	p->kids[p->nkids++] = k;
	return k;
}

static int node_cmp(const void *a, const void *b)
{
	const struct cx_node *x = *(struct cx_node *const *)a, *y = *(struct cx_node *const *)b;
	uint64_t vx = node_val(x), vy = node_val(y);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void node_sort(struct cx_node *n)
{
	size_t i;

	if (n->nkids > 1)
		qsort(n->kids, n->nkids, sizeof(*n->kids), node_cmp);
	for (i = 0; i < n->nkids; i++)
		node_sort(n->kids[i]);
}

static void node_free(struct cx_node *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n);
}

/* the tree of @t's chains, under a root that stands for the whole tag */
static struct cx_node *tag_tree(const struct cx_tag *t)
{
	struct cx_node *root = xcalloc(1, sizeof(*root));
	size_t i, j;

	root->name = "";
	for (i = 0; i < t->nchains; i++) {
		const struct cx_chain *c = &t->chains[i];
		struct cx_node *n = root;

		for (j = 0; j < c->nframes; j++) {
			n = node_kid(n, c->frames[j]);
			n->calls += c->calls;
			n->bytes += c->bytes;
		}
	}
	node_sort(root);
	return root;
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0;
}

/* the first node with more than one caller, or the end of the only chain */
static const struct cx_node *split_node(const struct cx_node *n)
{
	while (n->nkids == 1)
		n = n->kids[0];
	return n;
}

static void print_split(const struct cx_tag *t, const struct cx_node *root, double min)
{
	uint64_t total = by_bytes ? t->bytes : t->calls, shown = 0;
	const struct cx_node *s = split_node(root);
	size_t i;
	int any = 0;

	if (!s->nkids) {
		printf("  one call chain\n");
		return;
	}
	printf("  callers of %s:", s == root ? "the tag" : s->name);
	for (i = 0; i < s->nkids; i++) {
		const struct cx_node *k = s->kids[i];

		if (pct(node_val(k), total) < min)
			break;
		printf("%s %s %.0f%%", any ? "," : "", k->name, pct(node_val(k), total));
		shown += node_val(k);
		any = 1;
	}
	if (total > shown)
		printf("%s other %.0f%%", any ? "," : "", pct(total - shown, total));
	putchar('\n');
}

static void print_node(const struct cx_node *n, uint64_t total, int indent,
		       int depth, double min)
{
	const struct cx_node *end = n;
	uint64_t shown = 0;
	size_t i;

	printf("  %5.1f%%  %*s%s", pct(node_val(n), total), 2 * indent, "", n->name);
	/* a run of single callers on one line */
	while (end->nkids == 1) {
		end = end->kids[0];
		printf(";%s", end->name);
	}
	putchar('\n');
	if (depth <= 1)
		return;
	for (i = 0; i < end->nkids; i++) {
		const struct cx_node *k = end->kids[i];

		if (pct(node_val(k), total) < min)
			break;
		print_node(k, total, indent + 1, depth - 1, min);
		shown += node_val(k);
	}
	if (node_val(end) > shown && end->nkids)
		printf("  %5.1f%%  %*sother\n", pct(node_val(end) - shown, total),
		       2 * (indent + 1), "");
}

static void show_text(const struct cx_data *d, double min, int depth)
{
	size_t i, j;

	for (i = 0; i < d->ntags; i++) {
		const struct cx_tag *t = &d->tags[i];
		uint64_t total = by_bytes ? t->bytes : t->calls;
		struct cx_node *root = tag_tree(t);
		char h[32];

		printf("%s (%s)\n", t->site, t->state);
		printf("  %s in %llu calls, %zu chains; overflow %llu calls, unrecorded %llu calls\n",
		       ai_human((int64_t)t->bytes, h, sizeof(h)), (unsigned long long)t->calls,
		       t->nchains, (unsigned long long)t->ovf_calls,
		       (unsigned long long)t->unrec_calls);
		if (!t->calls) {
			printf("  nothing captured yet\n");
			node_free(root);
			continue;
		}
		print_split(t, root, min);
		for (j = 0; depth > 0 && j < root->nkids; j++)
			print_node(root->kids[j], total, 0, depth, min);
		if (depth > 0 && t->ovf_calls)
			printf("  %5.1f%%  (overflow: chains past max_chains)\n",
			       pct(by_bytes ? t->ovf_bytes : t->ovf_calls, total));
		if (depth > 0 && t->unrec_calls)
			printf("  %5.1f%%  (unrecorded)\n",
			       pct(by_bytes ? t->unrec_bytes : t->unrec_calls, total));
		node_free(root);
	}
}

static int chain_cmp(const void *a, const void *b)
{
	const struct cx_chain *x = a, *y = b;
	uint64_t vx = by_bytes ? x->bytes : x->calls, vy = by_bytes ? y->bytes : y->calls;

	return vx == vy ? 0 : vx < vy ? 1 : -1;
}

static void show_json(struct cx_data *d, uint64_t top)
{
	size_t i, j, k;

	printf("{\"version\":\"1.0\",\"tags\":[");
	for (i = 0; i < d->ntags; i++) {
		struct cx_tag *t = &d->tags[i];
		size_t n = top && top < t->nchains ? top : t->nchains;

		if (t->nchains > 1)
			qsort(t->chains, t->nchains, sizeof(*t->chains), chain_cmp);
		printf("%s{\"site\":", i ? "," : "");
		ai_json_str(stdout, t->site);
		printf(",\"file\":");
		ai_json_str(stdout, t->file);
		printf(",\"module\":");
		ai_json_str(stdout, t->module);
		printf(",\"func\":");
		ai_json_str(stdout, t->func);
		printf(",\"state\":");
		ai_json_str(stdout, t->state);
		printf(",\"calls\":%llu,\"bytes\":%llu,\"chains\":%zu,\"overflow_calls\":%llu,\"overflow_bytes\":%llu,\"unrecorded_calls\":%llu,\"unrecorded_bytes\":%llu,\"top\":[",
		       (unsigned long long)t->calls, (unsigned long long)t->bytes, t->nchains,
		       (unsigned long long)t->ovf_calls, (unsigned long long)t->ovf_bytes,
		       (unsigned long long)t->unrec_calls, (unsigned long long)t->unrec_bytes);
		for (j = 0; j < n; j++) {
			const struct cx_chain *c = &t->chains[j];

			printf("%s{\"calls\":%llu,\"bytes\":%llu,\"stack\":[", j ? "," : "",
			       (unsigned long long)c->calls, (unsigned long long)c->bytes);
			for (k = 0; k < c->nframes; k++) {
				if (k)
					putchar(',');
				ai_json_str(stdout, c->frames[k]);
			}
			printf("]}");
		}
		printf("]}");
	}
	printf("]}\n");
}

/* a chain's label: up to CX_LABEL_FRAMES frames past the tag's function */
static void chain_label(const struct cx_chain *c, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 1; i < c->nframes && i <= CX_LABEL_FRAMES; i++) {
		int w = snprintf(buf + len, n - len, "%s%s", i > 1 ? ";" : "", c->frames[i]);

		if (w < 0 || (size_t)w >= n - len)
			break;
		len += w;
	}
}

static void prom_series(const char *metric, const struct cx_tag *t, const char *chain,
			uint64_t v)
{
	printf("%s{file=", metric);
	ai_prom_str(stdout, t->file);
	printf(",module=");
	ai_prom_str(stdout, t->module);
	printf(",func=");
	ai_prom_str(stdout, t->func);
	printf(",chain=");
	ai_prom_str(stdout, chain);
	printf("} %llu\n", (unsigned long long)v);
}

/*
 * Chains that share their label are summed into one series, so that no
 * two series of a tag have the same labels.
 */
static void show_prom(struct cx_data *d, uint64_t top)
{
	static const char *const metric[2] = {
		"allocinfo_context_bytes", "allocinfo_context_calls"
	};
	size_t i, j, k;
	int m;

	for (m = 0; m < 2; m++) {
		printf("# HELP %s %s allocated at a chosen tag since capture started, by call chain (its first %d callers): the %llu largest chains of each tag, the rest in chain=\"other\"\n",
		       metric[m], m ? "Calls" : "Bytes", CX_LABEL_FRAMES,
		       (unsigned long long)top);
		printf("# TYPE %s gauge\n", metric[m]);
		for (i = 0; i < d->ntags; i++) {
			struct cx_tag *t = &d->tags[i];
			struct cx_chain *sum = xcalloc(t->nchains + 1, sizeof(*sum));
			char **labels = xcalloc(t->nchains + 1, sizeof(*labels));
			uint64_t shown = 0;
			size_t n = 0;

			for (j = 0; j < t->nchains; j++) {
				char label[512];

				chain_label(&t->chains[j], label, sizeof(label));
				for (k = 0; k < n && strcmp(labels[k], label); k++)
					;
				if (k == n)
					labels[n++] = xstrdup(label);
				sum[k].calls += t->chains[j].calls;
				sum[k].bytes += t->chains[j].bytes;
				sum[k].frames = &labels[k];
			}
			qsort(sum, n, sizeof(*sum), chain_cmp);
			for (j = 0; j < n && j < top; j++) {
				uint64_t v = m ? sum[j].calls : sum[j].bytes;

				prom_series(metric[m], t, *sum[j].frames, v);
				shown += v;
			}
			prom_series(metric[m], t, "other", (m ? t->calls : t->bytes) - shown);
			for (k = 0; k < n; k++)
				free(labels[k]);
			free(labels);
			free(sum);
		}
	}
	printf("# HELP allocinfo_context_chains Distinct call chains recorded at a chosen tag\n");
	printf("# TYPE allocinfo_context_chains gauge\n");
	for (i = 0; i < d->ntags; i++) {
		const struct cx_tag *t = &d->tags[i];

		printf("allocinfo_context_chains{file=");
		ai_prom_str(stdout, t->file);
		printf(",module=");
		ai_prom_str(stdout, t->module);
		printf(",func=");
		ai_prom_str(stdout, t->func);
		printf("} %zu\n", t->nchains);
	}
}

static void cx_free(struct cx_data *d)
{
	size_t i, j, k;

	for (i = 0; i < d->ntags; i++) {
		struct cx_tag *t = &d->tags[i];

		for (j = 0; j < t->nchains; j++) {
			for (k = 0; k < t->chains[j].nframes; k++)
				free(t->chains[j].frames[k]);
			free(t->chains[j].frames);
		}
		free(t->chains);
		free(t->site);
		free(t->parts);
	}
	free(d->tags);
}

/* write @text to @dir/@file; on failure say why, with the kernel's last_error */
static int cx_write(const char *dir, const char *file, const char *text)
{
	char path[4096], err[512] = "";
	size_t len = strlen(text);
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		ai_warn("context: %s: %s (the kernel needs CONFIG_MEM_ALLOC_PROFILING_CAPTURE, debugfs mounted, and root)",
			path, strerror(errno));
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len)
		e = errno ? errno : EIO;
	close(fd);
	if (!e)
		return 0;
	snprintf(path, sizeof(path), "%s/last_error", dir);
	ai_read_line(path, err, sizeof(err));
	ai_warn("context: %s '%s': %s%s%s", file, text, strerror(e), *err ? ": " : "", err);
	return -1;
}

int cmd_context(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'f' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "min", required_argument, NULL, 'm' },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "top", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = CX_DIR, *input = NULL, *sub = "show";
	int c, json = 0, prom = 0, depth = 8, bad = 0, i;
	uint64_t top = 0, u;
	double min = 1;
	struct cx_data d;
	char path[4096], *e;

	while ((c = ai_getopt(argc, argv, "d:f:m:n:h", lo)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'f':
			input = optarg;
			break;
		case OPT_BY:
			if (strcmp(optarg, "calls") && strcmp(optarg, "bytes"))
				ai_usage_err("context: --by takes calls or bytes");
			by_bytes = !strcmp(optarg, "bytes");
			break;
		case 'm':
			min = strtod(optarg, &e);
			if (*e || e == optarg || !(min >= 0) || min > 100)
				ai_usage_err("context: --min takes a percentage, 0 to 100");
			break;
		case OPT_DEPTH:
			if (ai_parse_u64(optarg, &u) || u > 64)
				ai_usage_err("context: --depth takes 0 to 64");
			depth = (int)u;
			break;
		case 'n':
			if (ai_parse_u64(optarg, &top) || !top)
				ai_usage_err("context: --top takes a number of chains, 1 or more");
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_PROMETHEUS:
			prom = 1;
			break;
		case 'h':
			ai_help(context_help);
		default:
			ai_usage_err("context: bad option");
		}
	}
	if (json && prom)
		ai_usage_err("context: --json or --prometheus, not both");
	if (optind < argc)
		sub = argv[optind++];

	if (!strcmp(sub, "choose") || !strcmp(sub, "unchoose")) {
		if (optind == argc)
			ai_usage_err("context: %s which tags? file:line, func:NAME or module:NAME", sub);
		for (i = optind; i < argc; i++) {
			char line[4096];

			snprintf(line, sizeof(line), "%s%s", sub[0] == 'u' ? "-" : "", argv[i]);
			bad |= cx_write(dir, "tags", line);
		}
		return bad ? AI_EXIT_FATAL : AI_EXIT_OK;
	}
	if (!strcmp(sub, "clear"))
		return cx_write(dir, "tags", "clear") ? AI_EXIT_FATAL : AI_EXIT_OK;
	if (!strcmp(sub, "start") || !strcmp(sub, "stop") || !strcmp(sub, "reset"))
		return cx_write(dir, "control", sub) ? AI_EXIT_FATAL : AI_EXIT_OK;
	if (strcmp(sub, "show"))
		ai_usage_err("context: unknown subcommand '%s' (show, choose, unchoose, clear, start, stop, reset)",
			     sub);
	if (optind < argc)
		ai_usage_err("context: show takes no argument '%s'", argv[optind]);

	if (!input) {
		snprintf(path, sizeof(path), "%s/chains", dir);
		input = path;
	}
	cx_load(&d, input);
	if (json)
		show_json(&d, top);
	else if (prom)
		show_prom(&d, top ? top : 5);
	else if (!d.ntags)
		printf("no tag chosen: allocinfo context choose TAG, then start\n");
	else
		show_text(&d, min, depth);
	cx_free(&d);
	return d.skipped ? AI_EXIT_SKIPPED : AI_EXIT_OK;
}
