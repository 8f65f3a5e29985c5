// SPDX-License-Identifier: GPL-2.0
/* export: Prometheus text format, JSON or CSV, on stdout or atomically to a file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

static const char export_help[] =
"usage: allocinfo export [OPTIONS]\n"
"Write the tags in a machine-readable format on stdout.\n"
"\n"
"  -F, --format FMT   prometheus (default): text exposition format for\n"
"                     node_exporter's textfile collector, metrics\n"
"                     allocinfo_bytes and allocinfo_calls with labels file,\n"
"                     line, func and module (\"\" for built-in code);\n"
"                     json: one object, tags in an array;\n"
"                     csv: RFC 4180, header bytes,calls,file,line,module,\n"
"                     func,extra\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -o, --output FILE  write to FILE atomically, as the textfile collector\n"
"                     wants: a unique FILE.XXXXXX, synced, then renamed\n"
"                     (removed on failure); default stdout\n"
"  -n N               only the N largest tags (default 0 = all), written in\n"
"                     input order\n"
"  -k, --keep-dups    json and csv: repeated file:line func lines apart\n"
"  -m, --min SIZE     only tags holding at least SIZE\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only the tags that match (see 'top --help')\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n"
"\n"
"Tags are written in input order.\n";

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	enum ai_export_fmt fmt = AI_EXPORT_PROM;
	const char *out = NULL;
	struct ai_snap s;
	struct ai_tag **v;
	char *tmp = NULL;
	FILE *f = stdout;
	size_t n;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "F:o:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 'F') {
			if (!strcmp(optarg, "prometheus") || !strcmp(optarg, "prom"))
				fmt = AI_EXPORT_PROM;
			else if (!strcmp(optarg, "json"))
				fmt = AI_EXPORT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = AI_EXPORT_CSV;
			else
				ai_usage_err("export: --format wants prometheus, json or csv");
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'h') {
			ai_help(export_help);
		} else {
			ai_usage_err("export: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("export: unexpected argument '%s'", argv[optind]);
	ai_only(&co, CO_ALL & ~(CO_EXACT | CO_NOHDR), "export");
	if (fmt == AI_EXPORT_PROM && co.keep_dups)
		ai_not_here("-k/--keep-dups", "export --format prometheus (one series per tag)");
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (co.limit && co.limit < n) {
		/* the N largest, written in input order */
		ai_sort_tags(v, n, "size");
		n = co.limit;
		ai_sort_tags(v, n, "input");
	}
	if (out && strcmp(out, "-"))
		f = ai_atomic_open(out, &tmp);
	ai_export(f, &s, v, n, fmt);
	if (tmp)
		ai_atomic_commit(f, tmp, out);
	else if (fflush(f) || ferror(f))
		ai_die("write error on standard output");
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

