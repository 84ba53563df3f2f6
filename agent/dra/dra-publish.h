/* SPDX-License-Identifier: Apache-2.0 */
/* DRA's ResourceSlices as a service of the daemon: the device map (the one rule, as the
 * device plugins get it) turned into the slices' devices after every scan and handed
 * to the reconciler (dra-slices.h). The daemon calls these four
 * and nothing else of the slices. Top-level code: logs. */
#ifndef SPIN_DRA_PUBLISH_H
#define SPIN_DRA_PUBLISH_H

#include "device-map.h"
#include "dra-slice.h"
#include "inventory.h"
#include "kube-client.h"
#include "loop.h"
#include "select.h"

#include <jansson.h>
#include <stddef.h>

/* The devices of map as dra_slice_build lists them: every DEVICE_HEALTHY value of the
 * resources in res, as it is, NICs first in PCI order, then cores in first-CPU order (see
 * dra-slice.h for the attributes). Errors, *ret_left_out and why as dra_slice_build. Pure
 * (no I/O, never logs). */
int dra_slice_devices(const device_map *map, dra_resources res, json_t **ret, size_t *ret_left_out, char *why,
                      size_t why_len);

typedef struct dra_publish dra_publish;

/* Publishing res for node through kube (not owned; it must outlive the publisher). Logs
 * what it starts. */
int dra_publish_new(loop *l, kube_client *kube, const char *node, dra_resources res, dra_publish **ret);
/* After a scan: the daemon's device map (built once a scan, with its history: the
 * daemon's) published, the slices read back (someone may have deleted or edited one).
 * Accepts NULL. */
void dra_publish_rescan(dra_publish *p, const device_map *map);
/* The agent stops advertising: as dra_slices_stop. Accepts NULL (0). */
int dra_publish_stop(dra_publish *p, void (*done)(void *ud), void *ud);
/* Accepts NULL. */
void dra_publish_free(dra_publish *p);

#endif
