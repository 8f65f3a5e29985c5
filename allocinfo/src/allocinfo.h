/* SPDX-License-Identifier: GPL-2.0 */
/*
 * allocinfo: read, compare, record and export /proc/allocinfo.
 */
#ifndef ALLOCINFO_H
#define ALLOCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

/* Exit codes: documented in README.md and allocinfo.1. */
#define AI_EXIT_OK	0
#define AI_EXIT_FATAL	1	/* could not read input, database error, ... */
#define AI_EXIT_USAGE	2	/* bad command line */
#define AI_EXIT_SKIPPED	3	/* ran, but some input lines were skipped */
#define AI_EXIT_FOUND	4	/* report leaks: there are leak suspects */
#define AI_EXIT_SHORT	5	/* report leaks: a window too short to judge */

#define AI_DEFAULT_INPUT "/proc/allocinfo"

/*
 * Where and when a snapshot was taken: known for the live
 * /proc/allocinfo (this machine, now) and for a JSON capture that says
 * so; otherwise empty (0 for the time).
 */
struct ai_ident {
	char host[256];		/* node name: a label */
	char machine_id[64];	/* /etc/machine-id: the host's identity */
	char boot_id[64];	/* /proc/sys/kernel/random/boot_id */
	char kernel[128];	/* release */
};

enum ai_tag_flags {
	AI_F_NEGATIVE	= 1 << 0,	/* bytes < 0: broken accounting */
	AI_F_INACCURATE	= 1 << 1,	/* 2.0 "accurate:no" */
	AI_F_SATURATED	= 1 << 2,	/* summing duplicates overflowed */
};

struct ai_tag {
	int64_t bytes;
	uint64_t calls;
	const char *file;
	const char *module;	/* "" for code built into the kernel */
	const char *func;
	const char *extra;	/* 2.0 trailing key:value pairs, or "" */
	uint32_t line;
	uint32_t lineno;	/* input line of the first occurrence */
	uint32_t nlines;	/* input lines summed into this tag */
	uint32_t flags;
};

struct ai_snap {
	const char *name;	/* input name for messages */
	char *buf;		/* the whole input; tag strings point into it */
	size_t len;
	char version[16];	/* from the header, "1.0" when absent */
	int has_header;
	int bad_header;		/* a header whose version cannot be read */
	int cut;		/* the input ends early (a JSON syntax error, no last newline) */
	struct ai_tag *tags;
	size_t ntags, cap;
	size_t nlines;		/* input lines */
	size_t skipped;		/* malformed lines left out */
	size_t warnings;	/* other problems (missing header, ...) */
	int live;		/* read from this machine's /proc/allocinfo */
	double taken_at;	/* Unix time when known (live, or JSON); else 0 */
	struct ai_ident id;	/* likewise */
	int json;		/* allocinfo's JSON export, read back */
	unsigned ident_bad;	/* JSON: AI_ID_* keys whose value was not a name, left out */
	char **owned;		/* strings made by merging (extra of sums) */
	size_t nowned, capowned;
};

enum { AI_ID_HOST = 1, AI_ID_MACHINE = 2, AI_ID_BOOT = 4 };

struct ai_parse_opts {
	FILE *err;		/* messages; NULL for silence */
	int keep_dups;		/* do not sum duplicate file:line func keys */
	size_t max_msgs;	/* stop printing after this many; 0 = no limit */
};

/* read.c: read an input and parse it into a snapshot */
#define AI_MAX_INPUT	(256u << 20)	/* bytes of an input, at most */
#define AI_MAX_LINE	65536u		/* bytes of a line of a text input, at most */
#define AI_READ_TOO_BIG	(-2)
#define AI_READ_LONG_LINE (-3)
int ai_read_fd(int fd, char **buf, size_t *len);
const char *ai_read_error(int rc, size_t line, char *msg, size_t n);
int ai_load(struct ai_snap *s, const char *path, const struct ai_parse_opts *o);
void ai_parse_buffer(struct ai_snap *s, char *buf, size_t len,
		     const struct ai_parse_opts *o);
