/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded reads of one regular file by its own path (no root joined: hostfs does that for
 * host paths and reads through these): open refusing anything but a regular file, read to
 * EOF into a bounded buffer. Owns no state; never logs. */
#ifndef SPIN_READFILE_H
#define SPIN_READFILE_H

#include <stddef.h>

/* path opened read-only, close-on-exec, non-blocking, as no controlling terminal: the fd,
 * -EINVAL when it is not a regular file, else -errno. */
int readfile_open(const char *path);

/* fd read to EOF into buf[0..size-1), NUL-terminated; -EFBIG if more remains, -EINVAL
 * for size 0. */
int readfile_fd(int fd, char *buf, size_t size, size_t *ret_len);

/* The whole file into a malloc'ed, NUL-terminated buffer of at most max bytes (-EFBIG when
 * longer); *ret and *ret_len (if not NULL) untouched on failure. */
int readfile_alloc(const char *path, size_t max, char **ret, size_t *ret_len);

#endif
