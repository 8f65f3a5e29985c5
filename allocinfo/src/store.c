// SPDX-License-Identifier: GPL-2.0
/*
 * The store: snapshots of /proc/allocinfo in a SQLite database, shared
 * by record, report, prune, merge and plot. The schema is described in
 * README.md. A snapshot stores the samples that changed since its base
 * snapshot (the host's previous one), so an unchanged tag costs nothing;
 * every AI_DB_KEY_EVERY-th snapshot of a host stores them all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

double ai_db_wait = 60;

static const char schema[] =
"CREATE TABLE snapshot (\n"
"	id INTEGER PRIMARY KEY,\n"
"	taken_at REAL NOT NULL,\n"
"	source TEXT NOT NULL,\n"
"	host TEXT NOT NULL,\n"
"	kernel TEXT NOT NULL,\n"
"	version TEXT NOT NULL,\n"
"	label TEXT NOT NULL DEFAULT '',\n"
"	ntags INTEGER NOT NULL,\n"
"	total_bytes INTEGER NOT NULL,\n"
"	total_calls INTEGER NOT NULL,\n"
"	skipped_lines INTEGER NOT NULL,\n"
"	machine_id TEXT NOT NULL DEFAULT '',\n"
"	boot_id TEXT NOT NULL DEFAULT '',\n"
"	status TEXT NOT NULL DEFAULT 'ok',\n"
"	problem TEXT NOT NULL DEFAULT '',\n"
"	base INTEGER,\n"
"	depth INTEGER NOT NULL DEFAULT 0\n"
");\n"
"CREATE TABLE tag (\n"
"	id INTEGER PRIMARY KEY,\n"
"	file TEXT NOT NULL,\n"
"	line INTEGER NOT NULL,\n"
"	module TEXT NOT NULL,\n"
"	func TEXT NOT NULL,\n"
"	UNIQUE (file, line, module, func)\n"
");\n"
"CREATE TABLE sample (\n"
"	snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,\n"
"	tag_id INTEGER NOT NULL REFERENCES tag(id),\n"
"	bytes INTEGER NOT NULL,\n"
"	calls INTEGER NOT NULL,\n"
"	extra TEXT NOT NULL DEFAULT '',\n"
"	PRIMARY KEY (snapshot_id, tag_id)\n"
") WITHOUT ROWID;\n";

/*
 * The indexes of version 2; version 1 had sample_by_tag too. An index of
 * the samples by tag would make each record and prune's deletions ten
 * times slower for prune's one question (which tags no sample uses),
 * answered by one scan instead: sample_of_tag, made for a while, goes.
 */
static const char indexes[] =
"CREATE INDEX IF NOT EXISTS snapshot_by_time ON snapshot (taken_at);\n"
"CREATE INDEX IF NOT EXISTS snapshot_by_host ON snapshot (" AI_HOSTKEY ", taken_at);\n"
"DROP INDEX IF EXISTS sample_of_tag;\n";

/* version 1 to 2: columns added, nothing rewritten */
static const char upgrade_1[] =
"ALTER TABLE snapshot ADD COLUMN machine_id TEXT NOT NULL DEFAULT '';\n"
"ALTER TABLE snapshot ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';\n"
"ALTER TABLE snapshot ADD COLUMN status TEXT NOT NULL DEFAULT 'ok';\n"
"ALTER TABLE snapshot ADD COLUMN problem TEXT NOT NULL DEFAULT '';\n"
"ALTER TABLE snapshot ADD COLUMN base INTEGER;\n"
"ALTER TABLE snapshot ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;\n"
"UPDATE snapshot SET status = 'incomplete', problem = CASE WHEN ntags = 0"
" THEN 'no tags (recorded by allocinfo 1)' ELSE skipped_lines ||"
" ' malformed line(s) (recorded by allocinfo 1)' END"
" WHERE skipped_lines > 0 OR ntags = 0;\n"
"DROP INDEX IF EXISTS sample_by_tag;\n";

const char *ai_snap_status_name(int status)
{
	return status == AI_SNAP_OK ? "ok" : status == AI_SNAP_INCOMPLETE ?
	       "incomplete" : "refused";
}

static int status_of(const char *s)
{
	return !s || !strcmp(s, "ok") ? AI_SNAP_OK : !strcmp(s, "incomplete") ?
	       AI_SNAP_INCOMPLETE : AI_SNAP_REFUSED;
}

static const char *db_name(sqlite3 *db)
{
	const char *n = db ? sqlite3_db_filename(db, "main") : NULL;

	return n && *n ? n : "(database)";
}

/* the last error of db is a full disk (or a used-up quota) */
static int disk_full(sqlite3 *db)
{
	int rc = sqlite3_extended_errcode(db), e = sqlite3_system_errno(db);

	return (rc & 0xff) == SQLITE_FULL ||
	       ((rc & 0xff) == SQLITE_IOERR && (e == ENOSPC || e == EDQUOT));
}

/*
 * What an SQLite error means for the user of the file. A full disk is
 * SQLITE_FULL when a write fails, but a disk I/O error when the -shm
 * file cannot be made: the errno tells.
 */
static const char *hint_of(sqlite3 *db, int rc)
{
	int e = db ? sqlite3_system_errno(db) : 0;

	if ((rc & 0xff) == SQLITE_FULL ||
	    ((rc & 0xff) == SQLITE_IOERR && (e == ENOSPC || e == EDQUOT)))
		return ": no space left on the file system of the database (or its quota is"
		       " used up): nothing was written; free space there (df shows it),"
		       " then run again ('allocinfo prune' keeps the database from growing)";
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
		return ": the file is damaged (cut short or overwritten?): restore a copy,"
		       " or record into a new database";
	case SQLITE_NOTADB:
		return ": not a SQLite database";
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return ": another process holds it (--wait S waits longer)";
	case SQLITE_READONLY:
		return ": no write access (run as the owner of the file, or copy it)";
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		return ": no access (a WAL database needs write access to its directory"
		       " for its -shm file: run as its owner, or copy it)";
	}
	return "";
}

void ai_db_die(sqlite3 *db, const char *what)
{
	int rc = db ? sqlite3_extended_errcode(db) : SQLITE_ERROR;

	ai_die("database %s: %s: %s%s", db_name(db), what,
	       db ? sqlite3_errmsg(db) : "?", hint_of(db, rc));
}

int ai_db_begin(sqlite3 *db)
{
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	if ((rc & 0xff) == SQLITE_BUSY)
		return -1;
	if (rc != SQLITE_OK)
		ai_db_die(db, "BEGIN");
	return 0;
}

void ai_db_commit(sqlite3 *db)
{
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "COMMIT");
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* PRAGMA user_version, or -1 with the error in err */
static int user_version(sqlite3 *db, const char *path, char *err, size_t n)
{
	sqlite3_stmt *st;
	int v = -1, rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	rc = sqlite3_extended_errcode(db);
	sqlite3_finalize(st);
	if (v < 0)
		snprintf(err, n, "cannot read database %s: %s%s", path, sqlite3_errmsg(db),
			 hint_of(db, rc));
	return v;
}

