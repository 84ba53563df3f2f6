/* SPDX-License-Identifier: Apache-2.0 */
/* The report service: labels and Events (run-cluster), /metrics and, on a listener of
 * their own, /healthz /readyz (run-metrics) and the PodResources poll (agent/podres), fed from the run loop's state.
 * The exposition text is rendered here, on the loop thread, at each scrape. Logs. */
#include "run-report.h"

#include "cleanup.h"
#include "kube-config.h"
#include "log.h"
#include "podres.h"
#include "report.h"
#include "dra-plugin.h"
#include "run-cluster.h"
#include "run-daemon.h"
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
                              .nic_registered = (*s->nic_plugin && dp_plugin_registered(*s->nic_plugin)) ||
                                                (s->dra_nic && s->dra && dra_plugin_registered(*s->dra)),
                              .core_registered = (*s->core_plugin && dp_plugin_registered(*s->core_plugin)) ||
                                                 (s->dra_core && s->dra && dra_plugin_registered(*s->dra)),
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

/* /healthz: fails while a gRPC server of the agent failed its self-check (cmd-run.c). */
static bool on_healthy(void *ud, char *why, size_t len)
{
        run_report *r = ud;
        if (!r->s.health || !r->s.health[0])
                return true;
        if (why && len)
                snprintf(why, len, "not healthy: %s", r->s.health);
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

static const char *esc(const char *s, char *buf, size_t len)
{
        report_prom_escape(s, buf, len);
        return buf;
}

/* What one scrape renders: read once, before the first line is written. */
typedef struct scrape {
        const run_report *r;
        report_input in;
        char res[2][128];     /* the two resources: <prefix>/dpdk-nic, <prefix>/isolated-core */
        char res_esc[2][256]; /* the same as label values */
        const device_list *lists[2];
        dp_plugin *plugins[2];
        dp_plugin_stats ds[2];
        prep_daemon_stats ps; /* zero without node preparation */
        run_cluster_stats cs;
} scrape;

static void scrape_take(const run_report *r, scrape *ret)
{
        const run_sources *s = &r->s;

        memset(ret, 0, sizeof(*ret));
        ret->r = r;
        input_of(r, &ret->in);
        device_kind_full(DEVICE_NIC, s->prefix, ret->res[0], sizeof(ret->res[0]));
        device_kind_full(DEVICE_CORE, s->prefix, ret->res[1], sizeof(ret->res[1]));
        ret->lists[0] = s->nics;
        ret->lists[1] = s->cores;
        ret->plugins[0] = *s->nic_plugin;
        ret->plugins[1] = *s->core_plugin;
        for (int i = 0; i < 2; i++) {
                esc(ret->res[i], ret->res_esc[i], sizeof(ret->res_esc[i]));
                if (ret->plugins[i])
                        dp_plugin_get_stats(ret->plugins[i], &ret->ds[i]);
        }
        if (s->prep && *s->prep)
                ret->ps = prep_daemon_get_stats(*s->prep);
        run_cluster_get_stats(r->cluster, &ret->cs);
}

/* One sample: NAME[LABELS] VALUE (labels "" or "{k=\"v\",...}"). */
static void sample(FILE *f, const char *name, const char *labels, unsigned long long v)
{
        fprintf(f, "%s%s %llu\n", name, labels, v);
}

/* One sample per resource: NAME{resource="R"} v[i]. */
static void per_resource(FILE *f, const char *name, const scrape *c, const uint64_t v[2])
{
        for (int i = 0; i < 2; i++)
                fprintf(f, "%s{resource=\"%s\"} %llu\n", name, c->res_esc[i], (unsigned long long)v[i]);
}

/* ---- the samples of each family, in the order of the table below ---- */

static void m_node_ready(FILE *f, const char *name, const scrape *c)
{
        char why[256];
        sample(f, name, "", report_node_ready(&c->in, why, sizeof(why)));
}

static void m_node_check(FILE *f, const char *name, const scrape *c)
{
        char e[256];
        for (size_t i = 0; c->in.verdicts && i < c->in.verdicts->n; i++) {
                const verdict *v = &c->in.verdicts->items[i];
                esc(v->check, e, sizeof(e));
                for (int k = 0; k < _VERDICT_MAX; k++)
                        fprintf(f, "%s{check=\"%s\",verdict=\"%s\"} %d\n", name, e, verdict_level_name((verdict_level)k),
                                (int)v->level == k ? 1 : 0);
        }
}

static void m_devices(FILE *f, const char *name, const scrape *c)
{
        for (int i = 0; i < 2; i++) {
                size_t h = 0, n = c->lists[i] ? c->lists[i]->n : 0;
                for (size_t k = 0; k < n; k++)
                        h += device_healthy(&c->lists[i]->items[k]);
                fprintf(f, "%s{resource=\"%s\",health=\"healthy\"} %zu\n", name, c->res_esc[i], h);
                fprintf(f, "%s{resource=\"%s\",health=\"unhealthy\"} %zu\n", name, c->res_esc[i], n - h);
        }
}

static void m_device_healthy(FILE *f, const char *name, const scrape *c)
{
        char e2[128], e3[300], e4[80], e5[80];
        for (int i = 0; i < 2; i++)
                for (size_t k = 0; c->lists[i] && k < c->lists[i]->n; k++) {
                        const device_entry *d = &c->lists[i]->items[k];
                        const podres_assignment *a = podres_find(&c->r->holders, c->res[i], d->id);
                        fprintf(f,
                                "%s{resource=\"%s\",device=\"%s\",numa_node=\"%d\",pod=\"%s\",namespace=\"%s\","
                                "container=\"%s\"} %d\n",
                                name, c->res_esc[i], esc(d->id, e2, sizeof(e2)), d->numa_node,
                                esc(a ? a->pod : "", e3, sizeof(e3)), esc(a ? a->ns : "", e4, sizeof(e4)),
                                esc(a ? a->container : "", e5, sizeof(e5)), device_healthy(d) ? 1 : 0);
                }
}

static void m_devices_allocated(FILE *f, const char *name, const scrape *c)
{
        uint64_t n[2] = {0, 0};
        for (int i = 0; i < 2; i++)
                for (size_t k = 0; k < c->r->holders.n; k++)
                        n[i] += strcmp(c->r->holders.items[k].resource, c->res[i]) == 0;
        per_resource(f, name, c, n);
}

static void m_podres_up(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->r->podres_up);
}

