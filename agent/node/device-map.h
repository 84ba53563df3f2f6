/* SPDX-License-Identifier: Apache-2.0 */
/* The one device map: which NICs and cores spinlane advertises to the kubelet
 * (<prefix>/dpdk-nic, <prefix>/isolated-core), each with its health, and for every NIC
 * and core of the node that is not advertised the one reason why. The rule lives here
 * and nowhere else: the daemon streams the map to the device plugins, `inventory --json`
 * lists its resources, `explain` prints it, the node checks take a NIC as DPDK-ready by
 * device_map_nic_ready(). Pure: no I/O, never logs. */
#ifndef SPIN_AGENT_DEVICE_MAP_H
#define SPIN_AGENT_DEVICE_MAP_H

#include "inventory.h"
#include "select.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum devmap_resource {
        DEVMAP_NIC,  /* INV_RESOURCE_NIC */
        DEVMAP_CORE, /* INV_RESOURCE_CORE */
} devmap_resource;

typedef enum devmap_state {
        DEVMAP_HEALTHY,        /* advertised, Healthy: a pod may be given it */
        DEVMAP_UNHEALTHY,      /* advertised (the kubelet knows it), Unhealthy: why says why */
        DEVMAP_NOT_ADVERTISED, /* the kubelet never hears of it: why says why */
} devmap_state;

/* The one reason, in the order the rule asks (the first that applies). */
typedef enum devmap_why {
        DEVMAP_OK,           /* Healthy */
        DEVMAP_VANISHED,     /* advertised before, gone from the node (Unhealthy, kept listed) */
        /* NICs */
        DEVMAP_PRIMARY,      /* it carries the node's default route: never taken */
        DEVMAP_NOT_SELECTED, /* the config's nics.* selectors leave it out (detail names which) */
        DEVMAP_OVER_MAX,     /* nics.max NICs were taken before it */
        DEVMAP_IN_USE,       /* the node's own networking uses it: never taken */
        DEVMAP_USE_UNKNOWN,  /* whether the node uses it cannot be told: not taken */
        DEVMAP_NOT_READY,    /* not usable by a DPDK pod as it stands (driver, device nodes) */
        DEVMAP_NO_ADDRESS,   /* DPDK-ready and selected, but its IPv4 address is not known */
        /* cores */
        DEVMAP_NOT_ISOLATED, /* none of its CPUs is isolated */
        DEVMAP_SPLIT,        /* some of its SMT siblings are isolated, some not (or offline) */
        DEVMAP_OUTSIDE_CPUS, /* isolated, but the config's cores.cpus leaves a sibling out */
} devmap_why;

/* "ok", "vanished", "primary", "not-selected", "over-max", "in-use", "use-unknown",
 * "not-ready", "no-address", "not-isolated", "split", "outside-cpus". */
const char *devmap_why_name(devmap_why w);
/* "healthy", "unhealthy", "not-advertised". */
const char *devmap_state_name(devmap_state s);

#define DEVMAP_DETAIL_LEN 1024 /* longer details end in "..." */

typedef struct devmap_entry {
        devmap_resource res;
        char id[INV_CORE_ID_LEN];  /* the kubelet device ID: the PCI address, the core id */
        long index;                /* into inv->nics / inv->cores; -1 for a vanished device */
        devmap_state state;
        devmap_why why;
        char detail[DEVMAP_DETAIL_LEN]; /* one line a person reads: what it is, or why not */
} devmap_entry;

/* NICs in PCI order, then cores in first-CPU order, then vanished devices (NICs, cores)
 * in the order of the history. */
typedef struct device_map {
        devmap_entry *items;
        size_t n;
} device_map;

/* The map of sel->inv under sel (its config and selection). prev (NULL: none) is what the
 * kubelet was told before: a device it lists (Healthy or Unhealthy) stays listed,
 * Unhealthy, when it is no longer takeable or gone from the node, so that a pod holding
 * it is not left with an ID the kubelet forgot. A NIC is Healthy when the config selects
 * it, it is DPDK-ready (device_map_nic_ready) and its address is known (INV_ADDR_KNOWN);
 * selected and ready without an address it is listed Unhealthy. A core is Healthy when
 * select_core takes it. -ENOMEM leaves *ret untouched. */
int device_map_build(const selection *sel, const device_map *prev, device_map *ret);
/* Accepts a zeroed map; leaves it zeroed. */
void device_map_free(device_map *m);

/* The entry of (res, id); NULL when absent. */
const devmap_entry *device_map_find(const device_map *m, devmap_resource res, const char *id);
/* Whether the kubelet is told of it (Healthy or Unhealthy). */
bool devmap_listed(const devmap_entry *e);
/* Whether any entry's state or reason differs from prev's for the same device, or a
 * device is new or gone (NULL prev: every entry is new). */
bool devmap_entry_changed(const device_map *prev, const devmap_entry *e);

/* The line a person reads: "<prefix>/dpdk-nic 0000:00:06.0: advertised, Healthy: ...",
 * "...: not advertised (primary): ..." (prefix NULL: INV_RESOURCE_PREFIX_DEFAULT).
 * Truncated to len. */
void devmap_entry_line(const devmap_entry *e, const char *prefix, char *buf, size_t len);
/* {"resource","id","state","reason","detail"} (new reference; NULL on -ENOMEM). */
json_t *devmap_entry_json(const devmap_entry *e, const char *prefix);

/* A NIC a DPDK pod may be given as it stands: dpdk_ready and not the primary. (A NIC the
 * node uses is on its kernel driver, so not dpdk_ready, unless it is a MANA VF, which
 * DPDK shares with its kernel driver.) */
bool device_map_nic_ready(const inv_nic *nic);

#endif
