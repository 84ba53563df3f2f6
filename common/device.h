/* SPDX-License-Identifier: Apache-2.0 */
/* The one device value: a NIC or core of the node as spinlane advertises it (or why not):
 * its resource kind, kubelet ID, state and one reason, the line a person reads, its
 * attributes (NUMA node, PCI address, MAC, kind, driver, netdev, IPv4 address, MTU, PCIe
 * root), the device
 * nodes a container receives and, for a core, its CPUs. agent/node/device-map.c builds
 * one per device once a scan; the device plugins, the DRA plugin, the ResourceSlice,
 * `explain`, `inventory --json`, the node checks and the report all read it as is. Also
 * the one resource-kind enum and its names. Pure values: no I/O, never logs. */
#ifndef SPIN_DEVICE_H
#define SPIN_DEVICE_H

#include "cpuset.h"

#include <stdbool.h>
#include <stddef.h>

/* The one resource kind (each kind is defined here and nowhere else). */
typedef enum device_kind {
        DEVICE_NIC,  /* <prefix>/dpdk-nic: one DPDK-ready NIC/VF, ID = PCI address */
        DEVICE_CORE, /* <prefix>/isolated-core: one whole physical core, ID = stable core id */
} device_kind;
#define DEVICE_KINDS 2

#define DEVICE_PREFIX_DEFAULT "spinlane.io" /* the config's resource_prefix by default */

/* The resource name under a prefix: "dpdk-nic", "isolated-core". */
const char *device_kind_resource(device_kind k);
/* The short name (--dra-resources, the DRA device names, messages): "nic", "core". */
const char *device_kind_short(device_kind k);
/* "<prefix>/<resource>" into buf (prefix NULL: DEVICE_PREFIX_DEFAULT); returns buf. */
char *device_kind_full(device_kind k, const char *prefix, char *buf, size_t len);

typedef enum device_state {
        DEVICE_HEALTHY,        /* advertised, Healthy: a pod may be given it */
        DEVICE_UNHEALTHY,      /* advertised (the kubelet knows it), Unhealthy: why says why */
        DEVICE_NOT_ADVERTISED, /* the kubelet never hears of it: why says why */
} device_state;

/* The one reason, in the order the rule asks (the first that applies). */
typedef enum device_why {
        DEVICE_OK,           /* Healthy */
        DEVICE_VANISHED,     /* advertised before, gone from the node (Unhealthy, kept listed) */
        /* NICs */
        DEVICE_PRIMARY,      /* it carries the node's default route: never taken */
        DEVICE_NOT_SELECTED, /* the config's nics.* selectors leave it out (detail names which) */
        DEVICE_OVER_MAX,     /* nics.max NICs were taken before it */
        DEVICE_IN_USE,       /* the node's own networking uses it: never taken */
        DEVICE_USE_UNKNOWN,  /* whether the node uses it cannot be told: not taken */
        DEVICE_NOT_READY,    /* not usable by a DPDK pod as it stands (driver, device nodes) */
        DEVICE_NO_ADDRESS,   /* DPDK-ready and selected, but its IPv4 address is not known */
        /* cores */
        DEVICE_NOT_ISOLATED, /* none of its CPUs is isolated */
        DEVICE_SPLIT,        /* some of its SMT siblings are isolated, some not (or offline) */
        DEVICE_OUTSIDE_CPUS, /* isolated, but the config's cores.cpus leaves a sibling out */
} device_why;

/* "healthy", "unhealthy", "not-advertised". */
const char *device_state_name(device_state s);
/* "ok", "vanished", "primary", "not-selected", "over-max", "in-use", "use-unknown",
 * "not-ready", "no-address", "not-isolated", "split", "outside-cpus". */
const char *device_why_name(device_why w);

#define DEVICE_ID_LEN 64        /* kubelet device IDs are at most 63 chars + NUL */
#define DEVICE_DETAIL_LEN 1024  /* longer details end in "..." */
#define DEVICE_MAX_DEVNODES 4   /* device nodes one NIC needs in a container */
#define DEVICE_DEVPATH_LEN 64
#define DEVICE_MAX 1024         /* devices of one resource in a list */

typedef struct device_devnode {
        char host[DEVICE_DEVPATH_LEN];      /* the host's own path (never --root prefixed) */
        char container[DEVICE_DEVPATH_LEN]; /* where it appears in the container */
} device_devnode;

typedef struct device_entry {
        device_kind kind;
        char id[DEVICE_ID_LEN];         /* the kubelet device ID: the PCI address, the core id */
        device_state state;
        device_why why;
        char detail[DEVICE_DETAIL_LEN]; /* one line a person reads: what it is, or why not */
        long index;                     /* its row in the inventory it was built from
                                           (inv->nics / inv->cores); -1: vanished */
        int numa_node;                  /* -1 unknown: no TopologyInfo is sent then */
        /* DEVICE_NIC: what the Allocate env and the slice's attributes are made of */
        char pci[16];                   /* "0000:00:06.0" */
        char mac[18];                   /* "" unknown */
        char nic_kind[8];               /* "ena", "mana", "other" */
        char driver[32];                /* "vfio-pci", "igb_uio", "mana", ... */
        char netdev[16];                /* "" none */
        char ipv4[20];                  /* its address "a.b.c.d/len"; "" none known */
        char gateway[16];               /* "a.b.c.d"; "" none (on-link peers only) */
        int mtu;                        /* its netdev's MTU; -1 unknown (the ResourceSlice's) */
        char pcie_root[32];             /* "pci0000:00"; "" unknown (the ResourceSlice's) */
        device_devnode devnodes[DEVICE_MAX_DEVNODES];
        size_t n_devnodes;
        /* DEVICE_CORE */
        cpuset cpus;                    /* every SMT sibling of the core */
} device_entry;

/* Whether the kubelet is told of it (Healthy or Unhealthy). */
bool device_listed(const device_entry *e);
bool device_healthy(const device_entry *e);

/* What the kubelet and a pod see of two values: same id, health, NUMA node, attributes
 * (but the netdev, MTU and PCIe root, which only the ResourceSlice publishes), device
 * nodes and CPUs. The reason and the detail are for people. */
bool device_same(const device_entry *a, const device_entry *b);

/* The devices of one resource as a device plugin lists them: NICs by id, cores by
 * first CPU. */
typedef struct device_list {
        device_entry *items;
        size_t n, cap;
} device_list;

/* Append a copy of d. -E2BIG beyond DEVICE_MAX, -EEXIST for a duplicate id, -EINVAL for
 * an empty or over-long id, -ENOMEM; the list is unchanged on failure. */
int device_list_add(device_list *l, const device_entry *d);
/* Deep copy into *ret (which must be empty/zeroed or freed before). */
int device_list_copy(const device_list *src, device_list *ret);
void device_list_free(device_list *l);
/* Same devices (device_same), same order. */
bool device_list_equal(const device_list *a, const device_list *b);
/* Lookup by id (exact, len bytes; need not be NUL-terminated). NULL when absent. */
const device_entry *device_list_find(const device_list *l, const char *id, size_t len);
/* Sort as a device plugin lists them (NICs by id, cores by first CPU, then id). */
void device_list_sort(device_list *l, device_kind k);

#endif
