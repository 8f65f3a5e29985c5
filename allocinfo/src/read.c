// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/allocinfo parser.
 *
 * The whole input is read into one buffer and parsed in place: the
 * strings of a tag point into the buffer, so memory stays proportional
 * to the input and no string is copied.
 *
 * A tag line is printf("%12lli %8llu ", bytes, calls), "file:line",
 * " [module]" for module tags (" module:name" in early versions),
 * " func:name", in format 2.0 optional " key:value" pairs, then a
 * trailing space. A malformed line is reported with its line number and
 * left out; the rest of the input is still used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocinfo.h"
#include "read.h"

#define HEADER "allocinfo - version:"

/*
 * The whole of fd, within bounds far above any real /proc/allocinfo (7,000
 * tags are under 1 MB, its lines under 300 bytes): at most AI_MAX_INPUT
 * bytes, and, unless it is JSON (a JSON export may be one line), lines of
 * at most AI_MAX_LINE bytes. 0; -1 with errno; AI_READ_TOO_BIG, or
 * AI_READ_LONG_LINE with *lenp the line's number, nothing kept.
 */
int ai_read_fd(int fd, char **bufp, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0, bol = 0;
	int json = -1;
	struct stat st;
	char *buf;

	/* a regular file: its size; /proc files say 0 and grow the buffer */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX / 2)
		cap = st.st_size + 1;
	if (cap > AI_MAX_INPUT + 1)
		cap = AI_MAX_INPUT + 1;
	buf = xmalloc(cap + 1);

	for (;;) {
		ssize_t r;
		char *nl;

		if (len == cap) {
			cap = cap > AI_MAX_INPUT / 2 ? AI_MAX_INPUT + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		if (json < 0) {
			size_t k = len;

			while (k < len + r && (buf[k] == ' ' || buf[k] == '\t' ||
					       buf[k] == '\r' || buf[k] == '\n'))
				k++;
			if (k < len + r)
				json = buf[k] == '{';
		}
		nl = memrchr(buf + len, '\n', r);
		len += r;
		if (nl)
			bol = nl - buf + 1;
		if (len > AI_MAX_INPUT) {
			free(buf);
			return AI_READ_TOO_BIG;
		}
		if (json != 1 && len - bol > AI_MAX_LINE) {
			size_t n = 1, i;

			for (i = 0; i < bol; i++)
				n += buf[i] == '\n';
			free(buf);
			*lenp = n;
			return AI_READ_LONG_LINE;
		}
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* what ai_read_fd's return rc means: a message for "cannot read NAME: ..." */
const char *ai_read_error(int rc, size_t line, char *msg, size_t n)
{
	if (rc == AI_READ_TOO_BIG)
		snprintf(msg, n, "more than %u MiB: not a capture of /proc/allocinfo (a kernel's"
			 " is a few MiB), not read further; give a capture file", AI_MAX_INPUT >> 20);
	else if (rc == AI_READ_LONG_LINE)
		snprintf(msg, n, "line %zu is longer than %u bytes: not a capture of"
			 " /proc/allocinfo (its lines are under 1 KiB), not read further; give"
			 " a capture file", line, AI_MAX_LINE);
	else
		snprintf(msg, n, "%s", strerror(errno));
	return msg;
}

void ai_problem(struct parser *p, enum problem kind, const char *fmt, ...)
{
	const struct ai_parse_opts *o = p->o;
	va_list ap;

	if (kind == MALFORMED)
		p->s->skipped++;
	else
		p->s->warnings++;
	p->msgs++;
	if (!o->err)
		return;
	if (o->max_msgs && p->msgs > o->max_msgs) {
		if (p->msgs == o->max_msgs + 1)
			fprintf(o->err,
				"%s: %s: more problems; only the first %zu are shown\n",
				ai_prog, p->s->name, o->max_msgs);
		return;
	}
	if (p->lineno)
		fprintf(o->err, "%s: %s:%zu: ", ai_prog, p->s->name, p->lineno);
	else
		fprintf(o->err, "%s: %s: ", ai_prog, p->s->name);
	va_start(ap, fmt);
	vfprintf(o->err, fmt, ap);
	va_end(ap);
	fputc('\n', o->err);
}

/* A printable quote of at most 40 bytes of [p, e), for messages. */
static const char *quote(const char *p, const char *e, char *out, size_t n)
{
	size_t k = 0;

	for (; p < e && k + 5 < n; p++) {
		unsigned char c = *p;

		if (c >= 0x20 && c < 0x7f && c != '\'') {
			out[k++] = c;
		} else {
			snprintf(out + k, n - k, "\\x%02x", c);
			k += 4;
		}
		if (k >= 40 && p + 1 < e) {
			snprintf(out + k, n - k, "...");
			return out;
		}
	}
	out[k] = '\0';
	return out;
}

static int is_sp(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Unsigned decimal [p, e): 0 ok, -1 not a number, -2 overflow. */
static int dec_u64(const char *p, const char *e, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (p == e)
		return -1;
	for (; p < e; p++) {
		if (!is_digit(*p))
			return -1;
		if (v > (max - (*p - '0')) / 10)
			return -2;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 0;
}

void ai_add_tag(struct ai_snap *s, const struct ai_tag *t)
{
	if (s->ntags == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->tags = xrealloc(s->tags, s->cap * sizeof(*s->tags));
	}
	s->tags[s->ntags++] = *t;
}

struct tok {
	char *p, *e;
};

#define MAX_TOKS 64

/*
 * Parse one tag line [p, e) (no newline). Returns 0 and fills *t, or
 * reports why the line is malformed and returns -1.
 */
static int parse_tag(struct parser *ps, char *p, char *e, struct ai_tag *t)
{
	struct tok tk[MAX_TOKS];
	size_t nt = 0, i;
	char q[64];
	uint64_t u;
	int r, neg = 0;
	char *c, *colon;

	/* printable ASCII only: the kernel prints nothing else here */
	for (c = p; c < e; c++) {
		unsigned char b = *c;

		if (b == '\0') {
			ai_problem(ps, MALFORMED, "NUL byte at column %zu", (size_t)(c - p) + 1);
			return -1;
		}
		if ((b < 0x20 && b != '\t') || b >= 0x7f) {
			ai_problem(ps, MALFORMED, "%s byte 0x%02x at column %zu",
			    b >= 0x80 ? "non-ASCII" : "control", b,
			    (size_t)(c - p) + 1);
			return -1;
		}
	}
	for (c = p; c < e;) {
		while (c < e && is_sp(*c))
			c++;
		if (c == e)
			break;
		if (nt == MAX_TOKS) {
			ai_problem(ps, MALFORMED, "too many fields (more than %d)", MAX_TOKS);
			return -1;
		}
		tk[nt].p = c;
		while (c < e && !is_sp(*c))
			c++;
		tk[nt++].e = c;
	}

	memset(t, 0, sizeof(*t));
	t->module = t->extra = "";
	t->lineno = ps->lineno > UINT32_MAX ? UINT32_MAX : ps->lineno;
	t->nlines = 1;

	/* bytes: %lli */
	c = tk[0].p;
	if (*c == '-') {
		neg = 1;
		c++;
	}
	r = dec_u64(c, tk[0].e, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u);
	if (r == -2) {
		ai_problem(ps, MALFORMED, "bytes '%s' do not fit in a signed 64-bit integer",
		    quote(tk[0].p, tk[0].e, q, sizeof(q)));
		return -1;
	}
	if (r) {
		ai_problem(ps, MALFORMED, "expected a byte count, found '%s'",
		    quote(tk[0].p, tk[0].e, q, sizeof(q)));
		return -1;
	}
	t->bytes = neg ? (int64_t)(0 - u) : (int64_t)u;

	/* calls: %llu */
	if (nt < 2) {
		ai_problem(ps, MALFORMED, "truncated line: no call count after the byte count");
		return -1;
	}
	r = dec_u64(tk[1].p, tk[1].e, UINT64_MAX, &t->calls);
	if (r == -2) {
		ai_problem(ps, MALFORMED, "calls '%s' do not fit in an unsigned 64-bit integer",
		    quote(tk[1].p, tk[1].e, q, sizeof(q)));
		return -1;
	}
	if (r) {
		ai_problem(ps, MALFORMED, "expected a call count, found '%s'",
		    quote(tk[1].p, tk[1].e, q, sizeof(q)));
		return -1;
	}

	/* file:line */
	if (nt < 3) {
		ai_problem(ps, MALFORMED, "truncated line: no file:line after the call count");
		return -1;
	}
	colon = NULL;
	for (c = tk[2].p; c < tk[2].e; c++)
		if (*c == ':')
			colon = c;
	if (!colon || colon == tk[2].p) {
		ai_problem(ps, MALFORMED, "expected file:line, found '%s'",
		    quote(tk[2].p, tk[2].e, q, sizeof(q)));
		return -1;
	}
	r = dec_u64(colon + 1, tk[2].e, UINT32_MAX, &u);
	if (r) {
		ai_problem(ps, MALFORMED, "bad line number in '%s'",
		    quote(tk[2].p, tk[2].e, q, sizeof(q)));
		return -1;
	}
	t->line = u;
	*colon = '\0';
	t->file = tk[2].p;

	/* [module] or module:name, then func:name, then key:value pairs */
	for (i = 3; i < nt; i++) {
		char *a = tk[i].p, *b = tk[i].e;
		size_t n = b - a;

		if (t->func) {
			for (c = a; c < b && *c != ':'; c++)
				;
			if (c == a || c == b) {
				ai_problem(ps, MALFORMED, "expected key:value after func:, found '%s'",
				    quote(a, b, q, sizeof(q)));
				return -1;
			}
			if (n == 11 && !memcmp(a, "accurate:no", 11))
				t->flags |= AI_F_INACCURATE;
			continue;
		}
		if (n >= 3 && a[0] == '[' && b[-1] == ']' && !*t->module) {
			b[-1] = '\0';
			t->module = a + 1;
		} else if (n > 7 && !memcmp(a, "module:", 7) && !*t->module) {
			*b = '\0';
			t->module = a + 7;
		} else if (n > 5 && !memcmp(a, "func:", 5)) {
			*b = '\0';
			t->func = a + 5;
			if (i + 1 < nt) {
				t->extra = tk[i + 1].p;
				*tk[nt - 1].e = '\0';
			}
		} else {
			ai_problem(ps, MALFORMED, "expected [module] or func:name, found '%s'",
			    quote(a, b, q, sizeof(q)));
			return -1;
		}
	}
	if (!t->func) {
		ai_problem(ps, MALFORMED, "truncated line: no func:name");
		return -1;
	}
	/* the string ends that were not cut above */
	*tk[2].e = '\0';
	if (t->bytes < 0)
		t->flags |= AI_F_NEGATIVE;
	return 0;
}

static int all_space(const char *p, const char *e)
{
	while (p < e && is_sp(*p))
		p++;
	return p == e;
}

static void parse_header(struct parser *ps, char *p, char *e)
{
	struct ai_snap *s = ps->s;
	char *v = p + strlen(HEADER), *ve;
	char q[64];

	while (v < e && is_sp(*v))
		v++;
	ve = v;
	while (ve < e && (is_digit(*ve) || *ve == '.'))
		ve++;
	s->has_header = 1;
	/* N or N.N...: "1.x", "1.", "2..0" or anything after it is unreadable */
	if (ve == v || !is_digit(*v) || ve - v >= (long)sizeof(s->version) ||
	    ve[-1] == '.' || memmem(v, ve - v, "..", 2) || !all_space(ve, e)) {
		s->bad_header = 1;
		ai_problem(ps, WARNING, "unreadable version '%s' in the header, assuming 1.0",
			quote(v, e, q, sizeof(q)));
		return;
	}
	memcpy(s->version, v, ve - v);
	s->version[ve - v] = '\0';
	if (strtoul(s->version, NULL, 10) > 2) {
		ai_problem(ps, WARNING, "format version %s is newer than this tool knows (2.0)",
			s->version);
	}
}

/* The next key:value pair of an extra string: [*k, *v) key, [*v+1, *e) value. */
static const char *next_pair(const char *x, const char **k, const char **v,
			     const char **e)
{
	while (*x == ' ' || *x == '\t')
		x++;
	if (!*x)
		return NULL;
	*k = x;
	*e = x + strcspn(x, " \t");
	*v = memchr(x, ':', *e - x);
	if (!*v)
		*v = *e;
	return *e;
}

/* the pair of extra string x whose key is [k, kend), or NULL */
static const char *find_key(const char *x, const char *k, size_t klen,
			    const char **val, const char **vend)
{
	const char *pk, *pv, *pe;

	while ((x = next_pair(x, &pk, &pv, &pe)))
		if ((size_t)(pv - pk) == klen && !memcmp(pk, k, klen)) {
			*val = pv < pe ? pv + 1 : pe;
			*vend = pe;
			return pk;
		}
	return NULL;
}

/*
 * The extra pairs of a sum of duplicate lines: those of the first line,
 * then the keys only later lines have; accurate:no from any line wins,
 * so the sum of an inaccurate counter is marked inaccurate whatever the
 * order of the lines.
 */
static void merge_extra(struct ai_snap *s, struct ai_tag *d,
			const struct ai_tag *t)
{
	size_t cap = strlen(d->extra) + strlen(t->extra) + 16, n = 0;
	const char *x = d->extra, *k, *v, *e, *ov, *oe;
	char *out;

	if (!strcmp(d->extra, t->extra))
		return;
	out = xmalloc(cap);
	out[0] = '\0';
	while ((x = next_pair(x, &k, &v, &e))) {
		/* accurate:yes (or any value) of the first line, no in a later one */
		if (v - k == 8 && !memcmp(k, "accurate", 8) &&
		    find_key(t->extra, k, 8, &ov, &oe) &&
		    oe - ov == 2 && !memcmp(ov, "no", 2)) {
			n += sprintf(out + n, "%saccurate:no", n ? " " : "");
			continue;
		}
		n += sprintf(out + n, "%s%.*s", n ? " " : "", (int)(e - k), k);
	}
	x = t->extra;
	while ((x = next_pair(x, &k, &v, &e)))
		if (!find_key(d->extra, k, v - k, &ov, &oe) &&
		    !find_key(out, k, v - k, &ov, &oe))
			n += sprintf(out + n, "%s%.*s", n ? " " : "", (int)(e - k), k);
	out[n] = '\0';
	if (s->nowned == s->capowned) {
		s->capowned = s->capowned ? s->capowned * 2 : 8;
		s->owned = xrealloc(s->owned, s->capowned * sizeof(*s->owned));
	}
	s->owned[s->nowned++] = out;
	d->extra = out;
}

/* Sum the lines that share file, line, module and func. */
static void merge_dups(struct parser *ps)
{
	struct ai_snap *s = ps->s;
	struct ai_hmap m;
	size_t i, n = 0;

	ai_hmap_init(&m, s->ntags);
	for (i = 0; i < s->ntags; i++) {
		struct ai_tag *t = &s->tags[i];
		size_t k = ai_tag_hash(t) & m.mask;

		while (m.slot[k] && !ai_tag_same(&s->tags[m.slot[k] - 1], t))
			k = (k + 1) & m.mask;
		if (!m.slot[k]) {
			s->tags[n] = *t;
			m.slot[k] = ++n;
			continue;
		}
		{
			struct ai_tag *d = &s->tags[m.slot[k] - 1];

			if (__builtin_add_overflow(d->bytes, t->bytes, &d->bytes)) {
				d->bytes = t->bytes < 0 ? INT64_MIN : INT64_MAX;
				d->flags |= AI_F_SATURATED;
				ps->lineno = t->lineno;
				ai_problem(ps, WARNING,
					"the sum of the bytes of %s:%u func:%s overflows; clamped",
					t->file, t->line, t->func);
			}
			if (__builtin_add_overflow(d->calls, t->calls, &d->calls)) {
				d->calls = UINT64_MAX;
				d->flags |= AI_F_SATURATED;
				ps->lineno = t->lineno;
				ai_problem(ps, WARNING,
					"the sum of the calls of %s:%u func:%s overflows; clamped",
					t->file, t->line, t->func);
			}
			merge_extra(s, d, t);
			d->flags |= t->flags & AI_F_INACCURATE;
			d->flags &= ~AI_F_NEGATIVE;
			if (d->bytes < 0)
				d->flags |= AI_F_NEGATIVE;
			d->nlines++;
		}
	}
	s->ntags = n;
	ai_hmap_free(&m);
}

void ai_parse_buffer(struct ai_snap *s, char *buf, size_t len,
		     const struct ai_parse_opts *o)
{
	struct parser ps = { .s = s, .o = o };
	char *p = buf, *end = buf + len;

	s->buf = buf;
	s->len = len;
	strcpy(s->version, "1.0");
	if (!s->name)
		s->name = "(input)";
	if (len == 0) {
		ai_problem(&ps, WARNING, "empty input: no header and no tags");
	}
	/* allocinfo's own JSON export, read back */
	if (len && buf[strspn(buf, " \t\r\n")] == '{') {
		ai_parse_json(&ps, buf, len);
		if (!o->keep_dups)
			merge_dups(&ps);
		return;
	}

	while (p < end) {
		char *nl = memchr(p, '\n', end - p);
		char *e = nl ? nl : end;
		struct ai_tag t;

		ps.lineno++;
		if (e > p && e[-1] == '\r')
			e--;
		*e = '\0';
		/*
		 * The header is usually line 1, but 'sort -g -r' of a capture
		 * moves it: it is taken wherever it is. A second one means two
		 * captures were concatenated.
		 */
		if ((size_t)(e - p) >= strlen(HEADER) &&
		    !memcmp(p, HEADER, strlen(HEADER))) {
			if (!s->has_header) {
				parse_header(&ps, p, e);
			} else {
				ai_problem(&ps, MALFORMED,
					"a second header line: two captures in one input?");
			}
			goto next;
		}
		if (*p == '#')
			goto next;
		{
			char *c = p;

			while (c < e && is_sp(*c))
				c++;
			if (c == e && !nl) {
				/* a cut in the leading spaces of a line */
				s->cut = 1;
				ai_problem(&ps, WARNING, "the input ends in the middle of a line"
					   " (spaces, no newline): cut short?");
				goto next;
			}
			if (c == e)
				goto next; /* blank */
		}
		/*
		 * The kernel ends every line with " \n": a last line with
		 * neither was cut short (a partial read or copy); one with the
		 * space only may have been cut just before its newline.
		 */
		if (!nl && e[-1] != ' ') {
			ai_problem(&ps, MALFORMED,
				"truncated last line: no newline and no trailing space");
			goto next;
		}
		if (!nl) {
			s->cut = 1;
			ai_problem(&ps, WARNING, "no newline at the end of the last line: cut short?");
		}
		if (parse_tag(&ps, p, e, &t) == 0)
			ai_add_tag(s, &t);
next:
		p = nl ? nl + 1 : end;
	}
	s->nlines = ps.lineno;
	ps.lineno = 0;
	if (len && !s->has_header)
		ai_problem(&ps, WARNING, "no 'allocinfo - version:' header, assuming format 1.0");
	if (!o->keep_dups)
		merge_dups(&ps);
}

int ai_load(struct ai_snap *s, const char *path, const struct ai_parse_opts *o)
{
	char *buf;
	size_t len;
	int fd;

	char pb[4096];
	const char *open_path;
	int live, rc = 0;

	memset(s, 0, sizeof(*s));
	if (!path)
		path = AI_DEFAULT_INPUT;
	live = !strcmp(path, AI_DEFAULT_INPUT);
	open_path = live ? ai_sys_path(path, pb, sizeof(pb)) : path;
	if (!strcmp(path, "-")) {
		fd = 0;
		s->name = "(stdin)";
	} else {
		fd = open(open_path, O_RDONLY | O_CLOEXEC);
		s->name = path;
	}
	if (fd >= 0 && (rc = ai_read_fd(fd, &buf, &len)) < -1) {
		char msg[256];

		ai_warn("cannot read %s: %s", s->name, ai_read_error(rc, len, msg, sizeof(msg)));
		if (fd > 0)
			close(fd);
		return -1;
	}
	if (fd < 0 || rc < 0) {
		int e = errno;

		if (live && e == ENOENT)
			ai_warn("cannot read %s: %s: this kernel does not profile its memory"
				" allocations (CONFIG_MEM_ALLOC_PROFILING=y, Linux 6.10 or later),"
				" or -f FILE names a capture", path, strerror(e));
		else
			ai_warn("cannot read %s: %s", path, strerror(e));
		if (fd > 0)
			close(fd);
		return -1;
	}
	if (fd > 0)
		close(fd);
	if (live) {
		/* this machine, now: the time and identity of the snapshot */
		s->live = 1;
		s->taken_at = ai_now();
		ai_local_ident(&s->id);
	}
	ai_parse_buffer(s, buf, len, o);
	return 0;
}

void ai_snap_free(struct ai_snap *s)
{
	size_t i;

	for (i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->buf);
	free(s->tags);
	memset(s, 0, sizeof(*s));
}

