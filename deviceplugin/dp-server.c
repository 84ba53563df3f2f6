/* SPDX-License-Identifier: Apache-2.0 */
/* Device plugin servers on the gRPC C core. Threads: the pump thread drains the
 * completion queue. Unary calls (Allocate, GetPreferredAllocation, options, unknown
 * methods) of a server that is not shutting down are answered and released right there,
 * under the engine's state lock: no thread hop on the hot path. Everything else
 * (streams, servers, registration, recovery, refusal reports) goes into a queue, an
 * eventfd wakes the agent's loop thread, which takes the same lock. Never logs. */
#include "dp-server.h"

#include "cleanup.h"

#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
        M_OPTIONS,
        M_LIST_AND_WATCH,
        M_PREFERRED,
        M_ALLOCATE,
        M_PRESTART,
        M_GENERIC, /* any other method: UNIMPLEMENTED */
        _M_MAX,
};

static const char *const method_path[_M_MAX] = {
        [M_OPTIONS] = "/v1beta1.DevicePlugin/GetDevicePluginOptions",
        [M_LIST_AND_WATCH] = "/v1beta1.DevicePlugin/ListAndWatch",
        [M_PREFERRED] = "/v1beta1.DevicePlugin/GetPreferredAllocation",
        [M_ALLOCATE] = "/v1beta1.DevicePlugin/Allocate",
        [M_PRESTART] = "/v1beta1.DevicePlugin/PreStartContainer",
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
        grpc_call *call;
        grpc_byte_buffer *send_buf, *recv_buf;
        grpc_metadata_array md_initial, md_trailing;
        grpc_status_code status;
        grpc_slice details;
        dp_tag tag;
} dp_reg;

struct dp_plugin {
        dp_engine *e;
        dp_kind kind;
        char resource[128];
        char socket_name[64];
        char sock_path[PATH_MAX];
        dp_alloc_config cfg;
        dp_device_list devices;
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

const uint32_t dp_alloc_bucket_us[DP_ALLOC_BUCKETS] = { 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000 };

static uint64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One Allocate answered, t0 its arrival (state lock held). */
static void stats_allocate(dp_plugin_stats *st, uint64_t t0, bool ok)
{
        uint64_t ns = mono_ns() - t0;
        if (ok)
                st->allocations++;
        else
                st->allocations_refused++;
        st->alloc_count++;
        st->alloc_sum_ns += ns;
        for (size_t i = 0; i < DP_ALLOC_BUCKETS; i++)
                if (ns <= (uint64_t)dp_alloc_bucket_us[i] * 1000) {
                        st->alloc_bucket[i]++;
                        break;
                }
}

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
        int tick_fd, retry_fd;
        dp_plugin *plugins[DP_MAX_PLUGINS];
        size_t n_plugins;
        bool started, stopping, stopped;
        bool waiting_reported;   /* DP_EVENT_WAITING sent since kubelet.sock was last seen */
        bool kubelet_seen;       /* a Register went out: a kubelet.sock created later is a restart */
        bool kubelet_restarted;  /* DP_EVENT_KUBELET_RESTART reported (once per engine) */
};

static void emit(dp_engine *e, dp_event_type type, const char *resource, int code, unsigned retry_ms,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void emit(dp_engine *e, dp_event_type type, const char *resource, int code, unsigned retry_ms,
                 const char *fmt, ...)
{
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (e->fn)
                e->fn(&(dp_event){ .type = type, .resource = resource, .code = code, .message = msg,
                                   .retry_ms = retry_ms },
                      e->ud);
}

static bool path_exists(const char *p)
{
        struct stat st;
        return lstat(p, &st) == 0;
}

/* ---- the pump thread: the completion queue's one owner ---- */

/* Hand a tag to the loop thread. */
static void queue_push(dp_engine *e, void *tag, bool ok)
{
        pthread_mutex_lock(&e->mu);
        if (e->qn == e->qcap) {
                size_t cap = e->qcap ? e->qcap * 2 : 64;
                q_item *q = realloc(e->q, cap * sizeof(*q));
                if (!q)
                        abort(); /* losing a tag would leak a call forever */
                e->q = q;
                e->qcap = cap;
        }
        e->q[e->qn++] = (q_item){ tag, ok };
        pthread_mutex_unlock(&e->mu);
        uint64_t one = 1;
        ssize_t w = write(e->efd, &one, sizeof(one));
        (void)w; /* a full counter is still readable: nothing is lost */
}

static bool fast_path(dp_engine *e, void *tagp, bool ok);

static void *pump_main(void *arg)
{
        dp_engine *e = arg;
        for (;;) {
                grpc_event ev = grpc_completion_queue_next(e->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                if (ev.type == GRPC_QUEUE_SHUTDOWN)
                        break;
                if (ev.type != GRPC_OP_COMPLETE)
                        continue;
                pthread_mutex_lock(&e->state);
                bool done = fast_path(e, ev.tag, ev.success != 0);
                pthread_mutex_unlock(&e->state);
                if (!done)
                        queue_push(e, ev.tag, ev.success != 0);
        }
        return NULL;
}

/* ---- calls ---- */

static void srv_unref(dp_srv *s);
static void srv_shutdown(dp_srv *s);
static void engine_check_stopped(dp_engine *e);
static void plugin_after_srv_gone(dp_plugin *p);
static void stream_send(dp_call *c);

static void call_free(dp_call *c)
{
        dp_srv *s = c->srv;
        if (c->call)
                grpc_call_unref(c->call);
        grpc_metadata_array_destroy(&c->md);
        if (c->method == M_GENERIC)
                grpc_call_details_destroy(&c->details);
        if (c->payload)
                grpc_byte_buffer_destroy(c->payload);
        if (c->send_buf)
                grpc_byte_buffer_destroy(c->send_buf);
        if (c->have_details_slice)
                grpc_slice_unref(c->status_details);
        free(c);
        srv_unref(s);
}

static int post_request(dp_srv *s, int method)
{
        dp_call *c = calloc(1, sizeof(*c));
        grpc_call_error err;

        if (!c)
                return -ENOMEM;
        c->srv = s;
        c->method = method;
        c->t_req = (dp_tag){ OP_REQUEST, c };
        c->t_batch = (dp_tag){ method == M_LIST_AND_WATCH ? OP_STREAM_SEND : OP_UNARY_DONE, c };
        c->t_close = (dp_tag){ OP_STREAM_CLOSE, c };
        grpc_metadata_array_init(&c->md);
        if (method == M_GENERIC) {
                grpc_call_details_init(&c->details);
                err = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->p->e->cq,
                                               s->p->e->cq, &c->t_req);
        } else {
                err = grpc_server_request_registered_call(s->server, s->rm[method], &c->call, &c->deadline,
                                                          &c->md, &c->payload, s->p->e->cq, s->p->e->cq,
                                                          &c->t_req);
        }
        if (err != GRPC_CALL_OK) {
                grpc_metadata_array_destroy(&c->md);
                if (method == M_GENERIC)
                        grpc_call_details_destroy(&c->details);
                free(c);
                return -EIO;
        }
        s->refs++;
        return 0;
}

/* Read a whole (bounded by the server's max message size) payload. */
static int payload_read(grpc_byte_buffer *bb, uint8_t **ret, size_t *ret_len)
{
        grpc_byte_buffer_reader rd;
        if (!bb) {
                *ret = NULL;
                *ret_len = 0;
                return -ENODATA;
        }
        if (!grpc_byte_buffer_reader_init(&rd, bb))
                return -EINVAL;
        grpc_slice sl = grpc_byte_buffer_reader_readall(&rd);
        grpc_byte_buffer_reader_destroy(&rd);
        size_t n = GRPC_SLICE_LENGTH(sl);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) {
                grpc_slice_unref(sl);
                return -ENOMEM;
        }
        memcpy(buf, GRPC_SLICE_START_PTR(sl), n);
        grpc_slice_unref(sl);
        *ret = buf;
        *ret_len = n;
        return 0;
}

