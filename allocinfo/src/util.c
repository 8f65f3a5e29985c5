// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers: allocation, messages, sizes and output escaping.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocinfo.h"

const char *ai_prog = "allocinfo";

void ai_vwarn(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", ai_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ai_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ai_vwarn(fmt, ap);
	va_end(ap);
	exit(AI_EXIT_FATAL);
}

void ai_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ai_vwarn(fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		ai_die("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		ai_die("out of memory (%zu x %zu bytes)", n, sz);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		ai_die("out of memory (%zu bytes)", n);
	return p;
}

/* Strings that live as long as the command: freed at exit. */
static char **kept;
static size_t nkept;

static void free_kept(void)
{
	while (nkept)
		free(kept[--nkept]);
	free(kept);
	kept = NULL;
}

void ai_keep(char *p)
{
	if (!kept)
		atexit(free_kept);
	kept = xrealloc(kept, (nkept + 1) * sizeof(*kept));
	kept[nkept++] = p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

int ai_parse_u64(const char *s, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || *e)
		return -1;
	*out = v;
	return 0;
}

/* "4096", "4K", "4KiB", "1.5M", "2G": binary units */
int ai_parse_size(const char *s, int64_t *out)
{
	char *e;
	double v;
	double mul = 1;

	errno = 0;
	v = strtod(s, &e);
	if (errno || e == s || v < 0)
		return -1;
	switch (*e) {
	case 'k': case 'K': mul = 1024.0; e++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; e++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; e++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; e++; break;
	}
	if (mul > 1 && (!strcmp(e, "iB") || !strcmp(e, "B")))
		e += strlen(e);
	else if (mul == 1 && !strcmp(e, "B"))
		e++;
	if (*e)
		return -1;
	v *= mul;
	if (v >= 9.2e18)
		return -1;
	*out = (int64_t)v;
	return 0;
}

/*
 * Write OUT atomically: a unique temporary file next to it (OUT.XXXXXX,
 * which the textfile collector ignores: it reads *.prom only), synced,
 * then renamed over OUT. Two runs never share the temporary file, and
 * it is removed when anything fails.
 */
FILE *ai_atomic_open(const char *out, char **tmpp)
{
	char *tmp = xmalloc(strlen(out) + 8);
	mode_t um = umask(0);
	FILE *f;
	int fd;

	umask(um);
	sprintf(tmp, "%s.XXXXXX", out);
	fd = mkstemp(tmp);
	if (fd < 0)
		ai_die("cannot create a temporary file next to %s: %s", out,
		       strerror(errno));
	/* mkstemp() makes it 0600: the collector may run as another user */
	if (fchmod(fd, 0666 & ~um) || !(f = fdopen(fd, "w"))) {
		int e = errno;

		unlink(tmp);
		ai_die("cannot write %s: %s", tmp, strerror(e));
	}
	*tmpp = tmp;
	return f;
}

void ai_atomic_commit(FILE *f, char *tmp, const char *out)
{
	int bad = ferror(f), e = 0, dfd;
	char *dir;

	errno = 0;
	if (fflush(f) || bad || fsync(fileno(f)))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno ? errno : EIO;
	if (e) {
		unlink(tmp);
		ai_die("write error on %s: %s (nothing written to %s)", tmp,
		       strerror(e), out);
	}
	if (rename(tmp, out)) {
		e = errno;
		unlink(tmp);
		ai_die("cannot rename %s to %s: %s", tmp, out, strerror(e));
	}
	/* the rename itself, on disk */
	dir = xstrdup(out);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	free(tmp);
}
