/* SPDX-License-Identifier: Apache-2.0 */
/* The config parser: JSON text to struct config, or a one-line error naming the key and
 * the value. Pure: no I/O, no globals, never logs; every size has a hard limit. */
#include "config.h"

#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KEY_LEN 128

typedef struct ctx {
        char *err;
        size_t err_size;
} ctx;

static const char *const kind_names[_CONFIG_KIND_MAX] = {
        [CONFIG_KIND_OTHER] = "other",
        [CONFIG_KIND_ENA] = "ena",
        [CONFIG_KIND_MANA] = "mana",
};

static const char *const driver_names[_CONFIG_DRIVER_MAX] = {
        [CONFIG_DRIVER_VFIO_PCI] = "vfio-pci",
        [CONFIG_DRIVER_IGB_UIO] = "igb_uio",
};

const char *config_driver_name(config_driver d)
{
        return d >= 0 && d < _CONFIG_DRIVER_MAX ? driver_names[d] : "?";
}

static const char *const addr_source_names[_CONFIG_ADDR_SOURCE_MAX] = {
        [CONFIG_ADDR_STATIC] = "static",
        [CONFIG_ADDR_METADATA] = "metadata",
};

const char *config_addr_source_name(config_addr_source s)
{
        return s >= 0 && s < _CONFIG_ADDR_SOURCE_MAX ? addr_source_names[s] : "?";
}

void config_init(config *c)
{
        memset(c, 0, sizeof(*c));
        snprintf(c->resource_prefix, sizeof(c->resource_prefix), "%s", CONFIG_PREFIX_DEFAULT);
        c->nics.kinds[CONFIG_KIND_ENA] = true;
        c->nics.kinds[CONFIG_KIND_MANA] = true;
        c->binding.ena = CONFIG_DRIVER_VFIO_PCI;
        c->hugetlbfs.mount = true;
        c->hugetlbfs.pod_mount = false; /* pods bring their own (private) hugetlbfs */
        snprintf(c->hugetlbfs.mount_point, sizeof(c->hugetlbfs.mount_point), "%s",
                 CONFIG_HUGETLBFS_DEFAULT);
        c->tuning.irq_core = -1;
        c->tuning.reapply_on_reset = true;
        snprintf(c->cdi.spec_dir, sizeof(c->cdi.spec_dir), "%s", CONFIG_CDI_DIR_DEFAULT);
        c->addresses.sources[0] = CONFIG_ADDR_STATIC;
        c->addresses.sources[1] = CONFIG_ADDR_METADATA;
        c->addresses.n_sources = 2;
}

/* The error "config: "<key>": <what>, got <value>". */
static void fail_msg(ctx *x, const char *key, const json_t *v, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* fail_msg(), then the value r (a negative errno) as the expression's value. A macro, not
 * a function returning r: the compiler then sees at every call site that a failure is
 * negative, so an output set only on success (get_int()) is provably set wherever a
 * caller reads it after checking r >= 0. */
#define fail(x, r, key, v, ...) (fail_msg((x), (key), (v), __VA_ARGS__), (r))

static void fail_msg(ctx *x, const char *key, const json_t *v, const char *fmt, ...)
{
        char what[128], shown[80];
        va_list ap;

        if (!x->err || x->err_size == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        shown[0] = '\0';
        if (v) {
                _cleanup_free_ char *dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                if (dump && strlen(dump) > 64)
                        snprintf(shown, sizeof(shown), "%.60s...", dump);
                else
                        snprintf(shown, sizeof(shown), "%s", dump ? dump : "?");
        }
        if (v)
                snprintf(x->err, x->err_size, "config: \"%s\": %s, got %s", key, what, shown);
        else
                snprintf(x->err, x->err_size, "config: \"%s\": %s", key, what);
}

static void join_key(char *buf, const char *parent, const char *child)
{
        if (parent && *parent)
                snprintf(buf, KEY_LEN, "%s.%s", parent, child);
        else
                snprintf(buf, KEY_LEN, "%s", child);
}

/* Reject keys of obj not in allowed (NULL-terminated). */
static int check_keys(ctx *x, const char *parent, const json_t *obj, const char *const *allowed)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)obj, k, v) {
                bool ok = false;
                for (size_t i = 0; allowed[i]; i++)
                        if (strcmp(k, allowed[i]) == 0)
                                ok = true;
                if (!ok) {
                        char key[KEY_LEN];
                        join_key(key, parent, k);
                        return fail(x, -EINVAL, key, NULL, "unknown key");
                }
        }
        return 0;
}