static sqlite3 *fail(sqlite3 *db, char *err, size_t n, const char *fmt, const char *path,
		     int v)
{
	if (fmt)
		snprintf(err, n, fmt, path, v, AI_DB_SCHEMA_VERSION);
	sqlite3_close(db);
	return NULL;
}

/* version 1 or 0 (a new file) to 2, in one transaction */
static int upgrade(sqlite3 *db, int v, char *err, size_t n)
{
	const char *path = db_name(db);
	char sql[64];

	if (ai_db_begin(db) < 0) {
		snprintf(err, n, "database %s is locked by another process (waited %.0f s;"
			 " --wait S waits longer)", path, ai_db_wait);
		return -1;
	}
	/* another process may have done it meanwhile */
	v = user_version(db, path, err, n);
	if (v < 0)
		goto bad;
	if (v == 0) {
		sqlite3_stmt *st;
		int other;

		/* a SQLite file of something else is left alone */
		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st,
				       NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_finalize(st);
			goto sqlerr;
		}
		other = sqlite3_column_int(st, 0) > 0;
		sqlite3_finalize(st);
		if (other) {
			snprintf(err, n, "%s is a SQLite database of another program (it has"
				 " tables and no allocinfo schema version): not used", path);
			goto bad;
		}
		if (exec(db, schema) != SQLITE_OK)
			goto sqlerr;
	} else if (v == 1) {
		if (exec(db, upgrade_1) != SQLITE_OK)
			goto sqlerr;
	}
	if (v < AI_DB_SCHEMA_VERSION) {
		if (exec(db, indexes) != SQLITE_OK)
			goto sqlerr;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", AI_DB_SCHEMA_VERSION);
		if (exec(db, sql) != SQLITE_OK)
			goto sqlerr;
	}
	if (exec(db, "COMMIT") != SQLITE_OK)
		goto sqlerr;
	return 0;
sqlerr:
	snprintf(err, n, "database %s: upgrading the schema: %s%s", path, sqlite3_errmsg(db),
		 hint_of(db, sqlite3_extended_errcode(db)));
bad:
	exec(db, "ROLLBACK");
	return -1;
}

static int is_access(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM;
}

/* PATH read-only as an immutable file (no -shm, no locks): file:PATH?immutable=1 */
static sqlite3 *open_immutable(const char *path)
{
	char *uri = xmalloc(strlen(path) * 3 + 32), *w;
	const unsigned char *p;
	sqlite3 *db = NULL;

	w = uri + sprintf(uri, "file:");
	for (p = (const unsigned char *)path; *p; p++)
		if (*p == '%' || *p == '?' || *p == '#' || *p <= ' ' || *p >= 0x7f)
			w += sprintf(w, "%%%02X", *p);
		else
			*w++ = *p;
	strcpy(w, "?immutable=1");
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		db = NULL;
	}
	free(uri);
	if (db)
		sqlite3_extended_result_codes(db, 1);
	return db;
}

/* what an immutable read may miss: the log of a writer that is still at work */
static void wal_note(const char *path)
{
	char *wal = xmalloc(strlen(path) + 8);
	struct stat st;

	sprintf(wal, "%s-wal", path);
	if (!stat(wal, &st) && st.st_size > 0)
		ai_warn("%s: read as it is on disk (no write access for its -shm file): the"
			" last snapshots, still in %s, are not", path, wal);
	free(wal);
}

/*
 * A cheap sign of a damaged file, before writing to it: the pages its
 * header counts are all there (a copy cut short has fewer), and its
 * tables can be read. 0, or 1 with the message in err.
 */
static int damaged(sqlite3 *db, const char *path, char *err, size_t n)
{
	sqlite3_stmt *st;
	struct stat sb;
	int64_t pages = -1, size = -1;
	char wal[4096];
	int rc;

	*err = '\0';
	snprintf(wal, sizeof(wal), "%s-wal", path);
	rc = sqlite3_prepare_v2(db, "SELECT (SELECT page_count FROM pragma_page_count),"
				" (SELECT page_size FROM pragma_page_size),"
				" (SELECT count(*) FROM snapshot), (SELECT max(id) FROM tag)",
				-1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		pages = sqlite3_column_int64(st, 0);
		size = pages * sqlite3_column_int64(st, 1);
	}
	if (rc != SQLITE_ROW) {
		snprintf(err, n, "database %s is damaged (%s): restore a copy, or record into a"
			 " new database", path, sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return 1;
	}
	sqlite3_finalize(st);
	/* with no log to add pages, the file holds every page its header counts */
	if ((stat(wal, &sb) || sb.st_size == 0) && !stat(path, &sb) && sb.st_size < size) {
		snprintf(err, n, "database %s is damaged: %lld bytes, its header counts %lld"
			 " (cut short?): restore a copy, or record into a new database", path,
			 (long long)sb.st_size, (long long)size);
		return 1;
	}
	return 0;
}

/*
 * mode: AI_DB_READ, AI_DB_WRITE (an existing database: prune) or
 * AI_DB_CREATE (created with its schema when missing: record, merge).
 * A database of version 1 is upgraded in place, which needs write access.
 */
sqlite3 *ai_db_try_open(const char *path, enum ai_db_mode mode, char *err, size_t n)
{
	sqlite3 *db = NULL;
	int v, flags;

	if (!path)
		ai_usage_err("a database is needed: -d FILE");
	if (mode != AI_DB_CREATE && access(path, F_OK)) {
		snprintf(err, n, "%s: no such database (allocinfo record -d %s makes one)",
			 path, path);
		return NULL;
	}
	flags = mode == AI_DB_CREATE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
		mode == AI_DB_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		snprintf(err, n, "cannot open database %s: %s%s", path, sqlite3_errmsg(db),
			 hint_of(db, sqlite3_extended_errcode(db)));
		return fail(db, err, n, NULL, path, 0);
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, ai_db_wait * 1000 > 2e9 ? 2000000000 : (int)(ai_db_wait * 1000));
	v = user_version(db, path, err, n);
	if (v < 0 && mode == AI_DB_READ && is_access(sqlite3_extended_errcode(db))) {
		/*
		 * A WAL database that this user may read but not write (its -shm
		 * cannot be made): read the file as it is on disk.
		 */
		sqlite3_close(db);
		db = open_immutable(path);
		v = db ? user_version(db, path, err, n) : -1;
		if (v >= 0 && v < AI_DB_SCHEMA_VERSION)
			return fail(db, err, n, "%s has schema version %d (an older allocinfo);"
				    " this one (version %d) upgrades it in place on first use,"
				    " which needs write access: run allocinfo once as the owner of"
				    " the file, or read a copy (cp it somewhere writable)", path, v);
		if (v >= 0)
			wal_note(path);
	}
	if (v < 0)
		return fail(db, err, n, NULL, path, 0);
	if (v > AI_DB_SCHEMA_VERSION)
		return fail(db, err, n, "%s has schema version %d; this allocinfo knows %d:"
			    " a newer allocinfo wrote it", path, v);
	if (v == 0 && mode != AI_DB_CREATE)
		return fail(db, err, n, "%s holds no allocinfo snapshots (run 'allocinfo record'"
			    " first)", path, v);
	if (v < AI_DB_SCHEMA_VERSION) {
		if (mode == AI_DB_READ) {
			/* the upgrade writes: reopen for writing */
			sqlite3_close(db);
			db = NULL;
			if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
			    sqlite3_db_readonly(db, "main"))
				return fail(db, err, n, "%s has schema version %d (an older allocinfo);"
					    " this one (version %d) upgrades it in place on first use,"
					    " which needs write access: run allocinfo once as the"
					    " owner of the file, or read a copy", path, v);
			sqlite3_extended_result_codes(db, 1);
			sqlite3_busy_timeout(db, (int)(ai_db_wait * 1000));
		}
		if (upgrade(db, v, err, n) < 0)
			return fail(db, err, n, NULL, path, 0);
	}
	/*
	 * WAL: report and plot read while record writes, and a snapshot is
	 * one append to the log instead of a rewritten journal. The mode is
	 * kept in the file; NORMAL sync is safe with WAL (a crash may lose
	 * the last snapshot, never the database).
	 */
	if (mode != AI_DB_READ) {
		if (exec(db, "PRAGMA journal_mode = WAL") != SQLITE_OK) {
			snprintf(err, n, "database %s: switching to WAL mode: %s%s", path,
				 sqlite3_errmsg(db), hint_of(db, sqlite3_extended_errcode(db)));
			return fail(db, err, n, NULL, path, 0);
		}
		exec(db, "PRAGMA synchronous = NORMAL");
	}
	if (damaged(db, path, err, n))
		return fail(db, err, n, NULL, path, 0);
	if (mode != AI_DB_READ && exec(db, indexes) != SQLITE_OK) {
		snprintf(err, n, "database %s: adding its indexes: %s%s", path,
			 sqlite3_errmsg(db), hint_of(db, sqlite3_extended_errcode(db)));
		return fail(db, err, n, NULL, path, 0);
	}
	exec(db, "PRAGMA foreign_keys = ON");
	return db;
}

