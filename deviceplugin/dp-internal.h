/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin engine's insides, shared by its files and by nothing else (never
 * included outside deviceplugin/): the objects (engine, plugin, server, call, Register
 * attempt, completion-queue tags) and the functions one file calls in another. Every
 * field is under e->state except the hand-over queue (e->mu). */
#ifndef SPIN_DP_INTERNAL_H
#define SPIN_DP_INTERNAL_H

#ifndef SPIN_DP_INSIDE /* defined for spindp's own sources only (deviceplugin/CMakeLists.txt) */
#error "dp-internal.h is the engine's insides: include dp-server.h"
#endif

#include "dp-server.h"
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
        M_GENERIC, /* any other method: UNIMPLEMENTED */
        _M_MAX,
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

enum tag_op { OP_REQUEST, OP_UNARY_DONE, OP_STREAM_SEND, OP_STREAM_CLOSE, OP_SHUTDOWN, OP_REGISTER, OP_REFUSED };

typedef struct dp_tag {
        enum tag_op op;
        void *obj;
} dp_tag;

typedef struct dp_srv dp_srv;

typedef struct dp_call {
        dp_srv *srv;
        int method;
        grpc_call *call;
        gpr_timespec deadline;
        grpc_metadata_array md;
        grpc_call_details details; /* M_GENERIC only */
        grpc_byte_buffer *payload;
        grpc_byte_buffer *send_buf;
        grpc_slice status_details;
        bool have_details_slice;
        int cancelled;
        dp_tag t_req, t_batch, t_close;
        /* ListAndWatch */
        bool streaming, initial_sent, send_pending, close_pending, ending, status_sent;
        bool kubelet;            /* the first stream after a Register: never evicted */
        uint64_t sent_gen;
        struct dp_call *next, *prev;
} dp_call;

struct dp_srv {
        dp_plugin *p;
        grpc_server *server;
        void *rm[_M_MAX];
        unsigned refs;           /* live dp_call objects + the pending shutdown tag */
        bool shutting_down;
        bool retired;            /* no longer p->srv: a newer server serves (p->n_retired) */
        dev_t dev;               /* the socket file this server renamed into place */
        ino_t ino;
        dp_tag t_shutdown;
        dp_call *streams;
        unsigned n_streams;
};

typedef struct dp_reg {
        dp_plugin *p;
        grpc_channel *channel;
        rpc_unary u;
        dp_tag tag;
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
        dp_srv *srv;
        unsigned n_retired;      /* older servers still shutting down */
        unsigned serve_gen;      /* names each server's own bind path */
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
        uint64_t refusal_window_ms;
        unsigned refusals_reported;
        uint64_t refusals_unreported;
};

/* A refusal answered on the pump thread, reported on the loop thread. */
typedef struct dp_refusal {
        dp_tag t;
        const char *resource;
        int code;
        char message[512];     /* dp_status.message */
} dp_refusal;

typedef struct q_item {
        void *tag;
        bool ok;
} q_item;

struct dp_engine {
        loop *l;
        hostfs h;
        char dir[PATH_MAX];
        char kubelet_sock[PATH_MAX];
        dp_event_fn fn;
        void *ud;
        grpc_completion_queue *cq;
        pthread_t pump;
        bool pump_started;
        int efd;
        pthread_mutex_t mu;      /* the queue (q, qn, qcap) */
        pthread_mutex_t state;   /* everything else: held by the loop thread in every entry
                                  * point and by the pump thread on its fast path */
        q_item *q;
        size_t qn, qcap;
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

/* ---- dp-pump.c: the completion queue's one owner ---- */
void *dp_pump_main(void *arg);
void dp_pump_push(dp_engine *e, void *tag, bool ok);
int dp_pump_drain(dp_engine *e);
int dp_pump_on_efd(loop *l, int fd, uint32_t events, void *ud);

/* ---- dp-serve.c: the servers and their calls ---- */
int dp_serve_bind(dp_plugin *p);
void dp_serve_retire(dp_srv *s);
void dp_serve_shutdown(dp_srv *s);
void dp_serve_srv_unref(dp_srv *s);
void dp_serve_request(dp_call *c, bool ok);
void dp_serve_call_free(dp_call *c);
void dp_serve_stream_send(dp_call *c);
void dp_serve_stream_maybe_free(dp_call *c);
void dp_serve_stream_sent(dp_call *c, bool ok);
void dp_serve_stream_closed(dp_call *c);
void dp_serve_push_list(dp_plugin *p);
void dp_serve_refusal_report(dp_engine *e, dp_refusal *f);
void dp_serve_refusals_flush(dp_plugin *p);
grpc_byte_buffer *dp_bytes_to_bb(const uint8_t *buf, size_t len);

/* ---- dp-register.c: Register with the kubelet, the dir watch, the 1 s check ---- */
void dp_register_plugin(dp_plugin *p);
void dp_register_done(dp_reg *g, bool ok);
void dp_register_arm_retry(dp_engine *e);
void dp_register_watch_dir(dp_engine *e);
int dp_register_on_inotify(loop *l, const struct inotify_event *ev, void *ud);
int dp_register_on_tick(loop *l, void *ud);
int dp_register_on_retry(loop *l, void *ud);

#endif
