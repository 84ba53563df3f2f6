/* SPDX-License-Identifier: Apache-2.0 */
/* Serving: one server of common/grpc's engine per plugin on its socket, and the calls on
 * it (GetDevicePluginOptions, ListAndWatch streams, GetPreferredAllocation, Allocate,
 * PreStartContainer), the refusal reports and the Allocate counters. Decoding and answers
 * are dp-request's; binding, the stream cap, idle connections and unknown methods are the
 * engine's (rpc-server.c); this file does not register with the kubelet or watch the dir
 * (dp-register.c). */
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

/* A refusal the pump thread queued, reported here on the loop thread. */
static void refusal_report(void *obj, bool ok)
{
        dp_refusal *f = obj;
        (void)ok;
        dp_emit(f->e, DP_EVENT_REFUSED, f->resource, f->code, 0, "%s", f->message);
        free(f);
}

/* A refusal is reported on the loop thread (the callback may log), at most
 * DP_REFUSAL_BURST of them per DP_REFUSAL_WINDOW_MS and plugin; the others are counted
 * for the summary (dp_serve_refusals_flush). State lock held. */
static void report_refused(dp_plugin *p, int code, const char *message)
{
        dp_engine *e = p->e;
        /* the window held while refusals wait to be summed up (dp_serve_refusals_flush) */
        if (!rpc_ratelimit_take(&p->refusals, dp_mono_ms(), DP_REFUSAL_BURST, DP_REFUSAL_WINDOW_MS, true))
                return;
        if (!rpc_engine_on_pump(e->rpc)) {
                dp_emit(e, DP_EVENT_REFUSED, p->resource, code, 0, "%s", message);
                return;
        }
        dp_refusal *f = calloc(1, sizeof(*f));
        if (!f)
                return; /* the client still got its status */
        f->t = (rpc_tag){ .fn = refusal_report, .obj = f, .drop = free };
        f->e = e;
        f->resource = p->resource;
        f->code = code;
        snprintf(f->message, sizeof(f->message), "%s", message);
        rpc_engine_post(e->rpc, &f->t, true);
}

static void handle_unary(rpc_call *c, dp_plugin *p)
{
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
                rpc_call_reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "request message missing or unreadable");
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
        rpc_call_reply(c, resp, resp_len, r < 0 ? st.code : GRPC_STATUS_OK, r < 0 ? st.message : NULL);
}

/* A stream can take the list: the current one, unless it has it already. */
static void on_stream_ready(rpc_call *c, void *ud)
{
        dp_plugin *p = ud;
        dp_stream *d = rpc_call_data(c);
        if (d->sent && d->sent_gen == p->gen)
                return;
        if (rpc_stream_send(c, p->list_buf, p->list_len) == 0) {
                d->sent = true;
                d->sent_gen = p->gen;
        }
}

static void handle_stream_start(rpc_call *c, dp_plugin *p)
{
        _cleanup_free_ uint8_t *req = NULL;
        size_t req_len = 0;
        dp_status st;

        if (rpc_bytes_read(c->payload, 0, &req, &req_len) < 0 || dp_check_empty(req, req_len, &st) < 0) {
                rpc_call_reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "ListAndWatch: malformed Empty request");
                return;
        }
        /* the kubelet opens ListAndWatch when Register reaches it: that stream is never
         * the one the cap ends */
        bool kubelet = p->protect_next;
        if (rpc_stream_open(c) < 0)
                return;
        if (kubelet) {
                p->protect_next = false;
                rpc_stream_protect(c);
        }
}

/* A call on p's server: on the pump thread (unary, the server not shutting down) or the
 * loop thread, the state lock held either way. */
static void on_call(rpc_call *c, void *ud)
{
        dp_plugin *p = ud;
        if (c->method == M_LIST_AND_WATCH)
                handle_stream_start(c, p);
        else
                handle_unary(c, p);
}

/* The stream cap ended or refused a stream (loop thread). */
static void on_refused(rpc_server *s, int code, const char *message, void *ud)
{
        (void)s;
        report_refused(ud, code, message);
}

/* A server of p is gone: the current one (serve again when wanted), or a retired one. */
static void on_gone(rpc_server *s, void *ud)
{
        dp_plugin *p = ud;
        if (p->srv != s) {
                if (p->e->stopping)
                        dp_engine_check_stopped(p->e);
                return;
        }
        p->srv = NULL;
        dp_plugin_after_srv_gone(p);
}

/* Stop serving on p's server, which stays p->srv until gRPC has released it. */
void dp_serve_shutdown(dp_plugin *p)
{
        p->serving = false;
        if (p->srv)
                rpc_server_shutdown(p->srv);
}

/* Shut p's server down and forget it: the plugin may serve again at once. gRPC waits for
 * every connection of it (a client that never reads can hold one for good); until it is
 * done, the engine counts it, and only dp_engine_stop() waits for it (bounded). */
void dp_serve_retire(dp_plugin *p)
{
        rpc_server *s = p->srv;
        if (!s)
                return;
        p->srv = NULL;
        p->serving = false;
        rpc_server_shutdown(s);
}

/* p's server on its socket: the engine binds it under a name of its own and renames it
 * into place (a stale file there is replaced atomically, and an old server's listener,
 * when gRPC finally closes it, cannot remove the socket of the server that replaced it). */
int dp_serve_bind(dp_plugin *p)
{
        dp_engine *e = p->e;
        rpc_server *s;

        if (p->srv)
                return -EBUSY;
        int r = rpc_server_new(e->rpc,
                               &(rpc_server_opts){ .path = p->sock_path,
                                                   .methods = method_path,
                                                   .n_methods = _M_MAX,
                                                   .stream_methods = 1u << M_LIST_AND_WATCH,
                                                   .max_receive = DP_MAX_REQUEST,
                                                   .max_streams = DP_MAX_STREAMS,
                                                   .idle_ms = DP_IDLE_CONNECTION_MS,
                                                   .stream_name = "ListAndWatch",
                                                   .fast = true,
                                                   .call_extra = sizeof(dp_stream),
                                                   .on_call = on_call,
                                                   .on_stream_ready = on_stream_ready,
                                                   .on_refused = on_refused,
                                                   .on_gone = on_gone,
                                                   .ud = p },
                               &s);
        if (r < 0)
                return r;
        p->srv = s;
        p->serving = true;
        return 0;
}

/* The refusals not reported one by one, summed up once their window has passed. */
void dp_serve_refusals_flush(dp_plugin *p)
{
        uint64_t now = dp_mono_ms();
        if (!p->refusals.unsaid || now - p->refusals.window_ms < DP_REFUSAL_WINDOW_MS)
                return;
        dp_emit(p->e, DP_EVENT_REFUSALS_UNREPORTED, p->resource, 0, 0,
             "%llu more requests refused in the last %llu s, not logged one by one (at most %d per %d s)",
             (unsigned long long)p->refusals.unsaid,
             (unsigned long long)(now - p->refusals.window_ms + 500) / 1000, DP_REFUSAL_BURST,
             DP_REFUSAL_WINDOW_MS / 1000);
        p->refusals = (rpc_ratelimit){ .window_ms = now };
}

/* Every open ListAndWatch stream of p gets the new list. */
void dp_serve_push_list(dp_plugin *p)
{
        if (p->srv)
                rpc_server_streams_ready(p->srv);
}

