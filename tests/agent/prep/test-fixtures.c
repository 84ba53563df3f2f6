/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation on the generated fixture nodes (tests/fixtures/make-node.py), with
 * the inventory's scan and the kernel's binding semantics emulated on the tree: what a
 * first run does on eks-x86, graviton, aks-mana and broken; broken made bindable, bound,
 * re-scanned and restored; the big node timed. */
#include "prep-inventory.h"
#include "select.h"

#include "fixture.h"
#include "cleanup.h"
#include "nodeprep-test.h"
#include "sysfs-emu.h"
#include "testutil.h"

#include <errno.h>
#include <time.h>

static int prepare(emu *e, const config *c, prep_report **rep)
{
        prep_nic nics[PREP_MAX_NICS];
        size_t n = 0;
        prep_ops ops;
        prep_ops_default(&e->h, &ops);
        ops.sysfs = emu_ops(e);
        ops.tune.write = emu_ops_template.write;
        ops.tune.userdata = e;
        CHECK_INT(prep_scan_inventory(NULL, &e->h, nics, PREP_MAX_NICS, &n), 0);
        return prep_apply(&e->h, &ops, c, nics, n, rep);
}

static const char *msg(const prep_report *r, const char *check)
{
        const verdict *v = verdict_find(&r->verdicts, check);
        return v ? v->message : "(none)";
}

/* The selection rule (agent/node/select.h) under the config text over the tree's inventory:
 * "0/1" per NIC (PCI order) into nics and per core (by first CPU) into cores; the checks'
 * hook and select_core() must answer the same. */
static void rule(const char *root, const char *json, char nics[64], char cores[64])
{
        hostfs h;
        inventory *inv = NULL;
        selection sel = { 0 };
        config c = test_config(json);

        nics[0] = cores[0] = '\0';
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                return;
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        size_t i;
        for (i = 0; i < inv->n_nics && i + 1 < 64; i++) {
                nics[i] = selection_has_nic(&sel, &inv->nics[i]) ? '1' : '0';
                CHECK(selection_has_nic(&sel, &inv->nics[i]) == (nics[i] == '1'));
        }
        nics[i] = '\0';
        for (i = 0; i < inv->n_cores && i + 1 < 64; i++) {
                cores[i] = selection_has_core(&sel, &inv->cores[i]) ? '1' : '0';
                CHECK(select_core(&c, &inv->cores[i]) == (cores[i] == '1'));
        }
        cores[i] = '\0';
        selection_free(&sel);
        inventory_free(inv);
}

/* The NICs preparation, the checks and the device plugin take. */
static void check_selection(const char *root, const char *json, const char *want)
{
        char nics[64], cores[64];
        rule(root, json, nics, cores);
        CHECK_STR(nics, want);
        if (strcmp(nics, want) != 0)
                fprintf(stderr, "  for %s under %s\n", json, root);
}

/* The core pool of the same rule. */
static void check_cores(const char *root, const char *json, const char *want)
{
        char nics[64], cores[64];
        rule(root, json, nics, cores);
        CHECK_STR(cores, want);
        if (strcmp(cores, want) != 0)
                fprintf(stderr, "  for %s under %s\n", json, root);
}

