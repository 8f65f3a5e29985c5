// SPDX-License-Identifier: GPL-2.0
/*
 * The store: snapshots of /proc/allocinfo in a SQLite database, shared
 * by record, report and plot. The schema is described in README.md.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"
#include "store.h"

static const char schema[] =
"CREATE TABLE IF NOT EXISTS snapshot (\n"
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
"	skipped_lines INTEGER NOT NULL\n"
");\n"
"CREATE TABLE IF NOT EXISTS tag (\n"
"	id INTEGER PRIMARY KEY,\n"
"	file TEXT NOT NULL,\n"
"	line INTEGER NOT NULL,\n"
"	module TEXT NOT NULL,\n"
"	func TEXT NOT NULL,\n"
"	UNIQUE (file, line, module, func)\n"
");\n"
"CREATE TABLE IF NOT EXISTS sample (\n"
"	snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,\n"
"	tag_id INTEGER NOT NULL REFERENCES tag(id),\n"
"	bytes INTEGER NOT NULL,\n"
"	calls INTEGER NOT NULL,\n"
"	extra TEXT NOT NULL DEFAULT '',\n"
"	PRIMARY KEY (snapshot_id, tag_id)\n"
") WITHOUT ROWID;\n"
"CREATE INDEX IF NOT EXISTS sample_by_tag ON sample (tag_id, snapshot_id);\n"
"CREATE INDEX IF NOT EXISTS snapshot_by_time ON snapshot (taken_at);\n";

void ai_db_die(sqlite3 *db, const char *what)
{
	ai_die("database: %s: %s", what, db ? sqlite3_errmsg(db) : "?");
}

/*
 * mode: AI_DB_READ, AI_DB_WRITE (an existing database: prune) or
 * AI_DB_CREATE (created with its schema when missing: record, merge).
 */
sqlite3 *ai_db_open(const char *path, enum ai_db_mode mode)
{
	int create = mode != AI_DB_READ;
	sqlite3 *db;
	sqlite3_stmt *st;
	int v;

	if (!path)
		ai_usage_err("a database is needed: -d FILE");
	if (mode != AI_DB_CREATE && access(path, F_OK))
		ai_die("%s: no such database (allocinfo record -d %s makes one)", path, path);
	if (sqlite3_open_v2(path, &db, mode == AI_DB_CREATE ?
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
			    mode == AI_DB_WRITE ? SQLITE_OPEN_READWRITE :
			    SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		ai_die("cannot open database %s: %s", path, sqlite3_errmsg(db));
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ||
	    sqlite3_step(st) != SQLITE_ROW)
		ai_die("%s is not a SQLite database: %s", path, sqlite3_errmsg(db));
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v > AI_DB_SCHEMA_VERSION)
		ai_die("%s has schema version %d; this tool knows %d", path, v,
		       AI_DB_SCHEMA_VERSION);
	if (mode == AI_DB_CREATE && v == 0) {
		char sql[64];

		if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK)
			ai_db_die(db, "creating the schema");
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 AI_DB_SCHEMA_VERSION);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			ai_db_die(db, "setting the schema version");
	} else if (v == 0) {
		ai_die("%s holds no allocinfo snapshots (run 'allocinfo record' first)",
		       path);
	}
	/*
	 * WAL: report and plot read while record writes, and a snapshot is
	 * one append to the log instead of a rewritten journal. The mode is
	 * kept in the file; NORMAL sync is safe with WAL (a crash may lose
	 * the last snapshot, never the database).
	 */
	if (create) {
		if (sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK)
			ai_db_die(db, "switching to WAL mode");
		sqlite3_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	return db;
}

/* report --host, plot --host: the host whose snapshots are read; NULL: all */
static const char *db_host;

/* A statement; a :host parameter in it is bound to the host picked. */
sqlite3_stmt *ai_db_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int i;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		ai_db_die(db, sql);
	i = sqlite3_bind_parameter_index(st, ":host");
	if (i && db_host)
		sqlite3_bind_text(st, i, db_host, -1, SQLITE_STATIC);
	return st;
}

/* the hosts of the database, "a, b, c", and their number */
static char *host_list(sqlite3 *db, int *n)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT DISTINCT host FROM snapshot ORDER BY host");
	size_t len = 0;
	char *l = xstrdup("");

	*n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(st, 0);

		h = h ? h : "";
		l = xrealloc(l, len + strlen(h) + 3);
		len += sprintf(l + len, "%s%s", *n ? ", " : "", h);
		(*n)++;
	}
	sqlite3_finalize(st);
	return l;
}

/*
 * Read the snapshots of HOST only. Without a host, a database of one
 * host is read whole; series of several hosts cannot be mixed, so a
 * database of several hosts needs one (WHAT: the command, for the
 * message). HOST with no snapshot is an error naming the hosts there are.
 */
