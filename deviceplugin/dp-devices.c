/* SPDX-License-Identifier: Apache-2.0 */
/* The device list value type: append, copy, compare, find. No I/O, never logs. */
#include "dp-devices.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dp_device_list_add(dp_device_list *l, const dp_device *d)
{
        size_t idlen = strnlen(d->id, DP_ID_LEN);

        if (idlen == 0 || idlen >= DP_ID_LEN)
                return -EINVAL;
        if (l->n >= DP_MAX_DEVICES)
                return -E2BIG;
        if (dp_device_list_find(l, d->id, idlen))
                return -EEXIST;
        if (ARRAY_GROW(l->items, l->cap, l->n + 1, 16) < 0)
                return -ENOMEM;
        l->items[l->n++] = *d;
        return 0;
}

int dp_device_list_copy(const dp_device_list *src, dp_device_list *ret)
{
        dp_device *items = NULL;

        if (src->n) {
                items = malloc(src->n * sizeof(*items));
                if (!items)
                        return -ENOMEM;
                memcpy(items, src->items, src->n * sizeof(*items));
        }
        *ret = (dp_device_list){ .items = items, .n = src->n, .cap = src->n };
        return 0;
}

void dp_device_list_free(dp_device_list *l)
{
        if (!l)
                return;
        free(l->items);
        *l = (dp_device_list){ 0 };
}

static bool device_equal(const dp_device *a, const dp_device *b)
{
        if (strcmp(a->id, b->id) != 0 || a->healthy != b->healthy || a->numa_node != b->numa_node ||
            strcmp(a->pci, b->pci) != 0 || strcmp(a->mac, b->mac) != 0 ||
            strcmp(a->nic_kind, b->nic_kind) != 0 || strcmp(a->driver, b->driver) != 0 ||
            strcmp(a->ipv4, b->ipv4) != 0 || strcmp(a->gateway, b->gateway) != 0 ||
            a->n_devnodes != b->n_devnodes || !cpuset_equal(&a->cpus, &b->cpus))
                return false;
        for (size_t i = 0; i < a->n_devnodes; i++)
                if (strcmp(a->devnodes[i].host, b->devnodes[i].host) != 0 ||
                    strcmp(a->devnodes[i].container, b->devnodes[i].container) != 0)
                        return false;
        return true;
}

bool dp_device_list_equal(const dp_device_list *a, const dp_device_list *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!device_equal(&a->items[i], &b->items[i]))
                        return false;
        return true;
}

const dp_device *dp_device_list_find(const dp_device_list *l, const char *id, size_t len)
{
        if (len == 0 || len >= DP_ID_LEN)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (strnlen(l->items[i].id, DP_ID_LEN) == len && memcmp(l->items[i].id, id, len) == 0)
                        return &l->items[i];
        return NULL;
}