static int get_object(ctx *x, const char *key, const json_t *v)
{
        if (!json_is_object(v))
                return fail(x, -EINVAL, key, v, "expected an object");
        return 0;
}

static int get_bool(ctx *x, const char *key, const json_t *v, bool *ret)
{
        if (!json_is_boolean(v))
                return fail(x, -EINVAL, key, v, "expected true or false");
        *ret = json_is_true(v);
        return 0;
}

static int get_int(ctx *x, const char *key, const json_t *v, long long min, long long max,
                   long long *ret)
{
        if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
                if (min == 0 && max == LLONG_MAX)
                        return fail(x, -EINVAL, key, v, "expected an integer >= 0");
                return fail(x, -EINVAL, key, v, "expected an integer from %lld to %lld", min, max);
        }
        *ret = json_integer_value(v);
        return 0;
}

/* A string of 1..size-1 bytes without control characters. */
static int get_string(ctx *x, const char *key, const json_t *v, char *buf, size_t size)
{
        if (!json_is_string(v))
                return fail(x, -EINVAL, key, v, "expected a string");
        size_t n = json_string_length(v);
        const char *s = json_string_value(v);
        if (n == 0 || n >= size)
                return fail(x, -EINVAL, key, v, "expected a string of 1 to %zu characters", size - 1);
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return fail(x, -EINVAL, key, v, "control characters are not allowed");
        memcpy(buf, s, n + 1);
        return 0;
}

static int get_abs_path(ctx *x, const char *key, const json_t *v, char *buf, size_t size)
{
        int r = get_string(x, key, v, buf, size);
        if (r < 0)
                return r;
        if (buf[0] != '/' || strstr(buf, "/../") || strcmp(buf, "/") == 0 ||
            (strlen(buf) >= 3 && strcmp(buf + strlen(buf) - 3, "/..") == 0))
                return fail(x, -EINVAL, key, v, "expected an absolute path other than / without \"..\"");
        return 0;
}

/* A resource prefix is a DNS subdomain: lowercase letters, digits, '-' and '.', each
 * label starting and ending with a letter or digit. */
static bool valid_prefix(const char *s)
{
        size_t label = 0;
        char prev = '.';

        for (const char *p = s; *p; p++) {
                char c = *p;
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (c == '.') {
                        if (label == 0 || prev == '-')
                                return false;
                        label = 0;
                } else if (alnum || c == '-') {
                        if (label == 0 && c == '-')
                                return false;
                        if (++label > 63)
                                return false;
                } else
                        return false;
                prev = c;
        }
        return label > 0 && prev != '-';
}

/* "2M", "2MB", "2048kB", "2048K", "1G", "1GB", "64K" or an integer of kB. */
static int get_page_size(ctx *x, const char *key, const json_t *v, uint64_t *ret)
{
        uint64_t n;
        const char *s;
        size_t len;

        if (json_is_integer(v)) {
                if (json_integer_value(v) <= 0 || json_integer_value(v) > (16LL << 20))
                        goto bad;
                n = (uint64_t)json_integer_value(v);
                goto check;
        }
        if (!json_is_string(v))
                goto bad;
        s = json_string_value(v);
        len = json_string_length(v);
        if (parse_size_kb(s, len, 0, &n) < 0 || n == 0 || n > (16ULL << 20))
                goto bad;
check:
        /* Page sizes are powers of two from 4 kB (ppc64 64 kB, arm64 32 MB, 16 GB) */
        if (n < 4 || (n & (n - 1)) != 0)
                goto bad;
        *ret = n;
        return 0;
bad:
        return fail(x, -EINVAL, key, v, "expected a page size such as \"2M\", \"1G\" or \"64kB\"");
}

static int get_array(ctx *x, const char *key, const json_t *v, size_t max)
{
        if (!json_is_array(v))
                return fail(x, -EINVAL, key, v, "expected an array");
        if (json_array_size(v) > max)
                return fail(x, -E2BIG, key, NULL, "at most %zu entries are allowed, got %zu", max,
                            json_array_size(v));
        return 0;
}

