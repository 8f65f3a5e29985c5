// SPDX-License-Identifier: GPL-2.0
/* export: Prometheus text format, JSON or CSV, on stdout or atomically to a file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

/* the series per family that export -F prometheus writes by default */
#define EXPORT_TOP 50
#define EXPORT_TOP_STR "50"

static const char export_help[] =
"usage: allocinfo export [OPTIONS]\n"
"Write the tags in a machine-readable format on stdout.\n"
"\n"
"  -F, --format FMT   prometheus (default): text exposition format for\n"
"                     node_exporter's textfile collector: per tag,\n"
"                     allocinfo_bytes and allocinfo_calls with labels file,\n"
"                     line, func, module (vmlinux for built-in code) and\n"
"                     accurate (yes, or no for 2.0 accurate:no tags);\n"
"                     json: one object, tags in an array (and, for the\n"
"                     live file, taken_at, host, machine_id, boot_id and\n"
"                     kernel: what record --import reads back);\n"
"                     csv: RFC 4180, header bytes,calls,file,line,module,\n"
"                     func,extra\n"
"      --by KEY       prometheus: tag (default), or sums by module, subsys\n"
"                     or file: allocinfo_KEY_bytes, _calls, _inaccurate_bytes,\n"
"                     _expected_bytes (page cache, anonymous memory) and\n"
"                     _tags with one label, KEY, and\n"
"                     no line label (it changes with every kernel build);\n"
"                     several --by write several families in one file\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -o, --output FILE  write to FILE atomically, as the textfile collector\n"
"                     wants: a unique FILE.allocinfo-tmp.XXXXXX, synced,\n"
"                     then renamed, keeping FILE's owner and mode (removed\n"
"                     on failure or SIGTERM: the old FILE stays); a device\n"
"                     or FIFO is written through, a directory refused;\n"
"                     default stdout\n"
"      --top N, -n N  only the N largest tags (--by: groups) by bytes,\n"
"                     written in input order; prometheus sums the rest in\n"
"                     allocinfo_other_bytes and _calls (per tag) or\n"
"                     allocinfo_KEY_other_bytes and _calls (--by KEY).\n"
"                     Prometheus default: the " EXPORT_TOP_STR " largest (a series per\n"
"                     tag of a 7,000-tag host is too many for a fleet);\n"
"                     json and csv: every tag\n"
"      --all          prometheus: every tag (every group), none summed\n"
"  -k, --keep-dups    json and csv: repeated file:line func lines apart\n"
"  -m, --min SIZE     only tags holding at least SIZE\n"
"      --module GLOB, --path GLOB, --func GLOB\n"
"                     only the tags that match (see 'top --help')\n"
"  -q, --quiet        no messages about malformed lines\n"
"  -h, --help         this help\n"
"\n"
"Tags are written in input order. Prometheus also gets, without labels:\n"
"allocinfo_profile_bytes and _calls (every tag that matches the filters),\n"
"allocinfo_tags, allocinfo_inaccurate_tags, allocinfo_negative_tags,\n"
"allocinfo_skipped_lines, and allocinfo_profiling_enabled (1 or 0, from\n"
"/proc/sys/vm/mem_profiling, when reading the live /proc/allocinfo).\n";

/*
 * Is profiling on? /proc/sys/vm/mem_profiling says 1 or 0 (or "[not
 * available]" when the kernel was booted with it never). Read when the
 * input is the live /proc/allocinfo, or from $ALLOCINFO_MEM_PROFILING;
 * -1 (the metric is left out) for a capture or when it cannot be read.
 */
static int profiling_state(const char *input)
{
	const char *path = getenv("ALLOCINFO_MEM_PROFILING");
	char b[32] = "", pb[4096];
	FILE *f;

	if (!path || !*path) {
		if (input && strcmp(input, AI_DEFAULT_INPUT))
			return -1;
		path = ai_sys_path("/proc/sys/vm/mem_profiling", pb, sizeof(pb));
	}
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(b, sizeof(b), f))
		b[0] = '\0';
	fclose(f);
	if (b[0] == '1' && (b[1] == '\n' || !b[1]))
		return 1;
	if (b[0] == '0' && (b[1] == '\n' || !b[1]))
		return 0;
	return strstr(b, "not available") ? 0 : -1;
}

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	enum ai_export_fmt fmt = AI_EXPORT_PROM;
	const char *out = NULL;
	struct ai_prom_opts po = { .nby = 0 };
	struct ai_snap s;
	struct ai_tag **v;
	struct ai_out o;
	uint64_t top = 0;
	int all = 0, c;
	size_t n;

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
		} else if (c == OPT_TOP) {
			if (top)
				ai_usage_err("export: --top given twice");
			if (ai_parse_u64(optarg, &top) < 0 || !top)
				ai_usage_err("export: --top wants a number of series, 1 or more, not '%s' (--all for every tag)",
					     optarg);
		} else if (c == OPT_ALL) {
			all = 1;
		} else if (c == OPT_BY) {
			size_t i;

			if (strcmp(optarg, "tag") && strcmp(optarg, "module") &&
			    strcmp(optarg, "subsys") && strcmp(optarg, "file"))
				ai_usage_err("export: --by wants tag, module, subsys or file, not '%s'",
					     optarg);
			for (i = 0; i < po.nby; i++)
				if (!strcmp(po.by[i], optarg))
					ai_usage_err("export: --by %s given twice", optarg);
			po.by[po.nby++] = optarg;
		} else if (c == 'h') {
			ai_help(export_help);
		} else {
			ai_usage_err("export: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("export: unexpected argument '%s'", argv[optind]);
	ai_only(&co, CO_ALL & ~(CO_EXACT | CO_NOHDR), "export");
	if (top && (co.given & CO_LIMIT))
		ai_usage_err("export: -n and --top are the same option: give one");
	if (co.given & CO_LIMIT) {
		if (!co.limit)
			ai_usage_err("export: -n wants 1 or more (--all for every tag)");
		top = co.limit;
	}
	if (all && top)
		ai_usage_err("export: --all (every tag) or --top N (the N largest), not both");
	if (all && fmt != AI_EXPORT_PROM)
		ai_not_here("--all", "export --format json or csv (every tag already)");
	/* bounded by default: prometheus writes the EXPORT_TOP largest */
	co.limit = top ? top : fmt == AI_EXPORT_PROM && !all ? EXPORT_TOP : 0;
	if (fmt == AI_EXPORT_PROM && co.keep_dups)
		ai_not_here("-k/--keep-dups", "export --format prometheus (one series per tag)");
	if (fmt != AI_EXPORT_PROM && po.nby)
		ai_not_here("--by", "export --format json or csv (Prometheus only)");
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (fmt != AI_EXPORT_PROM && co.limit && co.limit < n) {
		/* the N largest, written in input order */
		ai_sort_tags(v, n, "size");
		n = co.limit;
		ai_sort_tags(v, n, "input");
	}
	ai_out_open(&o, out);
	if (fmt == AI_EXPORT_PROM) {
		po.limit = co.limit;
		po.profiling = profiling_state(co.input);
		ai_export_prom(o.f, &s, v, n, &po);
	} else {
		ai_export(o.f, &s, v, n, fmt);
	}
	ai_out_commit(&o);
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

