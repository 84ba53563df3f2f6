/* SPDX-License-Identifier: Apache-2.0 */
/* Each NIC's address resolved into the inventory (agent/node/addresses.c) and the nic-address
 * check over it: MACs from the bind state, the source order, static entries over the
 * metadata, the metadata's answers (known, pending, failed), the one-shot commands'
 * "known only to the running agent", no MAC on record, duplicates, conflicts. */
#include "addresses.h"

#include "checks.h"
#include "cleanup.h"
#include "devmap-json.h"
#include "testutil.h"

#include <errno.h>

#define ENA1 "0000:00:06.0"
#define ENA2 "0000:00:07.0"
#define MANA "7870:00:00.0"
#define OTHER "0000:00:08.0"
#define PRIM "0000:00:05.0"

static inv_nic *add_nic(inventory *inv, const char *pci, inv_nic_kind kind, const char *driver, const char *netdev,
                        const char *mac)
{
        inv_nic *n = &inv->nics[inv->n_nics++];
        memset(n, 0, sizeof(*n));
        snprintf(n->pci, sizeof(n->pci), "%s", pci);
        n->kind = kind;
        snprintf(n->driver, sizeof(n->driver), "%s", driver);
        snprintf(n->netdev, sizeof(n->netdev), "%s", netdev);
        snprintf(n->mac, sizeof(n->mac), "%s", mac);
        if (*mac)
                snprintf(n->mac_source, sizeof(n->mac_source), "netdev");
        n->numa_node = 0;
        n->iommu_group = -1;
        n->dpdk_ready = true;
        return n;
}

/* primary ENA on ena; ENA1, ENA2 on vfio-pci (no netdev); a MANA VF with its netdev; an
 * "other" NIC on vfio-pci */
static inventory *node(void)
{
        inventory *inv = calloc(1, sizeof(*inv));
        CHECK(inv != NULL);
        inv_nic *p = add_nic(inv, PRIM, INV_NIC_ENA, "ena", "eth0", "0a:00:00:00:00:05");
        p->primary = true;
        p->dpdk_ready = false;
        add_nic(inv, ENA1, INV_NIC_ENA, "vfio-pci", "", "");
        add_nic(inv, ENA2, INV_NIC_ENA, "vfio-pci", "", "");
        add_nic(inv, MANA, INV_NIC_MANA, "mana", "eth1", "00:0d:3a:11:22:33");
        add_nic(inv, OTHER, INV_NIC_OTHER, "vfio-pci", "", "");
        return inv;
}

static void state_add(bind_state *st, const char *pci, const char *mac)
{
        bind_state_entry *e = &st->e[st->n++];
        memset(e, 0, sizeof(*e));
        snprintf(e->pci, sizeof(e->pci), "%s", pci);
        snprintf(e->original, sizeof(e->original), "ena");
        snprintf(e->target, sizeof(e->target), "vfio-pci");
        snprintf(e->mac, sizeof(e->mac), "%s", mac);
}

static void cfg_from(config *c, const char *json)
{
        char err[CONFIG_ERR_LEN];
        int r = config_parse(json, strlen(json), c, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "config: %s\n", err);
        CHECK_INT(r, 0);
}

/* A stand-in for the daemon's metadata cache: per MAC's last byte, an answer. */
typedef struct md_table {
        int calls;
        nic_addr_source last_cloud;
        struct {
                uint8_t mac_last;
                addresses_md_state state;
                uint32_t ipv4;
                uint8_t len;
                const char *why;
        } rows[4];
        size_t n;
} md_table;

