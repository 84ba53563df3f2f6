/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded reads of one regular file by its own path: the open that refuses anything but a
 * regular file and the read to EOF that stops at a bound, for hostfs (host paths under the
 * root), the Kubernetes client's files and the launcher. Owns no state; never logs. */
#include "readfile.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int readfile_open(const char *path)
{
        struct stat st;

        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return TAKE_FD(fd);
}

int readfile_fd(int fd, char *buf, size_t size, size_t *ret_len)
{
        size_t n = 0;

        if (size == 0)
                return -EINVAL;
        for (;;) {
                char extra;
                char *dst = n < size - 1 ? buf + n : &extra;
                size_t want = n < size - 1 ? size - 1 - n : 1;
                ssize_t k = read(fd, dst, want);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                if (dst == &extra)
                        return -EFBIG;
                n += (size_t)k;
        }
        buf[n] = '\0';
        *ret_len = n;
        return 0;
}

int readfile_alloc(const char *path, size_t max, char **ret, size_t *ret_len)
{
        size_t len = 0;
        int r;

        _cleanup_close_ int fd = readfile_open(path);
        if (fd < 0)
                return fd;
        _cleanup_free_ char *buf = malloc(max + 1);
        if (!buf)
                return -ENOMEM;
        r = readfile_fd(fd, buf, max + 1, &len);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}