static int parse_nics(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"kinds", "ids", "pci", "interfaces", "max", NULL};
        char key[KEY_LEN];
        json_t *v, *e;
        size_t i;
        int r;

        if ((r = get_object(x, "nics", o)) < 0 || (r = check_keys(x, "nics", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "kinds"))) {
                if ((r = get_array(x, "nics.kinds", v, CONFIG_MAX_LIST)) < 0)
                        return r;
                memset(c->nics.kinds, 0, sizeof(c->nics.kinds));
                json_array_foreach(v, i, e) {
                        snprintf(key, sizeof(key), "nics.kinds[%zu]", i);
                        int k = -1;
                        for (int j = 0; j < _CONFIG_KIND_MAX; j++)
                                if (json_is_string(e) && strcmp(json_string_value(e), kind_names[j]) == 0)
                                        k = j;
                        if (k < 0)
                                return fail(x, -EINVAL, key, e, "expected \"ena\", \"mana\" or \"other\"");
                        c->nics.kinds[k] = true;
                }
        }
        if ((v = json_object_get(o, "ids"))) {
                if ((r = get_array(x, "nics.ids", v, CONFIG_MAX_LIST)) < 0)
                        return r;
                c->nics.n_ids = 0;
                json_array_foreach(v, i, e) {
                        char buf[16], *colon;
                        uint64_t ven, dev;
                        snprintf(key, sizeof(key), "nics.ids[%zu]", i);
                        if (!json_is_string(e) || json_string_length(e) != 9)
                                goto bad_id;
                        memcpy(buf, json_string_value(e), 10);
                        colon = strchr(buf, ':');
                        if (colon != buf + 4)
                                goto bad_id;
                        *colon = '\0';
                        if (parse_hex_u64(buf, 0xffff, &ven) < 0 || parse_hex_u64(colon + 1, 0xffff, &dev) < 0 ||
                            strncmp(buf, "0x", 2) == 0 || strncmp(colon + 1, "0x", 2) == 0)
                                goto bad_id;
                        c->nics.ids[c->nics.n_ids++] = (config_pci_id){(uint16_t)ven, (uint16_t)dev};
                        continue;
                bad_id:
                        return fail(x, -EINVAL, key, e, "expected \"vendor:device\" in hex, such as \"1d0f:ec20\"");
                }
        }
        if ((v = json_object_get(o, "pci"))) {
                if ((r = get_array(x, "nics.pci", v, CONFIG_MAX_LIST)) < 0)
                        return r;
                c->nics.n_pci = 0;
                json_array_foreach(v, i, e) {
                        snprintf(key, sizeof(key), "nics.pci[%zu]", i);
                        if (!json_is_string(e) || json_string_length(e) >= sizeof(c->nics.pci[0]) ||
                            !parse_is_pci_addr(json_string_value(e)))
                                return fail(x, -EINVAL, key, e, "expected a PCI address such as \"0000:00:06.0\"");
                        snprintf(c->nics.pci[c->nics.n_pci++], sizeof(c->nics.pci[0]), "%s", json_string_value(e));
                }
        }
        if ((v = json_object_get(o, "interfaces"))) {
                if ((r = get_array(x, "nics.interfaces", v, CONFIG_MAX_LIST)) < 0)
                        return r;
                c->nics.n_interfaces = 0;
                json_array_foreach(v, i, e) {
                        char *dst = c->nics.interfaces[c->nics.n_interfaces];
                        snprintf(key, sizeof(key), "nics.interfaces[%zu]", i);
                        if ((r = get_string(x, key, e, dst, CONFIG_IFNAME_LEN)) < 0)
                                return r;
                        if (strpbrk(dst, "/: \t") || strcmp(dst, ".") == 0 || strcmp(dst, "..") == 0)
                                return fail(x, -EINVAL, key, e, "expected an interface name");
                        c->nics.n_interfaces++;
                }
        }
        if ((v = json_object_get(o, "max"))) {
                long long n;
                if ((r = get_int(x, "nics.max", v, 0, 256, &n)) < 0)
                        return r;
                c->nics.max_count = (unsigned)n;
        }
        return 0;
}

