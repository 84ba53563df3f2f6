/* SPDX-License-Identifier: Apache-2.0 */
/* Hugepages and hugetlbfs: a fake tree with a stingy emulated kernel (shortfall,
 * missing node, unsupported size, read-only file), mount table parsing, the fake-root
 * mount report, the exact mount/mkdir/umount calls on an emulated kernel, the host's
 * mount table under --root (2 500 mounts, unreadable, an over-long line), and - with
 * "--root" (ctest: test-hugepages-root), as root with hugetlbfs, else skipped before
 * acting - a real hugetlbfs mount in a temp dir and a real nr_hugepages write. */
#include "hugepages.h"

#include "cleanup.h"
#include "nodeprep-test.h"
#include "sysfs-emu.h"
#include "testutil.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR(node, kb) "/sys/devices/system/node/node" #node "/hugepages/hugepages-" #kb "kB/nr_hugepages"

/* A kernel that grants at most cap[node] pages; writes to ro_path fail with EACCES. */
typedef struct stingy {
        uint64_t cap[2];
        const char *ro_path;
        int writes;
} stingy;

static int stingy_write(void *userdata, const hostfs *h, const char *path, const char *data)
{
        stingy *s = userdata;
        char buf[32];
        uint64_t n = strtoull(data, NULL, 10);
        int node = strstr(path, "node1/") ? 1 : 0;

        s->writes++;
        if (s->ro_path && strcmp(path, s->ro_path) == 0)
                return -EACCES;
        if (n > s->cap[node])
                n = s->cap[node];
        snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)n);
        return hostfs_write(h, path, buf);
}

static void fake_nodes(emu *e)
{
        CHECK_INT(emu_init(e), 0);
        emu_write_file(e, NR(0, 2048), "0\n");
        emu_write_file(e, NR(1, 2048), "16\n");
        emu_write_file(e, NR(0, 1048576), "0\n");
        emu_write_file(e, "/proc/meminfo", "MemTotal: 1000 kB\nHugepagesize:       2048 kB\n");
        emu_write_file(e, "/proc/mounts", "proc /proc proc rw 0 0\n");
}

static void test_reserve(void)
{
        emu e;
        stingy s = {.cap = {1000, 100}};
        bind_ops ops = {stingy_write, &s};
        verdict_list v = {0};
        fake_nodes(&e);

        /* node 0 gets all it asks, node 1 falls short. */
        config c = test_config("{\"hugepages\":{\"page_size\":\"2M\",\"per_node\":{\"0\":512,\"1\":256}}}");
        CHECK_INT(huge_reserve(&e.h, &ops, &c, &v), 0);
        CHECK_INT(v.n, 1);
        CHECK_STR(v.items[0].check, PREP_CHECK_HUGEPAGES);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "node 1: asked for 256 pages of 2 MiB, the kernel gave 100 (short by 156)");
        CHECK_STR(emu_read(&e, NR(0, 2048)), "512");
        CHECK_STR(emu_read(&e, NR(1, 2048)), "100");
        json_t *n1 = json_array_get(json_object_get(v.items[0].evidence, "nodes"), 1);
        CHECK_INT(json_integer_value(json_object_get(n1, "before")), 16);
        CHECK_INT(json_integer_value(json_object_get(n1, "got")), 100);
        CHECK_INT(s.writes, 2);
        verdict_list_free(&v);

        /* Now enough on both; node 0 is already right: only node 1 is written. */
        s.cap[1] = 1000;
        s.writes = 0;
        CHECK_INT(huge_reserve(&e.h, &ops, &c, &v), 0);
        /* node 1 was raised at run time: the kubelet does not see it until it restarts */
        CHECK_INT(v.items[0].level, VERDICT_WARN);
        CHECK_STR(v.items[0].message, "reserved node 0: 512 x 2 MiB, node 1: 256 x 2 MiB; raised at run time (node 1 "
                                      "from 100 to 256 x 2 MiB): the kubelet reads hugepage capacity only when it "
                                      "starts (kubernetes#111757), so pods cannot request the new pages until it restarts");
        CHECK(strstr(v.items[0].remedy, "reserve the pages at boot") != NULL);
        CHECK(strstr(v.items[0].remedy, "restart the kubelet once") != NULL);
        CHECK_INT(s.writes, 1);
        verdict_list_free(&v);
        /* again: nothing raised (the pages were there before): a pass */
        s.writes = 0;
        CHECK_INT(huge_reserve(&e.h, &ops, &c, &v), 0);
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK_STR(v.items[0].message, "reserved node 0: 512 x 2 MiB, node 1: 256 x 2 MiB");
        CHECK_INT(s.writes, 0);
        verdict_list_free(&v);

        /* A node that does not exist, a size the kernel lacks, a read-only file. */
        c = test_config("{\"hugepages\":[{\"page_size\":\"2M\",\"per_node\":{\"3\":1}},{\"page_size\":\"32M\",\"per_node\":{\"0\":1}},"
                "{\"page_size\":\"1G\",\"per_node\":{\"0\":2}}]}");
        s.ro_path = NR(0, 1048576);
        s.writes = 0;
        CHECK_INT(huge_reserve(&e.h, &ops, &c, &v), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message,
                  "node 3, 2 MiB pages: no such NUMA node; node 0, 32 MiB pages: page size not supported by the kernel; "
                  "node 0, 1 GiB pages: writing nr_hugepages failed: Permission denied");
        CHECK_STR(emu_read(&e, NR(0, 1048576)), "0");
        CHECK_INT(s.writes, 1);
        verdict_list_free(&v);

        /* No hugepages in the config: nothing. */
        c = test_config("{}");
        CHECK_INT(huge_reserve(&e.h, &ops, &c, &v), 0);
        CHECK_INT(v.n, 0);
        emu_cleanup(&e);
}