static grpc_byte_buffer *bytes_to_bb(const uint8_t *buf, size_t len)
{
        grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, len);
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
        grpc_slice_unref(sl);
        return bb;
}

/* Answer a unary call: response bytes (may be NULL when status is not OK) and status. */
static void unary_reply(dp_call *c, const uint8_t *resp, size_t resp_len, int code, const char *msg)
{
        grpc_op ops[4];
        size_t n = 0;

        memset(ops, 0, sizeof(ops));
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        if (code == GRPC_STATUS_OK && resp) {
                c->send_buf = bytes_to_bb(resp, resp_len);
                ops[n].op = GRPC_OP_SEND_MESSAGE;
                ops[n].data.send_message.send_message = c->send_buf;
                n++;
        }
        ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        ops[n].data.send_status_from_server.status = (grpc_status_code)code;
        if (msg && *msg) {
                c->status_details = grpc_slice_from_copied_string(msg);
                c->have_details_slice = true;
                ops[n].data.send_status_from_server.status_details = &c->status_details;
        }
        n++;
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n].data.recv_close_on_server.cancelled = &c->cancelled;
        n++;
        c->t_batch.op = OP_UNARY_DONE;
        if (grpc_call_start_batch(c->call, ops, n, &c->t_batch, NULL) != GRPC_CALL_OK)
                call_free(c);
}

static uint64_t mono_ms(void)
{
        return mono_ns() / 1000000;
}

/* A refusal is reported on the loop thread (the callback may log), at most
 * DP_REFUSAL_BURST of them per DP_REFUSAL_WINDOW_MS and plugin; the others are counted
 * for the summary (refusals_flush). State lock held. */
static void report_refused(dp_plugin *p, int code, const char *message)
{
        dp_engine *e = p->e;
        uint64_t now = mono_ms();
        if (now - p->refusal_window_ms >= DP_REFUSAL_WINDOW_MS && !p->refusals_unreported) {
                p->refusal_window_ms = now;
                p->refusals_reported = 0;
        }
        if (p->refusals_reported >= DP_REFUSAL_BURST) {
                p->refusals_unreported++;
                return;
        }
        p->refusals_reported++;
        if (!e->pump_started || !pthread_equal(pthread_self(), e->pump)) {
                emit(e, DP_EVENT_REFUSED, p->resource, code, 0, "%s", message);
                return;
        }
        dp_refusal *f = calloc(1, sizeof(*f));
        if (!f)
                return; /* the client still got its status */
        f->t = (dp_tag){ OP_REFUSED, f };
        f->resource = p->resource;
        f->code = code;
        snprintf(f->message, sizeof(f->message), "%s", message);
        queue_push(e, &f->t, true);
}

static void handle_unary(dp_call *c)
{
        dp_plugin *p = c->srv->p;
        _cleanup_free_ uint8_t *req = NULL;
        _cleanup_free_ uint8_t *resp = NULL;
        size_t req_len = 0, resp_len = 0;
        dp_status st = { .code = GRPC_STATUS_OK };
        uint64_t t0 = mono_ns();
        int r;

        r = payload_read(c->payload, &req, &req_len);
        if (r < 0) {
                if (c->method == M_ALLOCATE)
                        stats_allocate(&p->stats, t0, false);
                unary_reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "request message missing or unreadable");
                return;
        }
        switch (c->method) {
        case M_OPTIONS:
                r = dp_check_empty(req, req_len, &st);
                if (r >= 0)
                        r = dp_encode_options(true, &resp, &resp_len);
                break;
        case M_PREFERRED:
                r = dp_handle_preferred(p->kind, &p->cfg, &p->devices, req, req_len, &st, &resp, &resp_len);
                break;
        case M_ALLOCATE:
                r = dp_handle_allocate(p->kind, &p->cfg, &p->devices, req, req_len, &st, &resp, &resp_len);
                break;
        case M_PRESTART:
                r = dp_handle_prestart(&p->devices, req, req_len, &st, &resp, &resp_len);
                break;
        default:
                r = -EINVAL;
                st.code = GRPC_STATUS_UNIMPLEMENTED;
                snprintf(st.message, sizeof(st.message), "method not implemented");
                break;
        }
        if (r == -ENOMEM) {
                st.code = GRPC_STATUS_RESOURCE_EXHAUSTED;
                snprintf(st.message, sizeof(st.message), "out of memory");
        } else if (r < 0 && st.code == GRPC_STATUS_OK) {
                st.code = GRPC_STATUS_INTERNAL;
                snprintf(st.message, sizeof(st.message), "internal error %d", r);
        }
        if (r < 0 && (c->method == M_ALLOCATE || c->method == M_PREFERRED))
                report_refused(p, st.code, st.message);
        if (c->method == M_ALLOCATE)
                stats_allocate(&p->stats, t0, r >= 0);
        unary_reply(c, resp, resp_len, r < 0 ? st.code : GRPC_STATUS_OK, r < 0 ? st.message : NULL);
}

