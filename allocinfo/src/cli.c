// SPDX-License-Identifier: GPL-2.0
/*
 * The plumbing the commands share: their common options, filters, usage
 * errors, and loading an input for them.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

/* "mm/" is a directory: everything under it, as the glob mm/ then '*' */
static const char *dir_glob(const char *arg)
{
	size_t n = strlen(arg);
	char *p;

	if (!n || arg[n - 1] != '/')
		return arg;
	p = xmalloc(n + 2);
	memcpy(p, arg, n);
	strcpy(p + n, "*");
	ai_keep(p);
	return p;
}

/* GLOB includes, !GLOB excludes */
static void globs_add(struct ai_globs *g, const char *arg)
{
	int exc = arg[0] == '!';
	size_t *n = exc ? &g->nexc : &g->ninc;

	if (exc && !arg[1])
		ai_usage_err("%s: '!' wants a pattern after it ('!mm/*')", ai_cmd);
	if (*n == AI_MAX_GLOBS)
		ai_usage_err("%s: at most %d patterns per filter", ai_cmd, AI_MAX_GLOBS);
	(exc ? g->exc : g->inc)[(*n)++] = arg + exc;
}

static int globs_match(const struct ai_globs *g, const char *s)
{
	size_t i;

	for (i = 0; i < g->nexc; i++)
		if (!fnmatch(g->exc[i], s, 0))
			return 0;
	if (!g->ninc)
		return 1;
	for (i = 0; i < g->ninc; i++)
		if (!fnmatch(g->inc[i], s, 0))
			return 1;
	return 0;
}

int ai_common_opt(struct ai_common *co, int c, const char *arg)
{
	static const struct { int c; unsigned bit; } bits[] = {
		{ 'f', CO_INPUT }, { 'n', CO_LIMIT }, { 'm', CO_MIN },
		{ 'b', CO_EXACT }, { 'k', CO_KEEP }, { 'H', CO_NOHDR },
		{ 'q', CO_QUIET }, { OPT_MODULE, CO_FILTER },
		{ OPT_PATH, CO_FILTER }, { OPT_FUNC, CO_FILTER },
	};
	size_t i;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (bits[i].c == c)
			co->given |= bits[i].bit;
	switch (c) {
	case 'f':
		co->input = arg;
		return 1;
	case 'n':
		if (ai_parse_u64(arg, &co->limit) < 0)
			ai_usage_err("-n wants a number, not '%s'", arg);
		return 1;
	case 'm':
		if (ai_parse_size(arg, &co->min) < 0)
			ai_usage_err("--min wants a size such as 4096, 64K or 1.5M, not '%s'", arg);
		co->has_min = 1;
		return 1;
	case 'b':
		co->exact = 1;
		return 1;
	case 'k':
		co->keep_dups = 1;
		return 1;
	case 'H':
		co->no_header = 1;
		return 1;
	case 'q':
		co->quiet = 1;
		return 1;
	case OPT_MODULE:
		globs_add(&co->mod, arg);
		return 1;
	case OPT_PATH:
		globs_add(&co->path, dir_glob(arg));
		return 1;
	case OPT_FUNC:
		globs_add(&co->func, arg);
		return 1;
	}
	return 0;
}

/* An option given to a command (or a kind of report) that does not use it. */
void ai_not_here(const char *opt, const char *what)
{
	ai_usage_err("%s: %s does not apply to %s", ai_cmd, opt, what);
}

void ai_only(const struct ai_common *co, unsigned allowed, const char *what)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ CO_INPUT, "-f/--input" }, { CO_LIMIT, "-n" },
		{ CO_MIN, "-m/--min" }, { CO_EXACT, "-b/--bytes" },
		{ CO_KEEP, "-k/--keep-dups" }, { CO_NOHDR, "-H/--no-header" },
		{ CO_QUIET, "-q/--quiet" },
		{ CO_FILTER, "--module/--path/--func" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (co->given & names[i].bit & ~allowed)
			ai_not_here(names[i].name, what);
}

const char *ai_cmd;

void ai_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ai_vwarn(fmt, ap);
	va_end(ap);
	if (ai_cmd)
		fprintf(stderr, "(try '%s %s --help')\n", ai_prog, ai_cmd);
	else
		fprintf(stderr, "(try '%s --help')\n", ai_prog);
	exit(AI_EXIT_USAGE);
}

