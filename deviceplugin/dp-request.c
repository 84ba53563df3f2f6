/* SPDX-License-Identifier: Apache-2.0 */
/* Device plugin request handling: protobuf decode (bounded), validation against the
 * device list, response building. Every refusal names the offending ID. Everything a
 * response holds is allocated from one arena freed after packing. No I/O, never logs. */
#include "dp-request.h"

#include "alloc-env.h"
#include "api.pb-c.h"
#include "cleanup.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: every piece of a response message, freed at once ---- */

typedef struct arena_block {
        struct arena_block *next;
        max_align_t data[];
} arena_block;

typedef struct arena {
        arena_block *head;
        bool failed;
} arena;

static void *arena_alloc(arena *a, size_t n)
{
        arena_block *b = calloc(1, sizeof(*b) + n);
        if (!b) {
                a->failed = true;
                return NULL;
        }
        b->next = a->head;
        a->head = b;
        return b->data;
}

static void arena_free(arena *a)
{
        while (a->head) {
                arena_block *b = a->head;
                a->head = b->next;
                free(b);
        }
}

/* n messages of type d, each allocated in the arena and initialized (the per-container
 * answers of Allocate and GetPreferredAllocation); NULL when out of memory. */
static void **arena_messages(arena *a, const ProtobufCMessageDescriptor *d, size_t n)
{
        void **v = arena_alloc(a, (n ? n : 1) * sizeof(*v));
        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                v[i] = arena_alloc(a, d->sizeof_message);
                if (!v[i])
                        return NULL;
                protobuf_c_message_init(d, v[i]);
        }
        return v;
}

static char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *arena_printf(arena *a, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
                a->failed = true;
                return NULL;
        }
        char *s = arena_alloc(a, (size_t)n + 1);
        if (!s)
                return NULL;
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
        return s;
}

/* ---- status helpers ---- */

void dp_format_id(const char *id, size_t len, char *buf, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0, i;

        if (size < 8) {
                if (size)
                        buf[0] = '\0';
                return;
        }
        for (i = 0; i < len && i < DEVICE_ID_LEN - 1; i++) {
                unsigned char c = (unsigned char)id[i];
                if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
                        if (o + 1 >= size - 4)
                                break;
                        buf[o++] = (char)c;
                } else {
                        if (o + 4 >= size - 4)
                                break;
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                }
        }
        if (i < len) {
                buf[o++] = '.';
                buf[o++] = '.';
                buf[o++] = '.';
        }
        buf[o] = '\0';
}

