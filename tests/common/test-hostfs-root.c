/* SPDX-License-Identifier: Apache-2.0 */
/* Host paths never leave the root: the links of issue 31 planted in a node tree (a DRA
 * checkpoint and dra/ folder, grub.d and /etc/default linked away, a relative /var/run
 * link climbing out, "..") and every hostfs read, write, mkdir and delete checked to
 * touch nothing beside the root. Run twice: with openat2, then under a seccomp filter
 * that answers openat2 with ENOSYS (a kernel before 5.6), so the user-space walk serves. */
#include "hostfs.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char top[] = "/tmp/spin-test-hostfs-root-XXXXXX";
static char root[PATH_MAX], out[PATH_MAX];

static void mk(const char *base, const char *rel)
{
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s%s", base, rel);
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                TEST_FATAL("mkdir %s: %s", p, strerror(errno));
}

static void put(const char *base, const char *rel, const char *data)
{
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s%s", base, rel);
        FILE *f = fopen(p, "w");
        if (!f)
                TEST_FATAL("%s: %s", p, strerror(errno));
        fputs(data, f);
        fclose(f);
}

static void link_(const char *target, const char *rel)
{
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s%s", root, rel);
        (void)unlink(p);
        if (symlink(target, p) < 0)
                TEST_FATAL("symlink %s: %s", p, strerror(errno));
}

/* The outside tree as one string: every name (recursively) and each file's content. */
static void snapshot(const char *dir, char *buf, size_t size)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        if (!d)
                return;
        while ((e = readdir(d))) {
                char p[PATH_MAX * 2], text[256] = "";
                struct stat st;
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
                if (lstat(p, &st) < 0)
                        continue;
                if (S_ISREG(st.st_mode)) {
                        FILE *f = fopen(p, "r");
                        if (f) {
                                size_t n = fread(text, 1, sizeof(text) - 1, f);
                                text[n] = '\0';
                                fclose(f);
                        }
                }
                size_t used = strlen(buf);
                snprintf(buf + used, size - used, "%s[%o]=%s;", p, st.st_mode & 07777, text);
                if (S_ISDIR(st.st_mode))
                        snapshot(p, buf, size);
        }
        closedir(d);
}

/* The outside tree: a valid checkpoint, a grub drop-in, a folder the links point at. */
static void build(void)
{
        snprintf(root, sizeof(root), "%s/root", top);
        snprintf(out, sizeof(out), "%s/outside", top);
        mk(top, "/root");
        mk(top, "/outside");
        mk(out, "/dra");
        mk(out, "/grub.d");
        mk(out, "/default");
        mk(out, "/default/grub.d");
        mk(out, "/run");
        put(out, "/dra/claims.json", "{\"version\":1,\"claims\":[{\"uid\":\"stolen\"}]}\n");
        put(out, "/claims.json", "{\"version\":1,\"claims\":[{\"uid\":\"planted\"}]}\n");
        put(out, "/secret", "SECRET-TOKEN\n");
        put(out, "/grub.d/99-spinlane.cfg", "# not spinlane's\n");
        put(out, "/default/grub.d/99-spinlane.cfg", "# not spinlane's either\n");
        put(out, "/run/reboot-required", "theirs\n");
        for (const char *d = "/etc\0/etc/default\0/var\0/var/lib\0/var/lib/spinlane\0/sys\0/run\0"; *d;
             d += strlen(d) + 1)
                mk(root, d);
}

