/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation end to end on emulated nodes: NIC selection, the exact writes of a
 * first run, nothing written on a second, a garbled state file, a fault on one NIC,
 * MANA checks, hugepages/hugetlbfs/tuning verdicts. */
#include "prep.h"

#include "cleanup.h"
#include "nodeprep-test.h"
#include "sysfs-emu.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define PRIM "0000:00:05.0"
#define ENA1 "0000:00:06.0"
#define ENA2 "0000:00:07.0"
#define VIRT "0000:00:08.0"

static void eks_node(emu *e)
{
        CHECK_INT(emu_init(e), 0);
        emu_add_driver(e, "ena");
        emu_add_driver(e, "vfio-pci");
        emu_add_driver(e, "virtio-pci");
        emu_add_nic(e, PRIM, "0x1d0f\n", "0xec20\n", "ena", "ena", "eth0");
        emu_add_nic(e, ENA1, "0x1d0f\n", "0xec20\n", "ena", "ena", "eth1");
        emu_add_nic(e, ENA2, "0x1d0f\n", "0xec21\n", "ena", "ena", "eth2");
        emu_add_nic(e, VIRT, "0x1af4\n", "0x1041\n", "virtio-pci", "virtio-pci", "eth3");
        emu_net_addr(e, "eth0", "10.0.0.5/24");
        emu_net_route(e, "eth0", "default", "10.0.0.1", 254, 0);
        emu_write_file(e, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "0\n");
        emu_write_file(e, "/proc/meminfo", "Hugepagesize:       2048 kB\n");
        emu_write_file(e, "/proc/mounts", "proc /proc proc rw 0 0\n");
        emu_write_file(e, "/proc/interrupts", "  CPU0 CPU1\n 30: 1 1 PCI-MSI 1-edge eth0-Tx-Rx-0\n");
        emu_write_file(e, "/proc/irq/30/smp_affinity_list", "0-1\n");
}

typedef struct fake_kernel {
        emu *e;
        int coalesce_calls;
        int link_down_calls;
        char last_down[16];
        char downs[128]; /* every name set down, space-separated */
} fake_kernel;

static int fk_coalesce(void *ud, const char *ifname)
{
        fake_kernel *k = ud;
        char buf[64];
        snprintf(buf, sizeof(buf), "ethtool:%s", ifname);
        if (k->e->n_log < EMU_MAX_LOG)
                snprintf(k->e->log[k->e->n_log++], sizeof(k->e->log[0]), "%s", buf);
        return k->coalesce_calls++ ? 1 : 0;
}

static int fk_link_down(void *ud, const char *ifname)
{
        fake_kernel *k = ud;
        k->link_down_calls++;
        snprintf(k->last_down, sizeof(k->last_down), "%s", ifname);
        size_t l = strlen(k->downs);
        snprintf(k->downs + l, sizeof(k->downs) - l, "%s%s", l ? " " : "", ifname);
        return 0;
}

static prep_ops ops_for(emu *e, fake_kernel *k)
{
        prep_ops o = {0};
        k->e = e;
        o.sysfs = emu_ops(e);
        o.tune.coalesce_off = fk_coalesce;
        o.tune.write = emu_ops_template.write;
        o.tune.userdata = e;
        /* the tune ops' userdata is the emu for writes; coalescing needs the fake kernel */
        o.tune.coalesce_off = fk_coalesce;
        o.link_down = fk_link_down;
        o.link_userdata = k;
        return o;
}

/* tune.write and tune.coalesce_off share one userdata: give coalescing its own wrapper. */
static fake_kernel *g_k;
static int fk_coalesce_g(void *ud, const char *ifname)
{
        (void)ud;
        return fk_coalesce(g_k, ifname);
}

static const char *verdict_msg(const prep_report *r, const char *check)
{
        const verdict *v = verdict_find(&r->verdicts, check);
        return v ? v->message : "(none)";
}

static int verdict_lvl(const prep_report *r, const char *check)
{
        const verdict *v = verdict_find(&r->verdicts, check);
        return v ? (int)v->level : -1;
}

