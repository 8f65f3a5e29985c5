// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo's own JSON export read back: {"version": ..., "tags": [{"file",
 * "line", "module", "func", "bytes", "calls", "lines", "extra": {...}},
 * ...]}. Parsed in place like the text format: strings are decoded into
 * the input buffer (a decoded string is never longer than its JSON form)
 * and the tags point there. Other keys are skipped. A tag without one of
 * the fields it needs is left out with a message (malformed); a syntax
 * error ends the reading there, with its line and column (the tags read
 * until then are kept, and the exit status says something went wrong).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo.h"
#include "read.h"

#define MAX_DEPTH 64

struct jp {
	struct parser *ps;
	char *buf, *p, *end;
	int failed;
	/* line counting, forward only: the line of pos, its start */
	const char *pos, *bol;
	size_t line;
};

/* The line and column of pos; positions are asked in input order. */
static void at(struct jp *j, const char *pos, size_t *line, size_t *col)
{
	const char *c;

	if (pos < j->pos) {	/* never in practice: count again */
		j->pos = j->bol = j->buf;
		j->line = 1;
	}
	for (c = j->pos; c < pos && c < j->end; c++)
		if (*c == '\n') {
			j->line++;
			j->bol = c + 1;
		}
	j->pos = c;
	*line = j->line;
	*col = (size_t)(pos - j->bol) + 1;
}

static void syntax(struct jp *j, const char *what)
{
	size_t line, col;

	if (j->failed)
		return;
	j->failed = 1;
	j->ps->s->cut = 1;	/* the rest of the input is not read */
	at(j, j->p, &line, &col);
	j->ps->lineno = line;
	if (j->p >= j->end)
		ai_problem(j->ps, WARNING, "JSON: %s, found the end of the input (cut short?)", what);
	else
		ai_problem(j->ps, WARNING, "JSON: %s at column %zu, found '%c'", what, col,
			   *j->p >= 0x20 && *j->p < 0x7f ? *j->p : '?');
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' ||
				 *j->p == '\r'))
		j->p++;
}

static int eat(struct jp *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return 1;
	}
	return 0;
}

static int hex4(const char *p, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

/* A string, decoded in place; returns it NUL-terminated, or NULL. */
static char *string(struct jp *j)
{
	char *out, *w;

	ws(j);
	if (j->p >= j->end || *j->p != '"') {
		syntax(j, "expected a string");
		return NULL;
	}
	out = w = j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = *j->p++;
		unsigned u;

		if (c < 0x20) {
			j->p--;
			syntax(j, "a control character in a string");
			return NULL;
		}
		if (c != '\\') {
			*w++ = c;
			continue;
		}
		if (j->p >= j->end)
			break;
		c = *j->p++;
		switch (c) {
		case '"': case '\\': case '/': *w++ = c; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u':
			if (j->end - j->p < 4 || hex4(j->p, &u)) {
				syntax(j, "a bad \\u escape");
				return NULL;
			}
			j->p += 4;
			/* UTF-8; the tag fields are checked for ASCII later */
			if (u < 0x80) {
				*w++ = u;
			} else if (u < 0x800) {
				*w++ = 0xc0 | (u >> 6);
				*w++ = 0x80 | (u & 0x3f);
			} else {
				*w++ = 0xe0 | (u >> 12);
				*w++ = 0x80 | ((u >> 6) & 0x3f);
				*w++ = 0x80 | (u & 0x3f);
			}
			break;
		default:
			j->p--;
			syntax(j, "a bad escape in a string");
			return NULL;
		}
	}
	if (j->p >= j->end) {
		syntax(j, "a string without its closing quote");
		return NULL;
	}
	j->p++;
	*w = '\0';
	return out;
}

/* An integer: 0 ok, -1 not an integer (syntax error reported), -2 range */
static int integer(struct jp *j, int64_t min, uint64_t max, int64_t *sv, uint64_t *uv)
{
	int neg = 0, over = 0;
	uint64_t v = 0;
	char *start;

	ws(j);
	start = j->p;
	if (j->p < j->end && *j->p == '-') {
		neg = 1;
		j->p++;
	}
	if (j->p >= j->end || *j->p < '0' || *j->p > '9') {
		j->p = start;
		syntax(j, "expected an integer");
		return -1;
	}
	for (; j->p < j->end && *j->p >= '0' && *j->p <= '9'; j->p++) {
		unsigned d = *j->p - '0';

		if (v > (UINT64_MAX - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) {
		syntax(j, "expected an integer, not a fraction");
		return -1;
	}
	if (neg) {
		if (min >= 0 || over || v > (uint64_t)INT64_MAX + 1)
			return -2;
		*sv = (int64_t)(0 - v);
		*uv = 0;
		return 0;
	}
	if (over || v > max)
		return -2;
	*uv = v;
	*sv = v > INT64_MAX ? INT64_MAX : (int64_t)v;
	return 0;
}

/* A number (taken_at): 0 ok, -1 syntax error reported */
static int number(struct jp *j, double *v)
{
	char b[64], *e;
	size_t n = 0;

	ws(j);
	while (j->p + n < j->end && n < sizeof(b) - 1 && strchr("+-.0123456789eE", j->p[n]))
		n++;
	memcpy(b, j->p, n);
	b[n] = '\0';
	*v = strtod(b, &e);
	if (!n || *e) {
		syntax(j, "expected a number");
		return -1;
	}
	j->p += n;
	return 0;
}

static int literal(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	ws(j);
	if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, w, n)) {
		j->p += n;
		return 1;
	}
	return 0;
}

