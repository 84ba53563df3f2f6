/* SPDX-License-Identifier: Apache-2.0 */
/* The report service: labels and Events (run-cluster), /metrics and, on a listener of
 * their own, /healthz /readyz (run-metrics) and the PodResources poll (agent/podres), fed from the run loop's state.
 * The exposition text is rendered here, on the loop thread, at each scrape. Logs. */
#include "run-report.h"

#include "cleanup.h"
#include "envknob.h"
#include "kube-config.h"
#include "log.h"
#include "podres.h"
#include "report.h"
#include "run-cluster.h"
#include "run-metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One HTTP listener: /metrics, or the probes. */
typedef struct listener {
        const char *what;         /* "metrics", "probes" */
        const char *option;       /* its command-line option */
        const char *spec;         /* its value as given, or the default */
        report_bind bind;
        run_metrics *m;
        int bind_timer;
        char bind_error[256];     /* logged once per distinct failure */
        struct run_report *r;
} listener;

enum { LISTEN_METRICS, LISTEN_PROBES, _LISTEN_MAX };

struct run_report {
        run_sources s;
        listener listen[_LISTEN_MAX];
        run_cluster *cluster;
        podres_client *podres;
        podres_table holders;
        bool podres_up, podres_busy;
        char podres_error[PODRES_MSG_LEN];
        uint64_t podres_errors;
        unsigned podres_ms;
        int podres_timer;
        const char *pin_mode;     /* from the CPU manager checkpoint, NULL unknown */
        bool have_pin_mode;
        /* the node's readiness as last logged (one line per change) */
        bool logged, logged_ready;
        char logged_why[256];
};

/* ---- state ---- */

static void input_of(const run_report *r, report_input *ret)
{
        const run_sources *s = &r->s;
        *ret = (report_input){.verdicts = *s->have_verdicts ? s->verdicts : NULL,
                              .nics = s->nics,
                              .cores = s->cores,
                              .nic_registered = *s->nic_plugin && dp_plugin_registered(*s->nic_plugin),
                              .core_registered = *s->core_plugin && dp_plugin_registered(*s->core_plugin),
                              .pin_mode = r->pin_mode};
}

static void read_pin_mode(run_report *r)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        const char *mode = NULL;
        int k = hostfs_read_alloc(r->s.h, REPORT_CPU_MANAGER_STATE, REPORT_CPU_MANAGER_STATE_MAX, &text, &len);
        if (k >= 0 && report_pin_mode_parse(text, len, &mode) < 0) {
                if (!r->have_pin_mode || r->pin_mode)
                        log_warn("%s: not a CPU manager checkpoint; pin mode unknown", REPORT_CPU_MANAGER_STATE);
                mode = NULL;
        }
        r->pin_mode = mode;
        r->have_pin_mode = true;
}

/* ---- /readyz and /metrics ---- */

/* The probe fails only while a device plugin is not registered (a node whose checks fail
 * still serves what it has: its pod stays Ready, a DaemonSet rollout is not held up);
 * the answer then says why, and why the node is not ready (report_node_ready: the
 * spinlane.io/ready label) when that is another reason. */
static bool on_ready(void *ud, char *why, size_t len)
{
        run_report *r = ud;
        report_input in;
        char node[256];
        input_of(r, &in);
        bool node_ready = report_node_ready(&in, node, sizeof(node));
        if (in.nic_registered && in.core_registered) {
                /* the agent is ready (a failing check holds no rollout); the label says why not */
                if (!node_ready)
                        snprintf(why, len, "ok; %s=false: %s", REPORT_LABEL_READY, node);
                return true;
        }
        char plugin[96];
        snprintf(plugin, sizeof(plugin), "the %s device plugin is not registered with the kubelet",
                 !in.nic_registered ? "NIC" : "core");
        if (node_ready || strcmp(node, plugin) == 0)
                snprintf(why, len, "not ready: %s", plugin);
        else
                snprintf(why, len, "not ready: %s; %s=false: %s", plugin, REPORT_LABEL_READY, node);
        return false;
}

