/* SPDX-License-Identifier: Apache-2.0 */
/* The one device map (device-map.h): what is advertised, its health, and why not. Pure:
 * no I/O, never logs. */
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

const char *devmap_why_name(devmap_why w)
{
        static const char *const names[] = {
                [DEVMAP_OK] = "ok",
                [DEVMAP_VANISHED] = "vanished",
                [DEVMAP_PRIMARY] = "primary",
                [DEVMAP_NOT_SELECTED] = "not-selected",
                [DEVMAP_OVER_MAX] = "over-max",
                [DEVMAP_IN_USE] = "in-use",
                [DEVMAP_USE_UNKNOWN] = "use-unknown",
                [DEVMAP_NOT_READY] = "not-ready",
                [DEVMAP_NO_ADDRESS] = "no-address",
                [DEVMAP_NOT_ISOLATED] = "not-isolated",
                [DEVMAP_SPLIT] = "split",
                [DEVMAP_OUTSIDE_CPUS] = "outside-cpus",
        };
        return (unsigned)w < sizeof(names) / sizeof(names[0]) && names[w] ? names[w] : "?";
}

const char *devmap_state_name(devmap_state s)
{
        switch (s) {
        case DEVMAP_HEALTHY:
                return "healthy";
        case DEVMAP_UNHEALTHY:
                return "unhealthy";
        case DEVMAP_NOT_ADVERTISED:
        default:
                return "not-advertised";
        }
}

