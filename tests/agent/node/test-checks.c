/* SPDX-License-Identifier: Apache-2.0 */
/* Exact node verdicts per fixture node: level of every check id in order, and the
 * messages and remedies a person reads for the ones that matter. */
#include "checks.h"
#include "devmap-json.h"
#include "fixture.h"
#include "hostfs.h"
#include "inventory.h"

#include "cleanup.h"

static char dir[512];

typedef struct expect {
        const char *check;
        verdict_level level;
        const char *message; /* exact, or NULL: not compared */
} expect;

/* The NICs the next run() takes as selected (a device map made by device_map_where);
 * NULL: the default config's map. */
static bool (*pick)(const inv_nic *nic, void *userdata);

static void run(const char *name, const checks_options *opt, const expect *e, size_t n, verdict_list *ret)
{
        char root[1024];
        hostfs h;
        inventory *inv = NULL;
        device_map map = { 0 };
        checks_options with = opt ? *opt : (checks_options){ 0 };

        snprintf(root, sizeof(root), "%s/%s", dir, name);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                exit(1);
        if (pick) {
                CHECK_INT(device_map_where(inv, pick, &map), 0);
                with.map = &map;
                pick = NULL;
        }
        CHECK_INT(checks_node(inv, opt || with.map ? &with : NULL, ret), 0);
        device_map_free(&map);
        CHECK_INT(ret->n, n);
        for (size_t i = 0; i < n && i < ret->n; i++) {
                const verdict *v = &ret->items[i];
                CHECK_STR(v->check, e[i].check);
                if (v->level != e[i].level)
                        fprintf(stderr, "%s: %s is %s: %s\n", name, v->check, verdict_level_name(v->level),
                                v->message);
                CHECK_INT(v->level, e[i].level);
                if (e[i].message)
                        CHECK_STR(v->message, e[i].message);
                CHECK(json_is_object(v->evidence));
                /* a verdict that is not a pass tells what to do, unless it is a plain skip */
                if (v->level == VERDICT_WARN || v->level == VERDICT_FAIL)
                        CHECK(v->remedy && *v->remedy);
        }
        inventory_free(inv);
}

static void test_eks(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, "6 isolated physical cores (CPUs 2-7,10-15)"},
                {"smt-siblings", VERDICT_PASS, "every isolated CPU's SMT siblings are isolated too"},
                {"nohz-full", VERDICT_PASS, "every isolated CPU is nohz_full (2-7,10-15)"},
                {"hugepages", VERDICT_PASS, "2048 kB: 1024 free of 1024, 1048576 kB: 0 free of 0"},
                {"hugetlbfs", VERDICT_PASS, "hugetlbfs at /dev/hugepages (pagesize 2048 kB)"},
                {"iommu", VERDICT_WARN,
                 "vfio runs without an IOMMU for 0000:00:06.0, 0000:00:07.0: a DPDK process there can DMA anywhere "
                 "in host memory, so it is as trusted as the kernel"},
                {"nic-binding", VERDICT_PASS, "2 DPDK-ready NICs: 0000:00:06.0 (vfio-pci), 0000:00:07.0 (vfio-pci)"},
                {"primary-nic", VERDICT_PASS, "primary NIC 0000:00:05.0 (eth0) carries the default route and stays on ena"},
                {"write-combining", VERDICT_PASS, "ENA memory BAR mapped write-combining for 0000:00:06.0, 0000:00:07.0"},
                {"numa-alignment", VERDICT_PASS,
                 "isolated cores and free hugepages on the NUMA node of 0000:00:06.0 (node 0), 0000:00:07.0 (node 0)"},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        verdict_list l = {0};
        run("eks-x86", NULL, e, ELEMENTSOF(e), &l);
        CHECK_INT(verdict_exit_code(&l), 0);
        verdict_list_free(&l);

        /* hugetlbfs.pod_mount on: the same node, the hugetlbfs verdict a warning that says
         * what the pods can then read; the rest as before */
        expect w[ELEMENTSOF(e)];
        memcpy(w, e, sizeof(w));
        w[4] = (expect){"hugetlbfs", VERDICT_WARN,
                        "hugetlbfs at /dev/hugepages (pagesize 2048 kB); hugetlbfs.pod_mount is true: the node's "
                        "/dev/hugepages is mounted read-write into every pod given a NIC, so each such pod can read "
                        "and write every other one's hugepage files (DPDK's rtemap_* files: their packet buffers and "
                        "DPDK memory)"};
        checks_options shared = {.hugetlbfs_pod_mount = true, .hugetlbfs_mount_point = "/dev/hugepages"};
        run("eks-x86", &shared, w, ELEMENTSOF(w), &l);
        CHECK_INT(verdict_exit_code(&l), 0);
        CHECK(strstr(l.items[4].remedy, "hugetlbfs.pod_mount to false") != NULL);
        CHECK(json_is_true(json_object_get(l.items[4].evidence, "pod_mount")));
        verdict_list_free(&l);
}

