/* SPDX-License-Identifier: Apache-2.0 */
/* The one device map (device-map.h): what is advertised, its health, its attributes, and
 * why not; what a device listed before keeps. Pure: no I/O, never logs. */
#include "device-map.h"

#include "cleanup.h"
#include "errbuf.h"
#include "ipv4.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool device_map_nic_ready(const inv_nic *nic)
{
        return nic->dpdk_ready && !nic->primary;
}

bool device_map_nic_wants_address(const selection *sel, const inv_nic *nic)
{
        return selection_has_nic(sel, nic) && device_map_nic_ready(nic);
}

/* ---- NICs ---- */

static void nic_what(sbuf *b, const inv_nic *n)
{
        sb_add(b, "%s", inv_nic_kind_name(n->kind));
        if (*n->netdev)
                sb_add(b, " %s", n->netdev);
        sb_add(b, " on %s", *n->driver ? n->driver : "no driver");
}

static void nic_address(sbuf *b, const inv_nic_addr *a)
{
        char ip[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];
        ipv4_cidr_format((ipv4_cidr){ a->ipv4, a->prefix_len }, ip);
        sb_add(b, "%s", ip);
        if (a->gateway)
                sb_add(b, " gateway %s", ipv4_format(a->gateway, gw));
        if (*a->source)
                sb_add(b, " (%s)", a->source);
}

/* The one reason a NIC of the node is not Healthy, and its line; DEVICE_OK when it is. */
static device_why nic_why(const selection *sel, const inv_nic *n, sbuf *b)
{
        const config *c = sel->cfg;

        switch (selection_nic_why(sel, n)) {
        case SELECT_PRIMARY:
                sb_add(b, "%s carries the node's default route (metric %u): never taken",
                       *n->netdev ? n->netdev : n->pci, n->default_metric);
                return DEVICE_PRIMARY;
        case SELECT_KIND:
                sb_add(b, "nics.kinds leaves out its kind (%s)", inv_nic_kind_name(n->kind));
                return DEVICE_NOT_SELECTED;
        case SELECT_ID:
                sb_add(b, "nics.ids does not list its id %04x:%04x", n->vendor, n->device);
                return DEVICE_NOT_SELECTED;
        case SELECT_PCI:
                sb_add(b, "nics.pci does not list %s", n->pci);
                return DEVICE_NOT_SELECTED;
        case SELECT_INTERFACE:
                if (*n->netdev)
                        sb_add(b, "nics.interfaces does not name %s", n->netdev);
                else
                        sb_add(b, "nics.interfaces names interfaces, and it has no netdev (none recorded in "
                                  "the bind state either)");
                return DEVICE_NOT_SELECTED;
        case SELECT_MAX:
                sb_add(b, "nics.max is %u and as many NICs before it (PCI order) were taken", c ? c->nics.max_count : 0);
                return DEVICE_OVER_MAX;
        case SELECT_TAKEN:
        default:
                break;
        }
        if (!n->dpdk_ready) {
                /* A MANA VF stays on its kernel driver: its use by the node is no reason. */
                if (n->kind != INV_NIC_MANA && n->in_use == 1) {
                        sb_add(b, "the node uses it (%s): never taken", n->in_use_reason);
                        return DEVICE_IN_USE;
                }
                if (n->kind != INV_NIC_MANA && n->in_use < 0) {
                        sb_add(b, "cannot tell whether the node uses it (%s): not taken", n->in_use_reason);
                        return DEVICE_USE_UNKNOWN;
                }
                nic_what(b, n);
                sb_add(b, ": not DPDK-ready: %s", n->dpdk_reason);
                return DEVICE_NOT_READY;
        }
        if (n->addr.state != INV_ADDR_KNOWN) {
                nic_what(b, n);
                sb_add(b, ", DPDK-ready, but no IPv4 address%s: %s",
                       n->addr.state == INV_ADDR_ELSEWHERE ? " here" : "",
                       *n->addr.why ? n->addr.why : inv_addr_state_name(n->addr.state));
                return DEVICE_NO_ADDRESS;
        }
        nic_what(b, n);
        sb_add(b, ", NUMA node %d, ", n->numa_node);
        nic_address(b, &n->addr);
        return DEVICE_OK;
}

/* ---- cores ---- */

