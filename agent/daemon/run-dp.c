/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's device plugins service: the kubelet device plugins (deviceplugin/, one
 * engine, a plugin per resource not served through DRA) fed with the device map's listed
 * devices as they are every scan, their CDI spec, their events (a kubelet restart is the
 * rebuild), and their rebuild: torn down and started again when what they are built with
 * changed (resource prefix, hugetlbfs, CDI) or the kubelet restarted, with their counters
 * carried over. Top-level code: logs. */
#include "run-daemon.h"

#include "dp-cdi.h"
#include "dp-server.h"
#include "log.h"
#include "run-report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct run_dp {
        run_settings set;             /* what the device plugins run with */
        dp_engine *engine;
        dp_plugin *plugin[DEVICE_KINDS]; /* NULL: served through DRA, or down */
        bool listed;
        device_list lists[DEVICE_KINDS]; /* last advertised (the map's listed devices) */
        bool rebuild;                 /* the pending rebuild tears the plugins down even with
                                         the same settings (a kubelet restart, the self-check) */
        /* the counters of the plugins a rebuild tore down, for the new ones of the same
         * resource names (the metrics stay monotonic) */
        bool carry;
        char carry_prefix[64];
        dp_plugin_stats carry_stats[DEVICE_KINDS];
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

int run_dp_new(const config *c, run_dp **ret)
{
        run_dp *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        settings_load(c, &p->set);
        *ret = p;
        return 0;
}

void run_dp_free(run_dp *p)
{
        if (!p)
                return;
        for (int k = 0; k < DEVICE_KINDS; k++)
                device_list_free(&p->lists[k]);
        free(p);
}

const char *run_dp_prefix(const run_daemon *d)
{
        return d->dp->set.prefix;
}

const char *run_dp_cdi_dir(const run_daemon *d)
{
        return d->dp->set.cdi_dir;
}

bool run_dp_running(const run_daemon *d)
{
        return d->dp->engine != NULL;
}

bool run_dp_has_plugin(const run_daemon *d, device_kind k)
{
        return d->dp->plugin[k] != NULL;
}

void run_dp_rebuild_next(run_daemon *d)
{
        d->dp->rebuild = true;
}

const device_list *run_dp_list(const run_daemon *d, device_kind k)
{
        return &d->dp->lists[k];
}

dp_plugin *const *run_dp_plugin(const run_daemon *d, device_kind k)
{
        return &d->dp->plugin[k];
}

void run_dp_alloc_config(const run_daemon *d, dp_alloc_config *cfg)
{
        const run_settings *s = &d->dp->set;
        dp_alloc_config_default(cfg);
        snprintf(cfg->prefix, sizeof(cfg->prefix), "%s", s->prefix);
        snprintf(cfg->hugepage_host_dir, sizeof(cfg->hugepage_host_dir), "%s", s->hugetlbfs);
        snprintf(cfg->hugepage_container_dir, sizeof(cfg->hugepage_container_dir), "%s", s->hugetlbfs);
        cfg->cdi = s->cdi;
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
                        log_info("%s: device %s is now %s", resource, d->id,
                                 device_healthy(d) ? "Healthy" : "Unhealthy");
        }
        log_info("%s: %zu devices, %zu healthy", resource, now->n, healthy);
}

/* The CDI spec of the NIC resource under the plugins' settings (dp-cdi.c). */
static int cdi_write(run_daemon *d, const device_list *nics)
{
        const run_settings *s = &d->dp->set;
        char kind[128];
        device_kind_full(DEVICE_NIC, s->prefix, kind, sizeof(kind));
        return dp_cdi_write(&d->h, s->cdi_dir, kind, s->hugetlbfs, nics);
}

/* The CDI spec of the settings s, removed (a rebuild moved it or turned CDI off, or the
 * agent stops). */
static void cdi_remove(run_daemon *d, const run_settings *s)
{
        char kind[128];
        device_kind_full(DEVICE_NIC, s->prefix, kind, sizeof(kind));
        int r = dp_cdi_remove(&d->h, s->cdi_dir, kind);
        if (r < 0)
                log_errno(LOG_WARN, r, "CDI spec %s under %s: removing it", kind, s->cdi_dir);
}