sqlite3 *ai_db_open(const char *path, enum ai_db_mode mode)
{
	char err[1024];
	sqlite3 *db = ai_db_try_open(path, mode, err, sizeof(err));

	if (!db)
		ai_die("%s", err);
	return db;
}

/* report --host, plot --host: the host key whose snapshots are read; NULL: all */
static char *db_host;

const char *ai_db_host_key(void)
{
	return db_host;
}

void ai_db_select_key(const char *key)
{
	free(db_host);
	db_host = key ? xstrdup(key) : NULL;
}

/* A statement; a :host parameter in it is bound to the host picked. */
sqlite3_stmt *ai_db_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int i;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		ai_db_die(db, sql);
	i = sqlite3_bind_parameter_index(st, ":host");
	if (i && db_host)
		sqlite3_bind_text(st, i, db_host, -1, SQLITE_TRANSIENT);
	return st;
}

static char *col_str(sqlite3_stmt *st, int c)
{
	const char *v = (const char *)sqlite3_column_text(st, c);

	return xstrdup(v ? v : "");
}

size_t ai_db_hosts(sqlite3 *db, struct ai_db_hostinfo **out)
{
	/* a host's node name: the one of its last snapshot */
	sqlite3_stmt *st = ai_db_prep(db,
		"SELECT k, host, machine_id, n FROM (SELECT " AI_HOSTKEY " AS k, host,"
		" machine_id, count(*) OVER (PARTITION BY " AI_HOSTKEY ") AS n,"
		" row_number() OVER (PARTITION BY " AI_HOSTKEY " ORDER BY taken_at DESC,"
		" id DESC) AS r FROM snapshot) WHERE r = 1 ORDER BY host, k");
	size_t n = 0, cap = 8;

	*out = xmalloc(cap * sizeof(**out));
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap *= 2;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[n].key = col_str(st, 0);
		(*out)[n].name = col_str(st, 1);
		(*out)[n].machine_id = col_str(st, 2);
		(*out)[n].snapshots = sqlite3_column_int64(st, 3);
		n++;
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		ai_db_die(db, "listing the hosts");
	return n;
}

void ai_db_hosts_free(struct ai_db_hostinfo *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(h[i].key);
		free(h[i].name);
		free(h[i].machine_id);
	}
	free(h);
}

/* "web1, web2 (machine 3d12...), ..." */
static char *host_list(struct ai_db_hostinfo *h, size_t n, int ids)
{
	size_t len = 0, i;
	char *l = xstrdup("");

	for (i = 0; i < n; i++) {
		l = xrealloc(l, len + strlen(h[i].name) + strlen(h[i].machine_id) + 24);
		len += sprintf(l + len, "%s%s", i ? ", " : "", h[i].name);
		if (ids && *h[i].machine_id)
			len += sprintf(l + len, " (machine %s)", h[i].machine_id);
	}
	return l;
}

/*
 * Read the snapshots of HOST only: a machine id, or a node name. Without
 * a host, a database of one host is read whole; series of several hosts
 * cannot be mixed, so a database of several hosts needs one (WHAT: the
 * command, for the message). A node name that several machines had
 * (cloned VMs all called localhost) needs the machine id.
 */
void ai_db_host(sqlite3 *db, const char *host, const char *what)
{
	struct ai_db_hostinfo *h;
	size_t n = ai_db_hosts(db, &h), i, named = 0, pick = 0;
	char *l;

	if (host) {
		for (i = 0; i < n; i++)
			if (!strcmp(h[i].key, host) || !strcmp(h[i].machine_id, host)) {
				ai_db_select_key(h[i].key);
				ai_db_hosts_free(h, n);
				return;
			}
		for (i = 0; i < n; i++)
			if (!strcmp(h[i].name, host)) {
				named++;
				pick = i;
			}
		if (named == 1) {
			ai_db_select_key(h[pick].key);
			ai_db_hosts_free(h, n);
			return;
		}
		l = host_list(h, n, named > 1);
		if (named > 1)
			ai_warn("%s: %zu machines were called '%s' (hosts: %s): pick one with"
				" --host MACHINE-ID", what ? what : ai_cmd, named, host, l);
		else
			ai_warn("%s: no snapshot of host '%s' in the database (hosts: %s)",
				what ? what : ai_cmd, host, l);
		free(l);
		ai_db_hosts_free(h, n);
		exit(named > 1 ? AI_EXIT_USAGE : AI_EXIT_FATAL);
	}
	if (n > 1 && what) {
		l = host_list(h, n, 1);
		ai_warn("%s: the database holds snapshots of %zu hosts (%s): pick one with"
			" --host NAME", what, n, l);
		free(l);
		ai_db_hosts_free(h, n);
		ai_usage_err("%s: --host is needed", what);
	}
	ai_db_hosts_free(h, n);
	ai_db_select_key(NULL);
}

