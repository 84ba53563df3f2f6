/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent run [--root DIR] [--config FILE] [--once] [--kubeconfig FILE]
 * [--metrics-bind-address HOST:PORT]`: the daemon. One event loop (epoll + signalfd +
 * timerfd) drives a table of services: node preparation (apply the config, re-apply on
 * SIGHUP/config change/ENA reset), the node verdicts (printed at start and whenever they
 * change), the kubelet device plugins, and the report (Node labels, Events, metrics,
 * probes: run-report.c); --once only prepares the node and exits (an init container).
 * The config is loaded once at start and watched once (prep-daemon.c); SIGHUP, a
 * changed config and a kubelet restart are one event, the rebuild: services whose
 * settings changed are torn down and built again (a new resource prefix or CDI setting
 * re-registers the device plugins; a kubelet restart rebuilds them as they are), then
 * every service re-scans. The inventory is re-scanned on kernel uevents
 * (netlink; on the live host only), on inotify events under /dev and sysfs, and by a
 * safety timer (30 s on the live host, 10 s under a fake --root; SPINLANE_RESCAN_MS
 * overrides). Logs; exits only here. */
#include "cmd-run.h"

#include "checks.h"
#include "cmd.h"
#include "cleanup.h"
#include "config.h"
#include "device-map.h"
#include "dp-cdi.h"
#include "dp-server.h"
#include "dp-uevent.h"
#include "dra-plugin.h"
#include "dra-request.h"
#include "dra-slice.h"
#include "envknob.h"
#include "rpc-unary.h"
#include "hostfs.h"
#include "inventory.h"
#include "ipv4.h"
#include "log.h"
#include "loop.h"
#include "netlink.h"
#include "prep-daemon.h"
#include "prep-inventory.h"
#include "run-address.h"
#include "run-cluster.h"
#include "run-slices.h"
#include "select.h"
#include "run-report.h"
#include "verdict.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <pthread.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define RUN_RESCAN_UEVENT_MS 30000 /* safety re-scan when kernel uevents are heard */
#define RUN_RESCAN_FAKE_MS 10000   /* under a fake --root: inotify and this timer only */
#define RUN_DEBOUNCE_MS 20         /* an event burst becomes one re-scan */
#define RUN_STOP_TIMEOUT_MS 5000
/* The self-check of the agent's own gRPC servers (SPINLANE_SELFCHECK_MS, 1 s..10 min): a
 * unary call to each served socket, answered within RUN_SELFCHECK_DEADLINE_MS or failed.
 * gRPC's C core gives no signal when its accept fails (EMFILE: it logs "Failed accept4"
 * and retries): a server that cannot accept is found this way. */
#define RUN_SELFCHECK_MS 10000
#define RUN_SELFCHECK_DEADLINE_MS 5000
#define RUN_SELFCHECK_MAX 3
/* A kubelet restart rebuilds the device plugins after this (a burst of restarts is one
 * rebuild), and not sooner than RUN_KUBELET_HOLDOFF_MS after the last one it caused: a
 * kubelet restarting in a loop costs at most five rebuilds a second. */
#define RUN_KUBELET_REBUILD_MS RUN_DEBOUNCE_MS
#define RUN_KUBELET_HOLDOFF_MS 200

/* What the device plugins are built with (a change of these rebuilds them: they register
 * under the prefix). The NIC selection and the core pool are read from the live config
 * at every scan (agent/node/select.h). */
typedef struct run_settings {
        char prefix[64];
        char hugetlbfs[DP_PATH_LEN];  /* host's hugetlbfs mount handed to NIC pods; "" when
                                         hugetlbfs.pod_mount is false (pods bring their own) */
        bool cdi;                     /* "cdi": {"enabled": true} */
        char cdi_dir[DP_PATH_LEN];    /* "cdi": {"spec_dir": ...}, host path */
} run_settings;

/* One scan as every service sees it: the inventory (NIC addresses resolved) and the
 * live config's selection over it (agent/node/select.h). */
typedef struct run_node {
        inventory *inv;
        selection sel;
        const device_map *map; /* the device map of inv under sel: the daemon's (ctx->map) */
} run_node;

typedef struct run_ctx run_ctx;

/* A service of the daemon. Add a row to `services` to add one (node preparation, ...):
 * start after the first scan, rescan after every scan, stop on exit. A rebuild (SIGHUP,
 * config change) calls reload before its scan: 0 the service follows the live config in
 * place (its rescan comes), 1 it tore itself down (start comes, with the scan). */
typedef struct run_service {
        const char *name;
        int (*start)(run_ctx *ctx, const run_node *node);
        void (*rescan)(run_ctx *ctx, const run_node *node);
        int (*reload)(run_ctx *ctx);
        void (*stop)(run_ctx *ctx);
} run_service;

struct run_ctx {
        agent_options opt;
        hostfs h;
        loop *l;
        config cfg;               /* the config at start; node preparation keeps the live one */
        bool cfg_from_file;
        run_settings set;         /* what the device plugins run with */
        prep_daemon *prep;
        run_address *addr;        /* NIC addresses: static entries, recorded MACs, metadata (run-address.c) */
        int ifd;                  /* inotify: device nodes and sysfs attributes */
        int nlfd;                 /* kernel uevents (NETLINK_KOBJECT_UEVENT), -1 when not used */
        int debounce_fd;
        int rebuild_fd;           /* SIGHUP, config changes, kubelet restarts: the rebuild (one event) */
        const char *rebuild_why;
        bool rebuild_dp;          /* the pending rebuild tears the device plugins down even
                                     with the same settings (a kubelet restart) */
        uint64_t kubelet_rebuild_ms; /* loop_now_ms() of the last rebuild a kubelet restart caused */
        unsigned rescan_ms;
        /* what armed the debounce timer since it last fired, each reason once (static
         * strings, for the debug log): one re-scan answers them all */
        const char *debounce_why[6];
        unsigned n_debounce_why;
        bool stopping;
        /* the device map of the last scan (the one device value per device, device-map.h),
         * the history of the next; map_forget: the next is built without one (the device
         * plugins were torn down: the kubelet forgot what they listed) */
        device_map map;
        bool map_forget;
        /* verdicts */
        verdict_list verdicts;
        bool have_verdicts;
        /* device plugins */
        dp_engine *dp;
        dp_plugin *nic_plugin, *core_plugin;
        bool listed;
        device_list nics, cores;      /* last advertised (the map's listed devices) */
        /* the counters of the plugins a rebuild tore down, for the new ones of the same
         * resource names (the metrics stay monotonic) */
        bool carry;
        char carry_prefix[64];
        dp_plugin_stats carry_nic, carry_core;
        /* labels, Events, metrics, probes (run-report.c) */
        run_report *report;
        /* DRA: the resources served through it (--dra-resources; such a resource gets no
         * device plugin), the kubelet plugin (agent/dra), the node's ResourceSlice
         * (run-slices.c) and the device map it was built from (the history of the next) */
        dra_resources dra;
        dra_plugin *kplugin;
        char dra_cdi_dir[DP_PATH_LEN]; /* the spec dir the kubelet plugin was started with */
        run_slices *slices;
        size_t dra_left_out;          /* devices the last slice left out (logged on change) */
        unsigned stop_wait;           /* what the stop waits for: the plugins, the slice's DELETE */
        /* the self-check (selfcheck_*): one round at a time on its own thread, its results
         * handed back through sc_efd; health says why /healthz fails ("" when it does not) */
        int sc_efd;
        unsigned sc_ms;
        bool sc_running;
        pthread_t sc_thread;
        size_t sc_n;
        struct {
                char target[PATH_MAX + 8];
                const char *method, *what;
                bool ok;
                char why[256];
        } sc[RUN_SELFCHECK_MAX];
        bool rebuild_dra;             /* the pending rebuild restarts the DRA plugin too */
        char health[384];
};

static void settings_load(const config *c, run_settings *ret)
{
        run_settings s = { 0 };

        snprintf(s.prefix, sizeof(s.prefix), "%s", c->resource_prefix);
        if (c->hugetlbfs.pod_mount)
                snprintf(s.hugetlbfs, sizeof(s.hugetlbfs), "%s", c->hugetlbfs.mount_point);
        s.cdi = c->cdi.enabled;
        snprintf(s.cdi_dir, sizeof(s.cdi_dir), "%s", c->cdi.spec_dir);
        *ret = s;
}

static bool settings_equal(const run_settings *a, const run_settings *b)
{
        return strcmp(a->prefix, b->prefix) == 0 && strcmp(a->hugetlbfs, b->hugetlbfs) == 0 && a->cdi == b->cdi &&
               strcmp(a->cdi_dir, b->cdi_dir) == 0;
}

/* The config in force: node preparation's (it follows reloads), else the one at start. */
static const config *live_config(const run_ctx *ctx)
{
        return ctx->prep ? prep_daemon_config(ctx->prep) : &ctx->cfg;
}

static void debounce(run_ctx *ctx, const char *why);
static void stop_done(run_ctx *ctx);
static void rebuild_soon(run_ctx *ctx, const char *why);
static void kubelet_restarted(run_ctx *ctx);

/* ---- service: node preparation (owns the live config and its watch) ---- */

/* The config file changed (inotify) and brought a good config: the rebuild, as SIGHUP. */
static void prep_config_changed(void *ud)
{
        rebuild_soon(ud, "config changed");
}

static int prep_start(run_ctx *ctx, const run_node *node)
{
        prep_daemon_options o = { .config_path = ctx->opt.config, .scan = prep_scan_inventory,
                                  .json = ctx->opt.json, .on_config_changed = prep_config_changed,
                                  .userdata = ctx, .initial = &ctx->cfg, .initial_from_file = ctx->cfg_from_file };
        (void)node; /* preparation scans afresh */
        int r = prep_daemon_new(ctx->l, &ctx->h, &o, &ctx->prep);
        if (r < 0)
                return r;
        /* NICs may have moved: let the other services see the node as it is now. */
        debounce(ctx, "after node preparation");
        return 0;
}

/* Preparation has re-read and applied the config before the rebuild (on_signal; on a
 * changed file prep-daemon.c itself): nothing to tear down. */
static int prep_reload(run_ctx *ctx)
{
        (void)ctx;
        return 0;
}

static void prep_stop(run_ctx *ctx)
{
        prep_daemon_free(ctx->prep);
        ctx->prep = NULL;
}

/* ---- service: node verdicts ---- */

static void verdicts_rescan(run_ctx *ctx, const run_node *node)
{
        verdict_list vl = { 0 };
        /* The config's NIC selection (the one preparation and the device plugin use) and
         * bind driver. */
        const config *c = live_config(ctx);
        /* the kernel-args verdict reads what preparation recorded (a garbled record is
         * prep-kernel-args' FAIL; here it counts as none) */
        kargs_state kst;
        char kerr[256];
        int kr = kargs_state_load(&ctx->h, &kst, kerr, sizeof(kerr));
        checks_options copt = { .map = node->map,
                                .bind_driver = config_driver_name(c->binding.ena),
                                .hugetlbfs_pod_mount = c->hugetlbfs.pod_mount,
                                .hugetlbfs_mount_point = c->hugetlbfs.mount_point,
                                .config = c, .kargs_state = kr > 0 ? &kst : NULL };

        if (checks_node(node->inv, &copt, &vl) < 0) {
                log_error("node checks failed: out of memory");
                verdict_list_free(&vl);
                return;
        }
        if (ctx->have_verdicts && verdict_list_equal(&vl, &ctx->verdicts)) {
                verdict_list_free(&vl);
                return;
        }
        if (ctx->have_verdicts)
                log_info("node verdicts changed");
        verdict_print(&vl, stdout, ctx->opt.json);
        fflush(stdout);
        verdict_list_free(&ctx->verdicts);
        ctx->verdicts = vl;
        ctx->have_verdicts = true;
}

static int verdicts_start(run_ctx *ctx, const run_node *node)
{
        verdicts_rescan(ctx, node);
        return 0;
}

static void verdicts_stop(run_ctx *ctx)
{
        verdict_list_free(&ctx->verdicts);
}

/* ---- service: device plugins ---- */

/* The map's line of every device whose state or reason changed (all of them the first
 * time): what `spinlane-agent explain` prints. */
static void log_map_changes(const run_ctx *ctx, const device_map *prev, const device_map *now)
{
        char line[DEVICE_DETAIL_LEN + 256];
        for (size_t i = 0; i < now->n; i++) {
                if (!device_map_changed(prev, &now->items[i]))
                        continue;
                device_map_line(&now->items[i], ctx->set.prefix, line, sizeof(line));
                log_info("%s", line);
        }
}

static void alloc_config(const run_ctx *ctx, dp_alloc_config *cfg)
{
        dp_alloc_config_default(cfg);
        snprintf(cfg->prefix, sizeof(cfg->prefix), "%s", ctx->set.prefix);
        snprintf(cfg->hugepage_host_dir, sizeof(cfg->hugepage_host_dir), "%s", ctx->set.hugetlbfs);
        snprintf(cfg->hugepage_container_dir, sizeof(cfg->hugepage_container_dir), "%s", ctx->set.hugetlbfs);
        cfg->cdi = ctx->set.cdi;
}

static void log_changes(const char *resource, const device_list *old, const device_list *now)
{
        size_t healthy = 0;
        for (size_t i = 0; i < now->n; i++) {
                const device_entry *d = &now->items[i];
                const device_entry *o = device_list_find(old, d->id, strlen(d->id));
                healthy += device_healthy(d);
                if (!o)
                        log_info("%s: device %s advertised (%s, NUMA node %d)", resource, d->id,
                                 device_healthy(d) ? "Healthy" : "Unhealthy", d->numa_node);
                else if (device_healthy(o) != device_healthy(d))
                        log_info("%s: device %s is now %s", resource, d->id, device_healthy(d) ? "Healthy" : "Unhealthy");
        }
        log_info("%s: %zu devices, %zu healthy", resource, now->n, healthy);
}

/* The CDI spec of the NIC resource under the settings s (dp-cdi.c). */
static int cdi_write(run_ctx *ctx, const device_list *nics)
{
        char kind[128];
        device_kind_full(DEVICE_NIC, ctx->set.prefix, kind, sizeof(kind));
        return dp_cdi_write(&ctx->h, ctx->set.cdi_dir, kind, ctx->set.hugetlbfs, nics);
}

static void dp_rescan(run_ctx *ctx, const run_node *node)
{
        device_list nics = { 0 }, cores = { 0 };
        dp_alloc_config cfg;
        uint64_t numa = 0;
        char res[128];
        int r;

        if (!ctx->dp)
                return;
        /* the map's listed devices, as they are (device-map.c kept what a vanished or
         * unbound one keeps) */
        if (device_map_list(node->map, DEVICE_NIC, &nics) < 0 || device_map_list(node->map, DEVICE_CORE, &cores) < 0) {
                device_list_free(&nics);
                log_error("device plugins: out of memory; the devices stay as they were");
                return;
        }
        for (size_t i = 0; i < nics.n; i++)
                if (device_healthy(&nics.items[i]) && nics.items[i].numa_node >= 0 && nics.items[i].numa_node < 64)
                        numa |= 1ULL << nics.items[i].numa_node;
        alloc_config(ctx, &cfg);
        if (ctx->kplugin && dra_plugin_set_devices(ctx->kplugin, &nics, &cores, &cfg) < 0)
                log_error("DRA: out of memory; the devices stay as they were");
        if (ctx->nic_plugin)
                dp_plugin_set_config(ctx->nic_plugin, &cfg);
        cfg.numa_with_nics = numa;
        if (ctx->core_plugin)
                dp_plugin_set_config(ctx->core_plugin, &cfg);
        if ((ctx->nic_plugin ? dp_plugin_set_devices(ctx->nic_plugin, &nics) > 0
                             : !device_list_equal(&ctx->nics, &nics)) ||
            !ctx->listed) {
                device_kind_full(DEVICE_NIC, ctx->set.prefix, res, sizeof(res));
                log_changes(res, &ctx->nics, &nics);
                r = ctx->set.cdi ? cdi_write(ctx, &nics) : 0;
                if (r < 0)
                        log_errno(LOG_WARN, r, "CDI spec for %s under %s", res, ctx->set.cdi_dir);
        }
        if ((ctx->core_plugin ? dp_plugin_set_devices(ctx->core_plugin, &cores) > 0
                              : !device_list_equal(&ctx->cores, &cores)) ||
            !ctx->listed) {
                device_kind_full(DEVICE_CORE, ctx->set.prefix, res, sizeof(res));
                log_changes(res, &ctx->cores, &cores);
        }
        ctx->listed = true;
        device_list_free(&ctx->nics);
        device_list_free(&ctx->cores);
        ctx->nics = nics;
        ctx->cores = cores;
}

static void on_dp_event(const dp_event *ev, void *ud)
{
        run_ctx *ctx = ud;
        switch (ev->type) {
        case DP_EVENT_SERVING:
                log_info("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_SERVE_FAILED:
                log_error("%s: %s; retrying", ev->resource, ev->message);
                break;
        case DP_EVENT_WAITING:
                log_info("device plugins: %s", ev->message);
                break;
        case DP_EVENT_REGISTERED:
                log_info("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_REGISTER_FAILED:
                log_warn("%s: Register with the kubelet failed (status %d): \"%s\"; retrying in %u ms", ev->resource,
                         ev->code, ev->message, ev->retry_ms);
                break;
        case DP_EVENT_RESTART:
                log_info("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_KUBELET_RESTART:
                log_info("device plugins: %s", ev->message);
                kubelet_restarted(ctx);
                break;
        case DP_EVENT_REFUSED:
                log_warn("%s: request refused (status %d): %s", ev->resource, ev->code, ev->message);
                break;
        case DP_EVENT_REFUSALS_UNREPORTED:
                log_warn("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_STOPPED:
                log_info("%s", ev->message);
                if (ctx->stopping) /* not when a rebuild tears them down */
                        stop_done(ctx);
                break;
        case DP_EVENT_TEARDOWN_UNFINISHED:
                log_warn("device plugins: %s", ev->message);
                break;
        }
        if (ev->type == DP_EVENT_REGISTERED || ev->type == DP_EVENT_RESTART || ev->type == DP_EVENT_REGISTER_FAILED ||
            ev->type == DP_EVENT_KUBELET_RESTART)
                run_report_changed(ctx->report); /* readiness follows registration */
}

static int dp_start(run_ctx *ctx, const run_node *node)
{
        dp_alloc_config cfg;
        char res[128], sock[96];
        int r;

        run_report_changed(ctx->report); /* readiness follows the plugins (NULL at start) */
        alloc_config(ctx, &cfg);
        r = dp_engine_new(ctx->l, &ctx->h, on_dp_event, ctx, &ctx->dp);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "device plugin engine");
        device_kind_full(DEVICE_NIC, ctx->set.prefix, res, sizeof(res));
        snprintf(sock, sizeof(sock), "spinlane-%s.sock", device_kind_resource(DEVICE_NIC));
        /* a resource served through DRA has no device plugin: nothing is granted twice */
        r = ctx->dra.nic ? 0 : dp_engine_add_plugin(ctx->dp, DEVICE_NIC, res, sock, &cfg, &ctx->nic_plugin);
        if (r >= 0 && !ctx->dra.core) {
                device_kind_full(DEVICE_CORE, ctx->set.prefix, res, sizeof(res));
                snprintf(sock, sizeof(sock), "spinlane-%s.sock", device_kind_resource(DEVICE_CORE));
                r = dp_engine_add_plugin(ctx->dp, DEVICE_CORE, res, sock, &cfg, &ctx->core_plugin);
        }
        if (r < 0)
                return log_errno(LOG_ERROR, r, "device plugin %s", res);
        if (ctx->carry && strcmp(ctx->carry_prefix, ctx->set.prefix) == 0) {
                if (ctx->nic_plugin)
                        dp_plugin_carry_stats(ctx->nic_plugin, &ctx->carry_nic);
                if (ctx->core_plugin)
                        dp_plugin_carry_stats(ctx->core_plugin, &ctx->carry_core);
        }
        ctx->carry = false;
        dp_rescan(ctx, node); /* the first list is ready before the kubelet can ask */
        r = dp_engine_start(ctx->dp);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "device plugin start");
        return 0;
}

/* Tear the device plugins down: for good (exit: dp_engine_free waits until gRPC has
 * finished), or for a rebuild (dp_engine_release: the next engine follows at once). */
static void dp_teardown(run_ctx *ctx, bool exiting)
{
        if (!exiting && (ctx->nic_plugin || ctx->core_plugin)) {
                if (ctx->nic_plugin)
                        dp_plugin_get_stats(ctx->nic_plugin, &ctx->carry_nic);
                if (ctx->core_plugin)
                        dp_plugin_get_stats(ctx->core_plugin, &ctx->carry_core);
                snprintf(ctx->carry_prefix, sizeof(ctx->carry_prefix), "%s", ctx->set.prefix);
                ctx->carry = true;
        }
        /* both wait for calls to be released; gRPC removes the sockets */
        if (exiting)
                dp_engine_free(ctx->dp);
        else
                dp_engine_release(ctx->dp);
        ctx->dp = NULL;
        ctx->nic_plugin = ctx->core_plugin = NULL;
        ctx->listed = false;
        device_list_free(&ctx->nics);
        device_list_free(&ctx->cores);
        ctx->map_forget = true; /* the next plugins' kubelet was told nothing yet */
}

/* The CDI spec of the settings s, removed (a rebuild moved it or turned CDI off, or the
 * agent stops). */
static void cdi_remove(run_ctx *ctx, const run_settings *s)
{
        char kind[128];
        device_kind_full(DEVICE_NIC, s->prefix, kind, sizeof(kind));
        int r = dp_cdi_remove(&ctx->h, s->cdi_dir, kind);
        if (r < 0)
                log_errno(LOG_WARN, r, "CDI spec %s under %s: removing it", kind, s->cdi_dir);
}

/* The exit: the plugins go (their sockets with them, so the kubelet drops the resources)
 * and so does the CDI spec, which would otherwise keep naming devices no agent serves;
 * the next agent writes it again at its first scan. */
static void dp_stop(run_ctx *ctx)
{
        dp_teardown(ctx, true);
        if (ctx->set.cdi)
                cdi_remove(ctx, &ctx->set);
}

/* The rebuild: device plugins built with other settings (resource prefix, hugetlbfs, CDI)
 * are torn down - their streams end and their sockets go, so the kubelet drops the old
 * resources - and started again (dp_start) under the new ones, which register. After a
 * kubelet restart they are torn down and started again under the same settings, which
 * register with the new kubelet. Otherwise the re-scan brings the new selection and core
 * pool to the same plugins. */
static int dp_reload(run_ctx *ctx)
{
        run_settings now;
        bool kubelet = ctx->rebuild_dp;
        ctx->rebuild_dp = false;
        settings_load(live_config(ctx), &now);
        if (ctx->dp && settings_equal(&now, &ctx->set) && !kubelet)
                return 0;
        run_settings old = ctx->set;
        log_info("device plugins: %s %s (resource prefix %s%s%s)", ctx->dp ? "rebuilding" : "starting",
                 kubelet && settings_equal(&now, &ctx->set) ? "for the new kubelet" : "under the new config",
                 now.prefix, now.cdi ? ", CDI spec dir " : ", no CDI", now.cdi ? now.cdi_dir : "");
        if (ctx->dp) {
                dp_teardown(ctx, false);
                if (kubelet) { /* served again for the new kubelet */
                        ctx->carry_nic.restarts++;
                        ctx->carry_core.restarts++;
                }
                if (old.cdi && (!now.cdi || strcmp(old.prefix, now.prefix) != 0 || strcmp(old.cdi_dir, now.cdi_dir) != 0))
                        cdi_remove(ctx, &old);
        }
        ctx->set = now;
        return 1;
}

/* ---- service: NIC addresses (run-address.c; resolved into every scan by run_scan) ---- */

static int addr_reload(run_ctx *ctx)
{
        run_address_reload(ctx->addr);
        return 0;
}

/* ---- service: Node labels, Events, metrics and probes (run-report.c) ---- */

static int report_start(run_ctx *ctx, const run_node *node)
{
        run_sources src = { .l = ctx->l, .h = &ctx->h, .prefix = ctx->set.prefix, .verdicts = &ctx->verdicts,
                            .have_verdicts = &ctx->have_verdicts, .nics = &ctx->nics, .cores = &ctx->cores,
                            .nic_plugin = &ctx->nic_plugin, .core_plugin = &ctx->core_plugin, .prep = &ctx->prep,
                            .kubeconfig = ctx->opt.kubeconfig, .metrics_bind = ctx->opt.metrics_bind,
                            .probe_bind = ctx->opt.probe_bind, .dra = &ctx->kplugin, .dra_nic = ctx->dra.nic,
                            .dra_core = ctx->dra.core, .health = ctx->health };
        (void)node;
        return run_report_new(&src, &ctx->report);
}

static void report_rescan(run_ctx *ctx, const run_node *node)
{
        (void)node;
        run_report_rescanned(ctx->report); /* the labels follow, and the Node is read again */
}

static void report_stop(run_ctx *ctx)
{
        run_report_free(ctx->report);
        ctx->report = NULL;
}

/* ---- service: the node's ResourceSlice for DRA (run-slices.c) ---- */

/* The device map (the one rule, as the device plugins get it) as the slice's devices:
 * its Healthy devices of the DRA resources. */
static void slices_rescan(run_ctx *ctx, const run_node *node)
{
        _cleanup_(json_decrefp) json_t *devs = NULL;
        char why[DRA_WHY_LEN];
        size_t left = 0;

        if (!ctx->slices)
                return;
        if (dra_slice_devices(node->inv, node->map, ctx->dra, &devs, &left, why, sizeof(why)) < 0) {
                log_error("ResourceSlice: out of memory; the slice stays as it was");
                return;
        }
        if (left && left != ctx->dra_left_out)
                log_warn("ResourceSlice: %zu device%s not published: %s", left, left == 1 ? "" : "s", why);
        ctx->dra_left_out = left;
        run_slices_set(ctx->slices, devs);
        run_slices_resync(ctx->slices); /* someone may have deleted or edited it */
}

static int slices_start(run_ctx *ctx, const run_node *node)
{
        if (!ctx->dra.nic && !ctx->dra.core)
                return 0; /* no DRA: nothing published */
        run_cluster *c = run_report_cluster(ctx->report);
        if (!c) {
                log_warn("ResourceSlice off: cluster reporting is off (see above), and the slice goes through its API "
                         "client; DRA claims cannot be allocated on this node");
                return 0;
        }
        int r = run_slices_new(ctx->l, run_cluster_kube(c), run_cluster_node(c), &ctx->slices);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "ResourceSlice for Node %s", run_cluster_node(c));
        log_info("ResourceSlice on: driver %s, pool %s, resources %s%s%s", DRA_DRIVER, run_cluster_node(c),
                 ctx->dra.nic ? "nic" : "", ctx->dra.nic && ctx->dra.core ? "," : "", ctx->dra.core ? "core" : "");
        slices_rescan(ctx, node);
        return 0;
}

static void slices_stop(run_ctx *ctx)
{
        run_slices_free(ctx->slices);
        ctx->slices = NULL;
}

/* ---- service: the DRA kubelet plugin (agent/dra), with --dra-resources ---- */

static void on_dra_registration(void *ud)
{
        run_ctx *ctx = ud;
        run_report_changed(ctx->report); /* readiness follows the DRA registration too */
}

static void on_dra_log(int level, const char *msg, void *ud)
{
        (void)ud;
        if (level >= 2)
                log_error("%s", msg);
        else if (level == 1)
                log_warn("%s", msg);
        else
                log_info("%s", msg);
}

/* After the report: ResourceClaims are read through its API client. Started once; a
 * rebuild gives it the new devices through dp_rescan. */
static int dra_start(run_ctx *ctx, const run_node *node)
{
        dp_alloc_config cfg;
        (void)node;
        if (!ctx->dra.nic && !ctx->dra.core)
                return 0;
        if (ctx->kplugin)
                return 0;
        dra_plugin_options o = { .l = ctx->l, .h = &ctx->h, .node = getenv("NODE_NAME"),
                                 .kube = run_report_kube(ctx->report), .cdi_dir = ctx->set.cdi_dir,
                                 .nic = ctx->dra.nic, .core = ctx->dra.core, .log = on_dra_log,
                                 .registration_changed = on_dra_registration, .userdata = ctx };
        if (!o.kube)
                log_warn("DRA: no API server (cluster reporting is off): claims cannot be prepared");
        int r = dra_plugin_new(&o, &ctx->kplugin);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "DRA kubelet plugin");
        snprintf(ctx->dra_cdi_dir, sizeof(ctx->dra_cdi_dir), "%s", ctx->set.cdi_dir);
        alloc_config(ctx, &cfg);
        if (dra_plugin_set_devices(ctx->kplugin, &ctx->nics, &ctx->cores, &cfg) < 0)
                log_error("DRA: out of memory; no devices yet");
        return 0;
}

static void dra_stop(run_ctx *ctx);

/* The plugin keeps running across a rebuild (prepared claims stay where they are); a
 * changed CDI spec dir would split the claims' specs over two dirs: said, not followed. */
static int dra_reload(run_ctx *ctx)
{
        if (ctx->rebuild_dra) { /* its self-check failed: served again (the checkpoint keeps the claims) */
                ctx->rebuild_dra = false;
                if (ctx->kplugin || ctx->dra.nic || ctx->dra.core) {
                        log_info("DRA: restarting the kubelet plugin");
                        dra_stop(ctx);
                        return 1;
                }
        }
        if (ctx->kplugin && strcmp(ctx->dra_cdi_dir, ctx->set.cdi_dir) != 0)
                log_warn("DRA: cdi.spec_dir is now %s; the DRA plugin keeps writing claim specs under %s until the "
                         "agent restarts, ignoring",
                         ctx->set.cdi_dir, ctx->dra_cdi_dir);
        return 0;
}

static void dra_stop(run_ctx *ctx)
{
        dra_plugin_free(ctx->kplugin);
        ctx->kplugin = NULL;
}

/* In this order: the device plugins serve before cluster reporting starts, and nothing of
 * the report (an API server that is down) is waited for; the ResourceSlice goes through
 * the report's API client, so it starts after it and stops before it. */
static const run_service services[] = {
        { "node-preparation", prep_start, NULL, prep_reload, prep_stop },
        { "nic-addresses", NULL, NULL, addr_reload, NULL },
        { "verdicts", verdicts_start, verdicts_rescan, NULL, verdicts_stop },
        { "device-plugin", dp_start, dp_rescan, dp_reload, dp_stop },
        { "report", report_start, report_rescan, NULL, report_stop },
        { "dra", dra_start, NULL, dra_reload, dra_stop },
        { "dra-slices", slices_start, slices_rescan, NULL, slices_stop },
};

/* ---- the loop ---- */

static void run_node_free(run_node *n)
{
        selection_free(&n->sel);
        inventory_free(n->inv);
        n->inv = NULL;
}

/* The node as the services all see it: a fresh inventory, the live config's selection
 * over it and the bind state (read once: a garbled or unreadable state file counts as
 * empty here, preparation reports it), each selected NIC's address resolved. */
static int run_scan(run_ctx *ctx, run_node *ret)
{
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        const config *c = live_config(ctx);
        run_node n = { 0 };
        char err[256];

        if (!st)
                return -ENOMEM;
        int r = inventory_scan(&ctx->h, &n.inv);
        if (r < 0)
                return r;
        bool have = bind_state_load(&ctx->h, st, err, sizeof(err)) >= 0;
        r = selection_new(c, n.inv, have ? st : NULL, &n.sel);
        if (r < 0) {
                run_node_free(&n);
                return r;
        }
        if (ctx->addr && run_address_resolve(ctx->addr, c, have ? st : NULL, &n.sel, n.inv) < 0)
                log_error("NIC addresses: out of memory");
        /* the device map, once a scan, with the last one as its history */
        device_map map;
        r = device_map_build(&n.sel, ctx->map_forget ? NULL : &ctx->map, &map);
        if (r < 0) {
                run_node_free(&n);
                return r;
        }
        log_map_changes(ctx, ctx->map_forget ? NULL : &ctx->map, &map);
        device_map_free(&ctx->map);
        ctx->map = map;
        ctx->map_forget = false;
        n.map = &ctx->map;
        *ret = n;
        return 0;
}

static void on_address_changed(void *ud)
{
        debounce(ud, "NIC address lookup");
}

static void rescan(run_ctx *ctx)
{
        _cleanup_(run_node_free) run_node node = { 0 };
        int r = run_scan(ctx, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(services); i++)
                if (services[i].rescan)
                        services[i].rescan(ctx, &node);
}

/* The one rebuild path (SIGHUP, a changed config file, a kubelet restart): every service's reload under the
 * live config, then one fresh scan that the services torn down start on and the others
 * re-scan. A service that fails to start is down until the next rebuild (logged; the
 * readiness probe follows the device plugins' registration). */
static int on_rebuild(loop *l, void *ud)
{
        run_ctx *ctx = ud;
        bool restart[ELEMENTSOF(services)] = { false };
        _cleanup_(run_node_free) run_node node = { 0 };
        (void)l;

        if (ctx->stopping)
                return 0;
        log_info("rebuild (%s)", ctx->rebuild_why ? ctx->rebuild_why : "config");
        ctx->rebuild_why = NULL;
        for (size_t i = 0; i < ELEMENTSOF(services); i++)
                restart[i] = services[i].reload && services[i].reload(ctx) > 0;
        int r = run_scan(ctx, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(services); i++) {
                if (!restart[i]) {
                        if (services[i].rescan)
                                services[i].rescan(ctx, &node);
                } else if (services[i].start(ctx, &node) < 0) {
                        log_error("service %s failed to start; down until the next rebuild (config change, "
                                  "SIGHUP, self-check)",
                                  services[i].name);
                        services[i].stop(ctx);
                }
        }
        return 0;
}

/* Arm the one-shot timer fd in ms unless stopping; *slot keeps the first reason given
 * until the timer runs (for the log). */
static void arm_event(run_ctx *ctx, int fd, const char **slot, const char *why, unsigned ms)
{
        if (ctx->stopping)
                return;
        if (!*slot)
                *slot = why;
        (void)loop_timer_set(ctx->l, fd, ms, 0);
}

static void rebuild_soon(run_ctx *ctx, const char *why)
{
        arm_event(ctx, ctx->rebuild_fd, &ctx->rebuild_why, why, 1);
}

/* The device plugins saw the kubelet restart (DP_EVENT_KUBELET_RESTART, reported inside
 * the engine: the rebuild runs later, from the timer). Restarts while a rebuild is
 * pending join it; the next one waits out RUN_KUBELET_HOLDOFF_MS since the last. */
static void kubelet_restarted(run_ctx *ctx)
{
        if (ctx->stopping)
                return;
        ctx->rebuild_dp = true;
        if (ctx->rebuild_why) /* one is pending: it tears the plugins down too */
                return;
        uint64_t now = loop_now_ms(), at = now + RUN_KUBELET_REBUILD_MS;
        if (ctx->kubelet_rebuild_ms && ctx->kubelet_rebuild_ms + RUN_KUBELET_HOLDOFF_MS > at)
                at = ctx->kubelet_rebuild_ms + RUN_KUBELET_HOLDOFF_MS;
        ctx->kubelet_rebuild_ms = at;
        arm_event(ctx, ctx->rebuild_fd, &ctx->rebuild_why, "kubelet restart", (unsigned)(at - now));
}

static int on_rescan_timer(loop *l, void *ud)
{
        run_ctx *ctx = ud;
        (void)l;
        if (ctx->stopping)
                return 0;
        log_debug("re-scan (every %u ms)", ctx->rescan_ms);
        rescan(ctx);
        /* Give back heap a burst of calls left free (glibc keeps it otherwise). */
        (void)malloc_trim(0);
        return 0;
}

static int on_debounce(loop *l, void *ud)
{
        run_ctx *ctx = ud;
        (void)l;
        if (ctx->stopping)
                return 0;
        char why[256];
        size_t len = 0;
        why[0] = '\0';
        for (unsigned i = 0; i < ctx->n_debounce_why && len < sizeof(why); i++) {
                int n = snprintf(why + len, sizeof(why) - len, "%s%s", i ? ", " : "", ctx->debounce_why[i]);
                if (n < 0)
                        break;
                len += (size_t)n;
        }
        log_debug("re-scan (%s)", ctx->n_debounce_why ? why : "start");
        ctx->n_debounce_why = 0;
        rescan(ctx);
        return 0;
}

static void debounce(run_ctx *ctx, const char *why)
{
        if (ctx->stopping)
                return;
        bool known = false;
        for (unsigned i = 0; i < ctx->n_debounce_why; i++)
                known = known || strcmp(ctx->debounce_why[i], why) == 0;
        if (!known && ctx->n_debounce_why < sizeof(ctx->debounce_why) / sizeof(ctx->debounce_why[0]))
                ctx->debounce_why[ctx->n_debounce_why++] = why;
        (void)loop_timer_set(ctx->l, ctx->debounce_fd, RUN_DEBOUNCE_MS, 0);
}

/* Any event under the watched device nodes and sysfs attributes (an overflow too): one
 * debounced re-scan when the round's events are read (ev NULL). */
static int on_watch(loop *l, const struct inotify_event *ev, void *ud)
{
        (void)l;
        if (!ev)
                debounce(ud, "inotify");
        return 0;
}

/* Kernel uevents: only datagrams from the kernel (port 0) are trusted; a lost burst
 * (ENOBUFS) re-scans too. */
static int on_uevent(loop *l, int fd, uint32_t events, void *ud)
{
        run_ctx *ctx = ud;
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
                                debounce(ctx, "uevents lost (receive buffer overrun)");
                                continue;
                        }
                        break;
                }
                if (mh.msg_namelen != sizeof(src) || src.nl_pid != 0 || (mh.msg_flags & MSG_TRUNC))
                        continue;
                if (dp_uevent_parse(buf, (size_t)n, &ev) < 0 || !dp_uevent_relevant(&ev))
                        continue;
                log_debug("uevent %s %s (%s)", ev.action, ev.devpath, ev.subsystem);
                debounce(ctx, "uevent");
        }
        return 0;
}

/* Kernel uevents describe the live host: listen only when the root is the host's own
 * (the real root, or e.g. /host with the host's sysfs and procfs mounted). The hidden
 * SPINLANE_UEVENTS=1/0 forces it on/off (tests under a fake root). */
static bool uevents_wanted(const run_ctx *ctx)
{
        const char *force = getenv("SPINLANE_UEVENTS");
        char p[PATH_MAX];
        struct statfs sf;

        if (force && *force)
                return strcmp(force, "0") != 0;
        if (hostfs_is_real_root(&ctx->h))
                return true;
        if (hostfs_path(&ctx->h, "/sys", p, sizeof(p)) < 0 || statfs(p, &sf) < 0 || sf.f_type != SYSFS_MAGIC)
                return false;
        if (hostfs_path(&ctx->h, "/proc", p, sizeof(p)) < 0 || statfs(p, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
                return false;
        return true;
}

/* SPINLANE_RESCAN_MS (hidden, for tests and benchmarks): the safety re-scan period. */
static unsigned rescan_period(bool uevents)
{
        char why[160];
        uint64_t v;
        if (envknob_u64("SPINLANE_RESCAN_MS", 50, 3600000, uevents ? RUN_RESCAN_UEVENT_MS : RUN_RESCAN_FAKE_MS, &v,
                        why, sizeof(why)) < 0)
                log_warn("%s, ignored", why);
        return (unsigned)v;
}

/* Watch where device health shows first; missing dirs are skipped (the timer covers them). */
static void add_watches(run_ctx *ctx)
{
        static const char *const dirs[] = {
                "/dev", "/dev/vfio", "/dev/infiniband", "/sys/devices/system/cpu", "/sys/bus/pci/drivers/vfio-pci",
        };
        char p[PATH_MAX];
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (hostfs_path(&ctx->h, dirs[i], p, sizeof(p)) >= 0)
                        (void)inotify_add_watch(ctx->ifd, p,
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
static void stop_done(run_ctx *ctx)
{
        if (ctx->stop_wait > 0 && --ctx->stop_wait == 0)
                loop_exit(ctx->l, 0);
}

static void slices_deleted(void *ud)
{
        stop_done(ud);
}

static int on_signal(loop *l, int signo, void *ud)
{
        run_ctx *ctx = ud;
        if (signo == SIGHUP && ctx->stopping) { /* no reload or node preparation during shutdown */
                log_info("SIGHUP while stopping: ignored");
                return 0;
        }
        if (signo == SIGHUP) {
                log_info("SIGHUP: reloading");
                /* node preparation re-reads and re-applies the config; the rest follows in
                 * the rebuild */
                if (ctx->prep)
                        (void)prep_daemon_reload(ctx->prep, true);
                rebuild_soon(ctx, "SIGHUP");
                return 0;
        }
        if (ctx->stopping)
                return 0;
        log_info("%s: stopping", strsignal(signo));
        ctx->stopping = true;
        /* from now on SIGHUP neither reloads nor, once the loop is gone and the signals
         * are unblocked again, kills the agent with its default action */
        signal(SIGHUP, SIG_IGN);
        (void)loop_add_timer(l, RUN_STOP_TIMEOUT_MS, 0, on_stop_timeout, ctx, NULL);
        /* the loop ends when the plugins have stopped (DP_EVENT_STOPPED) and the
         * ResourceSlice's DELETE is answered, or at the stop timeout */
        ctx->stop_wait = 1;
        if (ctx->slices && run_slices_stop(ctx->slices, slices_deleted, ctx) > 0)
                ctx->stop_wait++;
        if (ctx->dp) {
                ctx->stop_wait++;
                dp_engine_stop(ctx->dp);
        }
        stop_done(ctx);
        return 0;
}

/* ---- the self-check of the agent's gRPC servers ---- */

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
        run_ctx *ctx = arg;
        grpc_init();
        for (size_t i = 0; i < ctx->sc_n; i++)
                ctx->sc[i].ok = selfcheck_one(ctx->sc[i].target, ctx->sc[i].method, ctx->sc[i].why,
                                              sizeof(ctx->sc[i].why));
        grpc_shutdown();
        uint64_t one = 1;
        (void)!write(ctx->sc_efd, &one, sizeof(one));
        return NULL;
}

static void selfcheck_add(run_ctx *ctx, const char *path, const char *method, const char *what)
{
        char p[PATH_MAX];
        if (ctx->sc_n >= RUN_SELFCHECK_MAX || hostfs_path(&ctx->h, path, p, sizeof(p)) < 0)
                return;
        snprintf(ctx->sc[ctx->sc_n].target, sizeof(ctx->sc[0].target), "unix:%s", p);
        ctx->sc[ctx->sc_n].method = method;
        ctx->sc[ctx->sc_n].what = what;
        ctx->sc[ctx->sc_n].ok = false;
        ctx->sc[ctx->sc_n].why[0] = '\0';
        ctx->sc_n++;
}

/* A failed check (or a server that should serve and does not): /healthz fails with why,
 * said once per change, and the rebuild tears the server down and builds it again. */
static void selfcheck_failed(run_ctx *ctx, bool dp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void selfcheck_failed(run_ctx *ctx, bool dp, const char *fmt, ...)
{
        char why[sizeof(ctx->health)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (strcmp(why, ctx->health) != 0)
                log_error("self-check: %s; /healthz fails until a check passes; rebuilding", why);
        snprintf(ctx->health, sizeof(ctx->health), "%s", why);
        if (dp)
                ctx->rebuild_dp = true;
        else
                ctx->rebuild_dra = true;
        rebuild_soon(ctx, "self-check failed");
}

/* The timer: every SPINLANE_SELFCHECK_MS a round, unless one still runs. A server that
 * should serve and is gone (a rebuild failed to start it) fails at once. */
static int on_selfcheck(loop *l, void *ud)
{
        run_ctx *ctx = ud;
        bool want_dp = !ctx->dra.nic || !ctx->dra.core, want_dra = ctx->dra.nic || ctx->dra.core;
        (void)l;
        if (ctx->stopping || ctx->sc_running)
                return 0;
        if (want_dp && !ctx->dp) {
                selfcheck_failed(ctx, true, "the device plugins are not running");
                return 0;
        }
        if (want_dra && !ctx->kplugin) {
                selfcheck_failed(ctx, false, "the DRA kubelet plugin is not running");
                return 0;
        }
        ctx->sc_n = 0;
        char p[64];
        if (ctx->nic_plugin) {
                snprintf(p, sizeof(p), "%s/spinlane-%s.sock", DP_KUBELET_DIR, device_kind_resource(DEVICE_NIC));
                selfcheck_add(ctx, p, "/v1beta1.DevicePlugin/GetDevicePluginOptions", "device plugin");
        }
        if (ctx->core_plugin) {
                char q[96];
                snprintf(q, sizeof(q), "%s/spinlane-%s.sock", DP_KUBELET_DIR, device_kind_resource(DEVICE_CORE));
                selfcheck_add(ctx, q, "/v1beta1.DevicePlugin/GetDevicePluginOptions", "device plugin");
        }
        if (ctx->kplugin)
                selfcheck_add(ctx, DRA_REGISTRY_SOCKET, "/pluginregistration.Registration/GetInfo", "DRA");
        if (!ctx->sc_n)
                return 0;
        int r = pthread_create(&ctx->sc_thread, NULL, selfcheck_main, ctx);
        if (r != 0) {
                selfcheck_failed(ctx, want_dp, "no thread for the check: %s", strerror(r));
                return 0;
        }
        ctx->sc_running = true;
        return 0;
}

/* A round ended: the thread joined, each result acted on. */
static int on_selfcheck_done(loop *l, int fd, uint32_t events, void *ud)
{
        run_ctx *ctx = ud;
        uint64_t v;
        (void)l, (void)events;
        if (read(fd, &v, sizeof(v)) < 0 || !ctx->sc_running)
                return 0;
        pthread_join(ctx->sc_thread, NULL);
        ctx->sc_running = false;
        for (size_t i = 0; i < ctx->sc_n; i++)
                if (!ctx->sc[i].ok) {
                        selfcheck_failed(ctx, strcmp(ctx->sc[i].what, "DRA") != 0, "%s socket %s: %s",
                                         ctx->sc[i].what, ctx->sc[i].target + 5, ctx->sc[i].why);
                        return 0;
                }
        if (ctx->health[0] && !ctx->rebuild_why) {
                log_info("self-check: every gRPC server answers again; /healthz passes");
                ctx->health[0] = '\0';
        }
        return 0;
}

static unsigned selfcheck_period(void)
{
        char why[160];
        uint64_t v;
        if (envknob_u64("SPINLANE_SELFCHECK_MS", 1000, 600000, RUN_SELFCHECK_MS, &v, why, sizeof(why)) < 0)
                log_warn("%s, ignored", why);
        return (unsigned)v;
}

/* The loop and its sources: signals, the re-scan, debounce and rebuild timers, kernel
 * uevents (when wanted), the inotify watches, the NIC address service. Logged. */
static int loop_setup(run_ctx *ctx)
{
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
        bool uevents = uevents_wanted(ctx);
        int r;

        if (uevents) {
                ctx->nlfd = netlink_subscribe(SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, 1 /* the kernel's broadcast */);
                if (ctx->nlfd < 0) {
                        log_errno(LOG_WARN, ctx->nlfd, "kernel uevents (netlink) unavailable; re-scanning more often");
                        uevents = false;
                }
        }
        ctx->rescan_ms = rescan_period(uevents);
        r = loop_new(&ctx->l);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "event loop");
        if ((r = loop_add_signals(ctx->l, sigs, ELEMENTSOF(sigs), on_signal, ctx)) < 0 ||
            (r = loop_add_timer(ctx->l, ctx->rescan_ms, ctx->rescan_ms, on_rescan_timer, ctx, NULL)) < 0 ||
            (r = loop_add_timer(ctx->l, 0, 0, on_debounce, ctx, &ctx->debounce_fd)) < 0 ||
            (r = loop_add_timer(ctx->l, 0, 0, on_rebuild, ctx, &ctx->rebuild_fd)) < 0 ||
            (r = loop_timer_set(ctx->l, ctx->rebuild_fd, 0, 0)) < 0 || /* armed by rebuild_soon only */
            (ctx->nlfd >= 0 && (r = loop_add_fd(ctx->l, ctx->nlfd, EPOLLIN, on_uevent, ctx)) < 0))
                return log_errno(LOG_ERROR, r, "event loop setup");
        ctx->sc_ms = selfcheck_period();
        ctx->sc_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (ctx->sc_efd < 0)
                return log_errno(LOG_ERROR, -errno, "eventfd");
        if ((r = loop_add_fd(ctx->l, ctx->sc_efd, EPOLLIN, on_selfcheck_done, ctx)) < 0 ||
            (r = loop_add_timer(ctx->l, ctx->sc_ms, ctx->sc_ms, on_selfcheck, ctx, NULL)) < 0)
                return log_errno(LOG_ERROR, r, "event loop setup");
        ctx->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (ctx->ifd >= 0) {
                add_watches(ctx);
                (void)loop_add_inotify(ctx->l, ctx->ifd, on_watch, ctx);
        }
        if ((r = run_address_new(ctx->l, on_address_changed, ctx, &ctx->addr)) < 0)
                return log_errno(LOG_ERROR, r, "NIC address service");
        return 0;
}

/* The services started (the first `started` of the table) stopped in reverse, then the
 * loop's sources and the loop. */
static void teardown(run_ctx *ctx, size_t started)
{
        while (started > 0) {
                started--;
                if (services[started].stop)
                        services[started].stop(ctx);
        }
        if (ctx->ifd >= 0) {
                if (ctx->l)
                        (void)loop_remove_fd(ctx->l, ctx->ifd);
                close(ctx->ifd);
        }
        if (ctx->nlfd >= 0) {
                if (ctx->l)
                        (void)loop_remove_fd(ctx->l, ctx->nlfd);
                close(ctx->nlfd);
        }
        if (ctx->sc_running) { /* at most the call's deadline */
                pthread_join(ctx->sc_thread, NULL);
                ctx->sc_running = false;
        }
        if (ctx->sc_efd >= 0) {
                if (ctx->l)
                        (void)loop_remove_fd(ctx->l, ctx->sc_efd);
                close(ctx->sc_efd);
        }
        run_address_free(ctx->addr);
        device_map_free(&ctx->map);
        loop_free(ctx->l);
}

int cmd_run(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent run [--root DIR] [--config FILE] [--json] [--log-format human|json] [--once] "
                                    "[--kubeconfig FILE] [--metrics-bind-address HOST:PORT] "
                                    "[--health-probe-bind-address HOST:PORT] [--dra-resources nic,core]";
        run_ctx ctx = { .ifd = -1, .nlfd = -1, .debounce_fd = -1, .rebuild_fd = -1, .sc_efd = -1 };
        run_node node = { 0 };
        size_t started = 0;
        int r, rc = AGENT_EXIT_ERROR;

        /* options and --root as every subcommand (a bad --root is reported there) */
        r = agent_setup(argc, argv, usage, &ctx.opt, &ctx.h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (ctx.opt.dra_resources) {
                char err[160];
                if (dra_resources_parse(ctx.opt.dra_resources, &ctx.dra, err, sizeof(err)) < 0) {
                        agent_error(&ctx.opt, "run: --dra-resources: %s", err);
                        return AGENT_EXIT_ERROR;
                }
        }
        /* SPINLANE_DEBUG=1 (hidden): why each re-scan happened */
        log_setup(ctx.opt.log_json ? LOG_FORMAT_JSON : LOG_FORMAT_HUMAN,
                  getenv("SPINLANE_DEBUG") && *getenv("SPINLANE_DEBUG") == '1' ? LOG_DEBUG : LOG_INFO);
        signal(SIGPIPE, SIG_IGN);
        if (ctx.opt.once) /* prepare the node and exit: 0 ok, 1 a step failed, 2 error */
                return run_report_check(ctx.opt.kubeconfig, ctx.opt.metrics_bind, ctx.opt.probe_bind) < 0
                               ? AGENT_EXIT_ERROR
                               : prep_once(&ctx.h, ctx.opt.config, prep_scan_inventory, NULL, ctx.opt.json);
        /* the config, once (errors through the logger); node preparation watches it */
        if (prep_config_load(ctx.opt.config, &ctx.cfg, &ctx.cfg_from_file) < 0 ||
            run_report_check(ctx.opt.kubeconfig, ctx.opt.metrics_bind, ctx.opt.probe_bind) < 0)
                return AGENT_EXIT_ERROR;
        settings_load(&ctx.cfg, &ctx.set);
        if (loop_setup(&ctx) < 0)
                goto out;
        r = run_scan(&ctx, &node);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "inventory scan");
                goto out;
        }
        for (; started < ELEMENTSOF(services); started++) {
                r = services[started].start ? services[started].start(&ctx, &node) : 0;
                if (r < 0) {
                        log_error("service %s failed to start", services[started].name);
                        break;
                }
        }
        run_node_free(&node);
        if (started == ELEMENTSOF(services)) {
                log_info("running (re-scan on %s, and every %u ms)",
                         ctx.nlfd >= 0 ? "kernel uevents and inotify" : "inotify", ctx.rescan_ms);
                r = loop_run(ctx.l);
                rc = r < 0 ? AGENT_EXIT_ERROR : AGENT_EXIT_OK;
                if (r < 0)
                        log_errno(LOG_ERROR, r, "event loop");
        }
out:
        teardown(&ctx, started);
        if (rc == AGENT_EXIT_OK)
                log_info("stopped");
        return rc;
}