static int parse_binding(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"ena", "mana_netdev_down", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "binding", o)) < 0 || (r = check_keys(x, "binding", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "ena"))) {
                int d = -1;
                for (int j = 0; j < _CONFIG_DRIVER_MAX; j++)
                        if (json_is_string(v) && strcmp(json_string_value(v), driver_names[j]) == 0)
                                d = j;
                if (d < 0)
                        return fail(x, -EINVAL, "binding.ena", v, "expected \"vfio-pci\" or \"igb_uio\"");
                c->binding.ena = (config_driver)d;
        }
        if ((v = json_object_get(o, "mana_netdev_down")) &&
            (r = get_bool(x, "binding.mana_netdev_down", v, &c->binding.mana_netdev_down)) < 0)
                return r;
        return 0;
}

static int parse_huge_entry(ctx *x, const char *parent, const json_t *o, config *c)
{
        static const char *const keys[] = {"page_size", "per_node", NULL};
        char key[KEY_LEN];
        config_huge h = {0};
        const char *k;
        json_t *v, *e;
        int r;

        if ((r = get_object(x, parent, o)) < 0 || (r = check_keys(x, parent, o, keys)) < 0)
                return r;
        h.size_kb = 2048;
        if ((v = json_object_get(o, "page_size"))) {
                join_key(key, parent, "page_size");
                if ((r = get_page_size(x, key, v, &h.size_kb)) < 0)
                        return r;
        }
        for (size_t i = 0; i < c->n_huge; i++)
                if (c->huge[i].size_kb == h.size_kb) {
                        join_key(key, parent, "page_size");
                        return fail(x, -EINVAL, key, v, "this page size is already configured");
                }
        if (c->n_huge >= CONFIG_MAX_HUGE_SIZES)
                return fail(x, -E2BIG, parent, NULL, "at most %d page sizes are allowed", CONFIG_MAX_HUGE_SIZES);
        v = json_object_get(o, "per_node");
        join_key(key, parent, "per_node");
        if (!v)
                return fail(x, -EINVAL, key, NULL, "missing (an object of NUMA node id to page count)");
        if ((r = get_object(x, key, v)) < 0)
                return r;
        json_object_foreach(v, k, e) {
                char nkey[KEY_LEN];
                int node;
                long long n;
                snprintf(nkey, sizeof(nkey), "%s.per_node.%.40s", parent, k);
                if (parse_int(k, 0, CONFIG_MAX_NUMA - 1, &node) < 0 || k[0] == '-' ||
                    (k[0] == '0' && k[1]))
                        return fail(x, -EINVAL, nkey, NULL, "expected a NUMA node id from 0 to %d as the key",
                                    CONFIG_MAX_NUMA - 1);
                if (!json_is_integer(e) || json_integer_value(e) < 0)
                        return fail(x, -EINVAL, nkey, e, "expected an integer >= 0");
                if ((r = get_int(x, nkey, e, 0, CONFIG_MAX_PAGES, &n)) < 0)
                        return r == -EINVAL ? -E2BIG : r;
                h.want[node] = true;
                h.pages[node] = (uint64_t)n;
        }
        c->huge[c->n_huge++] = h;
        return 0;
}

static int parse_hugepages(ctx *x, const json_t *v, config *c)
{
        char key[KEY_LEN];
        json_t *e;
        size_t i;
        int r;

        c->n_huge = 0;
        if (json_is_object(v))
                return parse_huge_entry(x, "hugepages", v, c);
        if (!json_is_array(v))
                return fail(x, -EINVAL, "hugepages", v, "expected an object or an array of objects");
        if ((r = get_array(x, "hugepages", v, CONFIG_MAX_HUGE_SIZES)) < 0)
                return r;
        json_array_foreach(v, i, e) {
                snprintf(key, sizeof(key), "hugepages[%zu]", i);
                if ((r = parse_huge_entry(x, key, e, c)) < 0)
                        return r;
        }
        return 0;
}

