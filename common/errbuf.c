/* SPDX-License-Identifier: Apache-2.0 */
/* errbuf: bounded error-message formatting for the pure modules (see errbuf.h). No I/O. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void errbuf_printf(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        if (!buf || size == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

void sb_add(sbuf *b, const char *fmt, ...)
{
        va_list ap;
        int k;

        if (b->cut)
                return;
        va_start(ap, fmt);
        k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t)k >= sizeof(b->s) - b->n) {
                b->cut = true;
                memcpy(b->s + sizeof(b->s) - 4, "...", 4);
                b->n = sizeof(b->s) - 1;
                return;
        }
        b->n += (size_t)k;
}
