// SPDX-License-Identifier: GPL-2.0
/* top: the tags that hold the most memory. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"

static const char top_help[] =
"usage: allocinfo top [OPTIONS]\n"
"Show the allocation tags that hold the most memory.\n"
"\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -n N               show N tags (default 20; 0 = all)\n"
"  -s, --sort KEY     size (default), calls or name; with --watch also\n"
"                     rate (the fastest growing first)\n"
"      --avg          an AVG column: the average allocation, bytes / calls\n"
"  -w, --watch S      refresh every S seconds (fractions allowed) until\n"
"                     interrupted, with a RATE column: each tag's bytes/s\n"
"                     since the previous refresh ('-' on the first one and\n"
"                     for new tags); the screen is cleared when stdout is a\n"
"                     terminal\n"
"  -c, --count N      with --watch: stop after N refreshes\n"
"  -m, --min SIZE     only tags holding at least SIZE (4096, 64K, 1.5M)\n"
"      --module GLOB  only tags of modules matching GLOB (built-in code\n"
"                     is module 'vmlinux')\n"
"      --path GLOB    only tags whose source file matches GLOB ('mm/*';\n"
"                     'mm/' is the same: everything under mm/)\n"
"      --func GLOB    only tags whose function matches GLOB\n"
"                     A filter given several times keeps the tags that\n"
"                     match any of its patterns; '!GLOB' drops the tags\n"
"                     that match GLOB (--module '!vmlinux').\n"
"  -b, --bytes        exact byte counts instead of KiB/MiB/GiB\n"
"  -k, --keep-dups    list repeated file:line func lines apart (default:\n"
"                     summed, marked '(N lines)')\n"
"  -H, --no-header    no column header and no total line\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n"
"\n"
"Marks: NEGATIVE = negative bytes (broken kernel accounting); CLAMPED =\n"
"a sum of duplicates overflowed 64 bits. Exit: 0 ok, 1 fatal, 2 usage,\n"
"3 some input lines were skipped.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the tags of the previous refresh, to compute rates */
struct prev {
	struct ai_snap s;
	struct ai_hmap m;
	double t;
	int have;
};

static const struct ai_tag *prev_find(const struct prev *p, const struct ai_tag *t)
{
	size_t k = ai_tag_hash(t) & p->m.mask;

	while (p->m.slot[k]) {
		const struct ai_tag *x = &p->s.tags[p->m.slot[k] - 1];

		if (ai_tag_same(x, t))
			return x;
		k = (k + 1) & p->m.mask;
	}
	return NULL;
}

static void prev_keep(struct prev *p, struct ai_snap *s, double t)
{
	size_t i;

	if (p->have) {
		ai_snap_free(&p->s);
		ai_hmap_free(&p->m);
	}
	p->s = *s;
	p->t = t;
	p->have = 1;
	ai_hmap_init(&p->m, s->ntags);
	for (i = 0; i < s->ntags; i++) {
		size_t k = ai_tag_hash(&s->tags[i]) & p->m.mask;

		while (p->m.slot[k])
			k = (k + 1) & p->m.mask;
		p->m.slot[k] = i + 1;
	}
}

static const double *sort_rates;

