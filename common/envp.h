/* SPDX-License-Identifier: Apache-2.0 */
/* The one lookup of a name in an environment block (envp, NULL-terminated), for the
 * launcher and the bypass driver's contract parser. Pure: no I/O, no globals. */
#ifndef SPIN_ENVP_H
#define SPIN_ENVP_H

#include <stddef.h>
#include <string.h>

/* The value of the first "NAME=" entry (as getenv), or NULL. Every entry is read: the
 * kernel bounds the environment's size (execve's ARG_MAX), and a fixed count once let
 * padding hide the allocation or a bad AERON_* value. */
static inline const char *envp_get(const char *const *envp, const char *name)
{
        size_t n = strlen(name);

        if (!envp)
                return NULL;
        for (size_t i = 0; envp[i]; i++)
                if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
                        return envp[i] + n + 1;
        return NULL;
}

#endif
