/* SPDX-License-Identifier: Apache-2.0 */
/* Registration with the kubelet: Register on kubelet.sock (a private channel, a bounded
 * attempt, backoff on failure), the watch on the device-plugins dir (a removed socket is
 * served again; kubelet.sock re-created after a Register is a kubelet restart, reported
 * for the owner's rebuild) and the 1 s check that covers a missed event. Binds no
 * server itself (dp-serve.c does). */
#include "dp-internal.h"

#include "cleanup.h"

#include <errno.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static void reg_free(dp_reg *g)
{
        rpc_unary_destroy(&g->u); /* the call before its channel */
        if (g->channel)
                grpc_channel_destroy(g->channel);
        free(g);
}

void dp_register_arm_retry(dp_engine *e)
{
        uint64_t next = 0;
        for (size_t i = 0; i < e->n_plugins; i++) {
                uint64_t t = e->plugins[i]->retry_at;
                if (t && (!next || t < next))
                        next = t;
        }
        if (e->retry_fd >= 0)
                (void)loop_timer_at(e->l, e->retry_fd, next ? next : UINT64_MAX);
}

/* Once a Register went out to a kubelet that later went away (kubelet.sock removed), a
 * kubelet.sock there again is a new kubelet: reported once (DP_EVENT_KUBELET_RESTART) for
 * the owner's rebuild. True from the removal on: this engine registers no more. */
static bool kubelet_restart_seen(dp_engine *e)
{
        if (e->kubelet_gone && !e->kubelet_restarted && dp_path_exists(e->kubelet_sock)) {
                e->kubelet_restarted = true;
                dp_emit(e, DP_EVENT_KUBELET_RESTART, NULL, 0, 0, "%s re-created: the kubelet restarted",
                        e->kubelet_sock);
        }
        return e->kubelet_gone || e->kubelet_restarted;
}

static void register_done(void *obj, bool ok);

void dp_register_plugin(dp_plugin *p)
{
        dp_engine *e = p->e;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        char target[PATH_MAX + 8];

        if (e->stopping || !p->serving)
                return;
        if (p->reg) {
                p->register_again = true;
                return;
        }
        p->retry_at = 0;
        if (kubelet_restart_seen(e))
                return;
        e->kubelet_seen = true;
        if (dp_encode_register(p->resource, p->socket_name, true, &buf, &len) < 0)
                return;
        dp_reg *g = calloc(1, sizeof(*g));
        if (!g)
                return;
        g->p = p;
        g->tag = (rpc_tag){ .fn = register_done, .obj = g };
        rpc_unary_init(&g->u);
        snprintf(target, sizeof(target), "unix:%s", e->kubelet_sock);
        /* A private subchannel with short reconnect backoff: the shared pool would keep a
         * refused connect (kubelet.sock bound, not yet listening) in a 1 s backoff. */
        g->channel = rpc_channel_create(target, &(rpc_channel_opts){ .initial_backoff_ms = 50,
                                                                     .min_backoff_ms = DP_REGISTER_TIMEOUT_MS,
                                                                     .max_backoff_ms = 500 });
        gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                             gpr_time_from_millis(DP_REGISTER_TIMEOUT_MS, GPR_TIMESPAN));
        if (rpc_unary_start(&g->u, g->channel, rpc_engine_cq(e->rpc), "/v1beta1.Registration/Register", deadline,
                            rpc_bytes_to_bb(buf, len), &g->tag) < 0) {
                reg_free(g);
                p->retry_at = loop_now_ms() + 1000;
                dp_register_arm_retry(e);
                return;
        }
        p->reg = g;
        p->register_again = false;
        p->protect_next = true;
}

/* Register answered (or failed): on the loop thread, the state lock held. */
static void register_done(void *obj, bool ok)
{
        dp_reg *g = obj;
        dp_plugin *p = g->p;
        dp_engine *e = p->e;
        char details[512];

        p->reg = NULL;
        rpc_unary_details(&g->u, details, sizeof(details));
        bool success = ok && g->u.status == GRPC_STATUS_OK;
        grpc_status_code status = g->u.status;
        reg_free(g);
        if (e->stopping)
                return;
        if (success) {
                p->registered = true;
                p->backoff_ms = 0;
                p->stats.registrations++;
                dp_emit(e, DP_EVENT_REGISTERED, p->resource, 0, 0, "registered with the kubelet");
        } else {
                p->registered = false;
                p->stats.register_failures++;
                p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : 100;
                if (p->backoff_ms > 30000)
                        p->backoff_ms = 30000;
                p->retry_at = loop_now_ms() + p->backoff_ms;
                dp_register_arm_retry(e);
                dp_emit(e, DP_EVENT_REGISTER_FAILED, p->resource, (int)status, p->backoff_ms, "%s",
                     details[0] ? details : "no details");
        }
        if (p->register_again && p->serving) {
                p->register_again = false;
                dp_register_plugin(p);
        }
}