static void md_fn(void *userdata, const inv_nic *nic, nic_addr_source cloud, const uint8_t mac[6], addresses_md *ret)
{
        md_table *t = userdata;
        (void)nic;
        t->calls++;
        t->last_cloud = cloud;
        for (size_t i = 0; i < t->n; i++)
                if (t->rows[i].mac_last == mac[5]) {
                        ret->state = t->rows[i].state;
                        ret->addr = (nic_addr){.ipv4 = t->rows[i].ipv4, .prefix_len = t->rows[i].len,
                                               .gateway = (t->rows[i].ipv4 & 0xffffff00u) + 1, .source = cloud};
                        snprintf(ret->why, sizeof(ret->why), "%s", t->rows[i].why ? t->rows[i].why : "");
                        return;
                }
        ret->state = ADDRESSES_MD_FAILED;
        snprintf(ret->why, sizeof(ret->why), "AWS IMDS GET /latest/meta-data/...: HTTP 404 (no such interface)");
}

static const inv_nic *nic(const inventory *inv, const char *pci) { return inventory_find_nic(inv, pci); }

static bool select_all(const inv_nic *n, void *userdata)
{
        (void)userdata;
        return !n->primary;
}

/* The nic-address verdict, every non-primary NIC selected (also "other"). */
static const verdict *nic_address(const inventory *inv, verdict_list *l)
{
        device_map map = { 0 };
        verdict_list_free(l);
        CHECK_INT(device_map_where(inv, select_all, &map), 0);
        CHECK_INT(checks_node(inv, &(checks_options){.map = &map}, l), 0);
        device_map_free(&map);
        return verdict_find(l, CHECK_NIC_ADDRESS);
}

static void test_static_and_recorded_mac(void)
{
        inventory *inv = node();
        config c;
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        verdict_list l = {0};

        state_add(st, ENA1, "0a:00:00:00:00:06");
        state_add(st, ENA2, ""); /* an older file: no MAC */
        cfg_from(&c, "{\"addresses\":{\"static\":["
                     "{\"mac\":\"0a:00:00:00:00:06\",\"ipv4\":\"10.0.6.10/24\",\"gateway\":\"10.0.6.1\"},"
                     "{\"pci\":\"" ENA2 "\",\"ipv4\":\"10.0.7.10/24\"},"
                     "{\"mac\":\"00:0d:3a:11:22:33\",\"ipv4\":\"10.1.0.4/24\",\"gateway\":\"10.1.0.1\"},"
                     "{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"}]}}");
        md_table t = {0};
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_INT(t.calls, 0); /* every NIC has a static entry: the metadata is never asked */

        const inv_nic *n = nic(inv, ENA1);
        CHECK_STR(n->mac, "0a:00:00:00:00:06"); /* from the bind state: the kernel no longer knows it */
        CHECK_STR(n->mac_source, "bind-state");
        CHECK_INT(n->addr.state, INV_ADDR_KNOWN);
        CHECK_INT(n->addr.ipv4, 0x0a00060a);
        CHECK_INT(n->addr.prefix_len, 24);
        CHECK_INT(n->addr.gateway, 0x0a000601);
        CHECK_STR(n->addr.source, "static");
        CHECK_STR(n->addr.why, "");
        n = nic(inv, ENA2);
        CHECK_STR(n->mac, "");
        CHECK_INT(n->addr.state, INV_ADDR_KNOWN);
        CHECK_INT(n->addr.gateway, 0);
        CHECK_INT(nic(inv, MANA)->addr.state, INV_ADDR_KNOWN);
        CHECK_STR(nic(inv, MANA)->mac_source, "netdev");
        CHECK_INT(nic(inv, OTHER)->addr.state, INV_ADDR_KNOWN);
        CHECK_INT(nic(inv, PRIM)->addr.state, INV_ADDR_UNRESOLVED); /* the primary: never */

        const verdict *v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_PASS);
        CHECK_STR(v->message, "every advertised NIC has an address: " ENA1 " 10.0.6.10/24 gateway 10.0.6.1 (static), " ENA2
                  " 10.0.7.10/24, no gateway (static), " MANA " 10.1.0.4/24 gateway 10.1.0.1 (static), " OTHER
                  " 192.168.8.2/24, no gateway (static)");

        /* inventory --json carries it */
        json_t *j = inventory_json_under(inv, NULL, NULL);
        json_t *r = json_array_get(json_object_get(json_object_get(j, "resources"), "spinlane.io/dpdk-nic"), 0);
        CHECK_STR(json_string_value(json_object_get(r, "ipv4")), "10.0.6.10/24");
        CHECK_STR(json_string_value(json_object_get(r, "gateway")), "10.0.6.1");
        CHECK_STR(json_string_value(json_object_get(r, "address_source")), "static");
        json_t *all = json_object_get(j, "nics");
        CHECK(json_is_null(json_object_get(json_array_get(all, 0), "ipv4"))); /* the primary */
        CHECK_STR(json_string_value(json_object_get(json_array_get(all, 0), "address_state")), "unresolved");
        CHECK_STR(json_string_value(json_object_get(json_array_get(all, 1), "mac_source")), "bind-state");
        CHECK(json_is_null(json_object_get(json_array_get(all, 2), "gateway")));
        json_decref(j);
        verdict_list_free(&l);
        inventory_free(inv);
}

