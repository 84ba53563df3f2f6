/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice builder (agent/dra/dra-slice.h, over the device map through
 * dra-publish.h) on the fixture node trees of tests/fixtures/make-node.py: the devices and
 * attributes of eks-x86 (ENAs on vfio-pci, SMT cores) and aks-mana (MANA VFs, Azure
 * sibling numbering), Kubernetes' standard attributes beside spinlane's, a NIC going
 * unhealthy leaving the slice (its generation would go up), a re-scan of the same node
 * changing nothing, the resources served through DRA, the names, and 200 cores split
 * into a pool of two slices of at most 128 devices.
 * With --write DIR it also writes DIR/<fixture>.json, the slice of each fixture, for the
 * CEL test (tests/helm/test-dra-cel.sh): the attributes it evaluates come from here. */
#include "config.h"
#include "device-map.h"
#include "dra-publish.h"
#include "dra-slice.h"
#include "fixture.h"
#include "addresses.h"
#include "inventory.h"
#include "select.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[1024];

/* Static addresses for the NICs the fixtures leave DPDK-ready (a NIC is Healthy only
 * with a known address). */
static const char cfg_json[] =
        "{\"addresses\":{\"static\":["
        "{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.23/24\",\"gateway\":\"10.0.1.1\"},"
        "{\"pci\":\"0000:00:07.0\",\"ipv4\":\"10.0.2.23/24\"},"
        "{\"pci\":\"8a3c:00:00.0\",\"ipv4\":\"10.1.0.5/24\"}]}}";

typedef struct scanned {
        hostfs h;
        config cfg;
        inventory *inv;
        selection sel;
        device_map map;
} scanned;

static void scan(scanned *s, const char *name, const device_map *prev)
{
        char root[1200], err[256];
        snprintf(root, sizeof(root), "%s/%s", dir, name);
        memset(s, 0, sizeof(*s));
        CHECK_INT(hostfs_init(&s->h, root), 0);
        CHECK_INT(config_parse(cfg_json, strlen(cfg_json), &s->cfg, err, sizeof(err)), 0);
        CHECK_INT(inventory_scan(&s->h, &s->inv), 0);
        if (!s->inv)
                exit(1);
        addresses_apply(s->inv, &(addresses_options){ .cfg = &s->cfg });
        CHECK_INT(selection_new(&s->cfg, s->inv, NULL, &s->sel), 0);
        CHECK_INT(device_map_build(&s->sel, prev, &s->map), 0);
}

static void scanned_free(scanned *s)
{
        device_map_free(&s->map);
        selection_free(&s->sel);
        inventory_free(s->inv);
}

static json_t *devices(const scanned *s, dra_resources res, size_t *left)
{
        json_t *d = NULL;
        char why[DRA_WHY_LEN];
        CHECK_INT(dra_slice_devices(&s->map, res, &d, left, why, sizeof(why)), 0);
        CHECK(d != NULL);
        return d;
}

static const json_t *dev(const json_t *devs, const char *name)
{
        size_t i;
        json_t *d;
        json_array_foreach(devs, i, d) if (strcmp(json_string_value(json_object_get(d, "name")), name) == 0) return d;
        return NULL;
}

static const char *astr(const json_t *d, const char *attr)
{
        json_t *a = json_object_get(json_object_get(d, "attributes"), attr);
        CHECK_INT(json_object_size(a), 1); /* exactly one of int, bool, string, version */
        return json_string_value(json_object_get(a, "string"));
}

static long long aint(const json_t *d, const char *attr)
{
        json_t *a = json_object_get(json_object_get(d, "attributes"), attr);
        CHECK_INT(json_object_size(a), 1);
        CHECK(json_is_integer(json_object_get(a, "int")));
        return (long long)json_integer_value(json_object_get(a, "int"));
}