static void stream_unlink(dp_call *c)
{
        dp_srv *s = c->srv;
        if (c->prev)
                c->prev->next = c->next;
        else if (s->streams == c)
                s->streams = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->next = c->prev = NULL;
        s->n_streams--;
}

static void stream_maybe_free(dp_call *c)
{
        if (c->send_pending || c->close_pending)
                return;
        stream_unlink(c);
        call_free(c);
}

static void stream_end(dp_call *c)
{
        grpc_op op;

        c->ending = true;
        if (c->send_pending || c->status_sent || !c->close_pending)
                return;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        op.data.send_status_from_server.status = GRPC_STATUS_OK;
        c->status_sent = true;
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_batch, NULL) == GRPC_CALL_OK)
                c->send_pending = true;
}

static void stream_send(dp_call *c)
{
        dp_plugin *p = c->srv->p;
        grpc_op ops[2];
        size_t n = 0;

        if (c->send_pending || !c->close_pending || c->status_sent)
                return;
        if (c->ending) {
                stream_end(c);
                return;
        }
        if (c->initial_sent && c->sent_gen == p->gen)
                return;
        memset(ops, 0, sizeof(ops));
        if (!c->initial_sent) {
                ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
                c->initial_sent = true;
        }
        if (c->send_buf)
                grpc_byte_buffer_destroy(c->send_buf);
        c->send_buf = bytes_to_bb(p->list_buf, p->list_len);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = c->send_buf;
        n++;
        c->sent_gen = p->gen;
        if (grpc_call_start_batch(c->call, ops, n, &c->t_batch, NULL) == GRPC_CALL_OK)
                c->send_pending = true;
}

#define DP_STR_(x) #x
#define DP_STR(x) DP_STR_(x)

/* DP_MAX_STREAMS streams open: end the oldest one that is not the kubelet's (its client
 * gets RESOURCE_EXHAUSTED). False when there is none to end, or too many are still ending. */
static bool stream_make_room(dp_srv *s)
{
        dp_call *victim = NULL;
        unsigned live = 0;

        for (dp_call *c = s->streams; c; c = c->next) /* newest first: the last one found is the oldest */
                if (!c->ending) {
                        live++;
                        if (!c->kubelet)
                                victim = c;
                }
        if (live < DP_MAX_STREAMS)
                return s->n_streams < 2 * DP_MAX_STREAMS;
        if (!victim || s->n_streams >= 2 * DP_MAX_STREAMS)
                return false;
        report_refused(s->p, GRPC_STATUS_RESOURCE_EXHAUSTED,
                       "ListAndWatch: " DP_STR(DP_MAX_STREAMS) " streams open; the oldest (not the kubelet's) ended");
        /* cancelled, not ended in order: a client that does not read may hold a send
         * pending for good; the pending batches complete (failed) and release it */
        victim->ending = true;
        grpc_call_cancel_with_status(victim->call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                                     "ListAndWatch: too many open streams; the oldest was ended", NULL);
        return true;
}

static void handle_stream_start(dp_call *c)
{
        dp_srv *s = c->srv;
        _cleanup_free_ uint8_t *req = NULL;
        size_t req_len = 0;
        dp_status st;
        grpc_op op;

        if (payload_read(c->payload, &req, &req_len) < 0 || dp_check_empty(req, req_len, &st) < 0) {
                unary_reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "ListAndWatch: malformed Empty request");
                return;
        }
        if (s->shutting_down) {
                unary_reply(c, NULL, 0, GRPC_STATUS_UNAVAILABLE, "ListAndWatch: the server is shutting down");
                return;
        }
        if (s->n_streams >= DP_MAX_STREAMS && !stream_make_room(s)) {
                report_refused(s->p, GRPC_STATUS_RESOURCE_EXHAUSTED,
                               "ListAndWatch: too many open streams (" DP_STR(DP_MAX_STREAMS) "); refused");
                unary_reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "ListAndWatch: too many open streams");
                return;
        }
        if (s->p->protect_next) { /* the kubelet opens ListAndWatch when Register reaches it */
                s->p->protect_next = false;
                for (dp_call *o = s->streams; o; o = o->next)
                        o->kubelet = false;
                c->kubelet = true;
        }
        c->streaming = true;
        c->next = s->streams;
        if (s->streams)
                s->streams->prev = c;
        s->streams = c;
        s->n_streams++;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        op.data.recv_close_on_server.cancelled = &c->cancelled;
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_close, NULL) != GRPC_CALL_OK) {
                stream_maybe_free(c);
                return;
        }
        c->close_pending = true;
        stream_send(c);
}