static int parse_hugetlbfs(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"mount", "mount_point", "page_size", "pod_mount", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "hugetlbfs", o)) < 0 || (r = check_keys(x, "hugetlbfs", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "mount")) && (r = get_bool(x, "hugetlbfs.mount", v, &c->hugetlbfs.mount)) < 0)
                return r;
        if ((v = json_object_get(o, "pod_mount")) &&
            (r = get_bool(x, "hugetlbfs.pod_mount", v, &c->hugetlbfs.pod_mount)) < 0)
                return r;
        if ((v = json_object_get(o, "mount_point")) &&
            (r = get_abs_path(x, "hugetlbfs.mount_point", v, c->hugetlbfs.mount_point,
                              sizeof(c->hugetlbfs.mount_point))) < 0)
                return r;
        if ((v = json_object_get(o, "page_size")) &&
            (r = get_page_size(x, "hugetlbfs.page_size", v, &c->hugetlbfs.page_size_kb)) < 0)
                return r;
        return 0;
}

static int parse_cores(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"cpus", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "cores", o)) < 0 || (r = check_keys(x, "cores", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "cpus"))) {
                cpuset set;
                if (!json_is_string(v) || json_string_length(v) == 0 ||
                    cpuset_parse(json_string_value(v), json_string_length(v), &set) < 0 ||
                    strchr(json_string_value(v), '\n'))
                        return fail(x, -EINVAL, "cores.cpus", v, "expected a CPU list such as \"2-7,10-15\"");
                c->cores.have_cpus = true;
                c->cores.cpus = set;
        }
        return 0;
}

static int parse_tuning(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"interrupt_moderation_off", "irq_core", "reapply_on_reset", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "tuning", o)) < 0 || (r = check_keys(x, "tuning", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "interrupt_moderation_off")) &&
            (r = get_bool(x, "tuning.interrupt_moderation_off", v, &c->tuning.interrupt_moderation_off)) < 0)
                return r;
        if ((v = json_object_get(o, "irq_core"))) {
                long long n;
                if (json_is_null(v))
                        c->tuning.irq_core = -1;
                else if ((r = get_int(x, "tuning.irq_core", v, 0, CPUSET_MAX - 1, &n)) < 0)
                        return r;
                else
                        c->tuning.irq_core = (int)n;
        }
        if ((v = json_object_get(o, "reapply_on_reset")) &&
            (r = get_bool(x, "tuning.reapply_on_reset", v, &c->tuning.reapply_on_reset)) < 0)
                return r;
        return 0;
}

static int parse_kernel_args(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"manage", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "kernel_args", o)) < 0 || (r = check_keys(x, "kernel_args", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "manage")) &&
            (r = get_bool(x, "kernel_args.manage", v, &c->kernel_args.manage)) < 0)
                return r;
        return 0;
}

static int parse_cdi(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"enabled", "spec_dir", NULL};
        json_t *v;
        int r;

        if ((r = get_object(x, "cdi", o)) < 0 || (r = check_keys(x, "cdi", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "enabled")) && (r = get_bool(x, "cdi.enabled", v, &c->cdi.enabled)) < 0)
                return r;
        if ((v = json_object_get(o, "spec_dir")) &&
            (r = get_abs_path(x, "cdi.spec_dir", v, c->cdi.spec_dir, sizeof(c->cdi.spec_dir))) < 0)
                return r;
        return 0;
}

