/* SPDX-License-Identifier: Apache-2.0 */
/* The node checks: each turns inventory facts into one verdict with evidence and a remedy
 * a person can act on. Pure functions of the inventory: no I/O, never log. */
#include "checks.h"

#include "cleanup.h"
#include "device-map.h"
#include "errbuf.h"
#include "ipv4.h"
#include "select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


static void fmt_cpus(const cpuset *s, char *buf, size_t size)
{
        if (cpuset_format(s, buf, size) >= size && size > 4)
                memcpy(buf + size - 4, "...", 4);
}

static json_t *jcpus(const cpuset *s)
{
        char buf[CPUSET_MAX * 6];
        cpuset_format(s, buf, sizeof(buf));
        return json_string(buf);
}

/* The problems of topic whose path contains needle (NULL: all of the topic). */
static json_t *problems_json(const inventory *inv, inv_topic topic, const char *needle, size_t *ret_n)
{
        json_t *a = json_array();
        size_t n = 0;
        for (size_t i = 0; a && i < inv->n_problems; i++) {
                const inv_problem *p = &inv->problems[i];
                if (p->topic != topic || (needle && !strstr(p->path, needle)))
                        continue;
                json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "path", p->path, "error", strerror(-p->err),
                                                   "what", p->what));
                n++;
        }
        if (ret_n)
                *ret_n = n;
        return a;
}

static const inv_problem *find_problem(const inventory *inv, inv_topic topic, const char *needle)
{
        for (size_t i = 0; i < inv->n_problems; i++)
                if (inv->problems[i].topic == topic && strstr(inv->problems[i].path, needle))
                        return &inv->problems[i];
        return NULL;
}

/* A NIC-topic problem that can hide a NIC from the inventory. The PAT list
 * (/sys/kernel/debug/x86/pat_memtype_list, unreadable wherever debugfs is not mounted)
 * only tells write-combining apart: only that check reports it. */
static bool nic_listing_problem(const inv_problem *p)
{
        return p->topic == INV_TOPIC_NIC && !strstr(p->path, "pat_memtype_list");
}

static json_t *nic_listing_problems_json(const inventory *inv, size_t *ret_n, const inv_problem **ret_first)
{
        json_t *a = json_array();
        const inv_problem *first = NULL;
        size_t n = 0;
        for (size_t i = 0; a && i < inv->n_problems; i++) {
                const inv_problem *p = &inv->problems[i];
                if (!nic_listing_problem(p))
                        continue;
                json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "path", p->path, "error", strerror(-p->err),
                                                   "what", p->what));
                if (!first)
                        first = p;
                n++;
        }
        *ret_n = n;
        *ret_first = first;
        return a;
}

/* checks_node gives every check a device map (the default config's when none). */
static bool nic_selected(const checks_options *o, const inv_nic *nic)
{
        return device_map_nic_selected(o->map, nic);
}

/* NICs a DPDK pod may be given (and that the configuration selects). */
static bool nic_dpdk(const checks_options *o, const inv_nic *nic)
{
        return device_map_nic_ready(nic) && nic_selected(o, nic);
}

static bool nic_on_dpdk_driver(const inv_nic *n)
{
        return inv_driver_userspace(n->driver);
}

/* ---- isolated-cpus -------------------------------------------------------------- */

static int check_isolated_cpus(const inventory *inv, verdict_list *l)
{
        char iso[256], pool[256];
        const char *isolcpus = inventory_cmdline(inv, "isolcpus");
        const inv_problem *p = find_problem(inv, INV_TOPIC_CPU, "/sys/devices/system/cpu/isolated");

        if (!p)
                p = find_problem(inv, INV_TOPIC_CPU, "/sys/devices/system/cpu/online");
        if (!inv->have_isolated || !inv->have_online) {
                return verdict_add(l, CHECK_ISOLATED_CPUS, VERDICT_SKIP,
                                   json_pack("{s:s,s:s}", "path", p ? p->path : "/sys/devices/system/cpu/isolated",
                                             "error", p ? strerror(-p->err) : "unread"),
                                   "fix or report the unreadable file named here",
                                   "cannot tell which CPUs are isolated: %s: %s",
                                   p ? p->path : "/sys/devices/system/cpu/isolated",
                                   p ? strerror(-p->err) : "not read");
        }
        fmt_cpus(&inv->isolated, iso, sizeof(iso));
        fmt_cpus(&inv->pool, pool, sizeof(pool));
        json_t *ids = json_array();
        size_t n = 0;
        for (size_t i = 0; i < inv->n_cores; i++)
                if (inv->cores[i].isolated) {
                        json_array_append_new(ids, json_string(inv->cores[i].id));
                        n++;
                }
        json_t *ev = json_pack("{s:o,s:o,s:o,s:o,s:s?}", "isolated", jcpus(&inv->isolated), "online",
                               jcpus(&inv->online), "pool", jcpus(&inv->pool), "cores", ids, "cmdline_isolcpus",
                               isolcpus);
        if (n == 0)
                return verdict_add(l, CHECK_ISOLATED_CPUS, VERDICT_FAIL, ev,
                                   "isolate whole physical cores (every SMT sibling) with isolcpus=<cpus> "
                                   "nohz_full=<cpus> rcu_nocbs=<cpus> on the kernel command line (node pool "
                                   "launch template / bootstrap), then reboot the node",
                                   "no isolated physical core: isolated CPUs \"%s\"%s%s", iso,
                                   isolcpus ? ", isolcpus=" : "", isolcpus ? isolcpus : "");
        return verdict_add(l, CHECK_ISOLATED_CPUS, VERDICT_PASS, ev, NULL,
                           "%zu isolated physical core%s (CPUs %s)", n, n == 1 ? "" : "s", pool);
}

/* ---- smt-siblings --------------------------------------------------------------- */