static void test_select(void)
{
        prep_nic nics[4] = {
                {.pci = PRIM, .vendor = 0x1d0f, .device = 0xec20, .kind = CONFIG_KIND_ENA, .driver = "ena", .netdev = "eth0", .primary = true},
                {.pci = ENA1, .vendor = 0x1d0f, .device = 0xec20, .kind = CONFIG_KIND_ENA, .driver = "vfio-pci"},
                {.pci = ENA2, .vendor = 0x1d0f, .device = 0xec21, .kind = CONFIG_KIND_ENA, .driver = "ena", .netdev = "eth2"},
                {.pci = VIRT, .vendor = 0x1af4, .device = 0x1041, .kind = CONFIG_KIND_OTHER, .driver = "virtio-pci", .netdev = "eth3"},
        };
        size_t idx[4];
        bind_state st = {.n = 1, .e = {{ENA1, "ena", "vfio-pci", "eth1"}}};
        config c = test_config("{}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 2);
        CHECK_INT(idx[0], 1);
        CHECK_INT(idx[1], 2);
        c = test_config("{\"nics\":{\"max\":1}}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 1);
        CHECK_INT(idx[0], 1);
        c = test_config("{\"nics\":{\"ids\":[\"1d0f:ec21\"]}}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 1);
        CHECK_INT(idx[0], 2);
        c = test_config("{\"nics\":{\"pci\":[\"" PRIM "\",\"" ENA2 "\"]}}"); /* the primary never */
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 1);
        CHECK_INT(idx[0], 2);
        c = test_config("{\"nics\":{\"interfaces\":[\"eth0\",\"eth1\",\"eth2\"]}}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 1);
        CHECK_INT(idx[0], 2);
        CHECK_INT(select_nics(&c, nics, 4, &st, idx, NULL), 2); /* ENA1: bound by us earlier */
        c = test_config("{\"nics\":{\"kinds\":[\"other\"]}}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 1);
        CHECK_INT(idx[0], 3);
        c = test_config("{\"nics\":{\"kinds\":[\"mana\"]}}");
        CHECK_INT(select_nics(&c, nics, 4, NULL, idx, NULL), 0);
}

static void test_eks(void)
{
        emu e;
        fake_kernel k = {0};
        prep_nic nics[8];
        prep_report *rep = NULL;
        eks_node(&e);
        prep_ops ops = ops_for(&e, &k);
        g_k = &k;
        ops.tune.coalesce_off = fk_coalesce_g;

        config c = test_config("{\"hugepages\":{\"per_node\":{\"0\":64}},"
                       "\"tuning\":{\"interrupt_moderation_off\":true,\"irq_core\":1}}");
        size_t n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_STR(emu_log_str(&e),
                  "/sys/bus/pci/devices/" ENA1 "/driver_override=vfio-pci|/sys/bus/pci/drivers/ena/unbind=" ENA1
                  "|/sys/bus/pci/drivers_probe=" ENA1 "|"
                  "/sys/bus/pci/devices/" ENA2 "/driver_override=vfio-pci|/sys/bus/pci/drivers/ena/unbind=" ENA2
                  "|/sys/bus/pci/drivers_probe=" ENA2 "|"
                  "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages=64|"
                  "ethtool:eth0|/proc/irq/30/smp_affinity_list=1\\n");
        CHECK_INT(rep->n_nics, 2);
        CHECK_STR(rep->nics[0].message, ENA1 ": bound to vfio-pci (was ena)");
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_PASS);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_NIC_BINDING), "2 NIC(s) bound to vfio-pci now, 0 already bound");
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_HUGEPAGES), VERDICT_WARN); /* raised 0 -> 64: kubelet restart */
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_HUGETLBFS), VERDICT_SKIP);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_KERNEL_TUNING), VERDICT_PASS);
        CHECK_INT(rep->n_tuned, 1);
        CHECK_STR(rep->tuned[0].ifname, "eth0");
        CHECK_INT(rep->n_lines, 1);
        CHECK_STR(rep->lines[0], "eth0: interrupt moderation off (adaptive-rx off, rx-usecs 0); 1 of 1 IRQs on CPU 1 (" PRIM ")");
        CHECK_STR(emu_driver(&e, VIRT), "virtio-pci"); /* kind "other" not selected */
        prep_report_free(rep);

        /* Second run: a fresh scan, nothing to write. */
        emu_reset_log(&e);
        n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_STR(emu_log_str(&e), "ethtool:eth0");
        CHECK_STR(verdict_msg(rep, PREP_CHECK_NIC_BINDING), "0 NIC(s) bound to vfio-pci now, 2 already bound");
        CHECK_STR(rep->nics[1].message, ENA2 ": already on vfio-pci (original driver ena)");
        prep_report_free(rep);

        /* A garbled state file: no NIC is touched. */
        emu_write_file(&e, BIND_STATE_PATH, "{\"version\":1,\"count\":2,\"nics\":[{\"pci\":\"0000:00:06.0\",\"orig");
        emu_reset_log(&e);
        emu_fault_add(&e, "/sys/bus/pci/drivers_probe", NULL, -EBUSY); /* would bite if anything were bound */
        c.nics.kinds[CONFIG_KIND_OTHER] = true;
        n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 1);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_FAIL);
        CHECK(strncmp(verdict_msg(rep, PREP_CHECK_NIC_BINDING), BIND_STATE_PATH ": state file is truncated or garbled: ", 50) == 0);
        CHECK(strstr(verdict_msg(rep, PREP_CHECK_NIC_BINDING), "; no NIC was touched") != NULL);
        CHECK(strstr(emu_log_str(&e), "/sys/bus/pci/devices") == NULL);
        CHECK_STR(emu_driver(&e, VIRT), "virtio-pci");
        prep_report_free(rep);
        emu_cleanup(&e);
}