static void on_request(dp_call *c, bool ok)
{
        dp_srv *s = c->srv;

        if (!ok) { /* server shutting down: the request was never matched */
                if (c->call) {
                        grpc_call_unref(c->call);
                        c->call = NULL;
                }
                call_free(c);
                return;
        }
        if (!s->shutting_down)
                (void)post_request(s, c->method); /* keep one request outstanding per method */
        if (c->method == M_GENERIC)
                unary_reply(c, NULL, 0, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
        else if (c->method == M_LIST_AND_WATCH)
                handle_stream_start(c);
        else
                handle_unary(c);
}

/* ---- servers ---- */

static void srv_unref(dp_srv *s)
{
        if (--s->refs > 0 || !s->shutting_down)
                return;
        dp_plugin *p = s->p;
        bool retired = s->retired;
        grpc_server_destroy(s->server);
        free(s);
        if (retired) {
                p->n_retired--;
                if (p->e->stopping)
                        engine_check_stopped(p->e);
                return;
        }
        p->srv = NULL;
        plugin_after_srv_gone(p);
}

/* Shut s down and forget it: the plugin may serve again at once. gRPC waits for every
 * connection of s (a client that never reads can hold one for good); until it is done,
 * s is counted in p->n_retired, and only dp_engine_stop() waits for it (bounded). */
static void srv_retire(dp_srv *s)
{
        dp_plugin *p = s->p;
        if (p->srv == s)
                p->srv = NULL;
        s->retired = true;
        p->n_retired++;
        srv_shutdown(s);
}

static void srv_shutdown(dp_srv *s)
{
        if (s->shutting_down)
                return;
        s->shutting_down = true;
        s->p->serving = false;
        /* the socket file is ours to remove while it is the one this server put there
         * (gRPC removes only the path it bound, renamed away) */
        struct stat st;
        if (s->ino && lstat(s->p->sock_path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
                (void)unlink(s->p->sock_path);
        for (dp_call *c = s->streams, *next; c; c = next) {
                next = c->next;
                stream_end(c);
        }
        s->t_shutdown = (dp_tag){ OP_SHUTDOWN, s };
        s->refs++;
        grpc_server_shutdown_and_notify(s->server, s->p->e->cq, &s->t_shutdown);
        grpc_server_cancel_all_calls(s->server);
}

/* A server binds a path of its own, ".<socket>.<n>" in the same dir, and renames it to
 * the socket's name once it answers: a stale file there is replaced atomically, and when
 * gRPC finally destroys an old server's listener (it unlinks the path it bound), it
 * cannot remove the socket of the server that replaced it. */
static int plugin_serve(dp_plugin *p)
{
        dp_engine *e = p->e;
        char addr[PATH_MAX + 8], bind_path[PATH_MAX];
        struct stat st;
        int n;
        grpc_arg args[3];
        dp_srv *s;

        if (p->srv)
                return -EBUSY;
        /* No dir (kubelet not installed yet, or the dir is being re-created): say so
         * ourselves; gRPC's bind would print a multi-line error on every 1 s retry. */
        if (!path_exists(e->dir))
                return -ENOENT;
        n = snprintf(bind_path, sizeof(bind_path), "%s/.%s.%u", e->dir, p->socket_name, ++p->serve_gen);
        if (n < 0 || (size_t)n >= sizeof(bind_path) || (size_t)n + 6 > sizeof(addr))
                return -ENAMETOOLONG;
        if (unlink(bind_path) < 0 && errno != ENOENT)
                return -errno;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->p = p;
        args[0].type = GRPC_ARG_INTEGER;
        args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
        args[0].value.integer = DP_MAX_REQUEST;
        args[1].type = GRPC_ARG_INTEGER;
        args[1].key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS;
        args[1].value.integer = 1024;
        /* a connection without a call for this long is closed (GOAWAY; a client reconnects
         * when it calls again): idle local clients cannot pile up. The kubelet's never is
         * idle: its ListAndWatch stays open. */
        args[2].type = GRPC_ARG_INTEGER;
        args[2].key = (char *)GRPC_ARG_MAX_CONNECTION_IDLE_MS;
        args[2].value.integer = DP_IDLE_CONNECTION_MS;
        grpc_channel_args ca = { .num_args = 3, .args = args };
        s->server = grpc_server_create(&ca, NULL);
        if (!s->server) {
                free(s);
                return -ENOMEM;
        }
        grpc_server_register_completion_queue(s->server, e->cq, NULL);
        for (int m = 0; m < M_GENERIC; m++)
                s->rm[m] = grpc_server_register_method(s->server, method_path[m], NULL,
                                                       GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        snprintf(addr, sizeof(addr), "unix:%s", bind_path);
        grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
        int port = grpc_server_add_http2_port(s->server, addr, creds);
        grpc_server_credentials_release(creds);
        if (port == 0) {
                grpc_server_destroy(s->server);
                free(s);
                return -EADDRNOTAVAIL;
        }
        grpc_server_start(s->server);
        p->srv = s;
        for (int m = 0; m < _M_MAX; m++)
                if (post_request(s, m) < 0) {
                        srv_retire(s); /* releases the requests already posted */
                        (void)unlink(bind_path);
                        return -EIO;
                }
        if (rename(bind_path, p->sock_path) < 0 || lstat(p->sock_path, &st) < 0) {
                int r = -errno;
                (void)unlink(bind_path);
                srv_retire(s);
                return r;
        }
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        p->serving = true;
        return 0;
}

/* ---- registration ---- */

static void reg_free(dp_reg *g)
{
        if (g->call)
                grpc_call_unref(g->call);
        if (g->channel)
                grpc_channel_destroy(g->channel);
        if (g->send_buf)
                grpc_byte_buffer_destroy(g->send_buf);
        if (g->recv_buf)
                grpc_byte_buffer_destroy(g->recv_buf);
        grpc_metadata_array_destroy(&g->md_initial);
        grpc_metadata_array_destroy(&g->md_trailing);
        grpc_slice_unref(g->details);
        free(g);
}

static void engine_arm_retry(dp_engine *e)
{
        uint64_t next = 0, now = loop_now_ms();
        for (size_t i = 0; i < e->n_plugins; i++) {
                uint64_t t = e->plugins[i]->retry_at;
                if (t && (!next || t < next))
                        next = t;
        }
        if (e->retry_fd >= 0)
                (void)loop_timer_set(e->l, e->retry_fd, next ? (next > now ? next - now : 1) : 0, 0);
}

static void plugin_register(dp_plugin *p)
{
        dp_engine *e = p->e;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        char target[PATH_MAX + 8];
        grpc_op ops[6];

        if (e->stopping || !p->serving)
                return;
        if (p->reg) {
                p->register_again = true;
                return;
        }
        p->retry_at = 0;
        e->kubelet_seen = true;
        if (dp_encode_register(p->resource, p->socket_name, true, &buf, &len) < 0)
                return;
        dp_reg *g = calloc(1, sizeof(*g));
        if (!g)
                return;
        g->p = p;
        g->tag = (dp_tag){ OP_REGISTER, g };
        g->details = grpc_empty_slice();
        grpc_metadata_array_init(&g->md_initial);
        grpc_metadata_array_init(&g->md_trailing);
        snprintf(target, sizeof(target), "unix:%s", e->kubelet_sock);
        grpc_channel_credentials *creds = grpc_insecure_credentials_create();
        /* A private subchannel with short reconnect backoff: the shared pool would keep a
         * refused connect (kubelet.sock bound, not yet listening) in a 1 s backoff. */
        grpc_arg cargs[4];
        cargs[0].type = GRPC_ARG_INTEGER;
        cargs[0].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
        cargs[0].value.integer = 1;
        cargs[1].type = GRPC_ARG_INTEGER;
        cargs[1].key = (char *)GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
        cargs[1].value.integer = 50;
        cargs[2].type = GRPC_ARG_INTEGER; /* the connect timeout, despite its name */
        cargs[2].key = (char *)GRPC_ARG_MIN_RECONNECT_BACKOFF_MS;
        cargs[2].value.integer = DP_REGISTER_TIMEOUT_MS;
        cargs[3].type = GRPC_ARG_INTEGER;
        cargs[3].key = (char *)GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
        cargs[3].value.integer = 500;
        grpc_channel_args chargs = { .num_args = 4, .args = cargs };
        g->channel = grpc_channel_create(target, creds, &chargs);
        grpc_channel_credentials_release(creds);
        grpc_slice method = grpc_slice_from_static_string("/v1beta1.Registration/Register");
        g->call = grpc_channel_create_call(g->channel, NULL, GRPC_PROPAGATE_DEFAULTS, e->cq, method, NULL,
                                           gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                                        gpr_time_from_millis(DP_REGISTER_TIMEOUT_MS, GPR_TIMESPAN)),
                                           NULL);
        g->send_buf = bytes_to_bb(buf, len);
        memset(ops, 0, sizeof(ops));
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_SEND_MESSAGE;
        ops[1].data.send_message.send_message = g->send_buf;
        ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
        ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[3].data.recv_initial_metadata.recv_initial_metadata = &g->md_initial;
        ops[4].op = GRPC_OP_RECV_MESSAGE;
        ops[4].data.recv_message.recv_message = &g->recv_buf;
        ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
        ops[5].data.recv_status_on_client.trailing_metadata = &g->md_trailing;
        ops[5].data.recv_status_on_client.status = &g->status;
        ops[5].data.recv_status_on_client.status_details = &g->details;
        if (!g->call || grpc_call_start_batch(g->call, ops, 6, &g->tag, NULL) != GRPC_CALL_OK) {
                reg_free(g);
                p->retry_at = loop_now_ms() + 1000;
                engine_arm_retry(e);
                return;
        }
        p->reg = g;
        p->register_again = false;
        p->protect_next = true;
}

static void on_register_done(dp_reg *g, bool ok)
{
        dp_plugin *p = g->p;
        dp_engine *e = p->e;
        char details[512];

        p->reg = NULL;
        size_t dl = GRPC_SLICE_LENGTH(g->details);
        if (dl >= sizeof(details))
                dl = sizeof(details) - 1;
        memcpy(details, GRPC_SLICE_START_PTR(g->details), dl);
        details[dl] = '\0';
        bool success = ok && g->status == GRPC_STATUS_OK;
        grpc_status_code status = g->status;
        reg_free(g);
        if (e->stopping)
                return;
        if (success) {
                p->registered = true;
                p->backoff_ms = 0;
                p->stats.registrations++;
                emit(e, DP_EVENT_REGISTERED, p->resource, 0, 0, "registered with the kubelet");
        } else {
                p->registered = false;
                p->stats.register_failures++;
                p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : 100;
                if (p->backoff_ms > 30000)
                        p->backoff_ms = 30000;
                p->retry_at = loop_now_ms() + p->backoff_ms;
                engine_arm_retry(e);
                emit(e, DP_EVENT_REGISTER_FAILED, p->resource, (int)status, p->backoff_ms, "%s",
                     details[0] ? details : "no details");
        }
        if (p->register_again && p->serving) {
                p->register_again = false;
                plugin_register(p);
        }
}

/* ---- plugin life cycle ---- */

static void engine_check_stopped(dp_engine *e);

static void plugin_start_serving(dp_plugin *p)
{
        dp_engine *e = p->e;
        int r = plugin_serve(p);
        if (r < 0) {
                if (!p->serve_failed) /* once per failure streak: the 1 s check retries */
                        emit(e, DP_EVENT_SERVE_FAILED, p->resource, 0, 0, "cannot serve on %s: %s", p->sock_path,
                             strerror(-r));
                p->serve_failed = true;
                p->want_serve = true;
                return;
        }
        p->serve_failed = false;
        p->want_serve = false;
        emit(e, DP_EVENT_SERVING, p->resource, 0, 0, "serving on %s", p->sock_path);
        if (path_exists(e->kubelet_sock)) {
                plugin_register(p);
        } else if (!e->waiting_reported) {
                e->waiting_reported = true;
                emit(e, DP_EVENT_WAITING, NULL, 0, 0, "waiting for %s", e->kubelet_sock);
        }
}

static void plugin_after_srv_gone(dp_plugin *p)
{
        dp_engine *e = p->e;
        if (e->stopping) {
                engine_check_stopped(e);
                return;
        }
        if (p->want_serve)
                plugin_start_serving(p);
}

static void plugin_restart(dp_plugin *p, const char *why)
{
        dp_engine *e = p->e;
        if (e->stopping)
                return;
        emit(e, DP_EVENT_RESTART, p->resource, 0, 0, "%s: serving again", why);
        p->registered = false;
        p->stats.restarts++;
        p->want_serve = true;
        if (p->srv)
                srv_retire(p->srv); /* not waiting for its connections to drain */
        plugin_start_serving(p);
}

static int plugin_set_devices(dp_plugin *p, const dp_device_list *devices)
{
        dp_device_list copy;
        uint8_t *buf;
        size_t len;

        if (p->gen && dp_device_list_equal(&p->devices, devices))
                return 0;
        if (dp_device_list_copy(devices, &copy) < 0)
                return -ENOMEM;
        if (dp_encode_list(&copy, &buf, &len) < 0) {
                dp_device_list_free(&copy);
                return -ENOMEM;
        }
        dp_device_list_free(&p->devices);
        p->devices = copy;
        free(p->list_buf);
        p->list_buf = buf;
        p->list_len = len;
        p->gen++;
        if (p->srv)
                for (dp_call *c = p->srv->streams; c; c = c->next)
                        stream_send(c);
        return 1;
}

int dp_plugin_set_devices(dp_plugin *p, const dp_device_list *devices)
{
        pthread_mutex_lock(&p->e->state);
        int r = plugin_set_devices(p, devices);
        pthread_mutex_unlock(&p->e->state);
        return r;
}

void dp_plugin_set_config(dp_plugin *p, const dp_alloc_config *cfg)
{
        pthread_mutex_lock(&p->e->state);
        p->cfg = *cfg;
        pthread_mutex_unlock(&p->e->state);
}

const dp_device_list *dp_plugin_devices(const dp_plugin *p)
{
        return &p->devices;
}

bool dp_plugin_registered(const dp_plugin *p)
{
        return p->registered;
}

void dp_plugin_carry_stats(dp_plugin *p, const dp_plugin_stats *from)
{
        pthread_mutex_lock(&p->e->state);
        p->stats = *from;
        pthread_mutex_unlock(&p->e->state);
}

void dp_plugin_get_stats(const dp_plugin *p, dp_plugin_stats *ret)
{
        pthread_mutex_lock(&p->e->state);
        *ret = p->stats;
        pthread_mutex_unlock(&p->e->state);
}

/* ---- events from the pump ---- */

/* On the pump thread, state lock held: answer a unary call or release a finished one
 * here when its server is not shutting down (so no server can be destroyed from this
 * thread). Returns false to leave the tag to the loop thread. */
static bool fast_path(dp_engine *e, void *tagp, bool ok)
{
        dp_tag *t = tagp;
        dp_call *c;

        if (e->stopping || (t->op != OP_REQUEST && t->op != OP_UNARY_DONE))
                return false;
        c = t->obj;
        if (c->srv->shutting_down)
                return false;
        if (t->op == OP_UNARY_DONE) {
                call_free(c);
                return true;
        }
        if (!ok || c->method == M_LIST_AND_WATCH)
                return false;
        on_request(c, true);
        return true;
}

static void dispatch(dp_engine *e, void *tagp, bool ok)
{
        dp_tag *t = tagp;
        switch (t->op) {
        case OP_REQUEST:
                on_request(t->obj, ok);
                break;
        case OP_UNARY_DONE:
                call_free(t->obj);
                break;
        case OP_STREAM_SEND: {
                dp_call *c = t->obj;
                c->send_pending = false;
                if (c->send_buf) {
                        grpc_byte_buffer_destroy(c->send_buf);
                        c->send_buf = NULL;
                }
                if (ok)
                        stream_send(c);
                stream_maybe_free(c);
                break;
        }
        case OP_STREAM_CLOSE: {
                dp_call *c = t->obj;
                c->close_pending = false;
                stream_maybe_free(c);
                break;
        }
        case OP_SHUTDOWN:
                srv_unref(t->obj);
                break;
        case OP_REGISTER:
                on_register_done(t->obj, ok);
                break;
        case OP_REFUSED: {
                dp_refusal *f = t->obj;
                emit(e, DP_EVENT_REFUSED, f->resource, f->code, 0, "%s", f->message);
                free(f);
                break;
        }
        }
}

static int drain_queue(dp_engine *e)
{
        q_item *items;
        size_t n;
        uint64_t cnt;

        if (read(e->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
                return -errno;
        pthread_mutex_lock(&e->mu);
        items = e->q;
        n = e->qn;
        e->q = NULL;
        e->qn = e->qcap = 0;
        pthread_mutex_unlock(&e->mu);
        pthread_mutex_lock(&e->state);
        for (size_t i = 0; i < n; i++)
                dispatch(e, items[i].tag, items[i].ok);
        pthread_mutex_unlock(&e->state);
        free(items);
        return 0;
}

static int on_efd(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events;
        return drain_queue(ud);
}

/* ---- the device-plugins dir ---- */

static void dir_watch(dp_engine *e)
{
        if (e->wd >= 0)
                return;
        e->wd = inotify_add_watch(e->ifd, e->dir,
                                  IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
                                          IN_MOVE_SELF | IN_ONLYDIR);
        if (e->wd < 0)
                return;
        /* The dir (re)appeared: whatever was in it before is gone. */
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                if (!p->srv)
                        plugin_start_serving(p);
                else if (!path_exists(p->sock_path))
                        plugin_restart(p, "socket file gone");
        }
}

/* kubelet.sock created. The first time the engine sees a kubelet, it registers; once it
 * has seen one, this is a kubelet restart, which the engine does not recover from by
 * itself: it reports DP_EVENT_KUBELET_RESTART once and its owner rebuilds (tears this
 * engine down and builds a new one, which serves and registers as at start-up). */
static void on_kubelet_sock_created(dp_engine *e)
{
        e->waiting_reported = false;
        if (e->kubelet_seen) {
                if (!e->kubelet_restarted) {
                        e->kubelet_restarted = true;
                        emit(e, DP_EVENT_KUBELET_RESTART, NULL, 0, 0, "%s re-created: the kubelet restarted",
                             e->kubelet_sock);
                }
                return;
        }
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                p->registered = false;
                p->backoff_ms = 0;
                if (p->serving && !path_exists(p->sock_path))
                        plugin_restart(p, "kubelet restarted and removed the socket");
                else if (p->serving)
                        plugin_register(p);
        }
}

static int on_inotify(loop *l, int fd, uint32_t events, void *ud)
{
        dp_engine *e = ud;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool kubelet_created = false, dir_gone = false;
        bool sock_gone[DP_MAX_PLUGINS] = { false };
        (void)l, (void)events;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n <= 0)
                        break;
                for (char *ptr = buf; ptr < buf + n;) {
                        struct inotify_event *ev = (struct inotify_event *)ptr;
                        ptr += sizeof(*ev) + ev->len;
                        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
                                dir_gone = true;
                                continue;
                        }
                        if (!ev->len)
                                continue;
                        if (strcmp(ev->name, DP_KUBELET_SOCKET) == 0 && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
                                kubelet_created = true;
                        for (size_t i = 0; i < e->n_plugins; i++)
                                if (strcmp(ev->name, e->plugins[i]->socket_name) == 0 &&
                                    (ev->mask & (IN_DELETE | IN_MOVED_FROM)))
                                        sock_gone[i] = true;
                }
        }
        pthread_mutex_lock(&e->state);
        if (dir_gone && e->wd >= 0) {
                inotify_rm_watch(e->ifd, e->wd);
                e->wd = -1;
        }
        for (size_t i = 0; i < e->n_plugins; i++)
                if (sock_gone[i] && e->plugins[i]->serving && !path_exists(e->plugins[i]->sock_path))
                        plugin_restart(e->plugins[i], "socket file removed");
        if (kubelet_created && path_exists(e->kubelet_sock))
                on_kubelet_sock_created(e);
        pthread_mutex_unlock(&e->state);
        return 0;
}

/* The refusals not reported one by one, summed up once their window has passed. */
static void refusals_flush(dp_plugin *p)
{
        uint64_t now = mono_ms();
        if (!p->refusals_unreported || now - p->refusal_window_ms < DP_REFUSAL_WINDOW_MS)
                return;
        emit(p->e, DP_EVENT_REFUSALS_UNREPORTED, p->resource, 0, 0,
             "%llu more requests refused in the last %llu s, not logged one by one (at most %d per %d s)",
             (unsigned long long)p->refusals_unreported,
             (unsigned long long)(now - p->refusal_window_ms + 500) / 1000, DP_REFUSAL_BURST,
             DP_REFUSAL_WINDOW_MS / 1000);
        p->refusals_unreported = 0;
        p->refusals_reported = 0;
        p->refusal_window_ms = now;
}

/* The safety net, once a second: dir watch lost, socket file gone, never registered. */
static int on_tick(loop *l, void *ud)
{
        dp_engine *e = ud;
        (void)l;
        pthread_mutex_lock(&e->state);
        if (e->stopping) {
                pthread_mutex_unlock(&e->state);
                return 0;
        }
        dir_watch(e);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                refusals_flush(p);
                if (!p->srv && p->want_serve)
                        plugin_start_serving(p);
                else if (p->serving && !path_exists(p->sock_path))
                        plugin_restart(p, "socket file missing");
                else if (p->serving && !p->registered && !p->reg && !p->retry_at && path_exists(e->kubelet_sock))
                        plugin_register(p);
        }
        pthread_mutex_unlock(&e->state);
        return 0;
}

