/* SPDX-License-Identifier: Apache-2.0 */
/* The inventory as one JSON document (`spinlane-agent inventory --json`), including the
 * `resources` object the device plugin advertises. Pure conversion: no I/O, never logs. */
#include "inventory.h"

#include "cleanup.h"
#include "ipv4.h"
#include "device-map.h"

#include <errno.h>
#include <string.h>

/* json_object_set_new that turns a NULL value into a failure flag. */
static void set(json_t *o, const char *k, json_t *v, bool *oom)
{
        if (!v || json_object_set_new(o, k, v) < 0)
                *oom = true;
}

/* json_object()/json_array() that turn a failure into the flag. */
static json_t *new_object(bool *oom)
{
        json_t *o = json_object();
        if (!o)
                *oom = true;
        return o;
}

static json_t *new_array(bool *oom)
{
        json_t *a = json_array();
        if (!a)
                *oom = true;
        return a;
}

static void push(json_t *a, json_t *v, bool *oom)
{
        if (!v || json_array_append_new(a, v) < 0)
                *oom = true;
}

static json_t *cpus_array(const cpuset *s, bool *oom)
{
        json_t *a = new_array(oom);
        if (!a)
                return NULL;
        CPUSET_FOREACH(cpu, s)
                push(a, json_integer(cpu), oom);
        return a;
}

static json_t *cpus_list(const cpuset *s)
{
        char buf[CPUSET_MAX * 6];
        cpuset_format(s, buf, sizeof(buf));
        return json_string(buf);
}

static json_t *hugepage_object(const inv_hugepages *h, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "size_kb", json_integer((json_int_t)h->size_kb), oom);
        set(o, "total", json_integer((json_int_t)h->total), oom);
        set(o, "free", json_integer((json_int_t)h->free), oom);
        return o;
}

static json_t *huge_array(const inv_hugepages *h, size_t n, bool *oom)
{
        json_t *a = new_array(oom);
        for (size_t i = 0; a && !*oom && i < n; i++)
                push(a, hugepage_object(&h[i], oom), oom);
        return a;
}

static json_t *devnode_object(const char *host, const char *container, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "host_path", json_string(host), oom);
        set(o, "container_path", json_string(container), oom);
        set(o, "permissions", json_string("rw"), oom);
        return o;
}

static json_t *devnodes_array(const inv_nic *n, bool *oom)
{
        json_t *a = new_array(oom);
        for (size_t i = 0; a && !*oom && i < n->n_devnodes; i++)
                push(a, devnode_object(n->devnodes[i].host, n->devnodes[i].container, oom), oom);
        return a;
}

static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

/* Where the NIC's address came from: "address_source", "address_state", "address_reason". */
static void address_origin(json_t *o, const inv_nic *n, bool *oom)
{
        set(o, "address_source", n->addr.state == INV_ADDR_KNOWN ? str_or_null(n->addr.source) : json_null(), oom);
        set(o, "address_state", json_string(inv_addr_state_name(n->addr.state)), oom);
        set(o, "address_reason", str_or_null(n->addr.why), oom);
}

/* The NIC's address fields: "ipv4" (a.b.c.d/len) and "gateway" when known (else null),
 * "address_source", "address_state", "address_reason". */
static void address_fields(json_t *o, const inv_nic *n, bool *oom)
{
        char cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];
        bool known = n->addr.state == INV_ADDR_KNOWN;

        set(o, "ipv4", known ? json_string(ipv4_cidr_format((ipv4_cidr){n->addr.ipv4, n->addr.prefix_len}, cidr))
                             : json_null(), oom);
        set(o, "gateway", known && n->addr.gateway ? json_string(ipv4_format(n->addr.gateway, gw)) : json_null(), oom);
        address_origin(o, n, oom);
}

static json_t *nic_object(const inv_nic *n, bool *oom)
{
        char ids[16], cls[16];
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        snprintf(ids, sizeof(ids), "%04x:%04x", n->vendor, n->device);
        snprintf(cls, sizeof(cls), "0x%06x", n->pci_class);
        set(o, "pci", json_string(n->pci), oom);
        set(o, "ids", json_string(ids), oom);
        set(o, "class", json_string(cls), oom);
        set(o, "kind", json_string(inv_nic_kind_name(n->kind)), oom);
        set(o, "driver", str_or_null(n->driver), oom);
        set(o, "iommu_group", json_integer(n->iommu_group), oom);
        set(o, "noiommu", json_boolean(n->noiommu), oom);
        set(o, "numa_node", json_integer(n->numa_node), oom);
        set(o, "netdev", str_or_null(n->netdev), oom);
        set(o, "mac", str_or_null(n->mac), oom);
        set(o, "mac_source", str_or_null(n->mac_source), oom);
        address_fields(o, n, oom);
        set(o, "primary", json_boolean(n->primary), oom);
        set(o, "has_ipv4", json_boolean(n->has_ipv4), oom);
        set(o, "in_use", n->in_use < 0 ? json_null() : json_boolean(n->in_use), oom);
        set(o, "in_use_reason", str_or_null(n->in_use_reason), oom);
        set(o, "dpdk_ready", json_boolean(n->dpdk_ready), oom);
        set(o, "dpdk_reason", json_string(n->dpdk_reason), oom);
        set(o, "devices", devnodes_array(n, oom), oom);
        set(o, "write_combining",
            n->write_combining < 0 ? json_string("unknown") : json_boolean(n->write_combining), oom);
        return o;
}