static void test_fault_one_nic(void)
{
        emu e;
        fake_kernel k = {0};
        prep_nic nics[8];
        prep_report *rep = NULL;
        eks_node(&e);
        prep_ops ops = ops_for(&e, &k);
        g_k = &k;
        ops.tune.coalesce_off = fk_coalesce_g;

        emu_fault_add(&e, "/sys/bus/pci/drivers_probe", ENA2, -EBUSY)->times = 1;
        config c = test_config("{}");
        size_t n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 1);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_FAIL);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_NIC_BINDING),
                  ENA2 ": binding to vfio-pci failed (drivers_probe failed: Device or resource busy); rolled back to ena");
        CHECK_STR(emu_driver(&e, ENA1), "vfio-pci");
        CHECK_STR(emu_driver(&e, ENA2), "ena");
        CHECK(verdict_find(&rep->verdicts, PREP_CHECK_HUGEPAGES) == NULL); /* none asked */
        CHECK(verdict_find(&rep->verdicts, PREP_CHECK_KERNEL_TUNING) == NULL);
        prep_report_free(rep);

        /* The primary only, by name: refused by selection, so nothing matches. */
        c = test_config("{\"nics\":{\"interfaces\":[\"eth0\"]}}");
        emu_reset_log(&e);
        n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_WARN);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_NIC_BINDING), "no NIC matches the config's selection (the primary NIC is never taken)");
        CHECK_STR(emu_log_str(&e), "");
        prep_report_free(rep);

        /* A secondary with an address the scan did not know about: refused, a warning. */
        emu_net_addr(&e, "eth2", "2001:db8::2/64");
        c = test_config("{}");
        n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_WARN);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_NIC_BINDING),
                  "0 bound, 1 already bound; " ENA2 ": refused: the node uses it: eth2 has address 2001:db8::2/64; "
                  "nothing changed");
        const verdict *v = verdict_find(&rep->verdicts, PREP_CHECK_NIC_BINDING);
        CHECK(v && v->remedy && strstr(v->remedy, "without addresses or routes"));
        prep_report_free(rep);

        /* Refused for another reason (the driver is not loaded): the remedy says that, not
         * "addresses or routes". */
        emu_net_clear(&e);
        c = test_config("{\"binding\":{\"ena\":\"igb_uio\"},\"nics\":{\"pci\":[\"" ENA2 "\"]}}");
        n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_NIC_BINDING), VERDICT_WARN);
        CHECK(strstr(verdict_msg(rep, PREP_CHECK_NIC_BINDING), "driver igb_uio is not loaded") != NULL);
        v = verdict_find(&rep->verdicts, PREP_CHECK_NIC_BINDING);
        CHECK(v && v->remedy && !strstr(v->remedy, "addresses or routes") && strstr(v->remedy, "load the driver"));
        prep_report_free(rep);
        emu_cleanup(&e);
}