static void dp_rescan(run_daemon *d, const run_node *node)
{
        run_dp *p = d->dp;
        device_list lists[DEVICE_KINDS] = { 0 };
        dp_alloc_config cfg;
        uint64_t numa = 0;
        char res[128];

        if (!p->engine)
                return;
        /* the map's listed devices, as they are (device-map.c kept what a vanished or
         * unbound one keeps) */
        for (int k = 0; k < DEVICE_KINDS; k++)
                if (device_map_list(node->map, (device_kind)k, &lists[k]) < 0) {
                        for (int j = 0; j < k; j++)
                                device_list_free(&lists[j]);
                        log_error("device plugins: out of memory; the devices stay as they were");
                        return;
                }
        const device_list *nics = &lists[DEVICE_NIC];
        for (size_t i = 0; i < nics->n; i++)
                if (device_healthy(&nics->items[i]) && nics->items[i].numa_node >= 0 && nics->items[i].numa_node < 64)
                        numa |= 1ULL << nics->items[i].numa_node;
        run_dp_alloc_config(d, &cfg);
        if (p->plugin[DEVICE_NIC])
                dp_plugin_set_config(p->plugin[DEVICE_NIC], &cfg);
        cfg.numa_with_nics = numa; /* the cores' preferred allocation follows the NICs */
        if (p->plugin[DEVICE_CORE])
                dp_plugin_set_config(p->plugin[DEVICE_CORE], &cfg);
        for (int k = 0; k < DEVICE_KINDS; k++) {
                dp_plugin *pl = p->plugin[k];
                if (!(pl ? dp_plugin_set_devices(pl, &lists[k]) > 0 : !device_list_equal(&p->lists[k], &lists[k])) &&
                    p->listed)
                        continue;
                device_kind_full((device_kind)k, p->set.prefix, res, sizeof(res));
                log_changes(res, &p->lists[k], &lists[k]);
                int r = k == DEVICE_NIC && p->set.cdi ? cdi_write(d, &lists[k]) : 0;
                if (r < 0)
                        log_errno(LOG_WARN, r, "CDI spec for %s under %s", res, p->set.cdi_dir);
        }
        p->listed = true;
        for (int k = 0; k < DEVICE_KINDS; k++) {
                device_list_free(&p->lists[k]);
                p->lists[k] = lists[k];
        }
}

static void on_dp_event(const dp_event *ev, void *ud)
{
        run_daemon *d = ud;
        switch (ev->type) {
        case DP_EVENT_SERVING:
        case DP_EVENT_REGISTERED:
        case DP_EVENT_RESTART:
                log_info("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_SERVE_FAILED:
                log_error("%s: %s; retrying", ev->resource, ev->message);
                break;
        case DP_EVENT_WAITING:
                log_info("device plugins: %s", ev->message);
                break;
        case DP_EVENT_REGISTER_FAILED:
                log_warn("%s: Register with the kubelet failed (status %d): \"%s\"; retrying in %u ms", ev->resource,
                         ev->code, ev->message, ev->retry_ms);
                break;
        case DP_EVENT_KUBELET_RESTART:
                log_info("device plugins: %s", ev->message);
                run_kubelet_restarted(d);
                break;
        case DP_EVENT_REFUSED:
                log_warn("%s: request refused (status %d): %s", ev->resource, ev->code, ev->message);
                break;
        case DP_EVENT_REFUSALS_UNREPORTED:
                log_warn("%s: %s", ev->resource, ev->message);
                break;
        case DP_EVENT_STOPPED:
                log_info("%s", ev->message);
                if (d->stopping) /* not when a rebuild tears them down */
                        run_stop_done(d);
                break;
        case DP_EVENT_TEARDOWN_UNFINISHED:
                log_warn("device plugins: %s", ev->message);
                break;
        }
        if (ev->type == DP_EVENT_REGISTERED || ev->type == DP_EVENT_RESTART || ev->type == DP_EVENT_REGISTER_FAILED ||
            ev->type == DP_EVENT_KUBELET_RESTART)
                run_report_changed(d->report); /* readiness follows registration */
}

static int dp_start(run_daemon *d, const run_node *node)
{
        run_dp *p = d->dp;
        bool dra[DEVICE_KINDS] = { [DEVICE_NIC] = d->dra.nic, [DEVICE_CORE] = d->dra.core };
        dp_alloc_config cfg;
        char res[128], sock[96];
        int r;

        run_report_changed(d->report); /* readiness follows the plugins (NULL at start) */
        run_dp_alloc_config(d, &cfg);
        r = dp_engine_new(d->l, &d->h, on_dp_event, d, &p->engine);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "device plugin engine");
        /* a resource served through DRA has no device plugin: nothing is granted twice */
        for (int k = 0; k < DEVICE_KINDS; k++) {
                if (dra[k])
                        continue;
                device_kind_full((device_kind)k, p->set.prefix, res, sizeof(res));
                snprintf(sock, sizeof(sock), "spinlane-%s.sock", device_kind_resource((device_kind)k));
                r = dp_engine_add_plugin(p->engine, (device_kind)k, res, sock, &cfg, &p->plugin[k]);
                if (r < 0)
                        return log_errno(LOG_ERROR, r, "device plugin %s", res);
        }
        if (p->carry && strcmp(p->carry_prefix, p->set.prefix) == 0)
                for (int k = 0; k < DEVICE_KINDS; k++)
                        if (p->plugin[k])
                                dp_plugin_carry_stats(p->plugin[k], &p->carry_stats[k]);
        p->carry = false;
        dp_rescan(d, node); /* the first list is ready before the kubelet can ask */
        r = dp_engine_start(p->engine);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "device plugin start");
        return 0;
}

