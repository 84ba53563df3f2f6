/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlice (DRA, resource.k8s.io/v1) kept as the device map says, through
 * cluster reporting's API client: read it back, create it when missing (put back when
 * someone deleted it), update it (PUT with its resourceVersion; a 409 reads it again)
 * when its devices differ, the pool generation up by one each time, and delete it when
 * nothing is published or the agent stops. Backoff on 5xx, 429 and connection errors;
 * one line for what retrying soon cannot fix (RBAC, ...). Never waits: the device
 * plugins do not depend on it. Top-level code: logs. */
#ifndef SPIN_RUN_SLICES_H
#define SPIN_RUN_SLICES_H

#include "kube-client.h"
#include "loop.h"

#include <jansson.h>
#include <stdbool.h>

#define RUN_SLICES_RESYNC_MS 300000    /* read back with no change (SPINLANE_KUBE_RESYNC_MS) */
#define RUN_SLICES_BLOCKED_MS 60000    /* retry of a refusal (SPINLANE_KUBE_RESYNC_MS) */
#define RUN_SLICES_RESCAN_SYNC_MS 1000 /* a re-scan reads it back at most this often */
#define RUN_SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"

typedef struct run_slices run_slices;

/* Publishing for node through kube (not owned; it must outlive the reconciler). */
int run_slices_new(loop *l, kube_client *kube, const char *node, run_slices **ret);
/* Cancels what is in flight. Accepts NULL. */
void run_slices_free(run_slices *s);

/* The devices to publish now (dra_slice_devices' list, copied); an empty list deletes
 * the slice. */
void run_slices_set(run_slices *s, const json_t *devices);
/* After a re-scan: read the slice back (someone deleted or edited it), not sooner than
 * RUN_SLICES_RESCAN_SYNC_MS after the last read. Accepts NULL. */
void run_slices_resync(run_slices *s);
/* The agent stops advertising: delete the slice. 1: a DELETE is under way and done(ud)
 * runs once it is answered (whatever the answer); 0: nothing to wait for (done is not
 * called). Nothing else is sent afterwards. */
int run_slices_stop(run_slices *s, void (*done)(void *ud), void *ud);

#endif
