// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers: allocation, messages, sizes and output escaping.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
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

/*
 * A duration: a number and its unit, s, m, h, d or w ("30d", "1.5h").
 * A bare number is refused (-2) but 0, which is 0 in every unit: "30"
 * read as seconds once wiped a month of snapshots meant to be kept.
 */
int ai_parse_duration(const char *s, double *out)
{
	char *e;
	double v, mul;

	errno = 0;
	v = strtod(s, &e);
	if (errno || e == s || !(v >= 0) || !isfinite(v) || *s == '-' || *s == '+')
		return -1;
	switch (*e) {
	case 's': mul = 1; break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	case 'w': mul = 7 * 86400; break;
	case '\0':
		if (v == 0) {
			*out = 0;
			return 0;
		}
		return -2;
	default:
		return -1;
	}
	if (e[1] || v * mul > 1e12)
		return -1;
	*out = v * mul;
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
 * Output files (export -o, plot -o, report -o). A regular file, or a
 * name that does not exist yet, is replaced atomically: a unique
 * temporary file next to it (FILE.allocinfo-tmp.XXXXXX, which the
 * textfile collector ignores: it reads *.prom only), synced, then renamed
 * over it; a symbolic link to a regular file keeps pointing there and its
 * target is replaced, with the owner, group and mode it had. A character
 * device or a FIFO (/dev/null, /dev/stdout on a terminal or pipe, a named
 * pipe) is written through, in place: renaming over it would replace the
 * device node. Anything else (a directory, a block device, a socket, a
 * dangling link) is refused. A failure leaves the previous file as it was
 * and exits 1 with one message.
 *
 * The temporary file is removed at exit and on SIGTERM, SIGINT, SIGHUP
 * and SIGQUIT. SIGKILL cannot be caught: the writer holds a lock on its
 * temporary file (flock) until the rename, and the next run for the same
 * FILE removes the temporary files of FILE that nobody holds.
 */
#define TMP_MARK ".allocinfo-tmp."
#define STALE_AGE 10	/* seconds: a temporary file is never removed younger */

static char *volatile pending_tmp;	/* removed when the program dies before the rename */

static void remove_pending(void)
{
	if (pending_tmp)
		unlink(pending_tmp);
}

static void on_fatal_signal(int sig)
{
	int e = errno;

	remove_pending();
	errno = e;
	/* SA_RESETHAND: the default action now, so the death is by the signal */
	raise(sig);
}

/* the temporary files of TARGET left by a writer that is gone (SIGKILL) */
static void remove_stale(const char *target)
{
	char *dir = xstrdup(target), *base = xstrdup(target), *pre;
	const char *bn = basename(base);
	struct dirent *e;
	size_t npre;
	DIR *d;
	int dfd;

	pre = xmalloc(strlen(bn) + sizeof(TMP_MARK));
	sprintf(pre, "%s" TMP_MARK, bn);
	npre = strlen(pre);
	d = opendir(dirname(dir));
	dfd = d ? dirfd(d) : -1;
	while (d && (e = readdir(d))) {
		struct stat st;
		int fd;

		if (strncmp(e->d_name, pre, npre) || strlen(e->d_name) != npre + 6)
			continue;
		fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* nobody holds it, and it is not one being made right now */
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    st.st_mtime + STALE_AGE < time(NULL) &&
		    !flock(fd, LOCK_EX | LOCK_NB) && !unlinkat(dfd, e->d_name, 0))
			ai_warn("removed %s/%s, a temporary file a killed run left", dir, e->d_name);
		close(fd);
	}
	if (d)
		closedir(d);
	free(pre);
	free(base);
	free(dir);
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

void ai_out_open(struct ai_out *o, const char *path)
{
	static int registered;
	struct stat st, out1;
	sigset_t all, old;
	int fd, replacing = 0;
	mode_t um;

	memset(o, 0, sizeof(*o));
	o->lockfd = -1;
	o->path = path;
	if (!path || !strcmp(path, "-")) {
		o->path = "standard output";
		o->f = stdout;
		o->through = 1;
		return;
	}
	if (stat(path, &st) == 0) {
		if (S_ISREG(st.st_mode) && !fstat(1, &out1) && S_ISREG(out1.st_mode) &&
		    out1.st_dev == st.st_dev && out1.st_ino == st.st_ino) {
			/* /dev/stdout, /proc/self/fd/1: the file the shell opened */
			o->f = stdout;
			o->through = 1;
			return;
		}
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
			fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
			if (fd < 0 || !(o->f = fdopen(fd, "w")))
				ai_die("cannot write %s: %s", path, strerror(errno));
			o->through = 1;
			return;
		}
		if (!S_ISREG(st.st_mode))
			ai_die("%s is %s: not written (give a regular file, or a new name)",
			       path, file_kind(st.st_mode));
		o->target = realpath(path, NULL);
		if (!o->target)
			ai_die("cannot resolve %s: %s", path, strerror(errno));
		replacing = 1;
	} else if (errno == ENOENT) {
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			ai_die("%s is a symbolic link to a file that does not exist: not written"
			       " (give the target's name)", path);
		o->target = xstrdup(path);
	} else {
		ai_die("cannot write %s: %s", path, strerror(errno));
	}
	remove_stale(o->target);
	o->tmp = xmalloc(strlen(o->target) + sizeof(TMP_MARK) + 6);
	sprintf(o->tmp, "%s" TMP_MARK "XXXXXX", o->target);
	um = umask(0);
	umask(um);
	if (!registered) {
		struct sigaction sa;
		static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
		size_t i;

		atexit(remove_pending);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
			sigaction(sigs[i], &sa, NULL);
		registered = 1;
	}
	/* the name is known to the handler from the moment the file is there */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fd = mkstemp(o->tmp);
	if (fd >= 0)
		pending_tmp = o->tmp;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		ai_die("cannot create a temporary file next to %s: %s", o->target,
		       strerror(errno));
	/* held until the rename: a later run leaves it alone while this one lives */
	o->lockfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (o->lockfd >= 0)
		flock(o->lockfd, LOCK_EX | LOCK_NB);
	if (replacing) {
		/*
		 * The file replaced keeps its owner, group and mode (mode last:
		 * a change of owner clears set-id bits). A user who may replace
		 * the file but not give it away makes it theirs: said, not fatal.
		 */
		if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
		    fchown(fd, st.st_uid, st.st_gid))
			ai_warn("%s: replaced, but its owner and group (%u:%u) could not be kept:"
				" %s; it is now owned by %u:%u (write it as its owner, or as root,"
				" to keep them)", path, (unsigned)st.st_uid, (unsigned)st.st_gid,
				strerror(errno), (unsigned)geteuid(), (unsigned)getegid());
		if (fchmod(fd, st.st_mode & 07777))
			ai_die("cannot write %s: setting its mode: %s", o->tmp, strerror(errno));
	} else if (fchmod(fd, 0666 & ~um)) {
		/* mkstemp() makes it 0600: the collector may run as another user */
		ai_die("cannot write %s: %s", o->tmp, strerror(errno));
	}
	if (!(o->f = fdopen(fd, "w")))
		ai_die("cannot write %s: %s", o->tmp, strerror(errno));
}

