/* SPDX-License-Identifier: Apache-2.0 */
/* Host file access under a root directory: every path resolved inside the root (openat2
 * RESOLVE_IN_ROOT, or the same walk in user space with O_NOFOLLOW where the kernel or a
 * seccomp filter refuses openat2), bounded non-blocking reads, single-write sysfs stores,
 * atomic file replacement, mkdir -p, unlink. Owns no state; never logs. */
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
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>
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

static int resolve_open(const hostfs *h, const char *path, int flags, mode_t mode);

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
        struct statfs sfs;

        if (hostfs_is_real_root(h))
                return true;
        _cleanup_close_ int fd = resolve_open(h, "/proc", O_PATH | O_DIRECTORY, 0);
        return fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

int hostfs_path(const hostfs *h, const char *path, char *buf, size_t size)
{
        if (!path || path[0] != '/')
                return -EINVAL;
        return hostfs_fmt(buf, size, "%s%s", h->root, path);
}

/* ---- resolution inside the root ---- */

/* The kernel's own bound on symlinks followed in one lookup (MAXSYMLINKS). */
#define WALK_MAX_LINKS 40
/* Directories held open at once by the walk: deeper paths than any host has. */
#define WALK_MAX_DEPTH 256
/* openat2 tries while it answers EAGAIN (a racing rename), before the walk does it. */
#define WALK_OPENAT2_RETRIES 8

int hostfs_resolve_openat2(int root_fd, const char *path, int flags, mode_t mode)
{
        struct open_how how = {
                .flags = (uint64_t)(unsigned)flags | O_CLOEXEC,
                .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        long fd;
        int again = 0;

        /* EAGAIN: a rename or mount anywhere on the system raced with a ".." of the
         * lookup, and the kernel could not prove it stayed inside (openat2(2)); retried,
         * then left to the caller (resolve_open walks instead). */
        do
                fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++again < WALK_OPENAT2_RETRIES)));
        return fd < 0 ? -errno : (int)fd;
}

static void close_stack(int *stack, size_t *depth)
{
        while (*depth > 0)
                close(stack[--*depth]);
}

/* Put a symlink's target in front of what is left of the path: work = target "/" rest. */
static int splice_link(char *work, size_t size, const char *target, const char *rest)
{
        char tmp[PATH_MAX];
        int n = snprintf(tmp, sizeof(tmp), "%s%s%s", target, *rest ? "/" : "", rest);
        if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= size)
                return -ENAMETOOLONG;
        memcpy(work, tmp, (size_t)n + 1);
        return 0;
}