/* resources: what the device plugin advertises, the device map's values as they are
 * (their address's state, source and reason from the inventory row it was built from) */
static json_t *resource_nic_object(const device_entry *e, const inv_nic *n, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "id", json_string(e->id), oom);
        set(o, "pci", json_string(e->pci), oom);
        set(o, "kind", json_string(e->nic_kind), oom);
        set(o, "driver", json_string(e->driver), oom);
        set(o, "numa_node", json_integer(e->numa_node), oom);
        set(o, "netdev", str_or_null(e->netdev), oom);
        set(o, "mac", str_or_null(e->mac), oom);
        set(o, "ipv4", str_or_null(e->ipv4), oom);
        set(o, "gateway", str_or_null(e->gateway), oom);
        address_origin(o, n, oom);
        json_t *a = new_array(oom);
        for (size_t i = 0; a && !*oom && i < e->n_devnodes; i++)
                push(a, devnode_object(e->devnodes[i].host, e->devnodes[i].container, oom), oom);
        set(o, "devices", a, oom);
        return o;
}

/* A core as both lists show it: its id, its CPUs, its NUMA node. */
static json_t *core_base_object(const char *id, const cpuset *cpus, int numa_node, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "id", json_string(id), oom);
        set(o, "cpus", cpus_array(cpus, oom), oom);
        set(o, "numa_node", json_integer(numa_node), oom);
        return o;
}

static json_t *resource_core_object(const device_entry *e, bool *oom)
{
        return core_base_object(e->id, &e->cpus, e->numa_node, oom);
}

/* What the daemon advertises (device-map.h): every device the map lists, Healthy or not. */
static json_t *resources_json(const inventory *inv, const device_map *map, const char *resource_prefix, bool *oom)
{
        char name[256];
        json_t *res = new_object(oom), *rn, *rc;
        if (!res)
                return NULL;
        rn = new_array(oom);
        device_kind_full(DEVICE_NIC, resource_prefix, name, sizeof(name));
        set(res, name, rn, oom);
        rc = new_array(oom);
        device_kind_full(DEVICE_CORE, resource_prefix, name, sizeof(name));
        set(res, name, rc, oom);
        for (size_t i = 0; rn && rc && !*oom && i < map->n; i++) {
                const device_entry *e = &map->items[i];
                if (!device_listed(e) || e->index < 0) /* a vanished device has no inventory entry */
                        continue;
                if (e->kind == DEVICE_NIC && (size_t)e->index < inv->n_nics)
                        push(rn, resource_nic_object(e, &inv->nics[e->index], oom), oom);
                else if (e->kind == DEVICE_CORE)
                        push(rc, resource_core_object(e, oom), oom);
        }
        return res;
}

/* cpus: the kernel's lists and, per CPU, its core */
static json_t *cpu_object(const inventory *inv, size_t cpu, bool *oom)
{
        const inv_core *c = &inv->cores[inv->cpu_core[cpu]];
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "cpu", json_integer((json_int_t)cpu), oom);
        set(o, "package", json_integer(c->package), oom);
        set(o, "core_id", json_integer(c->core_id), oom);
        set(o, "core", json_string(c->id), oom);
        set(o, "siblings", cpus_list(&c->cpus), oom);
        return o;
}

static json_t *cpus_json(const inventory *inv, bool *oom)
{
        json_t *cpus = new_object(oom), *per;
        if (!cpus)
                return NULL;
        set(cpus, "online", inv->have_online ? cpus_list(&inv->online) : json_null(), oom);
        set(cpus, "isolated", inv->have_isolated ? cpus_list(&inv->isolated) : json_null(), oom);
        set(cpus, "nohz_full", inv->have_nohz_full ? cpus_list(&inv->nohz_full) : json_null(), oom);
        set(cpus, "pool", cpus_list(&inv->pool), oom);
        set(cpus, "smt", json_boolean(inv->smt), oom);
        per = new_array(oom);
        set(cpus, "cpus", per, oom);
        for (size_t cpu = 0; per && !*oom && cpu < inv->n_cpu_core; cpu++)
                if (inv->cpu_core[cpu] >= 0)
                        push(per, cpu_object(inv, cpu, oom), oom);
        return cpus;
}

/* A core: its resource entry and whether it is isolated or split. */
static json_t *core_object(const inv_core *c, bool *oom)
{
        json_t *o = core_base_object(c->id, &c->cpus, c->numa_node, oom);
        set(o, "isolated", json_boolean(c->isolated), oom);
        set(o, "split", json_boolean(c->split), oom);
        return o;
}