static int refuse(dp_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(dp_status *st, int code, const char *fmt, ...)
{
        va_list ap;
        st->code = code;
        va_start(ap, fmt);
        vsnprintf(st->message, sizeof(st->message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static int refuse_id(dp_status *st, const char *what, const char *id, const char *why)
{
        char shown[DEVICE_ID_LEN * 4 + 8];
        dp_format_id(id, strlen(id), shown, sizeof(shown));
        return refuse(st, DP_STATUS_INVALID_ARGUMENT, "%s: device ID \"%s\" %s", what, shown, why);
}

static void status_ok(dp_status *st)
{
        st->code = DP_STATUS_OK;
        st->message[0] = '\0';
}

/* ---- strings with a NUL inside ----
 * protobuf-c copies a string field and ends it with a NUL, but keeps no length: a field
 * "0000:00:06.0\0junk" decodes as "0000:00:06.0". So before decoding, the wire bytes are
 * walked along the message's descriptor and every string field (at any depth of the
 * messages it knows) is checked for a NUL. Malformed input is left to protobuf-c's
 * decoder to refuse. Bounded by the input's length and DP_WIRE_DEPTH. */
#define DP_WIRE_DEPTH 8

static bool wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
        uint64_t v = 0;
        for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
                uint8_t b = *(*p)++;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        return false;
}

/* 0: no string field of d (or of its sub-messages) holds a NUL, or buf is malformed
 * (the decoder says so); -EILSEQ: one does, the outputs name the field and the string. */
static int wire_find_nul(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len, unsigned depth,
                         const char **ret_field, const char **ret_str, size_t *ret_len)
{
        const uint8_t *p = buf, *end = buf + len;

        while (p < end) {
                uint64_t key, n;
                if (!wire_varint(&p, end, &key))
                        return 0;
                switch (key & 7) {
                case 0:
                        if (!wire_varint(&p, end, &n))
                                return 0;
                        continue;
                case 1:
                        if ((size_t)(end - p) < 8)
                                return 0;
                        p += 8;
                        continue;
                case 5:
                        if ((size_t)(end - p) < 4)
                                return 0;
                        p += 4;
                        continue;
                case 2:
                        break;
                default:
                        return 0;
                }
                if (!wire_varint(&p, end, &n) || n > (uint64_t)(end - p))
                        return 0;
                const uint8_t *v = p;
                p += n;
                if (key >> 3 > UINT32_MAX)
                        continue;
                const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
                if (!f)
                        continue;
                if (f->type == PROTOBUF_C_TYPE_STRING && memchr(v, '\0', (size_t)n)) {
                        *ret_field = f->name;
                        *ret_str = (const char *)v;
                        *ret_len = (size_t)n;
                        return -EILSEQ;
                }
                if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < DP_WIRE_DEPTH) {
                        int r = wire_find_nul(f->descriptor, v, (size_t)n, depth + 1, ret_field, ret_str, ret_len);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Refuse a request whose strings would not decode to their wire length. */
static int check_strings(const char *what, const ProtobufCMessageDescriptor *d, const uint8_t *req, size_t len,
                         dp_status *st)
{
        const char *field = NULL, *str = NULL;
        size_t n = 0;
        char shown[DEVICE_ID_LEN * 4 + 8];

        if (wire_find_nul(d, req, len, 0, &field, &str, &n) == 0)
                return 0;
        dp_format_id(str, n, shown, sizeof(shown));
        return refuse(st, DP_STATUS_INVALID_ARGUMENT, "%s: device ID \"%s\" (%s) holds a NUL byte", what, shown, field);
}

/* Pack msg into a malloc'ed buffer. */
static int pack(const ProtobufCMessage *msg, uint8_t **ret_buf, size_t *ret_len)
{
        size_t n = protobuf_c_message_get_packed_size(msg);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
                return -ENOMEM;
        size_t w = protobuf_c_message_pack(msg, buf);
        if (w != n) {
                free(buf);
                return -EIO;
        }
        *ret_buf = buf;
        *ret_len = n;
        return 0;
}

/* A reply packed, and st OK when it was: the end of every call that answers. */
static int pack_reply(const ProtobufCMessage *msg, uint8_t **ret_buf, size_t *ret_len, dp_status *st)
{
        int r = pack(msg, ret_buf, ret_len);
        if (r >= 0)
                status_ok(st);
        return r;
}

void dp_alloc_config_default(dp_alloc_config *cfg)
{
        *cfg = (dp_alloc_config){ 0 };
        snprintf(cfg->prefix, sizeof(cfg->prefix), "spinlane.io");
        snprintf(cfg->hugepage_host_dir, sizeof(cfg->hugepage_host_dir), "/dev/hugepages");
        snprintf(cfg->hugepage_container_dir, sizeof(cfg->hugepage_container_dir), "/dev/hugepages");
}

/* Common checks on one list of IDs: count, length, known; seen[] marks device indexes
 * across the whole request so a duplicate anywhere is found. ret_idx gets the indexes. */
static int check_ids(const char *what, char **ids, size_t n, const device_list *devices,
                     bool need_healthy, uint8_t *seen, size_t *total, dp_status *st, size_t *ret_idx)
{
        for (size_t i = 0; i < n; i++) {
                const char *id = ids[i];
                size_t len = id ? strnlen(id, DEVICE_ID_LEN) : 0;
                if (++*total > DP_MAX_IDS_PER_REQUEST)
                        return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                                      "%s: more than %d device IDs in one request", what,
                                      DP_MAX_IDS_PER_REQUEST);
                if (len == 0)
                        return refuse(st, DP_STATUS_INVALID_ARGUMENT, "%s: empty device ID", what);
                if (len >= DEVICE_ID_LEN)
                        return refuse_id(st, what, id, "is longer than 63 characters");
                const device_entry *d = device_list_find(devices, id, len);
                if (!d)
                        return refuse_id(st, what, id, "is not a device of this resource");
                size_t idx = (size_t)(d - devices->items);
                if (need_healthy && !device_healthy(d))
                        return refuse_id(st, what, id, "is unhealthy");
                if (seen[idx])
                        return refuse_id(st, what, id, "is listed more than once");
                seen[idx] = 1;
                ret_idx[i] = idx;
        }
        return 0;
}

static int cmp_size(const void *a, const void *b)
{
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        return x < y ? -1 : x > y;
}

/* ---- Allocate ---- */

typedef struct kv_list {
        void **items;
        size_t n, cap;
} kv_list;

static void kv_push(arena *a, kv_list *l, void *item)
{
        if (!item)
                return;
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 16;
                void **items = arena_alloc(a, cap * sizeof(void *));
                if (!items)
                        return;
                if (l->n)
                        memcpy(items, l->items, l->n * sizeof(void *));
                l->items = items;
                l->cap = cap;
        }
        l->items[l->n++] = item;
}

/* A map<string, string> entry (envs, annotations): protobuf-c gives each the same
 * layout, base then key then value (checked below), so one function fills both. */
typedef struct kv_entry {
        ProtobufCMessage base;
        char *key;
        char *value;
} kv_entry;
#define KV_SAME_LAYOUT(T)                                                                          \
        _Static_assert(sizeof(T) == sizeof(kv_entry) && offsetof(T, key) == offsetof(kv_entry, key) && \
                               offsetof(T, value) == offsetof(kv_entry, value),                   \
                       #T " is laid out as kv_entry")
KV_SAME_LAYOUT(V1beta1__ContainerAllocateResponse__EnvsEntry);
KV_SAME_LAYOUT(V1beta1__ContainerAllocateResponse__AnnotationsEntry);

static void entry_add(arena *a, kv_list *l, const ProtobufCMessageDescriptor *d, const char *key, const char *value)
{
        kv_entry *e = arena_alloc(a, d->sizeof_message);
        if (!e)
                return;
        protobuf_c_message_init(d, e);
        e->key = arena_printf(a, "%s", key);
        e->value = arena_printf(a, "%s", value);
        kv_push(a, l, e);
}

static void env_add(arena *a, kv_list *envs, const char *key, const char *value)
{
        entry_add(a, envs, &v1beta1__container_allocate_response__envs_entry__descriptor, key, value);
}

static void annotation_add(arena *a, kv_list *anns, const char *key, const char *value)
{
        entry_add(a, anns, &v1beta1__container_allocate_response__annotations_entry__descriptor, key, value);
}

/* A growing string in the arena, for comma-separated lists. */
static char *list_append(arena *a, char *list, const char *item)
{
        if (!list)
                return arena_printf(a, "%s", item);
        return arena_printf(a, "%s,%s", list, item);
}

static int cmp_pci(const void *a, const void *b, void *devs)
{
        const device_entry *d = devs;
        return strcmp(d[*(const size_t *)a].pci, d[*(const size_t *)b].pci);
}

static void build_nic_container(arena *a, const dp_alloc_config *cfg, const device_list *devices,
                                size_t *idx, size_t n, V1beta1__ContainerAllocateResponse *r)
{
        kv_list envs = { 0 }, anns = { 0 }, specs = { 0 }, mounts = { 0 }, cdis = { 0 };
        char *nics = NULL;
        char key[96];

        qsort_r(idx, n, sizeof(size_t), cmp_pci, devices->items);
        for (size_t i = 0; i < n; i++) {
                const device_entry *d = &devices->items[idx[i]];
                char *paths = NULL;

                nics = list_append(a, nics, d->pci);
                for (size_t k = 0; k < d->n_devnodes; k++) {
                        const device_devnode *dn = &d->devnodes[k];
                        bool dup = false;
                        paths = list_append(a, paths, dn->container);
                        for (size_t s = 0; s < specs.n; s++)
                                if (strcmp(((V1beta1__DeviceSpec *)specs.items[s])->container_path,
                                           dn->container) == 0)
                                        dup = true;
                        if (dup || cfg->cdi)
                                continue;
                        V1beta1__DeviceSpec *ds = arena_alloc(a, sizeof(*ds));
                        if (!ds)
                                continue;
                        v1beta1__device_spec__init(ds);
                        ds->container_path = arena_printf(a, "%s", dn->container);
                        ds->host_path = arena_printf(a, "%s", dn->host);
                        ds->permissions = arena_printf(a, "rw");
                        kv_push(a, &specs, ds);
                }
                if (cfg->cdi) {
                        V1beta1__CDIDevice *c = arena_alloc(a, sizeof(*c));
                        if (c) {
                                v1beta1__cdidevice__init(c);
                                c->name = arena_printf(a, "%s/dpdk-nic=%s", cfg->prefix, d->id);
                                kv_push(a, &cdis, c);
                        }
                }
                unsigned u = (unsigned)i;
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_PCI), d->pci);
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_MAC), d->mac);
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_NUMA), arena_printf(a, "%d", d->numa_node));
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_KIND), d->nic_kind);
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_DRIVER), d->driver);
                alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_DEVARGS);
                if (strcmp(d->nic_kind, "mana") == 0 && d->mac[0])
                        env_add(a, &envs, key, arena_printf(a, "%s,mac=%s", d->pci, d->mac));
                else
                        env_add(a, &envs, key, d->pci);
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_DEVICES), paths ? paths : "");
                /* where the NIC's address came from is the agent's business: the pod gets the address */
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_IPV4), d->ipv4);
                env_add(a, &envs, alloc_env_nic(key, sizeof(key), u, ALLOC_NIC_GATEWAY), d->gateway);
        }
        env_add(a, &envs, ALLOC_ENV_DPDK_NICS, nics ? nics : "");
        if (cfg->hugepage_host_dir[0]) {
                const char *cdir = cfg->hugepage_container_dir[0] ? cfg->hugepage_container_dir
                                                                  : cfg->hugepage_host_dir;
                env_add(a, &envs, ALLOC_ENV_HUGEPAGE_DIR, cdir);
                if (!cfg->cdi) {
                        V1beta1__Mount *m = arena_alloc(a, sizeof(*m));
                        if (m) {
                                v1beta1__mount__init(m);
                                m->container_path = arena_printf(a, "%s", cdir);
                                m->host_path = arena_printf(a, "%s", cfg->hugepage_host_dir);
                                m->read_only = 0;
                                kv_push(a, &mounts, m);
                        }
                }
        }
        snprintf(key, sizeof(key), "%s/%s", cfg->prefix, ALLOC_ANNOTATION_NICS);
        annotation_add(a, &anns, key, nics ? nics : "");

        r->n_envs = envs.n;
        r->envs = (V1beta1__ContainerAllocateResponse__EnvsEntry **)envs.items;
        r->n_annotations = anns.n;
        r->annotations = (V1beta1__ContainerAllocateResponse__AnnotationsEntry **)anns.items;
        r->n_devices = specs.n;
        r->devices = (V1beta1__DeviceSpec **)specs.items;
        r->n_mounts = mounts.n;
        r->mounts = (V1beta1__Mount **)mounts.items;
        r->n_cdi_devices = cdis.n;
        r->cdi_devices = (V1beta1__CDIDevice **)cdis.items;
}