static void test_metadata(void)
{
        inventory *inv = node();
        config c;
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        verdict_list l = {0};
        md_table t = {.n = 3,
                      .rows = {{0x06, ADDRESSES_MD_KNOWN, 0x0a000611, 24, NULL},
                               {0x07, ADDRESSES_MD_PENDING, 0, 0, NULL},
                               {0x33, ADDRESSES_MD_FAILED, 0, 0, "Azure IMDS GET /metadata/instance/network?api-version="
                                                                  "2021-02-01: no private IPv4 address"}}};

        state_add(st, ENA1, "0a:00:00:00:00:06");
        state_add(st, ENA2, "0a:00:00:00:00:07");
        cfg_from(&c, "{\"addresses\":{\"static\":[{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"}]}}");
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_INT(t.calls, 3);
        const inv_nic *n = nic(inv, ENA1);
        CHECK_INT(n->addr.state, INV_ADDR_KNOWN);
        CHECK_STR(n->addr.source, "aws-imds");
        CHECK_INT(n->addr.gateway, 0x0a000601);
        CHECK_INT(nic(inv, ENA2)->addr.state, INV_ADDR_PENDING);
        CHECK_STR(nic(inv, ENA2)->addr.why, "asking AWS IMDS for the address of 0a:00:00:00:00:07");
        n = nic(inv, MANA);
        CHECK_INT(n->addr.state, INV_ADDR_FAILED);
        CHECK_INT(n->addr.problem, INV_ADDR_METADATA);
        CHECK_STR(n->addr.why, "no static entry matches it; Azure IMDS GET /metadata/instance/network?api-version="
                               "2021-02-01: no private IPv4 address");
        CHECK_INT(t.last_cloud, NIC_ADDR_AZURE);

        const verdict *v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_FAIL);
        CHECK(strstr(v->message, "1 of 4 DPDK NICs without an address (listed Unhealthy to the kubelet): " MANA
                                 ": no static entry matches it; Azure IMDS GET") != NULL);
        CHECK(strstr(v->message, "; with one: " ENA1 " 10.0.6.17/24 gateway 10.0.6.1 (aws-imds)") != NULL);
        CHECK(v->remedy && strncmp(v->remedy, MANA ": the agent must reach the instance metadata service", 58) == 0);

        /* the failure gone, one still pending: skip, not pass */
        t.rows[2] = (typeof(t.rows[2])){0x33, ADDRESSES_MD_KNOWN, 0x0a010004, 24, NULL};
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_SKIP);
        CHECK(strncmp(v->message, ENA2 ": asking AWS IMDS for the address of 0a:00:00:00:00:07; known: ", 62) == 0);
        t.rows[1].state = ADDRESSES_MD_KNOWN;
        t.rows[1].ipv4 = 0x0a000711;
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_INT(nic_address(inv, &l)->level, VERDICT_PASS);

        /* static entries win over the metadata (default order) ... */
        cfg_from(&c, "{\"addresses\":{\"static\":[{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"},"
                     "{\"mac\":\"0a:00:00:00:00:06\",\"ipv4\":\"172.16.0.6/16\"}]}}");
        t.calls = 0;
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_STR(nic(inv, ENA1)->addr.source, "static");
        CHECK_INT(nic(inv, ENA1)->addr.ipv4, 0xac100006);
        CHECK_INT(t.calls, 2); /* ENA2 and MANA only */
        /* ... unless the metadata comes first: then the entry is the fallback */
        cfg_from(&c, "{\"addresses\":{\"sources\":[\"metadata\",\"static\"],\"static\":["
                     "{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"},"
                     "{\"mac\":\"0a:00:00:00:00:06\",\"ipv4\":\"172.16.0.6/16\"},"
                     "{\"mac\":\"0a:00:00:00:00:07\",\"ipv4\":\"172.16.0.7/16\"}]}}");
        t.rows[1].state = ADDRESSES_MD_FAILED;
        t.rows[1].why = "AWS IMDS PUT /latest/api/token: Connection refused (after 4 attempts)";
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_STR(nic(inv, ENA1)->addr.source, "aws-imds");
        CHECK_STR(nic(inv, ENA2)->addr.source, "static");
        CHECK_INT(nic(inv, ENA2)->addr.ipv4, 0xac100007);
        /* the metadata off: never asked */
        cfg_from(&c, "{\"addresses\":{\"sources\":[\"static\"]}}");
        t.calls = 0;
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        CHECK_INT(t.calls, 0);
        CHECK_INT(nic(inv, ENA1)->addr.problem, INV_ADDR_NO_SOURCE);
        CHECK_STR(nic(inv, ENA1)->addr.why, "the metadata is off (addresses.sources)");
        CHECK_STR(nic(inv, OTHER)->addr.why, "the metadata is off (addresses.sources)");
        verdict_list_free(&l);
        inventory_free(inv);
}

