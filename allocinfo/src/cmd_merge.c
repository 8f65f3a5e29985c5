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
"the same files again, e.g. every night, adds only what is new.\n"
"\n"
"  -d, --db DB        the database merged into\n"
"  -q, --quiet        no summary\n"
"  -h, --help         this help\n";

int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dbpath = NULL;
	int quiet = 0, c, i;
	sqlite3 *db;

	while ((c = ai_getopt(argc, argv, "d:qh", lo)) != -1) {
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case 'q':
			quiet = 1;
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

		ai_db_merge(db, argv[i], &added, &skipped);
		if (!quiet)
			printf("%s: %lld added, %lld already there\n", argv[i],
			       (long long)added, (long long)skipped);
	}
	if (sqlite3_close(db) != SQLITE_OK)
		ai_die("closing the database failed");
	return AI_EXIT_OK;
}
