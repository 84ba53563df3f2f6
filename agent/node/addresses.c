/* SPDX-License-Identifier: Apache-2.0 */
/* Resolving each selected NIC's address into the inventory: recorded MACs, the config's
 * sources in order, duplicates. Pure (the metadata arrives through the caller's
 * callback); never logs. */
#include "addresses.h"

#include "device-map.h"
#include "ipv4.h"
#include "parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

nic_addr_source addresses_cloud(const inv_nic *nic)
{
        switch (nic->kind) {
        case INV_NIC_ENA:
                return NIC_ADDR_AWS;
        case INV_NIC_MANA:
                return NIC_ADDR_AZURE;
        default:
                return NIC_ADDR_NONE;
        }
}

const char *addresses_cloud_name(nic_addr_source cloud)
{
        return cloud == NIC_ADDR_AWS ? "AWS IMDS" : cloud == NIC_ADDR_AZURE ? "Azure IMDS" : "no metadata service";
}

/* Append "; "-separated text to a NIC's why (cut silently at its size: a line). */
static void why_add(inv_nic_addr *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(inv_nic_addr *a, const char *fmt, ...)
{
        size_t n = strlen(a->why);
        va_list ap;

        if (n + 3 >= sizeof(a->why))
                return;
        if (n) {
                memcpy(a->why + n, "; ", 3);
                n += 2;
        }
        va_start(ap, fmt);
        vsnprintf(a->why + n, sizeof(a->why) - n, fmt, ap);
        va_end(ap);
}

static void set_known(inv_nic_addr *a, const nic_addr *x)
{
        *a = (inv_nic_addr){.state = INV_ADDR_KNOWN, .ipv4 = x->ipv4, .prefix_len = x->prefix_len,
                            .gateway = x->gateway};
        snprintf(a->source, sizeof(a->source), "%s", nic_addr_source_name(x->source));
}

static bool on_kernel(const inv_nic *n) { return n->netdev[0] != '\0'; }

static void resolve(inv_nic *n, const addresses_options *o)
{
        const config *c = o->cfg;
        inv_nic_addr *a = &n->addr;
        uint8_t mac[6];
        bool have_mac = parse_mac(n->mac, mac) == 0, no_mac = false, md_failed = false;
        char err[NIC_ADDR_ERR_LEN];

        *a = (inv_nic_addr){.state = INV_ADDR_FAILED};
        for (size_t s = 0; s < c->addresses.n_sources; s++) {
                if (c->addresses.sources[s] == CONFIG_ADDR_STATIC) {
                        nic_addr x;
                        int r = nic_addr_resolve(n->pci, have_mac ? mac : NULL, c->addresses.entries,
                                                 c->addresses.n_entries, NULL, &x, err, sizeof(err));
                        if (r == 0) {
                                set_known(a, &x);
                                return;
                        }
                        if (r == -ENOTUNIQ) {
                                *a = (inv_nic_addr){.state = INV_ADDR_FAILED, .problem = INV_ADDR_CONFLICT};
                                why_add(a, "%s", err);
                                return;
                        }
                        if (c->addresses.n_entries)
                                why_add(a, "no static entry matches it");
                        continue;
                }
                /* the metadata */
                nic_addr_source cloud = addresses_cloud(n);
                if (cloud == NIC_ADDR_NONE) {
                        why_add(a, "a NIC of kind %s has no metadata service", inv_nic_kind_name(n->kind));
                        continue;
                }
                if (!have_mac) {
                        no_mac = true;
                        if (on_kernel(n))
                                why_add(a, "%s has no readable MAC, so %s cannot be asked", n->netdev,
                                        addresses_cloud_name(cloud));
                        else
                                why_add(a, "on %s and its MAC is not recorded (bound outside spinlane, or before it "
                                        "recorded MACs), so %s cannot be asked for its address",
                                        n->driver[0] ? n->driver : "no driver", addresses_cloud_name(cloud));
                        continue;
                }
                if (!o->metadata) {
                        *a = (inv_nic_addr){.state = INV_ADDR_ELSEWHERE};
                        why_add(a, "address from %s: known only to the running agent (spinlane-agent run); this "
                                "command does not ask the metadata service", addresses_cloud_name(cloud));
                        return;
                }
                addresses_md md = {.state = ADDRESSES_MD_FAILED};
                o->metadata(o->md_userdata, n, cloud, mac, &md);
                if (md.state == ADDRESSES_MD_KNOWN) {
                        set_known(a, &md.addr);
                        return;
                }
                if (md.state == ADDRESSES_MD_PENDING) {
                        *a = (inv_nic_addr){.state = INV_ADDR_PENDING};
                        why_add(a, "asking %s for the address of %s", addresses_cloud_name(cloud), n->mac);
                        return;
                }
                md_failed = true;
                why_add(a, "%s", md.why[0] ? md.why : "the metadata lookup failed");
        }
        if (c->addresses.n_sources == 1 && c->addresses.sources[0] == CONFIG_ADDR_STATIC)
                why_add(a, "the metadata is off (addresses.sources)");
        a->problem = md_failed ? INV_ADDR_METADATA : no_mac ? INV_ADDR_NO_MAC : INV_ADDR_NO_SOURCE;
}

void addresses_apply(inventory *inv, const addresses_options *o)
{
        for (size_t i = 0; i < inv->n_nics; i++) {
                inv_nic *n = &inv->nics[i];
                n->addr = (inv_nic_addr){.state = INV_ADDR_UNRESOLVED};
                if (!n->mac[0] && o->state) {
                        const bind_state_entry *e = bind_state_find(o->state, n->pci);
                        if (e && e->mac[0]) {
                                snprintf(n->mac, sizeof(n->mac), "%s", e->mac);
                                snprintf(n->mac_source, sizeof(n->mac_source), "bind-state");
                        }
                }
        }
        for (size_t i = 0; i < inv->n_nics; i++) {
                inv_nic *n = &inv->nics[i];
                /* the NICs the device plugin lists: selected and DPDK-ready (a NIC still on its
                 * kernel driver is not asked about before it is bound) */
                if (o->sel ? !device_map_nic_wants_address(o->sel, n) : !device_map_nic_ready(n))
                        continue;
                resolve(n, o);
        }
        /* Two NICs claiming one address: neither may have it. */
        for (size_t i = 0; i < inv->n_nics; i++) {
                inv_nic *x = &inv->nics[i];
                for (size_t j = i + 1; j < inv->n_nics; j++) {
                        inv_nic *y = &inv->nics[j];
                        if ((x->addr.state != INV_ADDR_KNOWN && x->addr.problem != INV_ADDR_DUPLICATE) ||
                            (y->addr.state != INV_ADDR_KNOWN && y->addr.problem != INV_ADDR_DUPLICATE) ||
                            x->addr.ipv4 != y->addr.ipv4)
                                continue;
                        char ip[IPV4_STR_MAX];
                        ipv4_format(x->addr.ipv4, ip);
                        inv_nic *pair[2] = {x, y};
                        for (int k = 0; k < 2; k++) {
                                inv_nic_addr *a = &pair[k]->addr;
                                if (a->state == INV_ADDR_KNOWN) {
                                        a->state = INV_ADDR_FAILED;
                                        a->problem = INV_ADDR_DUPLICATE;
                                        a->why[0] = '\0';
                                }
                                why_add(a, "%s (%s) is also claimed by %s", ip, a->source, pair[1 - k]->pci);
                        }
                }
        }
}
