/* SPDX-License-Identifier: Apache-2.0 */
/* Table tests for the procfs/sysfs content parsers: good and bad inputs of each, and
 * that outputs stay untouched on failure. */
#include "procparse.h"
#include "testutil.h"

#include "cleanup.h"

#include <errno.h>

#define S(x) x, sizeof(x) - 1

static void test_mounts(void)
{
        static const char tab[] =
                "sysfs /sys sysfs rw,nosuid 0 0\n"
                "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
                "none /mnt/huge\\0401g hugetlbfs rw,pagesize=1024M 0 0\n"
                "short line\n"
                "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0"; /* no trailing newline */
        size_t pos = 0;
        procparse_mount m;
        char v[16];

        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), 1);
        CHECK_STR(m.fstype, "sysfs");
        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), 1);
        CHECK_STR(m.target, "/dev/hugepages");
        CHECK_STR(m.fstype, "hugetlbfs");
        CHECK_INT(procparse_mount_option(m.options, "pagesize", v, sizeof(v)), 1);
        CHECK_STR(v, "2M");
        CHECK_INT(procparse_mount_option(m.options, "size", v, sizeof(v)), 0);
        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), 1);
        CHECK_STR(m.target, "/mnt/huge 1g");
        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), -EINVAL);
        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), 1);
        CHECK_STR(m.fstype, "cgroup2");
        CHECK_INT(procparse_mount_next(tab, sizeof(tab) - 1, &pos, &m), 0);
        CHECK_INT(procparse_mount_option("pagesize=1234567890123456789", "pagesize", v, sizeof(v)), -ENAMETOOLONG);

        /* an overlay line longer than the options field is cut, not fatal */
        char big[2048];
        int n = snprintf(big, sizeof(big), "overlay / overlay rw,lowerdir=");
        memset(big + n, 'a', 1500);
        memcpy(big + n + 1500, " 0 0\n", 5);
        pos = 0;
        CHECK_INT(procparse_mount_next(big, (size_t)n + 1505, &pos, &m), 1);
        CHECK(m.truncated);
        CHECK_STR(m.fstype, "overlay");
        /* a lone backslash at the end is kept as is */
        pos = 0;
        CHECK_INT(procparse_mount_next(S("a /x\\12 t o\n"), &pos, &m), 1);
        CHECK_STR(m.target, "/x\\12");
}

static void test_size(void)
{
        static const struct {
                const char *in;
                int r;
                uint64_t kb;
        } t[] = {
                {"2M", 0, 2048}, {"1G", 0, 1048576}, {"64k", 0, 64}, {"2097152", 0, 2048},
                {"1000", -EINVAL, 0}, {"", -EINVAL, 0}, {"M", -EINVAL, 0}, {"2X", -EINVAL, 0},
                {"-2M", -EINVAL, 0}, {"99999999999999999999G", -ERANGE, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                uint64_t kb = 7;
                CHECK_INT(procparse_size_kb(t[i].in, &kb), t[i].r);
                CHECK_INT(kb, t[i].r == 0 ? t[i].kb : 7);
        }
}

static void test_cmdline(void)
{
        static const char *const keys[] = {"isolcpus", "nohz_full", "hugepagesz", "hugepages", "nosmt", NULL};
        static const char line[] =
                "BOOT_IMAGE=/vmlinuz root=UUID=x ro isolcpus=managed_irq,domain,2-7 nohz_full=2-7 "
                "hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=2 nosmt quiet \"dyndbg=a b\" "
                "nohz_full=\"3 4\"\n";
        procparse_cmdline_flag f[8];
        size_t n = 99;

        CHECK_INT(procparse_cmdline(S(line), keys, f, 8, &n), 0);
        CHECK_INT(n, 8);
        CHECK_STR(f[0].name, "isolcpus");
        CHECK_STR(f[0].value, "managed_irq,domain,2-7");
        CHECK_STR(f[2].name, "hugepagesz");
        CHECK_STR(f[4].value, "1G");
        CHECK_STR(f[6].name, "nosmt");
        CHECK(!f[6].has_value);
        CHECK_STR(f[7].value, "3 4");
        /* max smaller than the flags: the rest are counted as cut */
        CHECK_INT(procparse_cmdline(S(line), keys, f, 2, &n), 6);
        CHECK_INT(n, 2);
        /* unterminated quote: nothing stored */
        n = 99;
        CHECK_INT(procparse_cmdline(S("isolcpus=\"2-3"), keys, f, 8, &n), -EINVAL);
        CHECK_INT(n, 99);
        CHECK_INT(procparse_cmdline("", 0, keys, f, 8, &n), 0);
        CHECK_INT(n, 0);
        /* a value longer than the field is cut and counted */
        char longv[400];
        int k = snprintf(longv, sizeof(longv), "isolcpus=");
        memset(longv + k, '1', 300);
        CHECK_INT(procparse_cmdline(longv, (size_t)k + 300, keys, f, 8, &n), 1);
        CHECK_INT(n, 1);
        CHECK_INT(strlen(f[0].value), sizeof(f[0].value) - 1);
}

static void test_uevent(void)
{
        static const char ue[] = "DRIVER=ena\nPCI_CLASS=20000\nPCI_ID=1D0F:EC20\nPCI_SLOT_NAME=0000:00:06.0";
        char v[16];
        uint16_t ven = 1, dev = 2;

        CHECK_INT(procparse_uevent_get(S(ue), "DRIVER", v, sizeof(v)), 1);
        CHECK_STR(v, "ena");
        CHECK_INT(procparse_uevent_get(S(ue), "PCI_SLOT_NAME", v, sizeof(v)), 1);
        CHECK_STR(v, "0000:00:06.0");
        CHECK_INT(procparse_uevent_get(S(ue), "PCI", v, sizeof(v)), 0);
        CHECK_INT(procparse_uevent_get(S(ue), "MISSING", v, sizeof(v)), 0);
        CHECK_INT(procparse_uevent_get(S(ue), "PCI_SLOT_NAME", v, 4), -ENAMETOOLONG);
        CHECK_INT(procparse_pci_id("1D0F:EC20", &ven, &dev), 0);
        CHECK_INT(ven, 0x1d0f);
        CHECK_INT(dev, 0xec20);
        static const char *const bad[] = {"1D0F", "1D0F:EC2", "1D0F:EC200", "0x1D:EC20", "GGGG:0000", ":", ""};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ven = 1;
                CHECK_INT(procparse_pci_id(bad[i], &ven, &dev), -EINVAL);
                CHECK_INT(ven, 1);
        }
}

