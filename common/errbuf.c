/* SPDX-License-Identifier: Apache-2.0 */
/* errbuf: bounded error-message formatting for the pure modules (see errbuf.h). No I/O. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void errbuf_printf(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        if (!buf || size == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}
