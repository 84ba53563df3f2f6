/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's DRA services, with --dra-resources: the DRA kubelet plugin (agent/dra),
 * fed with the device map's listed devices every scan, and the node's ResourceSlices of
 * the map's Healthy devices (agent/dra/dra-publish.c), through cluster reporting's API
 * client. The DRA code is agent/dra's; this file only runs it.
 * Top-level code: logs. */
#include "run-daemon.h"

#include "cleanup.h"
#include "dra-plugin.h"
#include "dra-publish.h"
#include "dra-request.h"
#include "log.h"
#include "run-cluster.h"
#include "run-report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_dra {
        dra_plugin *kplugin;
        char cdi_dir[DP_PATH_LEN];    /* the spec dir the kubelet plugin was started with */
        bool restart;                 /* the pending rebuild restarts the kubelet plugin */
        dra_publish *slices;          /* the node's ResourceSlices (agent/dra/dra-publish.c) */
};

int run_dra_new(run_dra **ret)
{
        run_dra *r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

void run_dra_free(run_dra *r)
{
        free(r);
}

dra_plugin *const *run_dra_plugin(const run_daemon *d)
{
        return &d->dra_svc->kplugin;
}

void run_dra_restart_next(run_daemon *d)
{
        d->dra_svc->restart = true;
}

/* ---- service: the DRA kubelet plugin (agent/dra) ---- */

static void on_dra_registration(void *ud)
{
        run_daemon *d = ud;
        run_report_changed(d->report); /* readiness follows the DRA registration too */
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

/* The device map's listed devices, as the device plugins get them. */
static void dra_rescan(run_daemon *d, const run_node *node)
{
        device_list nics = { 0 }, cores = { 0 };
        dp_alloc_config cfg;

        if (!d->dra_svc->kplugin)
                return;
        run_dp_alloc_config(d, &cfg);
        if (device_map_list(node->map, DEVICE_NIC, &nics) < 0 || device_map_list(node->map, DEVICE_CORE, &cores) < 0 ||
            dra_plugin_set_devices(d->dra_svc->kplugin, &nics, &cores, &cfg) < 0)
                log_error("DRA: out of memory; the devices stay as they were");
        device_list_free(&nics);
        device_list_free(&cores);
}

/* After the report: ResourceClaims are read through its API client. Started once; a
 * rebuild gives it the new devices through its rescan. */
static int dra_start(run_daemon *d, const run_node *node)
{
        run_dra *s = d->dra_svc;
        if (!d->dra.nic && !d->dra.core)
                return 0;
        if (s->kplugin)
                return 0;
        dra_plugin_options o = { .l = d->l, .h = &d->h, .node = getenv("NODE_NAME"),
                                 .kube = run_report_kube(d->report), .cdi_dir = run_dp_cdi_dir(d),
                                 .nic = d->dra.nic, .core = d->dra.core, .log = on_dra_log,
                                 .registration_changed = on_dra_registration, .userdata = d };
        if (!o.kube)
                log_warn("DRA: no API server (cluster reporting is off): claims cannot be prepared");
        int r = dra_plugin_new(&o, &s->kplugin);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "DRA kubelet plugin");
        snprintf(s->cdi_dir, sizeof(s->cdi_dir), "%s", run_dp_cdi_dir(d));
        dra_rescan(d, node);
        return 0;
}

static void dra_stop(run_daemon *d)
{
        dra_plugin_free(d->dra_svc->kplugin);
        d->dra_svc->kplugin = NULL;
}

/* The plugin keeps running across a rebuild (prepared claims stay where they are); a
 * changed CDI spec dir would split the claims' specs over two dirs: said, not followed. */
static int dra_reload(run_daemon *d)
{
        run_dra *s = d->dra_svc;
        if (s->restart) { /* its self-check failed: served again (the checkpoint keeps the claims) */
                s->restart = false;
                if (s->kplugin || d->dra.nic || d->dra.core) {
                        log_info("DRA: restarting the kubelet plugin");
                        dra_stop(d);
                        return 1;
                }
        }
        if (s->kplugin && strcmp(s->cdi_dir, run_dp_cdi_dir(d)) != 0)
                log_warn("DRA: cdi.spec_dir is now %s; the DRA plugin keeps writing claim specs under %s until the "
                         "agent restarts, ignoring",
                         run_dp_cdi_dir(d), s->cdi_dir);
        return 0;
}

const run_service run_service_dra = { "dra", { "report", "device-plugins" }, dra_start, dra_rescan, dra_reload,
                                      dra_stop };

/* ---- service: the node's ResourceSlices for DRA (agent/dra/dra-publish.c) ---- */

/* The device map's Healthy devices of the DRA resources, as they are. */
static void slices_rescan(run_daemon *d, const run_node *node)
{
        dra_publish_rescan(d->dra_svc->slices, node->map);
}

static int slices_start(run_daemon *d, const run_node *node)
{
        if (!d->dra.nic && !d->dra.core)
                return 0; /* no DRA: nothing published */
        run_cluster *c = run_report_cluster(d->report);
        if (!c) {
                log_warn("ResourceSlice off: cluster reporting is off (see above), and the slice goes through its API "
                         "client; DRA claims cannot be allocated on this node");
                return 0;
        }
        int r = dra_publish_new(d->l, run_cluster_kube(c), run_cluster_node(c), d->dra, &d->dra_svc->slices);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "ResourceSlice for Node %s", run_cluster_node(c));
        slices_rescan(d, node);
        return 0;
}

static void slices_stop(run_daemon *d)
{
        dra_publish_free(d->dra_svc->slices);
        d->dra_svc->slices = NULL;
}

static void slices_deleted(void *ud)
{
        run_stop_done(ud);
}

bool run_dra_stop_slices(run_daemon *d)
{
        if (!d->dra_svc->slices || dra_publish_stop(d->dra_svc->slices, slices_deleted, d) <= 0)
                return false;
        return true;
}

const run_service run_service_slices = { "dra-slices", { "report" }, slices_start, slices_rescan, NULL, slices_stop };
