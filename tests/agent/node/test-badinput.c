/* SPDX-License-Identifier: Apache-2.0 */
/* Bad host inputs: garbled, missing, looping, oversized or non-regular files give a
 * skip/warn verdict (or a problem) that names the path; never a crash, hang or guess. */
#include "checks.h"
#include "fixture.h"
#include "hostfs.h"
#include "devmap-json.h"
#include "inventory.h"

#include "cleanup.h"

#include <errno.h>
#include <sys/stat.h>

static char dir[512];

static void put(const char *rel, const char *data, size_t len)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/eks-x86%s", dir, rel);
        unlink(p);
        FILE *f = fopen(p, "w");
        if (!f) {
                perror(p);
                exit(2);
        }
        fwrite(data, 1, len, f);
        fclose(f);
}
#define PUT(rel, s) put(rel, s, sizeof(s) - 1)

static void fresh(void)
{
        if (dir[0])
                fixture_remove(dir);
        fixture_make(dir, sizeof(dir), "eks-x86");
}

/* Scan the (mutated) eks-x86 tree and check one verdict's level and that its message
 * contains needle (the path). Returns the inventory's problem count. */
static size_t expect(const char *what, const char *check, verdict_level level, const char *needle)
{
        char root[1024];
        hostfs h;
        inventory *inv = NULL;
        verdict_list l = {0};

        snprintf(root, sizeof(root), "%s/eks-x86", dir);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                exit(1);
        CHECK_INT(checks_node(inv, NULL, &l), 0);
        json_t *j = inventory_json_under(inv, NULL, NULL);
        CHECK(j != NULL); /* the document is still produced */
        json_decref(j);
        const verdict *v = verdict_find(&l, check);
        CHECK(v != NULL);
        if (v) {
                if (v->level != level || (needle && !strstr(v->message, needle)))
                        fprintf(stderr, "case %s: %s %s: %s\n", what, verdict_level_name(v->level), v->check,
                                v->message);
                CHECK_INT(v->level, level);
                if (needle)
                        CHECK(strstr(v->message, needle) != NULL);
        }
        size_t n = inv->n_problems;
        verdict_list_free(&l);
        inventory_free(inv);
        return n;
}

static bool has_problem(const char *path, int err)
{
        char root[1024];
        hostfs h;
        inventory *inv = NULL;
        bool found = false;

        snprintf(root, sizeof(root), "%s/eks-x86", dir);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        for (size_t i = 0; inv && i < inv->n_problems; i++)
                if (strcmp(inv->problems[i].path, path) == 0 && inv->problems[i].err == err)
                        found = true;
        if (!found)
                fprintf(stderr, "no problem %s (%s) recorded\n", path, strerror(-err));
        inventory_free(inv);
        return found;
}

#define NIC6 "/sys/devices/pci0000:00/0000:00:06.0"

