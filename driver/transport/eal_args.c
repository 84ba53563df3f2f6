/* SPDX-License-Identifier: Apache-2.0 */
/* EAL argument string splitting. Pure: no I/O, no globals, no allocation, never logs. */
#include "eal_args.h"

#include <errno.h>
#include <string.h>

int tr_eal_args_split(const char *s, size_t len, const char *prog, struct tr_eal_args *ret)
{
        struct tr_eal_args a;
        size_t plen, pos = 0, i = 0;

        if (!s || !prog || !ret)
                return -EINVAL;
        plen = strnlen(prog, 64);
        if (plen >= 64)
                return -ENAMETOOLONG;
        if (len > TR_EAL_ARGS_MAX_LEN)
                return -ENAMETOOLONG;
        memcpy(a.buf, prog, plen + 1);
        a.argv[0] = a.buf;
        a.argc = 1;
        pos = plen + 1;
        while (i < len) {
                unsigned char c = (unsigned char)s[i];
                if (c == ' ' || c == '\t') {
                        i++;
                        continue;
                }
                if (a.argc > TR_EAL_ARGS_MAX)
                        return -E2BIG;
                a.argv[a.argc++] = a.buf + pos;
                while (i < len && s[i] != ' ' && s[i] != '\t') {
                        c = (unsigned char)s[i];
                        if (c < 0x21 || c > 0x7e)
                                return -EINVAL;
                        a.buf[pos++] = (char)c;
                        i++;
                }
                a.buf[pos++] = '\0';
        }
        a.argv[a.argc] = NULL;
        /* pointers into a.buf must point into ret->buf after the copy */
        ret->argc = a.argc;
        memcpy(ret->buf, a.buf, pos);
        for (int k = 0; k < a.argc; k++)
                ret->argv[k] = ret->buf + (a.argv[k] - a.buf);
        ret->argv[a.argc] = NULL;
        return 0;
}