static void build_core_container(arena *a, const dp_alloc_config *cfg, const device_list *devices,
                                 size_t *idx, size_t n, V1beta1__ContainerAllocateResponse *r)
{
        kv_list envs = { 0 }, anns = { 0 };
        cpuset all;
        char *ids = NULL;
        char key[96];

        cpuset_zero(&all);
        qsort(idx, n, sizeof(size_t), cmp_size); /* device list order: by first CPU */
        for (size_t i = 0; i < n; i++) {
                const device_entry *d = &devices->items[idx[i]];
                cpuset_or(&all, &all, &d->cpus);
                ids = list_append(a, ids, d->id);
        }
        size_t need = cpuset_format(&all, NULL, 0) + 1;
        char *cpus = arena_alloc(a, need);
        if (cpus)
                cpuset_format(&all, cpus, need);
        env_add(a, &envs, ALLOC_ENV_ISOLATED_CPUS, cpus ? cpus : "");
        env_add(a, &envs, ALLOC_ENV_ISOLATED_CORES, ids ? ids : "");
        snprintf(key, sizeof(key), "%s/%s", cfg->prefix, ALLOC_ANNOTATION_CORES);
        annotation_add(a, &anns, key, ids ? ids : "");
        snprintf(key, sizeof(key), "%s/isolated-cpus", cfg->prefix);
        annotation_add(a, &anns, key, cpus ? cpus : "");
        r->n_envs = envs.n;
        r->envs = (V1beta1__ContainerAllocateResponse__EnvsEntry **)envs.items;
        r->n_annotations = anns.n;
        r->annotations = (V1beta1__ContainerAllocateResponse__AnnotationsEntry **)anns.items;
}

