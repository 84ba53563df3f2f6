/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin engine: its life cycle (common/grpc's engine under the state lock,
 * the loop hooks, the bounded stop and teardown) and the plugins' (add, serve, serve
 * again, device list, config, counters): the public API of dp-server.h. Threads and
 * locking as dp-server.h says; the completion queue and its pump are rpc-server.c's, the
 * servers dp-serve.c, the kubelet side dp-register.c. Never logs: what happens is
 * reported through dp_event. */
#include "dp-internal.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

void dp_emit(dp_engine *e, dp_event_type type, const char *resource, int code, unsigned retry_ms,
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

void dp_plugin_start_serving(dp_plugin *p)
{
        dp_engine *e = p->e;
        int r = dp_serve_bind(p);
        if (r < 0) {
                if (!p->serve_failed) /* once per failure streak: the 1 s check retries */
                        dp_emit(e, DP_EVENT_SERVE_FAILED, p->resource, 0, 0, "cannot serve on %s: %s", p->sock_path,
                             strerror(-r));
                p->serve_failed = true;
                p->want_serve = true;
                return;
        }
        p->serve_failed = false;
        p->want_serve = false;
        dp_emit(e, DP_EVENT_SERVING, p->resource, 0, 0, "serving on %s", p->sock_path);
        if (dp_path_exists(e->kubelet_sock)) {
                dp_register_plugin(p);
        } else if (!e->waiting_reported) {
                e->waiting_reported = true;
                dp_emit(e, DP_EVENT_WAITING, NULL, 0, 0, "waiting for %s", e->kubelet_sock);
        }
}

void dp_plugin_after_srv_gone(dp_plugin *p)
{
        dp_engine *e = p->e;
        if (e->stopping) {
                dp_engine_check_stopped(e);
                return;
        }
        if (p->want_serve)
                dp_plugin_start_serving(p);
}

void dp_plugin_restart(dp_plugin *p, const char *why)
{
        dp_engine *e = p->e;
        if (e->stopping)
                return;
        dp_emit(e, DP_EVENT_RESTART, p->resource, 0, 0, "%s: serving again", why);
        p->registered = false;
        p->stats.restarts++;
        p->want_serve = true;
        dp_serve_retire(p); /* not waiting for its connections to drain */
        dp_plugin_start_serving(p);
}

static int plugin_set_devices(dp_plugin *p, const device_list *devices)
{
        device_list copy;
        uint8_t *buf;
        size_t len;

        if (p->gen && device_list_equal(&p->devices, devices))
                return 0;
        if (device_list_copy(devices, &copy) < 0)
                return -ENOMEM;
        if (dp_encode_list(&copy, &buf, &len) < 0) {
                device_list_free(&copy);
                return -ENOMEM;
        }
        device_list_free(&p->devices);
        p->devices = copy;
        free(p->list_buf);
        p->list_buf = buf;
        p->list_len = len;
        p->gen++;
        dp_serve_push_list(p);
        return 1;
}

int dp_plugin_set_devices(dp_plugin *p, const device_list *devices)
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

const device_list *dp_plugin_devices(const dp_plugin *p)
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

static void engine_free(dp_engine *e, bool wait_grpc);

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
        e->ifd = e->wd = e->tick_fd = e->retry_fd = -1;
        pthread_mutex_init(&e->state, NULL);
        r = hostfs_path(h, DP_KUBELET_DIR, e->dir, sizeof(e->dir));
        if (r >= 0)
                r = hostfs_path(h, DP_KUBELET_DIR "/" DP_KUBELET_SOCKET, e->kubelet_sock, sizeof(e->kubelet_sock));
        if (r < 0)
                goto fail;
        e->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (e->ifd < 0) {
                r = -errno;
                goto fail;
        }
        if ((r = rpc_engine_new(l, &e->state, &e->rpc)) < 0)
                goto fail;
        if ((r = loop_add_inotify(l, e->ifd, dp_register_on_inotify, e)) < 0 ||
            (r = loop_add_timer(l, 1000, 1000, dp_register_on_tick, e, &e->tick_fd)) < 0 ||
            (r = loop_add_timer(l, 0, 0, dp_register_on_retry, e, &e->retry_fd)) < 0) {
                /* nothing served or dialled yet: no gRPC work of this engine's to wait
                 * for (a rebuild out of fds ends here; the loop must not stall) */
                e->stopping = e->stopped = true;
                engine_free(e, false);
                return r;
        }
        *ret = e;
        return 0;
fail:
        if (e->ifd >= 0)
                close(e->ifd);
        pthread_mutex_destroy(&e->state);
        free(e);
        return r;
}