int hostfs_resolve_walk(int root_fd, const char *path, int flags, mode_t mode)
{
        char work[PATH_MAX], name[NAME_MAX + 1], target[PATH_MAX];
        int stack[WALK_MAX_DEPTH];
        size_t depth = 0;
        unsigned links = 0;
        int r;

        if (!path)
                return -EINVAL;
        if (!*path)
                return -ENOENT;
        if (strlen(path) >= sizeof(work))
                return -ENAMETOOLONG;
        memcpy(work, path, strlen(path) + 1);
        flags |= O_CLOEXEC;

        /* stack[depth-1] is the directory reached so far; below it, the ones above it, up
         * to the root (an empty stack: the root itself). ".." pops, never past the root;
         * an absolute link empties the stack. */
        for (;;) {
                const char *p = work;
                int cur = depth ? stack[depth - 1] : root_fd;

                while (*p == '/')
                        p++;
                const char *end = strchr(p, '/');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                const char *rest = p + len;
                bool trailing = false;
                while (*rest == '/') {
                        rest++;
                        trailing = true;
                }
                bool last = *rest == '\0';

                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
                        if (len == 2 && depth > 0)
                                close(stack[--depth]);
                        if (last) {
                                cur = depth ? stack[depth - 1] : root_fd;
                                r = openat(cur, ".", flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW), mode);
                                r = r < 0 ? -errno : r;
                                close_stack(stack, &depth);
                                return r;
                        }
                        memmove(work, rest, strlen(rest) + 1);
                        continue;
                }
                if (len > NAME_MAX) {
                        close_stack(stack, &depth);
                        return -ENAMETOOLONG;
                }
                memcpy(name, p, len);
                name[len] = '\0';

                if (last) {
                        int f = flags | (trailing ? O_DIRECTORY : 0);
                        /* a trailing slash follows a last link, O_NOFOLLOW or not */
                        bool follow = !(flags & O_NOFOLLOW) || trailing;
                        int fd = openat(cur, name, f | O_NOFOLLOW, mode);
                        if (fd >= 0 && follow && (f & O_PATH)) {
                                struct stat st;
                                if (fstat(fd, &st) < 0) {
                                        r = -errno;
                                        close(fd);
                                        close_stack(stack, &depth);
                                        return r;
                                }
                                if (!S_ISLNK(st.st_mode)) {
                                        close_stack(stack, &depth);
                                        return fd;
                                }
                                close(fd);
                                fd = -1;
                                errno = ELOOP;
                        } else if (fd >= 0) {
                                close_stack(stack, &depth);
                                return fd;
                        }
                        r = -errno;
                        if (!follow || (r != -ELOOP && r != -ENOTDIR && r != -EEXIST)) {
                                close_stack(stack, &depth);
                                return r;
                        }
                        /* ELOOP (or ENOTDIR/EEXIST from O_DIRECTORY/O_EXCL): a link? */
                        ssize_t n = readlinkat(cur, name, target, sizeof(target) - 1);
                        if (n < 0) {
                                close_stack(stack, &depth);
                                return r;
                        }
                        if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
                                close_stack(stack, &depth);
                                return -EEXIST;
                        }
                        if (n == 0) {
                                close_stack(stack, &depth);
                                return -ENOENT;
                        }
                        target[n] = '\0';
                        if (++links > WALK_MAX_LINKS) {
                                close_stack(stack, &depth);
                                return -ELOOP;
                        }
                        if ((r = splice_link(work, sizeof(work), target, trailing ? "." : "")) < 0) {
                                close_stack(stack, &depth);
                                return r;
                        }
                        if (target[0] == '/')
                                close_stack(stack, &depth);
                        continue;
                }

                int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0) {
                        r = -errno;
                        if (fd >= 0)
                                close(fd);
                        close_stack(stack, &depth);
                        return r;
                }
                if (S_ISLNK(st.st_mode)) {
                        ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
                        r = n < 0 ? -errno : 0;
                        close(fd);
                        if (r == 0 && n == 0)
                                r = -ENOENT;
                        if (r == 0 && ++links > WALK_MAX_LINKS)
                                r = -ELOOP;
                        if (r == 0) {
                                target[n] = '\0';
                                char restbuf[PATH_MAX];
                                memcpy(restbuf, rest, strlen(rest) + 1);
                                r = splice_link(work, sizeof(work), target, *restbuf ? restbuf : ".");
                        }
                        if (r < 0) {
                                close_stack(stack, &depth);
                                return r;
                        }
                        if (target[0] == '/')
                                close_stack(stack, &depth);
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        close(fd);
                        close_stack(stack, &depth);
                        return -ENOTDIR;
                }
                if (depth == WALK_MAX_DEPTH) {
                        close(fd);
                        close_stack(stack, &depth);
                        return -ENAMETOOLONG;
                }
                stack[depth++] = fd;
                memmove(work, rest, strlen(rest) + 1);
        }
}