int dp_handle_allocate(device_kind kind, const dp_alloc_config *cfg, const device_list *devices,
                       const uint8_t *req, size_t len, dp_status *st, uint8_t **ret_buf,
                       size_t *ret_len)
{
        V1beta1__AllocateRequest *msg = NULL;
        _cleanup_free_ uint8_t *seen = NULL;
        _cleanup_free_ size_t *idx = NULL;
        size_t *offsets[DP_MAX_CONTAINERS];
        size_t total = 0, used = 0;
        arena a = { 0 };
        int r;

        if (len > DP_MAX_REQUEST)
                return refuse(st, DP_STATUS_RESOURCE_EXHAUSTED, "Allocate: request of %zu bytes exceeds %d",
                              len, DP_MAX_REQUEST);
        if (check_strings("Allocate", &v1beta1__allocate_request__descriptor, req, len, st) < 0)
                return -EINVAL;
        msg = v1beta1__allocate_request__unpack(NULL, len, req);
        if (!msg)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT, "Allocate: malformed AllocateRequest");
        if (msg->n_container_requests == 0) {
                r = refuse(st, DP_STATUS_INVALID_ARGUMENT, "Allocate: no container requests");
                goto out;
        }
        if (msg->n_container_requests > DP_MAX_CONTAINERS) {
                r = refuse(st, DP_STATUS_INVALID_ARGUMENT, "Allocate: %zu container requests (at most %d)",
                           msg->n_container_requests, DP_MAX_CONTAINERS);
                goto out;
        }
        for (size_t c = 0; c < msg->n_container_requests; c++) {
                total += msg->container_requests[c]->n_devices_ids;
                if (total > DP_MAX_IDS_PER_REQUEST) {
                        r = refuse(st, DP_STATUS_INVALID_ARGUMENT,
                                   "Allocate: more than %d device IDs in one request",
                                   DP_MAX_IDS_PER_REQUEST);
                        goto out;
                }
        }
        seen = calloc(devices->n ? devices->n : 1, 1);
        idx = calloc(total ? total : 1, sizeof(size_t));
        if (!seen || !idx) {
                r = -ENOMEM;
                goto out;
        }
        total = 0;
        for (size_t c = 0; c < msg->n_container_requests; c++) {
                V1beta1__ContainerAllocateRequest *cr = msg->container_requests[c];
                if (cr->n_devices_ids == 0) {
                        r = refuse(st, DP_STATUS_INVALID_ARGUMENT,
                                   "Allocate: container request %zu asks for no devices", c);
                        goto out;
                }
                offsets[c] = idx + used;
                r = check_ids("Allocate", cr->devices_ids, cr->n_devices_ids, devices, true, seen, &total,
                              st, offsets[c]);
                if (r < 0)
                        goto out;
                used += cr->n_devices_ids;
        }

        /* Everything checked: build the answer. */
        V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
        V1beta1__ContainerAllocateResponse **crs = (V1beta1__ContainerAllocateResponse **)arena_messages(
                &a, &v1beta1__container_allocate_response__descriptor, msg->n_container_requests);
        if (!crs) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t c = 0; c < msg->n_container_requests; c++) {
                if (kind == DEVICE_NIC)
                        build_nic_container(&a, cfg, devices, offsets[c],
                                            msg->container_requests[c]->n_devices_ids, crs[c]);
                else
                        build_core_container(&a, cfg, devices, offsets[c],
                                             msg->container_requests[c]->n_devices_ids, crs[c]);
        }
        if (a.failed) {
                r = -ENOMEM;
                goto out;
        }
        resp.n_container_responses = msg->n_container_requests;
        resp.container_responses = crs;
        r = pack_reply(&resp.base, ret_buf, ret_len, st);