static int check_smt_siblings(const inventory *inv, verdict_list *l)
{
        sbuf msg = {0}, rem = {0};
        size_t nbad = 0, nsplit = 0;
        json_t *probs = problems_json(inv, INV_TOPIC_CPU, "/topology/", &nbad);
        json_t *split = json_array();
        cpuset add, del;

        cpuset_zero(&add);
        cpuset_zero(&del);
        for (size_t i = 0; i < inv->n_cores; i++) {
                const inv_core *c = &inv->cores[i];
                char all[128], iso[128], rest[128];
                cpuset si, sr, off;
                if (!c->split)
                        continue;
                cpuset_and(&si, &c->cpus, &inv->isolated);
                cpuset_andnot(&sr, &c->cpus, &inv->isolated);
                cpuset_andnot(&off, &c->cpus, &inv->online);
                fmt_cpus(&c->cpus, all, sizeof(all));
                fmt_cpus(&si, iso, sizeof(iso));
                fmt_cpus(&sr, rest, sizeof(rest));
                json_array_append_new(split, json_pack("{s:s,s:o,s:o,s:o}", "core", c->id, "cpus", jcpus(&c->cpus),
                                                       "isolated", jcpus(&si), "offline", jcpus(&off)));
                sb_add(&msg, "%score %s (CPUs %s): CPU %s isolated, %s not", nsplit ? "; " : "", c->id, all, iso,
                       !cpuset_empty(&sr) ? rest : "all isolated but some offline,");
                if (!cpuset_empty(&off)) {
                        char o[128];
                        fmt_cpus(&off, o, sizeof(o));
                        sb_add(&msg, " (offline: %s)", o);
                }
                cpuset_or(&add, &add, &sr);
                cpuset_or(&del, &del, &si);
                nsplit++;
        }
        json_t *ev = json_pack("{s:o,s:o,s:b}", "split", split, "problems", probs, "smt", inv->smt);
        if (nsplit) {
                char a[256], d[256];
                fmt_cpus(&add, a, sizeof(a));
                fmt_cpus(&del, d, sizeof(d));
                sb_add(&rem, "isolate whole cores: add CPUs %s to isolcpus/nohz_full (or remove CPUs %s from "
                       "them) and bring every sibling online, then reboot; a split core is never advertised",
                       a, d);
                return verdict_add(l, CHECK_SMT_SIBLINGS, VERDICT_WARN, ev, sb_str(&rem),
                                   "%zu split core%s: %s", nsplit, nsplit == 1 ? "" : "s", sb_str(&msg));
        }
        if (nbad) {
                const inv_problem *p = find_problem(inv, INV_TOPIC_CPU, "/topology/");
                return verdict_add(l, CHECK_SMT_SIBLINGS, VERDICT_WARN, ev,
                                   "the CPUs named cannot be pooled until their topology files read well; "
                                   "check the kernel or the --root tree",
                                   "%zu topology file%s unusable, first %s: %s", nbad, nbad == 1 ? "" : "s",
                                   p->path, strerror(-p->err));
        }
        return verdict_add(l, CHECK_SMT_SIBLINGS, VERDICT_PASS, ev, NULL,
                           inv->smt ? "every isolated CPU's SMT siblings are isolated too"
                                    : "no SMT: every physical core is one CPU");
}

/* ---- nohz-full ------------------------------------------------------------------ */

static int check_nohz_full(const inventory *inv, verdict_list *l)
{
        char pool[256], miss[256];
        cpuset m;
        const inv_problem *p = find_problem(inv, INV_TOPIC_CPU, "/sys/devices/system/cpu/nohz_full");

        if (p)
                return verdict_add(l, CHECK_NOHZ_FULL, VERDICT_WARN,
                                   json_pack("{s:s,s:s}", "path", p->path, "error", strerror(-p->err)),
                                   "fix or report the unreadable file named here",
                                   "cannot read the nohz_full CPUs: %s: %s", p->path, strerror(-p->err));
        if (cpuset_empty(&inv->pool))
                return verdict_add(l, CHECK_NOHZ_FULL, VERDICT_SKIP, NULL, NULL,
                                   "no isolated core to check (see isolated-cpus)");
        fmt_cpus(&inv->pool, pool, sizeof(pool));
        if (!inv->have_nohz_full)
                return verdict_add(l, CHECK_NOHZ_FULL, VERDICT_WARN,
                                   json_pack("{s:o,s:s}", "pool", jcpus(&inv->pool), "path",
                                             "/sys/devices/system/cpu/nohz_full"),
                                   "use a kernel built with CONFIG_NO_HZ_FULL and boot with nohz_full=<pool CPUs>",
                                   "the kernel exposes no nohz_full (/sys/devices/system/cpu/nohz_full absent): "
                                   "the scheduler tick still interrupts CPUs %s", pool);
        cpuset_andnot(&m, &inv->pool, &inv->nohz_full);
        json_t *ev = json_pack("{s:o,s:o,s:o}", "pool", jcpus(&inv->pool), "nohz_full", jcpus(&inv->nohz_full),
                               "missing", jcpus(&m));
        if (!cpuset_empty(&m)) {
                sbuf rem = {0};
                fmt_cpus(&m, miss, sizeof(miss));
                sb_add(&rem, "add nohz_full=%s (with rcu_nocbs=%s) to the kernel command line and reboot", pool,
                       pool);
                return verdict_add(l, CHECK_NOHZ_FULL, VERDICT_WARN, ev, sb_str(&rem),
                                   "isolated CPUs %s are not nohz_full: the scheduler tick still interrupts them",
                                   miss);
        }
        return verdict_add(l, CHECK_NOHZ_FULL, VERDICT_PASS, ev, NULL, "every isolated CPU is nohz_full (%s)", pool);
}

/* ---- hugepages ------------------------------------------------------------------ */

static uint64_t node_free_any(const inventory *inv, int node)
{
        const inv_numa *n = inventory_find_numa(inv, node);
        uint64_t f = 0;
        for (size_t i = 0; n && i < n->n_huge; i++)
                f += n->huge[i].free;
        return f;
}

