/* SPDX-License-Identifier: Apache-2.0 */
/* The plain device list a device plugin advertises: id, health, NUMA node and what a
 * container receives for each device. The agent fills it from its inventory; nothing in
 * deviceplugin/ reads sysfs. Pure values, no I/O, never logs. */
#ifndef SPIN_DP_DEVICES_H
#define SPIN_DP_DEVICES_H

#include "cpuset.h"

#include <stdbool.h>
#include <stddef.h>

#define DP_ID_LEN 64          /* kubelet device IDs are at most 63 chars + NUL */
#define DP_MAX_DEVICES 1024   /* per resource */
#define DP_MAX_DEVNODES 4     /* device nodes one NIC needs in a container */
#define DP_DEVPATH_LEN 64
#define DP_PATH_LEN 256

typedef enum dp_kind {
        DP_KIND_NIC,  /* spinlane.io/dpdk-nic: one DPDK-ready NIC/VF, ID = PCI address */
        DP_KIND_CORE, /* spinlane.io/isolated-core: one whole physical core, ID = stable core id */
} dp_kind;

typedef struct dp_devnode {
        char host[DP_DEVPATH_LEN];      /* the host's own path (never --root prefixed) */
        char container[DP_DEVPATH_LEN]; /* where it appears in the container */
} dp_devnode;

typedef struct dp_device {
        char id[DP_ID_LEN];
        bool healthy;
        int numa_node;                  /* -1 unknown: no TopologyInfo is sent then */
        /* DP_KIND_NIC */
        char pci[16];                   /* "0000:00:06.0" */
        char mac[18];                   /* "" unknown */
        char nic_kind[8];               /* "ena", "mana", "other" */
        char driver[32];                /* "vfio-pci", "igb_uio", "mana", ... */
        char ipv4[20];                  /* its address "a.b.c.d/len"; "" none known (then
                                           the agent advertises it Unhealthy) */
        char gateway[16];               /* "a.b.c.d"; "" none (on-link peers only) */
        dp_devnode devnodes[DP_MAX_DEVNODES];
        size_t n_devnodes;
        /* DP_KIND_CORE */
        cpuset cpus;                    /* every SMT sibling of the core */
} dp_device;

typedef struct dp_device_list {
        dp_device *items;               /* sorted by id for NICs; by first CPU for cores */
        size_t n, cap;
} dp_device_list;

/* Append a copy of d. -E2BIG beyond DP_MAX_DEVICES, -EEXIST for a duplicate id,
 * -EINVAL for an empty or over-long id, -ENOMEM; the list is unchanged on failure. */
int dp_device_list_add(dp_device_list *l, const dp_device *d);
/* Deep copy into *ret (which must be empty/zeroed or freed before). */
int dp_device_list_copy(const dp_device_list *src, dp_device_list *ret);
void dp_device_list_free(dp_device_list *l);
/* Same devices with the same ids, health, NUMA nodes and allocation details, same order. */
bool dp_device_list_equal(const dp_device_list *a, const dp_device_list *b);
/* Lookup by id (exact, len bytes; need not be NUL-terminated). NULL when absent. */
const dp_device *dp_device_list_find(const dp_device_list *l, const char *id, size_t len);

#endif