static void test_graviton(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, "6 isolated physical cores (CPUs 2-7)"},
                {"smt-siblings", VERDICT_PASS, "no SMT: every physical core is one CPU"},
                {"nohz-full", VERDICT_PASS, NULL},
                {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},
                {"iommu", VERDICT_PASS, "an IOMMU is active: vfio-pci isolates device DMA"},
                {"nic-binding", VERDICT_PASS, "1 DPDK-ready NIC: 0000:00:06.0 (vfio-pci)"},
                {"primary-nic", VERDICT_PASS, NULL},
                {"write-combining", VERDICT_SKIP, "not an x86 node: the PAT write-combining check does not apply"},
                {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        verdict_list l = {0};
        run("graviton", NULL, e, ELEMENTSOF(e), &l);
        CHECK_INT(verdict_exit_code(&l), 0);
        verdict_list_free(&l);
}

static void test_aks(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, "3 isolated physical cores (CPUs 2-7)"},
                {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},
                {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},
                {"iommu", VERDICT_SKIP, "no NIC here needs vfio (no IOMMU present)"},
                {"nic-binding", VERDICT_PASS, "1 DPDK-ready NIC: 8a3c:00:00.0 (mana)"},
                {"primary-nic", VERDICT_PASS,
                 "primary NIC 7870:00:00.0 (enP30832s1) carries the default route and stays on mana"},
                {"write-combining", VERDICT_SKIP, "no ENA bound to vfio-pci or igb_uio"},
                {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        verdict_list l = {0};
        run("aks-mana", NULL, e, ELEMENTSOF(e), &l);
        verdict_list_free(&l);
}

static void test_broken(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, "1 isolated physical core (CPUs 2,6)"},
                {"smt-siblings", VERDICT_WARN, "1 split core: core p0c3 (CPUs 3,7): CPU 3 isolated, 7 not"},
                {"nohz-full", VERDICT_WARN, "isolated CPUs 2,6 are not nohz_full: the scheduler tick still interrupts them"},
                {"hugepages", VERDICT_FAIL, "no free hugepages (2048 kB: 0 free of 0)"},
                {"hugetlbfs", VERDICT_FAIL, "no hugetlbfs mount in /proc/mounts"},
                {"iommu", VERDICT_WARN, "no IOMMU and vfio no-IOMMU mode is off: vfio-pci cannot take an ENA here"},
                {"nic-binding", VERDICT_FAIL,
                 "no DPDK-ready NIC; not ready: 0000:00:06.0 (ena, eth1): bound to the kernel driver ena as eth1; "
                 "the node uses it, never taken: eth1 has address 192.168.0.11/24, has route \"192.168.0.0/24 table "
                 "main metric 100\""},
                {"primary-nic", VERDICT_PASS, NULL},
                {"write-combining", VERDICT_SKIP, NULL},
                {"numa-alignment", VERDICT_SKIP, "no DPDK-ready NIC to align"},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        verdict_list l = {0};
        run("broken", NULL, e, ELEMENTSOF(e), &l);
        const verdict *v = verdict_find(&l, "nic-binding");
        CHECK_STR(v->remedy, "0000:00:06.0: the node uses eth1 (see why): leave it to the node, or take its addresses, "
                             "routes, rules and master off first; spinlane never takes it as it is");
        v = verdict_find(&l, "smt-siblings");
        CHECK(strstr(v->remedy, "add CPUs 7 to isolcpus/nohz_full (or remove CPUs 3 from them)") != NULL);
        CHECK_INT(verdict_exit_code(&l), 1);
        verdict_list_free(&l);
}

/* A config that selects the primary NIC: primary-nic fails before anything is bound. */
static bool select_all_ena(const inv_nic *nic, void *userdata)
{
        (void)userdata;
        return nic->kind == INV_NIC_ENA;
}