static int check_hugepages(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf msg = {0}, nodes = {0};
        uint64_t freep = 0;
        size_t nprob;
        json_t *probs = problems_json(inv, INV_TOPIC_MEMORY, "hugepages", &nprob);

        for (size_t i = 0; i < inv->n_huge; i++) {
                freep += inv->huge[i].free;
                sb_add(&msg, "%s%" PRIu64 " kB: %" PRIu64 " free of %" PRIu64, i ? ", " : "", inv->huge[i].size_kb,
                       inv->huge[i].free, inv->huge[i].total);
        }
        json_t *sizes = json_array();
        for (size_t i = 0; i < inv->n_huge; i++)
                json_array_append_new(sizes, json_pack("{s:I,s:I,s:I}", "size_kb", (json_int_t)inv->huge[i].size_kb,
                                                       "total", (json_int_t)inv->huge[i].total, "free",
                                                       (json_int_t)inv->huge[i].free));
        /* the NUMA nodes of the DPDK NICs */
        json_t *per = json_array();
        size_t nstarved = 0;
        int seen[INV_MAX_NUMA] = {0};
        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                if (!nic_dpdk(o, n) || n->numa_node < 0 || seen[n->numa_node])
                        continue;
                seen[n->numa_node] = 1;
                uint64_t f = node_free_any(inv, n->numa_node);
                json_array_append_new(per, json_pack("{s:i,s:I,s:s}", "numa_node", n->numa_node, "free",
                                                     (json_int_t)f, "nic", n->pci));
                if (f == 0) {
                        sb_add(&nodes, "%sNUMA node %d (NIC %s)", nstarved ? ", " : "", n->numa_node, n->pci);
                        nstarved++;
                }
        }
        json_t *ev = json_pack("{s:o,s:o,s:o}", "sizes", sizes, "dpdk_nic_nodes", per, "problems", probs);
        if (freep == 0 && nprob) {
                const inv_problem *p = find_problem(inv, INV_TOPIC_MEMORY, "hugepages");
                return verdict_add(l, CHECK_HUGEPAGES, VERDICT_SKIP, ev, "fix or report the unreadable file named here",
                                   "cannot read hugepage counts: %s: %s", p->path, strerror(-p->err));
        }
        if (freep == 0)
                return verdict_add(l, CHECK_HUGEPAGES, VERDICT_FAIL, ev,
                                   "reserve hugepages: echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/"
                                   "nr_hugepages (per NUMA node: /sys/devices/system/node/nodeN/hugepages/...), "
                                   "or boot with hugepagesz=2M hugepages=1024; restart the kubelet so it "
                                   "reports hugepages-2Mi",
                                   "no free hugepages (%s)", inv->n_huge ? sb_str(&msg) : "no hugepage sizes");
        if (nstarved)
                return verdict_add(l, CHECK_HUGEPAGES, VERDICT_WARN, ev,
                                   "reserve hugepages on those nodes: echo N > /sys/devices/system/node/nodeN/"
                                   "hugepages/hugepages-2048kB/nr_hugepages",
                                   "no free hugepages on %s; DPDK would use remote memory (%s)", sb_str(&nodes),
                                   sb_str(&msg));
        if (nprob) {
                const inv_problem *p = find_problem(inv, INV_TOPIC_MEMORY, "hugepages");
                return verdict_add(l, CHECK_HUGEPAGES, VERDICT_WARN, ev, "fix or report the unreadable file named here",
                                   "%s; but %s: %s", sb_str(&msg), p->path, strerror(-p->err));
        }
        return verdict_add(l, CHECK_HUGEPAGES, VERDICT_PASS, ev, NULL, "%s", sb_str(&msg));
}

/* ---- hugetlbfs ------------------------------------------------------------------ */

