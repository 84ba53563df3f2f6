/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup/mountinfo/limits parsers: tables of good and bad inputs, resolution of the
 * container's cgroup dir on v1, v2, hybrid, nested and namespaced views, and outputs left
 * untouched on failure. */
#include "launch-cgroup.h"
#include "testutil.h"

#include "cleanup.h"

#include <errno.h>

static const char MI_HYBRID[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw\n"
        "50 24 0:40 / /dev/huge\\040pages rw,relatime - hugetlbfs nodev rw,pagesize=1G\n"
        "51 24 0:41 / /other rw - ext4 /dev/vda rw\n";

static void test_self(void)
{
        lcg_self s;
        static const char ok[] = "12:hugetlb:/kubepods/pod1/ctr\n3:cpu,cpuacct:/kubepods/pod1/ctr\n1:name=systemd:/a:b\n0::/x\n";
        CHECK_INT(lcg_parse_self(ok, sizeof(ok) - 1, &s), 0);
        CHECK_INT(s.n, 4);
        CHECK_STR(s.e[1].controllers, "cpu,cpuacct");
        CHECK_STR(s.e[2].path, "/a:b");
        CHECK_INT(s.e[3].id, 0);
        CHECK_STR(s.e[3].controllers, "");

        static const char *const bad[] = { "x:cpu:/a\n", "1:cpu\n", "1:cpu:relative\n", "1:cpu:\n", "99999:cpu:/\n" };
        for (unsigned i = 0; i < ELEMENTSOF(bad); i++) {
                s.n = 77;
                CHECK_INT(lcg_parse_self(bad[i], strlen(bad[i]), &s), -EINVAL);
                CHECK_INT(s.n, 77); /* untouched */
        }
        char big[LCG_PATH_MAX + 16] = "0::/";
        memset(big + 4, 'a', LCG_PATH_MAX);
        big[LCG_PATH_MAX + 4] = '\0';
        CHECK_INT(lcg_parse_self(big, strlen(big), &s), -ENAMETOOLONG);
        CHECK_INT(lcg_parse_self("0::/a\0b", 7, &s), -EINVAL);
}

static void test_mountinfo_resolve(void)
{
        lcg_mounts m;
        lcg_self s;
        char dir[LCG_PATH_MAX], mp[LCG_PATH_MAX];
        bool v2 = true;

        CHECK_INT(lcg_parse_mountinfo(MI_HYBRID, sizeof(MI_HYBRID) - 1, &m), 0);
        CHECK_INT(m.n, 5); /* tmpfs and ext4 skipped */
        CHECK_STR(m.m[4].point, "/dev/huge pages");
        uint64_t kb = 0;
        CHECK_INT(lcg_hugetlbfs_pagesize_kb(m.m[4].super, &kb), 0);
        CHECK_INT(kb, 1024 * 1024);
        CHECK_INT(lcg_hugetlbfs_pagesize_kb("rw,relatime", &kb), -ENOENT);
        CHECK_INT(lcg_hugetlbfs_pagesize_kb("rw,pagesize=2X", &kb), -EINVAL);

        static const char self[] = "3:cpu:/pod/ctr\n2:cpuacct:/pod/ctr\n4:cpuset:/\n0::/pod/ctr\n";
        CHECK_INT(lcg_parse_self(self, sizeof(self) - 1, &s), 0);
        CHECK_INT(lcg_resolve(&s, &m, "cpu", dir, sizeof(dir), mp, sizeof(mp), &v2), 0);
        CHECK_STR(dir, "/sys/fs/cgroup/cpu/pod/ctr");
        CHECK_STR(mp, "/sys/fs/cgroup/cpu");
        CHECK(!v2);
        CHECK_INT(lcg_resolve(&s, &m, "cpuset", dir, sizeof(dir), NULL, 0, &v2), 0);
        CHECK_STR(dir, "/sys/fs/cgroup/cpuset");
        /* hugetlb is on no v1 hierarchy: found in the v2 tree */
        CHECK_INT(lcg_resolve(&s, &m, "hugetlb", dir, sizeof(dir), NULL, 0, &v2), 0);
        CHECK_STR(dir, "/sys/fs/cgroup/unified/pod/ctr");
        CHECK(v2);
        /* "cpu" must not match "cpuacct" */
        CHECK(!lcg_has_token("rw,cpuacct", "cpu"));
        CHECK(lcg_has_token("rw,cpu,cpuacct", "cpu"));

        /* docker-style v1 mount of a subtree: the mount root is the cgroup itself */
        static const char mi2[] = "40 30 0:29 /kubepods/pod1/ctr /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n";
        static const char self2[] = "3:cpu,cpuacct:/kubepods/pod1/ctr\n";
        CHECK_INT(lcg_parse_mountinfo(mi2, sizeof(mi2) - 1, &m), 0);
        CHECK_INT(lcg_parse_self(self2, sizeof(self2) - 1, &s), 0);
        CHECK_INT(lcg_resolve(&s, &m, "cpu", dir, sizeof(dir), mp, sizeof(mp), &v2), 0);
        CHECK_STR(dir, "/sys/fs/cgroup/cpu,cpuacct");
        /* a cgroup outside the mounted subtree cannot be seen */
        static const char self3[] = "3:cpu,cpuacct:/kubepods/pod2/ctr\n";
        CHECK_INT(lcg_parse_self(self3, sizeof(self3) - 1, &s), 0);
        strcpy(dir, "untouched");
        CHECK_INT(lcg_resolve(&s, &m, "cpu", dir, sizeof(dir), mp, sizeof(mp), &v2), -EXDEV);
        CHECK_STR(dir, "untouched");
        /* no hierarchy at all */
        CHECK_INT(lcg_resolve(&s, &m, "hugetlb", dir, sizeof(dir), NULL, 0, &v2), -ENOENT);

        static const char *const bad[] = { "1 2 3:4 / /x rw\n", "1 2 3:4 relative /x rw - cgroup cgroup rw,cpu\n" };
        for (unsigned i = 0; i < ELEMENTSOF(bad); i++) {
                m.n = 5;
                CHECK_INT(lcg_parse_mountinfo(bad[i], strlen(bad[i]), &m), -EINVAL);
                CHECK_INT(m.n, 5);
        }
}

static void test_files(void)
{
        static const struct {
                const char *in;
                int r;
                uint64_t q, p;
        } cm[] = {
                { "max 100000\n", 0, LCG_NO_QUOTA, 100000 }, { "200000 100000\n", 0, 200000, 100000 },
                { "max", -EINVAL, 0, 0 },                    { "0 100000", -EINVAL, 0, 0 },
                { "100 0", -EINVAL, 0, 0 },                  { "-1 100000", -EINVAL, 0, 0 },
                { "", -EINVAL, 0, 0 },                       { "1 2 3", -EINVAL, 0, 0 },
        };
        for (unsigned i = 0; i < ELEMENTSOF(cm); i++) {
                uint64_t q = 7, p = 7;
                CHECK_INT(lcg_parse_cpu_max(cm[i].in, &q, &p), cm[i].r);
                CHECK(q == (cm[i].r == 0 ? cm[i].q : 7));
                CHECK(p == (cm[i].r == 0 ? cm[i].p : 7));
        }
        uint64_t q = 7;
        CHECK_INT(lcg_parse_v1_quota("-1\n", &q), 0);
        CHECK(q == LCG_NO_QUOTA);
        CHECK_INT(lcg_parse_v1_quota("50000\n", &q), 0);
        CHECK_INT(q, 50000);
        CHECK_INT(lcg_parse_v1_quota("-2", &q), -EINVAL);
        CHECK_INT(lcg_parse_v1_quota("0", &q), -EINVAL);

        lcg_cpu_stat st;
        static const char v1[] = "nr_periods 10\nnr_throttled 3\nthrottled_time 5000000\n";
        CHECK_INT(lcg_parse_cpu_stat(v1, sizeof(v1) - 1, &st), 0);
        CHECK_INT(st.nr_throttled, 3);
        CHECK_INT(st.throttled_usec, 5000);
        static const char v2[] = "usage_usec 5\nnr_periods 10\nnr_throttled 4\nthrottled_usec 77\nnr_bursts 0\n";
        CHECK_INT(lcg_parse_cpu_stat(v2, sizeof(v2) - 1, &st), 0);
        CHECK_INT(st.throttled_usec, 77);
        CHECK_INT(lcg_parse_cpu_stat("nr_periods x\n", 13, &st), -EINVAL);
        CHECK_INT(lcg_parse_cpu_stat("nr_periods\n", 11, &st), -EINVAL);

        uint64_t l = 0;
        CHECK_INT(lcg_parse_limit("max\n", &l), 0);
        CHECK(l == UINT64_MAX);
        CHECK_INT(lcg_parse_limit("4194304", &l), 0);
        CHECK_INT(l, 4194304);
        CHECK_INT(lcg_parse_limit("4M", &l), -EINVAL);

        static const char lim[] = "Limit                     Soft Limit           Hard Limit           Units     \n"
                                  "Max locked memory         8388608              unlimited            bytes     \n";
        CHECK_INT(lcg_parse_memlock(lim, sizeof(lim) - 1, &l), 0);
        CHECK_INT(l, 8388608);
        static const char unl[] = "Max locked memory         unlimited            unlimited            bytes\n";
        CHECK_INT(lcg_parse_memlock(unl, sizeof(unl) - 1, &l), 0);
        CHECK(l == UINT64_MAX);
        CHECK_INT(lcg_parse_memlock("Max open files 5 5 files\n", 25, &l), -ENOENT);
        CHECK_INT(lcg_parse_memlock("Max locked memory   lots  x\n", 28, &l), -EINVAL);

        static const char status[] = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t00000000a80425fb\nCapBnd:\t000001ffffffffff\n";
        l = 7;
        CHECK_INT(lcg_parse_capeff(status, sizeof(status) - 1, &l), 0);
        CHECK_INT(l, 0xa80425fb);
        l = 7;
        CHECK_INT(lcg_parse_capeff("Name:\tx\n", 8, &l), -ENOENT);
        CHECK_INT(lcg_parse_capeff("CapEff:\tzz\n", 11, &l), -EINVAL);
        CHECK_INT(lcg_parse_capeff("CapEff:\t\n", 9, &l), -EINVAL);
        CHECK_INT(lcg_parse_capeff("CapEff:\t00000000000000000001\n", 29, &l), -EINVAL);
        CHECK_INT(l, 7); /* untouched on failure */
}

int main(void)
{
        test_self();
        test_mountinfo_resolve();
        test_files();
        return test_done();
}