static void row_snap(sqlite3_stmt *st, struct ai_db_snap *s)
{
	const char *b = (const char *)sqlite3_column_text(st, 3);
	const char *p = (const char *)sqlite3_column_text(st, 4);

	s->id = sqlite3_column_int64(st, 0);
	s->taken_at = sqlite3_column_double(st, 1);
	s->status = status_of((const char *)sqlite3_column_text(st, 2));
	snprintf(s->boot_id, sizeof(s->boot_id), "%s", b ? b : "");
	snprintf(s->problem, sizeof(s->problem), "%s", p ? p : "");
	p = (const char *)sqlite3_column_text(st, 5);
	snprintf(s->host, sizeof(s->host), "%s", p ? p : "");
}

#define SNAP_COLS "id, taken_at, status, boot_id, problem, host"

int ai_db_snapshots(sqlite3 *db, struct ai_db_snap **out, size_t *n)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT " SNAP_COLS " FROM snapshot"
				" WHERE (:host IS NULL OR " AI_HOSTKEY " = :host)"
				" ORDER BY taken_at, id");
	size_t cap = 16;

	*n = 0;
	*out = xmalloc(cap * sizeof(**out));
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap *= 2;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		row_snap(st, &(*out)[(*n)++]);
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		ai_db_die(db, "reading the snapshots");
	return 0;
}

int ai_db_snap_info(sqlite3 *db, int64_t id, struct ai_db_snap *out)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT " SNAP_COLS " FROM snapshot WHERE id = ?");
	int found;

	sqlite3_bind_int64(st, 1, id);
	found = sqlite3_step(st) == SQLITE_ROW;
	if (found)
		row_snap(st, out);
	sqlite3_finalize(st);
	return found ? 0 : -1;
}

/*
 * Snapshot spec: "ID", "first", "last", or "@T": the last snapshot taken
 * at or before Unix time T. first, last and @T pick complete snapshots
 * only. Returns the id, or -1.
 */
int64_t ai_db_pick(sqlite3 *db, const char *spec)
{
	sqlite3_stmt *st;
	int64_t id = -1;
	char *e;

	if (!spec || !strcmp(spec, "last")) {
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE status = 'ok' AND"
			  " (:host IS NULL OR " AI_HOSTKEY " = :host)"
			  " ORDER BY taken_at DESC, id DESC LIMIT 1");
	} else if (!strcmp(spec, "first")) {
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE status = 'ok' AND"
			  " (:host IS NULL OR " AI_HOSTKEY " = :host)"
			  " ORDER BY taken_at, id LIMIT 1");
	} else if (spec[0] == '@') {
		double t = strtod(spec + 1, &e);

		if (*e || e == spec + 1)
			return -1;
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE taken_at <= ?1 AND"
			  " status = 'ok' AND (:host IS NULL OR " AI_HOSTKEY " = :host)"
			  " ORDER BY taken_at DESC, id DESC LIMIT 1");
		sqlite3_bind_double(st, 1, t);
	} else {
		long long v = strtoll(spec, &e, 10);

		if (*e || e == spec)
			return -1;
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE id = ?1"
			  " AND (:host IS NULL OR " AI_HOSTKEY " = :host)");
		sqlite3_bind_int64(st, 1, v);
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* ---- the samples of a snapshot ---- */

void ai_db_state_init(struct ai_db_state *st, sqlite3 *db)
{
	memset(st, 0, sizeof(*st));
	st->db = db;
	st->id = -1;
	ai_hmap_init(&st->map, 1024);
}

static void clear_values(struct ai_db_state *st)
{
	size_t i;

	for (i = 0; i < st->cap; i++) {
		st->calls[i] = -1;
		free(st->extra[i]);
		st->extra[i] = NULL;
	}
}

void ai_db_state_free(struct ai_db_state *st)
{
	size_t i;

	if (st->cap)
		clear_values(st);
	free(st->bytes);
	free(st->calls);
	free(st->extra);
	for (i = 0; i < st->nnames; i++)
		if (st->names[i].file) {
			free((char *)st->names[i].file);
			free((char *)st->names[i].module);
			free((char *)st->names[i].func);
		}
	free(st->names);
	ai_hmap_free(&st->map);
	memset(st, 0, sizeof(*st));
	st->id = -1;
}

static void grow(struct ai_db_state *st, int64_t tag)
{
	size_t cap = st->cap ? st->cap : 1024, i;

	if (tag < 0 || (uint64_t)tag > SIZE_MAX / 64)
		ai_die("database %s: a tag id out of range (%lld)", db_name(st->db),
		       (long long)tag);
	if ((size_t)tag < st->cap)
		return;
	while (cap <= (size_t)tag)
		cap *= 2;
	st->bytes = xrealloc(st->bytes, cap * sizeof(*st->bytes));
	st->calls = xrealloc(st->calls, cap * sizeof(*st->calls));
	st->extra = xrealloc(st->extra, cap * sizeof(*st->extra));
	for (i = st->cap; i < cap; i++) {
		st->bytes[i] = 0;
		st->calls[i] = -1;
		st->extra[i] = NULL;
	}
	st->cap = cap;
}

static void set_value(struct ai_db_state *st, int64_t tag, int64_t bytes, int64_t calls,
		      const char *extra)
{
	grow(st, tag);
	st->bytes[tag] = bytes;
	st->calls[tag] = calls;
	free(st->extra[tag]);
	st->extra[tag] = calls >= 0 && extra && *extra ? xstrdup(extra) : NULL;
}

/* the rows of one snapshot over the state: its changes, or all of it */
static void apply(struct ai_db_state *st, int64_t id)
{
	sqlite3_stmt *q = ai_db_prep(st->db, "SELECT tag_id, bytes, calls, extra FROM sample"
				     " WHERE snapshot_id = ?");
	int rc;

	sqlite3_bind_int64(q, 1, id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		set_value(st, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
			  sqlite3_column_int64(q, 2) < 0 ? -1 : sqlite3_column_int64(q, 2),
			  (const char *)sqlite3_column_text(q, 3));
	if (rc != SQLITE_DONE)
		ai_db_die(st->db, "reading samples");
	sqlite3_finalize(q);
}

void ai_db_state_load(struct ai_db_state *st, int64_t id)
{
	sqlite3_stmt *q;
	int64_t *chain = NULL, cur = id, base;
	size_t n = 0, cap = 0;
	int has_base;

	if (st->id == id)
		return;
	q = ai_db_prep(st->db, "SELECT base, depth FROM snapshot WHERE id = ?");
	for (;;) {
		sqlite3_bind_int64(q, 1, cur);
		if (sqlite3_step(q) != SQLITE_ROW) {
			if (sqlite3_errcode(st->db) != SQLITE_DONE)
				ai_db_die(st->db, "reading a snapshot");
			ai_die("database %s: snapshot %lld is missing (the base of snapshot %lld)",
			       db_name(st->db), (long long)cur, (long long)id);
		}
		has_base = sqlite3_column_type(q, 0) != SQLITE_NULL;
		base = sqlite3_column_int64(q, 0);
		if (cur == id)
			st->depth = sqlite3_column_int64(q, 1);
		sqlite3_reset(q);
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			chain = xrealloc(chain, cap * sizeof(*chain));
		}
		chain[n++] = cur;
		/* the next snapshot after the one held: its changes only */
		if (!has_base || (st->id >= 0 && base == st->id))
			break;
		if (n > 100000)
			ai_die("database %s: the bases of snapshot %lld loop", db_name(st->db),
			       (long long)id);
		cur = base;
	}
	sqlite3_finalize(q);
	if (!has_base && st->cap)
		clear_values(st);
	while (n)
		apply(st, chain[--n]);
	free(chain);
	st->id = id;
}

