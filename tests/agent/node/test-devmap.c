/* SPDX-License-Identifier: Apache-2.0 */
/* The device map and the selection under it, table-driven: one node (a primary, ENAs
 * ready, unaddressed, used by the node, on the kernel driver, of unknown use, a virtio
 * NIC, a MANA VF; cores isolated, not, split), each row a config and what the kubelet
 * was told before, and for every device the state and the one reason expected. */
#include "config.h"
#include "device-map.h"
#include "inventory.h"
#include "select.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRIM "0000:00:05.0"
#define ENA1 "0000:00:06.0" /* vfio-pci, address known */
#define ENA2 "0000:00:07.0" /* vfio-pci, no address; id 1d0f:ec21 */
#define ENA3 "0000:00:08.0" /* ena, the node uses it */
#define ENA4 "0000:00:09.0" /* ena, free: preparation would bind it */
#define ENA5 "0000:00:0a.0" /* ena, whether the node uses it is unknown */
#define VIRT "0000:00:0b.0" /* virtio on vfio-pci, address known */
#define MANA "7870:00:00.0" /* mana VF, used by the node (DPDK shares it), address known */

static void nic(inventory *inv, const char *pci, uint16_t dev, inv_nic_kind kind, const char *driver,
                const char *netdev, int in_use, bool ready, inv_addr_state addr)
{
        inv_nic *n = &inv->nics[inv->n_nics++];
        memset(n, 0, sizeof(*n));
        snprintf(n->pci, sizeof(n->pci), "%s", pci);
        n->vendor = kind == INV_NIC_MANA ? 0x1414 : kind == INV_NIC_ENA ? 0x1d0f : 0x1af4;
        n->device = dev;
        n->kind = kind;
        snprintf(n->driver, sizeof(n->driver), "%s", driver);
        snprintf(n->netdev, sizeof(n->netdev), "%s", netdev);
        n->in_use = in_use;
        snprintf(n->in_use_reason, sizeof(n->in_use_reason), "%s",
                 in_use > 0 ? "eth has address 10.0.0.9/24" : in_use < 0 ? "rtnetlink does not know it" : "");
        n->dpdk_ready = ready;
        snprintf(n->dpdk_reason, sizeof(n->dpdk_reason), "%s", ready ? "bound to vfio-pci" : "bound to the kernel driver");
        n->addr.state = addr;
        if (addr == INV_ADDR_KNOWN) {
                n->addr.ipv4 = 0x0a000600 + inv->n_nics;
                n->addr.prefix_len = 24;
                snprintf(n->addr.source, sizeof(n->addr.source), "static");
        } else {
                snprintf(n->addr.why, sizeof(n->addr.why), "its MAC is not recorded");
        }
}

static void core(inventory *inv, size_t i, const char *id, int a, int b, bool isolated, bool split)
{
        inv_core *c = &inv->cores[i];
        memset(c, 0, sizeof(*c));
        snprintf(c->id, sizeof(c->id), "%s", id);
        cpuset_set(&c->cpus, (unsigned)a);
        cpuset_set(&c->cpus, (unsigned)b);
        c->isolated = isolated;
        c->split = split;
        if (isolated || split)
                cpuset_set(&inv->isolated, (unsigned)a);
        if (isolated)
                cpuset_set(&inv->isolated, (unsigned)b);
        cpuset_set(&inv->online, (unsigned)a);
        cpuset_set(&inv->online, (unsigned)b);
}

