/* SPDX-License-Identifier: Apache-2.0 */
/* Which pod's container holds which of the agent's devices: the kubelet PodResources v1
 * List reply (protobuf bytes) turned into a flat table of (resource, device, pod,
 * namespace, container), only for resources under the agent's prefix. Pure: no I/O, no
 * globals, never logs; the reply is untrusted and bounded (size, entries, string
 * lengths and bytes); ret untouched on failure. */
#ifndef SPIN_PODRES_PARSE_H
#define SPIN_PODRES_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define PODRES_MAX_REPLY (4u * 1024 * 1024) /* bytes of a List reply (gRPC's default cap) */
#define PODRES_MAX_ASSIGN 4096              /* (device, container) pairs kept */
#define PODRES_RESOURCE_LEN 128
#define PODRES_DEVICE_LEN 64                /* kubelet device IDs are at most 63 chars */
#define PODRES_POD_LEN 254                  /* a DNS subdomain, 253 */
#define PODRES_NAME_LEN 64                  /* namespace and container: DNS labels, 63 */

typedef struct podres_assignment {
        char resource[PODRES_RESOURCE_LEN]; /* "spinlane.io/dpdk-nic" */
        char device[PODRES_DEVICE_LEN];     /* "0000:00:06.0", "p0c1" */
        char pod[PODRES_POD_LEN];
        char ns[PODRES_NAME_LEN];
        char container[PODRES_NAME_LEN];
        unsigned seq; /* position in the reply */
} podres_assignment;

typedef struct podres_table {
        podres_assignment *items; /* sorted by resource, then device; one entry per device */
        size_t n;
        size_t skipped; /* entries of ours left out: a name too long or not printable ASCII,
                           a device listed twice, or beyond PODRES_MAX_ASSIGN */
} podres_table;

/* Decode a ListPodResourcesResponse of len bytes and keep the devices of the resources
 * named "<prefix>/..." (prefix e.g. "spinlane.io"). -EBADMSG (err says why) for bytes that
 * are not that message, -E2BIG beyond PODRES_MAX_REPLY, -ENOMEM. */
int podres_parse_list(const uint8_t *buf, size_t len, const char *prefix, podres_table *ret, char *err,
                      size_t err_size);
void podres_table_free(podres_table *t);
/* The holder of device of resource, or NULL. */
const podres_assignment *podres_find(const podres_table *t, const char *resource, const char *device);

#endif