static json_t *numa_object(const inv_numa *n, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "id", json_integer(n->id), oom);
        set(o, "cpus", cpus_list(&n->cpus), oom);
        set(o, "hugepages", huge_array(n->huge, n->n_huge, oom), oom);
        return o;
}

static json_t *mount_object(const inv_mount *m, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "path", json_string(m->path), oom);
        set(o, "pagesize_kb", json_integer((json_int_t)m->pagesize_kb), oom);
        return o;
}

static json_t *memory_json(const inventory *inv, bool *oom)
{
        json_t *mem = new_object(oom), *mounts;
        if (!mem)
                return NULL;
        set(mem, "hugepages", huge_array(inv->huge, inv->n_huge, oom), oom);
        set(mem, "default_hugepage_kb", json_integer((json_int_t)inv->default_huge_kb), oom);
        mounts = new_array(oom);
        set(mem, "hugetlbfs", mounts, oom);
        for (size_t i = 0; mounts && !*oom && i < inv->n_mounts; i++)
                push(mounts, mount_object(&inv->mounts[i], oom), oom);
        return mem;
}

/* The kernel command line: a flag without a value is true, a flag given twice an array. */
static json_t *cmdline_json(const inventory *inv, bool *oom)
{
        json_t *cmd = new_object(oom);
        for (size_t i = 0; cmd && !*oom && i < inv->n_cmdline; i++) {
                const inv_cmdline_flag *f = &inv->cmdline[i];
                json_t *v = f->has_value ? json_string(f->value) : json_true();
                json_t *old = json_object_get(cmd, f->name);
                if (!old) {
                        set(cmd, f->name, v, oom);
                } else if (json_is_array(old)) {
                        push(old, v, oom);
                } else {
                        json_t *a = json_array();
                        push(a, json_incref(old), oom);
                        push(a, v, oom);
                        set(cmd, f->name, a, oom);
                }
        }
        return cmd;
}

static json_t *kernel_json(const inventory *inv, bool *oom)
{
        json_t *k = new_object(oom);
        if (!k)
                return NULL;
        set(k, "cmdline", cmdline_json(inv, oom), oom);
        set(k, "vfio_noiommu", inv->vfio_noiommu < 0 ? json_null() : json_boolean(inv->vfio_noiommu), oom);
        set(k, "iommu_present", json_boolean(inv->iommu_present), oom);
        set(k, "cgroup", json_string(inv_cgroup_name(inv->cgroup)), oom);
        set(k, "x86", json_boolean(inv->arch_x86), oom);
        return k;
}

static json_t *problem_object(const inv_problem *p, bool *oom)
{
        json_t *o = new_object(oom); /* NULL: every set() below fails too */
        set(o, "topic", json_string(inv_topic_name(p->topic)), oom);
        set(o, "path", json_string(p->path), oom);
        set(o, "error", json_string(strerror(-p->err)), oom);
        set(o, "errno", json_integer(-p->err), oom);
        set(o, "what", json_string(p->what), oom);
        return o;
}

json_t *inventory_to_json(const inventory *inv, const device_map *map, const char *resource_prefix)
{
        json_t *cores, *numa, *nics, *probs;
        bool oom = false;

        if (!resource_prefix)
                resource_prefix = DEVICE_PREFIX_DEFAULT;
        json_t *root = json_object();
        if (!root)
                return NULL;

        set(root, "resources", resources_json(inv, map, resource_prefix, &oom), &oom);
        set(root, "cpus", cpus_json(inv, &oom), &oom);
        cores = new_array(&oom);
        set(root, "cores", cores, &oom);
        for (size_t i = 0; cores && !oom && i < inv->n_cores; i++)
                push(cores, core_object(&inv->cores[i], &oom), &oom);
        numa = new_array(&oom);
        set(root, "numa", numa, &oom);
        for (size_t i = 0; numa && !oom && i < inv->n_numa; i++)
                push(numa, numa_object(&inv->numa[i], &oom), &oom);
        nics = new_array(&oom);
        set(root, "nics", nics, &oom);
        for (size_t i = 0; nics && !oom && i < inv->n_nics; i++)
                push(nics, nic_object(&inv->nics[i], &oom), &oom);
        set(root, "memory", memory_json(inv, &oom), &oom);
        set(root, "kernel", kernel_json(inv, &oom), &oom);
        probs = new_array(&oom);
        set(root, "problems", probs, &oom);
        for (size_t i = 0; probs && !oom && i < inv->n_problems; i++)
                push(probs, problem_object(&inv->problems[i], &oom), &oom);
        if (inv->n_problems_dropped)
                set(root, "problems_dropped", json_integer((json_int_t)inv->n_problems_dropped), &oom);

        if (oom) {
                json_decref(root);
                return NULL;
        }
        return root;
}