static inventory *node(void)
{
        inventory *inv = calloc(1, sizeof(*inv));
        CHECK(inv != NULL);
        if (!inv)
                exit(1);
        nic(inv, PRIM, 0xec20, INV_NIC_ENA, "ena", "eth0", 1, false, INV_ADDR_UNRESOLVED);
        inv->nics[0].primary = true;
        inv->nics[0].default_metric = 100;
        nic(inv, ENA1, 0xec20, INV_NIC_ENA, "vfio-pci", "", 0, true, INV_ADDR_KNOWN);
        nic(inv, ENA2, 0xec21, INV_NIC_ENA, "vfio-pci", "", 0, true, INV_ADDR_FAILED);
        nic(inv, ENA3, 0xec20, INV_NIC_ENA, "ena", "eth3", 1, false, INV_ADDR_UNRESOLVED);
        nic(inv, ENA4, 0xec20, INV_NIC_ENA, "ena", "eth4", 0, false, INV_ADDR_UNRESOLVED);
        nic(inv, ENA5, 0xec20, INV_NIC_ENA, "ena", "eth5", -1, false, INV_ADDR_UNRESOLVED);
        nic(inv, VIRT, 0x1041, INV_NIC_OTHER, "vfio-pci", "", 0, true, INV_ADDR_KNOWN);
        nic(inv, MANA, 0x00ba, INV_NIC_MANA, "mana", "eth9", 1, true, INV_ADDR_KNOWN);
        inv->cores = calloc(4, sizeof(*inv->cores));
        CHECK(inv->cores != NULL);
        if (!inv->cores)
                exit(1);
        inv->n_cores = 4;
        inv->have_isolated = inv->have_online = true;
        core(inv, 0, "p0c0", 0, 4, false, false);
        core(inv, 1, "p0c1", 1, 5, true, false);
        core(inv, 2, "p0c2", 2, 6, false, true);
        core(inv, 3, "p0c3", 3, 7, true, false);
        return inv;
}

static void node_free(inventory *inv)
{
        free(inv->cores);
        free(inv);
}

typedef struct row {
        const char *name;
        const char *config;
        /* what the kubelet was told before: "nic:ID" / "core:ID" entries, listed */
        const char *prev[4];
        /* "ID state reason", one per device in map order (NICs, cores, vanished) */
        const char *want[16];
        /* a piece of one device's line: "ID|text" */
        const char *line;
} row;

#define DEFAULT_CORES "p0c0 not-advertised not-isolated", "p0c1 healthy ok", "p0c2 not-advertised split", \
                      "p0c3 healthy ok"

static const row rows[] = {
        {"defaults", "{}", {NULL},
         {PRIM " not-advertised primary", ENA1 " healthy ok", ENA2 " unhealthy no-address", ENA3 " not-advertised in-use",
          ENA4 " not-advertised not-ready", ENA5 " not-advertised use-unknown", VIRT " not-advertised not-selected",
          MANA " healthy ok", DEFAULT_CORES},
         PRIM "|eth0 carries the node's default route (metric 100): never taken"},
        {"nics.max", "{\"nics\":{\"max\":1}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " healthy ok", ENA2 " not-advertised over-max",
          ENA3 " not-advertised over-max", ENA4 " not-advertised over-max", ENA5 " not-advertised over-max",
          VIRT " not-advertised not-selected", MANA " not-advertised over-max", DEFAULT_CORES},
         ENA2 "|nics.max is 1"},
        {"nics.pci", "{\"nics\":{\"pci\":[\"" PRIM "\",\"" ENA2 "\"]}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " not-advertised not-selected", ENA2 " unhealthy no-address",
          ENA3 " not-advertised not-selected", ENA4 " not-advertised not-selected",
          ENA5 " not-advertised not-selected", VIRT " not-advertised not-selected", MANA " not-advertised not-selected",
          DEFAULT_CORES},
         ENA1 "|nics.pci does not list " ENA1},
        {"nics.ids", "{\"nics\":{\"ids\":[\"1d0f:ec21\"]}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " not-advertised not-selected", ENA2 " unhealthy no-address",
          ENA3 " not-advertised not-selected", ENA4 " not-advertised not-selected",
          ENA5 " not-advertised not-selected", VIRT " not-advertised not-selected", MANA " not-advertised not-selected",
          DEFAULT_CORES},
         ENA1 "|nics.ids does not list its id 1d0f:ec20"},
        {"nics.interfaces", "{\"nics\":{\"interfaces\":[\"eth0\",\"eth4\"]}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " not-advertised not-selected", ENA2 " not-advertised not-selected",
          ENA3 " not-advertised not-selected", ENA4 " not-advertised not-ready",
          ENA5 " not-advertised not-selected", VIRT " not-advertised not-selected", MANA " not-advertised not-selected",
          DEFAULT_CORES},
         ENA4 "|ena eth4 on ena: not DPDK-ready: bound to the kernel driver"},
        {"nics.kinds other", "{\"nics\":{\"kinds\":[\"other\"]}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " not-advertised not-selected", ENA2 " not-advertised not-selected",
          ENA3 " not-advertised not-selected", ENA4 " not-advertised not-selected",
          ENA5 " not-advertised not-selected", VIRT " healthy ok", MANA " not-advertised not-selected", DEFAULT_CORES},
         ENA1 "|nics.kinds leaves out its kind (ena)"},
        {"cores.cpus", "{\"cores\":{\"cpus\":\"1,3,5\"}}", {NULL},
         {PRIM " not-advertised primary", ENA1 " healthy ok", ENA2 " unhealthy no-address", ENA3 " not-advertised in-use",
          ENA4 " not-advertised not-ready", ENA5 " not-advertised use-unknown", VIRT " not-advertised not-selected",
          MANA " healthy ok", "p0c0 not-advertised not-isolated", "p0c1 healthy ok", "p0c2 not-advertised split",
          "p0c3 not-advertised outside-cpus"},
         "p0c3|CPUs 3,7 are isolated, but cores.cpus leaves out 7"},
        /* the kubelet knows ENA1, a NIC that is gone and a core that is gone: ENA1, no
         * longer selected, and the two gone stay listed, Unhealthy; ENA3 it never knew */
        {"history", "{\"nics\":{\"pci\":[\"" ENA2 "\"]}}", {"nic:" ENA1, "nic:0000:00:1f.0", "core:p9c9", "core:p0c2"},
         {PRIM " not-advertised primary", ENA1 " unhealthy not-selected", ENA2 " unhealthy no-address",
          ENA3 " not-advertised not-selected", ENA4 " not-advertised not-selected",
          ENA5 " not-advertised not-selected", VIRT " not-advertised not-selected", MANA " not-advertised not-selected",
          "p0c0 not-advertised not-isolated", "p0c1 healthy ok", "p0c2 unhealthy split", "p0c3 healthy ok",
          "0000:00:1f.0 unhealthy vanished", "p9c9 unhealthy vanished"},
         "0000:00:1f.0|advertised before, gone from the node"},
};

