/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent run [--root DIR] [--config FILE] [--json] [--log-format human|json]
 * [--once] [--kubeconfig FILE] [--metrics-bind-address HOST:PORT]
 * [--health-probe-bind-address HOST:PORT] [--dra-resources nic,core]`: the daemon's loop.
 * One event loop (epoll + signalfd + timerfd + inotify + kernel uevents) scans the node
 * (run-scan.c: the inventory, the selection, the NIC addresses and the device map, once a
 * scan) and drives the services of the table below, each in its own file with its own
 * state: node preparation (run-prep.c), NIC addresses (run-scan.c over run-address.c),
 * the node verdicts (run-verdicts.c), the kubelet device plugins (run-dp.c), the report:
 * labels, Events, metrics, probes (run-report.c), DRA: the kubelet plugin and the
 * ResourceSlice (run-dra.c), the gRPC self-check (run-selfcheck.c). --once only prepares
 * the node and exits (an init container). SIGHUP, a changed config, a kubelet restart and
 * a failed self-check are one event, the rebuild: every service's reload, then one scan
 * that the torn-down services start on and the others re-scan. The node is re-scanned on
 * kernel uevents (on the live host only), on inotify events under /dev and sysfs, when a
 * NIC address lookup ends, and by a safety timer (30 s on the live host, 10 s under a
 * fake --root; SPINLANE_RESCAN_MS overrides). Logs; exits only here. */
#include "cmd-run.h"

#include "cleanup.h"
#include "cmd.h"
#include "dp-uevent.h"
#include "envknob.h"
#include "hostfs.h"
#include "log.h"
#include "loop.h"
#include "netlink.h"
#include "prep-daemon.h"
#include "prep-inventory.h"
#include "run-address.h"
#include "run-daemon.h"
#include "run-report.h"

#include <errno.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

#define RUN_RESCAN_UEVENT_MS 30000 /* safety re-scan when kernel uevents are heard */
#define RUN_RESCAN_FAKE_MS 10000   /* under a fake --root: inotify and this timer only */
#define RUN_DEBOUNCE_MS 20         /* an event burst becomes one re-scan */
#define RUN_STOP_TIMEOUT_MS 5000
/* A kubelet restart rebuilds the device plugins after this (a burst of restarts is one
 * rebuild), and not sooner than RUN_KUBELET_HOLDOFF_MS after the last one it caused: a
 * kubelet restarting in a loop costs at most five rebuilds a second. */
#define RUN_KUBELET_REBUILD_MS RUN_DEBOUNCE_MS
#define RUN_KUBELET_HOLDOFF_MS 200

/* The loop's own state: its sources, the pending rebuild and re-scan, the stop. */
typedef struct run_loop {
        int ifd;                  /* inotify: device nodes and sysfs attributes */
        int nlfd;                 /* kernel uevents (NETLINK_KOBJECT_UEVENT), -1 when not used */
        int debounce_fd;
        int rebuild_fd;           /* SIGHUP, config changes, kubelet restarts: the rebuild (one event) */
        const char *rebuild_why;
        uint64_t kubelet_rebuild_ms; /* loop_now_ms() of the last rebuild a kubelet restart caused */
        unsigned rescan_ms;
        /* what armed the debounce timer since it last fired, each reason once (static
         * strings, for the debug log): one re-scan answers them all */
        const char *debounce_why[6];
        unsigned n_debounce_why;
        unsigned stop_wait;       /* what the stop waits for: the plugins, the slice's DELETE */
} run_loop;

/* The services, in start order (stopped in reverse); `after` names what each needs
 * started before it, which run_services_check() holds the order to. The device plugins
 * serve before cluster reporting starts, and nothing of the report (an API server that
 * is down) is waited for; DRA reads ResourceClaims and writes the ResourceSlice through
 * the report's API client, so it starts after it and stops before it; the self-check
 * calls the servers the others started. Every scan (run-scan.c) comes first: the map it
 * builds is what the verdicts, the device plugins and DRA read. */
static const run_service *const services[] = {
        &run_service_prep,   /* node preparation: the live config */
        &run_service_addresses,
        &run_service_verdicts,
        &run_service_dp,     /* the kubelet device plugins */
        &run_service_report, /* labels, Events, /metrics, probes */
        &run_service_dra,    /* the DRA kubelet plugin */
        &run_service_slices, /* the node's ResourceSlice */
        &run_service_selfcheck,
};

/* Each service's `after` names a service earlier in the table: -EINVAL (a programming
 * error, logged) if not. */
static int run_services_check(void)
{
        for (size_t i = 0; i < ELEMENTSOF(services); i++)
                for (size_t k = 0; k < RUN_SERVICE_AFTER_MAX && services[i]->after[k]; k++) {
                        bool found = false;
                        for (size_t j = 0; j < i && !found; j++)
                                found = strcmp(services[j]->name, services[i]->after[k]) == 0;
                        if (!found) {
                                log_error("service %s starts before %s, which it needs", services[i]->name,
                                          services[i]->after[k]);
                                return -EINVAL;
                        }
                }
        return 0;
}

static int on_signal(loop *l, int signo, void *ud);
static int on_stop_timeout(loop *l, void *ud);

/* ---- the loop ---- */

static void on_address_changed(void *ud)
{
        run_debounce(ud, "NIC address lookup");
}

static void rescan(run_daemon *d)
{
        _cleanup_(run_node_free) run_node node = { 0 };
        int r = run_scan_node(d, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(services); i++)
                if (services[i]->rescan)
                        services[i]->rescan(d, &node);
}

/* The one rebuild path (SIGHUP, a changed config file, a kubelet restart): every service's reload under the
 * live config, then one fresh scan that the services torn down start on and the others
 * re-scan. A service that fails to start is down until the next rebuild (logged; the
 * readiness probe follows the device plugins' registration). */
static int on_rebuild(loop *l, void *ud)
{
        run_daemon *d = ud;
        run_loop *s = d->loop_state;
        bool restart[ELEMENTSOF(services)] = { false };
        _cleanup_(run_node_free) run_node node = { 0 };
        (void)l;

        if (d->stopping)
                return 0;
        log_info("rebuild (%s)", s->rebuild_why ? s->rebuild_why : "config");
        s->rebuild_why = NULL;
        for (size_t i = 0; i < ELEMENTSOF(services); i++)
                restart[i] = services[i]->reload && services[i]->reload(d) > 0;
        int r = run_scan_node(d, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(services); i++) {
                if (!restart[i]) {
                        if (services[i]->rescan)
                                services[i]->rescan(d, &node);
                } else if (services[i]->start(d, &node) < 0) {
                        log_error("service %s failed to start; down until the next rebuild (config change, "
                                  "SIGHUP, self-check)",
                                  services[i]->name);
                        services[i]->stop(d);
                }
        }
        return 0;
}

/* Arm the one-shot timer fd in ms unless stopping; *slot keeps the first reason given
 * until the timer runs (for the log). */
static void arm_event(run_daemon *d, int fd, const char **slot, const char *why, unsigned ms)
{
        if (d->stopping)
                return;
        if (!*slot)
                *slot = why;
        (void)loop_timer_set(d->l, fd, ms, 0);
}

void run_rebuild_soon(run_daemon *d, const char *why)
{
        arm_event(d, d->loop_state->rebuild_fd, &d->loop_state->rebuild_why, why, 1);
}

bool run_rebuild_pending(const run_daemon *d)
{
        return d->loop_state->rebuild_why != NULL;
}

/* The device plugins saw the kubelet restart (DP_EVENT_KUBELET_RESTART, reported inside
 * the engine: the rebuild runs later, from the timer). Restarts while a rebuild is
 * pending join it; the next one waits out RUN_KUBELET_HOLDOFF_MS since the last. */
void run_kubelet_restarted(run_daemon *d)
{
        run_loop *s = d->loop_state;
        if (d->stopping)
                return;
        run_dp_rebuild_next(d);
        if (s->rebuild_why) /* one is pending: it tears the plugins down too */
                return;
        uint64_t now = loop_now_ms(), at = now + RUN_KUBELET_REBUILD_MS;
        if (s->kubelet_rebuild_ms && s->kubelet_rebuild_ms + RUN_KUBELET_HOLDOFF_MS > at)
                at = s->kubelet_rebuild_ms + RUN_KUBELET_HOLDOFF_MS;
        s->kubelet_rebuild_ms = at;
        arm_event(d, s->rebuild_fd, &s->rebuild_why, "kubelet restart", (unsigned)(at - now));
}

static int on_rescan_timer(loop *l, void *ud)
{
        run_daemon *d = ud;
        (void)l;
        if (d->stopping)
                return 0;
        log_debug("re-scan (every %u ms)", d->loop_state->rescan_ms);
        rescan(d);
        /* Give back heap a burst of calls left free (glibc keeps it otherwise). */
        (void)malloc_trim(0);
        return 0;
}

static int on_debounce(loop *l, void *ud)
{
        run_daemon *d = ud;
        run_loop *s = d->loop_state;
        (void)l;
        if (d->stopping)
                return 0;
        char why[256];
        size_t len = 0;
        why[0] = '\0';
        for (unsigned i = 0; i < s->n_debounce_why && len < sizeof(why); i++) {
                int n = snprintf(why + len, sizeof(why) - len, "%s%s", i ? ", " : "", s->debounce_why[i]);
                if (n < 0)
                        break;
                len += (size_t)n;
        }
        log_debug("re-scan (%s)", s->n_debounce_why ? why : "start");
        s->n_debounce_why = 0;
        rescan(d);
        return 0;
}

void run_debounce(run_daemon *d, const char *why)
{
        run_loop *s = d->loop_state;
        if (d->stopping)
                return;
        bool known = false;
        for (unsigned i = 0; i < s->n_debounce_why; i++)
                known = known || strcmp(s->debounce_why[i], why) == 0;
        if (!known && s->n_debounce_why < ELEMENTSOF(s->debounce_why))
                s->debounce_why[s->n_debounce_why++] = why;
        (void)loop_timer_set(d->l, s->debounce_fd, RUN_DEBOUNCE_MS, 0);
}

/* Any event under the watched device nodes and sysfs attributes (an overflow too): one
 * debounced re-scan when the round's events are read (ev NULL). */
static int on_watch(loop *l, const struct inotify_event *ev, void *ud)
{
        (void)l;
        if (!ev)
                run_debounce(ud, "inotify");
        return 0;
}

/* Kernel uevents: only datagrams from the kernel (port 0) are trusted; a lost burst
 * (ENOBUFS) re-scans too. */
static int on_uevent(loop *l, int fd, uint32_t events, void *ud)
{
        run_daemon *d = ud;
        static char buf[DP_UEVENT_MAX];
        (void)l, (void)events;

        for (;;) {
                struct sockaddr_nl src;
                struct iovec iov = { buf, sizeof(buf) };
                struct msghdr mh = { .msg_name = &src, .msg_namelen = sizeof(src), .msg_iov = &iov, .msg_iovlen = 1 };
                dp_uevent ev;
                ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == ENOBUFS) {
                                run_debounce(d, "uevents lost (receive buffer overrun)");
                                continue;
                        }
                        break;
                }
                if (mh.msg_namelen != sizeof(src) || src.nl_pid != 0 || (mh.msg_flags & MSG_TRUNC))
                        continue;
                if (dp_uevent_parse(buf, (size_t)n, &ev) < 0 || !dp_uevent_relevant(&ev))
                        continue;
                log_debug("uevent %s %s (%s)", ev.action, ev.devpath, ev.subsystem);
                run_debounce(d, "uevent");
        }
        return 0;
}

/* Kernel uevents describe the live host: listen only when the root is the host's own
 * (the real root, or e.g. /host with the host's sysfs and procfs mounted). The hidden
 * SPINLANE_UEVENTS=1/0 forces it on/off (tests under a fake root). */
static bool uevents_wanted(const run_daemon *d)
{
        const char *force = getenv("SPINLANE_UEVENTS");
        char p[PATH_MAX];
        struct statfs sf;

        if (force && *force)
                return strcmp(force, "0") != 0;
        if (hostfs_is_real_root(&d->h))
                return true;
        if (hostfs_path(&d->h, "/sys", p, sizeof(p)) < 0 || statfs(p, &sf) < 0 || sf.f_type != SYSFS_MAGIC)
                return false;
        if (hostfs_path(&d->h, "/proc", p, sizeof(p)) < 0 || statfs(p, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
                return false;
        return true;
}

/* SPINLANE_RESCAN_MS (hidden, for tests and benchmarks): the safety re-scan period. */
static unsigned rescan_period(bool uevents)
{
        return run_knob_ms("SPINLANE_RESCAN_MS", 50, 3600000, uevents ? RUN_RESCAN_UEVENT_MS : RUN_RESCAN_FAKE_MS);
}

unsigned run_knob_ms(const char *name, uint64_t min, uint64_t max, uint64_t def)
{
        char why[160];
        uint64_t v;
        if (envknob_u64(name, min, max, def, &v, why, sizeof(why)) < 0)
                log_warn("%s, ignored", why);
        return (unsigned)v;
}

/* Watch where device health shows first; missing dirs are skipped (the timer covers them). */
static void add_watches(run_daemon *d)
{
        static const char *const dirs[] = {
                "/dev", "/dev/vfio", "/dev/infiniband", "/sys/devices/system/cpu", "/sys/bus/pci/drivers/vfio-pci",
        };
        char p[PATH_MAX];
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (hostfs_path(&d->h, dirs[i], p, sizeof(p)) >= 0)
                        (void)inotify_add_watch(d->loop_state->ifd, p,
                                                IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
                                                        IN_CLOSE_WRITE | IN_ONLYDIR);
}

static int on_stop_timeout(loop *l, void *ud)
{
        (void)ud;
        log_warn("device plugin calls not released (or the ResourceSlice's DELETE not answered) after %d ms; "
                 "exiting anyway", RUN_STOP_TIMEOUT_MS);
        loop_exit(l, 0);
        return 0;
}

/* One of what the stop waits for is done; the last ends the loop. */
void run_stop_done(run_daemon *d)
{
        if (d->loop_state->stop_wait > 0 && --d->loop_state->stop_wait == 0)
                loop_exit(d->l, 0);
}

void run_stop_wait(run_daemon *d)
{
        d->loop_state->stop_wait++;
}

static int on_signal(loop *l, int signo, void *ud)
{
        run_daemon *d = ud;
        if (signo == SIGHUP && d->stopping) { /* no reload or node preparation during shutdown */
                log_info("SIGHUP while stopping: ignored");
                return 0;
        }
        if (signo == SIGHUP) {
                log_info("SIGHUP: reloading");
                /* node preparation re-reads and re-applies the config; the rest follows in
                 * the rebuild */
                if (d->prep)
                        (void)prep_daemon_reload(d->prep, true);
                run_rebuild_soon(d, "SIGHUP");
                return 0;
        }
        if (d->stopping)
                return 0;
        log_info("%s: stopping", strsignal(signo));
        d->stopping = true;
        /* from now on SIGHUP neither reloads nor, once the loop is gone and the signals
         * are unblocked again, kills the agent with its default action */
        signal(SIGHUP, SIG_IGN);
        (void)loop_add_timer(l, RUN_STOP_TIMEOUT_MS, 0, on_stop_timeout, d, NULL);
        /* the loop ends when the plugins have stopped (DP_EVENT_STOPPED) and the
         * ResourceSlice's DELETE is answered, or at the stop timeout */
        d->loop_state->stop_wait = 1;
        if (run_dra_stop_slices(d))
                run_stop_wait(d);
        if (run_dp_running(d)) {
                run_stop_wait(d);
                run_dp_stop_engine(d);
        }
        run_stop_done(d);
        return 0;
}

/* The loop and its sources: signals, the re-scan, debounce and rebuild timers, kernel
 * uevents (when wanted), the inotify watches, the NIC address service. Logged. */
static int loop_setup(run_daemon *d)
{
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
        run_loop *s = d->loop_state;
        bool uevents = uevents_wanted(d);
        int r;

        if (uevents) {
                s->nlfd = netlink_subscribe(SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, 1 /* the kernel's broadcast */);
                if (s->nlfd < 0) {
                        log_errno(LOG_WARN, s->nlfd, "kernel uevents (netlink) unavailable; re-scanning more often");
                        uevents = false;
                }
        }
        s->rescan_ms = rescan_period(uevents);
        r = loop_new(&d->l);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "event loop");
        if ((r = loop_add_signals(d->l, sigs, ELEMENTSOF(sigs), on_signal, d)) < 0 ||
            (r = loop_add_timer(d->l, s->rescan_ms, s->rescan_ms, on_rescan_timer, d, NULL)) < 0 ||
            (r = loop_add_timer(d->l, 0, 0, on_debounce, d, &s->debounce_fd)) < 0 ||
            (r = loop_add_timer(d->l, 0, 0, on_rebuild, d, &s->rebuild_fd)) < 0 ||
            (r = loop_timer_set(d->l, s->rebuild_fd, 0, 0)) < 0 || /* armed by run_rebuild_soon only */
            (s->nlfd >= 0 && (r = loop_add_fd(d->l, s->nlfd, EPOLLIN, on_uevent, d)) < 0))
                return log_errno(LOG_ERROR, r, "event loop setup");
        s->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (s->ifd >= 0) {
                add_watches(d);
                (void)loop_add_inotify(d->l, s->ifd, on_watch, d);
        }
        if ((r = run_address_new(d->l, on_address_changed, d, &d->addr)) < 0)
                return log_errno(LOG_ERROR, r, "NIC address service");
        return 0;
}

/* The services started (the first `started` of the table) stopped in reverse, then the
 * loop's sources, the services' states and the loop. */
static void teardown(run_daemon *d, size_t started)
{
        run_loop *s = d->loop_state;
        while (started > 0) {
                started--;
                if (services[started]->stop)
                        services[started]->stop(d);
        }
        if (s->ifd >= 0) {
                if (d->l)
                        (void)loop_remove_fd(d->l, s->ifd);
                close(s->ifd);
        }
        if (s->nlfd >= 0) {
                if (d->l)
                        (void)loop_remove_fd(d->l, s->nlfd);
                close(s->nlfd);
        }
        run_address_free(d->addr);
        run_scan_free(d->scan);
        run_verdicts_free(d->verdicts);
        run_dp_free(d->dp);
        run_dra_free(d->dra_svc);
        run_selfcheck_free(d->selfcheck);
        loop_free(d->l);
}

int cmd_run(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent run [--root DIR] [--config FILE] [--json] [--log-format human|json] [--once] "
                                    "[--kubeconfig FILE] [--metrics-bind-address HOST:PORT] "
                                    "[--health-probe-bind-address HOST:PORT] [--dra-resources nic,core]";
        run_loop ls = { .ifd = -1, .nlfd = -1, .debounce_fd = -1, .rebuild_fd = -1 };
        run_daemon d = { .loop_state = &ls };
        run_node node = { 0 };
        size_t started = 0;
        int r, rc = AGENT_EXIT_ERROR;

        /* options and --root as every subcommand (a bad --root is reported there) */
        r = agent_setup(argc, argv, usage, &d.opt, &d.h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (d.opt.dra_resources) {
                char err[160];
                if (dra_resources_parse(d.opt.dra_resources, &d.dra, err, sizeof(err)) < 0) {
                        agent_error(&d.opt, "run: --dra-resources: %s", err);
                        return AGENT_EXIT_ERROR;
                }
        }
        /* SPINLANE_DEBUG=1 (hidden): why each re-scan happened */
        log_setup(d.opt.log_json ? LOG_FORMAT_JSON : LOG_FORMAT_HUMAN,
                  getenv("SPINLANE_DEBUG") && *getenv("SPINLANE_DEBUG") == '1' ? LOG_DEBUG : LOG_INFO);
        signal(SIGPIPE, SIG_IGN);
        if (d.opt.once) /* prepare the node and exit: 0 ok, 1 a step failed, 2 error */
                return run_report_check(d.opt.kubeconfig, d.opt.metrics_bind, d.opt.probe_bind) < 0
                               ? AGENT_EXIT_ERROR
                               : prep_once(&d.h, d.opt.config, prep_scan_inventory, NULL, d.opt.json);
        /* the config, once (errors through the logger); node preparation watches it */
        if (prep_config_load(d.opt.config, &d.cfg, &d.cfg_from_file) < 0 ||
            run_report_check(d.opt.kubeconfig, d.opt.metrics_bind, d.opt.probe_bind) < 0 || run_services_check() < 0)
                return AGENT_EXIT_ERROR;
        /* the services' states (what the report points into stays put across rebuilds) */
        if (run_scan_new(&d.scan) < 0 || run_verdicts_new(&d.verdicts) < 0 || run_dp_new(&d.cfg, &d.dp) < 0 ||
            run_dra_new(&d.dra_svc) < 0 || run_selfcheck_new(&d.selfcheck) < 0) {
                log_error("out of memory");
                goto out;
        }
        if (loop_setup(&d) < 0)
                goto out;
        r = run_scan_node(&d, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                goto out;
        }
        for (; started < ELEMENTSOF(services); started++) {
                r = services[started]->start ? services[started]->start(&d, &node) : 0;
                if (r < 0) {
                        log_error("service %s failed to start", services[started]->name);
                        break;
                }
        }
        run_node_free(&node);
        if (started == ELEMENTSOF(services)) {
                log_info("running (re-scan on %s, and every %u ms)",
                         ls.nlfd >= 0 ? "kernel uevents and inotify" : "inotify", ls.rescan_ms);
                r = loop_run(d.l);
                rc = r < 0 ? AGENT_EXIT_ERROR : AGENT_EXIT_OK;
                if (r < 0)
                        log_errno(LOG_ERROR, r, "event loop");
        }
out:
        teardown(&d, started);
        if (rc == AGENT_EXIT_OK)
                log_info("stopped");
        return rc;
}