void dp_register_watch_dir(dp_engine *e)
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
                        dp_plugin_start_serving(p);
                else if (!dp_path_exists(p->sock_path))
                        dp_plugin_restart(p, "socket file gone");
        }
}

/* kubelet.sock created. The first time the engine sees a kubelet, it registers; once it
 * has registered with one, this is a kubelet restart, which the engine does not recover
 * from by itself: it reports DP_EVENT_KUBELET_RESTART once and its owner rebuilds (tears
 * this engine down and builds a new one, which serves and registers as at start-up). */
static void on_kubelet_sock_created(dp_engine *e)
{
        e->waiting_reported = false;
        if (e->kubelet_seen) {
                e->kubelet_gone = true; /* created again: the old one went, whether seen or not */
                (void)kubelet_restart_seen(e);
                return;
        }
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                p->registered = false;
                p->backoff_ms = 0;
                if (p->serving && !dp_path_exists(p->sock_path))
                        dp_plugin_restart(p, "kubelet restarted and removed the socket");
                else if (p->serving)
                        dp_register_plugin(p);
        }
}

/* One event from the plugin dir's watch, gathered in e->seen; acted on at the round's end
 * (ev NULL). A queue overflow is not acted on: the 1 s tick finds what it may have hidden. */
int dp_register_on_inotify(loop *l, const struct inotify_event *ev, void *ud)
{
        dp_engine *e = ud;
        (void)l;

        if (ev) {
                if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
                        e->seen.dir_gone = true;
                        return 0;
                }
                if (!ev->len)
                        return 0;
                if (strcmp(ev->name, DP_KUBELET_SOCKET) == 0 && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
                        e->seen.kubelet_created = true;
                if (strcmp(ev->name, DP_KUBELET_SOCKET) == 0 && (ev->mask & (IN_DELETE | IN_MOVED_FROM)))
                        e->seen.kubelet_removed = true;
                for (size_t i = 0; i < e->n_plugins; i++)
                        if (strcmp(ev->name, e->plugins[i]->socket_name) == 0 &&
                            (ev->mask & (IN_DELETE | IN_MOVED_FROM)))
                                e->seen.sock_gone[i] = true;
                return 0;
        }
        bool kubelet_created = e->seen.kubelet_created, kubelet_removed = e->seen.kubelet_removed;
        bool dir_gone = e->seen.dir_gone;
        bool sock_gone[DP_MAX_PLUGINS];
        memcpy(sock_gone, e->seen.sock_gone, sizeof(sock_gone));
        memset(&e->seen, 0, sizeof(e->seen));
        pthread_mutex_lock(&e->state);
        if (dir_gone && e->wd >= 0) {
                inotify_rm_watch(e->ifd, e->wd);
                e->wd = -1;
        }
        if ((kubelet_removed || dir_gone) && e->kubelet_seen)
                e->kubelet_gone = true; /* the kubelet we registered with went away */
        for (size_t i = 0; i < e->n_plugins; i++)
                if (sock_gone[i] && e->plugins[i]->serving && !dp_path_exists(e->plugins[i]->sock_path))
                        dp_plugin_restart(e->plugins[i], "socket file removed");
        if (kubelet_created && dp_path_exists(e->kubelet_sock))
                on_kubelet_sock_created(e);
        pthread_mutex_unlock(&e->state);
        return 0;
}

/* The safety net, once a second: dir watch lost, socket file gone, never registered. */
int dp_register_on_tick(loop *l, void *ud)
{
        dp_engine *e = ud;
        (void)l;
        pthread_mutex_lock(&e->state);
        if (e->stopping) {
                pthread_mutex_unlock(&e->state);
                return 0;
        }
        dp_register_watch_dir(e);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                dp_serve_refusals_flush(p);
                if (!p->srv && p->want_serve)
                        dp_plugin_start_serving(p);
                else if (p->serving && !dp_path_exists(p->sock_path))
                        dp_plugin_restart(p, "socket file missing");
                else if (p->serving && !p->registered && !p->reg && !p->retry_at && dp_path_exists(e->kubelet_sock))
                        dp_register_plugin(p);
        }
        pthread_mutex_unlock(&e->state);
        return 0;
}

int dp_register_on_retry(loop *l, void *ud)
{
        dp_engine *e = ud;
        uint64_t now = loop_now_ms();
        (void)l;
        pthread_mutex_lock(&e->state);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                if (p->retry_at && p->retry_at <= now) {
                        p->retry_at = 0;
                        dp_register_plugin(p);
                }
        }
        dp_register_arm_retry(e);
        pthread_mutex_unlock(&e->state);
        return 0;
}