static int check_hugetlbfs(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf msg = {0}, bad = {0};
        size_t nbad = 0;
        const inv_problem *p = find_problem(inv, INV_TOPIC_MEMORY, "mounts");
        json_t *mounts = json_array();

        for (size_t i = 0; i < inv->n_mounts; i++) {
                const inv_mount *m = &inv->mounts[i];
                uint64_t ps = m->pagesize_kb ? m->pagesize_kb : inv->default_huge_kb;
                bool have = false;
                for (size_t k = 0; k < inv->n_huge; k++)
                        if (inv->huge[k].size_kb == ps && inv->huge[k].total > 0)
                                have = true;
                json_array_append_new(mounts, json_pack("{s:s,s:I,s:b}", "path", m->path, "pagesize_kb",
                                                        (json_int_t)ps, "pages_reserved", have));
                sb_add(&msg, "%s%s (pagesize %" PRIu64 " kB)", i ? ", " : "", m->path, ps);
                if (!have) {
                        sb_add(&bad, "%s%s", nbad ? ", " : "", m->path);
                        nbad++;
                }
        }
        json_t *ev = json_pack("{s:o}", "mounts", mounts);
        if (p && inv->n_mounts == 0) {
                json_object_set_new(ev, "path", json_string(p->path));
                return verdict_add(l, CHECK_HUGETLBFS, VERDICT_SKIP, ev, "fix or report the unreadable file named here",
                                   "cannot read the mount table: %s: %s", p->path,
                                   p->err == -EMSGSIZE ? "a line longer than 64 KiB" : strerror(-p->err));
        }
        if (inv->n_mounts == 0)
                return verdict_add(l, CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages (make it permanent with "
                                   "an fstab line or the dev-hugepages.mount unit)",
                                   "no hugetlbfs mount in /proc/mounts");
        if (nbad == inv->n_mounts)
                return verdict_add(l, CHECK_HUGETLBFS, VERDICT_WARN, ev,
                                   "reserve hugepages of the mount's page size (see hugepages) or mount with the "
                                   "pagesize= that has pages",
                                   "hugetlbfs mounted at %s, but no hugepages of its page size are reserved",
                                   sb_str(&msg));
        json_object_set_new(ev, "pod_mount", json_boolean(o->hugetlbfs_pod_mount));
        if (o->hugetlbfs_pod_mount) {
                const char *mp = o->hugetlbfs_mount_point ? o->hugetlbfs_mount_point : "/dev/hugepages";
                return verdict_add(l, CHECK_HUGETLBFS, VERDICT_WARN, ev,
                                   "set hugetlbfs.pod_mount to false and give each DPDK pod its own emptyDir with "
                                   "medium: HugePages-2Mi (and hugepages-2Mi requests == limits)",
                                   "hugetlbfs at %s; hugetlbfs.pod_mount is true: the node's %s is mounted read-write "
                                   "into every pod given a NIC, so each such pod can read and write every other one's "
                                   "hugepage files (DPDK's rtemap_* files: their packet buffers and DPDK memory)",
                                   sb_str(&msg), mp);
        }
        return verdict_add(l, CHECK_HUGETLBFS, VERDICT_PASS, ev, NULL, "hugetlbfs at %s", sb_str(&msg));
}

/* ---- iommu ---------------------------------------------------------------------- */

static int check_iommu(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf noi = {0};
        size_t nnoi = 0, nvfio = 0, ncand = 0;

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                if (strcmp(n->driver, "vfio-pci") == 0) {
                        nvfio++;
                        if (n->noiommu) {
                                sb_add(&noi, "%s%s", nnoi ? ", " : "", n->pci);
                                nnoi++;
                        }
                }
                if (n->kind == INV_NIC_ENA && nic_selected(o, n))
                        ncand++;
        }
        const char *cmd_iommu = inventory_cmdline(inv, "iommu");
        const char *cmd_intel = inventory_cmdline(inv, "intel_iommu");
        json_t *ev = json_pack("{s:b,s:o,s:i,s:i,s:s?,s:s?}", "iommu_present", inv->iommu_present, "vfio_noiommu",
                               inv->vfio_noiommu < 0 ? json_null() : json_boolean(inv->vfio_noiommu),
                               "vfio_nics", (int)nvfio, "noiommu_nics", (int)nnoi, "cmdline_iommu", cmd_iommu,
                               "cmdline_intel_iommu", cmd_intel);
        static const char rem_noiommu[] =
                "accepted where no IOMMU exists (non-metal EC2); the pod needs CAP_SYS_RAWIO. On metal "
                "instances boot with intel_iommu=on iommu=pt (x86) and reload vfio without "
                "enable_unsafe_noiommu_mode";
        if (nnoi)
                return verdict_add(l, CHECK_IOMMU, VERDICT_WARN, ev, rem_noiommu,
                                   "vfio runs without an IOMMU for %s: a DPDK process there can DMA anywhere in "
                                   "host memory, so it is as trusted as the kernel", sb_str(&noi));
        if (inv->vfio_noiommu == 1)
                return verdict_add(l, CHECK_IOMMU, VERDICT_WARN, ev, rem_noiommu,
                                   "vfio enable_unsafe_noiommu_mode is on: devices bound to vfio-pci are not "
                                   "protected by an IOMMU (DMA anywhere in host memory)");
        if (inv->iommu_present)
                return verdict_add(l, CHECK_IOMMU, VERDICT_PASS, ev, NULL, "an IOMMU is active: vfio-pci isolates "
                                   "device DMA");
        if (ncand)
                return verdict_add(l, CHECK_IOMMU, VERDICT_WARN, ev,
                                   "on non-metal EC2 load vfio with no-IOMMU mode (modprobe vfio "
                                   "enable_unsafe_noiommu_mode=1; modprobe vfio-pci) or use igb_uio "
                                   "wc_activate=1; on metal boot with intel_iommu=on iommu=pt",
                                   "no IOMMU and vfio no-IOMMU mode is off: vfio-pci cannot take an ENA here");
        return verdict_add(l, CHECK_IOMMU, VERDICT_SKIP, ev, NULL, "no NIC here needs vfio (no IOMMU present)");
}

/* ---- nic-binding ---------------------------------------------------------------- */

/* An ENA the OS itself configured: an address and a default route of the main table,
 * what amazon-ec2-net-utils gives every ENI on AL2023 (DHCP through systemd-networkd). */
static bool nic_os_configured(const inv_nic *n)
{
        return n->kind == INV_NIC_ENA && n->in_use == 1 && n->has_ipv4 && n->has_default && n->netdev[0];
}

static void nic_remedy(sbuf *rem, const inv_nic *n, const char *bind)
{
        if (nic_os_configured(n)) {
                /* a drop-in that sorts before amazon-ec2-net-utils' generated files in
                 * /run/systemd/network: the first matching .network file wins */
                sb_add(rem, "%s: the OS configures %s; to give it to spinlane, leave it unmanaged by systemd-networkd: "
                       "printf '[Match]\\n%s=%s\\n\\n[Link]\\nUnmanaged=yes\\n' > "
                       "/etc/systemd/network/10-spinlane-%s.network on the node, reboot it (or run networkctl reload "
                       "and take the interface's addresses, routes and rules off), then send the agent SIGHUP: it "
                       "binds the NIC and records it, so `spinlane-agent restore` can give it back (a hand bind with "
                       "dpdk-devbind.py cannot be)",
                       n->pci, n->netdev, n->mac[0] ? "MACAddress" : "Name", n->mac[0] ? n->mac : n->netdev, n->netdev);
        } else if (n->kind != INV_NIC_MANA && n->in_use == 1) {
                sb_add(rem, "%s: the node uses %s (see why): leave it to the node, or take its addresses, routes, "
                       "rules and master off first; spinlane never takes it as it is", n->pci, n->netdev);
        } else if (n->kind != INV_NIC_MANA && n->in_use < 0) {
                sb_add(rem, "%s: make the node's addresses, routes and rules readable (see why); until then "
                       "spinlane takes no NIC", n->pci);
        } else if (n->kind == INV_NIC_MANA) {
                sb_add(rem, "%s: modprobe mana_ib ib_uverbs (MANA stays on mana; DPDK net_mana uses "
                       "/dev/infiniband/uverbsN)", n->pci);
        } else {
                /* the agent binds it itself (and records it for restore): a hand bind
                 * would bypass the state file */
                sb_add(rem, "%s: let the agent bind it to %s: node preparation does at start and on SIGHUP "
                       "(`spinlane-agent prepare` once); if it did not, its prep-nic-binding verdict says why",
                       n->pci, bind);
        }
}

