/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlices of the node: names, attributes, the pool's split into slices, the
 * object, the comparison of device lists. Pure: what it cannot publish (a name that is
 * no DNS label, an attribute too long) is counted and named, never guessed. */
#include "dra-slice.h"

#include "cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool dns_label(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > DRA_DEVICE_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

int dra_slice_name(const char *node, char *buf, size_t len)
{
        if (!node || !*node)
                return -EINVAL;
        int n = snprintf(buf, len, "%s-%s", node, DRA_DRIVER);
        if (n < 0 || (size_t)n >= len || n > DRA_NAME_MAX)
                return -ENAMETOOLONG;
        return 0;
}

int dra_slice_name_at(const char *node, size_t index, char *buf, size_t len)
{
        char base[DRA_NAME_MAX + 2];
        int r = dra_slice_name(node, base, sizeof(base));
        if (r < 0)
                return r;
        if (index >= DRA_POOL_MAX_SLICES)
                return -EINVAL;
        if (index == 0)
                return dra_slice_name(node, buf, len);
        int n = snprintf(buf, len, "%s-%zu", base, index);
        if (n < 0 || (size_t)n >= len || n > DRA_NAME_MAX)
                return -ENAMETOOLONG;
        return 0;
}

static int device_name(const char *prefix, const char *id, bool map_sep, char *buf, size_t len)
{
        char tmp[DRA_DEVICE_NAME_MAX + 2];
        int n = snprintf(tmp, sizeof(tmp), "%s%s", prefix, id);
        if (n < 0 || (size_t)n > DRA_DEVICE_NAME_MAX)
                return -ENAMETOOLONG;
        for (char *p = tmp; map_sep && *p; p++)
                if (*p == ':' || *p == '.')
                        *p = '-';
        if (!dns_label(tmp))
                return -EINVAL;
        if ((size_t)n >= len)
                return -ENAMETOOLONG;
        memcpy(buf, tmp, (size_t)n + 1);
        return 0;
}

int dra_nic_device_name(const char *pci, char *buf, size_t len)
{
        return device_name("nic-", pci, true, buf, len);
}

int dra_core_device_name(const char *core_id, char *buf, size_t len)
{
        return device_name("core-", core_id, false, buf, len);
}

static int attr_str(json_t *attrs, const char *name, const char *v)
{
        if (strlen(v) > DRA_ATTR_STRING_MAX)
                return -E2BIG;
        return json_object_set_new(attrs, name, json_pack("{s:s}", "string", v)) < 0 ? -ENOMEM : 0;
}

static int attr_int(json_t *attrs, const char *name, json_int_t v)
{
        return json_object_set_new(attrs, name, json_pack("{s:I}", "int", v)) < 0 ? -ENOMEM : 0;
}

/* -ENOMEM, or -E2BIG for a value past DRA_ATTR_STRING_MAX (the device is left out). */
static int nic_attrs(const device_entry *n, json_t *a)
{
        char ip[sizeof(n->ipv4)];
        int r;

        snprintf(ip, sizeof(ip), "%.*s", (int)strcspn(n->ipv4, "/"), n->ipv4); /* without the prefix length */
        if ((r = attr_str(a, "type", device_kind_resource(n->kind))) < 0 || (r = attr_str(a, "kind", n->nic_kind)) < 0 ||
            (r = attr_str(a, "pciAddress", n->id)) < 0 || (r = attr_int(a, "numaNode", n->numa_node)) < 0)
                return r;
        if (ip[0] && (r = attr_str(a, "ipv4", ip)) < 0)
                return r;
        if (n->mtu > 0 && (r = attr_int(a, "mtu", n->mtu)) < 0)
                return r;
        if (n->pcie_root[0] && (r = attr_str(a, DRA_ATTR_PCIE_ROOT, n->pcie_root)) < 0)
                return r;
        if ((r = attr_str(a, DRA_ATTR_PCI_BUS_ID, n->id)) < 0)
                return r;
        if (n->numa_node >= 0 && (r = attr_int(a, DRA_ATTR_NUMA_NODE, n->numa_node)) < 0)
                return r;
        return 0;
}

