/* SPDX-License-Identifier: Apache-2.0 */
/* Splits an EAL argument string (env SPINLANE_EAL_ARGS: space-separated, no quoting) into
 * an argv for rte_eal_init. Pure: no I/O, no globals, no allocation, never logs. */
#ifndef TR_EAL_ARGS_H
#define TR_EAL_ARGS_H

#include <stddef.h>

#define TR_EAL_ARGS_MAX 64        /* arguments, not counting argv[0] */
#define TR_EAL_ARGS_MAX_LEN 4096  /* bytes of the whole string */

struct tr_eal_args {
        int argc;
        char *argv[TR_EAL_ARGS_MAX + 2]; /* argv[0] = prog, NULL-terminated */
        char buf[TR_EAL_ARGS_MAX_LEN + 64];
};

/* Split s (len bytes, need not be NUL-terminated; spaces and tabs separate words) behind
 * argv[0] = prog. -EINVAL for a control or non-ASCII byte or a NUL inside, -E2BIG for
 * more than TR_EAL_ARGS_MAX words, -ENAMETOOLONG when s or prog is too long. ret is
 * untouched on failure. */
int tr_eal_args_split(const char *s, size_t len, const char *prog, struct tr_eal_args *ret);

#endif