static int check_nic_binding(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf ready = {0}, notready = {0}, rem = {0};
        size_t nready = 0, nnot = 0, nprob;
        const char *bind = o->bind_driver ? o->bind_driver : "vfio-pci";
        json_t *jready = json_array(), *jnot = json_array();
        const inv_problem *first_prob;
        json_t *probs = nic_listing_problems_json(inv, &nprob, &first_prob);

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                if (!nic_selected(o, n))
                        continue;
                json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s?}", "pci", n->pci, "kind",
                                      inv_nic_kind_name(n->kind), "driver", n->driver, "netdev", n->netdev, "reason",
                                      n->dpdk_reason, "in_use", n->in_use < 0 ? json_null() : json_boolean(n->in_use),
                                      "in_use_reason", *n->in_use_reason ? n->in_use_reason : NULL);
                if (device_map_nic_ready(n)) {
                        sb_add(&ready, "%s%s (%s)", nready ? ", " : "", n->pci, n->driver);
                        json_array_append_new(jready, j);
                        nready++;
                } else {
                        sb_add(&notready, "%s%s (%s%s%s): %s", nnot ? "; " : "", n->pci, inv_nic_kind_name(n->kind),
                               n->netdev[0] ? ", " : "", n->netdev, n->dpdk_reason);
                        if (nic_os_configured(n))
                                sb_add(&notready, "; the OS configured it (an address and a default route, as "
                                       "amazon-ec2-net-utils does for every ENI), never taken: %s", n->in_use_reason);
                        else if (n->kind != INV_NIC_MANA && n->in_use == 1)
                                sb_add(&notready, "; the node uses it, never taken: %s", n->in_use_reason);
                        else if (n->kind != INV_NIC_MANA && n->in_use < 0)
                                sb_add(&notready, "; not taken: %s", n->in_use_reason);
                        if (nnot)
                                sb_add(&rem, "; ");
                        nic_remedy(&rem, n, bind);
                        json_array_append_new(jnot, j);
                        nnot++;
                }
        }
        json_t *ev = json_pack("{s:o,s:o,s:o}", "ready", jready, "not_ready", jnot, "problems", probs);
        if (nready == 0) {
                const inv_problem *p = first_prob;
                if (nnot == 0 && p)
                        return verdict_add(l, CHECK_NIC_BINDING, VERDICT_SKIP, ev,
                                           "fix or report the unreadable file named here",
                                           "cannot list the NICs: %s: %s", p->path, strerror(-p->err));
                /* NICs that exist but the selection leaves out: name them and the selector */
                sbuf excluded = {0};
                size_t nexcl = 0;
                for (size_t i = 0; nnot == 0 && i < inv->n_nics; i++) {
                        const inv_nic *n = &inv->nics[i];
                        if (n->primary)
                                continue;
                        sb_add(&excluded, "%s%s (%s%s%s)", nexcl++ ? ", " : "", n->pci, inv_nic_kind_name(n->kind),
                               n->netdev[0] ? ", " : "", n->netdev);
                }
                if (nnot == 0 && nexcl)
                        return verdict_add(l, CHECK_NIC_BINDING, VERDICT_FAIL, ev,
                                           "widen the NIC selectors in the config (nics.kinds, nics.ids, nics.pci, "
                                           "nics.interfaces) to take one of them, then send the agent SIGHUP",
                                           "no DPDK-ready NIC and no candidate: the config's NIC selectors (nics.*) "
                                           "exclude every secondary NIC: %s", sb_str(&excluded));
                if (nnot == 0)
                        return verdict_add(l, CHECK_NIC_BINDING, VERDICT_FAIL, ev,
                                           "attach a secondary ENA (EKS: an extra ENI tagged "
                                           "node.k8s.amazonaws.com/no_manage=true) or a MANA VF (AKS: accelerated "
                                           "networking) to the node",
                                           "no DPDK-ready NIC and no candidate: no secondary ENA or MANA device");
                return verdict_add(l, CHECK_NIC_BINDING, VERDICT_FAIL, ev, sb_str(&rem),
                                   "no DPDK-ready NIC; not ready: %s", sb_str(&notready));
        }
        if (nnot)
                return verdict_add(l, CHECK_NIC_BINDING, VERDICT_WARN, ev, sb_str(&rem),
                                   "%zu DPDK-ready NIC%s (%s); not ready: %s", nready, nready == 1 ? "" : "s",
                                   sb_str(&ready), sb_str(&notready));
        if (nprob) {
                const inv_problem *p = first_prob;
                return verdict_add(l, CHECK_NIC_BINDING, VERDICT_WARN, ev,
                                   "fix or report the unreadable file named here; a NIC behind it may be missing",
                                   "%zu DPDK-ready NIC%s (%s); but %s: %s (%s)", nready, nready == 1 ? "" : "s",
                                   sb_str(&ready), p->path, strerror(-p->err), p->what);
        }
        return verdict_add(l, CHECK_NIC_BINDING, VERDICT_PASS, ev, NULL, "%zu DPDK-ready NIC%s: %s", nready,
                           nready == 1 ? "" : "s", sb_str(&ready));
}

/* ---- primary-nic ---------------------------------------------------------------- */

