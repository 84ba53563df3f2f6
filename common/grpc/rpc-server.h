/* SPDX-License-Identifier: Apache-2.0 */
/* The one gRPC C-core engine of the daemon: a completion queue drained by one pump thread
 * that hands each completion to the agent's epoll loop through an eventfd; the servers on
 * it (bound under a name of their own and renamed into place, their socket removed while
 * it is theirs, shut down without waiting for their clients), with the protections every
 * server gets (a request size bound, idle connections closed, streams per connection and
 * server capped, unknown methods answered UNIMPLEMENTED); and the queue the unary client
 * calls of rpc-unary.h complete on. Used by the device plugins, the DRA plugin and the
 * PodResources client. Never logs: refusals and the end of a server go to callbacks.
 *
 * Threads: every function here and every callback runs on the loop thread, under the
 * owner's lock when it gave one, except on_call of a server made with fast = true: a
 * unary call of such a server that is not shutting down is taken on the pump thread,
 * under that lock (no thread hop on the hot path; rpc_engine_on_pump() tells which). */
#ifndef SPINLANE_RPC_SERVER_H
#define SPINLANE_RPC_SERVER_H

#include "loop.h"
#include "rpc-unary.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_IDLE_CONNECTION_MS 20000  /* a connection without a call is closed after this */
#define RPC_MAX_CONCURRENT_STREAMS 1024 /* calls open at once on one connection */
#define RPC_MAX_METHODS 16

typedef struct rpc_engine rpc_engine;
typedef struct rpc_server rpc_server;

/* What a completion means: fn(obj, ok) runs on the loop thread. drop (optional) frees obj
 * when the engine is freed with the tag still queued (rpc_engine_post from the pump). */
typedef struct rpc_tag {
        void (*fn)(void *obj, bool ok);
        void *obj;
        void (*drop)(void *obj);
        int kind;                 /* the engine's own; 0 for the owner's tags */
} rpc_tag;

/* One call a server took. The owner reads method and payload and answers it with
 * rpc_call_reply(), or (a stream method) opens it with rpc_stream_open(). The engine
 * frees it when gRPC is done with it (on_call_free first). */
typedef struct rpc_call {
        rpc_server *srv;
        int method;               /* index into the server's methods; -1: unknown (answered by the engine) */
        grpc_call *call;
        gpr_timespec deadline;
        grpc_byte_buffer *payload;
        /* the engine's */
        grpc_metadata_array md;
        grpc_call_details details;
        grpc_byte_buffer *send_buf;
        grpc_slice status_details;
        bool have_details;
        int cancelled;
        rpc_tag t_req, t_batch, t_close;
        bool streaming, initial_sent, send_pending, close_pending, ending, status_sent, protect;
        struct rpc_call *next, *prev;
} rpc_call;

typedef struct rpc_server_opts {
        const char *path;                 /* the socket clients dial; its dir must exist */
        const char *const *methods;       /* registered methods, by index (outlives the server) */
        size_t n_methods;                 /* at most RPC_MAX_METHODS */
        uint32_t stream_methods;          /* bit i: method i streams (never on the pump thread) */
        int max_receive;                  /* bytes of one request */
        unsigned max_streams;             /* open streams per server: beyond, the oldest not
                                           * protected is ended (its client gets RESOURCE_EXHAUSTED) */
        unsigned idle_ms;                 /* 0: RPC_IDLE_CONNECTION_MS */
        const char *stream_name;          /* names the streams in refusal messages */
        bool fast;                        /* unary calls on the pump thread (the engine has a lock) */
        size_t call_extra;                /* bytes of the owner's per-call data (rpc_call_data) */
        void (*on_call)(rpc_call *c, void *ud);
        void (*on_stream_ready)(rpc_call *c, void *ud);  /* a stream may take its next message */
        void (*on_refused)(rpc_server *s, int code, const char *message, void *ud); /* the stream cap */
        void (*on_call_free)(rpc_call *c, void *ud);     /* optional */
        void (*on_gone)(rpc_server *s, void *ud);        /* destroyed; s is not to be read */
        void *ud;
} rpc_server_opts;

/* ---- the engine ---- */

/* The queue, its pump thread and the eventfd on loop l. lock (may be NULL: no fast path)
 * is the owner's state lock: held by the pump around a fast call and by the loop thread
 * around every dispatch; the owner holds it in its own entry points. */