int main(void)
{
        char dir[256], root[512];
        emu e;
        prep_report *rep = NULL;
        config c = test_config("{\"tuning\":{\"interrupt_moderation_off\":true}}");

        fixture_make(dir, sizeof(dir), "eks-x86 graviton aks-mana broken big");

        /* NIC selection: eks-x86 has the primary ENA 00:05.0 and ENAs 00:06.0, 00:07.0 on
         * vfio-pci; aks-mana the primary MANA 7870:00:00.0 and 8a3c:00:00.0. */
        snprintf(root, sizeof(root), "%s/eks-x86", dir);
        check_selection(root, "{}", "011");
        check_selection(root, "{\"nics\":{\"kinds\":[\"mana\"]}}", "000");
        check_selection(root, "{\"nics\":{\"pci\":[\"0000:00:07.0\"]}}", "001");
        check_selection(root, "{\"nics\":{\"ids\":[\"1d0f:ec21\"]}}", "000");
        check_selection(root, "{\"nics\":{\"max\":1}}", "010");
        check_selection(root, "{\"nics\":{\"pci\":[\"0000:00:05.0\"]}}", "000"); /* never the primary */
        /* cores: eks-x86 p0c0..p0c7 with siblings n, n+8, cores 2-7 isolated; broken
         * p0c0..p0c3 with siblings n, n+4, isolated "2-3,6": p0c2 whole, p0c3 split */
        check_cores(root, "{}", "00111111");
        check_cores(root, "{\"cores\":{\"cpus\":\"2-3,10-11\"}}", "00110000");
        check_cores(root, "{\"cores\":{\"cpus\":\"2-3,10\"}}", "00100000"); /* a sibling left out */
        check_cores(root, "{\"cores\":{\"cpus\":\"0-1,8-9\"}}", "00000000"); /* never a core not isolated */
        snprintf(root, sizeof(root), "%s/broken", dir);
        check_cores(root, "{}", "0010");
        check_cores(root, "{\"cores\":{\"cpus\":\"0-7\"}}", "0010");
        snprintf(root, sizeof(root), "%s/aks-mana", dir);
        check_selection(root, "{}", "01");
        check_selection(root, "{\"nics\":{\"kinds\":[\"ena\"]}}", "00");

        /* eks-x86: the secondary ENAs are on vfio-pci already; the primary is kept and tuned. */
        snprintf(root, sizeof(root), "%s/eks-x86", dir);
        CHECK_INT(emu_adopt(&e, root), 0);
        CHECK_INT(prepare(&e, &c, &rep), 0);
        CHECK_STR(emu_log_str(&e), "");
        CHECK_STR(msg(rep, PREP_CHECK_NIC_BINDING), "0 NIC(s) bound to vfio-pci now, 2 already bound");
        CHECK_STR(msg(rep, PREP_CHECK_HUGETLBFS), "hugetlbfs is mounted at /dev/hugepages (pagesize 2 MiB)");
        CHECK_INT(rep->n_tuned, 1);
        CHECK_STR(rep->tuned[0].ifname, "eth0");
        CHECK_STR(rep->lines[0], "eth0: interrupt moderation: not the real root, left as is (0000:00:05.0)");
        prep_report_free(rep);

        /* graviton: one secondary on vfio-pci. */
        snprintf(root, sizeof(root), "%s/graviton", dir);
        CHECK_INT(emu_adopt(&e, root), 0);
        CHECK_INT(prepare(&e, &c, &rep), 0);
        CHECK_STR(msg(rep, PREP_CHECK_NIC_BINDING), "0 NIC(s) bound to vfio-pci now, 1 already bound");
        CHECK_STR(emu_log_str(&e), "");
        prep_report_free(rep);

        /* aks-mana: the first VF is the primary (its MAC is eth0's); the second stays on mana. */
        snprintf(root, sizeof(root), "%s/aks-mana", dir);
        CHECK_INT(emu_adopt(&e, root), 0);
        CHECK_INT(prepare(&e, &c, &rep), 0);
        CHECK_STR(msg(rep, PREP_CHECK_MANA), "1 MANA NIC(s) ready on the kernel driver with uverbs");
        CHECK_STR(msg(rep, PREP_CHECK_NIC_BINDING), "no NIC to bind (MANA stays on its kernel driver)");
        CHECK_STR(rep->lines[0], "8a3c:00:00.0: MANA stays on mana; DPDK reaches it through /dev/infiniband/uverbs1");
        CHECK_STR(emu_log_str(&e), "");
        prep_report_free(rep);
        /* mana_netdev_down: the VF's netdev and its synthetic hv_netvsc pair (the VF's sysfs
         * "master", same MAC) go down, as Microsoft's MANA DPDK guide has it; never eth0 (the
         * primary's synthetic netdev) nor enP30832s1 (the primary VF). Under --root a fake
         * tree is never acted on: the lines say what would be done. */
        config down = test_config("{\"binding\":{\"mana_netdev_down\":true}}");
        CHECK_INT(prepare(&e, &down, &rep), 0);
        CHECK_STR(msg(rep, PREP_CHECK_MANA), "1 MANA NIC(s) ready on the kernel driver with uverbs");
        CHECK_INT(rep->n_lines, 3);
        CHECK_STR(rep->lines[1], "8a3c:00:00.0: would set its kernel netdev enP35388s2 down (not the real root)");
        CHECK_STR(rep->lines[2], "8a3c:00:00.0: would set its synthetic netdev eth1 down (not the real root)");
        for (size_t i = 0; i < rep->n_lines; i++)
                CHECK(!strstr(rep->lines[i], "eth0") && !strstr(rep->lines[i], "enP30832s1"));
        prep_report_free(rep);

        /* broken: the secondary ENA has an IPv4 route and vfio-pci is not loaded. */
        snprintf(root, sizeof(root), "%s/broken", dir);
        CHECK_INT(emu_adopt(&e, root), 0);
        config plain = test_config("{}");
        CHECK_INT(prepare(&e, &plain, &rep), 0);
        CHECK_INT(verdict_find(&rep->verdicts, PREP_CHECK_NIC_BINDING)->level, VERDICT_WARN);
        CHECK_STR(rep->nics[0].message, "0000:00:06.0: refused: the node uses it: eth1 has address 192.168.0.11/24, "
                                        "has route \"192.168.0.0/24 table main metric 100\"; nothing changed");
        CHECK_STR(emu_log_str(&e), "");
        prep_report_free(rep);
        /* The address goes away (the emulated kernel's rtnetlink takes over from the
         * fixture's recorded one), but vfio-pci is still missing. */
        emu_net_clear(&e);
        emu_net_route(&e, "eth0", "default", "192.168.0.1", 254, 100);
        CHECK_INT(prepare(&e, &plain, &rep), 0);
        CHECK_STR(rep->nics[0].message, "0000:00:06.0: driver vfio-pci is not loaded (no /sys/bus/pci/drivers/vfio-pci; "
                                        "modprobe vfio-pci); nothing changed");
        prep_report_free(rep);
        /* modprobe vfio-pci: now it binds. */
        emu_add_driver(&e, "vfio-pci");
        CHECK_INT(prepare(&e, &plain, &rep), 0);
        CHECK_STR(emu_log_str(&e), "/sys/bus/pci/devices/0000:00:06.0/driver_override=vfio-pci|"
                                   "/sys/bus/pci/drivers/ena/unbind=0000:00:06.0|/sys/bus/pci/drivers_probe=0000:00:06.0");
        CHECK_STR(msg(rep, PREP_CHECK_NIC_BINDING), "1 NIC(s) bound to vfio-pci now, 0 already bound");
        prep_report_free(rep);
        /* The inventory sees it on vfio-pci without its netdev. */
        inventory *inv = NULL;
        CHECK_INT(inventory_scan(&e.h, &inv), 0);
        const inv_nic *nic = inventory_find_nic(inv, "0000:00:06.0");
        CHECK(nic != NULL);
        if (nic) {
                CHECK_STR(nic->driver, "vfio-pci");
                CHECK_STR(nic->netdev, "");
        }
        inventory_free(inv);
        /* Restore: back on ena with eth1. */
        bind_state st;
        bind_result res[BIND_STATE_MAX];
        size_t n = 0;
        char err[256];
        bind_ops ops = emu_ops(&e);
        emu_reset_log(&e);
        CHECK_INT(bind_state_load(&e.h, &st, err, sizeof(err)), 1);
        CHECK_INT(st.n, 1);
        CHECK_STR(st.e[0].netdev, "eth1");
        CHECK_INT(bind_restore(&e.h, &ops, &st, res, &n), 0);
        CHECK_STR(res[0].message, "0000:00:06.0: restored to ena (was on vfio-pci)");
        CHECK_STR(emu_log_str(&e), "/sys/bus/pci/devices/0000:00:06.0/driver_override=\\n|"
                                   "/sys/bus/pci/drivers/vfio-pci/unbind=0000:00:06.0|/sys/bus/pci/drivers/ena/bind=0000:00:06.0");
        CHECK_INT(inventory_scan(&e.h, &inv), 0);
        nic = inventory_find_nic(inv, "0000:00:06.0");
        CHECK(nic != NULL);
        if (nic) {
                CHECK_STR(nic->driver, "ena");
                CHECK_STR(nic->netdev, "eth1");
                CHECK_STR(nic->mac, "0a:00:00:00:00:06");
        }
        inventory_free(inv);

        /* big: 16 ENAs, 15 on vfio-pci: time a whole preparation (scan + apply). */
        snprintf(root, sizeof(root), "%s/big", dir);
        CHECK_INT(emu_adopt(&e, root), 0);
        struct timespec t0, t1;
        double best = 1e9;
        for (int i = 0; i < 5; i++) {
                clock_gettime(CLOCK_MONOTONIC, &t0);
                CHECK_INT(prepare(&e, &plain, &rep), 0);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
                if (ms < best)
                        best = ms;
                if (i == 0)
                        CHECK_STR(msg(rep, PREP_CHECK_NIC_BINDING), "0 NIC(s) bound to vfio-pci now, 15 already bound");
                prep_report_free(rep);
        }
        printf("big node (192 CPUs, 16 ENAs): scan + prepare, best of 5: %.2f ms\n", best);

        fixture_remove(dir);
        return test_done();
}