static int core_attrs(const device_entry *c, json_t *a)
{
        char cpus[DRA_ATTR_STRING_MAX + 2];
        int r;

        if (cpuset_format(&c->cpus, cpus, sizeof(cpus)) >= sizeof(cpus))
                return -E2BIG;
        if ((r = attr_str(a, "type", device_kind_resource(c->kind))) < 0 || (r = attr_int(a, "numaNode", c->numa_node)) < 0 ||
            (r = attr_str(a, "core", c->id)) < 0 || (r = attr_str(a, "cpus", cpus)) < 0)
                return r;
        if (c->numa_node >= 0 && (r = attr_int(a, DRA_ATTR_NUMA_NODE, c->numa_node)) < 0)
                return r;
        return 0;
}

static void left_out(size_t *count, char *why, size_t why_len, const char *fmt, const char *id)
{
        if (*count == 0 && why && why_len)
                snprintf(why, why_len, fmt, id);
        (*count)++;
}

int dra_slice_build(const device_entry *const *devs, size_t n, json_t **ret, size_t *ret_left_out, char *why,
                    size_t why_len)
{
        _cleanup_(json_decrefp) json_t *out = json_array();
        size_t dropped = 0;

        if (!out)
                return -ENOMEM;
        if (why && why_len)
                why[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                const device_entry *e = devs[i];
                char name[DRA_DEVICE_NAME_MAX + 1];
                int r = e->kind == DEVICE_CORE ? dra_core_device_name(e->id, name, sizeof(name))
                                : dra_nic_device_name(e->id, name, sizeof(name));
                if (r < 0) {
                        left_out(&dropped, why, why_len,
                                 "%s: its device name would not be a DNS label of at most 63 characters", e->id);
                        continue;
                }
                if (json_array_size(out) >= (size_t)DRA_SLICE_MAX_DEVICES * DRA_POOL_MAX_SLICES) {
                        left_out(&dropped, why, why_len,
                                 "%s and the devices after it: the pool holds at most 32 ResourceSlices of 128 devices",
                                 e->id);
                        continue;
                }
                json_t *attrs = json_object();
                json_t *d = json_pack("{s:s,s:o}", "name", name, "attributes", attrs);
                if (!d)
                        return -ENOMEM;
                r = e->kind == DEVICE_CORE ? core_attrs(e, attrs) : nic_attrs(e, attrs);
                if (r == -E2BIG) {
                        json_decref(d);
                        left_out(&dropped, why, why_len, "%s: an attribute is longer than 64 characters", e->id);
                        continue;
                }
                if (r < 0 || json_array_append_new(out, d) < 0) {
                        if (r < 0)
                                json_decref(d);
                        return -ENOMEM;
                }
        }
        if (ret_left_out)
                *ret_left_out = dropped;
        *ret = TAKE_PTR(out);
        return 0;
}

size_t dra_pool_slices(const json_t *devices)
{
        size_t n = devices ? json_array_size(devices) : 0;
        return (n + DRA_SLICE_MAX_DEVICES - 1) / DRA_SLICE_MAX_DEVICES;
}

json_t *dra_pool_chunk(const json_t *devices, size_t index)
{
        json_t *out = json_array();
        size_t n = devices ? json_array_size(devices) : 0;

        if (!out || index >= (n + DRA_SLICE_MAX_DEVICES - 1) / DRA_SLICE_MAX_DEVICES)
                return out;
        for (size_t i = index * DRA_SLICE_MAX_DEVICES; i < n && i < (index + 1) * DRA_SLICE_MAX_DEVICES; i++)
                if (json_array_append(out, json_array_get(devices, i)) < 0) {
                        json_decref(out);
                        return NULL;
                }
        return out;
}

json_t *dra_slice_json(const char *node, const json_t *devices, int64_t generation, const char *rv)
{
        return dra_slice_json_at(node, 0, 1, devices, generation, rv);
}

json_t *dra_slice_json_at(const char *node, size_t index, size_t count, const json_t *devices, int64_t generation,
                          const char *rv)
{
        char name[DRA_NAME_MAX + 2];
        json_t *devs;

        if (count == 0 || index >= count || count > DRA_POOL_MAX_SLICES ||
            dra_slice_name_at(node, index, name, sizeof(name)) < 0)
                return NULL;
        devs = devices ? json_deep_copy(devices) : json_array();
        if (!devs)
                return NULL;
        json_t *meta = json_pack("{s:s}", "name", name);
        if (meta && rv && *rv && json_object_set_new(meta, "resourceVersion", json_string(rv)) < 0) {
                json_decref(meta);
                meta = NULL;
        }
        if (!meta) {
                json_decref(devs);
                return NULL;
        }
        return json_pack("{s:s,s:s,s:o,s:{s:s,s:s,s:{s:s,s:I,s:i},s:o}}", "apiVersion", DRA_API_GROUP_VERSION, "kind",
                         "ResourceSlice", "metadata", meta, "spec", "driver", DRA_DRIVER, "nodeName", node, "pool",
                         "name", node, "generation", (json_int_t)generation, "resourceSliceCount", (int)count,
                         "devices", devs);
}