static void prev_map(const row *r, device_map *ret)
{
        size_t n = 0;
        while (n < 4 && r->prev[n])
                n++;
        ret->items = calloc(n ? n : 1, sizeof(*ret->items));
        ret->n = n;
        CHECK(ret->items != NULL);
        for (size_t i = 0; ret->items && i < n; i++) {
                device_entry *e = &ret->items[i];
                bool isnic = strncmp(r->prev[i], "nic:", 4) == 0;
                e->kind = isnic ? DEVICE_NIC : DEVICE_CORE;
                snprintf(e->id, sizeof(e->id), "%s", strchr(r->prev[i], ':') + 1);
                e->state = DEVICE_HEALTHY;
                e->index = -1;
        }
}

static void test_row(const row *r)
{
        inventory *inv = node();
        config c;
        char err[256];
        selection sel = { 0 };
        device_map prev = { 0 }, m = { 0 };

        CHECK_INT(config_parse(r->config, strlen(r->config), &c, err, sizeof(err)), 0);
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        prev_map(r, &prev);
        CHECK_INT(device_map_build(&sel, r->prev[0] ? &prev : NULL, &m), 0);
        size_t nwant = 0;
        while (nwant < 16 && r->want[nwant])
                nwant++;
        if (m.n != nwant)
                fprintf(stderr, "row %s: %zu entries, want %zu\n", r->name, m.n, nwant);
        CHECK_INT(m.n, nwant);
        for (size_t i = 0; i < m.n && i < nwant; i++) {
                char got[256];
                snprintf(got, sizeof(got), "%s %s %s", m.items[i].id, device_state_name(m.items[i].state),
                         device_why_name(m.items[i].why));
                if (strcmp(got, r->want[i]) != 0)
                        fprintf(stderr, "row %s: entry %zu: %s (detail: %s), want %s\n", r->name, i, got,
                                m.items[i].detail, r->want[i]);
                CHECK_STR(got, r->want[i]);
        }
        /* the line of one device carries the reason a person reads */
        char id[64];
        const char *bar = strchr(r->line, '|');
        snprintf(id, sizeof(id), "%.*s", (int)(bar - r->line), r->line);
        const device_entry *e = device_map_find(&m, DEVICE_NIC, id);
        if (!e)
                e = device_map_find(&m, DEVICE_CORE, id);
        CHECK(e != NULL);
        if (e) {
                char line[DEVICE_DETAIL_LEN + 256];
                device_map_line(e, "example.com", line, sizeof(line));
                if (!strstr(line, bar + 1))
                        fprintf(stderr, "row %s: line \"%s\" lacks \"%s\"\n", r->name, line, bar + 1);
                CHECK(strstr(line, bar + 1) != NULL);
                CHECK(strncmp(line, "example.com/", 12) == 0);
                CHECK(strstr(line, id) != NULL);
        }
        /* the same node and config with this map as history: nothing changed */
        device_map again = { 0 };
        CHECK_INT(device_map_build(&sel, &m, &again), 0);
        CHECK_INT(again.n, m.n);
        for (size_t i = 0; i < again.n; i++)
                CHECK(!device_map_changed(&m, &again.items[i]));
        device_map_free(&again);
        device_map_free(&m);
        device_map_free(&prev);
        selection_free(&sel);
        node_free(inv);
}