out:
        arena_free(&a);
        v1beta1__allocate_request__free_unpacked(msg, NULL);
        return r;
}

int dp_alloc_env(device_kind kind, const dp_alloc_config *cfg, const device_list *devices, const size_t *idx,
                 size_t n, char ***ret, size_t *ret_n)
{
        V1beta1__ContainerAllocateResponse cr = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        _cleanup_free_ size_t *copy = malloc((n ? n : 1) * sizeof(size_t));
        arena a = { 0 };
        char **env = NULL;
        size_t k = 0;
        int r = -ENOMEM;

        if (!copy)
                return -ENOMEM;
        if (n)
                memcpy(copy, idx, n * sizeof(size_t));
        if (kind == DEVICE_NIC)
                build_nic_container(&a, cfg, devices, copy, n, &cr);
        else
                build_core_container(&a, cfg, devices, copy, n, &cr);
        if (a.failed)
                goto out;
        env = calloc(cr.n_envs ? cr.n_envs : 1, sizeof(char *));
        if (!env)
                goto out;
        for (; k < cr.n_envs; k++) {
                size_t len = strlen(cr.envs[k]->key) + strlen(cr.envs[k]->value) + 2;
                env[k] = malloc(len);
                if (!env[k]) {
                        dp_env_free(env, k);
                        goto out;
                }
                snprintf(env[k], len, "%s=%s", cr.envs[k]->key, cr.envs[k]->value);
        }
        *ret = env;
        *ret_n = k;
        r = 0;
out:
        arena_free(&a);
        return r;
}

