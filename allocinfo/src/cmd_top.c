// SPDX-License-Identifier: GPL-2.0
/* top: the tags that hold the most memory. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"

static const char top_help[] =
"usage: allocinfo top [OPTIONS]\n"
"Show the allocation tags that hold the most memory.\n"
"\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -n N               show N tags (default 20; 0 = all)\n"
"  -s, --sort KEY     size (default), calls or name\n"
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

int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		COMMON_LONGOPTS,
		{ "sort", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { .limit = 20 };
	const char *sort = "size";
	struct ai_snap s;
	struct ai_tag **v;
	size_t n;
	int c;

	while ((c = ai_getopt(argc, argv, COMMON_SHORTOPTS "s:", lo)) != -1) {
		if (ai_common_opt(&co, c, optarg))
			continue;
		if (c == 's')
			sort = optarg;
		else if (c == 'h')
			ai_help(top_help);
		else
			ai_usage_err("top: bad option");
	}
	if (optind < argc)
		ai_usage_err("top: unexpected argument '%s'", argv[optind]);
	ai_load_or_die(&s, co.input, &co);
	v = ai_select(&s, &co, &n);
	if (ai_sort_tags(v, n, sort) < 0)
		ai_usage_err("top: --sort wants size, calls or name, not '%s'", sort);
	ai_print_tags(stdout, v, n, s.ntags, &co);
	free(v);
	c = ai_status(&s);
	ai_snap_free(&s);
	return c;
}