/* any value, skipped */
static void skip(struct jp *j, int depth)
{
	int64_t sv;
	uint64_t uv;

	if (depth > MAX_DEPTH) {
		syntax(j, "nested too deep");
		return;
	}
	ws(j);
	if (j->p >= j->end) {
		syntax(j, "expected a value");
	} else if (*j->p == '"') {
		string(j);
	} else if (eat(j, '{')) {
		if (eat(j, '}'))
			return;
		do {
			if (!string(j) || !eat(j, ':')) {
				syntax(j, "expected \"key\": value");
				return;
			}
			skip(j, depth + 1);
		} while (!j->failed && eat(j, ','));
		if (!j->failed && !eat(j, '}'))
			syntax(j, "expected ',' or '}'");
	} else if (eat(j, '[')) {
		if (eat(j, ']'))
			return;
		do
			skip(j, depth + 1);
		while (!j->failed && eat(j, ','));
		if (!j->failed && !eat(j, ']'))
			syntax(j, "expected ',' or ']'");
	} else if (!literal(j, "true") && !literal(j, "false") && !literal(j, "null")) {
		if (integer(j, INT64_MIN, UINT64_MAX, &sv, &uv) == -1)
			return;
	}
}

/* printable ASCII without spaces: what the kernel prints in a tag */
static int tag_word(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/*
 * "extra": {"k": "v", ...} back to "k:v k:v", written over the object
 * itself: each pair's text is shorter than its JSON, so the copy never
 * overtakes what is still to be read.
 */
static char *extra(struct jp *j, const char **bad)
{
	char *w, *out, *k, *v;
	size_t kl, vl;

	ws(j);
	out = w = j->p;
	if (!eat(j, '{')) {
		syntax(j, "expected an object for extra");
		return NULL;
	}
	if (eat(j, '}')) {
		*out = '\0';
		return out;
	}
	do {
		k = string(j);
		if (!k || !eat(j, ':')) {
			syntax(j, "expected \"key\": \"value\" in extra");
			return NULL;
		}
		v = string(j);
		if (!v)
			return NULL;
		if (!*k || !tag_word(k) || strchr(k, ':') || !tag_word(v))
			*bad = "an extra key or value with spaces or other bytes";
		kl = strlen(k);
		vl = strlen(v);
		memmove(w, k, kl);
		w += kl;
		*w++ = ':';
		memmove(w, v, vl);
		w += vl;
		*w++ = ' ';
	} while (eat(j, ','));
	if (!eat(j, '}')) {
		syntax(j, "expected ',' or '}' in extra");
		return NULL;
	}
	w[-1] = '\0';
	return out;
}

/* one element of "tags" */
static void tag(struct jp *j)
{
	struct ai_tag t;
	const char *bad = NULL;
	size_t line, col;
	unsigned have = 0;
	int64_t sv;
	uint64_t uv;
	char *key;

	ws(j);
	at(j, j->p, &line, &col);
	if (!eat(j, '{')) {
		syntax(j, "expected a tag object");
		return;
	}
	memset(&t, 0, sizeof(t));
	t.module = t.extra = "";
	t.nlines = 1;
	t.lineno = line > UINT32_MAX ? UINT32_MAX : line;
	if (!eat(j, '}')) {
		do {
			key = string(j);
			if (!key || !eat(j, ':')) {
				syntax(j, "expected \"key\": value in a tag");
				return;
			}
			if (!strcmp(key, "file") || !strcmp(key, "func")) {
				char *v = string(j);

				if (!v)
					return;
				if (!*v || !tag_word(v))
					bad = key[1] == 'i' ? "a file that is empty or not printable ASCII"
							    : "a func that is empty or not printable ASCII";
				if (key[1] == 'i')
					t.file = v;
				else
					t.func = v;
				have |= key[1] == 'i' ? 1 : 2;
			} else if (!strcmp(key, "module")) {
				if (!literal(j, "null")) {
					char *v = string(j);

					if (!v)
						return;
					if (!tag_word(v))
						bad = "a module that is not printable ASCII";
					t.module = v;
				}
			} else if (!strcmp(key, "line") || !strcmp(key, "lines") ||
				   !strcmp(key, "bytes") || !strcmp(key, "calls")) {
				int r = integer(j, !strcmp(key, "bytes") ? INT64_MIN : 0,
						!strcmp(key, "bytes") ? INT64_MAX :
						!strcmp(key, "calls") ? UINT64_MAX : UINT32_MAX,
						&sv, &uv);

				if (r == -1)
					return;
				if (r == -2) {
					bad = "a number out of range";
					continue;
				}
				if (key[0] == 'b') {
					t.bytes = sv;
					have |= 4;
				} else if (key[0] == 'c') {
					t.calls = uv;
					have |= 8;
				} else if (!strcmp(key, "line")) {
					t.line = uv;
					have |= 16;
				} else {
					t.nlines = uv ? uv : 1;
				}
			} else if (!strcmp(key, "clamped")) {
				if (literal(j, "true")) {
					t.flags |= AI_F_SATURATED;
				} else if (!literal(j, "false")) {
					syntax(j, "expected true or false for clamped");
					return;
				}
			} else if (!strcmp(key, "extra")) {
				char *x = extra(j, &bad);

				if (!x)
					return;
				t.extra = x;
			} else {
				skip(j, 1);	/* negative (derived), or newer keys */
				if (j->failed)
					return;
			}
		} while (eat(j, ','));
		if (!eat(j, '}')) {
			syntax(j, "expected ',' or '}' after a tag's field");
			return;
		}
	}
	j->ps->lineno = line;
	if ((have & 31) != 31) {
		ai_problem(j->ps, MALFORMED, "JSON: a tag without %s",
			   !(have & 1) ? "\"file\"" : !(have & 2) ? "\"func\"" :
			   !(have & 16) ? "\"line\"" : !(have & 4) ? "\"bytes\"" : "\"calls\"");
		return;
	}
	if (bad) {
		ai_problem(j->ps, MALFORMED, "JSON: a tag with %s", bad);
		return;
	}
	if (t.bytes < 0)
		t.flags |= AI_F_NEGATIVE;
	{
		const char *x = t.extra;

		while ((x = strstr(x, "accurate:no")))
			if ((x == t.extra || x[-1] == ' ') && (!x[11] || x[11] == ' ')) {
				t.flags |= AI_F_INACCURATE;
				break;
			} else {
				x++;
			}
	}
	ai_add_tag(j->ps->s, &t);
}

void ai_parse_json(struct parser *ps, char *buf, size_t len)
{
	struct jp j = { .ps = ps, .buf = buf, .p = buf, .end = buf + len,
			.pos = buf, .bol = buf, .line = 1 };
	struct ai_snap *s = ps->s;
	size_t line, col;
	char *key;

	s->has_header = 1;	/* the version is a field */
	s->json = 1;
	if (!eat(&j, '{')) {
		syntax(&j, "expected '{'");
		goto out;
	}
	if (eat(&j, '}'))
		goto out;
	do {
		key = string(&j);
		if (!key || !eat(&j, ':')) {
			syntax(&j, "expected \"key\": value");
			goto out;
		}
		if (!strcmp(key, "version")) {
			char *v = string(&j);

			if (!v)
				goto out;
			if (strlen(v) < sizeof(s->version))
				strcpy(s->version, v);
		} else if (!strcmp(key, "taken_at")) {
			if (number(&j, &s->taken_at))
				goto out;
			if (!(s->taken_at > 0 && s->taken_at <= ai_now() + 86400)) {
				ai_problem(ps, WARNING, "JSON: taken_at is not a time: left out");
				s->taken_at = 0;
			}
		} else if (!strcmp(key, "host") || !strcmp(key, "machine_id") ||
			   !strcmp(key, "boot_id") || !strcmp(key, "kernel")) {
			/* where it was taken (allocinfo export of the live file) */
			char *v = string(&j), *d = key[0] == 'h' ? s->id.host :
				key[0] == 'm' ? s->id.machine_id : key[0] == 'b' ?
				s->id.boot_id : s->id.kernel;
			size_t dn = key[0] == 'h' ? sizeof(s->id.host) : key[0] == 'm' ?
				sizeof(s->id.machine_id) : key[0] == 'b' ?
				sizeof(s->id.boot_id) : sizeof(s->id.kernel);

			if (!v)
				goto out;
			if (ai_ident_word(v) && strlen(v) < dn) {
				strcpy(d, v);
			} else {
				s->ident_bad |= key[0] == 'h' ? AI_ID_HOST : key[0] == 'm' ?
					AI_ID_MACHINE : key[0] == 'b' ? AI_ID_BOOT : 0;
				ai_problem(ps, WARNING, "JSON: %s is not a name without spaces"
					   " (at most %zu characters): left out", key, dn - 1);
			}
		} else if (!strcmp(key, "tags")) {
			if (!eat(&j, '[')) {
				syntax(&j, "expected '[' for tags");
				goto out;
			}
			if (!eat(&j, ']')) {
				do
					tag(&j);
				while (!j.failed && eat(&j, ','));
				if (j.failed)
					goto out;
				if (!eat(&j, ']')) {
					syntax(&j, "expected ',' or ']' after a tag");
					goto out;
				}
			}
		} else {
			skip(&j, 1);
			if (j.failed)
				goto out;
		}
	} while (eat(&j, ','));
	if (!eat(&j, '}')) {
		syntax(&j, "expected ',' or '}'");
		goto out;
	}
	ws(&j);
	if (j.p < j.end)
		syntax(&j, "more after the end of the object");
out:
	at(&j, j.end, &line, &col);
	s->nlines = line;
	ps->lineno = 0;
}