void dp_env_free(char **env, size_t n)
{
        for (size_t i = 0; env && i < n; i++)
                free(env[i]);
        free(env);
}

/* ---- GetPreferredAllocation ---- */

/* Bucket key for a NUMA node: -1 (unknown) is its own bucket. */
static int node_of(const device_entry *d)
{
        return d->numa_node < 0 ? -1 : d->numa_node;
}

/* The NUMA node the next devices come from: among the nodes of the untaken candidates,
 * the one that can hold the rest (need), then the one already holding most of those
 * chosen, then (the hint) one with DPDK NICs, then the best fit (fewest free) or, when
 * none fits, the most free; the lowest node on a tie. -2 when no candidate is left. */
static int best_node(const dp_alloc_config *cfg, const device_list *devices, const size_t *avail,
                     size_t n_avail, const uint8_t *taken, const size_t *chosen, size_t n_chosen, size_t need)
{
        int best = -2;
        size_t best_free = 0, best_must = 0;
        bool best_fits = false, best_hint = false;
        for (size_t i = 0; i < n_avail; i++) {
                if (taken[avail[i]])
                        continue;
                int node = node_of(&devices->items[avail[i]]);
                bool first = true;
                for (size_t j = 0; j < i; j++)
                        if (!taken[avail[j]] && node_of(&devices->items[avail[j]]) == node)
                                first = false;
                if (!first)
                        continue;
                size_t nfree = 0, nmust = 0;
                for (size_t j = 0; j < n_avail; j++)
                        if (!taken[avail[j]] && node_of(&devices->items[avail[j]]) == node)
                                nfree++;
                for (size_t j = 0; j < n_chosen; j++)
                        if (node_of(&devices->items[chosen[j]]) == node)
                                nmust++;
                bool fits = nfree >= need;
                bool hint = node >= 0 && node < 64 && (cfg->numa_with_nics >> node) & 1;
                bool better;
                if (best == -2)
                        better = true;
                else if (fits != best_fits)
                        better = fits;
                else if (nmust != best_must)
                        better = nmust > best_must;
                else if (hint != best_hint)
                        better = hint;
                else if (fits && nfree != best_free)
                        better = nfree < best_free; /* best fit keeps big nodes whole */
                else if (!fits && nfree != best_free)
                        better = nfree > best_free; /* spill over as few nodes as possible */
                else
                        better = node < best;
                if (better) {
                        best = node;
                        best_free = nfree;
                        best_must = nmust;
                        best_fits = fits;
                        best_hint = hint;
                }
        }
        return best;
}