/* One entry of addresses.static: {"pci"?, "mac"?, "ipv4", "gateway"?}. */
static int parse_addr_entry(ctx *x, const char *parent, const json_t *o, nic_addr_static *ret)
{
        static const char *const keys[] = {"pci", "mac", "ipv4", "gateway", NULL};
        char key[KEY_LEN], msg[NIC_ADDR_ERR_LEN];
        nic_addr_static e = {0};
        json_t *v, *ip, *gw;
        int r;

        if ((r = get_object(x, parent, o)) < 0 || (r = check_keys(x, parent, o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "pci"))) {
                join_key(key, parent, "pci");
                if (!json_is_string(v) || json_string_length(v) >= sizeof(e.pci) ||
                    !parse_is_pci_addr(json_string_value(v)))
                        return fail(x, -EINVAL, key, v, "expected a PCI address such as \"0000:00:06.0\"");
                snprintf(e.pci, sizeof(e.pci), "%s", json_string_value(v));
        }
        if ((v = json_object_get(o, "mac"))) {
                join_key(key, parent, "mac");
                if (!json_is_string(v) || parse_mac(json_string_value(v), e.mac) < 0)
                        return fail(x, -EINVAL, key, v, "expected a MAC address such as \"0a:1b:2c:3d:4e:5f\"");
                e.has_mac = true;
        }
        if (!e.pci[0] && !e.has_mac)
                return fail(x, -EINVAL, parent, NULL, "needs \"pci\" or \"mac\" (or both) to name its NIC");
        ip = json_object_get(o, "ipv4");
        gw = json_object_get(o, "gateway");
        join_key(key, parent, "ipv4");
        if (!ip)
                return fail(x, -EINVAL, key, NULL, "missing (the NIC's address, \"a.b.c.d/len\")");
        if (!json_is_string(ip) || strlen(json_string_value(ip)) != json_string_length(ip))
                return fail(x, -EINVAL, key, ip, "expected \"a.b.c.d/len\"");
        /* the address first, alone: its message is the ipv4 key's */
        if (nic_addr_static_parse(json_string_value(ip), NULL, &e, msg, sizeof(msg)) < 0)
                return fail(x, -EINVAL, key, NULL, "%s", strncmp(msg, "ipv4: ", 6) == 0 ? msg + 6 : msg);
        if (gw) {
                join_key(key, parent, "gateway");
                if (!json_is_string(gw) || strlen(json_string_value(gw)) != json_string_length(gw))
                        return fail(x, -EINVAL, key, gw, "expected \"a.b.c.d\"");
                if (nic_addr_static_parse(json_string_value(ip), json_string_value(gw), &e, msg, sizeof(msg)) < 0)
                        return fail(x, -EINVAL, key, NULL, "%s", strncmp(msg, "gateway: ", 9) == 0 ? msg + 9 : msg);
        }
        *ret = e;
        return 0;
}

static int parse_addresses(ctx *x, const json_t *o, config *c)
{
        static const char *const keys[] = {"sources", "static", NULL};
        char key[KEY_LEN], other[IPV4_STR_MAX];
        json_t *v, *e;
        size_t i;
        int r;

        if ((r = get_object(x, "addresses", o)) < 0 || (r = check_keys(x, "addresses", o, keys)) < 0)
                return r;
        if ((v = json_object_get(o, "sources"))) {
                if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > _CONFIG_ADDR_SOURCE_MAX)
                        return fail(x, -EINVAL, "addresses.sources", v,
                                    "expected an array of \"static\" and/or \"metadata\", in the order to ask them");
                c->addresses.n_sources = 0;
                json_array_foreach(v, i, e) {
                        int s = -1;
                        snprintf(key, sizeof(key), "addresses.sources[%zu]", i);
                        for (int j = 0; j < _CONFIG_ADDR_SOURCE_MAX; j++)
                                if (json_is_string(e) && strcmp(json_string_value(e), addr_source_names[j]) == 0)
                                        s = j;
                        if (s < 0)
                                return fail(x, -EINVAL, key, e, "expected \"static\" or \"metadata\"");
                        for (size_t k = 0; k < c->addresses.n_sources; k++)
                                if (c->addresses.sources[k] == (config_addr_source)s)
                                        return fail(x, -EINVAL, key, e, "listed twice");
                        c->addresses.sources[c->addresses.n_sources++] = (config_addr_source)s;
                }
        }
        if ((v = json_object_get(o, "static"))) {
                if ((r = get_array(x, "addresses.static", v, CONFIG_MAX_ADDRESSES)) < 0)
                        return r;
                c->addresses.n_entries = 0;
                json_array_foreach(v, i, e) {
                        nic_addr_static *n = &c->addresses.entries[c->addresses.n_entries];
                        char ekey[40]; /* short: its own keys are joined to it */
                        snprintf(ekey, sizeof(ekey), "addresses.static[%zu]", i);
                        snprintf(key, sizeof(key), "%s", ekey);
                        if ((r = parse_addr_entry(x, ekey, e, n)) < 0)
                                return r;
                        for (size_t k = 0; k < c->addresses.n_entries; k++) {
                                const nic_addr_static *p = &c->addresses.entries[k];
                                if (strcmp(p->pci, n->pci) == 0 && p->has_mac == n->has_mac &&
                                    (!n->has_mac || memcmp(p->mac, n->mac, 6) == 0))
                                        return fail(x, -EINVAL, key, NULL,
                                                    "names the same NIC as addresses.static[%zu]", k);
                                if (p->ipv4.addr == n->ipv4.addr) {
                                        snprintf(key, sizeof(key), "addresses.static[%zu].ipv4", i);
                                        return fail(x, -EINVAL, key, NULL, "%s is already the address of addresses.static[%zu]",
                                                    ipv4_format(n->ipv4.addr, other), k);
                                }
                        }
                        c->addresses.n_entries++;
                }
        }
        return 0;
}