static void test_meminfo(void)
{
        static const char mi[] = "MemTotal:       16314216 kB\nHugePages_Total:      512\nHugepagesize:       2048 kB\n"
                                 "Bad:   x kB\n";
        uint64_t v = 5;
        CHECK_INT(procparse_meminfo(S(mi), "Hugepagesize", &v), 1);
        CHECK_INT(v, 2048);
        CHECK_INT(procparse_meminfo(S(mi), "HugePages_Total", &v), 1);
        CHECK_INT(v, 512);
        v = 5;
        CHECK_INT(procparse_meminfo(S(mi), "Bad", &v), -EINVAL);
        CHECK_INT(procparse_meminfo(S(mi), "Nope", &v), 0);
        CHECK_INT(v, 5);
}

static void test_pci_resource(void)
{
        static const char res[] = "0x00000000febf0000 0x00000000febf3fff 0x0000000000040200\n"
                                  "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
                                  "0x00000000fe800000 0x00000000fe8fffff 0x000000000014220c\n";
        uint64_t a = 1, b = 2;
        CHECK_INT(procparse_pci_prefetch_bar(S(res), &a, &b), 1);
        CHECK_INT(a, 0xfe800000);
        CHECK_INT(b, 0xfe8fffff);
        a = 1;
        CHECK_INT(procparse_pci_prefetch_bar(S("0x1 0x2 0x200\n"), &a, &b), 0);
        CHECK_INT(procparse_pci_prefetch_bar(S("0x1 0x2\n"), &a, &b), -EINVAL);
        CHECK_INT(procparse_pci_prefetch_bar(S("0x1 zz 0x2200\n"), &a, &b), -EINVAL);
        CHECK_INT(a, 1);
}

static void test_pat(void)
{
        static const char pat[] = "PAT memtype list:\n"
                                  "PAT: [mem 0x00000000fe800000-0x00000000fe900000] write-combining\n"
                                  "PAT: [mem 0x00000000febf0000-0x00000000febf4000] uncached-minus\n"
                                  "PAT: [mem garbage] write-back\n";
        char t[32] = "x";
        CHECK_INT(procparse_pat_lookup(S(pat), 0xfe800000, 0xfe8fffff, t, sizeof(t)), 1);
        CHECK_STR(t, "write-combining");
        CHECK_INT(procparse_pat_lookup(S(pat), 0xfebf0000, 0xfebf3fff, t, sizeof(t)), 1);
        CHECK_STR(t, "uncached-minus");
        strcpy(t, "x");
        CHECK_INT(procparse_pat_lookup(S(pat), 0x1000, 0x2000, t, sizeof(t)), 0);
        CHECK_STR(t, "x");
}

static void test_names(void)
{
        uint64_t kb = 3;
        unsigned idx = 9;
        CHECK_INT(procparse_hugepage_dirname("hugepages-2048kB", &kb), 0);
        CHECK_INT(kb, 2048);
        static const char *const bad[] = {"hugepages-kB", "hugepages-2048", "hugepages-0kB", "huge-2048kB",
                                          "hugepages-x2kB", "hugepages-99999999999999999999kB"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                kb = 3;
                CHECK_INT(procparse_hugepage_dirname(bad[i], &kb), -EINVAL);
                CHECK_INT(kb, 3);
        }
        CHECK_INT(procparse_indexed_name("cpu17", "cpu", 4095, &idx), 0);
        CHECK_INT(idx, 17);
        CHECK_INT(procparse_indexed_name("cpu0", "cpu", 4095, &idx), 0);
        CHECK_INT(idx, 0);
        static const char *const badn[] = {"cpu", "cpu01", "cpufreq", "cpu4096", "node1", "cpu-1"};
        for (size_t i = 0; i < ELEMENTSOF(badn); i++) {
                idx = 9;
                CHECK_INT(procparse_indexed_name(badn[i], "cpu", 4095, &idx), -EINVAL);
                CHECK_INT(idx, 9);
        }
}

int main(void)
{
        test_mounts();
        test_size();
        test_cmdline();
        test_uevent();
        test_meminfo();
        test_pci_resource();
        test_pat();
        test_names();
        return test_done();
}