static void test_selection(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, NULL},
                {"smt-siblings", VERDICT_WARN, NULL},
                {"nohz-full", VERDICT_WARN, NULL},
                {"hugepages", VERDICT_FAIL, NULL},
                {"hugetlbfs", VERDICT_FAIL, NULL},
                {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_FAIL, NULL},
                {"primary-nic", VERDICT_FAIL,
                 "NIC 0000:00:05.0 (eth0) carries the default route and is selected for DPDK: giving it to a pod "
                 "would cut the node off"},
                {"write-combining", VERDICT_SKIP, NULL},
                {"numa-alignment", VERDICT_SKIP, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        checks_options o = {.bind_driver = "igb_uio"};
        pick = select_all_ena;
        verdict_list l = {0};
        run("broken", &o, e, ELEMENTSOF(e), &l);
        const verdict *v = verdict_find(&l, "nic-binding");
        CHECK(strstr(v->remedy, "0000:00:06.0: the node uses eth1") != NULL);
        verdict_list_free(&l);
}

static bool select_mana(const inv_nic *nic, void *userdata)
{
        (void)userdata;
        return nic->kind == INV_NIC_MANA;
}

/* eks-al2023: the primary is the lowest default metric (ens5, 512); ens6 (513) and the
 * VPC CNI's ens7 (table 2 only) are named by PCI address with why the node uses them;
 * the untouched ens8 is the one to bind (with the configured driver). */
static void test_al2023(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, NULL},
                {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},
                {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},
                {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_FAIL,
                 "no DPDK-ready NIC; not ready: 0000:00:06.0 (ena, ens6): bound to the kernel driver ena as ens6; the "
                 "OS configured it (an address and a default route, as amazon-ec2-net-utils does for every ENI), never "
                 "taken: ens6 has address 10.0.2.11/24, has route \"default via 10.0.2.1 table "
                 "main metric 513\" (+1 more); 0000:00:07.0 (ena, ens7): bound to the kernel driver ena as ens7; the "
                 "node uses it, never taken: ens7 has route \"default via 10.0.3.1 table 2 metric 0\" (+1 more); "
                 "0000:00:08.0 (ena, ens8): bound to the kernel driver ena as ens8"},
                {"primary-nic", VERDICT_PASS,
                 "primary NIC 0000:00:05.0 (ens5) carries the lowest-metric default route (metric 512) and stays on "
                 "ena; the OS also configured 0000:00:06.0 (ens6, default route metric 513): in use, never taken"},
                {"write-combining", VERDICT_SKIP, NULL},
                {"numa-alignment", VERDICT_SKIP, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        checks_options o = {.bind_driver = "igb_uio"};
        verdict_list l = {0};
        run("eks-al2023", &o, e, ELEMENTSOF(e), &l);
        const verdict *v = verdict_find(&l, "nic-binding");
        /* ens6, configured by the OS: the systemd-networkd drop-in that leaves it
         * unmanaged (by MAC), then SIGHUP; the free ens8: the agent binds it, never a hand
         * bind that restore could not undo */
        CHECK_STR(v->remedy, "0000:00:06.0: the OS configures ens6; to give it to spinlane, leave it unmanaged by "
                             "systemd-networkd: printf '[Match]\\nMACAddress=0a:1b:2c:3d:4e:06\\n\\n[Link]\\n"
                             "Unmanaged=yes\\n' > /etc/systemd/network/10-spinlane-ens6.network on the node, reboot "
                             "it (or run networkctl reload and take the interface's addresses, routes and rules off), "
                             "then send the agent SIGHUP: it binds the NIC and records it, so `spinlane-agent restore` "
                             "can give it back (a hand bind with dpdk-devbind.py cannot be); 0000:00:07.0: the "
                             "node uses ens7 (see why): leave it to the node, or take its addresses, routes, rules and "
                             "master off first; spinlane never takes it as it is; 0000:00:08.0: let the agent bind it "
                             "to igb_uio: node preparation does at start and on SIGHUP (`spinlane-agent prepare` "
                             "once); if it did not, its prep-nic-binding verdict says why");
        CHECK(strstr(v->remedy, "dpdk-devbind.py --bind") == NULL);
        verdict_list_free(&l);

        /* selectors that leave every secondary NIC out: "no candidate" names them and the
         * selector, not a missing secondary ENA */
        static const expect e2[] = {
                {"isolated-cpus", VERDICT_PASS, NULL}, {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},     {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},     {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_FAIL, NULL},   {"primary-nic", VERDICT_PASS, NULL},
                {"write-combining", VERDICT_SKIP, NULL}, {"numa-alignment", VERDICT_SKIP, NULL},
                {"nic-address", VERDICT_SKIP, NULL},
        };
        checks_options mana_only = {0};
        pick = select_mana;
        run("eks-al2023", &mana_only, e2, ELEMENTSOF(e2), &l);
        v = verdict_find(&l, "nic-binding");
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK_STR(v->message, "no DPDK-ready NIC and no candidate: the config's NIC selectors (nics.*) exclude every "
                              "secondary NIC: 0000:00:06.0 (ena, ens6), 0000:00:07.0 (ena, ens7), 0000:00:08.0 (ena, ens8)");
        CHECK(strstr(v->remedy, "widen the NIC selectors in the config") != NULL);
        CHECK(strstr(v->message, "no secondary ENA") == NULL);
        verdict_list_free(&l);
}