static void test_no_mac_and_cli(void)
{
        inventory *inv = node();
        config c;
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        verdict_list l = {0};
        md_table t = {0};

        state_add(st, ENA1, "0a:00:00:00:00:06");
        cfg_from(&c, "{}");
        /* the one-shot commands: no metadata callback */
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st});
        CHECK_INT(nic(inv, ENA1)->addr.state, INV_ADDR_ELSEWHERE);
        CHECK_STR(nic(inv, ENA1)->addr.why, "address from AWS IMDS: known only to the running agent (spinlane-agent "
                                            "run); this command does not ask the metadata service");
        CHECK_INT(nic(inv, MANA)->addr.state, INV_ADDR_ELSEWHERE);
        const inv_nic *n = nic(inv, ENA2); /* on vfio-pci, nothing recorded */
        CHECK_INT(n->addr.state, INV_ADDR_FAILED);
        CHECK_INT(n->addr.problem, INV_ADDR_NO_MAC);
        CHECK_STR(n->addr.why, "on vfio-pci and its MAC is not recorded (bound outside spinlane, or before it recorded "
                               "MACs), so AWS IMDS cannot be asked for its address");
        n = nic(inv, OTHER);
        CHECK_INT(n->addr.problem, INV_ADDR_NO_SOURCE);
        CHECK_STR(n->addr.why, "a NIC of kind other has no metadata service");
        const verdict *v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_FAIL);
        CHECK_STR(v->remedy, ENA2 ", " OTHER ": only a static entry by PCI address can give them an address: "
                             "\"addresses\": {\"static\": [{\"pci\": \"" ENA2 "\", \"ipv4\": \"a.b.c.d/len\", \"gateway\": "
                             "\"a.b.c.d\"}, {\"pci\": \"" OTHER "\", \"ipv4\": \"a.b.c.d/len\", \"gateway\": \"a.b.c.d\"}]}");

        /* with those two given statically: the rest is the running agent's, a skip */
        cfg_from(&c, "{\"addresses\":{\"static\":[{\"pci\":\"" ENA2 "\",\"ipv4\":\"10.0.7.10/24\"},"
                     "{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"}]}}");
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st});
        v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_SKIP);
        CHECK(strstr(v->message, ENA1 ": address from AWS IMDS: known only to the running agent") != NULL);
        CHECK(strstr(v->message, "; known: " ENA2 " 10.0.7.10/24, no gateway (static)") != NULL);

        /* not selected (the default nics.kinds leaves out the virtio NIC): left alone */
        selection sel = {0};
        CHECK_INT(selection_new(&c, inv, NULL, &sel), 0);
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .sel = &sel,
                                                   .metadata = md_fn, .md_userdata = &t});
        CHECK_INT(nic(inv, OTHER)->addr.state, INV_ADDR_UNRESOLVED);
        selection_free(&sel);

        /* nothing advertised */
        for (size_t i = 0; i < inv->n_nics; i++)
                inv->nics[i].dpdk_ready = false;
        v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_SKIP);
        CHECK_STR(v->message, "no DPDK NIC is advertised");
        verdict_list_free(&l);
        inventory_free(inv);
}