void ai_db_host(sqlite3 *db, const char *host, const char *what)
{
	int n;
	char *l = host_list(db, &n);

	if (host) {
		sqlite3_stmt *st = ai_db_prep(db, "SELECT 1 FROM snapshot WHERE host = ? LIMIT 1");
		int found;

		sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
		found = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (!found) {
			ai_warn("%s: no snapshot of host '%s' in the database (hosts: %s)",
				what, host, l);
			free(l);
			exit(AI_EXIT_FATAL);
		}
	} else if (n > 1 && what) {
		ai_warn("%s: the database holds snapshots of %d hosts (%s): pick one with --host NAME",
			what, n, l);
		free(l);
		ai_usage_err("%s: --host is needed", what);
	}
	free(l);
	db_host = host;
}

static int64_t tag_id(sqlite3 *db, sqlite3_stmt *ins, sqlite3_stmt *sel,
		      const struct ai_tag *t)
{
	int64_t id;

	sqlite3_bind_text(ins, 1, t->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ins, 2, t->line);
	sqlite3_bind_text(ins, 3, t->module, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 4, t->func, -1, SQLITE_STATIC);
	if (sqlite3_step(ins) != SQLITE_DONE)
		ai_db_die(db, "adding a tag");
	sqlite3_reset(ins);
	if (sqlite3_changes(db))
		return sqlite3_last_insert_rowid(db);
	sqlite3_bind_text(sel, 1, t->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(sel, 2, t->line);
	sqlite3_bind_text(sel, 3, t->module, -1, SQLITE_STATIC);
	sqlite3_bind_text(sel, 4, t->func, -1, SQLITE_STATIC);
	if (sqlite3_step(sel) != SQLITE_ROW)
		ai_db_die(db, "finding a tag");
	id = sqlite3_column_int64(sel, 0);
	sqlite3_reset(sel);
	return id;
}

int64_t ai_db_record(sqlite3 *db, const struct ai_snap *s, double when,
			  const char *label, const char *host)
{
	sqlite3_stmt *ins, *sel, *smp, *snp;
	struct utsname u;
	int64_t sid, total = 0;
	uint64_t calls = 0;
	size_t i;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "BEGIN");
	for (i = 0; i < s->ntags; i++) {
		if (__builtin_add_overflow(total, s->tags[i].bytes, &total))
			total = s->tags[i].bytes < 0 ? INT64_MIN : INT64_MAX;
		if (__builtin_add_overflow(calls, s->tags[i].calls, &calls))
			calls = UINT64_MAX;
	}
	snp = ai_db_prep(db, "INSERT INTO snapshot (taken_at, source, host, kernel, version,"
		   " label, ntags, total_bytes, total_calls, skipped_lines)"
		   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_bind_double(snp, 1, when);
	sqlite3_bind_text(snp, 2, s->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(snp, 3, host ? host : u.nodename, -1, SQLITE_STATIC);
	sqlite3_bind_text(snp, 4, u.release, -1, SQLITE_STATIC);
	sqlite3_bind_text(snp, 5, s->version, -1, SQLITE_STATIC);
	sqlite3_bind_text(snp, 6, label ? label : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(snp, 7, s->ntags);
	sqlite3_bind_int64(snp, 8, total);
	sqlite3_bind_int64(snp, 9, calls > INT64_MAX ? INT64_MAX : (int64_t)calls);
	sqlite3_bind_int64(snp, 10, s->skipped);
	if (sqlite3_step(snp) != SQLITE_DONE)
		ai_db_die(db, "adding a snapshot");
	sqlite3_finalize(snp);
	sid = sqlite3_last_insert_rowid(db);

	ins = ai_db_prep(db, "INSERT INTO tag (file, line, module, func) VALUES (?, ?, ?, ?)"
		   " ON CONFLICT DO NOTHING");
	sel = ai_db_prep(db, "SELECT id FROM tag WHERE file = ? AND line = ? AND module = ?"
		   " AND func = ?");
	smp = ai_db_prep(db, "INSERT INTO sample (snapshot_id, tag_id, bytes, calls, extra)"
		   " VALUES (?, ?, ?, ?, ?)");
	for (i = 0; i < s->ntags; i++) {
		const struct ai_tag *t = &s->tags[i];

		sqlite3_bind_int64(smp, 1, sid);
		sqlite3_bind_int64(smp, 2, tag_id(db, ins, sel, t));
		sqlite3_bind_int64(smp, 3, t->bytes);
		sqlite3_bind_int64(smp, 4, t->calls > INT64_MAX ? INT64_MAX :
				   (int64_t)t->calls);
		sqlite3_bind_text(smp, 5, t->extra, -1, SQLITE_STATIC);
		if (sqlite3_step(smp) != SQLITE_DONE)
			ai_db_die(db, "adding a sample");
		sqlite3_reset(smp);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	sqlite3_finalize(smp);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "COMMIT");
	return sid;
}

int ai_db_snapshots(sqlite3 *db, struct ai_db_snap **out, size_t *n)
{
	sqlite3_stmt *st = ai_db_prep(db, "SELECT id, taken_at FROM snapshot"
				" WHERE (:host IS NULL OR host = :host)"
				" ORDER BY taken_at, id");
	size_t cap = 16;

	*n = 0;
	*out = xmalloc(cap * sizeof(**out));
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap *= 2;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[*n].id = sqlite3_column_int64(st, 0);
		(*out)[*n].taken_at = sqlite3_column_double(st, 1);
		(*n)++;
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * Snapshot spec: "ID", "first", "last", or "@T": the last snapshot taken
 * at or before Unix time T. Returns the id, or -1.
 */
int64_t ai_db_pick(sqlite3 *db, const char *spec)
{
	sqlite3_stmt *st;
	int64_t id = -1;
	char *e;

	if (!spec || !strcmp(spec, "last")) {
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE (:host IS NULL OR host = :host)"
			  " ORDER BY taken_at DESC, id DESC LIMIT 1");
	} else if (!strcmp(spec, "first")) {
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE (:host IS NULL OR host = :host)"
			  " ORDER BY taken_at, id LIMIT 1");
	} else if (spec[0] == '@') {
		double t = strtod(spec + 1, &e);

		if (*e || e == spec + 1)
			return -1;
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE taken_at <= ?1"
			  " AND (:host IS NULL OR host = :host)"
			  " ORDER BY taken_at DESC, id DESC LIMIT 1");
		sqlite3_bind_double(st, 1, t);
	} else {
		long long v = strtoll(spec, &e, 10);

		if (*e || e == spec)
			return -1;
		st = ai_db_prep(db, "SELECT id FROM snapshot WHERE id = ?1"
			  " AND (:host IS NULL OR host = :host)");
		sqlite3_bind_int64(st, 1, v);
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* The tags of one snapshot as a struct ai_snap; strings in s->buf. */
int ai_db_load_tags(sqlite3 *db, int64_t snap_id, struct ai_snap *s,
		    int64_t **tag_ids)
{
	sqlite3_stmt *st;
	size_t len = 0, cap = 1 << 16, i;
	char *buf = xmalloc(cap);
	size_t off[4];

	memset(s, 0, sizeof(*s));
	st = ai_db_prep(db, "SELECT t.file, t.line, t.module, t.func, s.extra, s.bytes,"
		  " s.calls, t.id FROM sample s JOIN tag t ON t.id = s.tag_id"
		  " WHERE s.snapshot_id = ? ORDER BY t.id");
	sqlite3_bind_int64(st, 1, snap_id);
	if (tag_ids)
		*tag_ids = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct ai_tag t = { 0 };
		static const int col[4] = { 0, 2, 3, 4 };
		int j;

		for (j = 0; j < 4; j++) {
			const char *v = (const char *)sqlite3_column_text(st, col[j]);
			size_t n = v ? strlen(v) + 1 : 1;

			while (len + n > cap) {
				cap *= 2;
				buf = xrealloc(buf, cap);
			}
			memcpy(buf + len, v ? v : "", n);
			off[j] = len;
			len += n;
		}
		t.file = (const char *)(uintptr_t)off[0];
		t.module = (const char *)(uintptr_t)off[1];
		t.func = (const char *)(uintptr_t)off[2];
		t.extra = (const char *)(uintptr_t)off[3];
		t.line = sqlite3_column_int64(st, 1);
		t.bytes = sqlite3_column_int64(st, 5);
		t.calls = sqlite3_column_int64(st, 6);
		t.nlines = 1;
		/* ties sort in the order the tags were first recorded */
		t.lineno = s->ntags + 1 > UINT32_MAX ? UINT32_MAX : s->ntags + 1;
		if (t.bytes < 0)
			t.flags |= AI_F_NEGATIVE;
		if (s->ntags == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 256;
			s->tags = xrealloc(s->tags, s->cap * sizeof(*s->tags));
			if (tag_ids)
				*tag_ids = xrealloc(*tag_ids, s->cap * sizeof(**tag_ids));
		}
		if (tag_ids)
			(*tag_ids)[s->ntags] = sqlite3_column_int64(st, 7);
		s->tags[s->ntags++] = t;
	}
	sqlite3_finalize(st);
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
	strcpy(s->version, "1.0");
	return 0;
}


static int64_t exec_changes(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		ai_db_die(db, what);
	sqlite3_finalize(st);
	return sqlite3_changes(db);
}

/*
 * Remove the snapshots taken before BEFORE (of the host of ai_db_host(),
 * or all), their samples, and the tags no sample uses any more.
 */
void ai_db_prune(sqlite3 *db, double before, int64_t *nsnap, int64_t *ntag,
		 int64_t *left)
{
	sqlite3_stmt *st;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "BEGIN");
	st = ai_db_prep(db, "DELETE FROM sample WHERE snapshot_id IN (SELECT id FROM snapshot"
			" WHERE taken_at < ?1 AND (:host IS NULL OR host = :host))");
	sqlite3_bind_double(st, 1, before);
	exec_changes(db, st, "removing samples");
	st = ai_db_prep(db, "DELETE FROM snapshot WHERE taken_at < ?1"
			" AND (:host IS NULL OR host = :host)");
	sqlite3_bind_double(st, 1, before);
	*nsnap = exec_changes(db, st, "removing snapshots");
	st = ai_db_prep(db, "DELETE FROM tag WHERE NOT EXISTS"
			" (SELECT 1 FROM sample WHERE sample.tag_id = tag.id)");
	*ntag = exec_changes(db, st, "removing unused tags");
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "COMMIT");
	st = ai_db_prep(db, "SELECT count(*) FROM snapshot WHERE (:host IS NULL OR host = :host)");
	*left = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	/* the log back to nothing, so the file shrinks on VACUUM */
	sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

/*
 * Copy the snapshots of the database at PATH into DB, tags matched by
 * their key. A snapshot DB already holds (same host, time and source) is
 * skipped. One transaction: a failure leaves DB as it was.
 */
void ai_db_merge(sqlite3 *db, const char *path, int64_t *added, int64_t *skipped)
{
	sqlite3 *src = ai_db_open(path, AI_DB_READ);	/* dies unless an allocinfo database */
	sqlite3_stmt *st, *has, *snp, *smp;

	sqlite3_close(src);
	*added = *skipped = 0;
	st = ai_db_prep(db, "ATTACH DATABASE ?1 AS src");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		ai_die("merge: cannot read %s: %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "BEGIN");
	if (sqlite3_exec(db, "INSERT INTO main.tag (file, line, module, func)"
			 " SELECT file, line, module, func FROM src.tag WHERE true"
			 " ON CONFLICT DO NOTHING", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "merging tags");
	st = ai_db_prep(db, "SELECT id, taken_at, source, host FROM src.snapshot"
			" ORDER BY taken_at, id");
	has = ai_db_prep(db, "SELECT 1 FROM main.snapshot WHERE host = ?1 AND taken_at = ?2"
			 " AND source = ?3");
	snp = ai_db_prep(db, "INSERT INTO main.snapshot (taken_at, source, host, kernel,"
			 " version, label, ntags, total_bytes, total_calls, skipped_lines)"
			 " SELECT taken_at, source, host, kernel, version, label, ntags,"
			 " total_bytes, total_calls, skipped_lines FROM src.snapshot WHERE id = ?1");
	smp = ai_db_prep(db, "INSERT INTO main.sample (snapshot_id, tag_id, bytes, calls, extra)"
			 " SELECT ?1, mt.id, s.bytes, s.calls, s.extra FROM src.sample s"
			 " JOIN src.tag st ON st.id = s.tag_id"
			 " JOIN main.tag mt ON mt.file = st.file AND mt.line = st.line"
			 " AND mt.module = st.module AND mt.func = st.func"
			 " WHERE s.snapshot_id = ?2");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t old = sqlite3_column_int64(st, 0);
		int exists;

		sqlite3_bind_value(has, 1, sqlite3_column_value(st, 3));
		sqlite3_bind_value(has, 2, sqlite3_column_value(st, 1));
		sqlite3_bind_value(has, 3, sqlite3_column_value(st, 2));
		exists = sqlite3_step(has) == SQLITE_ROW;
		sqlite3_reset(has);
		if (exists) {
			(*skipped)++;
			continue;
		}
		sqlite3_bind_int64(snp, 1, old);
		if (sqlite3_step(snp) != SQLITE_DONE)
			ai_db_die(db, "merging a snapshot");
		sqlite3_reset(snp);
		sqlite3_bind_int64(smp, 1, sqlite3_last_insert_rowid(db));
		sqlite3_bind_int64(smp, 2, old);
		if (sqlite3_step(smp) != SQLITE_DONE)
			ai_db_die(db, "merging samples");
		sqlite3_reset(smp);
		(*added)++;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(has);
	sqlite3_finalize(snp);
	sqlite3_finalize(smp);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "COMMIT");
	if (sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL) != SQLITE_OK)
		ai_db_die(db, "DETACH");
}
