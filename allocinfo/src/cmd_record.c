// SPDX-License-Identifier: GPL-2.0
/* record: store snapshots of /proc/allocinfo in a SQLite database. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char record_help[] =
"usage: allocinfo record -d DB [OPTIONS]\n"
"       allocinfo record -d DB --import DIR [OPTIONS]\n"
"Store snapshots of /proc/allocinfo in the SQLite database DB (created\n"
"when missing), with the boot id and machine id of the host. Duplicate\n"
"file:line func lines are summed. A capture that is not complete (no\n"
"tags, a malformed line, no header, cut short) is refused: a row says\n"
"why ('report snapshots'), no samples are stored, and the exit status is 3.\n"
"\n"
"  -d, --db DB        the database\n"
"  -f, --input FILE   read FILE ('-' for stdin); default /proc/allocinfo\n"
"      --import DIR   every capture in DIR (text, or allocinfo's JSON export,\n"
"                     which says when and where it was taken), in name order;\n"
"                     a capture already recorded is skipped; a text capture\n"
"                     holds no time: it is refused unless --time mtime\n"
"  -i, --interval S   take a snapshot every S seconds (fractions allowed);\n"
"                     without -c, until interrupted (SIGINT, SIGTERM); an\n"
"                     input that cannot be read, a database that stays\n"
"                     locked or a full disk skips one snapshot\n"
"  -c, --count N      take N snapshots (default 1, or unbounded with -i)\n"
"      --time T       record the snapshot as taken at Unix time T (seconds)\n"
"                     instead of now: for captures made elsewhere\n"
"      --time mtime   with --import: a text capture was taken when its file\n"
"                     was last modified (written in place, or cp -p)\n"
"      --host NAME    a capture of host NAME (node name) instead of this\n"
"                     machine; its identity is --machine-id, or NAME\n"
"      --machine-id ID, --boot-id ID\n"
"                     the machine and boot of a capture of another host\n"
"      --keep-incomplete  store an incomplete capture, marked 'incomplete'\n"
"                     (report leaks skips it) instead of refusing it\n"
"      --wait S       wait up to S seconds for a database another process\n"
"                     holds (default 60)\n"
"  -l, --label TEXT   a note stored with each snapshot\n"
"  -q, --quiet        no messages about malformed lines, no progress\n"
"  -h, --help         this help\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct rec {
	struct ai_db_state st;
	const char *label;
	const char *host, *machine_id, *boot_id;
	int keep, quiet;
	int mtime;		/* --import --time mtime: a text capture's time is its file's */
	int64_t refused, stored, already;
};

/*
 * Whose and when: a JSON capture says so itself; the live file is this
 * machine, now; any other input is this machine's unless --host names
 * another one. The options fill in what the capture does not say.
 */
static void meta_of(const struct rec *r, const struct ai_snap *s, double when,
		    struct ai_db_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->id = s->id;
	m->when = when >= 0 ? when : s->taken_at > 0 ? s->taken_at : ai_now();
	if (!*m->id.host && !r->host && !*s->id.machine_id)
		ai_local_ident(&m->id);
	if (r->host && !*s->id.host)
		snprintf(m->id.host, sizeof(m->id.host), "%s", r->host);
	if (r->machine_id && !*s->id.machine_id)
		snprintf(m->id.machine_id, sizeof(m->id.machine_id), "%s", r->machine_id);
	if (r->boot_id && !*s->id.boot_id)
		snprintf(m->id.boot_id, sizeof(m->id.boot_id), "%s", r->boot_id);
	if (!*m->id.host)
		snprintf(m->id.host, sizeof(m->id.host), "%s",
			 *m->id.machine_id ? m->id.machine_id : "unknown");
	m->source = s->name;
	m->label = r->label;
	m->keep_incomplete = r->keep;
}

/*
 * A JSON capture of a running system (it says when it was taken, or
 * whose it is) says which machine and boot: one that does not, or says it
 * in a way that cannot be stored, would be filed under this machine or
 * under nobody. NULL, or why it is refused. --host says whose it is.
 */
