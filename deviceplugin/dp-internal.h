/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin engine's insides, shared by its files and by nothing else (never
 * included outside deviceplugin/): the objects (engine, plugin, server, call, Register
 * attempt, a stream's data) and the functions one file calls in another. Every field is
 * under e->state. The completion queue, its pump and the servers' calls are common/grpc's
 * rpc-server. */
#ifndef SPIN_DP_INTERNAL_H
#define SPIN_DP_INTERNAL_H

#ifndef SPIN_DP_INSIDE /* defined for spindp's own sources only (deviceplugin/CMakeLists.txt) */
#error "dp-internal.h is the engine's insides: include dp-server.h"
#endif

#include "dp-server.h"
#include "rpc-server.h"
#include "rpc-unary.h"

#include <grpc/grpc.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

enum {
        M_OPTIONS,
        M_LIST_AND_WATCH,
        M_PREFERRED,
        M_ALLOCATE,
        M_PRESTART,
        _M_MAX,                  /* any other method: UNIMPLEMENTED (the engine answers) */
};

/* One Register attempt: the call's deadline, and the longest a connection to kubelet.sock
 * may take (connect and the HTTP/2 SETTINGS exchange; gRPC calls this bound
 * GRPC_ARG_MIN_RECONNECT_BACKOFF_MS). A loaded node needs far more than gRPC's 100 ms
 * minimum: an attempt cut short there fails Register for nothing, and gRPC 1.51 can keep
 * such a connection alive for good (then gRPC's teardown never finishes). */
#define DP_REGISTER_TIMEOUT_MS 5000
/* How long dp_engine_free() waits for gRPC's own teardown once every object of ours is
 * gone: a connection attempt still in flight runs to DP_REGISTER_TIMEOUT_MS first. Below
 * the DaemonSet's 15 s termination grace period. */
#define DP_GRPC_TEARDOWN_MS (2 * DP_REGISTER_TIMEOUT_MS)

/* A ListAndWatch stream's own data (rpc_call_data): the list generation it last got. */
typedef struct dp_stream {
        bool sent;
        uint64_t sent_gen;
} dp_stream;

typedef struct dp_reg {
        dp_plugin *p;
        grpc_channel *channel;
        rpc_unary u;
        rpc_tag tag;
} dp_reg;

struct dp_plugin {
        dp_engine *e;
        device_kind kind;
        char resource[128];
        char socket_name[64];
        char sock_path[PATH_MAX];
        dp_alloc_config cfg;
        device_list devices;
        uint64_t gen;
        uint8_t *list_buf;
        size_t list_len;
        rpc_server *srv;         /* the server on sock_path; older ones still shutting down
                                  * are counted by the engine (rpc_engine_servers) */
        bool serving;            /* srv is bound and not shutting down */
        bool want_serve;         /* (re)start once the old server is gone */
        bool serve_failed;       /* the last attempt to serve failed (reported once) */
        dp_reg *reg;
        bool registered, register_again;
        bool protect_next;       /* the next ListAndWatch is the kubelet's (a Register went out) */
        unsigned backoff_ms;
        uint64_t retry_at;       /* loop_now_ms() of the next Register attempt; 0 = none */
        dp_plugin_stats stats;   /* under the state lock */
        /* refusal reports, rate-limited (state lock): at most DP_REFUSAL_BURST reported per
         * DP_REFUSAL_WINDOW_MS, the rest counted and summed up by the 1 s check */
        rpc_ratelimit refusals;
};

/* A refusal answered on the pump thread, reported on the loop thread. */
typedef struct dp_refusal {
        rpc_tag t;
        dp_engine *e;
        const char *resource;
        int code;
        char message[512];     /* dp_status.message */
} dp_refusal;

struct dp_engine {
        loop *l;
        hostfs h;
        char dir[PATH_MAX];
        char kubelet_sock[PATH_MAX];
        dp_event_fn fn;
        void *ud;
        rpc_engine *rpc;         /* the completion queue, its pump, the servers */
        pthread_mutex_t state;   /* everything: held by the loop thread in every entry point
                                  * and by the engine's pump thread on its fast path */
        int ifd, wd;
        struct {                 /* what one round of dir-watch events brought (loop thread) */
                bool kubelet_created, kubelet_removed, dir_gone;
                bool sock_gone[DP_MAX_PLUGINS];
        } seen;
        int tick_fd, retry_fd;
        dp_plugin *plugins[DP_MAX_PLUGINS];
        size_t n_plugins;
        bool started, stopping, stopped;
        bool waiting_reported;   /* DP_EVENT_WAITING sent since kubelet.sock was last seen */
        bool kubelet_seen;       /* a Register went out: a kubelet.sock created later is a restart */
        bool kubelet_gone;       /* since then, kubelet.sock (or the dir) went away: no more Register */
        bool kubelet_restarted;  /* DP_EVENT_KUBELET_RESTART reported (once per engine) */
};

static inline uint64_t dp_mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t dp_mono_ms(void)
{
        return dp_mono_ns() / 1000000;
}

static inline bool dp_path_exists(const char *p)
{
        struct stat st;
        return lstat(p, &st) == 0;
}

/* ---- dp-server.c: the engine and the plugins' life cycle ---- */
void dp_emit(dp_engine *e, dp_event_type type, const char *resource, int code, unsigned retry_ms,
             const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void dp_engine_check_stopped(dp_engine *e);
void dp_plugin_start_serving(dp_plugin *p);
void dp_plugin_after_srv_gone(dp_plugin *p);
void dp_plugin_restart(dp_plugin *p, const char *why);

/* ---- dp-serve.c: the servers and their calls ---- */
int dp_serve_bind(dp_plugin *p);
void dp_serve_retire(dp_plugin *p);
void dp_serve_shutdown(dp_plugin *p);
void dp_serve_push_list(dp_plugin *p);
void dp_serve_refusals_flush(dp_plugin *p);

/* ---- dp-register.c: Register with the kubelet, the dir watch, the 1 s check ---- */
void dp_register_plugin(dp_plugin *p);
void dp_register_arm_retry(dp_engine *e);
void dp_register_watch_dir(dp_engine *e);
int dp_register_on_inotify(loop *l, const struct inotify_event *ev, void *ud);
int dp_register_on_tick(loop *l, void *ud);
int dp_register_on_retry(loop *l, void *ud);

#endif