void ai_snap_free(struct ai_snap *s);

/* model.c: tag keys, the hash set that pairs them, sort orders */
int ai_tag_cmp_name(const struct ai_tag *a, const struct ai_tag *b);
uint64_t ai_tag_hash(const struct ai_tag *t);
int ai_tag_same(const struct ai_tag *a, const struct ai_tag *b);
const char *ai_module_name(const struct ai_tag *t);
/* the group of a tag: by module, subsys (mm/, drivers/gpu/) or file */
void ai_group_name(const struct ai_tag *t, const char *by, char *b, size_t n);
/* the functions of expected growth (page cache, anonymous memory): globs, NULL-ended */
extern const char *const ai_expected_growth[];
int ai_is_expected(const struct ai_tag *t);
/* key: size (or bytes), calls, name, input (input order); -1 for others */
int ai_sort_tags(struct ai_tag **v, size_t n, const char *key);

/* hash set of indexes; the caller compares */
struct ai_hmap {
	uint32_t *slot;		/* index + 1, 0 = empty */
	size_t mask;
};
void ai_hmap_init(struct ai_hmap *m, size_t n);
void ai_hmap_free(struct ai_hmap *m);

/* output.c: sizes and tags as text */
const char *ai_human(int64_t v, char *buf, size_t n);
const char *ai_human_d(double v, char *buf, size_t n);
const char *ai_fmt_i128(__int128 v, int exact, int sign, char *buf, size_t n);
const char *ai_fmt_size(int64_t v, int exact, char *buf, size_t n);
void ai_fmt_tag(FILE *f, const struct ai_tag *t);
const char *ai_fmt_rate(double r, int exact, char *b, size_t n);
const char *ai_fmt_duration(double s, char *b, size_t n);

/* formats.c: the export formats and their escaping */
enum ai_export_fmt { AI_EXPORT_PROM, AI_EXPORT_JSON, AI_EXPORT_CSV };
void ai_export(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
	       size_t n, enum ai_export_fmt fmt);
struct ai_prom_opts {
	const char *by[4];	/* tag, module, subsys, file; none: tag */
	size_t nby;
	uint64_t limit;		/* the N largest series, the rest in other; 0 = all */
	int profiling;		/* /proc/sys/vm/mem_profiling: 1, 0; -1 = unknown */
};
void ai_export_prom(FILE *f, const struct ai_snap *s, struct ai_tag **tags,
		    size_t n, const struct ai_prom_opts *o);
void ai_json_str(FILE *f, const char *s);
void ai_json_strn(FILE *f, const char *s, size_t n);
void ai_csv_str(FILE *f, const char *s);
void ai_prom_str(FILE *f, const char *s);

/* util.c: memory, messages, numbers, atomic files */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
void ai_keep(char *p);
void ai_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void ai_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ai_vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int ai_parse_size(const char *s, int64_t *out);
int ai_parse_u64(const char *s, uint64_t *out);
/* "30d", "12h", "90m", "45s", "2w", "0": seconds; -1 not a duration, -2 a bare number */
int ai_parse_duration(const char *s, double *out);
/* an output file: see util.c; every failure exits 1 with one message */
struct ai_out {
	FILE *f;
	const char *path;	/* for messages */
	char *target;		/* the regular file replaced (links resolved) */
	char *tmp;		/* the temporary file renamed over it */
	int through;		/* a device, FIFO or standard output: in place */
	int err;		/* the errno of a failed write, when known */
	int lockfd;		/* the temporary file's lock, held until the rename */
};
void ai_out_open(struct ai_out *o, const char *path);
void ai_out_commit(struct ai_out *o);

/* a file of the running system, under $ALLOCINFO_SYSROOT when set (tests) */
const char *ai_sys_path(const char *path, char *buf, size_t n);
/* the first line of a small file, without white space at its ends; "" when unreadable */
void ai_read_line(const char *path, char *buf, size_t n);
void ai_local_ident(struct ai_ident *id);
int ai_ident_word(const char *s);
double ai_now(void);

extern const char *ai_prog;

#endif