static void test_find_mount(void)
{
        uint64_t ps = 77;
        const char *m = "proc /proc proc rw 0 0\n"
                        "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
                        "none /mnt/huge\\0401g hugetlbfs rw,pagesize=1024M 0 0\n"
                        "tmpfs /run tmpfs rw 0 0\n"
                        "none /mnt/nops hugetlbfs rw 0 0\n";
        CHECK_INT(huge_find_mount(m, "/dev/hugepages", &ps), 1);
        CHECK_INT(ps, 2048);
        CHECK_INT(huge_find_mount(m, "/mnt/huge 1g", &ps), 1);
        CHECK_INT(ps, 1048576);
        CHECK_INT(huge_find_mount(m, "/mnt/nops", &ps), 1);
        CHECK_INT(ps, 0);
        ps = 77;
        CHECK_INT(huge_find_mount(m, "/mnt/none", &ps), 0);
        CHECK_INT(ps, 77);
        CHECK_INT(huge_find_mount(m, "/run", &ps), -EEXIST);
        CHECK_INT(huge_find_mount("x /h hugetlbfs rw,pagesize=lots 0 0\n", "/h", &ps), -EINVAL);
        CHECK_INT(huge_find_mount("", "/h", &ps), 0);
        /* The later mount at a path hides the earlier. */
        CHECK_INT(huge_find_mount("x /h tmpfs rw 0 0\ny /h hugetlbfs rw,pagesize=2M 0 0\n", "/h", &ps), 1);
}

/* An emulated kernel's mount(2): records each call (and each mkdir/umount) and, when
 * show is set, shows the mount in the tree's mount table the way the kernel would. */
typedef struct mounter {
        emu *e;
        const char *table;  /* host path of the table the mount shows up in */
        bool show;
        int fail;           /* mount returns this instead (0: succeeds) */
        char log[512];
} mounter;