static void write_slice(const char *out, const char *name, const scanned *s)
{
        size_t left = 9;
        json_t *d = devices(s, (dra_resources){ true, true }, &left);
        json_t *sl = dra_slice_json(name, d, 1, NULL);
        char path[1400];
        CHECK(sl != NULL);
        snprintf(path, sizeof(path), "%s/%s.json", out, name);
        CHECK_INT(json_dump_file(sl, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
        json_decref(sl);
        json_decref(d);
}

static void test_eks(void)
{
        scanned s;
        size_t left = 9;
        scan(&s, "eks-x86", NULL);
        json_t *d = devices(&s, (dra_resources){ true, true }, &left);
        CHECK_INT(left, 0);
        /* the primary 00:05.0 is not published; 06.0 and 07.0 are, then cores 2..7 */
        CHECK_INT(json_array_size(d), 2 + 6);
        CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0), "name")), "nic-0000-00-06-0");
        CHECK_STR(json_string_value(json_object_get(json_array_get(d, 1), "name")), "nic-0000-00-07-0");
        CHECK(dev(d, "nic-0000-00-05-0") == NULL);
        const json_t *n = dev(d, "nic-0000-00-06-0");
        CHECK(n != NULL);
        if (n) {
                CHECK_STR(astr(n, "type"), "dpdk-nic");
                CHECK_STR(astr(n, "kind"), "ena");
                CHECK_STR(astr(n, "pciAddress"), "0000:00:06.0");
                CHECK_INT(aint(n, "numaNode"), 0);
                CHECK_STR(astr(n, "ipv4"), "10.0.1.23");
                CHECK_STR(astr(n, "resource.kubernetes.io/pcieRoot"), "pci0000:00");
                CHECK(json_object_get(json_object_get(n, "attributes"), "mtu") == NULL); /* on vfio-pci: no netdev */
                /* Kubernetes' standard attributes, beside spinlane's own */
                CHECK_STR(astr(n, "resource.kubernetes.io/pciBusID"), "0000:00:06.0");
                CHECK_INT(aint(n, "resource.kubernetes.io/numaNode"), 0);
                CHECK_INT(json_object_size(json_object_get(n, "attributes")), 6 + 2);
        }
        const json_t *c = dev(d, "core-p0c2");
        CHECK(c != NULL);
        if (c) {
                CHECK_STR(astr(c, "type"), "isolated-core");
                CHECK_STR(astr(c, "core"), "p0c2");
                CHECK_STR(astr(c, "cpus"), "2,10");
                CHECK_INT(aint(c, "numaNode"), 0);
                CHECK_INT(aint(c, "resource.kubernetes.io/numaNode"), 0);
                CHECK(json_object_get(json_object_get(c, "attributes"), "resource.kubernetes.io/pciBusID") == NULL);
                CHECK_INT(json_object_size(json_object_get(c, "attributes")), 4 + 1);
        }
        CHECK(dev(d, "core-p0c0") == NULL); /* not isolated */
        CHECK(dev(d, "core-p0c7") != NULL);

        /* only the resources served through DRA */
        json_t *nics = devices(&s, (dra_resources){ true, false }, NULL);
        json_t *cores = devices(&s, (dra_resources){ false, true }, NULL);
        json_t *none = devices(&s, (dra_resources){ false, false }, NULL);
        CHECK_INT(json_array_size(nics), 2);
        CHECK_INT(json_array_size(cores), 6);
        CHECK_INT(json_array_size(none), 0);
        CHECK(dra_devices_differ(nics, d));
        CHECK(!dra_devices_differ(none, NULL));

        /* the whole object */
        json_t *sl = dra_slice_json("ip-10-0-1-23.ec2.internal", d, 3, "42");
        CHECK(sl != NULL);
        char *text = json_dumps(sl, JSON_SORT_KEYS | JSON_COMPACT);
        CHECK(text != NULL);
        CHECK(strstr(text ? text : "", "\"apiVersion\":\"resource.k8s.io/v1\"") != NULL);
        CHECK(strstr(text ? text : "", "\"metadata\":{\"name\":\"ip-10-0-1-23.ec2.internal-spinlane.io\","
                                       "\"resourceVersion\":\"42\"}") != NULL);
        CHECK(strstr(text ? text : "", "\"driver\":\"spinlane.io\",\"nodeName\":\"ip-10-0-1-23.ec2.internal\","
                                       "\"pool\":{\"generation\":3,\"name\":\"ip-10-0-1-23.ec2.internal\","
                                       "\"resourceSliceCount\":1}") != NULL);
        free(text);
        CHECK(!dra_devices_differ(json_object_get(json_object_get(sl, "spec"), "devices"), d));
        json_decref(sl);
        sl = dra_slice_json("n", d, 1, NULL);
        CHECK(sl && !json_object_get(json_object_get(sl, "metadata"), "resourceVersion"));
        json_decref(sl);

        /* the same node scanned again: the same list, no new generation */
        scanned again;
        scan(&again, "eks-x86", &s.map);
        json_t *d2 = devices(&again, (dra_resources){ true, true }, NULL);
        CHECK(!dra_devices_differ(d, d2));

        /* 00:06.0 loses its vfio group node: Unhealthy in the map, gone from the slice */
        char p[1400];
        snprintf(p, sizeof(p), "%s/eks-x86/dev/vfio/noiommu-0", dir);
        CHECK_INT(unlink(p), 0);
        scanned sick;
        scan(&sick, "eks-x86", &again.map);
        const device_entry *e = device_map_find(&sick.map, DEVICE_NIC, "0000:00:06.0");
        CHECK(e && e->state == DEVICE_UNHEALTHY);
        json_t *d3 = devices(&sick, (dra_resources){ true, true }, NULL);
        CHECK_INT(json_array_size(d3), 1 + 6);
        CHECK(dev(d3, "nic-0000-00-06-0") == NULL);
        CHECK(dev(d3, "nic-0000-00-07-0") != NULL);
        CHECK(dra_devices_differ(d2, d3));

        json_decref(d);
        json_decref(d2);
        json_decref(d3);
        json_decref(nics);
        json_decref(cores);
        json_decref(none);
        scanned_free(&sick);
        scanned_free(&again);
        scanned_free(&s);
}

