/* SPDX-License-Identifier: Apache-2.0 */
/* Host file access under a root directory: bounded, non-blocking reads, single-write
 * sysfs stores, atomic file replacement, mkdir -p. Owns no state; never logs. */
#include "hostfs.h"

#include "cleanup.h"
#include "parse.h"
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

int hostfs_fmt(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int hostfs_fmt_append(char *buf, size_t size, const char *fmt, ...)
{
        size_t n = strnlen(buf, size);
        va_list ap;
        int k;

        if (n + 1 >= size)
                return size ? -ENAMETOOLONG : -EINVAL;
        va_start(ap, fmt);
        k = vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t)k >= size - n)
                return -ENAMETOOLONG;
        return 0;
}

int hostfs_init(hostfs *h, const char *root)
{
        struct stat st;
        size_t n;

        if (!root || !*root || strcmp(root, "/") == 0) {
                h->root[0] = '\0';
                return 0;
        }
        n = strlen(root);
        while (n > 1 && root[n - 1] == '/')
                n--;
        if (n >= sizeof(h->root) - 64)
                return -ENAMETOOLONG;
        if (stat(root, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        memcpy(h->root, root, n);
        h->root[n] = '\0';
        return 0;
}

bool hostfs_is_real_root(const hostfs *h) { return h->root[0] == '\0'; }

bool hostfs_is_live(const hostfs *h)
{
        char full[PATH_MAX];
        struct statfs sfs;

        if (hostfs_is_real_root(h))
                return true;
        return hostfs_path(h, "/proc", full, sizeof(full)) == 0 && statfs(full, &sfs) == 0 &&
               sfs.f_type == PROC_SUPER_MAGIC;
}

int hostfs_path(const hostfs *h, const char *path, char *buf, size_t size)
{
        if (!path || path[0] != '/')
                return -EINVAL;
        return hostfs_fmt(buf, size, "%s%s", h->root, path);
}

static int open_regular(const hostfs *h, const char *path)
{
        char full[PATH_MAX];
        int r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        return readfile_open(full);
}

int hostfs_open(const hostfs *h, const char *path) { return open_regular(h, path); }

int hostfs_read_lines(const hostfs *h, const char *path, size_t max_line,
                      int (*cb)(void *userdata, const char *line, size_t len), void *userdata)
{
        size_t cap = max_line + 2, have = 0;
        int r;

        if (max_line == 0 || max_line > (64u << 20))
                return -EINVAL;
        _cleanup_close_ int fd = open_regular(h, path);
        if (fd < 0)
                return fd;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + have, cap - 1 - have);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (memchr(buf + have, '\0', (size_t)k))
                        return -EBADMSG;
                have += (size_t)k;
                size_t start = 0;
                for (;;) {
                        char *nl = memchr(buf + start, '\n', have - start);
                        if (!nl)
                                break;
                        size_t n = (size_t)(nl - (buf + start));
                        if (n > max_line)
                                return -EMSGSIZE;
                        *nl = '\0';
                        if ((r = cb(userdata, buf + start, n)) < 0)
                                return r;
                        start += n + 1;
                }
                memmove(buf, buf + start, have - start);
                have -= start;
                if (have > max_line)
                        return -EMSGSIZE;
                if (k == 0)
                        break;
        }
        if (have) {
                buf[have] = '\0';
                if ((r = cb(userdata, buf, have)) < 0)
                        return r;
        }
        return 0;
}

const char *hostfs_mounts_path(const hostfs *h)
{
        if (hostfs_is_real_root(h))
                return "/proc/self/mounts";
        if (hostfs_is_live(h) || hostfs_exists(h, "/proc/1/mounts") != 0)
                return "/proc/1/mounts";
        return "/proc/mounts";
}

