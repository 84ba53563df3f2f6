/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin servers on the gRPC C core: one server per resource on its own unix
 * socket in the kubelet's device-plugins dir, registration with kubelet.sock, and
 * recovery from a removed socket (inotify on the dir, a 1 s check as a safety net); a
 * kubelet restart is reported (DP_EVENT_KUBELET_RESTART) for the owner to rebuild.
 * On common/grpc's engine: one completion queue drained by one pump thread. Unary calls
 * (Allocate, GetPreferredAllocation, options) are answered on that thread under the
 * engine's state lock; everything else is handed to the agent's event loop through an
 * eventfd and runs there under the same lock. The dp_event callback and every dp_* function below run on
 * the loop thread only. Never logs: what happens is reported through dp_event. */
#ifndef SPIN_DP_SERVER_H
#define SPIN_DP_SERVER_H

#include "dp-devices.h"
#include "dp-request.h"
#include "hostfs.h"
#include "loop.h"

#include <stdbool.h>
#include <stdint.h>

#define DP_KUBELET_DIR "/var/lib/kubelet/device-plugins"
#define DP_KUBELET_SOCKET "kubelet.sock"
#define DP_MAX_PLUGINS 4
#define DP_MAX_STREAMS 256        /* ListAndWatch streams per server; more get RESOURCE_EXHAUSTED */
#define DP_REFUSAL_BURST 10       /* refusals reported one by one per window and plugin */
#define DP_REFUSAL_WINDOW_MS 10000
#define DP_IDLE_CONNECTION_MS 20000 /* a plugin connection without a call is closed after this */
#define DP_STOP_TIMEOUT_MS 3000   /* dp_engine_free(): longest wait for our calls to be released */

typedef struct dp_engine dp_engine;
typedef struct dp_plugin dp_plugin;

typedef enum dp_event_type {
        DP_EVENT_SERVING,         /* the socket is bound and answering */
        DP_EVENT_SERVE_FAILED,    /* binding failed (message); retried by the 1 s check */
        DP_EVENT_WAITING,         /* serving, kubelet.sock absent: waiting for it (once per absence) */
        DP_EVENT_REGISTERED,      /* the kubelet accepted Register */
        DP_EVENT_REGISTER_FAILED, /* Register failed: code/message from the kubelet; retry_ms */
        DP_EVENT_RESTART,         /* socket removed: serving again */
        DP_EVENT_KUBELET_RESTART, /* kubelet.sock re-created after a Register went out: the
                                   * kubelet restarted (message). Once per engine; the engine
                                   * does nothing more about it: its owner tears it down and
                                   * builds a new one (outside this callback), which registers */
        DP_EVENT_REFUSED,         /* a request was refused (code, message); at most
                                   * DP_REFUSAL_BURST per DP_REFUSAL_WINDOW_MS and plugin */
        DP_EVENT_REFUSALS_UNREPORTED, /* the refusals beyond that, summed up (message) */
        DP_EVENT_STOPPED,         /* after dp_engine_stop(): every server and call is gone */
        DP_EVENT_TEARDOWN_UNFINISHED, /* dp_engine_free(): gRPC still busy at the bound (message) */
} dp_event_type;

typedef struct dp_event {
        dp_event_type type;
        const char *resource;     /* NULL for DP_EVENT_STOPPED */
        int code;                 /* gRPC status code where one applies */
        const char *message;      /* "" when none */
        unsigned retry_ms;        /* DP_EVENT_REGISTER_FAILED */
} dp_event;

typedef void (*dp_event_fn)(const dp_event *ev, void *userdata);

/* The engine: the completion queue, its pump thread, the dir watch. h is copied. */
int dp_engine_new(loop *l, const hostfs *h, dp_event_fn fn, void *userdata, dp_engine **ret);
/* Stops whatever still runs and waits, at most DP_STOP_TIMEOUT_MS, for the calls to be
 * released; joins the pump thread, waits (bounded) until gRPC has finished its own
 * teardown, frees the plugins. When either bound runs out: DP_EVENT_TEARDOWN_UNFINISHED;
 * after the first, nothing is freed (gRPC still holds calls): only exit may follow.
 * Accepts NULL. */
void dp_engine_free(dp_engine *e);
/* dp_engine_free() without the wait for gRPC's own teardown, for a caller that builds
 * another engine at once (the daemon's rebuild): what gRPC still closes (a kubelet's
 * connection to the old socket) ends on its threads, and the last dp_engine_free()
 * before exit waits for all of it. Accepts NULL. */
void dp_engine_release(dp_engine *e);

/* A resource. resource_name e.g. "spinlane.io/dpdk-nic"; socket_name e.g.
 * "spinlane-dpdk-nic.sock" (a file name in DP_KUBELET_DIR). Before dp_engine_start(). */
int dp_engine_add_plugin(dp_engine *e, device_kind kind, const char *resource_name,
                         const char *socket_name, const dp_alloc_config *cfg, dp_plugin **ret);

/* Serve every plugin, register each once kubelet.sock exists. */
int dp_engine_start(dp_engine *e);
/* Begin the shutdown: streams ended, calls cancelled, servers stopped (gRPC removes
 * their socket files). DP_EVENT_STOPPED is reported when done. Idempotent. */
void dp_engine_stop(dp_engine *e);
bool dp_engine_stopped(const dp_engine *e);

/* Replace the device list (copied). Open ListAndWatch streams get the new list when it
 * differs. Returns 1 when it changed, 0 when not, -ENOMEM. */
int dp_plugin_set_devices(dp_plugin *p, const device_list *devices);
void dp_plugin_set_config(dp_plugin *p, const dp_alloc_config *cfg);
const device_list *dp_plugin_devices(const dp_plugin *p);
bool dp_plugin_registered(const dp_plugin *p);

/* Counters of one plugin, for the metrics. Allocate latency is the time from the handler
 * taking the request (as it leaves the completion queue) to its answer being handed to
 * gRPC, in buckets whose
 * upper bounds (microseconds) are dp_alloc_bucket_us[] (each count is of that bucket
 * alone, not cumulative); calls beyond the last bound count in alloc_count only. */
#define DP_ALLOC_BUCKETS 12
extern const uint32_t dp_alloc_bucket_us[DP_ALLOC_BUCKETS];
typedef struct dp_plugin_stats {
        uint64_t allocations;          /* Allocate calls answered OK */
        uint64_t allocations_refused;  /* Allocate calls refused (any status but OK) */
        uint64_t alloc_count;          /* both: the histogram's count */
        uint64_t alloc_sum_ns;
        uint64_t alloc_bucket[DP_ALLOC_BUCKETS];
        uint64_t registrations;        /* Register calls the kubelet accepted */
        uint64_t register_failures;
        uint64_t restarts;             /* served again: socket removed, kubelet restarted (the
                                        * daemon counts the rebuild of a kubelet restart) */
} dp_plugin_stats;
/* A consistent copy (taken under the engine's lock). */
void dp_plugin_get_stats(const dp_plugin *p, dp_plugin_stats *ret);
/* The counters start from *from (copied): a rebuilt plugin of the same resource continues
 * its predecessor's. Before dp_engine_start(). */
void dp_plugin_carry_stats(dp_plugin *p, const dp_plugin_stats *from);

#endif
