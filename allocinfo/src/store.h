/* SPDX-License-Identifier: GPL-2.0 */
/* store.c: the SQLite snapshot database, shared by record, report and plot. */
#ifndef ALLOCINFO_STORE_H
#define ALLOCINFO_STORE_H

#include <sqlite3.h>

#include "allocinfo.h"

/* 1: every sample of every snapshot; 2: changes only, boot and machine ids */
#define AI_DB_SCHEMA_VERSION 2
/* every Nth snapshot of a host holds all its samples: reading one walks at most N */
#define AI_DB_KEY_EVERY 64

/* a host is its machine id; its node name when the machine id is unknown */
#define AI_HOSTKEY "(CASE WHEN machine_id = '' THEN host ELSE machine_id END)"

enum ai_snap_status { AI_SNAP_OK, AI_SNAP_INCOMPLETE, AI_SNAP_REFUSED };

struct ai_db_snap {
	int64_t id;
	double taken_at;
	int status;		/* enum ai_snap_status */
	char boot_id[64];
	char host[256];		/* its node name */
	char problem[256];	/* why it is incomplete or refused */
};

enum ai_db_mode { AI_DB_READ, AI_DB_WRITE, AI_DB_CREATE };
/* how long a command waits for a database another process holds (--wait) */
extern double ai_db_wait;
sqlite3 *ai_db_open(const char *path, enum ai_db_mode mode);
/* the same, but NULL and the message in err instead of exiting */
sqlite3 *ai_db_try_open(const char *path, enum ai_db_mode mode, char *err, size_t n);
void ai_db_die(sqlite3 *db, const char *what) __attribute__((noreturn));
/* BEGIN IMMEDIATE: 0, or -1 when the database stayed locked for ai_db_wait */
int ai_db_begin(sqlite3 *db);
void ai_db_commit(sqlite3 *db);
const char *ai_snap_status_name(int status);

/* the hosts of the database, by node name */
struct ai_db_hostinfo {
	char *key, *name, *machine_id;
	int64_t snapshots;
};
size_t ai_db_hosts(sqlite3 *db, struct ai_db_hostinfo **out);
void ai_db_hosts_free(struct ai_db_hostinfo *h, size_t n);
/*
 * Pick the host whose snapshots are read: a machine id or a node name
 * (NULL: the only host there is, or an error naming them when WHAT is
 * not NULL). ai_db_select_key() picks a key of ai_db_hosts().
 */
void ai_db_host(sqlite3 *db, const char *host, const char *what);
void ai_db_select_key(const char *key);
const char *ai_db_host_key(void);

/* a statement; a :host parameter in it is bound to the host picked */
sqlite3_stmt *ai_db_prep(sqlite3 *db, const char *sql);
/* the snapshots of the host picked, in time order, every status */
int ai_db_snapshots(sqlite3 *db, struct ai_db_snap **out, size_t *n);
/* "ID", "first", "last", "@T": first, last and @T pick complete snapshots; -1: none */
int64_t ai_db_pick(sqlite3 *db, const char *spec);
int ai_db_snap_info(sqlite3 *db, int64_t id, struct ai_db_snap *out);

/*
 * The samples of one snapshot, rebuilt from its base snapshots: a
 * snapshot stores the samples that changed since its base, and the tags
 * that went away (calls -1). Loading the snapshot after the one held
 * applies its changes only.
 */
struct ai_db_state {
	sqlite3 *db;
	int64_t id;		/* the snapshot held; -1: none */
	int64_t depth;
	size_t cap;		/* the arrays below, by tag id */
	int64_t *bytes;
	int64_t *calls;		/* -1: the tag is not in the snapshot */
	char **extra;		/* NULL: "" */
	/* the tag table by id, loaded when needed, and a hash of its keys */
	struct ai_tag *names;	/* file NULL: no such id */
	size_t nnames, known;	/* ids below known are loaded */
	struct ai_hmap map;
	size_t nmap;
	int claimed;		/* record: allocinfo 1's snapshots of the host claimed */
};
void ai_db_state_init(struct ai_db_state *st, sqlite3 *db);
void ai_db_state_free(struct ai_db_state *st);
void ai_db_state_load(struct ai_db_state *st, int64_t id);
void ai_db_state_names(struct ai_db_state *st);
/* the tags held, as a snapshot (strings in s->buf); ids[i] of s->tags[i] */
void ai_db_state_snap(struct ai_db_state *st, struct ai_snap *s, int64_t **ids);
int ai_db_load_tags(sqlite3 *db, int64_t snap_id, struct ai_snap *s,
		    int64_t **tag_ids);

/* a snapshot to record: when, where from, whose */
struct ai_db_meta {
	double when;
	const char *source, *label;
	struct ai_ident id;
	int keep_incomplete;	/* store an incomplete capture, marked */
};
/*
 * Record S. Returns its id and sets *status and problem (why it is not
 * complete); -1 when the database stayed locked, -2 when the disk is
 * full (nothing written either way).
 */
int64_t ai_db_record(struct ai_db_state *st, const struct ai_snap *s,
		     const struct ai_db_meta *m, int *status, char *problem, size_t n);
/* a snapshot of host KEY taken at WHEN from SOURCE is already there */
int ai_db_has(sqlite3 *db, const char *key, double when, const char *source);
void ai_db_prune(sqlite3 *db, double before, double after, int64_t *nsnap,
		 int64_t *ntag, int64_t *left);
/* 0, or -1 with the reason in err when SOURCE cannot be merged */
int ai_db_merge(sqlite3 *db, const char *path, int64_t *added, int64_t *skipped,
		char *err, size_t n);

#endif