/* Changes: an address arriving makes ENA2 Healthy, and only ENA2 reads as changed. */
static void test_changes(void)
{
        inventory *inv = node();
        config c;
        selection sel = { 0 };
        device_map a = { 0 }, b = { 0 };

        config_init(&c);
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        CHECK_INT(device_map_build(&sel, NULL, &a), 0);
        for (size_t i = 0; i < a.n; i++)
                CHECK(device_map_changed(NULL, &a.items[i])); /* the first map: all new */
        inv->nics[2].addr.state = INV_ADDR_KNOWN;
        inv->nics[2].addr.ipv4 = 0x0a000707;
        inv->nics[2].addr.prefix_len = 24;
        CHECK_INT(device_map_build(&sel, &a, &b), 0);
        for (size_t i = 0; i < b.n; i++)
                CHECK(device_map_changed(&a, &b.items[i]) == (strcmp(b.items[i].id, ENA2) == 0));
        const device_entry *e = device_map_find(&b, DEVICE_NIC, ENA2);
        CHECK(e && e->state == DEVICE_HEALTHY && strstr(e->detail, "10.0.7.7/24"));
        /* JSON: the same fields explain --json prints */
        json_t *j = e ? device_map_json(e, NULL) : NULL;
        CHECK(j != NULL);
        CHECK_STR(json_string_value(json_object_get(j, "resource")), "spinlane.io/dpdk-nic");
        CHECK_STR(json_string_value(json_object_get(j, "state")), "healthy");
        CHECK_STR(json_string_value(json_object_get(j, "reason")), "ok");
        json_decref(j);
        /* the one readiness rule */
        CHECK(device_map_nic_ready(&inv->nics[1]));
        CHECK(!device_map_nic_ready(&inv->nics[0])); /* the primary */
        inv->nics[0].dpdk_ready = true;
        CHECK(!device_map_nic_ready(&inv->nics[0]));
        device_map_free(&a);
        device_map_free(&b);
        selection_free(&sel);
        node_free(inv);
}

/* nics.interfaces keeps a NIC spinlane bound (its netdev gone) by the name the bind
 * state recorded; without the record it is left out. */
static void test_bind_state(void)
{
        inventory *inv = node();
        static const char cfg[] = "{\"nics\":{\"interfaces\":[\"eth1\"]}}";
        bind_state st = {.n = 1, .e = {{ENA1, "ena", "vfio-pci", "eth1"}}};
        config c;
        char err[256];
        selection with = { 0 }, without = { 0 };
        device_map a = { 0 }, b = { 0 };

        CHECK_INT(config_parse(cfg, strlen(cfg), &c, err, sizeof(err)), 0);
        CHECK_INT(selection_new(&c, inv, &st, &with), 0);
        CHECK_INT(selection_new(&c, inv, NULL, &without), 0);
        CHECK_INT(device_map_build(&with, NULL, &a), 0);
        CHECK_INT(device_map_build(&without, NULL, &b), 0);
        const device_entry *e = device_map_find(&a, DEVICE_NIC, ENA1);
        CHECK(e && e->state == DEVICE_HEALTHY);
        e = device_map_find(&b, DEVICE_NIC, ENA1);
        CHECK(e && e->why == DEVICE_NOT_SELECTED && strstr(e->detail, "no netdev"));
        device_map_free(&a);
        device_map_free(&b);
        selection_free(&with);
        selection_free(&without);
        node_free(inv);
}