static int check_primary_nic(const inventory *inv, const checks_options *o, verdict_list *l)
{
        const inv_nic *prim = NULL, *bad = NULL;
        sbuf others = {0};
        size_t n_others = 0;

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                if (!n->primary) {
                        /* another NIC the OS configured with a default route (amazon-ec2-net-utils
                         * gives every ENI one, metric 512 + device index) */
                        if (n->has_default)
                                sb_add(&others, "%s%s (%s, default route metric %u)", n_others++ ? ", " : "", n->pci,
                                       n->netdev, n->default_metric);
                        continue;
                }
                if (!prim)
                        prim = n;
                /* a MANA VF stays on mana and is "ready" without being taken: only a bind
                 * or an explicit selection hands the primary away */
                if (nic_on_dpdk_driver(n) || nic_selected(o, n))
                        bad = n;
        }
        json_t *ev = json_pack("{s:s?,s:s?,s:s?,s:o,s:s,s:s?}", "pci", prim ? prim->pci : NULL, "netdev",
                               prim ? prim->netdev : NULL, "driver", prim ? prim->driver : NULL, "default_metric",
                               prim ? json_integer(prim->default_metric) : json_null(), "source",
                               inv->link_usage_source, "error",
                               inv->have_link_usage ? NULL : inv->link_usage_error);
        if (bad)
                return verdict_add(l, CHECK_PRIMARY_NIC, VERDICT_FAIL, ev,
                                   "exclude the primary NIC from the NIC selectors and keep it on its kernel "
                                   "driver; use a secondary ENI/NIC for DPDK",
                                   "NIC %s (%s) carries the default route and is %s%s: giving it to a pod would cut "
                                   "the node off", bad->pci, bad->netdev[0] ? bad->netdev : "no netdev",
                                   nic_on_dpdk_driver(bad) ? "bound to " : "selected for DPDK",
                                   nic_on_dpdk_driver(bad) ? bad->driver : "");
        if (!inv->have_link_usage)
                return verdict_add(l, CHECK_PRIMARY_NIC, VERDICT_FAIL, ev,
                                   "fix what is named here (the agent needs the host's network namespace: "
                                   "hostNetwork: true)",
                                   "cannot tell which NICs the node uses: %s: node preparation takes no NIC",
                                   inv->link_usage_error);
        if (!prim)
                return verdict_add(l, CHECK_PRIMARY_NIC, VERDICT_WARN, ev,
                                   "check `ip route show default`; the agent protects only a PCI NIC it can see",
                                   "no PCI NIC carries the default route of the main table: the primary NIC cannot "
                                   "be recognised (NICs the node uses are still never taken)");
        if (n_others)
                return verdict_add(l, CHECK_PRIMARY_NIC, VERDICT_PASS, ev, NULL,
                                   "primary NIC %s (%s) carries the lowest-metric default route (metric %u) and stays "
                                   "on %s; the OS also configured %s: in use, never taken",
                                   prim->pci, prim->netdev[0] ? prim->netdev : "no netdev", prim->default_metric,
                                   prim->driver[0] ? prim->driver : "no driver", sb_str(&others));
        return verdict_add(l, CHECK_PRIMARY_NIC, VERDICT_PASS, ev, NULL,
                           "primary NIC %s (%s) carries the default route and stays on %s", prim->pci,
                           prim->netdev[0] ? prim->netdev : "no netdev", prim->driver[0] ? prim->driver : "no driver");
}

/* ---- write-combining ------------------------------------------------------------ */

static int check_write_combining(const inventory *inv, verdict_list *l)
{
        sbuf yes = {0}, no = {0}, unk = {0};
        size_t ny = 0, nn = 0, nu = 0;
        json_t *arr = json_array();

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                char bar[64];
                if (n->kind != INV_NIC_ENA || !nic_on_dpdk_driver(n))
                        continue;
                snprintf(bar, sizeof(bar), "0x%" PRIx64 "-0x%" PRIx64, n->wc_bar_start, n->wc_bar_end);
                json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o}", "pci", n->pci, "driver", n->driver,
                                                     "prefetchable_bar", n->wc_bar_end ? bar : "none",
                                                     "write_combining", n->write_combining < 0
                                                                                ? json_string("unknown")
                                                                                : json_boolean(n->write_combining)));
                if (n->write_combining == 1) {
                        sb_add(&yes, "%s%s", ny++ ? ", " : "", n->pci);
                } else if (n->write_combining == 0) {
                        sb_add(&no, "%s%s (BAR %s)", nn++ ? ", " : "", n->pci, bar);
                } else {
                        sb_add(&unk, "%s%s", nu++ ? ", " : "", n->pci);
                }
        }
        const inv_problem *p = find_problem(inv, INV_TOPIC_NIC, "pat_memtype_list");
        json_t *ev = json_pack("{s:o,s:b}", "nics", arr, "x86", inv->arch_x86);
        if (p)
                json_object_set_new(ev, "pat_list", json_pack("{s:s,s:s}", "path", p->path, "error", strerror(-p->err)));
        if (ny + nn + nu == 0)
                return verdict_add(l, CHECK_WRITE_COMBINING, VERDICT_SKIP, ev, NULL, "no ENA bound to vfio-pci or igb_uio");
        if (!inv->arch_x86)
                return verdict_add(l, CHECK_WRITE_COMBINING, VERDICT_SKIP, ev, NULL,
                                   "not an x86 node: the PAT write-combining check does not apply");
        if (nn)
                return verdict_add(l, CHECK_WRITE_COMBINING, VERDICT_FAIL, ev,
                                   "igb_uio: reload with wc_activate=1; vfio-pci: use a vfio-pci built with "
                                   "write-combining (amzn-drivers' get-vfio-with-wc.sh); then restart the driver pod",
                                   "the ENA memory BAR is not mapped write-combining for %s: LLQ is slow or "
                                   "refused", sb_str(&no));
        if (nu)
                return verdict_add(l, CHECK_WRITE_COMBINING, VERDICT_WARN, ev,
                                   "while a DPDK pod runs, as root: grep the BAR address in "
                                   "/sys/kernel/debug/x86/pat_memtype_list and expect \"write-combining\"; "
                                   "igb_uio needs wc_activate=1, vfio-pci a WC-enabled build",
                                   "write-combining unknown for %s (%s)", sb_str(&unk),
                                   p ? "the PAT list is unreadable here" : "its BAR is not mapped yet");
        return verdict_add(l, CHECK_WRITE_COMBINING, VERDICT_PASS, ev, NULL,
                           "ENA memory BAR mapped write-combining for %s", sb_str(&yes));
}

