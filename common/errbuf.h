/* SPDX-License-Identifier: Apache-2.0 */
/* errbuf: the one way a pure module writes its "what was wrong" message into the caller's
 * buffer. Never allocates, never logs; a NULL buffer or size 0 means the caller wants no
 * message. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Formats into buf (always NUL-terminated when size > 0, cut at size - 1). */
void errbuf_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A bounded text accumulator for messages and remedies: appends past the end are dropped
 * and the text ends in "..." so a huge node cannot make a huge line. Zero-initialise
 * (sbuf b = {0}); nothing to free. */
typedef struct sbuf {
        char s[1536];
        size_t n;
        bool cut;
} sbuf;

void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline const char *sb_str(const sbuf *b) { return b->s; }