/* Tear the device plugins down: for good (exit: dp_engine_free waits until gRPC has
 * finished), or for a rebuild (dp_engine_release: the next engine follows at once). */
static void dp_teardown(run_daemon *d, bool exiting)
{
        run_dp *p = d->dp;
        if (!exiting && (p->plugin[DEVICE_NIC] || p->plugin[DEVICE_CORE])) {
                for (int k = 0; k < DEVICE_KINDS; k++)
                        if (p->plugin[k])
                                dp_plugin_get_stats(p->plugin[k], &p->carry_stats[k]);
                snprintf(p->carry_prefix, sizeof(p->carry_prefix), "%s", p->set.prefix);
                p->carry = true;
        }
        /* both wait for calls to be released; gRPC removes the sockets */
        if (exiting)
                dp_engine_free(p->engine);
        else
                dp_engine_release(p->engine);
        p->engine = NULL;
        p->listed = false;
        for (int k = 0; k < DEVICE_KINDS; k++) {
                p->plugin[k] = NULL;
                device_list_free(&p->lists[k]);
        }
        run_scan_forget(d); /* the next plugins' kubelet was told nothing yet */
}

/* The exit: the plugins go (their sockets with them, so the kubelet drops the resources)
 * and so does the CDI spec, which would otherwise keep naming devices no agent serves;
 * the next agent writes it again at its first scan. */
static void dp_stop(run_daemon *d)
{
        dp_teardown(d, true);
        if (d->dp->set.cdi)
                cdi_remove(d, &d->dp->set);
}

/* The rebuild: device plugins built with other settings (resource prefix, hugetlbfs, CDI)
 * are torn down - their streams end and their sockets go, so the kubelet drops the old
 * resources - and started again (dp_start) under the new ones, which register. After a
 * kubelet restart they are torn down and started again under the same settings, which
 * register with the new kubelet. Otherwise the re-scan brings the new selection and core
 * pool to the same plugins. */
static int dp_reload(run_daemon *d)
{
        run_dp *p = d->dp;
        run_settings now;
        bool kubelet = p->rebuild;
        p->rebuild = false;
        settings_load(run_live_config(d), &now);
        if (p->engine && settings_equal(&now, &p->set) && !kubelet)
                return 0;
        run_settings old = p->set;
        log_info("device plugins: %s %s (resource prefix %s%s%s)", p->engine ? "rebuilding" : "starting",
                 kubelet && settings_equal(&now, &p->set) ? "for the new kubelet" : "under the new config",
                 now.prefix, now.cdi ? ", CDI spec dir " : ", no CDI", now.cdi ? now.cdi_dir : "");
        if (p->engine) {
                dp_teardown(d, false);
                if (kubelet) /* served again for the new kubelet */
                        for (int k = 0; k < DEVICE_KINDS; k++)
                                p->carry_stats[k].restarts++;
                if (old.cdi && (!now.cdi || strcmp(old.prefix, now.prefix) != 0 || strcmp(old.cdi_dir, now.cdi_dir) != 0))
                        cdi_remove(d, &old);
        }
        p->set = now;
        return 1;
}

const run_service run_service_dp = { "device-plugins", { "node-preparation" }, dp_start, dp_rescan, dp_reload,
                                     dp_stop };

void run_dp_stop_engine(run_daemon *d)
{
        dp_engine_stop(d->dp->engine);
}