static int on_retry(loop *l, void *ud)
{
        dp_engine *e = ud;
        uint64_t now = loop_now_ms();
        (void)l;
        pthread_mutex_lock(&e->state);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                if (p->retry_at && p->retry_at <= now) {
                        p->retry_at = 0;
                        plugin_register(p);
                }
        }
        engine_arm_retry(e);
        pthread_mutex_unlock(&e->state);
        return 0;
}

/* ---- engine ---- */

int dp_engine_new(loop *l, const hostfs *h, dp_event_fn fn, void *userdata, dp_engine **ret)
{
        dp_engine *e = calloc(1, sizeof(*e));
        int r;

        if (!e)
                return -ENOMEM;
        e->l = l;
        e->h = *h;
        e->fn = fn;
        e->ud = userdata;
        e->efd = e->ifd = e->wd = e->tick_fd = e->retry_fd = -1;
        pthread_mutex_init(&e->mu, NULL);
        pthread_mutex_init(&e->state, NULL);
        r = hostfs_path(h, DP_KUBELET_DIR, e->dir, sizeof(e->dir));
        if (r >= 0)
                r = hostfs_path(h, DP_KUBELET_DIR "/" DP_KUBELET_SOCKET, e->kubelet_sock, sizeof(e->kubelet_sock));
        if (r < 0)
                goto fail;
        e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        e->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (e->efd < 0 || e->ifd < 0) {
                r = -errno;
                goto fail;
        }
        grpc_init();
        e->cq = grpc_completion_queue_create_for_next(NULL);
        if (pthread_create(&e->pump, NULL, pump_main, e) != 0) {
                r = -EAGAIN;
                grpc_completion_queue_shutdown(e->cq);
                grpc_completion_queue_destroy(e->cq);
                grpc_shutdown();
                goto fail;
        }
        e->pump_started = true;
        if ((r = loop_add_fd(l, e->efd, EPOLLIN, on_efd, e)) < 0 ||
            (r = loop_add_fd(l, e->ifd, EPOLLIN, on_inotify, e)) < 0 ||
            (r = loop_add_timer(l, 1000, 1000, on_tick, e, &e->tick_fd)) < 0 ||
            (r = loop_add_timer(l, 0, 0, on_retry, e, &e->retry_fd)) < 0) {
                e->stopping = e->stopped = true;
                dp_engine_free(e);
                return r;
        }
        *ret = e;
        return 0;
fail:
        if (e->efd >= 0)
                close(e->efd);
        if (e->ifd >= 0)
                close(e->ifd);
        pthread_mutex_destroy(&e->mu);
        pthread_mutex_destroy(&e->state);
        free(e);
        return r;
}