static void mlog(mounter *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mlog(mounter *m, const char *fmt, ...)
{
        va_list ap;
        size_t n = strlen(m->log);
        if (n)
                n += (size_t)snprintf(m->log + n, sizeof(m->log) - n, "|");
        va_start(ap, fmt);
        vsnprintf(m->log + n, sizeof(m->log) - n, fmt, ap);
        va_end(ap);
}

static int emu_mount(void *ud, const hostfs *h, const char *source, const char *target, const char *fstype,
                     unsigned long flags, const char *data)
{
        mounter *m = ud;
        mlog(m, "mount %s %s %s %s%s %s", source, target, fstype, flags & MS_NOSUID ? "nosuid," : "",
             flags & MS_NODEV ? "nodev" : "", data);
        if ((flags & ~(unsigned long)(MS_NOSUID | MS_NODEV)) != 0)
                mlog(m, "unexpected flags %#lx", flags);
        if (m->fail)
                return m->fail;
        if (m->show) {
                char path[PATH_MAX];
                hostfs_path(h, m->table, path, sizeof(path));
                FILE *f = fopen(path, "a");
                CHECK(f != NULL);
                if (f) {
                        fprintf(f, "%s %s %s rw,nosuid,nodev,relatime,%s 0 0\n", source, target, fstype, data);
                        fclose(f);
                }
        }
        return 0;
}

static int emu_umount(void *ud, const hostfs *h, const char *target)
{
        (void)h;
        mlog(ud, "umount %s", target);
        return 0;
}

static int emu_mkdir(void *ud, const hostfs *h, const char *path)
{
        mlog(ud, "mkdir %s", path);
        return hostfs_mkdir_p(h, path);
}

static bind_ops mount_ops(mounter *m)
{
        bind_ops o = {.write = NULL, .userdata = m, .mount = emu_mount, .umount = emu_umount, .mkdir = emu_mkdir};
        return o;
}

static void test_mount_fake_root(void)
{
        emu e;
        verdict_list v = {0};
        bool mounted = true;
        fake_nodes(&e);

        /* The real ops under a fake tree: nothing mounted, and it says what would be. */
        config c = test_config("{\"hugepages\":{\"page_size\":\"1G\",\"per_node\":{\"0\":1}}}");
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK(!mounted);
        CHECK_INT(v.items[0].level, VERDICT_SKIP);
        CHECK_STR(v.items[0].message, "would mount hugetlbfs at /dev/hugepages with pagesize=1G (not a live root: "
                                      "directory created, nothing mounted)");
        CHECK_INT(hostfs_exists(&e.h, "/dev/hugepages"), 1);
        verdict_list_free(&v);

        emu_write_file(&e, "/proc/mounts", "nodev /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n");
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "hugetlbfs at /dev/hugepages has pagesize 2 MiB, the config wants 1 GiB");
        verdict_list_free(&v);

        c = test_config("{}"); /* kernel default from /proc/meminfo: 2 MiB */
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK_STR(v.items[0].message, "hugetlbfs is mounted at /dev/hugepages (pagesize 2 MiB)");
        verdict_list_free(&v);

        /* The host init's table (/proc/1/mounts) wins over the reader's own. */
        emu_write_file(&e, "/proc/1/mounts", "nodev /dev/hugepages hugetlbfs rw,pagesize=1024M 0 0\n");
        c = test_config("{\"hugetlbfs\":{\"page_size\":\"1G\"}}");
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK_STR(v.items[0].message, "hugetlbfs is mounted at /dev/hugepages (pagesize 1 GiB)");
        verdict_list_free(&v);
        CHECK(!hostfs_is_live(&e.h));

        c = test_config("{\"hugetlbfs\":{\"mount\":false,\"mount_point\":\"/mnt/h\"}}");
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "no hugetlbfs at /mnt/h and hugetlbfs.mount is false");
        CHECK_INT(hostfs_exists(&e.h, "/mnt/h"), 0);
        verdict_list_free(&v);

        /* A mount point that is a regular file is not "created" (it used to pass as such). */
        emu_write_file(&e, "/mnt/file", "x");
        c = test_config("{\"hugetlbfs\":{\"mount_point\":\"/mnt/file\"}}");
        CHECK_INT(huge_mount(&e.h, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "cannot create /mnt/file: Not a directory");
        verdict_list_free(&v);
        emu_cleanup(&e);
}