int config_parse(const char *text, size_t len, config *ret, char *err, size_t err_size)
{
        static const char *const keys[] = {"resource_prefix", "nics", "binding", "hugepages",
                                           "hugetlbfs", "cores", "tuning", "kernel_args", "cdi", "addresses",
                                           NULL};
        ctx x = {err, err_size};
        json_error_t jerr;
        json_t *v;
        int r;

        if (err && err_size)
                err[0] = '\0';
        if (!text || !ret)
                return -EINVAL;
        if (len > CONFIG_MAX_TEXT) {
                if (err && err_size)
                        snprintf(err, err_size, "config: %zu bytes, more than the limit of %d", len,
                                 CONFIG_MAX_TEXT);
                return -E2BIG;
        }
        json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                if (err && err_size)
                        snprintf(err, err_size, "config: not valid JSON: %s (line %d, column %d)",
                                 jerr.text, jerr.line, jerr.column);
                return -EINVAL;
        }
        config *c = malloc(sizeof(*c));
        if (!c) {
                json_decref(root);
                return -ENOMEM;
        }
        config_init(c);
        if (!json_is_object(root)) {
                r = fail(&x, -EINVAL, "", root, "expected the config to be a JSON object");
                goto out;
        }
        if ((r = check_keys(&x, "", root, keys)) < 0)
                goto out;
        if ((v = json_object_get(root, "resource_prefix"))) {
                if ((r = get_string(&x, "resource_prefix", v, c->resource_prefix,
                                    sizeof(c->resource_prefix))) < 0)
                        goto out;
                if (!valid_prefix(c->resource_prefix)) {
                        r = fail(&x, -EINVAL, "resource_prefix", v, "expected a DNS subdomain such as \"spinlane.io\"");
                        goto out;
                }
        }
        if ((v = json_object_get(root, "nics")) && (r = parse_nics(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "binding")) && (r = parse_binding(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "hugepages")) && (r = parse_hugepages(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "hugetlbfs")) && (r = parse_hugetlbfs(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "cores")) && (r = parse_cores(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "tuning")) && (r = parse_tuning(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "kernel_args")) && (r = parse_kernel_args(&x, v, c)) < 0)
                goto out;
        if ((v = json_object_get(root, "cdi")) && (r = parse_cdi(&x, v, c)) < 0)
                goto out;
        /* The arguments isolate the cores of cores.cpus: without it there is nothing to
         * isolate, and guessing the housekeeping CPUs is not the agent's call. */
        if (c->kernel_args.manage && !c->cores.have_cpus) {
                r = fail(&x, -EINVAL, "kernel_args.manage", NULL,
                         "needs \"cores.cpus\" (the whole cores to isolate at boot; the rest stay housekeeping)");
                goto out;
        }
        if ((v = json_object_get(root, "addresses")) && (r = parse_addresses(&x, v, c)) < 0)
                goto out;
        *ret = *c;
        r = 0;
out:
        json_decref(root);
        free(c);
        return r;
}

static json_t *page_size_json(uint64_t kb)
{
        char buf[32];
        format_size_kb(kb, SIZE_UNITS_CONFIG, buf, sizeof(buf));
        return json_string(buf);
}