/* the tag table, ids from st->known on (new tags since the last call) */
void ai_db_state_names(struct ai_db_state *st)
{
	sqlite3_stmt *q = ai_db_prep(st->db, "SELECT id, file, line, module, func FROM tag"
				     " WHERE id >= ? ORDER BY id");
	int rc;

	sqlite3_bind_int64(q, 1, st->known);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 0);
		struct ai_tag *t;
		size_t k;

		if (id < 0 || (uint64_t)id > SIZE_MAX / 64)
			continue;
		if ((size_t)id >= st->nnames) {
			size_t cap = st->nnames ? st->nnames : 1024;

			while (cap <= (size_t)id)
				cap *= 2;
			st->names = xrealloc(st->names, cap * sizeof(*st->names));
			memset(st->names + st->nnames, 0, (cap - st->nnames) * sizeof(*st->names));
			st->nnames = cap;
		}
		t = &st->names[id];
		if (t->file)
			continue;
		t->file = col_str(q, 1);
		t->line = sqlite3_column_int64(q, 2);
		t->module = col_str(q, 3);
		t->func = col_str(q, 4);
		t->extra = "";
		/* the hash of keys: slot = id + 1 */
		if (++st->nmap * 2 > st->map.mask) {
			size_t i;

			ai_hmap_free(&st->map);
			ai_hmap_init(&st->map, st->nmap * 2);
			for (i = 0; i < st->nnames; i++) {
				if (!st->names[i].file || &st->names[i] == t)
					continue;
				k = ai_tag_hash(&st->names[i]) & st->map.mask;
				while (st->map.slot[k])
					k = (k + 1) & st->map.mask;
				st->map.slot[k] = i + 1;
			}
		}
		k = ai_tag_hash(t) & st->map.mask;
		while (st->map.slot[k])
			k = (k + 1) & st->map.mask;
		st->map.slot[k] = id + 1;
		if ((size_t)id + 1 > st->known)
			st->known = id + 1;
	}
	if (rc != SQLITE_DONE)
		ai_db_die(st->db, "reading the tags");
	sqlite3_finalize(q);
}

static int64_t find_tag(struct ai_db_state *st, const struct ai_tag *t)
{
	size_t k = ai_tag_hash(t) & st->map.mask;

	while (st->map.slot[k]) {
		const struct ai_tag *x = &st->names[st->map.slot[k] - 1];

		if (ai_tag_same(x, t))
			return st->map.slot[k] - 1;
		k = (k + 1) & st->map.mask;
	}
	return -1;
}

/* the id of tag T, added to the tag table when new */
static int64_t tag_id(struct ai_db_state *st, sqlite3_stmt *ins, const struct ai_tag *t)
{
	int64_t id = find_tag(st, t);

	if (id >= 0)
		return id;
	sqlite3_bind_text(ins, 1, t->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ins, 2, t->line);
	sqlite3_bind_text(ins, 3, t->module, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 4, t->func, -1, SQLITE_STATIC);
	if (sqlite3_step(ins) != SQLITE_DONE) {
		if (disk_full(st->db))
			return -2;
		ai_db_die(st->db, "adding a tag");
	}
	sqlite3_reset(ins);
	ai_db_state_names(st);
	id = find_tag(st, t);
	if (id < 0)
		ai_die("database %s: a tag added is not found", db_name(st->db));
	return id;
}

void ai_db_state_snap(struct ai_db_state *st, struct ai_snap *s, int64_t **ids)
{
	size_t len = 0, cap = 1 << 16, i, j;
	char *buf = xmalloc(cap);
	size_t off[4];

	memset(s, 0, sizeof(*s));
	if (ids)
		*ids = NULL;
	ai_db_state_names(st);
	for (i = 0; i < st->cap; i++) {
		struct ai_tag t = { 0 };
		const char *str[4];

		if (st->calls[i] < 0)
			continue;
		if (i >= st->nnames || !st->names[i].file)
			ai_die("database %s: a sample of tag %zu, which is not in the tag table",
			       db_name(st->db), i);
		str[0] = st->names[i].file;
		str[1] = st->names[i].module;
		str[2] = st->names[i].func;
		str[3] = st->extra[i] ? st->extra[i] : "";
		for (j = 0; j < 4; j++) {
			size_t n = strlen(str[j]) + 1;

			while (len + n > cap) {
				cap *= 2;
				buf = xrealloc(buf, cap);
			}
			memcpy(buf + len, str[j], n);
			off[j] = len;
			len += n;
		}
		t.file = (const char *)(uintptr_t)off[0];
		t.module = (const char *)(uintptr_t)off[1];
		t.func = (const char *)(uintptr_t)off[2];
		t.extra = (const char *)(uintptr_t)off[3];
		t.line = st->names[i].line;
		t.bytes = st->bytes[i];
		t.calls = st->calls[i];
		t.nlines = 1;
		/* ties sort in the order the tags were first recorded */
		t.lineno = s->ntags + 1 > UINT32_MAX ? UINT32_MAX : s->ntags + 1;
		if (t.bytes < 0)
			t.flags |= AI_F_NEGATIVE;
		if (s->ntags == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 256;
			s->tags = xrealloc(s->tags, s->cap * sizeof(*s->tags));
			if (ids)
				*ids = xrealloc(*ids, s->cap * sizeof(**ids));
		}
		if (ids)
			(*ids)[s->ntags] = i;
		s->tags[s->ntags++] = t;
	}
	for (i = 0; i < s->ntags; i++) {
		struct ai_tag *t = &s->tags[i];

		t->file = buf + (uintptr_t)t->file;
		t->module = buf + (uintptr_t)t->module;
		t->func = buf + (uintptr_t)t->func;
		t->extra = buf + (uintptr_t)t->extra;
		if (strstr(t->extra, "accurate:no"))
			t->flags |= AI_F_INACCURATE;
	}
	s->buf = buf;
	s->len = len;
	s->name = "database";
	s->has_header = 1;
	strcpy(s->version, "1.0");
}

int ai_db_load_tags(sqlite3 *db, int64_t snap_id, struct ai_snap *s, int64_t **tag_ids)
{
	struct ai_db_state st;

	ai_db_state_init(&st, db);
	ai_db_state_load(&st, snap_id);
	ai_db_state_snap(&st, s, tag_ids);
	ai_db_state_free(&st);
	return 0;
}

/* ---- writing ---- */

int ai_db_has(sqlite3 *db, const char *key, double when, const char *source)
{
	sqlite3_stmt *q = ai_db_prep(db, "SELECT 1 FROM snapshot WHERE " AI_HOSTKEY " = ?1"
				     " AND taken_at = ?2 AND source = ?3");
	int found;

	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_double(q, 2, when);
	sqlite3_bind_text(q, 3, source, -1, SQLITE_STATIC);
	found = sqlite3_step(q) == SQLITE_ROW;
	sqlite3_finalize(q);
	return found;
}