/* Open path as resolved inside h's root; under the real root a plain openat. */
static int resolve_open(const hostfs *h, const char *path, int flags, mode_t mode)
{
        int fd;

        if (!path || path[0] != '/')
                return -EINVAL;
        if (strlen(h->root) + strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;
        if (hostfs_is_real_root(h)) {
                fd = open(path, flags | O_CLOEXEC, mode);
                return fd < 0 ? -errno : fd;
        }
        _cleanup_close_ int root_fd = open(h->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        fd = hostfs_resolve_openat2(root_fd, path, flags, mode);
        /* no openat2 in this kernel (before 5.6), a seccomp filter that refuses it, or
         * renames elsewhere that keep racing its ".." check */
        if (fd == -ENOSYS || fd == -EPERM || fd == -EAGAIN)
                fd = hostfs_resolve_walk(root_fd, path, flags, mode);
        return fd;
}

int hostfs_open_flags(const hostfs *h, const char *path, int flags, mode_t mode)
{
        return resolve_open(h, path, flags, mode);
}

/* The directory holding path's last component, opened (O_RDONLY|O_DIRECTORY) inside the
 * root, and that component in name. The last component is never resolved: what is done
 * with it (*at calls) acts on the name itself, a link included. */
static int open_parent(const hostfs *h, const char *path, char *name, size_t size)
{
        char dir[PATH_MAX];
        size_t n;

        if (!path || path[0] != '/')
                return -EINVAL;
        n = strlen(path);
        if (n >= sizeof(dir))
                return -ENAMETOOLONG;
        memcpy(dir, path, n + 1);
        while (n > 1 && dir[n - 1] == '/')
                dir[--n] = '\0';
        char *slash = strrchr(dir, '/');
        const char *base = slash + 1;
        if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return -EINVAL;
        if (strlen(base) >= size)
                return -ENAMETOOLONG;
        memcpy(name, base, strlen(base) + 1);
        if (slash == dir)
                slash[1] = '\0';
        else
                *slash = '\0';
        return resolve_open(h, dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0);
}

static int open_regular(const hostfs *h, const char *path)
{
        struct stat st;

        _cleanup_close_ int fd = resolve_open(h, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return TAKE_FD(fd);
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
        size_t len = 0;
        int r;

        if (max == 0 || max > HOSTFS_MAX_FILE)
                max = HOSTFS_MAX_FILE;
        _cleanup_close_ int fd = open_regular(h, path);
        if (fd < 0)
                return fd;
        _cleanup_free_ char *buf = malloc(max + 1);
        if (!buf)
                return -ENOMEM;
        if ((r = readfile_fd(fd, buf, max + 1, &len)) < 0)
                return r;
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
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
        char name[NAME_MAX + 1], target[PATH_MAX];
        ssize_t n;

        _cleanup_close_ int dfd = open_parent(h, path, name, sizeof(name));
        if (dfd < 0)
                return dfd;
        n = readlinkat(dfd, name, target, sizeof(target) - 1);
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
        _cleanup_close_ int fd = resolve_open(h, path, O_PATH, 0);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, st) < 0)
                return -errno;
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
        size_t len = strlen(data);
        ssize_t k;

        _cleanup_close_ int fd = resolve_open(h, path, O_WRONLY | O_TRUNC | O_NOCTTY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
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

/* A fresh temporary file in dfd, beside name (O_EXCL, never through a planted link). */
static int open_temp(int dfd, const char *name, char *tmp, size_t size)
{
        static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

        for (int tries = 0; tries < 100; tries++) {
                uint64_t v = 0;
                if (getentropy(&v, sizeof(v)) < 0)
                        return -errno;
                char suffix[7];
                for (size_t i = 0; i < 6; i++, v /= 36)
                        suffix[i] = digits[v % 36];
                suffix[6] = '\0';
                if (hostfs_fmt(tmp, size, ".%s.tmp%s", name, suffix) < 0)
                        return -ENAMETOOLONG;
                int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

int hostfs_write_atomic(const hostfs *h, const char *path, const char *data, mode_t mode)
{
        char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
        int r;

        _cleanup_close_ int dfd = open_parent(h, path, name, sizeof(name));
        if (dfd < 0)
                return dfd;
        _cleanup_close_ int fd = open_temp(dfd, name, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        r = write_all(fd, data, strlen(data));
        if (r == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0 || renameat(dfd, tmp, dfd, name) < 0))
                r = -errno;
        if (r < 0) {
                (void)unlinkat(dfd, tmp, 0);
                return r;
        }
        /* Make the rename durable too. */
        (void)fsync(dfd);
        return 0;
}

int hostfs_unlink(const hostfs *h, const char *path)
{
        char name[NAME_MAX + 1];

        _cleanup_close_ int dfd = open_parent(h, path, name, sizeof(name));
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return dfd;
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int hostfs_mkdir_p(const hostfs *h, const char *path)
{
        char buf[PATH_MAX], name[NAME_MAX + 1];
        size_t n;

        if (!path || path[0] != '/')
                return -EINVAL;
        if ((n = strlen(path)) >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        /* Each component in turn, made in its parent as resolved inside the root: a link
         * on the way leads somewhere under the root, never out of it. */
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (p[-1] != '/') {
                        _cleanup_close_ int dfd = open_parent(h, buf, name, sizeof(name));
                        if (dfd < 0 && dfd != -EINVAL)
                                return dfd;
                        if (dfd >= 0 && mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
                                return -errno;
                }
                *p = c;
                if (!c)
                        break;
        }
        _cleanup_close_ int fd = resolve_open(h, path, O_PATH, 0);
        struct stat st;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int hostfs_opendir(const hostfs *h, const char *path, DIR **ret)
{
        DIR *d;
        int r;

        int fd = resolve_open(h, path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        *ret = d;
        return 0;
}