/* ---- numa-alignment ------------------------------------------------------------- */

static int check_numa_alignment(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf bad = {0}, good = {0}, rem = {0};
        size_t nbad = 0, ngood = 0, nnics = 0;
        json_t *arr = json_array();

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                if (!nic_dpdk(o, n))
                        continue;
                nnics++;
                if (n->numa_node < 0) {
                        char path[PATH_MAX];
                        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", n->pci);
                        const inv_problem *p = find_problem(inv, INV_TOPIC_NIC, path);
                        json_array_append_new(arr, json_pack("{s:s,s:i,s:s?}", "nic", n->pci, "numa_node", -1,
                                                             "error", p ? strerror(-p->err) : NULL));
                        if (p) {
                                sb_add(&bad, "%s%s: NUMA node unreadable (%s: %s)", nbad ? "; " : "", n->pci,
                                       p->path, strerror(-p->err));
                                nbad++;
                        } else if (inv->n_numa > 1) {
                                sb_add(&bad, "%s%s: NUMA node unknown (-1) on a %zu-node machine", nbad ? "; " : "",
                                       n->pci, inv->n_numa);
                                nbad++;
                        } else {
                                sb_add(&good, "%s%s (single NUMA node)", ngood ? ", " : "", n->pci);
                                ngood++;
                        }
                        continue;
                }
                const inv_numa *nn = inventory_find_numa(inv, n->numa_node);
                cpuset c;
                cpuset_zero(&c);
                if (nn)
                        cpuset_and(&c, &inv->pool, &nn->cpus);
                uint64_t f = node_free_any(inv, n->numa_node);
                json_array_append_new(arr, json_pack("{s:s,s:i,s:o,s:I}", "nic", n->pci, "numa_node", n->numa_node,
                                                     "isolated_cpus", jcpus(&c), "free_hugepages", (json_int_t)f));
                if (cpuset_empty(&c) || f == 0) {
                        sb_add(&bad, "%s%s on NUMA node %d has %s%s%s", nbad ? "; " : "", n->pci, n->numa_node,
                               cpuset_empty(&c) ? "no isolated core" : "",
                               cpuset_empty(&c) && f == 0 ? " and " : "", f == 0 ? "no free hugepages" : "");
                        sb_add(&rem, "%snode %d: %s%s%s", nbad ? "; " : "", n->numa_node,
                               cpuset_empty(&c) ? "isolate whole cores of this node" : "",
                               cpuset_empty(&c) && f == 0 ? ", " : "",
                               f == 0 ? "reserve hugepages in /sys/devices/system/node/nodeN/hugepages" : "");
                        nbad++;
                } else {
                        sb_add(&good, "%s%s (node %d)", ngood ? ", " : "", n->pci, n->numa_node);
                        ngood++;
                }
        }
        const inv_problem *np = find_problem(inv, INV_TOPIC_NUMA, "/");
        json_t *ev = json_pack("{s:o,s:i,s:o}", "nics", arr, "numa_nodes", (int)inv->n_numa, "problems",
                               problems_json(inv, INV_TOPIC_NUMA, NULL, NULL));
        if (np && nnics)
                sb_add(&bad, "%sunreadable NUMA data: %s: %s", nbad++ ? "; " : "", np->path, strerror(-np->err));
        if (nnics == 0)
                return verdict_add(l, CHECK_NUMA_ALIGNMENT, VERDICT_SKIP, ev, NULL, "no DPDK-ready NIC to align");
        if (nbad)
                return verdict_add(l, CHECK_NUMA_ALIGNMENT, VERDICT_WARN, ev,
                                   rem.n ? sb_str(&rem) : "fix or report the file named here",
                                   "%s: a pod there would use remote cores or memory", sb_str(&bad));
        return verdict_add(l, CHECK_NUMA_ALIGNMENT, VERDICT_PASS, ev, NULL,
                           "isolated cores and free hugepages on the NUMA node of %s", sb_str(&good));
}

/* ---- nic-address ---------------------------------------------------------------- */

static void addr_text(const inv_nic *n, char *buf, size_t size)
{
        char cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];
        ipv4_cidr_format((ipv4_cidr){n->addr.ipv4, n->addr.prefix_len}, cidr);
        if (n->addr.gateway)
                snprintf(buf, size, "%s gateway %s", cidr, ipv4_format(n->addr.gateway, gw));
        else
                snprintf(buf, size, "%s, no gateway", cidr);
}