static int prefer_one(const dp_alloc_config *cfg, const device_list *devices,
                      V1beta1__ContainerPreferredAllocationRequest *cr, uint8_t *seen_avail,
                      uint8_t *seen_must, size_t *total, arena *a, dp_status *st,
                      V1beta1__ContainerPreferredAllocationResponse *out)
{
        _cleanup_free_ size_t *avail = NULL, *must = NULL, *chosen = NULL;
        _cleanup_free_ uint8_t *taken = NULL;
        size_t n_avail = cr->n_available_deviceids, n_must = cr->n_must_include_deviceids;
        size_t n_chosen = 0;
        int r;

        if (cr->allocation_size <= 0)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                              "GetPreferredAllocation: allocation_size %d must be positive",
                              (int)cr->allocation_size);
        size_t size = (size_t)cr->allocation_size;
        if (n_avail > DP_MAX_IDS_PER_REQUEST || n_must > DP_MAX_IDS_PER_REQUEST)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                              "GetPreferredAllocation: more than %d device IDs in one request",
                              DP_MAX_IDS_PER_REQUEST);
        avail = calloc(n_avail ? n_avail : 1, sizeof(size_t));
        must = calloc(n_must ? n_must : 1, sizeof(size_t));
        chosen = calloc(size < n_avail ? size + 1 : n_avail + 1, sizeof(size_t));
        taken = calloc(devices->n ? devices->n : 1, 1);
        if (!avail || !must || !chosen || !taken)
                return -ENOMEM;
        memset(seen_avail, 0, devices->n);
        memset(seen_must, 0, devices->n);
        r = check_ids("GetPreferredAllocation", cr->available_deviceids, n_avail, devices, false,
                      seen_avail, total, st, avail);
        if (r < 0)
                return r;
        r = check_ids("GetPreferredAllocation", cr->must_include_deviceids, n_must, devices, false,
                      seen_must, total, st, must);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_must; i++)
                if (!seen_avail[must[i]])
                        return refuse_id(st, "GetPreferredAllocation", devices->items[must[i]].id,
                                         "is in must_include but not available");
        if (size > n_avail)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                              "GetPreferredAllocation: allocation_size %zu exceeds the %zu available devices",
                              size, n_avail);
        if (n_must > size)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                              "GetPreferredAllocation: %zu must_include devices exceed allocation_size %zu",
                              n_must, size);

        qsort(must, n_must, sizeof(size_t), cmp_size);
        for (size_t i = 0; i < n_must; i++) {
                chosen[n_chosen++] = must[i];
                taken[must[i]] = 1;
        }
        /* Remaining candidates in device-list order. */
        qsort(avail, n_avail, sizeof(size_t), cmp_size);
        while (n_chosen < size) {
                int best = best_node(cfg, devices, avail, n_avail, taken, chosen, n_chosen, size - n_chosen);
                if (best == -2)
                        break; /* cannot happen: size <= n_avail */
                for (size_t i = 0; i < n_avail && n_chosen < size; i++)
                        if (!taken[avail[i]] && node_of(&devices->items[avail[i]]) == best) {
                                taken[avail[i]] = 1;
                                chosen[n_chosen++] = avail[i];
                        }
        }
        qsort(chosen, n_chosen, sizeof(size_t), cmp_size);
        out->deviceids = arena_alloc(a, (n_chosen ? n_chosen : 1) * sizeof(char *));
        if (!out->deviceids)
                return -ENOMEM;
        for (size_t i = 0; i < n_chosen; i++)
                out->deviceids[i] = arena_printf(a, "%s", devices->items[chosen[i]].id);
        out->n_deviceids = n_chosen;
        return a->failed ? -ENOMEM : 0;
}

int dp_handle_preferred(device_kind kind, const dp_alloc_config *cfg, const device_list *devices,
                        const uint8_t *req, size_t len, dp_status *st, uint8_t **ret_buf,
                        size_t *ret_len)
{
        V1beta1__PreferredAllocationRequest *msg = NULL;
        _cleanup_free_ uint8_t *seen_avail = NULL, *seen_must = NULL;
        size_t total = 0;
        arena a = { 0 };
        int r;

        (void)kind; /* devices are whole NICs / whole cores: a core is never split */
        if (len > DP_MAX_REQUEST)
                return refuse(st, DP_STATUS_RESOURCE_EXHAUSTED,
                              "GetPreferredAllocation: request of %zu bytes exceeds %d", len, DP_MAX_REQUEST);
        if (check_strings("GetPreferredAllocation", &v1beta1__preferred_allocation_request__descriptor, req, len,
                          st) < 0)
                return -EINVAL;
        msg = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
        if (!msg)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT,
                              "GetPreferredAllocation: malformed PreferredAllocationRequest");
        if (msg->n_container_requests == 0 || msg->n_container_requests > DP_MAX_CONTAINERS) {
                r = refuse(st, DP_STATUS_INVALID_ARGUMENT,
                           "GetPreferredAllocation: %zu container requests (1 to %d allowed)",
                           msg->n_container_requests, DP_MAX_CONTAINERS);
                goto out;
        }
        seen_avail = calloc(devices->n ? devices->n : 1, 1);
        seen_must = calloc(devices->n ? devices->n : 1, 1);
        V1beta1__ContainerPreferredAllocationResponse **crs =
                (V1beta1__ContainerPreferredAllocationResponse **)arena_messages(
                        &a, &v1beta1__container_preferred_allocation_response__descriptor, msg->n_container_requests);
        if (!seen_avail || !seen_must || !crs) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t c = 0; c < msg->n_container_requests; c++) {
                r = prefer_one(cfg, devices, msg->container_requests[c], seen_avail, seen_must, &total,
                               &a, st, crs[c]);
                if (r < 0)
                        goto out;
        }
        V1beta1__PreferredAllocationResponse resp = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
        resp.n_container_responses = msg->n_container_requests;
        resp.container_responses = crs;
        r = pack_reply(&resp.base, ret_buf, ret_len, st);
out:
        arena_free(&a);
        v1beta1__preferred_allocation_request__free_unpacked(msg, NULL);
        return r;
}

