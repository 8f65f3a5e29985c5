/* SPDX-License-Identifier: GPL-2.0 */
/* The reading layer's own: the parser state, shared by read.c (the text
 * format) and read_json.c (allocinfo's JSON export read back). */
#ifndef ALLOCINFO_READ_H
#define ALLOCINFO_READ_H

#include "allocinfo.h"

/*
 * The state of one parse: the snapshot it fills, the options it was
 * given, the line it is at, and the messages it reported. Every problem
 * goes through ai_problem(), which prints it (up to o->max_msgs) and counts
 * it, so no caller counts a message itself.
 */
struct parser {
	struct ai_snap *s;
	const struct ai_parse_opts *o;
	size_t lineno;		/* the line being read; 0: the input as a whole */
	size_t msgs;		/* problems reported, printed or not */
};

enum problem {
	MALFORMED,	/* the line is left out: s->skipped */
	WARNING,	/* the input is used, but not as it should be: s->warnings */
};

void ai_problem(struct parser *p, enum problem kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void ai_add_tag(struct ai_snap *s, const struct ai_tag *t);
/* the tags of a JSON export [buf, buf + len), parsed in place */
void ai_parse_json(struct parser *ps, char *buf, size_t len);

#endif