/* A detail longer than the entry holds is cut and says so. */
static void test_long_detail(void)
{
        inventory *inv = node();
        config c;
        selection sel = { 0 };
        device_map m = { 0 };

        memset(inv->nics[2].addr.why, 'x', sizeof(inv->nics[2].addr.why) - 1);
        inv->nics[2].addr.why[sizeof(inv->nics[2].addr.why) - 1] = '\0';
        memset(inv->nics[3].in_use_reason, 'y', sizeof(inv->nics[3].in_use_reason) - 1);
        inv->nics[3].in_use_reason[sizeof(inv->nics[3].in_use_reason) - 1] = '\0';
        config_init(&c);
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        CHECK_INT(device_map_build(&sel, NULL, &m), 0);
        for (size_t i = 0; i < m.n; i++)
                CHECK(strlen(m.items[i].detail) < DEVICE_DETAIL_LEN);
        device_map_free(&m);
        selection_free(&sel);
        node_free(inv);
}

/* The history's rule (once in cmd-run.c, now here, so explain shows it): the value of a
 * device listed before. A NIC unbound since (no device nodes now) keeps the ones the pod
 * was given; a NIC gone from the node keeps its last value, Unhealthy, vanished; the
 * attributes come from the inventory (numa, address, devnodes); device_map_list gives the
 * listed ones sorted as a device plugin lists them. */
static void test_carry(void)
{
        inventory *inv = node();
        config c;
        selection sel = { 0 };
        device_map a = { 0 }, b = { 0 };
        device_list nics = { 0 }, cores = { 0 };

        inv->nics[1].numa_node = 1;
        inv->nics[1].n_devnodes = 2;
        snprintf(inv->nics[1].devnodes[0].host, sizeof(inv->nics[1].devnodes[0].host), "/dev/vfio/vfio");
        snprintf(inv->nics[1].devnodes[0].container, sizeof(inv->nics[1].devnodes[0].container), "/dev/vfio/vfio");
        snprintf(inv->nics[1].devnodes[1].host, sizeof(inv->nics[1].devnodes[1].host), "/dev/vfio/noiommu-7");
        snprintf(inv->nics[1].devnodes[1].container, sizeof(inv->nics[1].devnodes[1].container), "/dev/vfio/7");
        config_init(&c);
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        CHECK_INT(device_map_build(&sel, NULL, &a), 0);
        const device_entry *e = device_map_find(&a, DEVICE_NIC, ENA1);
        CHECK(e && e->numa_node == 1 && e->n_devnodes == 2 && strcmp(e->ipv4, "10.0.6.2/24") == 0 &&
              strcmp(e->nic_kind, "ena") == 0 && strcmp(e->driver, "vfio-pci") == 0 && e->index == 1);
        CHECK_INT(device_map_list(&a, DEVICE_NIC, &nics), 0);
        CHECK_INT(device_map_list(&a, DEVICE_CORE, &cores), 0);
        CHECK_INT(nics.n, 3); /* ENA1, ENA2 (Unhealthy: no address), MANA */
        CHECK_INT(cores.n, 2);
        CHECK(nics.n == 3 && strcmp(nics.items[1].id, ENA2) == 0 && strcmp(nics.items[2].id, MANA) == 0);
        device_list_free(&nics);
        device_list_free(&cores);
        /* unbound: no device nodes now; and MANA gone from the node */
        inv->nics[1].n_devnodes = 0;
        inv->n_nics--; /* MANA is the last */
        selection_free(&sel);
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        CHECK_INT(device_map_build(&sel, &a, &b), 0);
        e = device_map_find(&b, DEVICE_NIC, ENA1);
        CHECK(e && e->n_devnodes == 2 && strcmp(e->devnodes[1].host, "/dev/vfio/noiommu-7") == 0);
        e = device_map_find(&b, DEVICE_NIC, MANA);
        CHECK(e && e->state == DEVICE_UNHEALTHY && e->why == DEVICE_VANISHED && e->index == -1 &&
              strcmp(e->nic_kind, "mana") == 0 && strcmp(e->ipv4, "10.0.6.8/24") == 0);
        device_map_free(&a);
        device_map_free(&b);
        selection_free(&sel);
        node_free(inv);
}

int main(void)
{
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                test_row(&rows[i]);
        test_changes();
        test_bind_state();
        test_long_detail();
        test_carry();
        return test_done();
}