static void test_mana(void)
{
        scanned s;
        size_t left = 9;
        scan(&s, "aks-mana", NULL);
        json_t *d = devices(&s, (dra_resources){ true, true }, &left);
        CHECK_INT(left, 0);
        /* 7870:00:00.0 is the primary (eth0's VF); 8a3c:00:00.0 is published */
        CHECK(dev(d, "nic-7870-00-00-0") == NULL);
        const json_t *n = dev(d, "nic-8a3c-00-00-0");
        CHECK(n != NULL);
        if (n) {
                CHECK_STR(astr(n, "kind"), "mana");
                CHECK_STR(astr(n, "pciAddress"), "8a3c:00:00.0");
                CHECK_STR(astr(n, "ipv4"), "10.1.0.5");
                CHECK_INT(aint(n, "mtu"), 9001); /* MANA stays on its kernel driver: its netdev's MTU */
                /* Hyper-V vPCI: each VF on a root of its own domain */
                CHECK_STR(astr(n, "resource.kubernetes.io/pcieRoot"), "pci8a3c:00");
                CHECK_STR(astr(n, "resource.kubernetes.io/pciBusID"), "8a3c:00:00.0");
                /* Hyper-V vPCI: numa_node -1, so no standard numaNode (spinlane's says -1) */
                if (aint(n, "numaNode") < 0)
                        CHECK(json_object_get(json_object_get(n, "attributes"), "resource.kubernetes.io/numaNode") ==
                              NULL);
                else
                        CHECK_INT(aint(n, "resource.kubernetes.io/numaNode"), aint(n, "numaNode"));
        }
        const json_t *c = dev(d, "core-p0c1");
        CHECK(c != NULL);
        if (c)
                CHECK_STR(astr(c, "cpus"), "2-3"); /* Azure numbering: siblings 2 and 3 */
        CHECK(dev(d, "core-p0c0") == NULL);
        CHECK_INT(json_array_size(d), 1 + 3); /* cores p0c1..p0c3 (CPUs 2-7) */
        json_decref(d);
        scanned_free(&s);
}