/* The exact calls, on an emulated kernel. */
static void test_mount_emulated(void)
{
        emu e;
        verdict_list v = {0};
        bool mounted = false;
        fake_nodes(&e);
        mounter m = {.e = &e, .table = "/proc/mounts", .show = true};
        bind_ops ops = mount_ops(&m);

        config c = test_config("{}");
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(m.log, "mkdir /dev/hugepages|mount nodev /dev/hugepages hugetlbfs nosuid,nodev pagesize=2M");
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK_STR(v.items[0].message, "mounted hugetlbfs at /dev/hugepages (pagesize 2 MiB)");
        CHECK(mounted);
        verdict_list_free(&v);
        /* Again: found, nothing called. */
        m.log[0] = '\0';
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(m.log, "");
        CHECK(!mounted);
        CHECK_STR(v.items[0].message, "hugetlbfs is mounted at /dev/hugepages (pagesize 2 MiB)");
        verdict_list_free(&v);

        /* 1 GiB pages at another path. */
        m.log[0] = '\0';
        c = test_config("{\"hugetlbfs\":{\"mount_point\":\"/dev/hugepages-1G\",\"page_size\":\"1G\"}}");
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(m.log, "mkdir /dev/hugepages-1G|mount nodev /dev/hugepages-1G hugetlbfs nosuid,nodev pagesize=1G");
        CHECK_STR(v.items[0].message, "mounted hugetlbfs at /dev/hugepages-1G (pagesize 1 GiB)");
        verdict_list_free(&v);

        /* Refused by the kernel. */
        m.log[0] = '\0';
        m.fail = -EPERM;
        c = test_config("{\"hugetlbfs\":{\"mount_point\":\"/mnt/x\"}}");
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "mounting hugetlbfs at /mnt/x with pagesize=2M failed: Operation not permitted");
        CHECK_STR(v.items[0].remedy, "the agent needs CAP_SYS_ADMIN (privileged) to mount");
        CHECK(!mounted);
        verdict_list_free(&v);

        /* Mounted, but the host's table does not show it (no mount propagation): taken
         * down again, or the next apply stacks another. */
        m.log[0] = '\0';
        m.fail = 0;
        m.show = false;
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(m.log, "mkdir /mnt/x|mount nodev /mnt/x hugetlbfs nosuid,nodev pagesize=2M|umount /mnt/x");
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "mounted hugetlbfs at /mnt/x, but /proc/mounts does not show it; unmounted it again");
        CHECK(!mounted);
        verdict_list_free(&v);
        emu_cleanup(&e);
}

/* The host's table under --root: the host init's /proc/1/mounts, streamed however long;
 * never the agent container's /proc/mounts instead (it lacks the host's hugetlbfs, and a
 * second one would be stacked at every apply). */
static void test_mount_table(void)
{
        emu e;
        verdict_list v = {0};
        bool mounted = false;
        fake_nodes(&e);
        mounter m = {.e = &e, .table = "/proc/1/mounts", .show = true};
        bind_ops ops = mount_ops(&m);
        config c = test_config("{}");

        /* 2 500 kubelet mounts (about 400 KB), the hugetlbfs last. */
        size_t cap = 2600 * 160, n = 0;
        char *big = malloc(cap);
        for (int i = 0; i < 2500; i++)
                n += (size_t)snprintf(big + n, cap - n, "tmpfs /var/lib/kubelet/pods/%08x-7d1c-4f0e-9b62-%012x/volumes/"
                                      "kubernetes.io~projected/kube-api-access-%05d tmpfs rw,relatime 0 0\n", i, i, i);
        n += (size_t)snprintf(big + n, cap - n, "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n");
        CHECK(n > 256 * 1024);
        emu_write_file(&e, "/proc/1/mounts", big);
        emu_write_file(&e, "/proc/mounts", "overlay / overlay rw 0 0\n");
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(v.items[0].message, "hugetlbfs is mounted at /dev/hugepages (pagesize 2 MiB)");
        CHECK_STR(m.log, "");
        verdict_list_free(&v);

        /* Unreadable (a directory), or a line past 64 KiB: nothing mounted. */
        char p[PATH_MAX];
        hostfs_path(&e.h, "/proc/1/mounts", p, sizeof(p));
        CHECK_INT(unlink(p), 0);
        CHECK_INT(mkdir(p, 0755), 0);
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_FAIL);
        CHECK_STR(v.items[0].message, "cannot read the host's mount table /proc/1/mounts: Invalid argument; nothing mounted");
        CHECK_STR(m.log, "");
        verdict_list_free(&v);
        CHECK_INT(rmdir(p), 0);
        memset(big, 'a', 70 * 1024);
        big[70 * 1024] = '\0';
        emu_write_file(&e, "/proc/1/mounts", big);
        CHECK_INT(huge_mount(&e.h, &ops, &c, &v, &mounted), 0);
        CHECK_STR(v.items[0].message, "cannot read the host's mount table /proc/1/mounts: a line longer than 64 KiB; "
                                      "nothing mounted");
        CHECK_STR(m.log, "");
        verdict_list_free(&v);
        free(big);
        emu_cleanup(&e);
}

/* The real kernel, as root with hugetlbfs (decided before acting): a hugetlbfs mount
 * in a temp dir through the real ops, and an nr_hugepages write. */
