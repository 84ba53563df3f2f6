/* SPDX-License-Identifier: Apache-2.0 */
/* Host file access under a root directory (--root DIR): every /sys, /proc, /dev, /etc,
 * /run, /var/lib/spinlane and /var/lib/kubelet path the project touches goes through
 * here, and every path is resolved inside the root, links included (an absolute link or
 * ".." stops at the root, as in a chroot), for reads and writes. Reads are bounded and
 * never block (O_NONBLOCK, regular files only); never logs. */
#ifndef SPIN_HOSTFS_H
#define SPIN_HOSTFS_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest file hostfs_read_alloc() will take; sysfs attributes are at most a page. */
#define HOSTFS_MAX_FILE (256 * 1024)

typedef struct hostfs {
        char root[PATH_MAX]; /* "" for the real root; never ends in '/' */
} hostfs;

/* root NULL, "" or "/" mean the real root. -ENAMETOOLONG, -ENOENT/-ENOTDIR if root
 * does not exist or is not a directory. */
int hostfs_init(hostfs *h, const char *root);
bool hostfs_is_real_root(const hostfs *h);
/* True when the root holds a live host: the real root, or a root whose /proc is a procfs
 * (--root /host in the DaemonSet). A fake tree's /proc is a plain directory. What only a
 * kernel can answer (netlink, mount(2), ioctls) is asked only of a live root. */
bool hostfs_is_live(const hostfs *h);

/* Join root and an absolute host path into buf. -ENAMETOOLONG, -EINVAL (relative). The
 * string is for messages and for what only takes a path (a unix socket's bind or connect,
 * mount(2)): opening it would follow links out of the root; open through hostfs. */
int hostfs_path(const hostfs *h, const char *path, char *buf, size_t size);

/* Read a whole file into buf (NUL-terminated). -EFBIG when it does not fit in size-1
 * bytes, -EINVAL when it is not a regular file, else -errno of open/read. */
int hostfs_read(const hostfs *h, const char *path, char *buf, size_t size, size_t *ret_len);
/* hostfs_read() then strip the trailing newline/space. */
int hostfs_read_str(const hostfs *h, const char *path, char *buf, size_t size);
/* Read into a malloc'ed buffer of at most max bytes (<= HOSTFS_MAX_FILE). */
int hostfs_read_alloc(const hostfs *h, const char *path, size_t max, char **ret, size_t *ret_len);
/* A file holding one decimal number (as sysfs writes it). -EINVAL names bad content. */
int hostfs_read_u64(const hostfs *h, const char *path, uint64_t max, uint64_t *ret);
int hostfs_read_int(const hostfs *h, const char *path, int min, int max, int *ret);

/* path opened with open(2) flags (O_CLOEXEC added) resolved inside the root: openat2
 * with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, or hostfs_resolve_walk() where openat2
 * answers ENOSYS (before Linux 5.6), EPERM (a seccomp filter) or, after retries, EAGAIN
 * (renames elsewhere racing its ".." check). The fd, or -errno. */
int hostfs_open_flags(const hostfs *h, const char *path, int flags, mode_t mode);
/* The two resolutions under root_fd (a directory), exposed for tests and the fuzz target:
 * the same answer for the same tree, the fd or -errno. The walk opens one component at a
 * time with O_NOFOLLOW, reads each link and goes on from its target (an absolute target
 * from the root; ".." never above it), at most 40 links (ELOOP) and 256 directories deep
 * (ENAMETOOLONG). */
int hostfs_resolve_openat2(int root_fd, const char *path, int flags, mode_t mode);
int hostfs_resolve_walk(int root_fd, const char *path, int flags, mode_t mode);

/* Open a regular file for reading (O_NONBLOCK, O_CLOEXEC): the fd, or -EINVAL when it is
 * not a regular file, else -errno of open. */
int hostfs_open(const hostfs *h, const char *path);

/* Stream a text file line by line, however long the file: cb gets each line without its
 * '\n' (NUL-terminated, len bytes; a last line without '\n' too). A line longer than
 * max_line bytes stops the read with -EMSGSIZE, a NUL byte with -EBADMSG, a negative cb
 * return with that value, a file that is not regular with -EINVAL; else 0 at the end. */
int hostfs_read_lines(const hostfs *h, const char *path, size_t max_line,
                      int (*cb)(void *userdata, const char *line, size_t len), void *userdata);

/* The host's mount table under h: /proc/self/mounts under the real root (the agent's
 * own mount namespace, the one it mounts in); /proc/1/mounts, the host init's, under a
 * live --root (never /proc/mounts there: that is the agent container's own table); in a
 * fake tree /proc/1/mounts when the tree has one, else /proc/mounts. */
const char *hostfs_mounts_path(const hostfs *h);
/* The longest mount table line read (overlay options run to kilobytes). */
#define HOSTFS_MOUNT_LINE_MAX (64 * 1024)

/* The last path component of a symlink's target (e.g. the driver of a PCI device). */
int hostfs_readlink_base(const hostfs *h, const char *path, char *buf, size_t size);
/* 1 exists, 0 does not (ENOENT/ENOTDIR), negative on other errors. Follows links. */
int hostfs_exists(const hostfs *h, const char *path);
/* stat-free check that a path is a character device (or, under a fake root, any file). */
int hostfs_is_chardev(const hostfs *h, const char *path);

/* Write data to an existing file in one write(2); -errno on failure. */
int hostfs_write(const hostfs *h, const char *path, const char *data);
/* Replace path with data atomically: a temporary file next to it, written whole,
 * fsync'ed, given mode, renamed over path, and the directory fsync'ed. On failure path
 * is unchanged and the temporary file is gone. The directory must exist. */
int hostfs_write_atomic(const hostfs *h, const char *path, const char *data, mode_t mode);
/* Remove the file path names (a link itself, not what it points at); 0 when it is not
 * there. Its directory is resolved inside the root. */
int hostfs_unlink(const hostfs *h, const char *path);
/* mkdir -p of a host path (mode 0755 for what it creates); 0 when it already is a
 * directory. -ENAMETOOLONG, else -errno of mkdir. */
int hostfs_mkdir_p(const hostfs *h, const char *path);

int hostfs_opendir(const hostfs *h, const char *path, DIR **ret);

/* printf into buf; -ENAMETOOLONG when cut short. */
int hostfs_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* printf at the end of the NUL-terminated text in buf; -ENAMETOOLONG when cut short
 * (what fit stays, still NUL-terminated). */
int hostfs_fmt_append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