static void m_podres_errors(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->r->podres_errors);
}

static void m_plugin_registered(FILE *f, const char *name, const scrape *c)
{
        uint64_t v[2];
        for (int i = 0; i < 2; i++)
                v[i] = c->plugins[i] && dp_plugin_registered(c->plugins[i]);
        per_resource(f, name, c, v);
}

static void m_allocations(FILE *f, const char *name, const scrape *c)
{
        for (int i = 0; i < 2; i++) {
                fprintf(f, "%s{resource=\"%s\",result=\"ok\"} %llu\n", name, c->res_esc[i],
                        (unsigned long long)c->ds[i].allocations);
                fprintf(f, "%s{resource=\"%s\",result=\"refused\"} %llu\n", name, c->res_esc[i],
                        (unsigned long long)c->ds[i].allocations_refused);
        }
}

static void m_allocate_duration(FILE *f, const char *name, const scrape *c)
{
        for (int i = 0; i < 2; i++) {
                const dp_plugin_stats *d = &c->ds[i];
                const char *res = c->res_esc[i];
                uint64_t cum = 0;
                for (size_t b = 0; b < DP_ALLOC_BUCKETS; b++) {
                        cum += d->alloc_bucket[b];
                        fprintf(f, "%s_bucket{resource=\"%s\",le=\"%g\"} %llu\n", name, res, dp_alloc_bucket_us[b] / 1e6,
                                (unsigned long long)cum);
                }
                fprintf(f, "%s_bucket{resource=\"%s\",le=\"+Inf\"} %llu\n", name, res, (unsigned long long)d->alloc_count);
                fprintf(f, "%s_sum{resource=\"%s\"} %.9f\n", name, res, d->alloc_sum_ns / 1e9);
                fprintf(f, "%s_count{resource=\"%s\"} %llu\n", name, res, (unsigned long long)d->alloc_count);
        }
}

static void m_registrations(FILE *f, const char *name, const scrape *c)
{
        per_resource(f, name, c, (const uint64_t[2]){c->ds[0].registrations, c->ds[1].registrations});
}