int hostfs_read(const hostfs *h, const char *path, char *buf, size_t size, size_t *ret_len)
{
        size_t len = 0;
        int r;

        _cleanup_close_ int fd = open_regular(h, path);
        if (fd < 0)
                return fd;
        r = readfile_fd(fd, buf, size, &len);
        if (r < 0)
                return r;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int hostfs_read_str(const hostfs *h, const char *path, char *buf, size_t size)
{
        size_t len = 0;
        int r = hostfs_read(h, path, buf, size, &len);
        if (r < 0)
                return r;
        if (strlen(buf) != len) /* an embedded NUL: the text would lie about its length */
                return -EINVAL;
        parse_strip(buf);
        return 0;
}

int hostfs_read_alloc(const hostfs *h, const char *path, size_t max, char **ret, size_t *ret_len)
{
        char full[PATH_MAX];
        int r;

        if (max == 0 || max > HOSTFS_MAX_FILE)
                max = HOSTFS_MAX_FILE;
        r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        return readfile_alloc(full, max, ret, ret_len);
}

int hostfs_read_u64(const hostfs *h, const char *path, uint64_t max, uint64_t *ret)
{
        char buf[64];
        int r;

        r = hostfs_read_str(h, path, buf, sizeof(buf));
        if (r < 0)
                return r == -EFBIG ? -EINVAL : r;
        return parse_u64(buf, max, ret);
}

int hostfs_read_int(const hostfs *h, const char *path, int min, int max, int *ret)
{
        char buf[64];
        int r;

        r = hostfs_read_str(h, path, buf, sizeof(buf));
        if (r < 0)
                return r == -EFBIG ? -EINVAL : r;
        return parse_int(buf, min, max, ret);
}

int hostfs_readlink_base(const hostfs *h, const char *path, char *buf, size_t size)
{
        char full[PATH_MAX], target[PATH_MAX];
        ssize_t n;
        int r;

        r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        n = readlink(full, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        while (n > 1 && target[n - 1] == '/')
                target[--n] = '\0';
        const char *base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (!*base)
                return -EINVAL;
        return hostfs_fmt(buf, size, "%s", base);
}

/* stat() a host path: 1 found (*st filled), 0 missing (ENOENT/ENOTDIR), else -errno. */
static int stat_path(const hostfs *h, const char *path, struct stat *st)
{
        char full[PATH_MAX];
        int r;

        r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        if (stat(full, st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        return 1;
}

int hostfs_exists(const hostfs *h, const char *path)
{
        struct stat st;
        return stat_path(h, path, &st);
}

int hostfs_is_chardev(const hostfs *h, const char *path)
{
        struct stat st;
        int r = stat_path(h, path, &st);
        if (r <= 0)
                return r;
        /* Fake trees cannot hold device nodes without mknod; accept a regular file there. */
        if (S_ISCHR(st.st_mode) || (!hostfs_is_real_root(h) && S_ISREG(st.st_mode)))
                return 1;
        return 0;
}

int hostfs_write(const hostfs *h, const char *path, const char *data)
{
        char full[PATH_MAX];
        size_t len = strlen(data);
        ssize_t k;
        int r;

        r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open(full, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        do
                k = write(fd, data, len);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if ((size_t)k != len)
                return -EIO;
        return 0;
}

/* Write all of data to fd, retrying short writes and EINTR. */
static int write_all(int fd, const char *data, size_t len)
{
        size_t off = 0;

        while (off < len) {
                ssize_t k = write(fd, data + off, len - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                off += (size_t)k;
        }
        return 0;
}

int hostfs_write_atomic(const hostfs *h, const char *path, const char *data, mode_t mode)
{
        char full[PATH_MAX], tmp[PATH_MAX], dir[PATH_MAX];
        int r;

        if ((r = hostfs_path(h, path, full, sizeof(full))) < 0 ||
            (r = hostfs_fmt(tmp, sizeof(tmp), "%s.tmpXXXXXX", full)) < 0)
                return r;
        memcpy(dir, full, sizeof(dir));
        char *slash = strrchr(dir, '/');
        if (slash == dir)
                slash[1] = '\0';
        else
                *slash = '\0';
        _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, strlen(data));
        if (r == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0 || rename(tmp, full) < 0))
                r = -errno;
        if (r < 0) {
                (void)unlink(tmp);
                return r;
        }
        /* Make the rename durable too. */
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void)fsync(dfd);
        return 0;
}

int hostfs_mkdir_p(const hostfs *h, const char *path)
{
        char buf[PATH_MAX];
        size_t skip = strlen(h->root) + 1;
        int r;

        r = hostfs_path(h, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        /* Only the components below the root are created. */
        for (char *p = buf + skip; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -errno;
        struct stat st;
        if (stat(buf, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int hostfs_opendir(const hostfs *h, const char *path, DIR **ret)
{
        char full[PATH_MAX];
        DIR *d;
        int r;

        r = hostfs_path(h, path, full, sizeof(full));
        if (r < 0)
                return r;
        d = opendir(full);
        if (!d)
                return -errno;
        *ret = d;
        return 0;
}
