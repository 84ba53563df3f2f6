/* SPDX-License-Identifier: Apache-2.0 */
/* The device value (device.h): the resource kinds' names, state and reason names, the
 * list operations. No I/O, never logs. */
#include "device.h"

#include "array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *device_kind_resource(device_kind k)
{
        return k == DEVICE_CORE ? "isolated-core" : "dpdk-nic";
}

const char *device_kind_short(device_kind k)
{
        return k == DEVICE_CORE ? "core" : "nic";
}

char *device_kind_full(device_kind k, const char *prefix, char *buf, size_t len)
{
        if (len)
                snprintf(buf, len, "%s/%s", prefix ? prefix : DEVICE_PREFIX_DEFAULT, device_kind_resource(k));
        return buf;
}

const char *device_state_name(device_state s)
{
        switch (s) {
        case DEVICE_HEALTHY:
                return "healthy";
        case DEVICE_UNHEALTHY:
                return "unhealthy";
        case DEVICE_NOT_ADVERTISED:
        default:
                return "not-advertised";
        }
}

const char *device_why_name(device_why w)
{
        static const char *const names[] = {
                [DEVICE_OK] = "ok",
                [DEVICE_VANISHED] = "vanished",
                [DEVICE_PRIMARY] = "primary",
                [DEVICE_NOT_SELECTED] = "not-selected",
                [DEVICE_OVER_MAX] = "over-max",
                [DEVICE_IN_USE] = "in-use",
                [DEVICE_USE_UNKNOWN] = "use-unknown",
                [DEVICE_NOT_READY] = "not-ready",
                [DEVICE_NO_ADDRESS] = "no-address",
                [DEVICE_NOT_ISOLATED] = "not-isolated",
                [DEVICE_SPLIT] = "split",
                [DEVICE_OUTSIDE_CPUS] = "outside-cpus",
        };
        return (unsigned)w < sizeof(names) / sizeof(names[0]) && names[w] ? names[w] : "?";
}

bool device_listed(const device_entry *e)
{
        return e->state != DEVICE_NOT_ADVERTISED;
}

bool device_healthy(const device_entry *e)
{
        return e->state == DEVICE_HEALTHY;
}

bool device_same(const device_entry *a, const device_entry *b)
{
        if (a->kind != b->kind || strcmp(a->id, b->id) != 0 || device_healthy(a) != device_healthy(b) ||
            a->numa_node != b->numa_node || strcmp(a->pci, b->pci) != 0 || strcmp(a->mac, b->mac) != 0 ||
            strcmp(a->nic_kind, b->nic_kind) != 0 || strcmp(a->driver, b->driver) != 0 ||
            strcmp(a->ipv4, b->ipv4) != 0 || strcmp(a->gateway, b->gateway) != 0 ||
            a->n_devnodes != b->n_devnodes || !cpuset_equal(&a->cpus, &b->cpus))
                return false;
        for (size_t i = 0; i < a->n_devnodes && i < DEVICE_MAX_DEVNODES; i++)
                if (strcmp(a->devnodes[i].host, b->devnodes[i].host) != 0 ||
                    strcmp(a->devnodes[i].container, b->devnodes[i].container) != 0)
                        return false;
        return true;
}

int device_list_add(device_list *l, const device_entry *d)
{
        size_t idlen = strnlen(d->id, DEVICE_ID_LEN);

        if (idlen == 0 || idlen >= DEVICE_ID_LEN)
                return -EINVAL;
        if (l->n >= DEVICE_MAX)
                return -E2BIG;
        if (device_list_find(l, d->id, idlen))
                return -EEXIST;
        if (ARRAY_GROW(l->items, l->cap, l->n + 1, 16) < 0)
                return -ENOMEM;
        l->items[l->n++] = *d;
        return 0;
}

int device_list_copy(const device_list *src, device_list *ret)
{
        device_entry *items = NULL;

        if (src->n) {
                items = malloc(src->n * sizeof(*items));
                if (!items)
                        return -ENOMEM;
                memcpy(items, src->items, src->n * sizeof(*items));
        }
        *ret = (device_list){ .items = items, .n = src->n, .cap = src->n };
        return 0;
}

void device_list_free(device_list *l)
{
        if (!l)
                return;
        free(l->items);
        *l = (device_list){ 0 };
}

bool device_list_equal(const device_list *a, const device_list *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!device_same(&a->items[i], &b->items[i]))
                        return false;
        return true;
}

const device_entry *device_list_find(const device_list *l, const char *id, size_t len)
{
        if (len == 0 || len >= DEVICE_ID_LEN)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (strnlen(l->items[i].id, DEVICE_ID_LEN) == len && memcmp(l->items[i].id, id, len) == 0)
                        return &l->items[i];
        return NULL;
}

static int cmp_id(const void *a, const void *b)
{
        return strcmp(((const device_entry *)a)->id, ((const device_entry *)b)->id);
}

static int cmp_first_cpu(const void *a, const void *b)
{
        int x = cpuset_next(&((const device_entry *)a)->cpus, 0), y = cpuset_next(&((const device_entry *)b)->cpus, 0);
        return x != y ? (x < y ? -1 : 1) : cmp_id(a, b);
}

void device_list_sort(device_list *l, device_kind k)
{
        if (l->n) /* items is NULL for an empty list */
                qsort(l->items, l->n, sizeof(*l->items), k == DEVICE_NIC ? cmp_id : cmp_first_cpu);
}