static void cases(const hostfs *h, const char *pass)
{
        char before[16384] = "", after[16384] = "", buf[256], link_target[PATH_MAX * 2];
        char *text = NULL;
        size_t len;
        DIR *d = NULL;

        printf("%s\n", pass);
        fflush(stdout);
        snapshot(out, before, sizeof(before));

        /* the DRA checkpoint itself a link to a valid checkpoint elsewhere: not loaded */
        mk(root, "/var/lib/spinlane/dra");
        snprintf(link_target, sizeof(link_target), "%s/claims.json", out);
        link_(link_target, "/var/lib/spinlane/dra/claims.json");
        CHECK(hostfs_read_alloc(h, "/var/lib/spinlane/dra/claims.json", 4096, &text, &len) < 0);
        CHECK(!text || !strstr(text, "planted"));
        free(text);
        text = NULL;
        /* ... and written: the link is replaced inside the root, the file behind it kept */
        CHECK_INT(hostfs_write_atomic(h, "/var/lib/spinlane/dra/claims.json", "{}\n", 0600), 0);

        /* the dra/ folder a link to a folder elsewhere (absolute, then climbing out) */
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s/var/lib/spinlane/dra/claims.json", root);
        unlink(p);
        snprintf(p, sizeof(p), "%s/var/lib/spinlane/dra", root);
        rmdir(p);
        snprintf(link_target, sizeof(link_target), "%s/dra", out);
        link_(link_target, "/var/lib/spinlane/dra");
        CHECK(hostfs_read_alloc(h, "/var/lib/spinlane/dra/claims.json", 4096, &text, &len) < 0);
        CHECK(!text || !strstr(text, "stolen"));
        free(text);
        text = NULL;
        CHECK(hostfs_mkdir_p(h, "/var/lib/spinlane/dra") < 0 ||
              hostfs_write_atomic(h, "/var/lib/spinlane/dra/claims.json", "{\"version\":1}\n", 0600) >= 0);
        (void)hostfs_write_atomic(h, "/var/lib/spinlane/dra/claims.json", "{\"version\":1}\n", 0600);
        link_("../../../../outside/dra", "/var/lib/spinlane/dra");
        CHECK(hostfs_read_alloc(h, "/var/lib/spinlane/dra/claims.json", 4096, &text, &len) < 0);
        free(text);
        text = NULL;
        (void)hostfs_mkdir_p(h, "/var/lib/spinlane/dra");
        (void)hostfs_write_atomic(h, "/var/lib/spinlane/dra/claims.json", "{\"version\":1}\n", 0600);

        /* grub.d linked away: the drop-in neither written nor (by restore) deleted there */
        snprintf(link_target, sizeof(link_target), "%s/grub.d", out);
        link_(link_target, "/etc/default/grub.d");
        CHECK_INT(hostfs_exists(h, "/etc/default/grub.d/99-spinlane.cfg"), 0);
        (void)hostfs_mkdir_p(h, "/etc/default/grub.d");
        (void)hostfs_write_atomic(h, "/etc/default/grub.d/99-spinlane.cfg", "GRUB_CMDLINE_LINUX_DEFAULT=x\n", 0644);
        CHECK(hostfs_read(h, "/etc/default/grub.d/99-spinlane.cfg", buf, sizeof(buf), NULL) < 0 ||
              strstr(buf, "GRUB_CMDLINE") != NULL);

        /* /etc/default itself linked away */
        snprintf(p, sizeof(p), "%s/etc/default/grub.d", root);
        unlink(p);
        snprintf(p, sizeof(p), "%s/etc/default", root);
        rmdir(p);
        snprintf(link_target, sizeof(link_target), "%s/default", out);
        link_(link_target, "/etc/default");
        CHECK_INT(hostfs_exists(h, "/etc/default/grub.d/99-spinlane.cfg"), 0);
        (void)hostfs_mkdir_p(h, "/etc/default/grub.d");
        (void)hostfs_write_atomic(h, "/etc/default/grub.d/99-spinlane.cfg", "GRUB_CMDLINE_LINUX_DEFAULT=x\n", 0644);

        /* a relative /var/run link that climbs out of the root */
        link_("../../outside/run", "/var/run");
        CHECK_INT(hostfs_exists(h, "/var/run/reboot-required"), 0);
        (void)hostfs_write_atomic(h, "/var/run/reboot-required", "ours\n", 0644);
        /* an absolute one: /run of the root, as on a real host */
        link_("/run", "/var/run");
        CHECK_INT(hostfs_write_atomic(h, "/var/run/reboot-required", "ours\n", 0644), 0);
        CHECK_INT(hostfs_read_str(h, "/run/reboot-required", buf, sizeof(buf)), 0);
        CHECK_STR(buf, "ours");

        /* ".." never climbs above the root; a file link to a secret is not read */
        CHECK(hostfs_read_str(h, "/../outside/secret", buf, sizeof(buf)) < 0);
        CHECK(hostfs_read_str(h, "/sys/../../outside/secret", buf, sizeof(buf)) < 0);
        snprintf(link_target, sizeof(link_target), "%s/secret", out);
        link_(link_target, "/sys/attr");
        CHECK(hostfs_read_str(h, "/sys/attr", buf, sizeof(buf)) < 0);
        link_("../../outside/secret", "/sys/attr");
        CHECK(hostfs_read_str(h, "/sys/attr", buf, sizeof(buf)) < 0);
        CHECK(hostfs_write(h, "/sys/attr", "1") < 0);
        link_(out, "/sys/dir");
        CHECK(hostfs_opendir(h, "/sys/dir", &d) < 0);
        if (d)
                closedir(d);
        d = NULL;
        CHECK(hostfs_read_str(h, "/sys/dir/secret", buf, sizeof(buf)) < 0);
        CHECK(hostfs_exists(h, "/sys/dir/secret") == 0);

        /* a link that stays inside (relative, or absolute = from the root) still works */
        put(root, "/sys/inside", "7\n");
        link_("inside", "/sys/rel");
        link_("/sys/inside", "/sys/abs");
        CHECK_INT(hostfs_read_str(h, "/sys/rel", buf, sizeof(buf)), 0);
        CHECK_STR(buf, "7");
        CHECK_INT(hostfs_read_str(h, "/sys/abs", buf, sizeof(buf)), 0);
        CHECK_STR(buf, "7");

        snapshot(out, after, sizeof(after));
        CHECK_STR(after, before);
}

/* openat2 answers ENOSYS from here on, as on a kernel without it. */
static int no_openat2(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return -errno;
        return 0;
}

static void cleanup(void)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", top);
}

int main(void)
{
        hostfs h;
        int r;

        if (!mkdtemp(top))
                return 2;
        build();
        CHECK_INT(hostfs_init(&h, root), 0);
        cases(&h, "openat2");

        cleanup();
        if (!mkdtemp(strcpy(top, "/tmp/spin-test-hostfs-root-XXXXXX")))
                return 2;
        build();
        CHECK_INT(hostfs_init(&h, root), 0);
        if ((r = no_openat2()) < 0)
                TEST_FATAL("seccomp filter: %s", strerror(-r));
        CHECK_INT(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0), -1);
        CHECK_INT(errno, ENOSYS);
        cases(&h, "the walk (openat2 answers ENOSYS)");
        cleanup();
        return test_done();
}