void ai_out_commit(struct ai_out *o)
{
	int bad = ferror(o->f), e = 0, dfd;
	char *dir;

	errno = 0;
	if (fflush(o->f) || bad)
		e = o->err ? o->err : errno ? errno : EIO;
	if (o->f == stdout) {
		if (e) {
			ai_warn("write error on %s: %s", o->path, strerror(e));
			_exit(AI_EXIT_FATAL);	/* said once: not again at exit */
		}
		return;
	}
	if (!e && o->tmp && fsync(fileno(o->f)))
		e = errno;
	if (fclose(o->f) && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (e) {
		if (o->tmp)
			ai_die("write error on %s: %s (the previous %s is left as it was)",
			       o->tmp, strerror(e), o->path);
		ai_die("write error on %s: %s", o->path, strerror(e));
	}
	if (!o->tmp)
		return;
	if (rename(o->tmp, o->target))
		ai_die("cannot rename %s to %s: %s", o->tmp, o->target, strerror(errno));
	pending_tmp = NULL;
	if (o->lockfd >= 0)
		close(o->lockfd);
	o->lockfd = -1;
	/* the rename itself, on disk */
	dir = xstrdup(o->target);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
}

/*
 * The running system's files: /proc/allocinfo, its boot id, machine id
 * and names. $ALLOCINFO_SYSROOT puts them under another directory: the
 * tests make synthetic hosts that way.
 */
const char *ai_sys_path(const char *path, char *buf, size_t n)
{
	const char *root = getenv("ALLOCINFO_SYSROOT");

	if (!root || !*root)
		return path;
	snprintf(buf, n, "%s%s", root, path);
	return buf;
}

void ai_read_line(const char *path, char *buf, size_t n)
{
	char pb[4096];
	FILE *f = fopen(ai_sys_path(path, pb, sizeof(pb)), "r");
	size_t a = 0, b;

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, n, f))
		buf[0] = '\0';
	fclose(f);
	b = strlen(buf);
	while (b && strchr(" \t\r\n", buf[b - 1]))
		buf[--b] = '\0';
	while (buf[a] == ' ' || buf[a] == '\t')
		a++;
	memmove(buf, buf + a, b - a + 1);
}

/* a name or id as stored: printable ASCII, no space, not empty */
int ai_ident_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return 0;
	return 1;
}

void ai_local_ident(struct ai_ident *id)
{
	struct utsname u;

	memset(id, 0, sizeof(*id));
	ai_read_line("/proc/sys/kernel/hostname", id->host, sizeof(id->host));
	ai_read_line("/proc/sys/kernel/osrelease", id->kernel, sizeof(id->kernel));
	ai_read_line("/etc/machine-id", id->machine_id, sizeof(id->machine_id));
	if (!*id->machine_id)
		ai_read_line("/var/lib/dbus/machine-id", id->machine_id, sizeof(id->machine_id));
	ai_read_line("/proc/sys/kernel/random/boot_id", id->boot_id, sizeof(id->boot_id));
	if ((!*id->host || !*id->kernel) && !getenv("ALLOCINFO_SYSROOT") && !uname(&u)) {
		if (!*id->host)
			snprintf(id->host, sizeof(id->host), "%s", u.nodename);
		if (!*id->kernel)
			snprintf(id->kernel, sizeof(id->kernel), "%s", u.release);
	}
	if (!ai_ident_word(id->host))
		id->host[0] = '\0';
	if (!ai_ident_word(id->machine_id))
		id->machine_id[0] = '\0';
	if (!ai_ident_word(id->boot_id))
		id->boot_id[0] = '\0';
	if (!ai_ident_word(id->kernel))
		id->kernel[0] = '\0';
}

double ai_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