static void add_problem(char *p, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_problem(char *p, size_t n, const char *fmt, ...)
{
	size_t l = strlen(p);
	va_list ap;

	if (l + 3 >= n)
		return;
	if (l) {
		strcpy(p + l, "; ");
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(p + l, n - l, fmt, ap);
	va_end(ap);
}

/* a snapshot copied by merge: its status, reason and counts as they were */
struct copied {
	int status;
	const char *problem;
	int64_t ntags, total_bytes, total_calls;
};

/* S has a tag of module MOD */
static int module_in(const struct ai_snap *s, const char *mod)
{
	size_t i;

	for (i = 0; i < s->ntags; i++)
		if (!strcmp(s->tags[i].module, mod))
			return 1;
	return 0;
}

/* record S, in the transaction open; -2: the disk is full (roll it back) */
static int64_t record_in(struct ai_db_state *st, const struct ai_snap *s,
			 const struct ai_db_meta *m, const struct copied *cp,
			 int *status, char *problem, size_t np)
{
	sqlite3 *db = st->db;
	const char *key = *m->id.machine_id ? m->id.machine_id : m->id.host;
	sqlite3_stmt *q, *ins = NULL, *smp = NULL;
	int64_t base = -1, base_depth = 0, sid = -2, total = 0, *ids;
	uint64_t calls = 0;
	unsigned char *seen;
	int base_status = AI_SNAP_REFUSED, key_frame;
	char base_boot[64] = "";
	size_t i, missing = 0;

	problem[0] = '\0';
	/*
	 * The snapshots recorded before machine ids were (allocinfo 1) are
	 * this machine's when its node name matches and no machine has
	 * claimed that name yet.
	 */
	if (*m->id.machine_id && !cp && !st->claimed) {
		/* once a run: the scan is of the whole table */
		st->claimed = 1;
		q = ai_db_prep(db, "UPDATE snapshot SET machine_id = ?1 WHERE machine_id = ''"
			       " AND host = ?2 AND NOT EXISTS (SELECT 1 FROM snapshot"
			       " WHERE host = ?2 AND machine_id <> '')");
		sqlite3_bind_text(q, 1, m->id.machine_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, m->id.host, -1, SQLITE_STATIC);
		if (sqlite3_step(q) != SQLITE_DONE) {
			if (disk_full(db)) {
				sqlite3_finalize(q);
				return -2;
			}
			ai_db_die(db, "claiming the snapshots of an older allocinfo");
		}
		sqlite3_finalize(q);
	}
	/* the base: the host's last snapshot with samples taken before this one */
	q = ai_db_prep(db, "SELECT id, depth, status, boot_id FROM snapshot WHERE "
		       AI_HOSTKEY " = ?1 AND status <> 'refused' AND taken_at <= ?2"
		       " ORDER BY taken_at DESC, id DESC LIMIT 1");
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_double(q, 2, m->when);
	if (sqlite3_step(q) == SQLITE_ROW) {
		const char *b = (const char *)sqlite3_column_text(q, 3);

		base = sqlite3_column_int64(q, 0);
		base_depth = sqlite3_column_int64(q, 1);
		base_status = status_of((const char *)sqlite3_column_text(q, 2));
		snprintf(base_boot, sizeof(base_boot), "%s", b ? b : "");
	}
	sqlite3_finalize(q);
	if (base >= 0)
		ai_db_state_load(st, base);
	else if (st->cap)
		clear_values(st);
	ai_db_state_names(st);

	/* the tags known; the new ones are added once the capture is not refused */
	ids = xmalloc((s->ntags + 1) * sizeof(*ids));
	for (i = 0; i < s->ntags; i++) {
		ids[i] = find_tag(st, &s->tags[i]);
		if (ids[i] >= 0)
			grow(st, ids[i]);
	}
	seen = xcalloc(st->cap, 1);
	for (i = 0; i < s->ntags; i++)
		if (ids[i] >= 0)
			seen[ids[i]] = 1;

	/* complete? */
	if (!s->ntags) {
		add_problem(problem, np, "no tags (an empty, header-only or unreadable capture)");
	} else {
		if (s->skipped)
			add_problem(problem, np, "%zu malformed line(s)", s->skipped);
		if (s->cut)
			add_problem(problem, np, "it ends early");
		if (!s->has_header)
			add_problem(problem, np, "no header line");
		else if (s->bad_header)
			add_problem(problem, np, "an unreadable header");
	}
	/*
	 * The kernel lists every tag of its own code, allocating or not,
	 * for as long as it runs, and every tag of a module for as long as
	 * the module is loaded: a tag of the previous snapshot of the same
	 * boot that is missing now, of the kernel or of a module that still
	 * has tags, was cut off. A module with none of its tags left was
	 * unloaded.
	 */
	if (s->ntags && base >= 0 && base_status == AI_SNAP_OK && *base_boot &&
	    !strcmp(base_boot, m->id.boot_id)) {
		size_t mod_missing = 0;
		const char *last = NULL;
		int loaded = 0;

		for (i = 0; i < st->cap; i++) {
			const char *mod;

			if (st->calls[i] < 0 || seen[i] || i >= st->nnames || !st->names[i].file)
				continue;
			mod = st->names[i].module;
			if (!*mod) {
				missing++;
				continue;
			}
			/* the tags of a module are mostly next to each other */
			if (!last || strcmp(last, mod))
				loaded = module_in(s, mod);
			last = mod;
			mod_missing += loaded;
		}
		if (missing)
			add_problem(problem, np, "%zu tag(s) of the kernel that snapshot %lld of"
				    " the same boot had are missing (cut short?)", missing,
				    (long long)base);
		if (mod_missing)
			add_problem(problem, np, "%zu tag(s) of modules still loaded that snapshot"
				    " %lld of the same boot had are missing (cut short?)", mod_missing,
				    (long long)base);
	}
	*status = !*problem ? AI_SNAP_OK : m->keep_incomplete ? AI_SNAP_INCOMPLETE :
		  AI_SNAP_REFUSED;
	if (cp) {
		*status = cp->status;
		snprintf(problem, np, "%s", cp->problem ? cp->problem : "");
	}
	key_frame = base < 0 || base_depth + 1 >= AI_DB_KEY_EVERY;
	if (*status != AI_SNAP_REFUSED) {
		ins = ai_db_prep(db, "INSERT INTO tag (file, line, module, func) VALUES (?, ?, ?, ?)"
				 " ON CONFLICT DO NOTHING");
		for (i = 0; i < s->ntags; i++)
			if (ids[i] < 0) {
				ids[i] = tag_id(st, ins, &s->tags[i]);
				if (ids[i] < 0)
					goto full;
				grow(st, ids[i]);
			}
		sqlite3_finalize(ins);
		ins = NULL;
		seen = xrealloc(seen, st->cap);
		memset(seen, 0, st->cap);
		for (i = 0; i < s->ntags; i++)
			seen[ids[i]] = 1;
	}

	for (i = 0; i < s->ntags; i++) {
		if (__builtin_add_overflow(total, s->tags[i].bytes, &total))
			total = s->tags[i].bytes < 0 ? INT64_MIN : INT64_MAX;
		if (__builtin_add_overflow(calls, s->tags[i].calls, &calls))
			calls = UINT64_MAX;
	}
	q = ai_db_prep(db, "INSERT INTO snapshot (taken_at, source, host, kernel, version,"
		       " label, ntags, total_bytes, total_calls, skipped_lines, machine_id,"
		       " boot_id, status, problem, base, depth)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_bind_double(q, 1, m->when);
	sqlite3_bind_text(q, 2, m->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, m->id.host, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 4, m->id.kernel, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 5, s->version, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 6, m->label ? m->label : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 7, cp ? cp->ntags : (int64_t)s->ntags);
	sqlite3_bind_int64(q, 8, cp ? cp->total_bytes : total);
	sqlite3_bind_int64(q, 9, cp ? cp->total_calls : calls > INT64_MAX ? INT64_MAX :
			   (int64_t)calls);
	sqlite3_bind_int64(q, 10, s->skipped);
	sqlite3_bind_text(q, 11, m->id.machine_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 12, m->id.boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 13, ai_snap_status_name(*status), -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 14, problem, -1, SQLITE_STATIC);
	if (key_frame || *status == AI_SNAP_REFUSED)
		sqlite3_bind_null(q, 15);
	else
		sqlite3_bind_int64(q, 15, base);
	sqlite3_bind_int64(q, 16, key_frame || *status == AI_SNAP_REFUSED ? 0 : base_depth + 1);
	if (sqlite3_step(q) != SQLITE_DONE) {
		if (disk_full(db)) {
			sqlite3_finalize(q);
			goto full;
		}
		ai_db_die(db, "adding a snapshot");
	}
	sqlite3_finalize(q);
	sid = sqlite3_last_insert_rowid(db);

	if (*status != AI_SNAP_REFUSED) {
		smp = ai_db_prep(db, "INSERT INTO sample (snapshot_id, tag_id, bytes, calls, extra)"
				 " VALUES (?, ?, ?, ?, ?)");
		sqlite3_bind_int64(smp, 1, sid);
		/* the tags that went away since the base: calls -1 */
		for (i = 0; !key_frame && i < st->cap; i++) {
			if (st->calls[i] < 0 || seen[i])
				continue;
			sqlite3_bind_int64(smp, 2, i);
			sqlite3_bind_int64(smp, 3, 0);
			sqlite3_bind_int64(smp, 4, -1);
			sqlite3_bind_text(smp, 5, "", -1, SQLITE_STATIC);
			if (sqlite3_step(smp) != SQLITE_DONE) {
				if (disk_full(db)) {
					sid = -2;
					goto full;
				}
				ai_db_die(db, "adding a sample");
			}
			sqlite3_reset(smp);
			set_value(st, i, 0, -1, NULL);
		}
		if (key_frame && st->cap)
			clear_values(st);
		for (i = 0; i < s->ntags; i++) {
			const struct ai_tag *t = &s->tags[i];
			int64_t c = t->calls > INT64_MAX ? INT64_MAX : (int64_t)t->calls;
			const char *ox = st->extra[ids[i]] ? st->extra[ids[i]] : "";

			/* unchanged since the base: nothing to store */
			if (!key_frame && st->calls[ids[i]] == c && st->bytes[ids[i]] == t->bytes &&
			    !strcmp(ox, t->extra))
				continue;
			sqlite3_bind_int64(smp, 2, ids[i]);
			sqlite3_bind_int64(smp, 3, t->bytes);
			sqlite3_bind_int64(smp, 4, c);
			sqlite3_bind_text(smp, 5, t->extra, -1, SQLITE_STATIC);
			if (sqlite3_step(smp) != SQLITE_DONE) {
				if (disk_full(db)) {
					sid = -2;
					goto full;
				}
				ai_db_die(db, "adding a sample");
			}
			sqlite3_reset(smp);
			set_value(st, ids[i], t->bytes, c, t->extra);
		}
		sqlite3_finalize(smp);
		smp = NULL;
		st->id = sid;
		st->depth = key_frame ? 0 : base_depth + 1;
	}
full:
	sqlite3_finalize(ins);
	sqlite3_finalize(smp);
	free(seen);
	free(ids);
	return sid;
}

int64_t ai_db_record(struct ai_db_state *st, const struct ai_snap *s,
		     const struct ai_db_meta *m, int *status, char *problem, size_t np)
{
	int64_t sid;

	problem[0] = '\0';
	if (ai_db_begin(st->db) < 0)
		return -1;
	sid = record_in(st, s, m, NULL, status, problem, np);
	if (sid >= 0 && exec(st->db, "COMMIT") != SQLITE_OK) {
		if (!disk_full(st->db))
			ai_db_die(st->db, "COMMIT");
		sid = -2;
	}
	if (sid == -2) {
		/*
		 * Nothing of it is kept: the transaction goes, and so does what
		 * the state learnt in it (the base's values, new tag ids).
		 */
		sqlite3 *db = st->db;

		exec(db, "ROLLBACK");
		ai_db_state_free(st);
		ai_db_state_init(st, db);
	}
	return sid;
}

static int64_t exec_changes(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		ai_db_die(db, what);
	sqlite3_finalize(st);
	return sqlite3_changes(db);
}

/* snapshot ID, which holds its changes since its base, made to hold all its samples */
static void materialize(struct ai_db_state *st, int64_t id)
{
	sqlite3 *db = st->db;
	sqlite3_stmt *q;
	size_t i;

	ai_db_state_load(st, id);
	q = ai_db_prep(db, "DELETE FROM sample WHERE snapshot_id = ?");
	sqlite3_bind_int64(q, 1, id);
	exec_changes(db, q, "rewriting a snapshot");
	q = ai_db_prep(db, "INSERT INTO sample (snapshot_id, tag_id, bytes, calls, extra)"
		       " VALUES (?, ?, ?, ?, ?)");
	sqlite3_bind_int64(q, 1, id);
	for (i = 0; i < st->cap; i++) {
		if (st->calls[i] < 0)
			continue;
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, st->bytes[i]);
		sqlite3_bind_int64(q, 4, st->calls[i]);
		sqlite3_bind_text(q, 5, st->extra[i] ? st->extra[i] : "", -1, SQLITE_STATIC);
		if (sqlite3_step(q) != SQLITE_DONE)
			ai_db_die(db, "rewriting a snapshot");
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	q = ai_db_prep(db, "UPDATE snapshot SET base = NULL, depth = 0 WHERE id = ?");
	sqlite3_bind_int64(q, 1, id);
	exec_changes(db, q, "rewriting a snapshot");
	st->depth = 0;
}

/*
 * Remove the snapshots taken before BEFORE or after AFTER (a time that
 * cannot be: allocinfo 1 took any --time), of the host of ai_db_host()
 * or all, their samples, and the tags no sample uses any more. A kept
 * snapshot whose base goes is rewritten with all its samples first.
 */
void ai_db_prune(sqlite3 *db, double before, double after, int64_t *nsnap,
		 int64_t *ntag, int64_t *left)
{
	struct ai_db_state state;
	sqlite3_stmt *st;
	int64_t *keep = NULL;
	size_t nkeep = 0, i;

	/*
	 * No foreign key checks: the samples go before their snapshots, and
	 * a tag goes when no sample uses it; checked, each tag removed is a
	 * scan of every sample (668 s for 7,000 tags of 10,000 snapshots).
	 */
	exec(db, "PRAGMA foreign_keys = OFF");
	exec(db, "PRAGMA cache_size = -65536");
	if (ai_db_begin(db) < 0)
		ai_die("database %s is locked by another process (waited %.0f s;"
		       " --wait S waits longer)", db_name(db), ai_db_wait);
	st = ai_db_prep(db, "SELECT id FROM snapshot WHERE base IN (SELECT id FROM snapshot"
			" WHERE (taken_at < ?1 OR taken_at > ?2) AND (:host IS NULL OR " AI_HOSTKEY " = :host))"
			" AND NOT ((taken_at < ?1 OR taken_at > ?2) AND (:host IS NULL OR " AI_HOSTKEY " = :host))");
	sqlite3_bind_double(st, 1, before);
	sqlite3_bind_double(st, 2, after);
	while (sqlite3_step(st) == SQLITE_ROW) {
		keep = xrealloc(keep, (nkeep + 1) * sizeof(*keep));
		keep[nkeep++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	ai_db_state_init(&state, db);
	for (i = 0; i < nkeep; i++)
		materialize(&state, keep[i]);
	ai_db_state_free(&state);
	free(keep);
	st = ai_db_prep(db, "DELETE FROM sample WHERE snapshot_id IN (SELECT id FROM snapshot"
			" WHERE (taken_at < ?1 OR taken_at > ?2) AND (:host IS NULL OR " AI_HOSTKEY " = :host))");
	sqlite3_bind_double(st, 1, before);
	sqlite3_bind_double(st, 2, after);
	exec_changes(db, st, "removing samples");
	st = ai_db_prep(db, "DELETE FROM snapshot WHERE (taken_at < ?1 OR taken_at > ?2)"
			" AND (:host IS NULL OR " AI_HOSTKEY " = :host)");
	sqlite3_bind_double(st, 1, before);
	sqlite3_bind_double(st, 2, after);
	*nsnap = exec_changes(db, st, "removing snapshots");
	/* one scan of the samples left, whatever the number of tags */
	st = ai_db_prep(db, "DELETE FROM tag WHERE id NOT IN (SELECT tag_id FROM sample)");
	*ntag = exec_changes(db, st, "removing unused tags");
	ai_db_commit(db);
	exec(db, "PRAGMA foreign_keys = ON");
	st = ai_db_prep(db, "SELECT count(*) FROM snapshot WHERE (:host IS NULL OR "
			AI_HOSTKEY " = :host)");
	*left = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	/* the log back to nothing, so the file shrinks on VACUUM */
	exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/*
 * Copy the snapshots of the database at PATH into DB, tags matched by
 * their key, each rebuilt from its base there and stored as changes
 * against its base here. A snapshot DB already holds (same host, time
 * and source) is skipped. One transaction: a failure leaves DB as it
 * was. A source that cannot be read is reported in err (-1).
 */
int ai_db_merge(sqlite3 *db, const char *path, int64_t *added, int64_t *skipped,
		char *err, size_t n)
{
	struct ai_db_state from, to;
	sqlite3_stmt *q;
	sqlite3 *src;
	int rc;

	*added = *skipped = 0;
	if (same_file(path, sqlite3_db_filename(db, "main"))) {
		snprintf(err, n, "%s is the database merged into: nothing to copy", path);
		return -1;
	}
	src = ai_db_try_open(path, AI_DB_READ, err, n);
	if (!src)
		return -1;
	/* a damaged file (cut short, overwritten) is found before anything is copied */
	q = ai_db_prep(src, "PRAGMA quick_check(1)");
	rc = sqlite3_step(q);
	if (rc != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(q, 0), "ok")) {
		snprintf(err, n, "database %s is damaged (%s): restore a copy", path,
			 rc == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) :
			 sqlite3_errmsg(src));
		sqlite3_finalize(q);
		sqlite3_close(src);
		return -1;
	}
	sqlite3_finalize(q);
	ai_db_state_init(&from, src);
	ai_db_state_init(&to, db);
	q = ai_db_prep(src, "SELECT id, taken_at, source, host, kernel, version, label,"
		       " machine_id, boot_id, status, problem, skipped_lines, ntags,"
		       " total_bytes, total_calls FROM snapshot ORDER BY " AI_HOSTKEY ", taken_at, id");
	if (ai_db_begin(db) < 0)
		ai_die("database %s is locked by another process (waited %.0f s;"
		       " --wait S waits longer)", db_name(db), ai_db_wait);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct ai_db_meta m = { 0 };
		struct copied cp = { 0 };
		struct ai_snap s;
		int status, want = status_of((const char *)sqlite3_column_text(q, 9));
		char problem[512];
		const char *x;

		m.when = sqlite3_column_double(q, 1);
		m.source = (const char *)sqlite3_column_text(q, 2);
		m.label = (const char *)sqlite3_column_text(q, 6);
#define COPY(field, col) \
		x = (const char *)sqlite3_column_text(q, col); \
		snprintf(m.id.field, sizeof(m.id.field), "%s", x ? x : "")
		COPY(host, 3);
		COPY(kernel, 4);
		COPY(machine_id, 7);
		COPY(boot_id, 8);
#undef COPY
		if (ai_db_has(db, *m.id.machine_id ? m.id.machine_id : m.id.host, m.when,
			      m.source ? m.source : "")) {
			(*skipped)++;
			continue;
		}
		if (want == AI_SNAP_REFUSED) {
			memset(&s, 0, sizeof(s));
			s.ntags = 0;
		} else {
			ai_db_state_load(&from, sqlite3_column_int64(q, 0));
			ai_db_state_snap(&from, &s, NULL);
		}
		x = (const char *)sqlite3_column_text(q, 5);
		snprintf(s.version, sizeof(s.version), "%s", x ? x : "1.0");
		s.skipped = sqlite3_column_int64(q, 11);
		/* the same status, reason and counts as in the source */
		cp.status = want;
		cp.problem = (const char *)sqlite3_column_text(q, 10);
		cp.ntags = sqlite3_column_int64(q, 12);
		cp.total_bytes = sqlite3_column_int64(q, 13);
		cp.total_calls = sqlite3_column_int64(q, 14);
		if (record_in(&to, &s, &m, &cp, &status, problem, sizeof(problem)) == -2)
			ai_db_die(db, "copying a snapshot");
		ai_snap_free(&s);
		(*added)++;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, n, "database %s: reading its snapshots: %s%s", path,
			 sqlite3_errmsg(src), hint_of(src, sqlite3_extended_errcode(src)));
		exec(db, "ROLLBACK");
		*added = 0;
	} else {
		ai_db_commit(db);
	}
	sqlite3_finalize(q);
	ai_db_state_free(&from);
	ai_db_state_free(&to);
	sqlite3_close(src);
	return rc == SQLITE_DONE ? 0 : -1;
}