int dp_engine_add_plugin(dp_engine *e, dp_kind kind, const char *resource_name, const char *socket_name,
                         const dp_alloc_config *cfg, dp_plugin **ret)
{
        dp_plugin *p;
        char rel[PATH_MAX];

        if (e->n_plugins >= DP_MAX_PLUGINS || e->started)
                return -EBUSY;
        if (strlen(resource_name) >= sizeof(p->resource) || strlen(socket_name) >= sizeof(p->socket_name) ||
            strchr(socket_name, '/'))
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->e = e;
        p->kind = kind;
        snprintf(p->resource, sizeof(p->resource), "%s", resource_name);
        snprintf(p->socket_name, sizeof(p->socket_name), "%s", socket_name);
        snprintf(rel, sizeof(rel), "%s/%s", DP_KUBELET_DIR, socket_name);
        if (hostfs_path(&e->h, rel, p->sock_path, sizeof(p->sock_path)) < 0) {
                free(p);
                return -ENAMETOOLONG;
        }
        p->cfg = *cfg;
        if (plugin_set_devices(p, &(dp_device_list){ 0 }) < 0) {
                free(p);
                return -ENOMEM;
        }
        pthread_mutex_lock(&e->state);
        e->plugins[e->n_plugins++] = p;
        pthread_mutex_unlock(&e->state);
        if (ret)
                *ret = p;
        return 0;
}

