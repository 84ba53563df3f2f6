/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's self-check of its own gRPC servers (SPINLANE_SELFCHECK_MS, 1 s..10 min): a
 * unary call to each served socket (the device plugins' GetDevicePluginOptions, the DRA
 * registration server's GetInfo) on a thread of its own, answered within
 * RUN_SELFCHECK_DEADLINE_MS or failed, the results handed back to the loop through an
 * eventfd. gRPC's C core gives no signal when its accept fails (EMFILE: it logs "Failed
 * accept4" and retries): a server that cannot accept is found this way. A failure sets
 * why /healthz fails and is the rebuild. Top-level code: logs. */
#include "run-daemon.h"

#include "dp-server.h"
#include "dra-plugin.h"
#include "hostfs.h"
#include "log.h"
#include "rpc-unary.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define RUN_SELFCHECK_MS 10000
#define RUN_SELFCHECK_DEADLINE_MS 5000
#define RUN_SELFCHECK_MAX 3

/* One round at a time on its own thread, its results handed back through efd; health
 * says why /healthz fails ("" when it does not). */
struct run_selfcheck {
        int efd;
        unsigned ms;
        bool running;
        pthread_t thread;
        size_t n;
        struct {
                char target[PATH_MAX + 8];
                const char *method, *what;
                bool ok;
                char why[256];
        } sc[RUN_SELFCHECK_MAX];
        char health[384];
};

int run_selfcheck_new(run_selfcheck **ret)
{
        run_selfcheck *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->efd = -1;
        *ret = s;
        return 0;
}

void run_selfcheck_free(run_selfcheck *s)
{
        free(s);
}

const char *run_selfcheck_health(const run_daemon *d)
{
        return d->selfcheck->health;
}

/* One check: method on target, an empty request, answered OK within the deadline. Any
 * other end (no answer: the server does not accept; no socket: this process is out of
 * file descriptors too) is a failure, said in why. Runs on the self-check thread. */
static bool selfcheck_one(const char *target, const char *method, char *why, size_t len)
{
        rpc_unary u;
        bool ok = false;
        gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                             gpr_time_from_millis(RUN_SELFCHECK_DEADLINE_MS, GPR_TIMESPAN));
        rpc_unary_init(&u);
        grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
        grpc_channel *ch = rpc_channel_create(target, &(rpc_channel_opts){ .initial_backoff_ms = 50,
                                                                          .min_backoff_ms = RUN_SELFCHECK_DEADLINE_MS,
                                                                          .max_backoff_ms = 500 });
        if (!cq || !ch) {
                snprintf(why, len, "no gRPC channel or queue");
        } else if (rpc_unary_start(&u, ch, cq, method, deadline, grpc_raw_byte_buffer_create(NULL, 0), &u) < 0) {
                snprintf(why, len, "the call could not be started");
        } else {
                grpc_event ev = grpc_completion_queue_next(
                        cq, gpr_time_add(deadline, gpr_time_from_millis(RUN_SELFCHECK_DEADLINE_MS, GPR_TIMESPAN)), NULL);
                if (ev.type != GRPC_OP_COMPLETE) {
                        /* never seen: the deadline ends every call; cancel and wait for it */
                        grpc_call_cancel(u.call, NULL);
                        ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                }
                char details[128];
                rpc_unary_details(&u, details, sizeof(details));
                ok = ev.success && u.status == GRPC_STATUS_OK;
                if (!ok)
                        snprintf(why, len, "%s: status %d (%.80s), deadline %d ms", method, (int)u.status,
                                 details[0] ? details : "no details", RUN_SELFCHECK_DEADLINE_MS);
        }
        rpc_unary_destroy(&u);
        if (ch)
                grpc_channel_destroy(ch);
        if (cq) {
                grpc_completion_queue_shutdown(cq);
                while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
                       GRPC_QUEUE_SHUTDOWN)
                        ;
                grpc_completion_queue_destroy(cq);
        }
        return ok;
}

static void *selfcheck_main(void *arg)
{
        run_selfcheck *s = arg;
        grpc_init();
        for (size_t i = 0; i < s->n; i++)
                s->sc[i].ok = selfcheck_one(s->sc[i].target, s->sc[i].method, s->sc[i].why, sizeof(s->sc[i].why));
        grpc_shutdown();
        uint64_t one = 1;
        (void)!write(s->efd, &one, sizeof(one));
        return NULL;
}

static void selfcheck_add(run_daemon *d, const char *path, const char *method, const char *what)
{
        run_selfcheck *s = d->selfcheck;
        char p[PATH_MAX];
        if (s->n >= RUN_SELFCHECK_MAX || hostfs_path(&d->h, path, p, sizeof(p)) < 0)
                return;
        snprintf(s->sc[s->n].target, sizeof(s->sc[0].target), "unix:%s", p);
        s->sc[s->n].method = method;
        s->sc[s->n].what = what;
        s->sc[s->n].ok = false;
        s->sc[s->n].why[0] = '\0';
        s->n++;
}

