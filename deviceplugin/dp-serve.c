/* SPDX-License-Identifier: Apache-2.0 */
/* Serving: one gRPC server per plugin on its socket (bound under a name of its own and
 * renamed into place), the calls on it (GetDevicePluginOptions, ListAndWatch streams,
 * GetPreferredAllocation, Allocate, PreStartContainer, unknown methods), the stream cap,
 * the refusal reports and the Allocate counters. Decoding and answers are dp-request's;
 * this file does not register with the kubelet or watch the dir (dp-register.c). */
#include "dp-internal.h"
#include "rpc-unary.h"

#include "cleanup.h"

#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const method_path[_M_MAX] = {
        [M_OPTIONS] = "/v1beta1.DevicePlugin/GetDevicePluginOptions",
        [M_LIST_AND_WATCH] = "/v1beta1.DevicePlugin/ListAndWatch",
        [M_PREFERRED] = "/v1beta1.DevicePlugin/GetPreferredAllocation",
        [M_ALLOCATE] = "/v1beta1.DevicePlugin/Allocate",
        [M_PRESTART] = "/v1beta1.DevicePlugin/PreStartContainer",
};

const uint32_t dp_alloc_bucket_us[DP_ALLOC_BUCKETS] = { 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000 };

/* One Allocate answered, t0 its arrival (state lock held). */
static void stats_allocate(dp_plugin_stats *st, uint64_t t0, bool ok)
{
        uint64_t ns = dp_mono_ns() - t0;
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

void dp_serve_call_free(dp_call *c)
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
        dp_serve_srv_unref(s);
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

grpc_byte_buffer *dp_bytes_to_bb(const uint8_t *buf, size_t len)
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
                c->send_buf = dp_bytes_to_bb(resp, resp_len);
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
                dp_serve_call_free(c);
}

/* A refusal is reported on the loop thread (the callback may log), at most
 * DP_REFUSAL_BURST of them per DP_REFUSAL_WINDOW_MS and plugin; the others are counted
 * for the summary (dp_serve_refusals_flush). State lock held. */
static void report_refused(dp_plugin *p, int code, const char *message)
{
        dp_engine *e = p->e;
        uint64_t now = dp_mono_ms();
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
                dp_emit(e, DP_EVENT_REFUSED, p->resource, code, 0, "%s", message);
                return;
        }
        dp_refusal *f = calloc(1, sizeof(*f));
        if (!f)
                return; /* the client still got its status */
        f->t = (dp_tag){ OP_REFUSED, f };
        f->resource = p->resource;
        f->code = code;
        snprintf(f->message, sizeof(f->message), "%s", message);
        dp_pump_push(e, &f->t, true);
}

static void handle_unary(dp_call *c)
{
        dp_plugin *p = c->srv->p;
        _cleanup_free_ uint8_t *req = NULL;
        _cleanup_free_ uint8_t *resp = NULL;
        size_t req_len = 0, resp_len = 0;
        dp_status st = { .code = GRPC_STATUS_OK };
        uint64_t t0 = dp_mono_ns();
        int r;

        r = rpc_bytes_read(c->payload, 0, &req, &req_len);
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

void dp_serve_stream_maybe_free(dp_call *c)
{
        if (c->send_pending || c->close_pending)
                return;
        stream_unlink(c);
        dp_serve_call_free(c);
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

void dp_serve_stream_send(dp_call *c)
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
        c->send_buf = dp_bytes_to_bb(p->list_buf, p->list_len);
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

        if (rpc_bytes_read(c->payload, 0, &req, &req_len) < 0 || dp_check_empty(req, req_len, &st) < 0) {
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
                dp_serve_stream_maybe_free(c);
                return;
        }
        c->close_pending = true;
        dp_serve_stream_send(c);
}

void dp_serve_request(dp_call *c, bool ok)
{
        dp_srv *s = c->srv;

        if (!ok) { /* server shutting down: the request was never matched */
                if (c->call) {
                        grpc_call_unref(c->call);
                        c->call = NULL;
                }
                dp_serve_call_free(c);
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

void dp_serve_srv_unref(dp_srv *s)
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
                        dp_engine_check_stopped(p->e);
                return;
        }
        p->srv = NULL;
        dp_plugin_after_srv_gone(p);
}

/* Shut s down and forget it: the plugin may serve again at once. gRPC waits for every
 * connection of s (a client that never reads can hold one for good); until it is done,
 * s is counted in p->n_retired, and only dp_engine_stop() waits for it (bounded). */
void dp_serve_retire(dp_srv *s)
{
        dp_plugin *p = s->p;
        if (p->srv == s)
                p->srv = NULL;
        s->retired = true;
        p->n_retired++;
        dp_serve_shutdown(s);
}

void dp_serve_shutdown(dp_srv *s)
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
int dp_serve_bind(dp_plugin *p)
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
        if (!dp_path_exists(e->dir))
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
                        dp_serve_retire(s); /* releases the requests already posted */
                        (void)unlink(bind_path);
                        return -EIO;
                }
        /* 0660 before it gets the name the kubelet dials: root (the kubelet) and the
         * group may connect, no one else, whatever the umask was when gRPC bound it */
        if (chmod(bind_path, 0660) < 0 || rename(bind_path, p->sock_path) < 0 || lstat(p->sock_path, &st) < 0) {
                int r = -errno;
                (void)unlink(bind_path);
                dp_serve_retire(s);
                return r;
        }
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        p->serving = true;
        return 0;
}

/* The refusals not reported one by one, summed up once their window has passed. */
void dp_serve_refusals_flush(dp_plugin *p)
{
        uint64_t now = dp_mono_ms();
        if (!p->refusals_unreported || now - p->refusal_window_ms < DP_REFUSAL_WINDOW_MS)
                return;
        dp_emit(p->e, DP_EVENT_REFUSALS_UNREPORTED, p->resource, 0, 0,
             "%llu more requests refused in the last %llu s, not logged one by one (at most %d per %d s)",
             (unsigned long long)p->refusals_unreported,
             (unsigned long long)(now - p->refusal_window_ms + 500) / 1000, DP_REFUSAL_BURST,
             DP_REFUSAL_WINDOW_MS / 1000);
        p->refusals_unreported = 0;
        p->refusals_reported = 0;
        p->refusal_window_ms = now;
}

/* A ListAndWatch send batch completed: send the newer list if there is one. */
void dp_serve_stream_sent(dp_call *c, bool ok)
{
        c->send_pending = false;
        if (c->send_buf) {
                grpc_byte_buffer_destroy(c->send_buf);
                c->send_buf = NULL;
        }
        if (ok)
                dp_serve_stream_send(c);
        dp_serve_stream_maybe_free(c);
}

/* The client closed (or the call was cancelled): free once no batch is pending. */
void dp_serve_stream_closed(dp_call *c)
{
        c->close_pending = false;
        dp_serve_stream_maybe_free(c);
}

/* A refusal the pump thread queued, reported here on the loop thread. */
void dp_serve_refusal_report(dp_engine *e, dp_refusal *f)
{
        dp_emit(e, DP_EVENT_REFUSED, f->resource, f->code, 0, "%s", f->message);
        free(f);
}

/* Every open ListAndWatch stream of p gets the new list. */
void dp_serve_push_list(dp_plugin *p)
{
        if (p->srv)
                for (dp_call *c = p->srv->streams; c; c = c->next)
                        dp_serve_stream_send(c);
}

