/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's DRA slice service: device map -> dra_device list -> dra_slice_build ->
 * the reconciler. Owns the map's history of the slices and the count of devices left
 * out (logged when it changes). */
#include "dra-publish.h"

#include "cleanup.h"
#include "dra-slices.h"
#include "ipv4.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dra_publish {
        dra_resources res;
        dra_slices *slices;
        device_map map;         /* the last map: the history of the next */
        size_t left_out;        /* devices the last build left out */
};

static void nic_device(const inv_nic *n, dra_device *d)
{
        d->core = false;
        d->type = INV_RESOURCE_NIC;
        snprintf(d->id, sizeof(d->id), "%s", n->pci);
        d->numa_node = n->numa_node;
        snprintf(d->kind, sizeof(d->kind), "%s", inv_nic_kind_name(n->kind));
        if (n->addr.state == INV_ADDR_KNOWN) {
                char ip[IPV4_STR_MAX];
                snprintf(d->ipv4, sizeof(d->ipv4), "%s", ipv4_format(n->addr.ipv4, ip));
        }
        d->mtu = n->mtu;
        _Static_assert(sizeof(n->pcie_root) <= sizeof(d->pcie_root), "the PCIe root fits");
        snprintf(d->pcie_root, sizeof(d->pcie_root), "%s", n->pcie_root);
}

static void core_device(const inv_core *c, dra_device *d)
{
        d->core = true;
        d->type = INV_RESOURCE_CORE;
        snprintf(d->id, sizeof(d->id), "%s", c->id);
        d->numa_node = c->numa_node;
        d->cpus = c->cpus;
}

int dra_slice_devices(const inventory *inv, const device_map *map, dra_resources res, json_t **ret,
                      size_t *ret_left_out, char *why, size_t why_len)
{
        _cleanup_free_ dra_device *devs = calloc(map->n ? map->n : 1, sizeof(*devs));
        size_t n = 0;

        if (!devs)
                return -ENOMEM;
        for (int pass = 0; pass < 2; pass++) { /* NICs, then cores (the map's own order in each) */
                devmap_resource want = pass == 0 ? DEVMAP_NIC : DEVMAP_CORE;
                if ((want == DEVMAP_NIC && !res.nic) || (want == DEVMAP_CORE && !res.core))
                        continue;
                for (size_t i = 0; i < map->n; i++) {
                        const devmap_entry *e = &map->items[i];
                        if (e->res != want || e->state != DEVMAP_HEALTHY || e->index < 0)
                                continue;
                        if (want == DEVMAP_NIC ? (size_t)e->index >= inv->n_nics : (size_t)e->index >= inv->n_cores)
                                continue;
                        if (want == DEVMAP_NIC)
                                nic_device(&inv->nics[e->index], &devs[n]);
                        else
                                core_device(&inv->cores[e->index], &devs[n]);
                        /* the map's id names the device, as before (the inventory's is the same) */
                        snprintf(devs[n].id, sizeof(devs[n].id), "%s", e->id);
                        n++;
                }
        }
        return dra_slice_build(devs, n, ret, ret_left_out, why, why_len);
}

int dra_publish_new(loop *l, kube_client *kube, const char *node, dra_resources res, dra_publish **ret)
{
        dra_publish *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        p->res = res;
        if ((r = dra_slices_new(l, kube, node, &p->slices)) < 0) {
                free(p);
                return r;
        }
        log_info("ResourceSlice on: driver %s, pool %s, resources %s%s%s", DRA_DRIVER, node, res.nic ? "nic" : "",
                 res.nic && res.core ? "," : "", res.core ? "core" : "");
        *ret = p;
        return 0;
}

void dra_publish_rescan(dra_publish *p, const selection *sel)
{
        _cleanup_(json_decrefp) json_t *devs = NULL;
        char why[DRA_WHY_LEN];
        device_map map = { 0 };
        size_t left = 0;

        if (!p)
                return;
        if (device_map_build(sel, &p->map, &map) < 0 ||
            dra_slice_devices(sel->inv, &map, p->res, &devs, &left, why, sizeof(why)) < 0) {
                device_map_free(&map);
                log_error("ResourceSlice: out of memory; the slices stay as they were");
                return;
        }
        device_map_free(&p->map);
        p->map = map;
        if (left && left != p->left_out)
                log_warn("ResourceSlice: %zu device%s not published: %s", left, left == 1 ? "" : "s", why);
        p->left_out = left;
        dra_slices_set(p->slices, devs);
        dra_slices_resync(p->slices); /* someone may have deleted or edited one */
}

int dra_publish_stop(dra_publish *p, void (*done)(void *ud), void *ud)
{
        return p ? dra_slices_stop(p->slices, done, ud) : 0;
}

void dra_publish_free(dra_publish *p)
{
        if (!p)
                return;
        dra_slices_free(p->slices);
        device_map_free(&p->map);
        free(p);
}