static const char *ident_problem(const struct rec *r, const struct ai_snap *s)
{
	if (!s->json || s->live || r->host)
		return NULL;
	if (!(s->taken_at > 0 || *s->id.host || *s->id.machine_id || *s->id.boot_id ||
	      s->ident_bad))
		return NULL;	/* the export of a capture file: like the text */
	if (s->ident_bad & AI_ID_MACHINE)
		return "its machine_id is not an id (printable ASCII without spaces)";
	if (s->ident_bad & AI_ID_BOOT)
		return "its boot_id is not an id (printable ASCII without spaces)";
	if (s->ident_bad & AI_ID_HOST)
		return "its host is not a node name (printable ASCII without spaces)";
	if (!*s->id.machine_id)
		return "it has no machine_id";
	if (!*s->id.boot_id)
		return "it has no boot_id";
	return NULL;
}

/* what a full disk means for a snapshot */
static const char *full_msg(const struct rec *r)
{
	static char m[1024];

	snprintf(m, sizeof(m), "no space left on the file system of the database %s (or its"
		 " quota is used up): nothing of the snapshot was written; free space there"
		 " (df shows it) ('allocinfo prune' keeps the database from growing)",
		 sqlite3_db_filename(r->st.db, "main"));
	return m;
}

/* one capture into the database: 0 stored, 1 refused or incomplete, -1 locked, -2 disk full */
static int record_one(struct rec *r, const struct ai_snap *s, double when)
{
	struct ai_db_meta m;
	char problem[512], b[32];
	const char *why;
	int64_t sid;
	int status;

	why = ident_problem(r, s);
	if (why) {
		r->refused++;
		ai_warn("%s: not recorded: a JSON capture of a running system, but %s: whose"
			" it is cannot be told (it is not filed under this machine); record it"
			" with --host NAME --machine-id ID --boot-id ID", s->name, why);
		return 1;
	}
	meta_of(r, s, when, &m);
	sid = ai_db_record(&r->st, s, &m, &status, problem, sizeof(problem));
	if (sid < 0)
		return (int)sid;
	if (status == AI_SNAP_REFUSED) {
		r->refused++;
		ai_warn("%s: not recorded: %s (snapshot %lld says so; --keep-incomplete"
			" stores it marked)", s->name, problem, (long long)sid);
		return 1;
	}
	r->stored++;
	if (status == AI_SNAP_INCOMPLETE)
		ai_warn("%s: recorded as incomplete: %s (snapshot %lld)", s->name, problem,
			(long long)sid);
	if (!r->quiet) {
		int64_t tot = 0;
		size_t i;

		for (i = 0; i < s->ntags; i++)
			if (__builtin_add_overflow(tot, s->tags[i].bytes, &tot))
				tot = INT64_MAX;
		fprintf(stderr, "%s: snapshot %lld: %zu tags, %s\n", ai_prog,
			(long long)sid, s->ntags, ai_human(tot, b, sizeof(b)));
	}
	return status != AI_SNAP_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --import DIR: each regular file, in name order, once */
static int import_dir(struct rec *r, const char *dir, const struct ai_common *co)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	double *mtimes;
	size_t n = 0, i;
	int rc = AI_EXIT_OK;

	if (!d)
		ai_die("cannot read %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n] = xmalloc(strlen(dir) + strlen(e->d_name) + 2);
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	mtimes = xcalloc(n + 1, sizeof(*mtimes));
	for (i = 0; i < n; i++) {
		struct stat st;

		mtimes[i] = stat(names[i], &st) ? -1 : (double)st.st_mtime;
	}
	for (i = 0; i < n && !stop; i++) {
		struct ai_snap s;
		struct ai_db_meta m;
		struct stat st;
		size_t j;
		int one;

		if (stat(names[i], &st) || !S_ISREG(st.st_mode))
			continue;
		if (ai_load(&s, names[i], &(struct ai_parse_opts){
				.err = co->quiet ? NULL : stderr, .max_msgs = 1000 }) < 0) {
			rc = AI_EXIT_FATAL;
			continue;
		}
		/*
		 * A text capture holds no time: its modification time is when it
		 * was taken only if whoever made the directory says so (--time
		 * mtime), and not even then when captures share one (copied
		 * without cp -p).
		 */
		if (s.taken_at <= 0 && !r->mtime) {
			ai_warn("%s: not recorded: a text capture holds no time of its own: if the"
				" files' modification times are when they were taken (written in"
				" place, or copied with cp -p), import with --time mtime; else record"
				" it with -f %s --time T", names[i], names[i]);
			r->refused++;
			rc = AI_EXIT_SKIPPED;
			ai_snap_free(&s);
			continue;
		}
		for (j = 0; s.taken_at <= 0 && j < n && (j == i || mtimes[j] != mtimes[i]); j++)
			;
		if (s.taken_at <= 0 && j < n) {
			ai_warn("%s: not recorded: a text capture has no time of its own, and its"
				" modification time is that of %s too (copied without cp -p?): record"
				" it with -f %s --time T, or restore the times (touch -d)", names[i],
				names[j], names[i]);
			r->refused++;
			rc = AI_EXIT_SKIPPED;
			ai_snap_free(&s);
			continue;
		}
		meta_of(r, &s, s.taken_at > 0 ? -1 : (double)st.st_mtime, &m);
		if (!ident_problem(r, &s) && ai_db_has(r->st.db, *m.id.machine_id ? m.id.machine_id : m.id.host,
			      m.when, s.name)) {
			r->already++;
			ai_snap_free(&s);
			continue;
		}
		one = record_one(r, &s, m.when);
		if (one == -2)
			ai_die("%s: not recorded: %s", names[i], full_msg(r));
		if (one < 0)
			ai_die("database %s is locked by another process (waited %.0f s;"
			       " --wait S waits longer)", sqlite3_db_filename(r->st.db, "main"),
			       ai_db_wait);
		if ((one || ai_status(&s)) && rc == AI_EXIT_OK)
			rc = AI_EXIT_SKIPPED;
		ai_snap_free(&s);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(mtimes);
	fprintf(stderr, "%s: %s: %lld capture(s) recorded, %lld refused, %lld already there\n",
		ai_prog, dir, (long long)r->stored, (long long)r->refused,
		(long long)r->already);
	return rc;
}

/* ID for --machine-id and --boot-id: a word of printable ASCII */
static const char *ident_arg(const char *opt, const char *v, size_t max)
{
	if (!ai_ident_word(v) || strlen(v) >= max)
		ai_usage_err("record: %s wants a word of printable ASCII (at most %zu"
			     " characters), not '%s'", opt, max - 1, v);
	return v;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'f' },
		{ "import", required_argument, NULL, OPT_IMPORT },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "machine-id", required_argument, NULL, OPT_MACHINE_ID },
		{ "boot-id", required_argument, NULL, OPT_BOOT_ID },
		{ "keep-incomplete", no_argument, NULL, OPT_KEEP_INCOMPLETE },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "label", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ai_common co = { 0 };
	struct rec r = { 0 };
	struct ai_ident idsz;
	const char *dbpath = NULL, *import = NULL;
	double interval = 0, when = -1;
	uint64_t count = 0;
	int have_count = 0, rc = AI_EXIT_OK, c;
	struct timespec next;
	struct sigaction sa;
	struct ai_snap s;
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
		case OPT_IMPORT:
			import = optarg;
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
			if (!strcmp(optarg, "mtime")) {
				r.mtime = 1;
				break;
			}
			/* a time that can be printed and pruned: 1970 to a day from now */
			when = strtod(optarg, &e);
			if (*e || e == optarg || !isfinite(when) || when < 0 ||
			    when > ai_now() + 86400)
				ai_usage_err("record: --time wants Unix seconds from 0 to now"
					     " (a day ahead at most), not '%s'", optarg);
			break;
		case 'l':
			r.label = optarg;
			break;
		case OPT_HOST:
			r.host = ident_arg("--host", optarg, sizeof(idsz.host));
			break;
		case OPT_MACHINE_ID:
			r.machine_id = ident_arg("--machine-id", optarg, sizeof(idsz.machine_id));
			break;
		case OPT_BOOT_ID:
			r.boot_id = ident_arg("--boot-id", optarg, sizeof(idsz.boot_id));
			break;
		case OPT_KEEP_INCOMPLETE:
			r.keep = 1;
			break;
		case OPT_WAIT:
			ai_db_wait = strtod(optarg, &e);
			if (*e || e == optarg || !(ai_db_wait >= 0) || ai_db_wait > 86400)
				ai_usage_err("record: --wait wants seconds, 0 to 86400");
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
	if ((r.machine_id || r.boot_id) && !r.host)
		ai_usage_err("record: --machine-id and --boot-id go with --host (a capture of"
			     " another host; this one's are read from the system)");
	if (import && (co.input || interval > 0 || have_count))
		ai_usage_err("record: --import goes without -f, -i and -c (each capture says"
			     " when, or --time mtime takes its file's time)");
	if (import && when >= 0)
		ai_usage_err("record: --import takes --time mtime (each text capture at its"
			     " file's modification time), not one time T for every capture:"
			     " record one capture with -f FILE --time T");
	if (r.mtime && !import)
		ai_usage_err("record: --time mtime goes with --import DIR (-f FILE takes"
			     " --time T, Unix seconds)");
	if (!have_count)
		count = interval > 0 ? 0 : 1;
	if (when >= 0 && count != 1)
		ai_usage_err("record: --time goes with a single snapshot");
	if (co.input && !strcmp(co.input, "-") && count != 1)
		ai_usage_err("record: stdin can be read only once");
	r.quiet = co.quiet;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (import) {
		db = ai_db_open(dbpath, AI_DB_CREATE);
		ai_db_state_init(&r.st, db);
		rc = import_dir(&r, import, &co);
		ai_db_state_free(&r.st);
		if (sqlite3_close(db) != SQLITE_OK)
			ai_die("database %s: closing it failed", dbpath);
		return rc;
	}
	/* the input first: a kernel without /proc/allocinfo gets no empty database */
	ai_load_or_die(&s, co.input, &co);
	db = ai_db_open(dbpath, AI_DB_CREATE);
	ai_db_state_init(&r.st, db);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (k = 0; !stop && (count == 0 || k < count); k++) {
		int one;

		if (k) {
			double ns = next.tv_nsec + fmod(interval, 1.0) * 1e9;

			next.tv_sec += (time_t)interval + (time_t)(ns / 1e9);
			next.tv_nsec = (long)fmod(ns, 1e9);
			while (!stop && clock_nanosleep(CLOCK_MONOTONIC,
							TIMER_ABSTIME, &next, NULL) == EINTR)
				;
			if (stop)
				break;
			/* gone for a moment (a capture being replaced): the next one */
			if (ai_load(&s, co.input, &(struct ai_parse_opts){
					.err = co.quiet ? NULL : stderr, .max_msgs = 1000 }) < 0) {
				ai_warn("snapshot skipped; trying again in %g s", interval);
				rc = AI_EXIT_SKIPPED;
				continue;
			}
		}
		one = record_one(&r, &s, when);
		if (one == -2 && !interval)
			ai_die("%s: not recorded: %s", s.name, full_msg(&r));
		if (one == -2) {
			/* a disk filled for a while: the next snapshot may fit */
			ai_warn("%s: snapshot skipped: %s; trying again in %g s", s.name,
				full_msg(&r), interval);
			rc = AI_EXIT_SKIPPED;
		} else if (one < 0) {
			if (!interval)
				ai_die("database %s is locked by another process (waited %.0f s;"
				       " --wait S waits longer): nothing recorded", dbpath, ai_db_wait);
			ai_warn("database %s stayed locked for %.0f s: snapshot skipped", dbpath,
				ai_db_wait);
			rc = AI_EXIT_SKIPPED;
		}
		if (one > 0 || ai_status(&s))
			rc = AI_EXIT_SKIPPED;
		ai_snap_free(&s);
	}
	ai_db_state_free(&r.st);
	if (sqlite3_close(db) != SQLITE_OK)
		ai_die("database %s: closing it failed", dbpath);
	return rc;
}