static void test_names(void)
{
        char b[80], longid[80];
        CHECK_INT(dra_nic_device_name("0000:00:06.0", b, sizeof(b)), 0);
        CHECK_STR(b, "nic-0000-00-06-0");
        CHECK_INT(dra_core_device_name("p0c3", b, sizeof(b)), 0);
        CHECK_STR(b, "core-p0c3");
        CHECK_INT(dra_core_device_name("p0c3-cpu5", b, sizeof(b)), 0);
        CHECK_STR(b, "core-p0c3-cpu5");
        CHECK_INT(dra_core_device_name("P0C3", b, sizeof(b)), -EINVAL); /* not lower case */
        CHECK_INT(dra_core_device_name("p0c3-", b, sizeof(b)), -EINVAL);
        memset(longid, 'a', 59);
        longid[59] = '\0';
        CHECK_INT(dra_core_device_name(longid, b, sizeof(b)), -ENAMETOOLONG); /* 5 + 59 > 63 */
        longid[58] = '\0';
        CHECK_INT(dra_core_device_name(longid, b, sizeof(b)), 0);
        CHECK_INT(dra_slice_name("node-1", b, sizeof(b)), 0);
        CHECK_STR(b, "node-1-spinlane.io");
        CHECK_INT(dra_slice_name("", b, sizeof(b)), -EINVAL);
        char node[300], name[300];
        memset(node, 'n', 241);
        node[241] = '\0'; /* 241 + 12 = 253 */
        CHECK_INT(dra_slice_name(node, name, sizeof(name)), 0);
        node[241] = 'n';
        node[242] = '\0';
        CHECK_INT(dra_slice_name(node, name, sizeof(name)), -ENAMETOOLONG);
        CHECK(dra_slice_json(node, NULL, 1, NULL) == NULL);
}

/* 200 isolated cores: one pool of two slices (128 + 72), every core published once,
 * resourceSliceCount 2 and one generation on both; a core of unknown NUMA node has no
 * standard numaNode. */
static void test_pool(void)
{
        static const char node[] = "ip-10-0-1-23.ec2.internal";
        inventory *inv = calloc(1, sizeof(*inv));
        device_map m = { 0 };
        bool seen[200] = { false };
        size_t total = 0;
        CHECK(inv != NULL);
        if (!inv)
                exit(1);
        inv->cores = calloc(200, sizeof(*inv->cores));
        m.items = calloc(200, sizeof(*m.items));
        CHECK(inv->cores && m.items);
        if (!inv->cores || !m.items)
                exit(1);
        inv->n_cores = m.n = 200;
        for (size_t i = 0; i < 200; i++) {
                inv_core *c = &inv->cores[i];
                snprintf(c->id, sizeof(c->id), "p0c%zu", i);
                c->numa_node = i < 190 ? (int)(i / 100) : -1;
                cpuset_set(&c->cpus, (unsigned)i);
                /* the map's values as device_map_build makes them of this core */
                m.items[i] = (device_entry){ .kind = DEVICE_CORE, .index = (long)i, .state = DEVICE_HEALTHY,
                                             .numa_node = c->numa_node, .cpus = c->cpus };
                snprintf(m.items[i].id, sizeof(m.items[i].id), "%s", c->id);
        }
        json_t *d = NULL;
        size_t left = 9;
        char why[DRA_WHY_LEN];
        CHECK_INT(dra_slice_devices(&m, (dra_resources){ true, true }, &d, &left, why, sizeof(why)), 0);
        CHECK_INT(left, 0);
        CHECK_INT(json_array_size(d), 200);
        CHECK_INT(dra_pool_slices(d), 2);
        CHECK_INT(dra_pool_slices(NULL), 0);
        for (size_t i = 0; i < 2; i++) {
                char want_name[300];
                snprintf(want_name, sizeof(want_name), i == 0 ? "%s-spinlane.io" : "%s-spinlane.io-1", node);
                json_t *chunk = dra_pool_chunk(d, i);
                CHECK(chunk != NULL);
                CHECK_INT(json_array_size(chunk), i == 0 ? 128 : 72);
                json_t *sl = dra_slice_json_at(node, i, dra_pool_slices(d), chunk, 5, NULL);
                CHECK(sl != NULL);
                if (!sl)
                        exit(1);
                json_t *spec = json_object_get(sl, "spec"), *pool = json_object_get(spec, "pool");
                CHECK_STR(json_string_value(json_object_get(json_object_get(sl, "metadata"), "name")), want_name);
                CHECK_INT(json_integer_value(json_object_get(pool, "resourceSliceCount")), 2);
                CHECK_INT(json_integer_value(json_object_get(pool, "generation")), 5);
                CHECK_STR(json_string_value(json_object_get(pool, "name")), node);
                json_t *devs = json_object_get(spec, "devices");
                CHECK(json_array_size(devs) <= DRA_SLICE_MAX_DEVICES);
                size_t k;
                json_t *x;
                json_array_foreach(devs, k, x) {
                        unsigned id = 999;
                        CHECK_INT(sscanf(json_string_value(json_object_get(x, "name")), "core-p0c%u", &id), 1);
                        CHECK(id < 200 && !seen[id]);
                        if (id < 200)
                                seen[id] = true;
                        total++;
                }
                /* what the API server would give back reads as one slice of a pool of two */
                dra_slice_seen got = { 0 };
                char pwhy[256];
                CHECK_INT(json_object_set_new(json_object_get(sl, "metadata"), "resourceVersion", json_string("7")), 0);
                char *text = json_dumps(sl, JSON_COMPACT);
                CHECK(text != NULL);
                if (!text)
                        exit(1);
                CHECK_INT(dra_slice_parse(text, strlen(text), node, &got, pwhy, sizeof(pwhy)), 0);
                CHECK(got.pool_ours && !got.ours);
                CHECK_INT(got.slice_count, 2);
                CHECK(!dra_devices_differ(got.devices, chunk));
                dra_slice_seen_clear(&got);
                free(text);
                json_decref(sl);
                json_decref(chunk);
        }
        CHECK_INT(total, 200);
        for (size_t i = 0; i < 200; i++)
                CHECK(seen[i]);
        /* past the end */
        json_t *past = dra_pool_chunk(d, 2);
        CHECK(past && json_array_size(past) == 0);
        json_decref(past);
        CHECK(dra_slice_json_at(node, 2, 2, NULL, 5, NULL) == NULL);
        CHECK(dra_slice_json_at(node, 0, 0, NULL, 5, NULL) == NULL);
        CHECK(dra_slice_json_at(node, 0, DRA_POOL_MAX_SLICES + 1, NULL, 5, NULL) == NULL);
        char nm[300];
        CHECK_INT(dra_slice_name_at(node, 31, nm, sizeof(nm)), 0);
        CHECK_STR(nm, "ip-10-0-1-23.ec2.internal-spinlane.io-31");
        CHECK_INT(dra_slice_name_at(node, 32, nm, sizeof(nm)), -EINVAL);
        /* the standard numaNode: where known only */
        const json_t *c150 = dev(d, "core-p0c150"), *c195 = dev(d, "core-p0c195");
        CHECK(c150 && c195);
        if (c150 && c195) {
                CHECK_INT(aint(c150, "resource.kubernetes.io/numaNode"), 1);
                CHECK_INT(aint(c195, "numaNode"), -1);
                CHECK(json_object_get(json_object_get(c195, "attributes"), "resource.kubernetes.io/numaNode") == NULL);
        }
        json_decref(d);
        free(m.items);
        free(inv->cores);
        free(inv);
}

