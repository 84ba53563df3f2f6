/* SPDX-License-Identifier: Apache-2.0 */
/* Each NIC's IPv4 address, resolved into the inventory (inv_nic.addr): the MACs the bind
 * state recorded for NICs the kernel no longer shows, then the config's sources in their
 * order (static entries, the cloud's metadata) and the duplicates check. Pure: the
 * metadata comes in through a callback (the daemon's lookups, agent/daemon/run-address.c; the
 * CLI passes none), no I/O here, never logs. docs/addresses.md says why each step is so. */
#ifndef SPIN_ADDRESSES_H
#define SPIN_ADDRESSES_H

#include "bind-state.h"
#include "config.h"
#include "inventory.h"
#include "nic-address.h"
#include "select.h"

#include <stdbool.h>
#include <stdint.h>

#define ADDRESSES_WHY_LEN 512

/* What the metadata says of one NIC, as far as the caller knows it. */
typedef enum addresses_md_state {
        ADDRESSES_MD_KNOWN,   /* addr holds it */
        ADDRESSES_MD_PENDING, /* being asked (no answer yet) */
        ADDRESSES_MD_FAILED,  /* why: the lookup's one-line error */
} addresses_md_state;

typedef struct addresses_md {
        addresses_md_state state;
        nic_addr addr;
        char why[ADDRESSES_WHY_LEN];
} addresses_md;

/* The metadata of the NIC with MAC mac in cloud (NIC_ADDR_AWS or NIC_ADDR_AZURE). Fills
 * *ret; may start a lookup (the daemon). */
typedef void (*addresses_md_fn)(void *userdata, const inv_nic *nic, nic_addr_source cloud, const uint8_t mac[6],
                                addresses_md *ret);

typedef struct addresses_options {
        const config *cfg;      /* addresses.sources and addresses.static; required */
        const bind_state *state; /* MACs recorded before unbinding; NULL: none */
        /* The config's selection: the NICs the device map will list get an address
         * (device_map_nic_wants_address: selected and DPDK-ready, never the primary); the
         * others stay UNRESOLVED. NULL: every DPDK-ready NIC. */
        const selection *sel;
        /* NULL: the metadata is asked only by the running agent, and a NIC that needs it
         * is INV_ADDR_ELSEWHERE (the one-shot commands: preflight, inventory). */
        addresses_md_fn metadata;
        void *md_userdata;
} addresses_options;

/* The metadata service of a NIC's kind: NIC_ADDR_AWS for ENA, NIC_ADDR_AZURE for MANA,
 * NIC_ADDR_NONE for any other. */
nic_addr_source addresses_cloud(const inv_nic *nic);
/* "AWS IMDS", "Azure IMDS", "no metadata service". */
const char *addresses_cloud_name(nic_addr_source cloud);

/* Fill the MAC of every NIC that lost its netdev from the bind state (mac_source
 * "bind-state"), then inv_nic.addr of every selected DPDK-ready NIC; two NICs that end up
 * with one address both fail (INV_ADDR_DUPLICATE). The others are left UNRESOLVED. */
void addresses_apply(inventory *inv, const addresses_options *o);

#endif
