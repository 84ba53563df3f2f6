/* SPDX-License-Identifier: Apache-2.0 */
/* errbuf: the one way a pure module writes its "what was wrong" message into the caller's
 * buffer. Never allocates, never logs; a NULL buffer or size 0 means the caller wants no
 * message. */
#pragma once

#include <stddef.h>

/* Formats into buf (always NUL-terminated when size > 0, cut at size - 1). */
void errbuf_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
