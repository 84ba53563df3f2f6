/* SPDX-License-Identifier: Apache-2.0 */
/* The PodResources List reply as a table of the agent's device assignments. Pure; never
 * logs. */
#include "podres-parse.h"

#include "array.h"
#include "podresources.pb-c.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printable ASCII, 1..max-1 bytes */
static bool name_ok(const char *s, size_t max)
{
        size_t n = s ? strnlen(s, max) : 0;
        if (n == 0 || n >= max)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] <= 0x20 || s[i] >= 0x7f)
                        return false;
        return true;
}

static int cmp_assign(const void *a, const void *b)
{
        const podres_assignment *x = a, *y = b;
        int c = strcmp(x->resource, y->resource);
        return c ? c : strcmp(x->device, y->device);
}

static int cmp_seq(const void *a, const void *b)
{
        const podres_assignment *x = a, *y = b;
        int c = cmp_assign(a, b);
        return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

int podres_parse_list(const uint8_t *buf, size_t len, const char *prefix, podres_table *ret, char *err,
                      size_t err_size)
{
        V1__ListPodResourcesResponse *m;
        podres_table t = {0};
        size_t plen = prefix ? strlen(prefix) : 0, cap = 0;

        if (err_size)
                err[0] = '\0';
        if (!ret || plen == 0 || plen >= PODRES_RESOURCE_LEN - 2)
                return -EINVAL;
        if (len > PODRES_MAX_REPLY) {
                snprintf(err, err_size, "reply of %zu bytes is beyond the limit of %u", len, PODRES_MAX_REPLY);
                return -E2BIG;
        }
        m = v1__list_pod_resources_response__unpack(NULL, len, buf);
        if (!m) {
                snprintf(err, err_size, "reply of %zu bytes is not a ListPodResourcesResponse", len);
                return -EBADMSG;
        }
        for (size_t p = 0; p < m->n_pod_resources; p++) {
                const V1__PodResources *pod = m->pod_resources[p];
                for (size_t c = 0; c < pod->n_containers; c++) {
                        const V1__ContainerResources *ctr = pod->containers[c];
                        for (size_t d = 0; d < ctr->n_devices; d++) {
                                const V1__ContainerDevices *dev = ctr->devices[d];
                                const char *rn = dev->resource_name;
                                if (!rn || strncmp(rn, prefix, plen) != 0 || rn[plen] != '/')
                                        continue;
                                for (size_t i = 0; i < dev->n_device_ids; i++) {
                                        const char *id = dev->device_ids[i];
                                        if (!name_ok(rn, PODRES_RESOURCE_LEN) || !name_ok(id, PODRES_DEVICE_LEN) ||
                                            !name_ok(pod->name, PODRES_POD_LEN) ||
                                            !name_ok(pod->namespace_, PODRES_NAME_LEN) ||
                                            !name_ok(ctr->name, PODRES_NAME_LEN) || t.n >= PODRES_MAX_ASSIGN) {
                                                t.skipped++;
                                                continue;
                                        }
                                        if (ARRAY_GROW(t.items, cap, t.n + 1, 16) < 0) {
                                                free(t.items);
                                                v1__list_pod_resources_response__free_unpacked(m, NULL);
                                                return -ENOMEM;
                                        }
                                        podres_assignment *a = &t.items[t.n++];
                                        memset(a, 0, sizeof(*a));
                                        snprintf(a->resource, sizeof(a->resource), "%s", rn);
                                        snprintf(a->device, sizeof(a->device), "%s", id);
                                        snprintf(a->pod, sizeof(a->pod), "%s", pod->name);
                                        snprintf(a->ns, sizeof(a->ns), "%s", pod->namespace_);
                                        snprintf(a->container, sizeof(a->container), "%s", ctr->name);
                                        a->seq = (unsigned)t.n;
                                }
                        }
                }
        }
        v1__list_pod_resources_response__free_unpacked(m, NULL);
        if (t.n > 1) {
                /* one holder per device: a device listed twice keeps its first holder in
                 * reply order (seq breaks the ties of the sort) */
                qsort(t.items, t.n, sizeof(*t.items), cmp_seq);
                size_t w = 1;
                for (size_t i = 1; i < t.n; i++) {
                        if (cmp_assign(&t.items[w - 1], &t.items[i]) == 0)
                                t.skipped++;
                        else
                                t.items[w++] = t.items[i];
                }
                t.n = w;
        }
        *ret = t;
        return 0;
}

void podres_table_free(podres_table *t)
{
        if (!t)
                return;
        free(t->items);
        *t = (podres_table){0};
}

const podres_assignment *podres_find(const podres_table *t, const char *resource, const char *device)
{
        if (!t || !t->n || !resource || !device)
                return NULL;
        podres_assignment key;
        snprintf(key.resource, sizeof(key.resource), "%s", resource);
        snprintf(key.device, sizeof(key.device), "%s", device);
        return bsearch(&key, t->items, t->n, sizeof(*t->items), cmp_assign);
}
