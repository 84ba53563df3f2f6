/* SPDX-License-Identifier: Apache-2.0 */
/* Scope-bound cleanup for control-plane code: _cleanup_free_, _cleanup_close_, TAKE_PTR.
 * Header only; every destructor here accepts NULL / -1. */
#ifndef SPIN_CLEANUP_H
#define SPIN_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p) { free(*(void **)p); }
static inline void cleanup_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
static inline void cleanup_fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
static inline void cleanup_closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cleanup_freep)
#define _cleanup_close_ _cleanup_(cleanup_closep)
#define _cleanup_fclose_ _cleanup_(cleanup_fclosep)
#define _cleanup_closedir_ _cleanup_(cleanup_closedirp)

/* Hand ownership out of a cleanup-tagged variable. */
#define TAKE_PTR(p)                                                                        \
        ({                                                                                 \
                __typeof__(p) _taken = (p);                                                \
                (p) = NULL;                                                                \
                _taken;                                                                    \
        })
#define TAKE_FD(fd)                                                                        \
        ({                                                                                 \
                int _taken = (fd);                                                         \
                (fd) = -1;                                                                 \
                _taken;                                                                    \
        })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#endif