static bool have_hugetlbfs(void)
{
        hostfs real;
        _cleanup_free_ char *fs = NULL;
        hostfs_init(&real, NULL);
        return hostfs_read_alloc(&real, "/proc/filesystems", 0, &fs, NULL) == 0 && strstr(fs, "\thugetlbfs\n");
}

static void test_real(void)
{
        hostfs real;
        verdict_list v = {0};
        char dir[] = "/tmp/sl-np-huge-XXXXXX", mp[64], json[256];
        bool mounted = false;
        uint64_t orig, ps = 0;

        hostfs_init(&real, NULL);
        CHECK(hostfs_is_live(&real));
        CHECK(mkdtemp(dir) != NULL);
        snprintf(mp, sizeof(mp), "%s/huge", dir);
        snprintf(json, sizeof(json), "{\"hugetlbfs\":{\"mount_point\":\"%s\",\"page_size\":\"2M\"}}", mp);
        config c = test_config(json);
        CHECK_INT(huge_mount(&real, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK(mounted);
        printf("real: %s\n", v.items[0].message);
        verdict_list_free(&v);
        /* The kernel's own table shows it, as hugetlbfs with 2 MiB pages. */
        _cleanup_free_ char *table = NULL;
        CHECK_INT(hostfs_read_alloc(&real, "/proc/self/mounts", 0, &table, NULL), 0);
        CHECK_INT(huge_find_mount(table, mp, &ps), 1);
        CHECK_INT(ps, 2048);
        /* Second time: found, not mounted again. */
        CHECK_INT(huge_mount(&real, NULL, &c, &v, &mounted), 0);
        CHECK_INT(v.items[0].level, VERDICT_PASS);
        CHECK(!mounted);
        verdict_list_free(&v);
        CHECK_INT(umount2(mp, 0), 0);
        rmdir(mp);
        rmdir(dir);

        const char *nr = "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages";
        if (hostfs_read_u64(&real, nr, 1u << 30, &orig) < 0) {
                printf("skipped real nr_hugepages: %s unreadable (no NUMA node 0 or no 2 MiB pages)\n", nr);
                return;
        }
        snprintf(json, sizeof(json), "{\"hugepages\":{\"page_size\":\"2M\",\"per_node\":{\"0\":%llu}}}",
                 (unsigned long long)orig + 2);
        c = test_config(json);
        CHECK_INT(huge_reserve(&real, NULL, &c, &v), 0);
        uint64_t now = 0;
        CHECK_INT(hostfs_read_u64(&real, nr, 1u << 30, &now), 0);
        printf("real: %s (was %llu, now %llu)\n", v.items[0].message, (unsigned long long)orig, (unsigned long long)now);
        CHECK(!strstr(v.items[0].message, "writing nr_hugepages failed"));
        /* Whatever the kernel gave, the verdict agrees with the read-back; pages raised
         * at run time are a warning: the kubelet sees them only after a restart */
        CHECK_INT(v.items[0].level, now >= orig + 2 ? VERDICT_WARN : VERDICT_FAIL);
        if (now >= orig + 2)
                CHECK(strstr(v.items[0].message, "kubernetes#111757") != NULL);
        char buf[32];
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)orig);
        CHECK_INT(hostfs_write(&real, nr, buf), 0);
        CHECK_INT(hostfs_read_u64(&real, nr, 1u << 30, &now), 0);
        CHECK_INT(now, orig);
        verdict_list_free(&v);
}

/* Two ctest tests, one binary: bare, everything on fake trees and the emulated kernel
 * (never skipped); with "--root" (test-hugepages-root) only the real mount and
 * nr_hugepages write, skipped before it acts when the machine lacks root or hugetlbfs. */
int main(int argc, char **argv)
{
        if (argc > 2 || (argc == 2 && strcmp(argv[1], "--root") != 0))
                TEST_FATAL("usage: %s [--root]", argv[0]);
        if (argc == 1) {
                test_reserve();
                test_find_mount();
                test_mount_fake_root();
                test_mount_emulated();
                test_mount_table();
                return test_done();
        }
        if (geteuid() != 0)
                TEST_SKIP("real hugetlbfs mount and nr_hugepages: not root");
        if (!have_hugetlbfs())
                TEST_SKIP("real hugetlbfs mount: no hugetlbfs in /proc/filesystems");
        test_real();
        return test_done();
}