json_t *config_to_json(const config *c)
{
        char buf[CPUSET_MAX * 6];
        json_t *kinds = json_array(), *ids = json_array(), *pci = json_array(),
               *ifs = json_array(), *huge = json_array();

        for (int k = 0; k < _CONFIG_KIND_MAX; k++)
                if (c->nics.kinds[k])
                        json_array_append_new(kinds, json_string(kind_names[k]));
        for (size_t i = 0; i < c->nics.n_ids; i++)
                json_array_append_new(ids, json_sprintf("%04x:%04x", c->nics.ids[i].vendor, c->nics.ids[i].device));
        for (size_t i = 0; i < c->nics.n_pci; i++)
                json_array_append_new(pci, json_string(c->nics.pci[i]));
        for (size_t i = 0; i < c->nics.n_interfaces; i++)
                json_array_append_new(ifs, json_string(c->nics.interfaces[i]));
        for (size_t i = 0; i < c->n_huge; i++) {
                json_t *per = json_object();
                for (int n = 0; n < CONFIG_MAX_NUMA; n++)
                        if (c->huge[i].want[n]) {
                                char k[8];
                                snprintf(k, sizeof(k), "%d", n);
                                json_object_set_new(per, k, json_integer((json_int_t)c->huge[i].pages[n]));
                        }
                json_array_append_new(huge, json_pack("{s:o,s:o}", "page_size", page_size_json(c->huge[i].size_kb),
                                                      "per_node", per));
        }
        json_t *hugetlbfs = json_pack("{s:b,s:s,s:b}", "mount", c->hugetlbfs.mount, "mount_point",
                                      c->hugetlbfs.mount_point, "pod_mount", c->hugetlbfs.pod_mount);
        if (hugetlbfs && c->hugetlbfs.page_size_kb)
                json_object_set_new(hugetlbfs, "page_size", page_size_json(c->hugetlbfs.page_size_kb));
        json_t *cores = json_object();
        if (cores && c->cores.have_cpus) {
                cpuset_format(&c->cores.cpus, buf, sizeof(buf));
                json_object_set_new(cores, "cpus", json_string(buf));
        }
        json_t *sources = json_array(), *entries = json_array();
        for (size_t i = 0; i < c->addresses.n_sources; i++)
                json_array_append_new(sources, json_string(config_addr_source_name(c->addresses.sources[i])));
        for (size_t i = 0; i < c->addresses.n_entries; i++) {
                const nic_addr_static *e = &c->addresses.entries[i];
                char cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX], mac[18];
                json_t *o = json_pack("{s:s}", "ipv4", ipv4_cidr_format(e->ipv4, cidr));
                if (!o)
                        continue;
                if (e->pci[0])
                        json_object_set_new(o, "pci", json_string(e->pci));
                if (e->has_mac) {
                        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", e->mac[0], e->mac[1], e->mac[2],
                                 e->mac[3], e->mac[4], e->mac[5]);
                        json_object_set_new(o, "mac", json_string(mac));
                }
                if (e->gateway)
                        json_object_set_new(o, "gateway", json_string(ipv4_format(e->gateway, gw)));
                json_array_append_new(entries, o);
        }
        return json_pack("{s:s, s:{s:o,s:o,s:o,s:o,s:i}, s:{s:s,s:b}, s:o, s:o, s:o, s:{s:b,s:o,s:b}, s:{s:b}, "
                         "s:{s:b,s:s}, s:{s:o,s:o}}",
                         "resource_prefix", c->resource_prefix,
                         "nics", "kinds", kinds, "ids", ids, "pci", pci, "interfaces", ifs, "max",
                         (int)c->nics.max_count,
                         "binding", "ena", config_driver_name(c->binding.ena), "mana_netdev_down",
                         c->binding.mana_netdev_down,
                         "hugepages", huge, "hugetlbfs", hugetlbfs, "cores", cores,
                         "tuning", "interrupt_moderation_off", c->tuning.interrupt_moderation_off,
                         "irq_core", c->tuning.irq_core < 0 ? json_null() : json_integer(c->tuning.irq_core),
                         "reapply_on_reset", c->tuning.reapply_on_reset,
                         "kernel_args", "manage", c->kernel_args.manage,
                         "cdi", "enabled", c->cdi.enabled, "spec_dir", c->cdi.spec_dir,
                         "addresses", "sources", sources, "static", entries);
}

bool config_equal(const config *a, const config *b)
{
        json_t *ja = config_to_json(a), *jb = config_to_json(b);
        bool eq = ja && jb && json_equal(ja, jb);
        json_decref(ja);
        json_decref(jb);
        return eq;
}
