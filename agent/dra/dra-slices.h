/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlices (DRA, resource.k8s.io/v1) kept as the device map says, through
 * cluster reporting's API client: the pool split into as many slices as it needs (128
 * devices each, names "<node>-spinlane.io", "<node>-spinlane.io-1", ...; every slice with
 * the pool's generation and resourceSliceCount), read back, created when missing (put
 * back when someone deleted one), updated (PUT with its resourceVersion; a 409 reads the
 * pool again) when a slice differs, the generation up by one each time and written to
 * every slice, slices past the pool's end deleted (the pool shrank), and every slice
 * deleted when nothing is published or the agent stops. Backoff on 5xx, 429 and
 * connection errors; one line for what retrying soon cannot fix (RBAC, ...). Never waits:
 * the device plugins do not depend on it. Top-level code: logs. */
#ifndef SPIN_DRA_SLICES_H
#define SPIN_DRA_SLICES_H

#include "kube-client.h"
#include "loop.h"

#include <jansson.h>
#include <stdbool.h>

#define DRA_SLICES_RESYNC_MS 300000    /* read back with no change (SPINLANE_KUBE_RESYNC_MS) */
#define DRA_SLICES_BLOCKED_MS 60000    /* retry of a refusal (SPINLANE_KUBE_RESYNC_MS) */
#define DRA_SLICES_RESCAN_SYNC_MS 1000 /* a re-scan reads it back at most this often */
#define DRA_SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"

typedef struct dra_slices dra_slices;

/* Publishing for node through kube (not owned; it must outlive the reconciler). */
int dra_slices_new(loop *l, kube_client *kube, const char *node, dra_slices **ret);
/* Cancels what is in flight. Accepts NULL. */
void dra_slices_free(dra_slices *s);

/* The devices to publish now (dra_slice_build's list, copied; split over the slices in
 * this order); an empty list deletes the slices. */
void dra_slices_set(dra_slices *s, const json_t *devices);
/* After a re-scan: read the slices back (someone deleted or edited one), not sooner than
 * DRA_SLICES_RESCAN_SYNC_MS after the last read. Accepts NULL. */
void dra_slices_resync(dra_slices *s);
/* The agent stops advertising: delete the slices. 1: DELETEs are under way and done(ud)
 * runs once the last is answered (whatever the answers); 0: nothing to wait for (done is
 * not called). Nothing else is sent afterwards. */
int dra_slices_stop(dra_slices *s, void (*done)(void *ud), void *ud);

#endif