/* ---- the rest ---- */

int dp_handle_prestart(const device_list *devices, const uint8_t *req, size_t len, dp_status *st,
                       uint8_t **ret_buf, size_t *ret_len)
{
        V1beta1__PreStartContainerRequest *msg;
        int r = 0;

        if (len > DP_MAX_REQUEST)
                return refuse(st, DP_STATUS_RESOURCE_EXHAUSTED, "PreStartContainer: request too large");
        if (check_strings("PreStartContainer", &v1beta1__pre_start_container_request__descriptor, req, len, st) < 0)
                return -EINVAL;
        msg = v1beta1__pre_start_container_request__unpack(NULL, len, req);
        if (!msg)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT, "PreStartContainer: malformed request");
        for (size_t i = 0; i < msg->n_devices_ids && r >= 0; i++) {
                const char *id = msg->devices_ids[i];
                if (i >= DP_MAX_IDS_PER_REQUEST)
                        r = refuse(st, DP_STATUS_INVALID_ARGUMENT, "PreStartContainer: too many device IDs");
                else if (!device_list_find(devices, id, strnlen(id, DEVICE_ID_LEN)))
                        r = refuse_id(st, "PreStartContainer", id, "is not a device of this resource");
        }
        v1beta1__pre_start_container_request__free_unpacked(msg, NULL);
        if (r < 0)
                return r;
        V1beta1__PreStartContainerResponse resp = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
        r = pack_reply(&resp.base, ret_buf, ret_len, st);
        return r;
}

int dp_check_empty(const uint8_t *req, size_t len, dp_status *st)
{
        if (len > DP_MAX_REQUEST)
                return refuse(st, DP_STATUS_RESOURCE_EXHAUSTED, "request too large");
        V1beta1__Empty *msg = v1beta1__empty__unpack(NULL, len, req);
        if (!msg)
                return refuse(st, DP_STATUS_INVALID_ARGUMENT, "malformed Empty message");
        v1beta1__empty__free_unpacked(msg, NULL);
        status_ok(st);
        return 0;
}

int dp_encode_list(const device_list *devices, uint8_t **ret_buf, size_t *ret_len)
{
        V1beta1__ListAndWatchResponse resp = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        arena a = { 0 };
        int r;

        V1beta1__Device **devs = arena_alloc(&a, (devices->n ? devices->n : 1) * sizeof(*devs));
        for (size_t i = 0; devs && i < devices->n; i++) {
                const device_entry *d = &devices->items[i];
                V1beta1__Device *pd = arena_alloc(&a, sizeof(*pd));
                if (!pd)
                        break;
                v1beta1__device__init(pd);
                pd->id = (char *)d->id;
                pd->health = (char *)(device_healthy(d) ? "Healthy" : "Unhealthy");
                if (d->numa_node >= 0) {
                        V1beta1__TopologyInfo *ti = arena_alloc(&a, sizeof(*ti));
                        V1beta1__NUMANode *nn = arena_alloc(&a, sizeof(*nn));
                        V1beta1__NUMANode **nodes = arena_alloc(&a, sizeof(*nodes));
                        if (!ti || !nn || !nodes)
                                break;
                        v1beta1__topology_info__init(ti);
                        v1beta1__numanode__init(nn);
                        nn->id = d->numa_node;
                        nodes[0] = nn;
                        ti->n_nodes = 1;
                        ti->nodes = nodes;
                        pd->topology = ti;
                }
                devs[i] = pd;
        }
        if (a.failed) {
                arena_free(&a);
                return -ENOMEM;
        }
        resp.n_devices = devices->n;
        resp.devices = devs;
        r = pack(&resp.base, ret_buf, ret_len);
        arena_free(&a);
        return r;
}

int dp_encode_options(bool preferred_available, uint8_t **ret_buf, size_t *ret_len)
{
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.pre_start_required = 0;
        o.get_preferred_allocation_available = preferred_available;
        return pack(&o.base, ret_buf, ret_len);
}

int dp_encode_register(const char *resource_name, const char *endpoint, bool preferred_available,
                       uint8_t **ret_buf, size_t *ret_len)
{
        V1beta1__RegisterRequest rr = V1BETA1__REGISTER_REQUEST__INIT;
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.get_preferred_allocation_available = preferred_available;
        rr.version = (char *)"v1beta1";
        rr.endpoint = (char *)endpoint;
        rr.resource_name = (char *)resource_name;
        rr.options = &o;
        return pack(&rr.base, ret_buf, ret_len);
}