/* A failed check (or a server that should serve and does not): /healthz fails with why,
 * said once per change, and the rebuild tears the server down and builds it again. */
static void selfcheck_failed(run_daemon *d, bool dp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void selfcheck_failed(run_daemon *d, bool dp, const char *fmt, ...)
{
        run_selfcheck *s = d->selfcheck;
        char why[sizeof(s->health)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (strcmp(why, s->health) != 0)
                log_error("self-check: %s; /healthz fails until a check passes; rebuilding", why);
        snprintf(s->health, sizeof(s->health), "%s", why);
        if (dp)
                run_dp_rebuild_next(d);
        else
                run_dra_restart_next(d);
        run_rebuild_soon(d, "self-check failed");
}

/* The timer: every SPINLANE_SELFCHECK_MS a round, unless one still runs. A server that
 * should serve and is gone (a rebuild failed to start it) fails at once. */
static int on_selfcheck(loop *l, void *ud)
{
        run_daemon *d = ud;
        run_selfcheck *s = d->selfcheck;
        bool want_dp = !d->dra.nic || !d->dra.core, want_dra = d->dra.nic || d->dra.core;
        (void)l;
        if (d->stopping || s->running)
                return 0;
        if (want_dp && !run_dp_running(d)) {
                selfcheck_failed(d, true, "the device plugins are not running");
                return 0;
        }
        if (want_dra && !*run_dra_plugin(d)) {
                selfcheck_failed(d, false, "the DRA kubelet plugin is not running");
                return 0;
        }
        s->n = 0;
        for (int k = 0; k < DEVICE_KINDS; k++) {
                char p[96];
                if (!run_dp_has_plugin(d, (device_kind)k))
                        continue;
                snprintf(p, sizeof(p), "%s/spinlane-%s.sock", DP_KUBELET_DIR, device_kind_resource((device_kind)k));
                selfcheck_add(d, p, "/v1beta1.DevicePlugin/GetDevicePluginOptions", "device plugin");
        }
        if (*run_dra_plugin(d))
                selfcheck_add(d, DRA_REGISTRY_SOCKET, "/pluginregistration.Registration/GetInfo", "DRA");
        if (!s->n)
                return 0;
        int r = pthread_create(&s->thread, NULL, selfcheck_main, s);
        if (r != 0) {
                selfcheck_failed(d, want_dp, "no thread for the check: %s", strerror(r));
                return 0;
        }
        s->running = true;
        return 0;
}

/* A round ended: the thread joined, each result acted on. */
static int on_selfcheck_done(loop *l, int fd, uint32_t events, void *ud)
{
        run_daemon *d = ud;
        run_selfcheck *s = d->selfcheck;
        uint64_t v;
        (void)l, (void)events;
        if (read(fd, &v, sizeof(v)) < 0 || !s->running)
                return 0;
        pthread_join(s->thread, NULL);
        s->running = false;
        for (size_t i = 0; i < s->n; i++)
                if (!s->sc[i].ok) {
                        selfcheck_failed(d, strcmp(s->sc[i].what, "DRA") != 0, "%s socket %s: %s", s->sc[i].what,
                                         s->sc[i].target + 5, s->sc[i].why);
                        return 0;
                }
        if (s->health[0] && !run_rebuild_pending(d)) {
                log_info("self-check: every gRPC server answers again; /healthz passes");
                s->health[0] = '\0';
        }
        return 0;
}

/* The timer and the eventfd on the loop (a round every SPINLANE_SELFCHECK_MS). */
static int selfcheck_start(run_daemon *d, const run_node *node)
{
        run_selfcheck *s = d->selfcheck;
        int r;
        (void)node;
        s->ms = run_knob_ms("SPINLANE_SELFCHECK_MS", 1000, 600000, RUN_SELFCHECK_MS);
        s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->efd < 0)
                return log_errno(LOG_ERROR, -errno, "eventfd");
        if ((r = loop_add_fd(d->l, s->efd, EPOLLIN, on_selfcheck_done, d)) < 0 ||
            (r = loop_add_timer(d->l, s->ms, s->ms, on_selfcheck, d, NULL)) < 0)
                return log_errno(LOG_ERROR, r, "event loop setup");
        return 0;
}

/* A round still running ends within the call's deadline. */
static void selfcheck_stop(run_daemon *d)
{
        run_selfcheck *s = d->selfcheck;
        if (s->running) {
                pthread_join(s->thread, NULL);
                s->running = false;
        }
        if (s->efd >= 0) {
                (void)loop_remove_fd(d->l, s->efd);
                close(s->efd);
                s->efd = -1;
        }
}

const run_service run_service_selfcheck = { "self-check", { "device-plugins", "dra" }, selfcheck_start, NULL, NULL,
                                            selfcheck_stop };
