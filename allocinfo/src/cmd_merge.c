// SPDX-License-Identifier: GPL-2.0
/* merge: copy the snapshots of other databases (other hosts) into one. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char merge_help[] =
"usage: allocinfo merge -d DB SOURCE...\n"
"Copy every snapshot of the SOURCE databases (written by 'allocinfo\n"
"record', on other hosts) into DB (created when missing), with their\n"
"host names: 'report --host NAME' then reads one host's. A snapshot that\n"
"DB already holds (same host, time and source) is skipped, so merging\n"
"the same files again, e.g. every night, adds only what is new. A source\n"
"that cannot be read (missing, damaged, not a database, DB itself) is\n"
"reported and the others are still merged; the exit status is then 1.\n"
"\n"
"  -d, --db DB        the database merged into\n"
"      --wait S       wait up to S seconds for a database another process\n"
"                     holds (default 60)\n"
"  -q, --quiet        no summary\n"
"  -h, --help         this help\n";

int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dbpath = NULL;
	int quiet = 0, c, i, bad = 0;
	sqlite3 *db;
	char *e;

	while ((c = ai_getopt(argc, argv, "d:qh", lo)) != -1) {
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_WAIT:
			ai_db_wait = strtod(optarg, &e);
			if (*e || e == optarg || !(ai_db_wait >= 0) || ai_db_wait > 86400)
				ai_usage_err("merge: --wait wants seconds, 0 to 86400");
			break;
		case 'h':
			ai_help(merge_help);
		default:
			ai_usage_err("merge: bad option");
		}
	}
	if (!dbpath)
		ai_usage_err("merge: -d DB is needed");
	if (optind == argc)
		ai_usage_err("merge: which databases? allocinfo merge -d DB SOURCE...");
	db = ai_db_open(dbpath, AI_DB_CREATE);
	for (i = optind; i < argc; i++) {
		int64_t added, skipped;
		char err[1024];

		if (ai_db_merge(db, argv[i], &added, &skipped, err, sizeof(err)) < 0) {
			ai_warn("merge: %s: not merged: %s", argv[i], err);
			bad++;
			continue;
		}
		if (!quiet)
			printf("%s: %lld added, %lld already there\n", argv[i],
			       (long long)added, (long long)skipped);
	}
	if (sqlite3_close(db) != SQLITE_OK)
		ai_die("database %s: closing it failed", dbpath);
	if (bad)
		ai_warn("merge: %d of %d source(s) not merged (see above)", bad, argc - optind);
	return bad ? AI_EXIT_FATAL : AI_EXIT_OK;
}