int dp_engine_add_plugin(dp_engine *e, device_kind kind, const char *resource_name, const char *socket_name,
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
        if (plugin_set_devices(p, &(device_list){ 0 }) < 0) {
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
        dp_register_watch_dir(e); /* serves every plugin once the dir is watched */
        for (size_t i = 0; i < e->n_plugins; i++)
                if (!e->plugins[i]->srv)
                        dp_plugin_start_serving(e->plugins[i]);
        pthread_mutex_unlock(&e->state);
        return 0;
}

void dp_engine_check_stopped(dp_engine *e)
{
        if (!e->stopping || e->stopped)
                return;
        for (size_t i = 0; i < e->n_plugins; i++)
                if (e->plugins[i]->srv || e->plugins[i]->reg)
                        return;
        if (rpc_engine_servers(e->rpc)) /* retired servers gRPC has not released */
                return;
        e->stopped = true;
        dp_emit(e, DP_EVENT_STOPPED, NULL, 0, 0, "device plugin servers stopped");
}

void dp_engine_stop(dp_engine *e)
{
        pthread_mutex_lock(&e->state);
        if (e->stopping) {
                pthread_mutex_unlock(&e->state);
                return;
        }
        e->stopping = true;
        rpc_engine_stop(e->rpc);
        for (size_t i = 0; i < e->n_plugins; i++) {
                dp_plugin *p = e->plugins[i];
                p->want_serve = false;
                p->retry_at = 0;
                if (p->reg)
                        grpc_call_cancel(p->reg->u.call, NULL);
                dp_serve_shutdown(p);
        }
        dp_engine_check_stopped(e);
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
        (void)loop_remove_fd(e->l, e->ifd);
        if (e->tick_fd >= 0)
                (void)loop_remove_timer(e->l, e->tick_fd);
        if (e->retry_fd >= 0)
                (void)loop_remove_timer(e->l, e->retry_fd);
}

static bool engine_released(void *ud)
{
        return ((dp_engine *)ud)->stopped;
}

static void engine_free(dp_engine *e, bool wait_grpc)
{
        if (!e)
                return;
        dp_engine_stop(e);
        /* every call released before the queue shuts down, at most DP_STOP_TIMEOUT_MS: a
         * client can hold a connection gRPC waits for */
        if (!rpc_engine_wait(e->rpc, engine_released, e, DP_STOP_TIMEOUT_MS)) {
                /* gRPC still owns calls of ours and the pump thread may still get their
                 * tags: nothing here can be freed. Leave it all to the process's exit. */
                dp_emit(e, DP_EVENT_TEARDOWN_UNFINISHED, NULL, 0, 0,
                        "device plugin calls not released after %d ms; leaving them to the exit", DP_STOP_TIMEOUT_MS);
                engine_unhook(e);
                rpc_engine_abandon(e->rpc);
                return;
        }
        engine_unhook(e);
        if (rpc_engine_free(e->rpc, wait_grpc ? RPC_TEARDOWN_WAIT : RPC_TEARDOWN_BLOCKING, DP_GRPC_TEARDOWN_MS) < 0)
                dp_emit(e, DP_EVENT_TEARDOWN_UNFINISHED, NULL, 0, 0,
                        "gRPC has not finished closing its connections after %d ms; exiting anyway",
                        DP_GRPC_TEARDOWN_MS);
        for (size_t i = 0; i < e->n_plugins; i++) {
                device_list_free(&e->plugins[i]->devices);
                free(e->plugins[i]->list_buf);
                free(e->plugins[i]);
        }
        close(e->ifd);
        pthread_mutex_destroy(&e->state);
        free(e);
}