static void m_register_failures(FILE *f, const char *name, const scrape *c)
{
        per_resource(f, name, c, (const uint64_t[2]){c->ds[0].register_failures, c->ds[1].register_failures});
}

static void m_plugin_restarts(FILE *f, const char *name, const scrape *c)
{
        per_resource(f, name, c, (const uint64_t[2]){c->ds[0].restarts, c->ds[1].restarts});
}

static void m_preparations(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "{outcome=\"ok\"}", c->ps.applies - c->ps.applies_failed);
        sample(f, name, "{outcome=\"failed\"}", c->ps.applies_failed);
}

static void m_preparation_failed(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->ps.last_exit != 0);
}

static void m_config_reloads(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "{result=\"accepted\"}", c->ps.reloads);
        sample(f, name, "{result=\"rejected\"}", c->ps.reloads_rejected);
}

static void m_retunes(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->ps.retunes);
}

static void m_nic_resets(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->ps.resets_seen);
}

static void m_cluster_reporting(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->r->cluster != NULL);
}

static void m_api_up(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->cs.api_up);
}

static void m_labels_synced(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->cs.labels_synced);
}

static void m_api_requests(FILE *f, const char *name, const scrape *c)
{
        for (int k = 0; k < _RUN_CLUSTER_CALL_MAX; k++)
                fprintf(f, "%s{call=\"%s\"} %llu\n", name, run_cluster_call_name((run_cluster_call)k),
                        (unsigned long long)c->cs.calls[k]);
}

static void m_api_errors(FILE *f, const char *name, const scrape *c)
{
        for (int k = 0; k < _RUN_CLUSTER_CALL_MAX; k++)
                for (int e = 0; e < _RUN_CLUSTER_ERR_MAX; e++)
                        if (c->cs.errors[k][e])
                                fprintf(f, "%s{call=\"%s\",error=\"%s\"} %llu\n", name,
                                        run_cluster_call_name((run_cluster_call)k),
                                        run_cluster_err_name((run_cluster_err)e), (unsigned long long)c->cs.errors[k][e]);
}

static void m_events(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "{type=\"Warning\"}", c->cs.events_warning);
        sample(f, name, "{type=\"Normal\"}", c->cs.events_normal);
}

static void m_events_held(FILE *f, const char *name, const scrape *c)
{
        sample(f, name, "", c->cs.events_held);
}

/* The families of /metrics, in the order they are exposed (docs/observability.md): each
 * one's # HELP and # TYPE, then what its function writes, every sample named after it. */
typedef struct metric_family {
        const char *name, *type, *help;
        void (*samples)(FILE *f, const char *name, const scrape *c);
} metric_family;

static const metric_family metric_families[] = {
        {"spinlane_node_ready", "gauge",
         "1 when no node check fails and both resources are advertised (the spinlane.io/ready label)", m_node_ready},
        {"spinlane_node_check", "gauge", "Each node check's verdict: 1 for the one it has, 0 for the others", m_node_check},
        {"spinlane_devices", "gauge", "Devices advertised to the kubelet, per resource and health", m_devices},
        {"spinlane_device_healthy", "gauge",
         "1 Healthy, 0 Unhealthy, per device; pod, namespace and container name its holder (kubelet PodResources), "
         "empty when none",
         m_device_healthy},
        {"spinlane_devices_allocated", "gauge", "Devices a container holds (kubelet PodResources)", m_devices_allocated},
        {"spinlane_podresources_up", "gauge", "1 when the last kubelet PodResources List answered", m_podres_up},
        {"spinlane_podresources_errors_total", "counter", "PodResources List calls that failed", m_podres_errors},
        {"spinlane_device_plugin_registered", "gauge", "1 when the resource's plugin is registered with the kubelet",
         m_plugin_registered},
        {"spinlane_allocations_total", "counter", "Allocate calls answered, by result (ok or refused)", m_allocations},
        {"spinlane_allocate_duration_seconds", "histogram",
         "Time the device plugin takes to answer Allocate (request taken to answer handed to gRPC)", m_allocate_duration},
        {"spinlane_kubelet_registrations_total", "counter",
         "Registrations the kubelet accepted (more than one: the plugin registered again, e.g. after a kubelet restart)",
         m_registrations},
        {"spinlane_kubelet_register_failures_total", "counter", "Register calls that failed (retried with backoff)",
         m_register_failures},
        {"spinlane_device_plugin_restarts_total", "counter",
         "Times a plugin served again (its socket removed, the kubelet restarted)", m_plugin_restarts},
        {"spinlane_preparations_total", "counter", "Node preparations run, by outcome (ok, or failed: a step failed)",
         m_preparations},
        {"spinlane_preparation_failed", "gauge", "1 when a step of the last node preparation failed", m_preparation_failed},
        {"spinlane_config_reloads_total", "counter", "Config reloads, by result (accepted, or rejected: old kept)",
         m_config_reloads},
        {"spinlane_tuning_reapplied_total", "counter",
         "Kernel-path tuning re-applied after a NIC reset or an IRQ affinity drift", m_retunes},
        {"spinlane_nic_resets_total", "counter", "NIC resets seen in link events", m_nic_resets},
        {"spinlane_cluster_reporting", "gauge", "1 when Node labels and Events are sent (NODE_NAME and an API server)",
         m_cluster_reporting},
        {"spinlane_api_up", "gauge", "1 when the API server answered the last call (a refusal counts as an answer)",
         m_api_up},
        {"spinlane_node_labels_synced", "gauge", "1 when the Node carries the agent's labels as they are now",
         m_labels_synced},
        {"spinlane_api_requests_total", "counter", "Kubernetes API calls, by call", m_api_requests},
        {"spinlane_api_errors_total", "counter", "Kubernetes API calls that failed, by call and error", m_api_errors},
        {"spinlane_events_total", "counter", "Events raised on the Node by verdict changes, by type (before aggregation)",
         m_events},
        {"spinlane_events_held_total", "counter", "Event occurrences the rate limit held back (sent later as a series count)",
         m_events_held},
};