/* One remedy per kind of problem, naming its NICs. */
static void addr_remedies(const inventory *inv, const checks_options *o, sbuf *rem)
{
        /* NO_SOURCE goes with NO_MAC: a static entry by PCI address is the answer to both */
        static const inv_addr_problem order[] = {INV_ADDR_NO_MAC, INV_ADDR_METADATA, INV_ADDR_DUPLICATE,
                                                 INV_ADDR_CONFLICT};
        for (size_t k = 0; k < ELEMENTSOF(order); k++) {
                sbuf pcis = {0}, entries = {0};
                size_t n = 0;
                for (size_t i = 0; i < inv->n_nics; i++) {
                        const inv_nic *x = &inv->nics[i];
                        inv_addr_problem p = x->addr.problem == INV_ADDR_NO_SOURCE ? INV_ADDR_NO_MAC : x->addr.problem;
                        if (!nic_dpdk(o, x) || x->addr.state != INV_ADDR_FAILED || p != order[k])
                                continue;
                        sb_add(&pcis, "%s%s", n ? ", " : "", x->pci);
                        sb_add(&entries, "%s{\"pci\": \"%s\", \"ipv4\": \"a.b.c.d/len\", \"gateway\": \"a.b.c.d\"}",
                               n ? ", " : "", x->pci);
                        n++;
                }
                if (!n)
                        continue;
                if (rem->n)
                        sb_add(rem, "; ");
                switch (order[k]) {
                case INV_ADDR_NO_MAC:
                        sb_add(rem, "%s: only a static entry by PCI address can give %s an address: "
                               "\"addresses\": {\"static\": [%s]}", sb_str(&pcis), n == 1 ? "it" : "them",
                               sb_str(&entries));
                        break;
                case INV_ADDR_METADATA:
                        sb_add(rem, "%s: the agent must reach the instance metadata service (hostNetwork; AWS: IMDSv2 "
                               "enabled; Azure: IMDS) and each MAC must be an interface of this instance with an IPv4 "
                               "address; or give %s a static entry (addresses.static)", sb_str(&pcis),
                               n == 1 ? "it" : "each");
                        break;
                case INV_ADDR_DUPLICATE:
                        sb_add(rem, "%s: give each NIC an address of its own (static entries, or the ENIs' addresses)",
                               sb_str(&pcis));
                        break;
                default:
                        sb_add(rem, "%s: make the static entries that match %s agree, or drop one", sb_str(&pcis),
                               n == 1 ? "it" : "each");
                }
        }
}

static int check_nic_address(const inventory *inv, const checks_options *o, verdict_list *l)
{
        sbuf good = {0}, bad = {0}, wait = {0}, rem = {0};
        size_t ngood = 0, nbad = 0, nwait = 0;
        json_t *nics = json_array();

        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                char text[64], cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];
                if (!nic_dpdk(o, n))
                        continue;
                bool known = n->addr.state == INV_ADDR_KNOWN;
                json_array_append_new(
                        nics, json_pack("{s:s,s:s?,s:s,s:s?,s:s?,s:s?,s:s?}", "pci", n->pci, "mac", *n->mac ? n->mac : NULL,
                                        "state", inv_addr_state_name(n->addr.state), "ipv4",
                                        known ? ipv4_cidr_format((ipv4_cidr){n->addr.ipv4, n->addr.prefix_len}, cidr) : NULL,
                                        "gateway", known && n->addr.gateway ? ipv4_format(n->addr.gateway, gw) : NULL,
                                        "source", known ? n->addr.source : NULL, "reason", *n->addr.why ? n->addr.why : NULL));
                switch (n->addr.state) {
                case INV_ADDR_KNOWN:
                        addr_text(n, text, sizeof(text));
                        sb_add(&good, "%s%s %s (%s)", ngood++ ? ", " : "", n->pci, text, n->addr.source);
                        break;
                case INV_ADDR_FAILED:
                        sb_add(&bad, "%s%s: %s", nbad++ ? "; " : "", n->pci, n->addr.why);
                        break;
                case INV_ADDR_UNRESOLVED:
                        sb_add(&wait, "%s%s: addresses not resolved", nwait++ ? "; " : "", n->pci);
                        break;
                default: /* PENDING, ELSEWHERE */
                        sb_add(&wait, "%s%s: %s", nwait++ ? "; " : "", n->pci, n->addr.why);
                }
        }
        json_t *ev = json_pack("{s:o}", "nics", nics);
        if (nbad) {
                addr_remedies(inv, o, &rem);
                return verdict_add(l, CHECK_NIC_ADDRESS, VERDICT_FAIL, ev, sb_str(&rem),
                                   "%zu of %zu DPDK NIC%s without an address (listed Unhealthy to the kubelet): %s%s%s",
                                   nbad, nbad + ngood + nwait, nbad + ngood + nwait == 1 ? "" : "s", sb_str(&bad),
                                   ngood ? "; with one: " : "", sb_str(&good));
        }
        if (nwait)
                return verdict_add(l, CHECK_NIC_ADDRESS, VERDICT_SKIP, ev, NULL, "%s%s%s", sb_str(&wait),
                                   ngood ? "; known: " : "", sb_str(&good));
        if (ngood == 0)
                return verdict_add(l, CHECK_NIC_ADDRESS, VERDICT_SKIP, ev, NULL, "no DPDK NIC is advertised");
        return verdict_add(l, CHECK_NIC_ADDRESS, VERDICT_PASS, ev, NULL, "every advertised NIC has an address: %s",
                           sb_str(&good));
}

int checks_node(const inventory *inv, const checks_options *opt, verdict_list *l)
{
        checks_options with = opt ? *opt : (checks_options){ 0 };
        const checks_options *o = &with;
        _cleanup_(selection_free) selection sel = { 0 };
        _cleanup_(device_map_free) device_map map = { 0 };
        config def;
        int r;

        /* No map given: the default config's, by the one rule (device-map.h) */
        if (!with.map) {
                config_init(&def);
                if ((r = selection_new(&def, inv, NULL, &sel)) < 0 || (r = device_map_build(&sel, NULL, &map)) < 0)
                        return r;
                with.map = &map;
        }

        if ((r = check_isolated_cpus(inv, l)) < 0 || (r = check_smt_siblings(inv, l)) < 0 ||
            (r = check_nohz_full(inv, l)) < 0 || (r = check_hugepages(inv, o, l)) < 0 ||
            (r = check_hugetlbfs(inv, o, l)) < 0 || (r = check_iommu(inv, o, l)) < 0 ||
            (r = check_nic_binding(inv, o, l)) < 0 || (r = check_primary_nic(inv, o, l)) < 0 ||
            (r = check_write_combining(inv, l)) < 0 || (r = check_numa_alignment(inv, o, l)) < 0 ||
            (r = check_nic_address(inv, o, l)) < 0)
                return r;
        if (o->config && (r = kargs_check(o->config, inv, o->kargs_state, l)) < 0)
                return r;
        return 0;
}
