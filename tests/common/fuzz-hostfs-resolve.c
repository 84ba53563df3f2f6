/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: host path resolution inside a root (common/hostfs.c). Each input is a path
 * resolved read-only in a fixed tree of links that climb out, loop, dangle and jump to
 * absolute names: openat2 RESOLVE_IN_ROOT and the user-space walk must agree (both open,
 * the same inode; or both fail), and what opens lies inside the root. */
#include "hostfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char top[] = "/tmp/spin-fuzz-hostfs-XXXXXX";
static char root[PATH_MAX];
static int root_fd = -1;

static void cleanup(void)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", top);
}

static void must(int ok, const char *what)
{
        if (!ok) {
                perror(what);
                abort();
        }
}

static void at(const char *rel, char *buf, size_t size) { snprintf(buf, size, "%s%s", top, rel); }

static void setup(void)
{
        static const char *const dirs[] = {"/root", "/root/a", "/root/a/b", "/outside", "/outside/a",
                                           "/outside/a/b", NULL};
        static const char *const files[] = {"/root/a/b/c", "/outside/secret", "/outside/a/b/c", NULL};
        /* link name (under the root) -> target */
        static const char *const links[][2] = {
                {"/up", "../../.."},
                {"/abs", "/a"},
                {"/loop", "loop"},
                {"/out", "OUT"}, /* replaced by the outside folder's absolute path */
                {"/rel-out", "../outside"},
                {"/dirlink", "a"},
                {"/a/b/uplink", "../../../.."},
                {"/chain1", "chain2"},
                {"/chain2", "/a/b/../b/c"},
                {"/dangling", "/nowhere/at/all"},
                {"/a/b/self", "."},
                {"/a/b/parent", ".."},
                {"/trail", "a/b/"},
                {NULL, NULL},
        };
        char p[PATH_MAX + 64], q[PATH_MAX];

        must(mkdtemp(top) != NULL, "mkdtemp");
        atexit(cleanup);
        for (size_t i = 0; dirs[i]; i++) {
                at(dirs[i], p, sizeof(p));
                must(mkdir(p, 0755) == 0, p);
        }
        for (size_t i = 0; files[i]; i++) {
                at(files[i], p, sizeof(p));
                FILE *f = fopen(p, "w");
                must(f != NULL, p);
                fputs("x\n", f);
                fclose(f);
        }
        at("/root", root, sizeof(root));
        for (size_t i = 0; links[i][0]; i++) {
                snprintf(p, sizeof(p), "%s%s", root, links[i][0]);
                const char *target = links[i][1];
                if (strcmp(target, "OUT") == 0) {
                        at("/outside", q, sizeof(q));
                        target = q;
                }
                must(symlink(target, p) == 0, p);
        }
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        must(root_fd >= 0, root);
}

/* The fd's file lies under the root (its name as /proc tells it). */
static int inside(int fd)
{
        char link[64], name[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, name, sizeof(name) - 1);
        if (n < 0)
                return 0;
        name[n] = '\0';
        size_t rl = strlen(root);
        return strncmp(name, root, rl) == 0 && (name[rl] == '\0' || name[rl] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char path[PATH_MAX + 64];
        struct stat a, b;

        if (root_fd < 0)
                setup();
        if (size >= sizeof(path))
                size = sizeof(path) - 1;
        memcpy(path, data, size);
        path[size] = '\0';
        /* the first byte picks the flags: a plain read, an O_PATH, a directory, no follow */
        static const int flag_sets[] = {O_RDONLY | O_NONBLOCK, O_PATH, O_RDONLY | O_DIRECTORY,
                                        O_PATH | O_NOFOLLOW};
        int flags = flag_sets[size ? data[0] % 4 : 0];

        int f1 = hostfs_resolve_openat2(root_fd, path, flags, 0);
        /* no openat2 here, or a rename elsewhere on the machine raced its ".." check
         * through every retry: the walk alone, still inside */
        if (f1 == -ENOSYS || f1 == -EPERM || f1 == -EAGAIN)
                f1 = -1000;
        int f2 = hostfs_resolve_walk(root_fd, path, flags, 0);
        if (f2 >= 0 && !inside(f2))
                abort();
        if (f1 >= 0 && !inside(f1))
                abort();
        if (f1 != -1000 && (f1 >= 0) != (f2 >= 0) && f2 != -ENAMETOOLONG) {
                fprintf(stderr, "\"%s\" flags %#x: openat2 %d, walk %d\n", path, (unsigned)flags, f1, f2);
                abort();
        }
        if (f1 >= 0 && f2 >= 0) {
                if (fstat(f1, &a) < 0 || fstat(f2, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
                        fprintf(stderr, "\"%s\": openat2 and the walk opened different files\n", path);
                        abort();
                }
        }
        if (f1 >= 0)
                close(f1);
        if (f2 >= 0)
                close(f2);
        return 0;
}
