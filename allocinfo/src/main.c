// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo: read, compare, record and export /proc/allocinfo.
 *
 * main() only dispatches: each command is in cmd_NAME.c; the layers
 * under them are read.c (read and parse an input), model.c (tags: keys,
 * sorting), store.c (the SQLite database), output.c and formats.c
 * (tables and export formats), cli.c (options shared by the commands).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cli.h"

static const char main_help[] =
"usage: allocinfo COMMAND [OPTIONS]\n"
"Read, compare, record and export /proc/allocinfo (memory allocation\n"
"profiling).\n"
"\n"
"commands:\n"
"  top      the tags that hold the most memory\n"
"  tree     memory summed by path prefix, module or subsystem\n"
"  diff     the change of each tag between two captures\n"
"  export   Prometheus text format, JSON or CSV\n"
"  record   store snapshots in a SQLite database\n"
"  report   growth, leak suspects and top tags from a database\n"
"  prune    drop the snapshots older than a retention time\n"
"  merge    copy the snapshots of other hosts' databases into one\n"
"  context  the call chains of chosen tags (the kernel's capture)\n"
"%s"
"\n"
"Every command reads /proc/allocinfo by default, a file with -f FILE, or\n"
"stdin with -f -. 'allocinfo COMMAND --help' describes a command.\n"
"\n"
"exit status: 0 ok; 1 fatal error (unreadable input, database error);\n"
"2 bad command line; 3 done, but some input lines were malformed and\n"
"skipped (or the header was missing); 4 report leaks found suspects.\n";

/*
 * plot is a program of its own, allocinfo-plot, so that allocinfo links
 * no graphics library. It is looked up next to this program, named
 * after it (allocinfo-asan runs allocinfo-plot-asan, allocinfo.static
 * allocinfo-plot.static, which is never built: the static build has no
 * plot), then in PATH. Returns its path, or NULL.
 */
static char *plot_program(const char *argv0)
{
	static char path[PATH_MAX + 32];
	char self[PATH_MAX], base[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *b;

	if (n <= 0) {
		if (!strchr(argv0, '/') || strlen(argv0) >= sizeof(self))
			goto search;
		strcpy(self, argv0);
	} else {
		self[n] = '\0';
	}
	strcpy(base, self);
	b = basename(base);
	dir = dirname(self);
	if (!strncmp(b, "allocinfo", 9)) {
		snprintf(path, sizeof(path), "%s/allocinfo-plot%s", dir, b + 9);
		if (!access(path, X_OK))
			return path;
		if (b[9])	/* a variant without its own plot */
			return NULL;
	}
search:
	{
		const char *p = getenv("PATH");

		while (p && *p) {
			size_t l = strcspn(p, ":");

			snprintf(path, sizeof(path), "%.*s/allocinfo-plot", (int)l,
				 l ? p : ".");
			if (!access(path, X_OK))
				return path;
			p += l + (p[l] == ':');
		}
	}
	return NULL;
}

static const char *argv0 = "allocinfo";

static int run_plot(int argc, char **argv)
{
	char *prog = plot_program(argv0);

	(void)argc;
	if (!prog) {
		ai_warn("plot: allocinfo-plot is not installed: plot is a separate program,"
			" linked with cairo (install it next to %s, or run plot on a host"
			" that has it)", argv0);
		return AI_EXIT_FATAL;
	}
	argv[0] = prog;
	fflush(stdout);
	execv(prog, argv);
	ai_die("plot: cannot run %s: %s", prog, strerror(errno));
}

/* Output lost to a full disk or a closed pipe is an error, not silence. */
static void check_stdout(void)
{
	int bad = ferror(stdout);

	errno = 0;
	if (fflush(stdout))
		bad = 1;
	if (bad) {
		if (errno)
			ai_warn("write error on standard output: %s", strerror(errno));
		else
			ai_warn("write error on standard output");
		_exit(AI_EXIT_FATAL);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "top", cmd_top }, { "tree", cmd_tree }, { "diff", cmd_diff },
		{ "export", cmd_export }, { "record", cmd_record },
		{ "report", cmd_report }, { "prune", cmd_prune },
		{ "merge", cmd_merge }, { "context", cmd_context },
		{ "plot", run_plot },
	};
	size_t i;

	atexit(check_stdout);
	argv0 = argv[0];
	if (argc < 2)
		ai_usage_err("no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *h[] = { argv[2], "--help", NULL };

			for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (!strcmp(argv[2], cmds[i].name)) {
					ai_cmd = cmds[i].name;
					return cmds[i].fn(2, h);
				}
		}
		printf(main_help, plot_program(argv0) ?
		       "  plot     a PNG or SVG chart of the top tags over time\n" :
		       "  plot     (not installed: allocinfo-plot, linked with cairo, is a\n"
		       "           separate program)\n");
		exit(AI_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("allocinfo %s\n", AI_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			ai_cmd = cmds[i].name;
			exit(cmds[i].fn(argc - 1, argv + 1));
		}
	ai_usage_err("unknown command '%s'", argv[1]);
}