/* Link usage that cannot be read: primary-nic fails and says why; 2 100 routes are fine. */
static void test_link_usage(void)
{
        verdict_list l = {0};
        static const expect routes[] = {
                {"isolated-cpus", VERDICT_PASS, NULL}, {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},     {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},     {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_PASS, NULL},
                {"primary-nic", VERDICT_PASS, "primary NIC 0000:00:05.0 (eth0) carries the default route and stays on ena"},
                {"write-combining", VERDICT_PASS, NULL}, {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        run("eks-x86-routes", NULL, routes, ELEMENTSOF(routes), &l);
        verdict_list_free(&l);

        char p[1024];
        snprintf(p, sizeof(p), "%s/eks-x86-routes/spinlane-fixture/rtnetlink.dump", dir);
        FILE *f = fopen(p, "r+");
        CHECK(f && fseek(f, 40000, SEEK_SET) == 0 && fputs("garbage!", f) >= 0);
        if (f)
                fclose(f);
        static const expect bad[] = {
                {"isolated-cpus", VERDICT_PASS, NULL}, {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},     {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},     {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_WARN, NULL},
                {"primary-nic", VERDICT_FAIL,
                 "cannot tell which NICs the node uses: /spinlane-fixture/rtnetlink.dump: a malformed answer in the "
                 "IPv4 routes dump: node preparation takes no NIC"},
                {"write-combining", VERDICT_PASS, NULL}, {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        run("eks-x86-routes", NULL, bad, ELEMENTSOF(bad), &l);
        verdict_list_free(&l);
}

/* eks-x86 without debugfs (most containers): the unreadable PAT list leaves
 * write-combining unknown and touches no other verdict. */
static void test_no_debugfs(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, NULL},
                {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},
                {"hugepages", VERDICT_PASS, NULL},
                {"hugetlbfs", VERDICT_PASS, NULL},
                {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_PASS, "2 DPDK-ready NICs: 0000:00:06.0 (vfio-pci), 0000:00:07.0 (vfio-pci)"},
                {"primary-nic", VERDICT_PASS, NULL},
                {"write-combining", VERDICT_WARN,
                 "write-combining unknown for 0000:00:06.0, 0000:00:07.0 (the PAT list is unreadable here)"},
                {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        char p[1024];
        verdict_list l = {0};

        snprintf(p, sizeof(p), "%s/eks-x86/sys/kernel/debug/x86/pat_memtype_list", dir);
        CHECK_INT(unlink(p), 0);
        run("eks-x86", NULL, e, ELEMENTSOF(e), &l);
        CHECK_INT(json_array_size(json_object_get(verdict_find(&l, "nic-binding")->evidence, "problems")), 0);
        verdict_list_free(&l);
}

static void test_big(void)
{
        static const expect e[] = {
                {"isolated-cpus", VERDICT_PASS, "88 isolated physical cores (CPUs 4-47,52-95,100-143,148-191)"},
                {"smt-siblings", VERDICT_PASS, NULL},
                {"nohz-full", VERDICT_PASS, NULL},
                {"hugepages", VERDICT_PASS, "2048 kB: 8000 free of 8192, 1048576 kB: 8 free of 8"},
                {"hugetlbfs", VERDICT_PASS,
                 "hugetlbfs at /dev/hugepages (pagesize 2048 kB), /dev/hugepages-1G (pagesize 1048576 kB)"},
                {"iommu", VERDICT_WARN, NULL},
                {"nic-binding", VERDICT_PASS, NULL},
                {"primary-nic", VERDICT_PASS, NULL},
                {"write-combining", VERDICT_PASS, NULL},
                {"numa-alignment", VERDICT_PASS, NULL},
                {"nic-address", VERDICT_SKIP, NULL}, /* addresses not resolved here: test-addresses */
        };
        verdict_list l = {0};
        run("big", NULL, e, ELEMENTSOF(e), &l);
        verdict_list_free(&l);
}

int main(void)
{
        fixture_make(dir, sizeof(dir), NULL);
        test_eks();
        test_graviton();
        test_aks();
        test_broken();
        test_selection();
        test_big();
        test_al2023();
        test_link_usage();
        test_no_debugfs();
        fixture_remove(dir);
        return test_done();
}
