/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's report to the cluster and to Prometheus: one service of `run` that owns the
 * cluster reporting (run-cluster: Node labels, Events), the metrics and the probe
 * listeners (run-metrics, one each, each with its own connection budget) and the PodResources poll that names the pods holding the devices. It
 * reads the daemon's state through run_sources (pointers into the run loop's own context,
 * read on the loop thread only) and never changes it. Top-level code: logs. */
#ifndef SPIN_RUN_REPORT_H
#define SPIN_RUN_REPORT_H

#include "dp-server.h"
#include "hostfs.h"
#include "loop.h"
#include "prep-daemon.h"
#include "verdict.h"

#include <stdbool.h>

#define RUN_REPORT_BIND_DEFAULT "127.0.0.1:9470"        /* /metrics */
#define RUN_REPORT_PROBE_BIND_DEFAULT "127.0.0.1:9471"  /* /healthz, /readyz */
#define RUN_REPORT_PODRES_MS 10000       /* PodResources List period (SPINLANE_PODRES_MS) */
#define RUN_REPORT_PODRES_TIMEOUT_MS 5000
#define RUN_REPORT_BIND_RETRY_MS 10000   /* the metrics port taken: try again */

/* Where the state of the run loop lives; every pointer stays valid while the service runs. */
typedef struct run_sources {
        loop *l;
        const hostfs *h;
        const char *prefix;                     /* resource prefix, "spinlane.io" */
        const verdict_list *verdicts;
        const bool *have_verdicts;
        const device_list *nics, *cores;     /* what the device plugins advertise */
        dp_plugin *const *nic_plugin, *const *core_plugin;
        /* the DRA kubelet plugin and the resources it serves instead (NULL: none): its
         * registration counts as theirs for readiness */
        struct dra_plugin *const *dra;
        bool dra_nic, dra_core;
        prep_daemon *const *prep;               /* NULL inside: no node preparation */
        const char *health;                     /* "" or why /healthz fails (the gRPC self-check) */
        const char *kubeconfig;                 /* --kubeconfig, or NULL: in-cluster */
        const char *metrics_bind;               /* --metrics-bind-address, NULL: the default */
        const char *probe_bind;                 /* --health-probe-bind-address, NULL: the default */
} run_sources;

typedef struct run_report run_report;

/* Before anything starts: --metrics-bind-address and --health-probe-bind-address parse
 * and a named --kubeconfig is usable. The message (naming the option and the value or
 * field) goes to stderr; -EINVAL. */
int run_report_check(const char *kubeconfig, const char *metrics_bind, const char *probe_bind);

/* Start: cluster reporting (or the one line saying why it is off), the HTTP endpoints,
 * the PodResources poll. Only a named --kubeconfig that cannot be used fails it. */
int run_report_new(const run_sources *src, run_report **ret);
/* The verdicts, the device lists or a plugin's registration changed: the labels follow
 * (sent when they differ from the last ones given), and a change of the node's readiness
 * is logged, with why. Accepts NULL. */
void run_report_changed(run_report *r);
/* After a re-scan (SIGHUP, the periodic one, inotify, uevents): run_report_changed(),
 * and the Node is read again so that a label someone removed or edited is put back
 * (run_cluster_resync). Accepts NULL. */
void run_report_rescanned(run_report *r);
void run_report_free(run_report *r);
/* Its cluster reporting (run-cluster.h); NULL when that is off or r is NULL. */
struct run_cluster *run_report_cluster(run_report *r);

/* The API client of cluster reporting, for the other services' own calls (the DRA plugin
 * reads ResourceClaims): NULL when reporting is off. Owned by r; valid until
 * run_report_free. Accepts NULL. */
struct kube_client;
struct kube_client *run_report_kube(const run_report *r);

#endif
