/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlice (resource.k8s.io/v1) for the DRA driver spinlane.io, built from
 * the one device map (device-map.h): one device per Healthy NIC and core of the resources
 * served through DRA, with the attributes of the DRA contract, and whether two device
 * lists differ (the pool's generation goes up only then). Pure: no I/O, never logs. */
#ifndef SPIN_AGENT_DRA_SLICE_H
#define SPIN_AGENT_DRA_SLICE_H

#include "device-map.h"
#include "inventory.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DRA_DRIVER "spinlane.io"
#define DRA_API_GROUP_VERSION "resource.k8s.io/v1"
#define DRA_SLICE_MAX_DEVICES 128  /* resource.k8s.io/v1 ResourceSliceMaxDevices */
#define DRA_DEVICE_NAME_MAX 63     /* a DNS label */
#define DRA_ATTR_STRING_MAX 64     /* DeviceAttributeMaxValueLength */
#define DRA_NAME_MAX 253           /* slice and pool names: DNS subdomains */
#define DRA_WHY_LEN 512

/* Which resources are served through DRA (--dra-resources). */
typedef struct dra_resources {
        bool nic, core;
} dra_resources;

/* "<node>-spinlane.io" into buf; -ENAMETOOLONG when longer than DRA_NAME_MAX (or buf),
 * -EINVAL for an empty node. */
int dra_slice_name(const char *node, char *buf, size_t len);

/* "nic-0000-00-06-0" / "core-p0c3"; -ENAMETOOLONG past DRA_DEVICE_NAME_MAX, -EINVAL when
 * the result is not a DNS label (lower-case alphanumerics and '-', not at either end). */
int dra_nic_device_name(const char *pci, char *buf, size_t len);
int dra_core_device_name(const char *core_id, char *buf, size_t len);

/* The v1 Device list of map over inv (the map's sel->inv): every DEVICE_HEALTHY entry of
 * the resources in res, NICs first in PCI order, then cores in first-CPU order:
 *   NIC  {"name":"nic-<pci>","attributes":{"type":{"string":"dpdk-nic"},"kind":{"string":
 *        "ena"|"mana"},"pciAddress":{"string"},"numaNode":{"int"},"ipv4":{"string"},
 *        "mtu":{"int"} (only when known), "resource.kubernetes.io/pcieRoot":{"string"}
 *        (only when known)}}
 *   core {"name":"core-<id>","attributes":{"type":{"string":"isolated-core"},"numaNode":
 *        {"int"},"core":{"string"},"cpus":{"string":"3,11"}}}
 * A slice holds at most DRA_SLICE_MAX_DEVICES: the devices beyond are left out (not
 * split over more slices: the pool stays one slice, resourceSliceCount 1), and so is a
 * device whose name is not a DNS label; *ret_left_out counts them and why (may be NULL)
 * names the first. 0 and a new array in *ret; -ENOMEM leaves *ret untouched. */
int dra_slice_devices(const inventory *inv, const device_map *map, dra_resources res, json_t **ret,
                      size_t *ret_left_out, char *why, size_t why_len);

/* The whole object: {"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
 * "metadata":{"name":"<node>-spinlane.io"[,"resourceVersion":rv]},"spec":{"driver":
 * "spinlane.io","nodeName":node,"pool":{"name":node,"generation":generation,
 * "resourceSliceCount":1},"devices":devices}} (devices copied). NULL on -ENOMEM or a
 * node dra_slice_name refuses. rv NULL or "": none (a create). */
json_t *dra_slice_json(const char *node, const json_t *devices, int64_t generation, const char *rv);

/* Whether two device lists (as dra_slice_devices makes them, or as the API server gives
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
        json_t *devices;         /* spec.devices (new reference; an empty array when absent) */
} dra_slice_seen;

/* Parse the reply body of GET .../resourceslices/<name> for node. -EBADMSG (why says what
 * was wrong) for anything that is not a ResourceSlice with metadata.resourceVersion and
 * spec.pool; 0 and *ret (free with dra_slice_seen_clear) otherwise. */
int dra_slice_parse(const char *body, size_t len, const char *node, dra_slice_seen *ret, char *why, size_t why_len);
void dra_slice_seen_clear(dra_slice_seen *s);

#endif