static void test_duplicates_and_conflicts(void)
{
        inventory *inv = node();
        config c;
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        verdict_list l = {0};
        md_table t = {.n = 1, .rows = {{0x06, ADDRESSES_MD_KNOWN, 0x0a000611, 24, NULL}}};

        state_add(st, ENA1, "0a:00:00:00:00:06");
        /* ENA2's static entry claims the address the metadata gives ENA1 */
        cfg_from(&c, "{\"addresses\":{\"static\":[{\"pci\":\"" ENA2 "\",\"ipv4\":\"10.0.6.17/24\"},"
                     "{\"pci\":\"" OTHER "\",\"ipv4\":\"192.168.8.2/24\"},"
                     "{\"mac\":\"00:0d:3a:11:22:33\",\"ipv4\":\"10.1.0.4/24\"},"
                     "{\"pci\":\"" MANA "\",\"ipv4\":\"10.1.0.5/24\"}]}}");
        addresses_apply(inv, &(addresses_options){.cfg = &c, .state = st, .metadata = md_fn, .md_userdata = &t});
        const inv_nic *a = nic(inv, ENA1), *b = nic(inv, ENA2);
        CHECK_INT(a->addr.state, INV_ADDR_FAILED);
        CHECK_INT(a->addr.problem, INV_ADDR_DUPLICATE);
        CHECK_STR(a->addr.why, "10.0.6.17 (aws-imds) is also claimed by " ENA2);
        CHECK_INT(b->addr.problem, INV_ADDR_DUPLICATE);
        CHECK_STR(b->addr.why, "10.0.6.17 (static) is also claimed by " ENA1);
        /* the MANA VF: an entry by MAC and one by PCI address that disagree */
        CHECK_INT(nic(inv, MANA)->addr.problem, INV_ADDR_CONFLICT);
        CHECK_STR(nic(inv, MANA)->addr.why, "static entries 2 and 3 both match NIC " MANA " and disagree");
        CHECK_INT(nic(inv, OTHER)->addr.state, INV_ADDR_KNOWN);
        const verdict *v = nic_address(inv, &l);
        CHECK(v && v->level == VERDICT_FAIL);
        CHECK(strstr(v->remedy, ENA1 ", " ENA2 ": give each NIC an address of its own") != NULL);
        CHECK(strstr(v->remedy, MANA ": make the static entries that match it agree") != NULL);
        /* the evidence names each NIC and its state */
        json_t *e0 = json_array_get(json_object_get(v->evidence, "nics"), 0);
        CHECK_STR(json_string_value(json_object_get(e0, "pci")), ENA1);
        CHECK_STR(json_string_value(json_object_get(e0, "state")), "failed");
        CHECK_STR(json_string_value(json_object_get(e0, "mac")), "0a:00:00:00:00:06");
        verdict_list_free(&l);
        inventory_free(inv);
}

int main(void)
{
        test_static_and_recorded_mac();
        test_metadata();
        test_no_mac_and_cli();
        test_duplicates_and_conflicts();
        return test_done();
}
