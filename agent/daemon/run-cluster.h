/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster reporting in the daemon: the agent's Node labels and the Events of verdict
 * changes, sent through agent/kube from the loop, with exponential backoff and jitter on
 * 5xx, 429 (Retry-After honoured) and connection errors, and one clear log line for what
 * retrying soon cannot fix (RBAC, a wrong CA, a rejected token, a missing Node). Nothing
 * here ever waits: the device plugins, node preparation and the verdicts on stdout never
 * depend on the API server; what it missed is sent when it answers again. Top-level code:
 * logs (never a token). */
#ifndef SPIN_RUN_CLUSTER_H
#define SPIN_RUN_CLUSTER_H

#include "loop.h"
#include "report.h"

#include <stdbool.h>
#include <stdint.h>

#define RUN_CLUSTER_BACKOFF_MIN_MS 500
#define RUN_CLUSTER_BACKOFF_MAX_MS 60000
#define RUN_CLUSTER_BLOCKED_MS 60000  /* retry of what retrying soon cannot fix */
#define RUN_CLUSTER_RESYNC_MS 300000  /* labels checked again with no change (SPINLANE_KUBE_RESYNC_MS) */
#define RUN_CLUSTER_RESCAN_SYNC_MS 1000 /* a re-scan reads the Node again at most this often */
#define RUN_CLUSTER_EVENT_CALLS 4     /* Event calls in flight at most */

typedef enum run_cluster_call {
        RUN_CLUSTER_CALL_NODE_GET,
        RUN_CLUSTER_CALL_NODE_PATCH,
        RUN_CLUSTER_CALL_EVENT_CREATE,
        RUN_CLUSTER_CALL_EVENT_PATCH,
        _RUN_CLUSTER_CALL_MAX,
} run_cluster_call;

typedef enum run_cluster_err {
        RUN_CLUSTER_ERR_TRANSPORT, /* connection refused/reset, timeout, DNS */
        RUN_CLUSTER_ERR_TLS,       /* the server's certificate or the CA */
        RUN_CLUSTER_ERR_TOKEN,     /* the token file could not be read */
        RUN_CLUSTER_ERR_UNAUTHORIZED,
        RUN_CLUSTER_ERR_FORBIDDEN,
        RUN_CLUSTER_ERR_NOT_FOUND,
        RUN_CLUSTER_ERR_CONFLICT,
        RUN_CLUSTER_ERR_INVALID,
        RUN_CLUSTER_ERR_THROTTLED,
        RUN_CLUSTER_ERR_SERVER,
        RUN_CLUSTER_ERR_BAD_REPLY,
        RUN_CLUSTER_ERR_OTHER,
        _RUN_CLUSTER_ERR_MAX,
} run_cluster_err;

typedef struct run_cluster_stats {
        bool api_up;                /* the last call was answered (not a retryable failure) */
        bool labels_synced;         /* the Node carries the labels as they are now */
        uint64_t calls[_RUN_CLUSTER_CALL_MAX];
        uint64_t errors[_RUN_CLUSTER_CALL_MAX][_RUN_CLUSTER_ERR_MAX];
        uint64_t events_warning, events_normal; /* Events raised (before aggregation) */
        uint64_t events_held;                   /* held back by the rate limit */
} run_cluster_stats;

const char *run_cluster_call_name(run_cluster_call c); /* "node_get", ... */
const char *run_cluster_err_name(run_cluster_err e);   /* "transport", ... */

typedef struct run_cluster run_cluster;

/* Cluster reporting from the environment: NODE_NAME (the Node; without it reporting is off
 * and that is logged once), --kubeconfig FILE (NULL: in-cluster, from
 * KUBERNETES_SERVICE_HOST/PORT and the service-account directory; without them reporting
 * is off, logged once). 0 and *ret (NULL when off); a kubeconfig that cannot be used is
 * logged and -EINVAL: a named file must work, as --config must. */
int run_cluster_new(loop *l, const char *kubeconfig, run_cluster **ret);
void run_cluster_free(run_cluster *c);

/* What the node looks like now: labels to set, checks for the Events of their changes
 * (the first call's failing checks raise Warnings). Sends what changed, now or once the
 * API server answers. */
void run_cluster_update(run_cluster *c, const report_labels *labels, const report_checks *checks);

/* A re-scan (SIGHUP, the periodic one, inotify, uevents): GET the Node again and patch
 * what differs from the labels last given (someone removed or edited one), not sooner
 * than RUN_CLUSTER_RESCAN_SYNC_MS after the last sync began; during a sync in flight,
 * once more after it. While the labels are refused (RBAC, 404, ...) it waits for that
 * retry. Accepts NULL. */
void run_cluster_resync(run_cluster *c);

void run_cluster_get_stats(const run_cluster *c, run_cluster_stats *ret);

/* The API client (owned by c) and the Node of cluster reporting, for the daemon's other
 * API users (the ResourceSlices, agent/dra/dra-slices.c; the DRA plugin's ResourceClaim reads);
 * valid while c lives. NULL for a NULL c. */
struct kube_client;
struct kube_client *run_cluster_kube(const run_cluster *c);
const char *run_cluster_node(const run_cluster *c);

#endif