int dp_engine_start(dp_engine *e)
{
        if (e->started)
                return -EALREADY;
        pthread_mutex_lock(&e->state);
        e->started = true;
        for (size_t i = 0; i < e->n_plugins; i++)
                e->plugins[i]->want_serve = true;
        dir_watch(e); /* serves every plugin once the dir is watched */
        for (size_t i = 0; i < e->n_plugins; i++)
                if (!e->plugins[i]->srv)
                        plugin_start_serving(e->plugins[i]);
        pthread_mutex_unlock(&e->state);
        return 0;
}

static void engine_check_stopped(dp_engine *e)
{
        if (!e->stopping || e->stopped)
                return;
        for (size_t i = 0; i < e->n_plugins; i++)
                if (e->plugins[i]->srv || e->plugins[i]->reg || e->plugins[i]->n_retired)
                        return;
        e->stopped = true;
        emit(e, DP_EVENT_STOPPED, NULL, 0, 0, "device plugin servers stopped");
}

void dp_engine_stop(dp_engine *e)
{
        pthread_mutex_lock(&e->state);
        if (e->stopping) {
                pthread_mutex_unlock(&e->state);
                return;
        }
        e->stopping = true;
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                p->want_serve = false;
                p->retry_at = 0;
                if (p->reg)
                        grpc_call_cancel(p->reg->call, NULL);
                if (p->srv)
                        srv_shutdown(p->srv);
        }
        engine_check_stopped(e);
        pthread_mutex_unlock(&e->state);
}