/* --dra-resources, the daemon's flag */
static void test_resources(void)
{
        static const struct {
                const char *list;
                int r;
                bool nic, core;
        } opts[] = {
                { "", 0, false, false },      { "nic", 0, true, false },   { "core", 0, false, true },
                { "nic,core", 0, true, true }, { "core,nic", 0, true, true }, { "nic,nic", -EINVAL, 0, 0 },
                { "nic,", -EINVAL, 0, 0 },    { ",nic", -EINVAL, 0, 0 },   { "gpu", -EINVAL, 0, 0 },
                { "nics", -EINVAL, 0, 0 },    { "NIC", -EINVAL, 0, 0 },    { "nic,,core", -EINVAL, 0, 0 },
        };
        for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
                dra_resources res = { true, true };
                char why[DRA_WHY_LEN] = "";
                int r = dra_resources_parse(opts[i].list, &res, why, sizeof(why));
                CHECK_INT(r, opts[i].r);
                if (r == 0)
                        CHECK(res.nic == opts[i].nic && res.core == opts[i].core);
                else
                        CHECK(res.nic && res.core && why[0]); /* untouched, and said why */
        }
}

int main(int argc, char **argv)
{
        const char *out = argc == 3 && strcmp(argv[1], "--write") == 0 ? argv[2] : NULL;
        fixture_make(dir, sizeof(dir), "eks-x86 aks-mana graviton");
        if (out) { /* the slices as published, for the CEL test */
                static const char *const names[] = { "eks-x86", "aks-mana", "graviton" };
                for (size_t i = 0; i < 3; i++) {
                        scanned s;
                        scan(&s, names[i], NULL);
                        write_slice(out, names[i], &s);
                        scanned_free(&s);
                }
        } else {
                test_names();
                test_resources();
                test_pool();
                test_mana();
                test_eks(); /* last: it removes a device node of the tree */
        }
        fixture_remove(dir);
        return test_done();
}