bool dra_devices_differ(const json_t *a, const json_t *b)
{
        size_t na = a ? json_array_size(a) : 0, nb = b ? json_array_size(b) : 0;
        if (na != nb)
                return true;
        if (na == 0)
                return false;
        return !json_equal((json_t *)a, (json_t *)b);
}

int dra_resources_parse(const char *list, dra_resources *ret, char *why, size_t why_len)
{
        dra_resources r = { false, false };
        const char *p = list ? list : "";

        while (*p) {
                size_t n = strcspn(p, ",");
                bool *slot = NULL;
                for (int k = 0; k < DEVICE_KINDS && !slot; k++) /* the kinds' short names */
                        if (n == strlen(device_kind_short((device_kind)k)) &&
                            strncmp(p, device_kind_short((device_kind)k), n) == 0)
                                slot = k == DEVICE_NIC ? &r.nic : &r.core;
                if (!slot || *slot) {
                        snprintf(why, why_len, "\"%.*s\" %s (the list takes nic and core, each at most once)",
                                 (int)(n > 32 ? 32 : n), p, slot ? "given twice" : "is not a DRA resource");
                        return -EINVAL;
                }
                *slot = true;
                p += n;
                if (*p == ',' && *++p == '\0') {
                        snprintf(why, why_len, "a trailing comma");
                        return -EINVAL;
                }
        }
        *ret = r;
        return 0;
}

void dra_slice_seen_clear(dra_slice_seen *s)
{
        if (!s)
                return;
        json_decref(s->devices);
        s->devices = NULL;
}

int dra_slice_parse(const char *body, size_t len, const char *node, dra_slice_seen *ret, char *why, size_t why_len)
{
        json_error_t jerr;
        _cleanup_(json_decrefp) json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        dra_slice_seen s = { 0 };

        if (!o || !json_is_object(o)) {
                snprintf(why, why_len, "not a JSON object%s%s", o ? "" : ": ", o ? "" : jerr.text);
                return -EBADMSG;
        }
        if (!json_is_string(json_object_get(o, "kind")) ||
            strcmp(json_string_value(json_object_get(o, "kind")), "ResourceSlice") != 0) {
                snprintf(why, why_len, "not a ResourceSlice (kind)");
                return -EBADMSG;
        }
        json_t *rv = json_object_get(json_object_get(o, "metadata"), "resourceVersion");
        if (!json_is_string(rv) || json_string_length(rv) == 0 || json_string_length(rv) >= sizeof(s.resource_version)) {
                snprintf(why, why_len, "metadata.resourceVersion missing or longer than %zu",
                         sizeof(s.resource_version) - 1);
                return -EBADMSG;
        }
        snprintf(s.resource_version, sizeof(s.resource_version), "%s", json_string_value(rv));
        json_t *spec = json_object_get(o, "spec"), *pool = json_object_get(spec, "pool");
        json_t *gen = json_object_get(pool, "generation");
        if (!json_is_object(pool) || !json_is_integer(gen) || json_integer_value(gen) < 0) {
                snprintf(why, why_len, "spec.pool.generation missing or negative");
                return -EBADMSG;
        }
        s.generation = (int64_t)json_integer_value(gen);
        json_t *devs = json_object_get(spec, "devices");
        if (devs && !json_is_array(devs)) {
                snprintf(why, why_len, "spec.devices is not a list");
                return -EBADMSG;
        }
        const char *drv = json_string_value(json_object_get(spec, "driver"));
        const char *nn = json_string_value(json_object_get(spec, "nodeName"));
        const char *pn = json_string_value(json_object_get(pool, "name"));
        json_t *cnt = json_object_get(pool, "resourceSliceCount");
        s.pool_ours = drv && strcmp(drv, DRA_DRIVER) == 0 && nn && strcmp(nn, node) == 0 && pn && strcmp(pn, node) == 0;
        s.slice_count = json_is_integer(cnt) && json_integer_value(cnt) > 0 ? (int64_t)json_integer_value(cnt) : 0;
        s.ours = s.pool_ours && s.slice_count == 1;
        s.devices = devs ? json_incref(devs) : json_array();
        if (!s.devices)
                return -ENOMEM;
        *ret = s;
        return 0;
}
