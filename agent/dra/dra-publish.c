/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's DRA slice service: the daemon's device map (its values as they are) ->
 * dra_slice_build -> the reconciler. Owns the count of devices left out (logged when it
 * changes). */
#include "dra-publish.h"

#include "cleanup.h"
#include "dra-slices.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dra_publish {
        dra_resources res;
        dra_slices *slices;
        size_t left_out;        /* devices the last build left out */
};

int dra_slice_devices(const device_map *map, dra_resources res, json_t **ret, size_t *ret_left_out, char *why,
                      size_t why_len)
{
        _cleanup_free_ const device_entry **devs = calloc(map->n ? map->n : 1, sizeof(*devs));
        bool served[DEVICE_KINDS] = { [DEVICE_NIC] = res.nic, [DEVICE_CORE] = res.core };
        size_t n = 0;

        if (!devs)
                return -ENOMEM;
        for (int k = 0; k < DEVICE_KINDS; k++) /* NICs, then cores (the map's own order in each) */
                for (size_t i = 0; served[k] && i < map->n; i++)
                        if (map->items[i].kind == (device_kind)k && device_healthy(&map->items[i]))
                                devs[n++] = &map->items[i];
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
        log_info("ResourceSlice on: driver %s, pool %s, resources %s%s%s", DRA_DRIVER, node,
                 res.nic ? device_kind_short(DEVICE_NIC) : "", res.nic && res.core ? "," : "",
                 res.core ? device_kind_short(DEVICE_CORE) : "");
        *ret = p;
        return 0;
}

void dra_publish_rescan(dra_publish *p, const device_map *map)
{
        _cleanup_(json_decrefp) json_t *devs = NULL;
        char why[DRA_WHY_LEN];
        size_t left = 0;

        if (!p)
                return;
        if (dra_slice_devices(map, p->res, &devs, &left, why, sizeof(why)) < 0) {
                log_error("ResourceSlice: out of memory; the slices stay as they were");
                return;
        }
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
        free(p);
}