/* One line per change of the node's readiness (the spinlane.io/ready label), with why. */
static void log_readiness(run_report *r, const report_input *in)
{
        char why[sizeof(r->logged_why)];
        bool ready = report_node_ready(in, why, sizeof(why));
        if (r->logged && ready == r->logged_ready && strcmp(why, r->logged_why) == 0)
                return;
        if (ready)
                log_info("node ready (%s=true): no node check fails, both resources advertised", REPORT_LABEL_READY);
        else
                log_info("node not ready (%s=false): %s", REPORT_LABEL_READY, why);
        r->logged = true;
        r->logged_ready = ready;
        snprintf(r->logged_why, sizeof(r->logged_why), "%s", why);
}

typedef struct out {
        FILE *f;
} out;

static void family(out *o, const char *name, const char *type, const char *help)
{
        fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *esc(const char *s, char *buf, size_t len)
{
        report_prom_escape(s, buf, len);
        return buf;
}

static void render_devices(out *o, const run_report *r, const char *resource, const dp_device_list *l)
{
        char e1[256], e2[128], e3[300], e4[80], e5[80];
        for (size_t i = 0; l && i < l->n; i++) {
                const dp_device *d = &l->items[i];
                const podres_assignment *a = podres_find(&r->holders, resource, d->id);
                fprintf(o->f,
                        "spinlane_device_healthy{resource=\"%s\",device=\"%s\",numa_node=\"%d\",pod=\"%s\",namespace=\"%s\","
                        "container=\"%s\"} %d\n",
                        esc(resource, e1, sizeof(e1)), esc(d->id, e2, sizeof(e2)), d->numa_node,
                        esc(a ? a->pod : "", e3, sizeof(e3)), esc(a ? a->ns : "", e4, sizeof(e4)),
                        esc(a ? a->container : "", e5, sizeof(e5)), d->healthy ? 1 : 0);
        }
}

static int on_render(void *ud, char **ret, size_t *ret_len)
{
        run_report *r = ud;
        const run_sources *s = &r->s;
        char *buf = NULL, res[2][128], e1[256], why[256];
        size_t len = 0;
        const dp_device_list *lists[2] = {s->nics, s->cores};
        dp_plugin *plugins[2] = {*s->nic_plugin, *s->core_plugin};
        dp_plugin_stats ds[2];
        report_input in;
        out o;

        o.f = open_memstream(&buf, &len);
        if (!o.f)
                return -ENOMEM;
        snprintf(res[0], sizeof(res[0]), "%s/dpdk-nic", s->prefix);
        snprintf(res[1], sizeof(res[1]), "%s/isolated-core", s->prefix);
        for (int i = 0; i < 2; i++) {
                memset(&ds[i], 0, sizeof(ds[i]));
                if (plugins[i])
                        dp_plugin_get_stats(plugins[i], &ds[i]);
        }
        input_of(r, &in);

        family(&o, "spinlane_node_ready", "gauge",
               "1 when no node check fails and both resources are advertised (the spinlane.io/ready label)");
        fprintf(o.f, "spinlane_node_ready %d\n", report_node_ready(&in, why, sizeof(why)) ? 1 : 0);

        family(&o, "spinlane_node_check", "gauge", "Each node check's verdict: 1 for the one it has, 0 for the others");
        if (in.verdicts)
                for (size_t i = 0; i < in.verdicts->n; i++) {
                        const verdict *v = &in.verdicts->items[i];
                        for (int k = 0; k < _VERDICT_MAX; k++)
                                fprintf(o.f, "spinlane_node_check{check=\"%s\",verdict=\"%s\"} %d\n",
                                        esc(v->check, e1, sizeof(e1)), verdict_level_name((verdict_level)k),
                                        (int)v->level == k ? 1 : 0);
                }

        family(&o, "spinlane_devices", "gauge", "Devices advertised to the kubelet, per resource and health");
        for (int i = 0; i < 2; i++) {
                size_t h = 0, n = lists[i] ? lists[i]->n : 0;
                for (size_t k = 0; k < n; k++)
                        h += lists[i]->items[k].healthy;
                fprintf(o.f, "spinlane_devices{resource=\"%s\",health=\"healthy\"} %zu\n", esc(res[i], e1, sizeof(e1)), h);
                fprintf(o.f, "spinlane_devices{resource=\"%s\",health=\"unhealthy\"} %zu\n", e1, n - h);
        }
        family(&o, "spinlane_device_healthy", "gauge",
               "1 Healthy, 0 Unhealthy, per device; pod, namespace and container name its holder (kubelet "
               "PodResources), empty when none");
        for (int i = 0; i < 2; i++)
                render_devices(&o, r, res[i], lists[i]);
        family(&o, "spinlane_devices_allocated", "gauge", "Devices a container holds (kubelet PodResources)");
        for (int i = 0; i < 2; i++) {
                size_t n = 0;
                for (size_t k = 0; k < r->holders.n; k++)
                        n += strcmp(r->holders.items[k].resource, res[i]) == 0;
                fprintf(o.f, "spinlane_devices_allocated{resource=\"%s\"} %zu\n", esc(res[i], e1, sizeof(e1)), n);
        }
        family(&o, "spinlane_podresources_up", "gauge", "1 when the last kubelet PodResources List answered");
        fprintf(o.f, "spinlane_podresources_up %d\n", r->podres_up ? 1 : 0);
        family(&o, "spinlane_podresources_errors_total", "counter", "PodResources List calls that failed");
        fprintf(o.f, "spinlane_podresources_errors_total %llu\n", (unsigned long long)r->podres_errors);

        family(&o, "spinlane_device_plugin_registered", "gauge", "1 when the resource's plugin is registered with the kubelet");
        for (int i = 0; i < 2; i++)
                fprintf(o.f, "spinlane_device_plugin_registered{resource=\"%s\"} %d\n", esc(res[i], e1, sizeof(e1)),
                        plugins[i] && dp_plugin_registered(plugins[i]) ? 1 : 0);
        family(&o, "spinlane_allocations_total", "counter", "Allocate calls answered, by result (ok or refused)");
        for (int i = 0; i < 2; i++) {
                esc(res[i], e1, sizeof(e1));
                fprintf(o.f, "spinlane_allocations_total{resource=\"%s\",result=\"ok\"} %llu\n", e1,
                        (unsigned long long)ds[i].allocations);
                fprintf(o.f, "spinlane_allocations_total{resource=\"%s\",result=\"refused\"} %llu\n", e1,
                        (unsigned long long)ds[i].allocations_refused);
        }
        family(&o, "spinlane_allocate_duration_seconds", "histogram",
               "Time the device plugin takes to answer Allocate (request taken to answer handed to gRPC)");
        for (int i = 0; i < 2; i++) {
                uint64_t cum = 0;
                esc(res[i], e1, sizeof(e1));
                for (size_t b = 0; b < DP_ALLOC_BUCKETS; b++) {
                        cum += ds[i].alloc_bucket[b];
                        fprintf(o.f, "spinlane_allocate_duration_seconds_bucket{resource=\"%s\",le=\"%g\"} %llu\n", e1,
                                dp_alloc_bucket_us[b] / 1e6, (unsigned long long)cum);
                }
                fprintf(o.f, "spinlane_allocate_duration_seconds_bucket{resource=\"%s\",le=\"+Inf\"} %llu\n", e1,
                        (unsigned long long)ds[i].alloc_count);
                fprintf(o.f, "spinlane_allocate_duration_seconds_sum{resource=\"%s\"} %.9f\n", e1,
                        ds[i].alloc_sum_ns / 1e9);
                fprintf(o.f, "spinlane_allocate_duration_seconds_count{resource=\"%s\"} %llu\n", e1,
                        (unsigned long long)ds[i].alloc_count);
        }
        family(&o, "spinlane_kubelet_registrations_total", "counter",
               "Registrations the kubelet accepted (more than one: the plugin registered again, e.g. after a kubelet "
               "restart)");
        for (int i = 0; i < 2; i++)
                fprintf(o.f, "spinlane_kubelet_registrations_total{resource=\"%s\"} %llu\n", esc(res[i], e1, sizeof(e1)),
                        (unsigned long long)ds[i].registrations);
        family(&o, "spinlane_kubelet_register_failures_total", "counter", "Register calls that failed (retried with backoff)");
        for (int i = 0; i < 2; i++)
                fprintf(o.f, "spinlane_kubelet_register_failures_total{resource=\"%s\"} %llu\n",
                        esc(res[i], e1, sizeof(e1)), (unsigned long long)ds[i].register_failures);
        family(&o, "spinlane_device_plugin_restarts_total", "counter",
               "Times a plugin served again (its socket removed, the kubelet restarted)");
        for (int i = 0; i < 2; i++)
                fprintf(o.f, "spinlane_device_plugin_restarts_total{resource=\"%s\"} %llu\n", esc(res[i], e1, sizeof(e1)),
                        (unsigned long long)ds[i].restarts);

        prep_daemon_stats ps = {0};
        bool have_prep = s->prep && *s->prep;
        if (have_prep)
                ps = prep_daemon_get_stats(*s->prep);
        family(&o, "spinlane_preparations_total", "counter", "Node preparations run, by outcome (ok, or failed: a step failed)");
        fprintf(o.f, "spinlane_preparations_total{outcome=\"ok\"} %u\n", ps.applies - ps.applies_failed);
        fprintf(o.f, "spinlane_preparations_total{outcome=\"failed\"} %u\n", ps.applies_failed);
        family(&o, "spinlane_preparation_failed", "gauge", "1 when a step of the last node preparation failed");
        fprintf(o.f, "spinlane_preparation_failed %d\n", ps.last_exit ? 1 : 0);
        family(&o, "spinlane_config_reloads_total", "counter", "Config reloads, by result (accepted, or rejected: old kept)");
        fprintf(o.f, "spinlane_config_reloads_total{result=\"accepted\"} %u\n", ps.reloads);
        fprintf(o.f, "spinlane_config_reloads_total{result=\"rejected\"} %u\n", ps.reloads_rejected);
        family(&o, "spinlane_tuning_reapplied_total", "counter",
               "Kernel-path tuning re-applied after a NIC reset or an IRQ affinity drift");
        fprintf(o.f, "spinlane_tuning_reapplied_total %u\n", ps.retunes);
        family(&o, "spinlane_nic_resets_total", "counter", "NIC resets seen in link events");
        fprintf(o.f, "spinlane_nic_resets_total %u\n", ps.resets_seen);

        run_cluster_stats cs;
        run_cluster_get_stats(r->cluster, &cs);
        family(&o, "spinlane_cluster_reporting", "gauge", "1 when Node labels and Events are sent (NODE_NAME and an API server)");
        fprintf(o.f, "spinlane_cluster_reporting %d\n", r->cluster ? 1 : 0);
        family(&o, "spinlane_api_up", "gauge", "1 when the API server answered the last call (a refusal counts as an answer)");
        fprintf(o.f, "spinlane_api_up %d\n", cs.api_up ? 1 : 0);
        family(&o, "spinlane_node_labels_synced", "gauge", "1 when the Node carries the agent's labels as they are now");
        fprintf(o.f, "spinlane_node_labels_synced %d\n", cs.labels_synced ? 1 : 0);
        family(&o, "spinlane_api_requests_total", "counter", "Kubernetes API calls, by call");
        for (int k = 0; k < _RUN_CLUSTER_CALL_MAX; k++)
                fprintf(o.f, "spinlane_api_requests_total{call=\"%s\"} %llu\n", run_cluster_call_name((run_cluster_call)k),
                        (unsigned long long)cs.calls[k]);
        family(&o, "spinlane_api_errors_total", "counter", "Kubernetes API calls that failed, by call and error");
        for (int k = 0; k < _RUN_CLUSTER_CALL_MAX; k++)
                for (int e = 0; e < _RUN_CLUSTER_ERR_MAX; e++)
                        if (cs.errors[k][e])
                                fprintf(o.f, "spinlane_api_errors_total{call=\"%s\",error=\"%s\"} %llu\n",
                                        run_cluster_call_name((run_cluster_call)k), run_cluster_err_name((run_cluster_err)e),
                                        (unsigned long long)cs.errors[k][e]);
        family(&o, "spinlane_events_total", "counter", "Events raised on the Node by verdict changes, by type (before aggregation)");
        fprintf(o.f, "spinlane_events_total{type=\"Warning\"} %llu\n", (unsigned long long)cs.events_warning);
        fprintf(o.f, "spinlane_events_total{type=\"Normal\"} %llu\n", (unsigned long long)cs.events_normal);
        family(&o, "spinlane_events_held_total", "counter",
               "Event occurrences the rate limit held back (sent later as a series count)");
        fprintf(o.f, "spinlane_events_held_total %llu\n", (unsigned long long)cs.events_held);

        if (fclose(o.f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* ---- the HTTP listeners ---- */

static int on_bind_retry(loop *l, void *ud);

static void listener_start(listener *ls)
{
        char err[256];
        run_report *r = ls->r;
        run_metrics_ops ops = {.userdata = r};
        if (ls == &r->listen[LISTEN_METRICS]) {
                ops.render = on_render;
        } else {
                ops.ready = on_ready;
                ops.max_connections = ops.per_ip = RUN_METRICS_PROBE_CONNECTIONS;
        }
        int k = run_metrics_new(r->s.l, &ls->bind, &ops, &ls->m, err, sizeof(err));
        if (k >= 0) {
                log_info("%s on %s: %s (port %u)", ls->what, ls->spec,
                         ops.render ? "/metrics" : "/healthz, /readyz", run_metrics_port(ls->m));
                if (ops.render && !report_bind_is_loopback(&ls->bind))
                        log_warn("metrics: %s serves /metrics beyond this node, unauthenticated: allow only the "
                                 "scraper to reach it (docs/observability.md)", ls->spec);
                ls->bind_error[0] = '\0';
                return;
        }
        ls->m = NULL;
        if (strcmp(err, ls->bind_error) != 0) {
                log_error("%s: %s; trying again every %d s%s", ls->what, err, RUN_REPORT_BIND_RETRY_MS / 1000,
                          ops.ready ? " (the probes fail until then)" : "");
                snprintf(ls->bind_error, sizeof(ls->bind_error), "%s", err);
        }
        if (ls->bind_timer < 0)
                (void)loop_add_timer(r->s.l, RUN_REPORT_BIND_RETRY_MS, RUN_REPORT_BIND_RETRY_MS, on_bind_retry, ls,
                                     &ls->bind_timer);
}

static int on_bind_retry(loop *l, void *ud)
{
        listener *ls = ud;
        if (!ls->m)
                listener_start(ls);
        if (ls->m && ls->bind_timer >= 0) {
                (void)loop_remove_timer(l, ls->bind_timer);
                ls->bind_timer = -1;
        }
        return 0;
}

/* ---- PodResources ---- */

static void on_podres(int error, const char *message, const podres_table *t, void *ud)
{
        run_report *r = ud;
        r->podres_busy = false;
        if (error < 0) {
                r->podres_errors++;
                if (r->podres_up || strcmp(message, r->podres_error) != 0)
                        log_warn("PodResources: %s; metrics carry no pod labels until it answers (trying every %u ms)",
                                 message, r->podres_ms);
                snprintf(r->podres_error, sizeof(r->podres_error), "%s", message);
                r->podres_up = false;
                return;
        }
        if (!r->podres_up)
                log_info("PodResources: %s", message);
        r->podres_up = true;
        r->podres_error[0] = '\0';
        podres_table_free(&r->holders);
        podres_table copy = {0};
        if (t->n) {
                copy.items = malloc(t->n * sizeof(*copy.items));
                if (!copy.items) {
                        log_error("PodResources: out of memory");
                        return;
                }
                memcpy(copy.items, t->items, t->n * sizeof(*copy.items));
                copy.n = t->n;
        }
        copy.skipped = t->skipped;
        r->holders = copy;
}

static int on_podres_timer(loop *l, void *ud)
{
        run_report *r = ud;
        (void)l;
        if (r->podres && !r->podres_busy && podres_list(r->podres, r->s.prefix, RUN_REPORT_PODRES_TIMEOUT_MS, on_podres, r) >= 0)
                r->podres_busy = true;
        return 0;
}

static unsigned podres_period(void)
{
        char why[160];
        uint64_t v;
        /* hidden, for tests */
        if (envknob_u64("SPINLANE_PODRES_MS", 100, 3600000, RUN_REPORT_PODRES_MS, &v, why, sizeof(why)) < 0)
                log_warn("%s, ignored", why);
        return (unsigned)v;
}

/* ---- public ---- */

int run_report_check(const char *kubeconfig, const char *metrics_bind, const char *probe_bind)
{
        char err[KUBE_ERR_LEN];
        report_bind b;
        kube_config cfg = {0};

        if (report_bind_parse(metrics_bind ? metrics_bind : RUN_REPORT_BIND_DEFAULT, &b, err, sizeof(err)) < 0 ||
            report_bind_parse_named("--health-probe-bind-address", probe_bind ? probe_bind : RUN_REPORT_PROBE_BIND_DEFAULT,
                                    &b, err, sizeof(err)) < 0) {
                fprintf(stderr, "spinlane-agent run: %s\n", err);
                return -EINVAL;
        }
        if (kubeconfig) {
                int r = kube_config_load(kubeconfig, &cfg, err, sizeof(err));
                kube_config_clear(&cfg);
                if (r < 0) {
                        fprintf(stderr, "spinlane-agent run: --kubeconfig %s: %s\n", kubeconfig, *err ? err : strerror(-r));
                        return -EINVAL;
                }
        }
        return 0;
}

void run_report_changed(run_report *r)
{
        report_input in;
        report_labels labels;
        report_checks checks = {0};

        if (!r)
                return;
        read_pin_mode(r);
        input_of(r, &in);
        log_readiness(r, &in);
        if (!r->cluster)
                return;
        report_node_labels(&in, &labels);
        if (in.verdicts && report_checks_from(in.verdicts, &checks) < 0) {
                log_error("cluster reporting: out of memory");
                return;
        }
        run_cluster_update(r->cluster, &labels, in.verdicts ? &checks : NULL);
        report_checks_free(&checks);
}

void run_report_rescanned(run_report *r)
{
        if (!r)
                return;
        run_report_changed(r);
        run_cluster_resync(r->cluster);
}

int run_report_new(const run_sources *src, run_report **ret)
{
        char err[256], sock[PATH_MAX];
        run_report *r = calloc(1, sizeof(*r));
        int k;

        if (!r)
                return -ENOMEM;
        r->s = *src;
        r->podres_timer = -1;
        r->podres_ms = podres_period();
        r->listen[LISTEN_METRICS] = (listener){.what = "metrics", .option = "--metrics-bind-address",
                                               .spec = src->metrics_bind ? src->metrics_bind : RUN_REPORT_BIND_DEFAULT};
        r->listen[LISTEN_PROBES] = (listener){.what = "probes", .option = "--health-probe-bind-address",
                                              .spec = src->probe_bind ? src->probe_bind : RUN_REPORT_PROBE_BIND_DEFAULT};
        for (int i = 0; i < _LISTEN_MAX; i++) {
                listener *ls = &r->listen[i];
                ls->r = r;
                ls->bind_timer = -1;
                if (report_bind_parse_named(ls->option, ls->spec, &ls->bind, err, sizeof(err)) < 0) {
                        log_error("%s", err);
                        free(r);
                        return -EINVAL;
                }
        }
        k = run_cluster_new(src->l, src->kubeconfig, &r->cluster);
        if (k < 0) {
                free(r);
                return k;
        }
        for (int i = 0; i < _LISTEN_MAX; i++) {
                listener *ls = &r->listen[i];
                if (!ls->bind.off)
                        listener_start(ls);
                else if (i == LISTEN_METRICS)
                        log_info("metrics off (--metrics-bind-address 0): no /metrics");
                else
                        log_info("probes off (--health-probe-bind-address 0): no /healthz or /readyz");
        }
        if (hostfs_path(src->h, PODRES_SOCKET, sock, sizeof(sock)) >= 0 &&
            (k = podres_client_new(src->l, sock, &r->podres)) >= 0) {
                (void)loop_add_timer(src->l, 1, r->podres_ms, on_podres_timer, r, &r->podres_timer);
        } else {
                log_warn("PodResources: cannot start the client (%s); metrics carry no pod labels", strerror(k < 0 ? -k : ENAMETOOLONG));
                r->podres = NULL;
        }
        run_report_changed(r);
        *ret = r;
        return 0;
}

void run_report_free(run_report *r)
{
        if (!r)
                return;
        if (r->podres_timer >= 0)
                (void)loop_remove_timer(r->s.l, r->podres_timer);
        for (int i = 0; i < _LISTEN_MAX; i++) {
                if (r->listen[i].bind_timer >= 0)
                        (void)loop_remove_timer(r->s.l, r->listen[i].bind_timer);
                run_metrics_free(r->listen[i].m);
        }
        podres_client_free(r->podres);
        podres_table_free(&r->holders);
        run_cluster_free(r->cluster);
        free(r);
}