bool devmap_listed(const devmap_entry *e)
{
        return e->state != DEVMAP_NOT_ADVERTISED;
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

/* The one reason a NIC of the node is not Healthy, and its line; DEVMAP_OK when it is. */
static devmap_why nic_why(const selection *sel, const inv_nic *n, sbuf *b)
{
        const config *c = sel->cfg;

        switch (selection_nic_why(sel, n)) {
        case SELECT_PRIMARY:
                sb_add(b, "%s carries the node's default route (metric %u): never taken",
                       *n->netdev ? n->netdev : n->pci, n->default_metric);
                return DEVMAP_PRIMARY;
        case SELECT_KIND:
                sb_add(b, "nics.kinds leaves out its kind (%s)", inv_nic_kind_name(n->kind));
                return DEVMAP_NOT_SELECTED;
        case SELECT_ID:
                sb_add(b, "nics.ids does not list its id %04x:%04x", n->vendor, n->device);
                return DEVMAP_NOT_SELECTED;
        case SELECT_PCI:
                sb_add(b, "nics.pci does not list %s", n->pci);
                return DEVMAP_NOT_SELECTED;
        case SELECT_INTERFACE:
                if (*n->netdev)
                        sb_add(b, "nics.interfaces does not name %s", n->netdev);
                else
                        sb_add(b, "nics.interfaces names interfaces, and it has no netdev (none recorded in "
                                  "the bind state either)");
                return DEVMAP_NOT_SELECTED;
        case SELECT_MAX:
                sb_add(b, "nics.max is %u and as many NICs before it (PCI order) were taken", c ? c->nics.max_count : 0);
                return DEVMAP_OVER_MAX;
        case SELECT_TAKEN:
        default:
                break;
        }
        if (!n->dpdk_ready) {
                /* A MANA VF stays on its kernel driver: its use by the node is no reason. */
                if (n->kind != INV_NIC_MANA && n->in_use == 1) {
                        sb_add(b, "the node uses it (%s): never taken", n->in_use_reason);
                        return DEVMAP_IN_USE;
                }
                if (n->kind != INV_NIC_MANA && n->in_use < 0) {
                        sb_add(b, "cannot tell whether the node uses it (%s): not taken", n->in_use_reason);
                        return DEVMAP_USE_UNKNOWN;
                }
                nic_what(b, n);
                sb_add(b, ": not DPDK-ready: %s", n->dpdk_reason);
                return DEVMAP_NOT_READY;
        }
        if (n->addr.state != INV_ADDR_KNOWN) {
                nic_what(b, n);
                sb_add(b, ", DPDK-ready, but no IPv4 address%s: %s",
                       n->addr.state == INV_ADDR_ELSEWHERE ? " here" : "",
                       *n->addr.why ? n->addr.why : inv_addr_state_name(n->addr.state));
                return DEVMAP_NO_ADDRESS;
        }
        nic_what(b, n);
        sb_add(b, ", NUMA node %d, ", n->numa_node);
        nic_address(b, &n->addr);
        return DEVMAP_OK;
}

/* ---- cores ---- */

static devmap_why core_why(const selection *sel, const inventory *inv, const inv_core *core, sbuf *b)
{
        char cpus[256], part[256];
        cpuset_format(&core->cpus, cpus, sizeof(cpus));
        if (selection_has_core(sel, core)) {
                sb_add(b, "CPUs %s, NUMA node %d", cpus, core->numa_node);
                return DEVMAP_OK;
        }
        if (core->isolated) {
                const config *c = sel->cfg;
                cpuset out;
                cpuset_andnot(&out, &core->cpus, c ? &c->cores.cpus : &core->cpus);
                cpuset_format(&out, part, sizeof(part));
                sb_add(b, "CPUs %s are isolated, but cores.cpus leaves out %s", cpus, part);
                return DEVMAP_OUTSIDE_CPUS;
        }
        if (!inv->have_isolated) {
                sb_add(b, "CPUs %s: the isolated set is unknown (see the isolated-cpus verdict)", cpus);
                return DEVMAP_NOT_ISOLATED;
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
                return DEVMAP_SPLIT;
        }
        sb_add(b, "CPUs %s are not isolated (isolcpus or the cpuset's isolated partition)", cpus);
        return DEVMAP_NOT_ISOLATED;
}

/* ---- the map ---- */

static bool prev_listed(const device_map *prev, devmap_resource res, const char *id)
{
        const devmap_entry *e = prev ? device_map_find(prev, res, id) : NULL;
        return e && devmap_listed(e);
}

static void entry_set(devmap_entry *e, devmap_resource res, const char *id, long index, devmap_why why, bool listed_before,
                      const sbuf *b)
{
        memset(e, 0, sizeof(*e));
        e->res = res;
        snprintf(e->id, sizeof(e->id), "%s", id);
        e->index = index;
        e->why = why;
        /* selected and ready without an address: listed, Unhealthy (the nic-address verdict
         * says why); no longer takeable: listed while the kubelet knows it */
        if (why == DEVMAP_OK)
                e->state = DEVMAP_HEALTHY;
        else if (why == DEVMAP_NO_ADDRESS || listed_before)
                e->state = DEVMAP_UNHEALTHY;
        else
                e->state = DEVMAP_NOT_ADVERTISED;
        size_t len = strnlen(sb_str(b), sizeof(e->detail));
        if (len >= sizeof(e->detail)) { /* cut, and say so */
                len = sizeof(e->detail) - 4;
                memcpy(e->detail + len, "...", 4);
        } else {
                e->detail[len] = '\0';
        }
        memcpy(e->detail, sb_str(b), len);
}

int device_map_build(const selection *sel, const device_map *prev, device_map *ret)
{
        const inventory *inv = sel->inv;
        size_t cap = inv->n_nics + inv->n_cores + (prev ? prev->n : 0);
        _cleanup_free_ devmap_entry *items = calloc(cap ? cap : 1, sizeof(*items));
        size_t n = 0;

        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *nic = &inv->nics[i];
                sbuf b = { 0 };
                devmap_why w = nic_why(sel, nic, &b);
                entry_set(&items[n++], DEVMAP_NIC, nic->pci, (long)i, w, prev_listed(prev, DEVMAP_NIC, nic->pci), &b);
        }
        for (size_t i = 0; i < inv->n_cores; i++) {
                const inv_core *core = &inv->cores[i];
                sbuf b = { 0 };
                devmap_why w = core_why(sel, inv, core, &b);
                entry_set(&items[n++], DEVMAP_CORE, core->id, (long)i, w, prev_listed(prev, DEVMAP_CORE, core->id), &b);
        }
        /* advertised before, gone now: kept listed, Unhealthy */
        for (size_t i = 0; prev && i < prev->n; i++) {
                const devmap_entry *p = &prev->items[i];
                bool there = p->res == DEVMAP_NIC ? inventory_find_nic(inv, p->id) != NULL
                                                  : inventory_find_core(inv, p->id) != NULL;
                if (there || !devmap_listed(p))
                        continue;
                sbuf b = { 0 };
                sb_add(&b, "advertised before, gone from the node (no %s %s any more)",
                       p->res == DEVMAP_NIC ? "PCI device" : "core", p->id);
                entry_set(&items[n++], p->res, p->id, -1, DEVMAP_VANISHED, true, &b);
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

const devmap_entry *device_map_find(const device_map *m, devmap_resource res, const char *id)
{
        for (size_t i = 0; m && i < m->n; i++)
                if (m->items[i].res == res && strcmp(m->items[i].id, id) == 0)
                        return &m->items[i];
        return NULL;
}

bool devmap_entry_changed(const device_map *prev, const devmap_entry *e)
{
        const devmap_entry *p = device_map_find(prev, e->res, e->id);
        return !p || p->state != e->state || p->why != e->why;
}

static const char *resource_name(devmap_resource res)
{
        return res == DEVMAP_NIC ? INV_RESOURCE_NIC : INV_RESOURCE_CORE;
}

void devmap_entry_line(const devmap_entry *e, const char *prefix, char *buf, size_t len)
{
        const char *p = prefix ? prefix : INV_RESOURCE_PREFIX_DEFAULT;
        if (!len)
                return;
        switch (e->state) {
        case DEVMAP_HEALTHY:
                snprintf(buf, len, "%s/%s %s: advertised, Healthy: %s", p, resource_name(e->res), e->id, e->detail);
                break;
        case DEVMAP_UNHEALTHY:
                snprintf(buf, len, "%s/%s %s: advertised, Unhealthy (%s): %s%s", p, resource_name(e->res), e->id,
                         devmap_why_name(e->why), e->detail,
                         e->why == DEVMAP_NO_ADDRESS || e->why == DEVMAP_VANISHED
                                 ? ""
                                 : "; kept listed: the kubelet was told of it before");
                break;
        case DEVMAP_NOT_ADVERTISED:
        default:
                snprintf(buf, len, "%s/%s %s: not advertised (%s): %s", p, resource_name(e->res), e->id,
                         devmap_why_name(e->why), e->detail);
                break;
        }
}

json_t *devmap_entry_json(const devmap_entry *e, const char *prefix)
{
        char res[256];
        snprintf(res, sizeof(res), "%s/%s", prefix ? prefix : INV_RESOURCE_PREFIX_DEFAULT, resource_name(e->res));
        return json_pack("{s:s,s:s,s:s,s:s,s:s}", "resource", res, "id", e->id, "state", devmap_state_name(e->state),
                         "reason", devmap_why_name(e->why), "detail", e->detail);
}