static int cmp_rate_idx(const void *a, const void *b)
{
	double x = sort_rates[*(const size_t *)a], y = sort_rates[*(const size_t *)b];

	if (isnan(x) != isnan(y))
		return isnan(x) ? 1 : -1;
	if (!isnan(x) && x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/*
 * top --watch: read, print, sleep, until interrupted or COUNT refreshes.
 * Rates are the change of each tag's bytes over the time between two
 * reads (monotonic clock).
 */
static int watch(const struct ai_common *co, const char *sort, int avg,
		 double every, uint64_t count)
{
	struct prev p = { .have = 0 };
	struct sigaction sa;
	struct timespec next;
	int tty = isatty(1), rc = AI_EXIT_OK;
	uint64_t k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (k = 0; !stop && (!count || k < count); k++) {
		struct ai_snap s;
		struct ai_tag **v;
		double *rate, *r2, t;
		size_t n, i, *idx;
		struct ai_tag **v2;
		char tb[32];
		time_t now;
		struct tm tm;

		if (k) {
			double ns = next.tv_nsec + fmod(every, 1.0) * 1e9;

			next.tv_sec += (time_t)every + (time_t)(ns / 1e9);
			next.tv_nsec = (long)fmod(ns, 1e9);
			while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
							&next, NULL) == EINTR)
				;
			if (stop)
				break;
		}
		ai_load_or_die(&s, co->input, co);
		t = now_mono();
		v = ai_select(&s, co, &n);
		if (ai_sort_tags(v, n, !strcmp(sort, "rate") ? "size" : sort) < 0)
			ai_usage_err("top: --sort wants size, calls, name or rate, not '%s'", sort);
		rate = xmalloc((n + 1) * sizeof(*rate));
		for (i = 0; i < n; i++) {
			const struct ai_tag *o = p.have ? prev_find(&p, v[i]) : NULL;

			rate[i] = o && t > p.t ? ((double)v[i]->bytes - (double)o->bytes) / (t - p.t)
					       : NAN;
		}
		if (!strcmp(sort, "rate")) {
			idx = xmalloc((n + 1) * sizeof(*idx));
			for (i = 0; i < n; i++)
				idx[i] = i;
			sort_rates = rate;
			qsort(idx, n, sizeof(*idx), cmp_rate_idx);
			v2 = xmalloc((n + 1) * sizeof(*v2));
			r2 = xmalloc((n + 1) * sizeof(*r2));
			for (i = 0; i < n; i++) {
				v2[i] = v[idx[i]];
				r2[i] = rate[idx[i]];
			}
			free(v);
			free(rate);
			free(idx);
			v = v2;
			rate = r2;
		}
		if (tty)
			fputs("\033[H\033[J", stdout);
		now = time(NULL);
		localtime_r(&now, &tm);
		strftime(tb, sizeof(tb), "%H:%M:%S", &tm);
		if (p.have)
			printf("# %s, refresh %llu, %.2f s since the last\n", tb,
			       (unsigned long long)k + 1, t - p.t);
		else
			printf("# %s, refresh %llu, every %g s (rates from the next one)\n", tb,
			       (unsigned long long)k + 1, every);
		{
			struct ai_cols cols = { .avg = avg, .rate = rate };

			ai_print_tags(stdout, v, n, s.ntags, co, &cols);
		}
		if (fflush(stdout) || ferror(stdout))
			break;	/* the exit handler reports it */
		if (ai_status(&s))
			rc = AI_EXIT_SKIPPED;
		free(v);
		free(rate);
		prev_keep(&p, &s, t);
	}
	if (p.have) {
		ai_snap_free(&p.s);
		ai_hmap_free(&p.m);
	}
	return rc;
}

int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "sort", required_argument, NULL, 's' },
		{ "avg", no_argument, NULL, OPT_AVG },
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { .limit = 20 };
	const char *sort = "size";
	struct ai_cols cols = { .avg = 0 };
	double every = 0;
	uint64_t count = 0;
	struct ai_snap s;
	struct ai_tag **v;
	size_t n;
	char *e;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "s:w:c:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 's') {
			sort = optarg;
		} else if (c == OPT_AVG) {
			cols.avg = 1;
		} else if (c == 'w') {
			every = strtod(optarg, &e);
			if (*e || e == optarg || !(every >= 0.05) || every > 1e6)
				ai_usage_err("top: --watch wants seconds, 0.05 or more, not '%s'", optarg);
		} else if (c == 'c') {
			if (ai_parse_u64(optarg, &count) < 0 || !count)
				ai_usage_err("top: --count wants a number > 0, not '%s'", optarg);
		} else if (c == 'h') {
			ai_help(top_help);
		} else {
			ai_usage_err("top: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("top: unexpected argument '%s'", argv[optind]);
	if (count && !every)
		ai_not_here("-c/--count", "top without --watch");
	if (every) {
		if (co.input && !strcmp(co.input, "-"))
			ai_usage_err("top: --watch reads its input again and again: not stdin");
		return watch(&co, sort, cols.avg, every, count);
	}
	if (!strcmp(sort, "rate"))
		ai_usage_err("top: --sort rate needs --watch (rates are between refreshes)");
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (ai_sort_tags(v, n, sort) < 0)
		ai_usage_err("top: --sort wants size, calls or name, not '%s'", sort);
	ai_print_tags(stdout, v, n, s.ntags, &co, &cols);
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

