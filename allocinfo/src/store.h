/* SPDX-License-Identifier: GPL-2.0 */
/* store.c: the SQLite snapshot database, shared by record, report and plot. */
#ifndef ALLOCINFO_STORE_H
#define ALLOCINFO_STORE_H

#include <sqlite3.h>

#include "allocinfo.h"

#define AI_DB_SCHEMA_VERSION 1

/* report leaks: the least R^2 of a suspect's line (documented) */
#define AI_LEAK_MIN_FIT 0.5

struct ai_db_snap {
	int64_t id;
	double taken_at;
};

enum ai_db_mode { AI_DB_READ, AI_DB_WRITE, AI_DB_CREATE };
sqlite3 *ai_db_open(const char *path, enum ai_db_mode mode);
int ai_db_snapshots(sqlite3 *db, struct ai_db_snap **out, size_t *n);
int ai_db_load_tags(sqlite3 *db, int64_t snap_id, struct ai_snap *s,
		    int64_t **tag_ids);
int64_t ai_db_pick(sqlite3 *db, const char *spec);
void ai_db_host(sqlite3 *db, const char *host, const char *what);
void ai_db_die(sqlite3 *db, const char *what) __attribute__((noreturn));
/* a statement; a :host parameter in it is bound to the host of ai_db_host() */
sqlite3_stmt *ai_db_prep(sqlite3 *db, const char *sql);
void ai_db_prune(sqlite3 *db, double before, int64_t *nsnap, int64_t *ntag,
		 int64_t *left);
void ai_db_merge(sqlite3 *db, const char *path, int64_t *added, int64_t *skipped);
int64_t ai_db_record(sqlite3 *db, const struct ai_snap *s, double when,
		     const char *label, const char *host);

#endif