/*
 * getopt_long() without abbreviations: GNU getopt takes any unique
 * prefix, so "--by" in a command without --by became "--bytes". A long
 * option must be spelled in full.
 */
/*
 * An option that takes a value is given once: 'record -f A -f B' read B
 * only. The filters (--module, --path, --func: their patterns add up),
 * --by (export: one family each) and --ignore may repeat.
 */
static void once(int c, int li, const char *so, const struct option *lo)
{
	static unsigned char seen[OPT_LAST];
	const char *p;
	int arg;

	if (c <= 0 || c >= OPT_LAST || c == OPT_MODULE || c == OPT_PATH ||
	    c == OPT_FUNC || c == OPT_BY || c == OPT_IGNORE)
		return;
	if (li >= 0)
		arg = lo[li].has_arg == required_argument;
	else
		arg = c < 256 && (p = strchr(so, c)) && p[1] == ':';
	if (!arg)
		return;
	if (seen[c]++) {
		if (li >= 0)
			ai_usage_err("%s: --%s given twice (it takes one value)",
				     ai_cmd ? ai_cmd : "allocinfo", lo[li].name);
		ai_usage_err("%s: -%c given twice (it takes one value)",
			     ai_cmd ? ai_cmd : "allocinfo", c);
	}
}

int ai_getopt(int argc, char **argv, const char *so, const struct option *lo)
{
	int li = -1, c = getopt_long(argc, argv, so, lo, &li);
	const char *a;
	size_t n;

	once(c, li, so, lo);
	if (c == -1 || li < 0 || optind < 1)
		return c;
	a = argv[optind - 1];
	if (optarg && optarg == argv[optind - 1] && optind >= 2)
		a = argv[optind - 2];
	if (strncmp(a, "--", 2))
		return c;
	n = strcspn(a + 2, "=");
	if (n != strlen(lo[li].name) || strncmp(a + 2, lo[li].name, n))
		ai_usage_err("%s: unknown option '%.*s' (long options are not abbreviated)",
			     ai_cmd ? ai_cmd : "allocinfo", (int)n + 2, a);
	return c;
}


int ai_match(const struct ai_common *co, const struct ai_tag *t)
{
	if (co->has_min && t->bytes < co->min)
		return 0;
	if (!globs_match(&co->mod, ai_module_name(t)) ||
	    !globs_match(&co->path, t->file) || !globs_match(&co->func, t->func))
		return 0;
	return 1;
}

struct ai_parse_opts ai_popts(const struct ai_common *co)
{
	struct ai_parse_opts o = {
		.err = co->quiet ? NULL : stderr,
		.keep_dups = co->keep_dups,
		.max_msgs = 1000,
	};
	return o;
}

void ai_load_or_die(struct ai_snap *s, const char *path,
		    const struct ai_common *co)
{
	struct ai_parse_opts o = ai_popts(co);

	if (ai_load(s, path, &o) < 0)
		exit(AI_EXIT_FATAL);
}

int ai_status(const struct ai_snap *s)
{
	return s->skipped || s->warnings ? AI_EXIT_SKIPPED : AI_EXIT_OK;
}

struct ai_tag **ai_select(const struct ai_snap *s, const struct ai_common *co,
			  size_t *np)
{
	struct ai_tag **v = xmalloc((s->ntags + 1) * sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < s->ntags; i++)
		if (ai_match(co, &s->tags[i]))
			v[n++] = &s->tags[i];
	*np = n;
	return v;
}

void ai_help(const char *text)
{
	fputs(text, stdout);
	exit(AI_EXIT_OK);
}

/* the usage error for a bad duration ARG of option OPT, with the way out */
void ai_duration_err(const char *cmd, const char *opt, const char *arg)
{
	double v;

	if (ai_parse_duration(arg, &v) == -2)
		ai_usage_err("%s: %s %s: a duration needs its unit: %ss for seconds, or"
			     " %sm, %sh, %sd (s, m, h, d, w)", cmd, opt, arg, arg, arg, arg, arg);
	ai_usage_err("%s: %s wants a duration such as 30d, 12h, 90m or 45s, not '%s'",
		     cmd, opt, arg);
}