static void test_mana(void)
{
        emu e;
        fake_kernel k = {0};
        prep_nic nics[8];
        prep_report *rep = NULL;
        CHECK_INT(emu_init(&e), 0);
        emu_add_driver(&e, "mana");
        emu_add_nic(&e, "7870:00:00.0", "0x1414\n", "0x00ba\n", "mana", "mana", "eth1");
        emu_write_file(&e, "/proc/mounts", "nodev /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n");
        prep_ops ops = ops_for(&e, &k);
        config c = test_config("{\"binding\":{\"mana_netdev_down\":true}}");

        size_t n = emu_scan_nics(&e, nics);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 1);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_MANA), VERDICT_FAIL);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_MANA), "7870:00:00.0: kernel modules mana_ib and ib_uverbs are not both loaded");
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_HUGETLBFS), VERDICT_PASS);
        CHECK_INT(k.link_down_calls, 0);
        prep_report_free(rep);

        emu_write_file(&e, "/sys/module/mana_ib/refcnt", "0\n");
        emu_write_file(&e, "/sys/module/ib_uverbs/refcnt", "0\n");
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 1);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_MANA), "7870:00:00.0: no /sys/class/infiniband_verbs/uverbs* device belongs to it");
        prep_report_free(rep);

        /* uverbs0 -> the MANA device's RDMA child. */
        char dev[PATH_MAX + 64], link[PATH_MAX];
        snprintf(dev, sizeof(dev), "%s/sys/devices/pci0000:00/7870:00:00.0/mana.rdma.0", e.root);
        CHECK_INT(emu_write_file(&e, "/sys/devices/pci0000:00/7870:00:00.0/mana.rdma.0/uevent", ""), 0);
        CHECK_INT(emu_write_file(&e, "/sys/class/infiniband_verbs/uverbs0/ibdev", "mana_0\n"), 0);
        snprintf(link, sizeof(link), "%s/sys/class/infiniband_verbs/uverbs0/device", e.root);
        CHECK_INT(symlink(dev, link), 0);
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_MANA), VERDICT_PASS);
        CHECK_STR(verdict_msg(rep, PREP_CHECK_MANA), "1 MANA NIC(s) ready on the kernel driver with uverbs");
        CHECK_INT(rep->n_lines, 2);
        CHECK_STR(rep->lines[0], "7870:00:00.0: MANA stays on mana; DPDK reaches it through /dev/infiniband/uverbs0");
        CHECK_STR(rep->lines[1], "7870:00:00.0: set its kernel netdev eth1 down");
        CHECK_STR(k.last_down, "eth1");
        CHECK_STR(emu_log_str(&e), ""); /* MANA is never rebound */
        CHECK_STR(emu_driver(&e, "7870:00:00.0"), "mana");
        prep_report_free(rep);

        /* Azure: the VF eth1 is enslaved to the synthetic hv_netvsc netdev eth9 of the same
         * MAC (sysfs "master"): both go down, the VF first. */
        char vfdir[PATH_MAX + 64], syndir[PATH_MAX + 64];
        CHECK_INT(emu_write_file(&e, "/sys/devices/pci0000:00/7870:00:00.0/net/eth1/address", "00:0d:3a:aa:00:02\n"), 0);
        CHECK_INT(emu_write_file(&e, "/sys/devices/vmbus/syn9/net/eth9/address", "00:0D:3A:AA:00:02\n"), 0);
        CHECK_INT(emu_write_file(&e, "/sys/bus/vmbus/drivers/hv_netvsc/bind", ""), 0);
        snprintf(link, sizeof(link), "%s/sys/devices/vmbus/syn9/driver", e.root);
        CHECK_INT(symlink("../../../bus/vmbus/drivers/hv_netvsc", link), 0);
        snprintf(link, sizeof(link), "%s/sys/devices/vmbus/syn9/net/eth9/device", e.root);
        CHECK_INT(symlink("../..", link), 0);
        snprintf(vfdir, sizeof(vfdir), "%s/sys/class/net/eth1", e.root);
        snprintf(syndir, sizeof(syndir), "%s/sys/class/net/eth9", e.root);
        CHECK_INT(emu_write_file(&e, "/sys/class/net/.keep", ""), 0);
        unlink(vfdir); /* the emulator may have linked it already */
        CHECK_INT(symlink("../../devices/pci0000:00/7870:00:00.0/net/eth1", vfdir), 0);
        CHECK_INT(symlink("../../devices/vmbus/syn9/net/eth9", syndir), 0);
        snprintf(link, sizeof(link), "%s/sys/devices/pci0000:00/7870:00:00.0/net/eth1/master", e.root);
        CHECK_INT(symlink("../../../vmbus/syn9/net/eth9", link), 0);
        k.downs[0] = '\0';
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_INT(verdict_lvl(rep, PREP_CHECK_MANA), VERDICT_PASS);
        CHECK_INT(rep->n_lines, 3);
        CHECK_STR(rep->lines[1], "7870:00:00.0: set its kernel netdev eth1 down");
        CHECK_STR(rep->lines[2], "7870:00:00.0: set its synthetic netdev eth9 down");
        CHECK_STR(k.downs, "eth1 eth9");
        prep_report_free(rep);
        /* a master of another MAC is not the VF's pair (a bridge, a bond): left alone */
        CHECK_INT(emu_write_file(&e, "/sys/devices/vmbus/syn9/net/eth9/address", "00:0d:3a:aa:00:09\n"), 0);
        k.downs[0] = '\0';
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_STR(k.downs, "eth1");
        CHECK_INT(rep->n_lines, 2);
        prep_report_free(rep);
        /* the same MAC on a master not driven by hv_netvsc: left alone */
        CHECK_INT(emu_write_file(&e, "/sys/devices/vmbus/syn9/net/eth9/address", "00:0d:3a:aa:00:02\n"), 0);
        snprintf(link, sizeof(link), "%s/sys/devices/vmbus/syn9/driver", e.root);
        CHECK_INT(unlink(link), 0);
        CHECK_INT(symlink("../../../bus/vmbus/drivers/bond", link), 0);
        k.downs[0] = '\0';
        CHECK_INT(prep_apply(&e.h, &ops, &c, nics, n, &rep), 0);
        CHECK_STR(k.downs, "eth1");
        prep_report_free(rep);
        emu_cleanup(&e);
}

int main(void)
{
        test_select();
        test_eks();
        test_fault_one_nic();
        test_mana();
        return test_done();
}
