/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlices (resource.k8s.io/v1) for the DRA driver spinlane.io: the
 * device names, the devices with the attributes of the DRA contract (from the device
 * map's values as they are, common/device.h: dra-publish.h picks them), the pool split into slices of at
 * most 128 devices, the reply parser, and whether two device lists differ (the pool's
 * generation goes up only then). Pure: no I/O, never logs; links no agent room. */
#ifndef SPIN_AGENT_DRA_SLICE_H
#define SPIN_AGENT_DRA_SLICE_H

#include "cpuset.h"
#include "device.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DRA_DRIVER "spinlane.io"
#define DRA_API_GROUP_VERSION "resource.k8s.io/v1"
#define DRA_SLICE_MAX_DEVICES 128  /* resource.k8s.io/v1 ResourceSliceMaxDevices */
#define DRA_POOL_MAX_SLICES 32     /* spinlane's bound: 4096 devices (the device plugin's
                                      DP_MAX_DEVICES is 1024 a resource) */
#define DRA_DEVICE_NAME_MAX 63     /* a DNS label */
#define DRA_ATTR_STRING_MAX 64     /* DeviceAttributeMaxValueLength */
#define DRA_NAME_MAX 253           /* slice and pool names: DNS subdomains */
#define DRA_WHY_LEN 512
#define DRA_ATTR_NUMA_NODE "resource.kubernetes.io/numaNode" /* standard: int, none when unknown */
#define DRA_ATTR_PCI_BUS_ID "resource.kubernetes.io/pciBusID" /* standard: the PCI address */
#define DRA_ATTR_PCIE_ROOT "resource.kubernetes.io/pcieRoot" /* standard: "pci<domain>:<bus>" */

/* Which resources are served through DRA (--dra-resources: the kinds' short names,
 * device_kind_short): a flag per device_kind. */
typedef struct dra_resources {
        bool nic, core;
} dra_resources;

/* "<node>-spinlane.io" into buf; -ENAMETOOLONG when longer than DRA_NAME_MAX (or buf),
 * -EINVAL for an empty node. */
int dra_slice_name(const char *node, char *buf, size_t len);
/* The name of slice index of the pool: index 0 is dra_slice_name's (so a pool of one
 * slice keeps the name it always had), index i > 0 "<node>-spinlane.io-<i>". Stable: the
 * same index always has the same name. Errors as dra_slice_name, -EINVAL from
 * DRA_POOL_MAX_SLICES on. */
int dra_slice_name_at(const char *node, size_t index, char *buf, size_t len);

/* "nic-0000-00-06-0" / "core-p0c3"; -ENAMETOOLONG past DRA_DEVICE_NAME_MAX, -EINVAL when
 * the result is not a DNS label (lower-case alphanumerics and '-', not at either end). */
int dra_nic_device_name(const char *pci, char *buf, size_t len);
int dra_core_device_name(const char *core_id, char *buf, size_t len);

/* The v1 Device list of the device values *devs[0..n) in their order (the "type" is
 * device_kind_resource of its kind, "ipv4" its address without the prefix length):
 *   NIC  {"name":"nic-<pci>","attributes":{"type":{"string":"dpdk-nic"},"kind":{"string":
 *        "ena"|"mana"},"pciAddress":{"string"},"numaNode":{"int"},"ipv4":{"string"} (only
 *        when known), "mtu":{"int"} (only when known), "resource.kubernetes.io/pcieRoot":
 *        {"string"} (only when known), "resource.kubernetes.io/pciBusID":{"string"},
 *        "resource.kubernetes.io/numaNode":{"int"} (only when known)}}
 *   core {"name":"core-<id>","attributes":{"type":{"string":"isolated-core"},"numaNode":
 *        {"int"},"core":{"string"},"cpus":{"string":"3,11"},
 *        "resource.kubernetes.io/numaNode":{"int"} (only when known)}}
 * spinlane's own numaNode stays as it was (-1 when unknown); the standard one
 * (Kubernetes' "Standard Device Attributes for DRA") is left out when unknown, as that
 * page asks. A device whose name is not a DNS label, or with an attribute longer than
 * DRA_ATTR_STRING_MAX, is left out, and so are devices past DRA_POOL_MAX_SLICES slices;
 * *ret_left_out counts them and why (may be NULL) names the first. 0 and a new array in
 * *ret; -ENOMEM leaves *ret untouched. */
int dra_slice_build(const device_entry *const *devs, size_t n, json_t **ret, size_t *ret_left_out, char *why,
                    size_t why_len);

/* How many slices the pool of devices needs: ceil(n / DRA_SLICE_MAX_DEVICES), 0 for
 * none (NULL or empty). */
size_t dra_pool_slices(const json_t *devices);
/* Slice index's share of devices (the devices in their order, DRA_SLICE_MAX_DEVICES a
 * slice): a new array (the devices shared, not copied); an empty one past the end; NULL
 * on -ENOMEM. */
json_t *dra_pool_chunk(const json_t *devices, size_t index);

/* The whole object: {"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
 * "metadata":{"name":"<node>-spinlane.io"[,"resourceVersion":rv]},"spec":{"driver":
 * "spinlane.io","nodeName":node,"pool":{"name":node,"generation":generation,
 * "resourceSliceCount":1},"devices":devices}} (devices copied). NULL on -ENOMEM or a
 * node dra_slice_name refuses. rv NULL or "": none (a create). */
json_t *dra_slice_json(const char *node, const json_t *devices, int64_t generation, const char *rv);
/* The same for slice index of a pool of count slices (dra_slice_name_at's name,
 * "resourceSliceCount":count); devices are that slice's own (dra_pool_chunk). NULL also
 * for count 0, index >= count or count > DRA_POOL_MAX_SLICES. */
json_t *dra_slice_json_at(const char *node, size_t index, size_t count, const json_t *devices, int64_t generation,
                          const char *rv);

/* Whether two device lists (as dra_slice_build makes them, or as the API server gives
 * them back) differ: a device added, gone, renamed or reordered, an attribute changed.
 * NULL counts as the empty list. */
bool dra_devices_differ(const json_t *a, const json_t *b);

/* --dra-resources: a comma list of "nic", "core" (each at most once; "" none). -EINVAL
 * with why naming the bad word. */
int dra_resources_parse(const char *list, dra_resources *ret, char *why, size_t why_len);

/* What the API server holds: a ResourceSlice as a GET answers it. */
typedef struct dra_slice_seen {
        char resource_version[64];
        int64_t generation;      /* spec.pool.generation */
        bool ours;               /* driver spinlane.io, nodeName and pool.name node, resourceSliceCount 1 */
        bool pool_ours;          /* driver spinlane.io, nodeName and pool.name node (any count) */
        int64_t slice_count;     /* spec.pool.resourceSliceCount; 0 when absent or not a count */
        json_t *devices;         /* spec.devices (new reference; an empty array when absent) */
} dra_slice_seen;

/* Parse the reply body of GET .../resourceslices/<name> for node. -EBADMSG (why says what
 * was wrong) for anything that is not a ResourceSlice with metadata.resourceVersion and
 * spec.pool; 0 and *ret (free with dra_slice_seen_clear) otherwise. */
int dra_slice_parse(const char *body, size_t len, const char *node, dra_slice_seen *ret, char *why, size_t why_len);
void dra_slice_seen_clear(dra_slice_seen *s);

#endif