int main(void)
{
        char path[PATH_MAX];

        fresh();
        CHECK_INT(expect("baseline", "numa-alignment", VERDICT_PASS, NULL), 0);

        /* abc in a DPDK NIC's numa_node */
        PUT(NIC6 "/numa_node", "abc\n");
        expect("abc numa_node", "numa-alignment", VERDICT_WARN,
               "0000:00:06.0: NUMA node unreadable (/sys/bus/pci/devices/0000:00:06.0/numa_node: Invalid argument)");
        CHECK(has_problem("/sys/bus/pci/devices/0000:00:06.0/numa_node", -EINVAL));

        /* a symlink loop where numa_node should be */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86" NIC6 "/numa_node", dir);
        unlink(path);
        CHECK_INT(symlink("numa_node.loop", path), 0);
        snprintf(path, sizeof(path), "%s/eks-x86" NIC6 "/numa_node.loop", dir);
        CHECK_INT(symlink("numa_node", path), 0);
        expect("symlink loop", "numa-alignment", VERDICT_WARN,
               "/sys/bus/pci/devices/0000:00:06.0/numa_node: Too many levels of symbolic links");

        /* a FIFO: must not block */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86" NIC6 "/numa_node", dir);
        unlink(path);
        CHECK_INT(mkfifo(path, 0600), 0);
        expect("fifo numa_node", "numa-alignment", VERDICT_WARN, "/sys/bus/pci/devices/0000:00:06.0/numa_node");

        /* bad CPU lists */
        static const struct {
                const char *file, *content, *needle;
        } lists[] = {
                {"/sys/devices/system/cpu/isolated", "3-1\n", "/sys/devices/system/cpu/isolated: Invalid argument"},
                {"/sys/devices/system/cpu/isolated", "0-999999\n",
                 "/sys/devices/system/cpu/isolated: Numerical result out of range"},
                {"/sys/devices/system/cpu/isolated", "1,,2\n", "/sys/devices/system/cpu/isolated: Invalid argument"},
                {"/sys/devices/system/cpu/online", "1,,2\n", "/sys/devices/system/cpu/online: Invalid argument"},
        };
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                fresh();
                put(lists[i].file, lists[i].content, strlen(lists[i].content));
                expect(lists[i].content, "isolated-cpus", VERDICT_SKIP, lists[i].needle);
        }

        /* a missing trailing newline is how some files end: same result */
        fresh();
        PUT("/sys/devices/system/cpu/isolated", "2-7,10-15");
        CHECK_INT(expect("no newline", "isolated-cpus", VERDICT_PASS, "6 isolated physical cores"), 0);

        /* garbled SMT siblings of one CPU: named, and the rest still works */
        fresh();
        PUT("/sys/devices/system/cpu/cpu3/topology/thread_siblings_list", "1,,2\n");
        expect("siblings 1,,2", "smt-siblings", VERDICT_WARN,
               "/sys/devices/system/cpu/cpu3/topology/thread_siblings_list: Invalid argument");
        /* a sibling list that omits the CPU itself is no guess either */
        fresh();
        PUT("/sys/devices/system/cpu/cpu3/topology/thread_siblings_list", "4,12\n");
        expect("siblings omit self", "smt-siblings", VERDICT_WARN,
               "/sys/devices/system/cpu/cpu3/topology/thread_siblings_list");
        /* an out-of-range core id */
        fresh();
        PUT("/sys/devices/system/cpu/cpu2/topology/core_id", "99999999999\n");
        CHECK(has_problem("/sys/devices/system/cpu/cpu2/topology/core_id", -ERANGE));
        expect("core_id range", "isolated-cpus", VERDICT_PASS, "6 isolated physical cores");

        /* a 1 MiB line in /proc/mounts is refused, not read (any number of lines is fine) */
        fresh();
        {
                char *big = malloc(1 << 20);
                memset(big, 'x', 1 << 20);
                put("/proc/mounts", big, 1 << 20);
                put("/proc/cmdline", big, 1 << 20);
                free(big);
        }
        expect("1 MiB mount line", "hugetlbfs", VERDICT_SKIP, "/proc/mounts: a line longer than 64 KiB");
        CHECK(has_problem("/proc/cmdline", -EFBIG));

        /* under a --root, the host's init's mount table wins over /proc/mounts (which is
         * /proc/self/mounts: the agent container's own) */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86/proc/1", dir);
        CHECK_INT(mkdir(path, 0700), 0);
        PUT("/proc/1/mounts", "sysfs /sys sysfs rw 0 0\n");
        expect("host init mounts", "hugetlbfs", VERDICT_FAIL, "no hugetlbfs mount");
        unlink(strcat(path, "/mounts"));
        CHECK_INT(mkdir(path, 0700), 0); /* not a regular file: named, no fallback */
        expect("host init mounts dir", "hugetlbfs", VERDICT_SKIP, "/proc/1/mounts: Invalid argument");

        /* garbled hugepage counts */
        fresh();
        PUT("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "abc\n");
        expect("free_hugepages abc", "hugepages", VERDICT_SKIP,
               "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages: Invalid argument");
        fresh();
        PUT("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "2048\n"); /* more free than total */
        expect("free > total", "hugepages", VERDICT_SKIP, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");

        /* the node's link usage (the recorded rtnetlink dump of a fake tree): missing, cut
         * short, garbled - nothing is taken and primary-nic says why */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86/spinlane-fixture/rtnetlink.dump", dir);
        CHECK_INT(unlink(path), 0);
        expect("no link usage", "primary-nic", VERDICT_FAIL,
               "cannot tell which NICs the node uses: /spinlane-fixture/rtnetlink.dump: No such file or directory: "
               "node preparation takes no NIC");
        CHECK(has_problem("/spinlane-fixture/rtnetlink.dump", -ENOENT));
        PUT("/spinlane-fixture/rtnetlink.dump", "\x14\0\0\0\x10\0\x02\0\x01\0\0\0\0\0\0\0");
        expect("cut link usage", "primary-nic", VERDICT_FAIL, "ends inside the links dump");
        PUT("/spinlane-fixture/rtnetlink.dump", "garbage and more garbage\n");
        expect("garbled link usage", "primary-nic", VERDICT_FAIL, "a malformed answer in the links dump");

        /* an unreadable uevent (a directory) */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86" NIC6 "/uevent", dir);
        unlink(path);
        CHECK_INT(mkdir(path, 0700), 0);
        expect("uevent dir", "nic-binding", VERDICT_WARN, "/sys/bus/pci/devices/0000:00:06.0/uevent");

        /* no PCI bus at all */
        fresh();
        snprintf(path, sizeof(path), "%s/eks-x86/sys/bus/pci/devices", dir);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
        CHECK_INT(system(cmd), 0);
        expect("no pci dir", "nic-binding", VERDICT_SKIP, "/sys/bus/pci/devices: No such file or directory");

        /* a NUMA node's cpulist is garbage */
        fresh();
        PUT("/sys/devices/system/node/node0/cpulist", "zz\n");
        expect("node cpulist", "numa-alignment", VERDICT_WARN, "/sys/devices/system/node/node0/cpulist");

        /* nohz_full unreadable */
        fresh();
        PUT("/sys/devices/system/cpu/nohz_full", "2-\n");
        expect("nohz 2-", "nohz-full", VERDICT_WARN, "/sys/devices/system/cpu/nohz_full: Invalid argument");

        /* the vfio no-IOMMU switch says something odd */
        fresh();
        PUT("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", "maybe\n");
        CHECK(has_problem("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", -EINVAL));

        fixture_remove(dir);
        return test_done();
}