static device_why core_why(const selection *sel, const inventory *inv, const inv_core *core, sbuf *b)
{
        char cpus[256], part[256];
        cpuset_format(&core->cpus, cpus, sizeof(cpus));
        if (selection_has_core(sel, core)) {
                sb_add(b, "CPUs %s, NUMA node %d", cpus, core->numa_node);
                return DEVICE_OK;
        }
        if (core->isolated) {
                const config *c = sel->cfg;
                cpuset out;
                cpuset_andnot(&out, &core->cpus, c ? &c->cores.cpus : &core->cpus);
                cpuset_format(&out, part, sizeof(part));
                sb_add(b, "CPUs %s are isolated, but cores.cpus leaves out %s", cpus, part);
                return DEVICE_OUTSIDE_CPUS;
        }
        if (!inv->have_isolated) {
                sb_add(b, "CPUs %s: the isolated set is unknown (see the isolated-cpus verdict)", cpus);
                return DEVICE_NOT_ISOLATED;
        }
        if (core->split) {
                cpuset iso, off;
                cpuset_and(&iso, &core->cpus, &inv->isolated);
                cpuset_andnot(&off, &core->cpus, &inv->online);
                cpuset_format(&iso, part, sizeof(part));
                sb_add(b, "its SMT siblings are split: of CPUs %s only %s isolated", cpus, *part ? part : "none");
                if (inv->have_online && !cpuset_empty(&off)) {
                        cpuset_format(&off, part, sizeof(part));
                        sb_add(b, ", %s offline", part);
                }
                sb_add(b, " (a stranger could run on a sibling)");
                return DEVICE_SPLIT;
        }
        sb_add(b, "CPUs %s are not isolated (isolcpus or the cpuset's isolated partition)", cpus);
        return DEVICE_NOT_ISOLATED;
}

/* ---- the map ---- */

static const device_entry *prev_listed(const device_map *prev, device_kind kind, const char *id)
{
        const device_entry *e = prev ? device_map_find(prev, kind, id) : NULL;
        return e && device_listed(e) ? e : NULL;
}

static void entry_detail(device_entry *e, const sbuf *b)
{
        size_t len = strnlen(sb_str(b), sizeof(e->detail));
        if (len >= sizeof(e->detail)) { /* cut, and say so */
                len = sizeof(e->detail) - 4;
                memcpy(e->detail + len, "...", 4);
        } else {
                e->detail[len] = '\0';
        }
        memcpy(e->detail, sb_str(b), len);
}

/* The state by the rule: selected and ready without an address: listed, Unhealthy (the
 * nic-address verdict says why); no longer takeable: listed while the kubelet knows it. */
static void entry_set(device_entry *e, device_kind kind, const char *id, long index, device_why why,
                      bool listed_before, const sbuf *b)
{
        memset(e, 0, sizeof(*e));
        e->kind = kind;
        snprintf(e->id, sizeof(e->id), "%s", id);
        e->index = index;
        e->why = why;
        e->numa_node = -1;
        e->mtu = -1;
        if (why == DEVICE_OK)
                e->state = DEVICE_HEALTHY;
        else if (why == DEVICE_NO_ADDRESS || listed_before)
                e->state = DEVICE_UNHEALTHY;
        else
                e->state = DEVICE_NOT_ADVERTISED;
        entry_detail(e, b);
}

/* The NIC's attributes and device nodes; a NIC listed before (prev) that has none now
 * (unbound) keeps the ones the pod was given. */
static void nic_attrs(device_entry *e, const inv_nic *n, const device_entry *prev)
{
        snprintf(e->pci, sizeof(e->pci), "%s", n->pci);
        snprintf(e->mac, sizeof(e->mac), "%s", n->mac);
        snprintf(e->nic_kind, sizeof(e->nic_kind), "%s", inv_nic_kind_name(n->kind));
        snprintf(e->driver, sizeof(e->driver), "%s", n->driver);
        snprintf(e->netdev, sizeof(e->netdev), "%s", n->netdev);
        _Static_assert(sizeof(n->pcie_root) <= sizeof(e->pcie_root), "the PCIe root fits");
        snprintf(e->pcie_root, sizeof(e->pcie_root), "%s", n->pcie_root);
        e->mtu = n->mtu;
        e->numa_node = n->numa_node;
        if (n->addr.state == INV_ADDR_KNOWN) {
                ipv4_cidr_format((ipv4_cidr){ n->addr.ipv4, n->addr.prefix_len }, e->ipv4);
                if (n->addr.gateway)
                        ipv4_format(n->addr.gateway, e->gateway);
        }
        for (size_t k = 0; k < n->n_devnodes && k < DEVICE_MAX_DEVNODES; k++) {
                snprintf(e->devnodes[k].host, DEVICE_DEVPATH_LEN, "%s", n->devnodes[k].host);
                snprintf(e->devnodes[k].container, DEVICE_DEVPATH_LEN, "%s", n->devnodes[k].container);
                e->n_devnodes++;
        }
        if (prev && e->n_devnodes == 0) {
                memcpy(e->devnodes, prev->devnodes, sizeof(e->devnodes));
                e->n_devnodes = prev->n_devnodes;
        }
}