int rpc_engine_new(loop *l, pthread_mutex_t *lock, rpc_engine **ret);
/* The queue client calls (rpc_unary_start) complete on; their tag is an rpc_tag. */
grpc_completion_queue *rpc_engine_cq(rpc_engine *e);
/* Servers not yet destroyed, and calls not yet freed. */
unsigned rpc_engine_servers(const rpc_engine *e);
size_t rpc_engine_calls(const rpc_engine *e);
bool rpc_engine_on_pump(const rpc_engine *e);
/* From the pump thread (a fast on_call): t runs on the loop thread. */
void rpc_engine_post(rpc_engine *e, rpc_tag *t, bool ok);
/* No more fast calls, no new requests posted (before the owner shuts its servers down). */
void rpc_engine_stop(rpc_engine *e);
/* Run completions here until done(ud), at most timeout_ms. True when done. */
bool rpc_engine_wait(rpc_engine *e, bool (*done)(void *ud), void *ud, unsigned timeout_ms);

typedef enum rpc_teardown {
        RPC_TEARDOWN_ASYNC,       /* grpc_shutdown(): gRPC finishes on its own threads */
        RPC_TEARDOWN_BLOCKING,    /* grpc_shutdown_blocking() */
        RPC_TEARDOWN_WAIT,        /* and wait (bounded by wait_ms) until gRPC has finished */
} rpc_teardown;
/* Every server destroyed and every call released (rpc_engine_wait): the queue shut down,
 * the pump joined, the fds closed, gRPC's reference released as mode says. -ETIMEDOUT
 * when RPC_TEARDOWN_WAIT ran out (freed anyway). Not while servers or calls remain:
 * rpc_engine_abandon() then. Accepts NULL. */
int rpc_engine_free(rpc_engine *e, rpc_teardown mode, unsigned wait_ms);
/* gRPC still holds calls of e: off the loop, left to the process's exit (gRPC's
 * reference kept for good: no later RPC_TEARDOWN_WAIT waits). */
void rpc_engine_abandon(rpc_engine *e);

/* ---- servers ---- */

/* Serve o->path: bound as ".<name>.<n>" in its dir, mode 0660, renamed over the path
 * (a stale file there is replaced; an old server's listener, when gRPC finally closes it,
 * removes only its own bind name). A request posted for every method and for unknown
 * ones. -ENOENT (no dir), -EADDRNOTAVAIL, -ENOMEM, -errno; after the server started,
 * a failure shuts it down and on_gone follows as for any server. */
int rpc_server_new(rpc_engine *e, const rpc_server_opts *o, rpc_server **ret);
/* Shut down: the socket file removed while it is this server's, streams ended, calls
 * cancelled; on_gone once gRPC has released it (a client that never reads can delay that
 * for good: the owner may serve again at once on the same path). Idempotent. */
void rpc_server_shutdown(rpc_server *s);
bool rpc_server_shutting_down(const rpc_server *s);
unsigned rpc_server_streams(const rpc_server *s);
/* Every open stream that can take a message gets on_stream_ready. */
void rpc_server_streams_ready(rpc_server *s);

/* ---- calls ---- */

void *rpc_call_data(rpc_call *c);
/* Answer a unary call: resp (may be NULL unless code is OK) and status. */
void rpc_call_reply(rpc_call *c, const uint8_t *resp, size_t len, int code, const char *message);
/* Open a stream: 0 (on_stream_ready has been called), or refused and answered (shutting
 * down: UNAVAILABLE; the cap reached and none to end: RESOURCE_EXHAUSTED) and -EBUSY, or
 * gone at once (gRPC refused the first batch) and -EIO. After an error c is not to be
 * touched. */
int rpc_stream_open(rpc_call *c);
/* This stream is the one the cap never ends (the only one: others lose it). */
void rpc_stream_protect(rpc_call *c);
/* Send one message on a stream that is ready: 0, -EBUSY (not ready), -EIO. */
int rpc_stream_send(rpc_call *c, const uint8_t *buf, size_t len);

grpc_byte_buffer *rpc_bytes_to_bb(const uint8_t *buf, size_t len);

/* ---- refusal reports ---- */

/* A server's refusals said one by one at most burst times a window, the rest counted
 * (a client sending thousands of bad calls costs a few lines). */
typedef struct rpc_ratelimit {
        uint64_t window_ms;       /* the start of the current window */
        unsigned said;            /* in it */
        uint64_t unsaid;          /* counted, for the owner to sum up and clear */
} rpc_ratelimit;
/* True: say this one. False: counted in unsaid. A new window begins once window_ms has
 * passed since the last began; with hold, only once unsaid is 0 again. */
bool rpc_ratelimit_take(rpc_ratelimit *rl, uint64_t now_ms, unsigned burst, uint64_t window_ms, bool hold);

#endif