bool dp_engine_stopped(const dp_engine *e)
{
        return e->stopped;
}

static void engine_free(dp_engine *e, bool wait_grpc);

void dp_engine_free(dp_engine *e)
{
        engine_free(e, true);
}

void dp_engine_release(dp_engine *e)
{
        engine_free(e, false);
}

/* The engine's fds and timers off the loop. */
static void engine_unhook(dp_engine *e)
{
        if (!e->l)
                return;
        (void)loop_remove_fd(e->l, e->efd);
        (void)loop_remove_fd(e->l, e->ifd);
        if (e->tick_fd >= 0)
                (void)loop_remove_timer(e->l, e->tick_fd);
        if (e->retry_fd >= 0)
                (void)loop_remove_timer(e->l, e->retry_fd);
}

static void engine_free(dp_engine *e, bool wait_grpc)
{
        if (!e)
                return;
        dp_engine_stop(e);
        /* Wait for every call to be released before the queue shuts down, at most
         * DP_STOP_TIMEOUT_MS: a client can hold a connection gRPC waits for. */
        uint64_t stop_end = loop_now_ms() + DP_STOP_TIMEOUT_MS;
        while (!e->stopped) {
                uint64_t now = loop_now_ms();
                if (now >= stop_end)
                        break;
                struct pollfd pfd = { .fd = e->efd, .events = POLLIN };
                if (poll(&pfd, 1, (int)(stop_end - now)) < 0 && errno != EINTR)
                        break;
                if (drain_queue(e) < 0)
                        break;
        }
        if (!e->stopped) {
                /* gRPC still owns calls of ours and the pump thread may still get their
                 * tags: nothing here can be freed. Leave it all to the process's exit. */
                emit(e, DP_EVENT_TEARDOWN_UNFINISHED, NULL, 0, 0,
                     "device plugin calls not released after %d ms; leaving them to the exit", DP_STOP_TIMEOUT_MS);
                engine_unhook(e);
                return;
        }
        engine_unhook(e);
        if (e->pump_started) {
                grpc_completion_queue_shutdown(e->cq);
                pthread_join(e->pump, NULL);
                grpc_completion_queue_destroy(e->cq);
                /* Nothing of gRPC may run at exit. Our reference goes synchronously, but
                 * gRPC holds its own while it still works: a connection attempt in flight
                 * (until DP_REGISTER_TIMEOUT_MS), a channel or server released on one of
                 * its threads, which then tears down on a detached thread. The count
                 * reaches zero when the last of it is done (grpc_is_initialized() answers
                 * under the lock that last step holds): wait for that, with a bound. */
                grpc_shutdown_blocking();
                uint64_t end = loop_now_ms() + DP_GRPC_TEARDOWN_MS;
                while (wait_grpc && grpc_is_initialized() && loop_now_ms() < end)
                        usleep(10 * 1000);
                if (wait_grpc && grpc_is_initialized())
                        emit(e, DP_EVENT_TEARDOWN_UNFINISHED, NULL, 0, 0,
                             "gRPC has not finished closing its connections after %d ms; exiting anyway",
                             DP_GRPC_TEARDOWN_MS);
        }
        /* Refusals queued by the pump but not reported (only those can be left). */
        for (size_t i = 0; i < e->qn; i++)
                if (((dp_tag *)e->q[i].tag)->op == OP_REFUSED)
                        free(((dp_tag *)e->q[i].tag)->obj);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_device_list_free(&e->plugins[i]->devices);
                free(e->plugins[i]->list_buf);
                free(e->plugins[i]);
        }
        free(e->q);
        close(e->efd);
        close(e->ifd);
        pthread_mutex_destroy(&e->mu);
        pthread_mutex_destroy(&e->state);
        free(e);
}