int device_map_build(const selection *sel, const device_map *prev, device_map *ret)
{
        const inventory *inv = sel->inv;
        size_t cap = inv->n_nics + inv->n_cores + (prev ? prev->n : 0);
        _cleanup_free_ device_entry *items = calloc(cap ? cap : 1, sizeof(*items));
        size_t n = 0;

        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *nic = &inv->nics[i];
                const device_entry *before = prev_listed(prev, DEVICE_NIC, nic->pci);
                sbuf b = { 0 };
                device_why w = nic_why(sel, nic, &b);
                entry_set(&items[n], DEVICE_NIC, nic->pci, (long)i, w, before != NULL, &b);
                nic_attrs(&items[n++], nic, before);
        }
        for (size_t i = 0; i < inv->n_cores; i++) {
                const inv_core *core = &inv->cores[i];
                sbuf b = { 0 };
                device_why w = core_why(sel, inv, core, &b);
                entry_set(&items[n], DEVICE_CORE, core->id, (long)i, w, prev_listed(prev, DEVICE_CORE, core->id), &b);
                items[n].numa_node = core->numa_node;
                items[n++].cpus = core->cpus;
        }
        /* advertised before, gone now: its last value kept listed, Unhealthy */
        for (size_t i = 0; prev && i < prev->n; i++) {
                const device_entry *p = &prev->items[i];
                bool there = p->kind == DEVICE_NIC ? inventory_find_nic(inv, p->id) != NULL
                                                   : inventory_find_core(inv, p->id) != NULL;
                if (there || !device_listed(p))
                        continue;
                sbuf b = { 0 };
                sb_add(&b, "advertised before, gone from the node (no %s %s any more)",
                       p->kind == DEVICE_NIC ? "PCI device" : "core", p->id);
                device_entry *e = &items[n++];
                *e = *p;
                e->state = DEVICE_UNHEALTHY;
                e->why = DEVICE_VANISHED;
                e->index = -1;
                entry_detail(e, &b);
        }
        *ret = (device_map){ .items = TAKE_PTR(items), .n = n };
        return 0;
}

void device_map_free(device_map *m)
{
        if (!m)
                return;
        free(m->items);
        *m = (device_map){ 0 };
}

const device_entry *device_map_find(const device_map *m, device_kind kind, const char *id)
{
        for (size_t i = 0; m && i < m->n; i++)
                if (m->items[i].kind == kind && strcmp(m->items[i].id, id) == 0)
                        return &m->items[i];
        return NULL;
}

const device_entry *device_map_nic(const device_map *m, const inv_nic *nic)
{
        return device_map_find(m, DEVICE_NIC, nic->pci);
}

bool device_map_nic_selected(const device_map *m, const inv_nic *nic)
{
        const device_entry *e = device_map_nic(m, nic);
        return e && e->why != DEVICE_PRIMARY && e->why != DEVICE_NOT_SELECTED && e->why != DEVICE_OVER_MAX &&
               e->why != DEVICE_VANISHED;
}

bool device_map_changed(const device_map *prev, const device_entry *e)
{
        const device_entry *p = device_map_find(prev, e->kind, e->id);
        return !p || p->state != e->state || p->why != e->why;
}

int device_map_list(const device_map *m, device_kind kind, device_list *ret)
{
        device_list l = { 0 };
        for (size_t i = 0; i < m->n; i++) {
                if (m->items[i].kind != kind || !device_listed(&m->items[i]))
                        continue;
                int r = device_list_add(&l, &m->items[i]);
                if (r == -ENOMEM) {
                        device_list_free(&l);
                        return r;
                }
        }
        device_list_sort(&l, kind);
        *ret = l;
        return 0;
}

void device_map_line(const device_entry *e, const char *prefix, char *buf, size_t len)
{
        const char *p = prefix ? prefix : DEVICE_PREFIX_DEFAULT;
        if (!len)
                return;
        switch (e->state) {
        case DEVICE_HEALTHY:
                snprintf(buf, len, "%s/%s %s: advertised, Healthy: %s", p, device_kind_resource(e->kind), e->id, e->detail);
                break;
        case DEVICE_UNHEALTHY:
                snprintf(buf, len, "%s/%s %s: advertised, Unhealthy (%s): %s%s", p, device_kind_resource(e->kind), e->id,
                         device_why_name(e->why), e->detail,
                         e->why == DEVICE_NO_ADDRESS || e->why == DEVICE_VANISHED
                                 ? ""
                                 : "; kept listed: the kubelet was told of it before");
                break;
        case DEVICE_NOT_ADVERTISED:
        default:
                snprintf(buf, len, "%s/%s %s: not advertised (%s): %s", p, device_kind_resource(e->kind), e->id,
                         device_why_name(e->why), e->detail);
                break;
        }
}

json_t *device_map_json(const device_entry *e, const char *prefix)
{
        char res[256];
        device_kind_full(e->kind, prefix, res, sizeof(res));
        return json_pack("{s:s,s:s,s:s,s:s,s:s}", "resource", res, "id", e->id, "state", device_state_name(e->state),
                         "reason", device_why_name(e->why), "detail", e->detail);
}
