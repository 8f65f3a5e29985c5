/* SPDX-License-Identifier: GPL-2.0 */
/* The commands (cmd_NAME.c) and the plumbing they share (cli.c). */
#ifndef ALLOCINFO_CLI_H
#define ALLOCINFO_CLI_H

#include <getopt.h>
#include <stdarg.h>

#include "allocinfo.h"

#ifndef AI_VERSION
#define AI_VERSION "1.0"
#endif

enum {
	OPT_MODULE = 256,
	OPT_PATH,
	OPT_FUNC,
	OPT_BY,
	OPT_FROM,
	OPT_TO,
	OPT_AT,
	OPT_TIME,
	OPT_MIN_SNAPS,
	OPT_MIN_RATE,
	OPT_MIN_FIT,
	OPT_HOST,
	OPT_LOG,
	OPT_KEEP,
	OPT_NOW,
	OPT_VACUUM,
	OPT_AVG,
	OPT_WATCH,
	OPT_SECONDS,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_TITLE,
	OPT_IGNORE,
	OPT_IMPORT,
	OPT_MACHINE_ID,
	OPT_BOOT_ID,
	OPT_KEEP_INCOMPLETE,
	OPT_WAIT,
	OPT_FORMAT,
	OPT_BOOT,
	OPT_ALL_HOSTS,
	OPT_MIN_GROWTH,
	OPT_IGNORE_FILE,
	OPT_NO_DEFAULT_IGNORE,
	OPT_DEPTH,
	OPT_JSON,
	OPT_PROMETHEUS,
	OPT_GRACE,
	OPT_RECENT,
	OPT_ALL,
	OPT_TOP,
	OPT_LAST
};

/* the patterns of one filter: any of inc (all when none), none of exc */
#define AI_MAX_GLOBS 64
struct ai_globs {
	const char *inc[AI_MAX_GLOBS], *exc[AI_MAX_GLOBS];
	size_t ninc, nexc;
};

/* the shared options a command was given (struct ai_common.given) */
enum {
	CO_INPUT	= 1 << 0,	/* -f */
	CO_LIMIT	= 1 << 1,	/* -n */
	CO_MIN		= 1 << 2,	/* -m */
	CO_EXACT	= 1 << 3,	/* -b */
	CO_KEEP		= 1 << 4,	/* -k */
	CO_NOHDR	= 1 << 5,	/* -H */
	CO_QUIET	= 1 << 6,	/* -q */
	CO_FILTER	= 1 << 7,	/* --module, --path, --func */
	CO_ALL		= (1 << 8) - 1,
};

struct ai_common {
	unsigned given;		/* CO_* */
	const char *input;
	uint64_t limit;
	int64_t min;
	int has_min;
	int exact;
	int keep_dups;
	int no_header;
	int quiet;
	struct ai_globs mod, path, func;
};

extern const char *ai_cmd;	/* the command running, for messages */
int ai_getopt(int argc, char **argv, const char *so, const struct option *lo);
int ai_common_opt(struct ai_common *co, int c, const char *arg);
void ai_only(const struct ai_common *co, unsigned allowed, const char *what);
void ai_not_here(const char *opt, const char *what)
	__attribute__((noreturn));
void ai_duration_err(const char *cmd, const char *opt, const char *arg)
	__attribute__((noreturn));
void ai_usage_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
int ai_match(const struct ai_common *co, const struct ai_tag *t);
struct ai_parse_opts ai_popts(const struct ai_common *co);
void ai_load_or_die(struct ai_snap *s, const char *path,
		    const struct ai_common *co);
int ai_status(const struct ai_snap *s);
struct ai_tag **ai_select(const struct ai_snap *s, const struct ai_common *co,
			  size_t *np);

/* the options every reading command takes */
#define COMMON_LONGOPTS \
	{ "input", required_argument, NULL, 'f' }, \
	{ "min", required_argument, NULL, 'm' }, \
	{ "bytes", no_argument, NULL, 'b' }, \
	{ "keep-dups", no_argument, NULL, 'k' }, \
	{ "no-header", no_argument, NULL, 'H' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "module", required_argument, NULL, OPT_MODULE }, \
	{ "path", required_argument, NULL, OPT_PATH }, \
	{ "func", required_argument, NULL, OPT_FUNC }, \
	{ "help", no_argument, NULL, 'h' }
#define COMMON_SHORTOPTS "f:n:m:bkHqh"

/* print a help text on stdout and exit 0 */
void ai_help(const char *text) __attribute__((noreturn));

/* output.c: a table of tags; shared by top and report top */
struct ai_cols {
	int avg;		/* an AVG column: bytes / calls */
	const double *rate;	/* a RATE column, rate[i] for v[i]; NULL: none */
};
void ai_print_tags(FILE *f, struct ai_tag **v, size_t n, size_t total_n,
		   const struct ai_common *co, const struct ai_cols *cols);

/* the commands, one file each */
int cmd_top(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_context(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
