// SPDX-License-Identifier: GPL-2.0
/* record: store snapshots of /proc/allocinfo in a SQLite database. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char record_help[] =
"usage: allocinfo record -d DB [OPTIONS]\n"
"Store snapshots of /proc/allocinfo in the SQLite database DB (created\n"
"when missing). Duplicate file:line func lines are summed.\n"
"\n"
"  -d, --db DB        the database\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"  -i, --interval S   take a snapshot every S seconds (fractions allowed);\n"
"                     without -c, until interrupted (SIGINT, SIGTERM)\n"
"  -c, --count N      take N snapshots (default 1, or unbounded with -i)\n"
"      --time T       record the snapshot as taken at Unix time T (seconds)\n"
"                     instead of now: for captures made elsewhere\n"
"      --host NAME    record it as a snapshot of host NAME (default: this\n"
"                     machine's node name): for captures of other hosts\n"
"  -l, --label TEXT   a note stored with each snapshot\n"
"  -q, --quiet        no messages about malformed lines, no progress\n"
"  -h, --help         this help\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "label", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	const char *dbpath = NULL, *label = NULL, *host = NULL;
	double interval = 0, when = -1;
	uint64_t count = 0;
	int have_count = 0, rc = AI_EXIT_OK, c;
	struct timespec next;
	struct sigaction sa;
	sqlite3 *db;
	uint64_t k;
	char *e;

	while ((c = ai_getopt(argc, argv, "d:f:i:c:l:qh", lo)) != -1) {
		switch (c) {
		case 'd':
			dbpath = optarg;
			break;
		case 'f':
			co.input = optarg;
			break;
		case 'i':
			interval = strtod(optarg, &e);
			if (*e || !(interval > 0) || interval > 1e7)
				ai_usage_err("record: --interval wants seconds > 0");
			break;
		case 'c':
			if (ai_parse_u64(optarg, &count) < 0 || !count)
				ai_usage_err("record: --count wants a number > 0");
			have_count = 1;
			break;
		case OPT_TIME:
			when = strtod(optarg, &e);
			if (*e || !isfinite(when) || when < 0)
				ai_usage_err("record: --time wants Unix seconds");
			break;
		case 'l':
			label = optarg;
			break;
		case OPT_HOST:
			if (!*optarg)
				ai_usage_err("record: --host wants a name");
			host = optarg;
			break;
		case 'q':
			co.quiet = 1;
			break;
		case 'h':
			fputs(record_help, stdout);
			return 0;
		default:
			ai_usage_err("record: bad option");
		}
	}
	if (optind < argc)
		ai_usage_err("record: unexpected argument '%s'", argv[optind]);
	if (!dbpath)
		ai_usage_err("record: -d DB is needed");
	if (!have_count)
		count = interval > 0 ? 0 : 1;
	if (when >= 0 && count != 1)
		ai_usage_err("record: --time goes with a single snapshot");
	if (co.input && !strcmp(co.input, "-") && count != 1)
		ai_usage_err("record: stdin can be read only once");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	db = ai_db_open(dbpath, AI_DB_CREATE);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (k = 0; !stop && (count == 0 || k < count); k++) {
		struct ai_snap s;
		int64_t sid;
		char b[32];

		if (k) {
			double ns = next.tv_nsec + fmod(interval, 1.0) * 1e9;

			next.tv_sec += (time_t)interval + (time_t)(ns / 1e9);
			next.tv_nsec = (long)fmod(ns, 1e9);
			while (!stop && clock_nanosleep(CLOCK_MONOTONIC,
							TIMER_ABSTIME, &next, NULL) == EINTR)
				;
			if (stop)
				break;
		}
		ai_load_or_die(&s, co.input, &co);
		sid = ai_db_record(db, &s, when >= 0 ? when : now_real(), label, host);
		if (!co.quiet) {
			int64_t tot = 0;
			size_t i;

			for (i = 0; i < s.ntags; i++)
				if (__builtin_add_overflow(tot, s.tags[i].bytes, &tot))
					tot = INT64_MAX;
			fprintf(stderr, "%s: snapshot %lld: %zu tags, %s\n", ai_prog,
				(long long)sid, s.ntags, ai_human(tot, b, sizeof(b)));
		}
		if (ai_status(&s))
			rc = AI_EXIT_SKIPPED;
		ai_snap_free(&s);
	}
	if (sqlite3_close(db) != SQLITE_OK)
		ai_die("closing the database failed");
	return rc;
}