/* The exposition text (Prometheus text format 0.0.4) of one scrape, as one new buffer. */
static int on_render(void *ud, char **ret, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        scrape c;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        scrape_take(ud, &c);
        for (size_t i = 0; i < ELEMENTSOF(metric_families); i++) {
                const metric_family *m = &metric_families[i];
                fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name, m->type);
                m->samples(f, m->name, &c);
        }
        if (fclose(f) != 0) {
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
                ops.healthy = on_healthy;
                ops.max_connections = ops.per_ip = RUN_METRICS_PROBE_CONNECTIONS;
                ops.evict_idle = true;
                ops.header_ms = RUN_METRICS_PROBE_HEADER_MS;
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
        r->podres_ms = run_knob_ms("SPINLANE_PODRES_MS", 100, 3600000, RUN_REPORT_PODRES_MS); /* hidden, for tests */
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

run_cluster *run_report_cluster(run_report *r)
{
        return r ? r->cluster : NULL;
}

struct kube_client *run_report_kube(const run_report *r)
{
        return r ? run_cluster_kube(r->cluster) : NULL;
}

/* ---- the service: Node labels, Events, metrics and probes ---- */

static int report_start(run_daemon *d, const run_node *node)
{
        run_sources src = { .l = d->l, .h = &d->h, .prefix = run_dp_prefix(d), .verdicts = run_verdicts_list(d),
                            .have_verdicts = run_verdicts_have(d), .nics = run_dp_list(d, DEVICE_NIC),
                            .cores = run_dp_list(d, DEVICE_CORE), .nic_plugin = run_dp_plugin(d, DEVICE_NIC),
                            .core_plugin = run_dp_plugin(d, DEVICE_CORE), .prep = &d->prep,
                            .kubeconfig = d->opt.kubeconfig, .metrics_bind = d->opt.metrics_bind,
                            .probe_bind = d->opt.probe_bind, .dra = run_dra_plugin(d), .dra_nic = d->dra.nic,
                            .dra_core = d->dra.core, .health = run_selfcheck_health(d) };
        (void)node;
        return run_report_new(&src, &d->report);
}

static void report_rescan(run_daemon *d, const run_node *node)
{
        (void)node;
        run_report_rescanned(d->report); /* the labels follow, and the Node is read again */
}

static void report_stop(run_daemon *d)
{
        run_report_free(d->report);
        d->report = NULL;
}

/* After the device plugins: they serve before cluster reporting starts, and nothing of
 * the report (an API server that is down) is waited for. */
const run_service run_service_report = { "report", { "verdicts", "device-plugins", "node-preparation" }, report_start,
                                         report_rescan, NULL, report_stop };
