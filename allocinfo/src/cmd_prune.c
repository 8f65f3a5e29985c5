// SPDX-License-Identifier: GPL-2.0
/* prune: drop the snapshots older than a retention time from a database. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char prune_help[] =
"usage: allocinfo prune -d DB --keep AGE [OPTIONS]\n"
"Remove the snapshots taken more than AGE ago (and any stamped more than a\n"
"day ahead: a clock far off), their samples, and the tags no snapshot uses\n"
"any more; for a database that 'record -i' fills for months. Prints what\n"
"it removed.\n"
"\n"
"  -d, --db DB        the database\n"
"      --keep AGE     keep the snapshots of the last AGE: a number with its\n"
"                     unit, s, m, h, d or w (30d, 12h, 90m, 45s); 0 keeps\n"
"                     none, and needs --all\n"
"      --all          with --keep 0: remove every snapshot\n"
"      --host NAME    only the snapshots of host NAME (default: all hosts)\n"
"      --now T        count AGE back from Unix time T instead of now\n"
"      --vacuum       also give the freed pages back to the file system\n"
"                     (rewrites the whole file)\n"
"      --wait S       wait up to S seconds for a database another process\n"
"                     holds (default 60)\n"
"  -h, --help         this help\n";

int cmd_prune(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "now", required_argument, NULL, OPT_NOW },
		{ "vacuum", no_argument, NULL, OPT_VACUUM },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dbpath = NULL, *host = NULL;
	double keep = -1, now = -1;
	int vacuum = 0, all = 0, c;
	struct timespec ts;
	int64_t nsnap, ntag, left;
	sqlite3 *db;
	char *e;

	while ((c = ai_getopt(argc, argv, "d:h", lo)) != -1) {
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case OPT_KEEP:
			if (ai_parse_duration(optarg, &keep) < 0)
				ai_duration_err("prune", "--keep", optarg);
			break;
		case OPT_ALL:
			all = 1;
			break;
		case OPT_HOST:
			host = optarg;
			break;
		case OPT_NOW:
			now = strtod(optarg, &e);
			if (*e || e == optarg || !isfinite(now) || now < 0)
				ai_usage_err("prune: --now wants Unix seconds, not '%s'", optarg);
			break;
		case OPT_VACUUM:
			vacuum = 1;
			break;
		case OPT_WAIT:
			ai_db_wait = strtod(optarg, &e);
			if (*e || e == optarg || !(ai_db_wait >= 0) || ai_db_wait > 86400)
				ai_usage_err("prune: --wait wants seconds, 0 to 86400");
			break;
		case 'h':
			ai_help(prune_help);
		default:
			ai_usage_err("prune: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("prune: unexpected argument '%s'", argv[optind]);
	if (!dbpath || keep < 0)
		ai_usage_err("prune: -d DB and --keep AGE are needed");
	if (keep == 0 && !all)
		ai_usage_err("prune: --keep 0 removes every snapshot of the database (or of --host):"
			     " add --all if that is meant, or give an age such as --keep 30d");
	if (all && keep != 0)
		ai_usage_err("prune: --all goes with --keep 0 only");
	if (now < 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
	}
	db = ai_db_open(dbpath, AI_DB_WRITE);
	if (host)
		ai_db_host(db, host, "prune");
	ai_db_prune(db, now - keep, now + 86400, &nsnap, &ntag, &left);
	printf("removed %lld snapshot(s); %lld left\n", (long long)nsnap, (long long)left);
	printf("removed %lld tag(s) no snapshot uses\n", (long long)ntag);
	if (vacuum && sqlite3_exec(db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "VACUUM");
	if (sqlite3_close(db) != SQLITE_OK)
		ai_die("database %s: closing it failed", dbpath);
	return AI_EXIT_OK;
}
