/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for host file access under a root: bounds, bad content, links, FIFOs. */
#include "hostfs.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/spin-test-hostfs-XXXXXX";

static void put(const char *rel, const char *data, size_t len)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s%s", root, rel);
        FILE *f = fopen(p, "w");
        if (!f) {
                perror(p);
                exit(2);
        }
        fwrite(data, 1, len, f);
        fclose(f);
}

int main(void)
{
        hostfs h;
        char buf[64], p[PATH_MAX], cmd0[PATH_MAX + 64];
        uint64_t u;
        int i;

        if (!mkdtemp(root))
                return 2;
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(hostfs_init(&h, "/nonexistent-spinlane"), -ENOENT);
        CHECK_INT(hostfs_init(&h, root), 0);
        put("/num", "42\n", 3);
        put("/neg", "-1\n", 3);
        put("/abc", "abc\n", 4);
        put("/nul", "4\0002\n", 4);
        put("/empty", "", 0);
        CHECK_INT(hostfs_read_u64(&h, "/num", 100, &u), 0);
        CHECK_INT(u, 42);
        CHECK_INT(hostfs_read_u64(&h, "/num", 10, &u), -ERANGE);
        CHECK_INT(hostfs_read_int(&h, "/neg", -1, 10, &i), 0);
        CHECK_INT(i, -1);
        CHECK_INT(hostfs_read_int(&h, "/abc", -1, 10, &i), -EINVAL);
        CHECK_INT(hostfs_read_str(&h, "/nul", buf, sizeof(buf)), -EINVAL);
        CHECK_INT(hostfs_read_u64(&h, "/empty", 10, &u), -EINVAL);
        CHECK_INT(hostfs_read_u64(&h, "/missing", 10, &u), -ENOENT);
        CHECK_INT(hostfs_read(&h, "relative", buf, sizeof(buf), NULL), -EINVAL);

        /* a 1 MiB file is refused, not read */
        {
                char *big = calloc(1, 1 << 20);
                memset(big, '1', 1 << 20);
                put("/big", big, 1 << 20);
                free(big);
                char *out = NULL;
                CHECK_INT(hostfs_read_str(&h, "/big", buf, sizeof(buf)), -EFBIG);
                CHECK_INT(hostfs_read_alloc(&h, "/big", 0, &out, NULL), -EFBIG);
                CHECK(out == NULL);
                CHECK_INT(hostfs_read_u64(&h, "/big", 10, &u), -EINVAL);
        }
        /* exactly size-1 bytes fits */
        put("/fit", "1234567", 7);
        {
                char small[8];
                size_t len;
                CHECK_INT(hostfs_read(&h, "/fit", small, sizeof(small), &len), 0);
                CHECK_INT(len, 7);
                put("/fit", "12345678", 8);
                CHECK_INT(hostfs_read(&h, "/fit", small, sizeof(small), &len), -EFBIG);
        }
        /* symlink loop, link base, FIFO (must not block) */
        snprintf(p, sizeof(p), "%s/loop", root);
        CHECK_INT(symlink("loop", p), 0);
        CHECK_INT(hostfs_read_str(&h, "/loop", buf, sizeof(buf)), -ELOOP);
        CHECK_INT(hostfs_exists(&h, "/loop"), -ELOOP);
        snprintf(p, sizeof(p), "%s/drv", root);
        CHECK_INT(symlink("../../../bus/pci/drivers/vfio-pci", p), 0);
        CHECK_INT(hostfs_readlink_base(&h, "/drv", buf, sizeof(buf)), 0);
        CHECK_STR(buf, "vfio-pci");
        CHECK_INT(hostfs_readlink_base(&h, "/num", buf, sizeof(buf)), -EINVAL);
        snprintf(p, sizeof(p), "%s/fifo", root);
        CHECK_INT(mkfifo(p, 0600), 0);
        CHECK_INT(hostfs_read_str(&h, "/fifo", buf, sizeof(buf)), -EINVAL);
        CHECK_INT(hostfs_exists(&h, "/num"), 1);
        CHECK_INT(hostfs_exists(&h, "/num/x"), 0);
        CHECK_INT(hostfs_is_chardev(&h, "/num"), 1); /* fake root: regular file stands in */
        CHECK_INT(hostfs_write(&h, "/num", "7"), 0);
        CHECK_INT(hostfs_read_u64(&h, "/num", 100, &u), 0);
        CHECK_INT(u, 7);
        CHECK_INT(hostfs_write(&h, "/missing/x", "7"), -ENOENT);

        /* mkdir -p: parents made, existing directories fine, a file in the way refused */
        CHECK_INT(hostfs_mkdir_p(&h, "/a/b/c"), 0);
        CHECK_INT(hostfs_exists(&h, "/a/b/c"), 1);
        CHECK_INT(hostfs_mkdir_p(&h, "/a/b/c/"), 0);
        CHECK_INT(hostfs_mkdir_p(&h, "/num"), -ENOTDIR);
        CHECK_INT(hostfs_mkdir_p(&h, "/num/x"), -ENOTDIR);
        CHECK_INT(hostfs_mkdir_p(&h, "relative"), -EINVAL);
        {
                char longp[PATH_MAX + 8];
                memset(longp, 'x', sizeof(longp) - 1);
                longp[0] = '/';
                longp[sizeof(longp) - 1] = '\0';
                CHECK_INT(hostfs_mkdir_p(&h, longp), -ENAMETOOLONG);
                CHECK_INT(hostfs_write_atomic(&h, longp, "x", 0644), -ENAMETOOLONG);
        }

        /* atomic replace: new content and mode, no temporary file left; a missing
         * directory fails and leaves nothing */
        CHECK_INT(hostfs_write_atomic(&h, "/a/b/state", "one\n", 0640), 0);
        CHECK_INT(hostfs_write_atomic(&h, "/a/b/state", "two\n", 0644), 0);
        CHECK_INT(hostfs_read_str(&h, "/a/b/state", buf, sizeof(buf)), 0);
        CHECK_STR(buf, "two");
        {
                struct stat st;
                snprintf(p, sizeof(p), "%s/a/b/state", root);
                CHECK_INT(stat(p, &st), 0);
                CHECK_INT(st.st_mode & 0777, 0644);
                snprintf(cmd0, sizeof(cmd0), "ls -A '%s/a/b' | grep -c tmp", root);
                FILE *ls = popen(cmd0, "r");
                char cnt[16] = "";
                CHECK(ls && fgets(cnt, sizeof(cnt), ls));
                if (ls)
                        pclose(ls);
                CHECK_STR(cnt, "0\n");
        }
        CHECK_INT(hostfs_write_atomic(&h, "/nodir/state", "x", 0644), -ENOENT);
        CHECK_INT(hostfs_exists(&h, "/nodir"), 0);

        /* planted symlinks (at the name and at a would-be temporary name) are never
         * written through: the name gets a regular file of the mode asked for, under
         * umask 000 too, and what the links point at is left as it was */
        {
                char victim[PATH_MAX], link[PATH_MAX], tmpl[PATH_MAX + 8];
                struct stat st;
                mode_t old_umask = umask(0);
                snprintf(victim, sizeof(victim), "%s/victim", root);
                snprintf(link, sizeof(link), "%s/a/b/spec.json", root);
                snprintf(tmpl, sizeof(tmpl), "%s.tmp", link);
                FILE *f = fopen(victim, "w");
                CHECK(f != NULL);
                if (f) {
                        fputs("secret\n", f);
                        fclose(f);
                }
                CHECK_INT(chmod(victim, 0600), 0);
                CHECK_INT(symlink(victim, link), 0);
                CHECK_INT(symlink(victim, tmpl), 0);
                CHECK_INT(hostfs_write_atomic(&h, "/a/b/spec.json", "{}\n", 0644), 0);
                CHECK_INT(lstat(link, &st), 0);
                CHECK(S_ISREG(st.st_mode));
                CHECK_INT(st.st_mode & 0777, 0644);
                CHECK_INT(hostfs_read_str(&h, "/victim", buf, sizeof(buf)), 0);
                CHECK_STR(buf, "secret");
                CHECK_INT(stat(victim, &st), 0);
                CHECK_INT(st.st_mode & 0777, 0600);
                CHECK_INT(lstat(tmpl, &st), 0);
                CHECK(S_ISLNK(st.st_mode));
                umask(old_umask);
        }

        /* unlink: the name itself (a link, not its target), 0 when it is not there, a
         * directory that is not there either; relative paths refused */
        {
                char victim[PATH_MAX], link[PATH_MAX];
                struct stat st;
                put("/unlink-victim", "keep\n", 5);
                snprintf(victim, sizeof(victim), "%s/unlink-victim", root);
                snprintf(link, sizeof(link), "%s/unlink-link", root);
                CHECK_INT(symlink(victim, link), 0);
                CHECK_INT(hostfs_unlink(&h, "/unlink-link"), 0);
                CHECK(lstat(link, &st) < 0);
                CHECK_INT(stat(victim, &st), 0);
                CHECK_INT(hostfs_unlink(&h, "/unlink-link"), 0);
                CHECK_INT(hostfs_unlink(&h, "/no/such/dir/file"), 0);
                CHECK_INT(hostfs_unlink(&h, "relative"), -EINVAL);
                CHECK_INT(hostfs_unlink(&h, "/"), -EINVAL);
                CHECK_INT(hostfs_unlink(&h, "/unlink-victim"), 0);
                CHECK(stat(victim, &st) < 0);
        }

        /* the walk (openat2's stand-in) alone: a link loop, a path through a file, a
         * trailing slash on a file, O_NOFOLLOW on a last link, more than 40 links */
        {
                int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                CHECK(rfd >= 0);
                put("/walk-file", "w\n", 2);
                snprintf(p, sizeof(p), "%s/walk-link", root);
                CHECK_INT(symlink("/walk-file", p), 0);
                CHECK_INT(hostfs_resolve_walk(rfd, "/loop", O_RDONLY, 0), -ELOOP);
                CHECK_INT(hostfs_resolve_walk(rfd, "/walk-file/x", O_RDONLY, 0), -ENOTDIR);
                CHECK_INT(hostfs_resolve_walk(rfd, "/walk-file/", O_RDONLY, 0), -ENOTDIR);
                CHECK_INT(hostfs_resolve_walk(rfd, "/walk-link", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
                CHECK_INT(hostfs_resolve_walk(rfd, "", O_RDONLY, 0), -ENOENT);
                int fd = hostfs_resolve_walk(rfd, "/../../walk-link", O_RDONLY, 0);
                CHECK(fd >= 0);
                if (fd >= 0) {
                        CHECK_INT(read(fd, buf, 2), 2);
                        close(fd);
                }
                /* l0 -> l1 -> ... -> l41 -> walk-file: 42 links, past the kernel's 40 */
                for (int k = 0; k <= 41; k++) {
                        char t[32];
                        snprintf(p, sizeof(p), "%s/l%d", root, k);
                        snprintf(t, sizeof(t), k == 41 ? "walk-file" : "l%d", k + 1);
                        CHECK_INT(symlink(t, p), 0);
                }
                CHECK_INT(hostfs_resolve_walk(rfd, "/l0", O_RDONLY, 0), -ELOOP);
                fd = hostfs_resolve_walk(rfd, "/l2", O_RDONLY, 0);
                CHECK(fd >= 0);
                if (fd >= 0)
                        close(fd);
                close(rfd);
        }

        /* printf-append: what fits stays, a cut is reported */
        {
                char small[8] = "ab";
                CHECK_INT(hostfs_fmt_append(small, sizeof(small), "%s", "cd"), 0);
                CHECK_STR(small, "abcd");
                CHECK_INT(hostfs_fmt_append(small, sizeof(small), "%d", 12345), -ENAMETOOLONG);
                CHECK_STR(small, "abcd123");
                CHECK_INT(hostfs_fmt_append(small, sizeof(small), "x"), -ENAMETOOLONG);
                CHECK_STR(small, "abcd123");
        }

        /* the real root */
        CHECK_INT(hostfs_init(&h, "/"), 0);
        CHECK(hostfs_is_real_root(&h));
        CHECK_INT(hostfs_is_chardev(&h, "/dev/null"), 1);
        CHECK_INT(hostfs_is_chardev(&h, "/etc/hostname"), 0);

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        if (system(cmd) != 0)
                fprintf(stderr, "cleanup of %s failed\n", root);
        return test_done();
}
