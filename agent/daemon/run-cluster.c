/* SPDX-License-Identifier: Apache-2.0 */
/* Node labels and Events for the daemon, over agent/kube, with the backoff loop. One
 * timer; no call ever blocks. While the API server fails (connection errors, 5xx, 429)
 * nothing else is sent: one call probes it at each backoff step, and Events that were
 * never sent keep their place and their rate-limit token (kev_defer). Logs the first
 * failure of a streak, a change of failure, and the recovery; never a token. */
#include "run-cluster.h"

#include "cleanup.h"
#include "envknob.h"
#include "errbuf.h"
#include "http.h"
#include "kube-client.h"
#include "kube-config.h"
#include "kube-events.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct event_call {
        run_cluster *c;
        bool used;
        kev_kind kind;
        int32_t count;
        char name[KUBE_NAME_MAX + 1];
} event_call;

struct run_cluster {
        loop *l;
        http_client *http;
        kube_client *kube;
        char node[KUBE_NAME_MAX + 1];
        char instance[129];
        char token_file[512];
        int timer_fd;
        uint64_t rng;
        uint64_t resync_ms, blocked_ms;
        /* the API server */
        unsigned failures;      /* retryable failures in a row */
        uint64_t retry_at;      /* no call before (loop ms); 0 = now */
        char streak[160];       /* what the current failure streak was logged as */
        bool api_up;
        /* labels */
        report_labels want;
        bool have_want;
        char want_sig[512], sent_sig[512], synced_sig[512];
        bool label_busy;
        bool label_resync;      /* a re-scan came while a sync was in flight: another follows */
        uint64_t label_due;     /* next sync even without a change */
        uint64_t label_started; /* loop ms the last sync began (the re-scan floor) */
        /* events */
        kev kev;
        report_checks prev;
        bool have_prev;
        event_call ev[RUN_CLUSTER_EVENT_CALLS];
        unsigned ev_busy;
        uint64_t events_blocked_until;
        /* what retrying cannot fix, logged once per distinct message */
        char blocked_label_msg[160], blocked_event_msg[160];
        run_cluster_stats st;
};

static const char *const call_names[_RUN_CLUSTER_CALL_MAX] = {"node_get", "node_patch", "event_create",
                                                              "event_patch"};
static const char *const err_names[_RUN_CLUSTER_ERR_MAX] = {
        "transport", "tls", "token", "unauthorized", "forbidden", "not_found", "conflict", "invalid",
        "throttled", "server", "bad_reply", "other"};

const char *run_cluster_call_name(run_cluster_call c)
{
        return (unsigned)c < _RUN_CLUSTER_CALL_MAX ? call_names[c] : "?";
}

const char *run_cluster_err_name(run_cluster_err e)
{
        return (unsigned)e < _RUN_CLUSTER_ERR_MAX ? err_names[e] : "?";
}

static void pump(run_cluster *c);

static uint64_t next_rand(run_cluster *c)
{
        c->rng ^= c->rng << 13; /* xorshift64: jitter, not secrets */
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        return c->rng;
}

/* Exponential with equal jitter: half the step fixed, half random. */
static uint64_t backoff_ms(run_cluster *c, unsigned failures)
{
        uint64_t step = RUN_CLUSTER_BACKOFF_MIN_MS;
        for (unsigned i = 1; i < failures && step < RUN_CLUSTER_BACKOFF_MAX_MS; i++)
                step *= 2;
        if (step > RUN_CLUSTER_BACKOFF_MAX_MS)
                step = RUN_CLUSTER_BACKOFF_MAX_MS;
        return step / 2 + next_rand(c) % (step / 2 + 1);
}

static int64_t wall_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static run_cluster_err classify(const kube_result *r)
{
        if (r->status == 0) {
                if (r->error == -EKEYREJECTED || r->error == -ENOKEY || r->error == -EPROTO)
                        return RUN_CLUSTER_ERR_TLS;
                if (r->retry)
                        return RUN_CLUSTER_ERR_TRANSPORT;
                if (r->error == -EBADMSG || r->error == -EFBIG)
                        return RUN_CLUSTER_ERR_BAD_REPLY;
                return RUN_CLUSTER_ERR_TOKEN;
        }
        switch (r->status) {
        case 401: return RUN_CLUSTER_ERR_UNAUTHORIZED;
        case 403: return RUN_CLUSTER_ERR_FORBIDDEN;
        case 404: return RUN_CLUSTER_ERR_NOT_FOUND;
        case 409: return RUN_CLUSTER_ERR_CONFLICT;
        case 400:
        case 422: return RUN_CLUSTER_ERR_INVALID;
        case 429: return RUN_CLUSTER_ERR_THROTTLED;
        default: break;
        }
        if (r->status >= 500)
                return RUN_CLUSTER_ERR_SERVER;
        if (r->error == -EBADMSG || r->error == -EFBIG)
                return RUN_CLUSTER_ERR_BAD_REPLY;
        return RUN_CLUSTER_ERR_OTHER;
}

/* What RBAC must grant for the call whose message starts with the method. */
static const char *rbac_need(run_cluster_call call)
{
        switch (call) {
        case RUN_CLUSTER_CALL_NODE_GET: return "get on nodes (API group \"\")";
        case RUN_CLUSTER_CALL_NODE_PATCH: return "patch on nodes (API group \"\")";
        case RUN_CLUSTER_CALL_EVENT_CREATE: return "create on events (API group events.k8s.io)";
        case RUN_CLUSTER_CALL_EVENT_PATCH: return "patch on events (API group events.k8s.io)";
        default: return "?";
        }
}

/* A call came back. Returns true when the API server is to be left alone for now (the
 * caller keeps its work for later). */
static bool account(run_cluster *c, run_cluster_call call, const kube_result *r)
{
        uint64_t now = loop_now_ms();

        if (r->error == 0 || (!r->retry && r->status != 0)) {
                if (c->failures) /* an answer, even a refusal: the server is back */
                        log_info("cluster reporting: the API server answers again (after %u failed call%s)", c->failures,
                                 c->failures == 1 ? "" : "s");
                c->failures = 0;
                c->retry_at = 0;
                c->streak[0] = '\0';
                c->api_up = true;
        }
        if (r->error == 0)
                return false;
        run_cluster_err e = classify(r);
        c->st.errors[call][e]++;
        if (r->retry) {
                uint64_t d = backoff_ms(c, ++c->failures);
                if (r->retry_after_s && (uint64_t)r->retry_after_s * 1000 > d)
                        d = (uint64_t)r->retry_after_s * 1000;
                c->retry_at = now + d;
                c->api_up = false;
                /* the first failure of a streak, and a change of failure, get a line */
                char key[160];
                snprintf(key, sizeof(key), "%s %ld", run_cluster_err_name(e), r->status);
                if (strcmp(key, c->streak) != 0) {
                        snprintf(c->streak, sizeof(c->streak), "%s", key);
                        log_warn("cluster reporting: %s; retrying in %llu ms%s, with backoff while it fails (the device "
                                 "plugins and node preparation do not wait for it)",
                                 r->message, (unsigned long long)d,
                                 r->retry_after_s ? " (the server's Retry-After)" : "");
                } else {
                        log_debug("cluster reporting: %s; retrying in %llu ms", r->message, (unsigned long long)d);
                }
                return true;
        }
        return false;
}

/* Log what retrying cannot fix, once per distinct message. */
static void blocked(char *seen, size_t seen_len, run_cluster *c, run_cluster_call call, const kube_result *r)
{
        char key[160];
        run_cluster_err e = classify(r);

        snprintf(key, sizeof(key), "%s %s %ld", run_cluster_call_name(call), run_cluster_err_name(e), r->status);
        if (strcmp(key, seen) == 0)
                return;
        snprintf(seen, seen_len, "%s", key);
        switch (e) {
        case RUN_CLUSTER_ERR_FORBIDDEN:
                log_error("cluster reporting: %s; RBAC: the agent's ClusterRole must grant %s (deploy/base/rbac.yaml); "
                          "trying again every %g s",
                          r->message, rbac_need(call), (double)c->blocked_ms / 1000);
                break;
        case RUN_CLUSTER_ERR_UNAUTHORIZED:
                log_error("cluster reporting: %s; the API server does not accept the agent's token%s%s; trying again every "
                          "%g s",
                          r->message, c->token_file[0] ? " from " : "", c->token_file, (double)c->blocked_ms / 1000);
                break;
        case RUN_CLUSTER_ERR_NOT_FOUND:
                log_error("cluster reporting: %s; is NODE_NAME=%s this node's name? (the DaemonSet sets it from "
                          "spec.nodeName); trying again every %g s",
                          r->message, c->node, (double)c->blocked_ms / 1000);
                break;
        case RUN_CLUSTER_ERR_TLS:
                log_error("cluster reporting: %s; the API server's certificate is not trusted by the cluster CA given "
                          "(nothing was sent); trying again every %g s",
                          r->message, (double)c->blocked_ms / 1000);
                break;
        default:
                log_error("cluster reporting: %s; trying again in %g s", r->message, (double)c->blocked_ms / 1000);
                break;
        }
}

/* ---- labels ---- */

static void labels_sig(const report_labels *l, char *buf, size_t len)
{
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < l->n && o < len; i++) {
                int n = snprintf(buf + o, len - o, "%s%s=%s", i ? "," : "", l->l[i].key,
                                 l->l[i].value ? l->l[i].value : "(absent)");
                if (n < 0)
                        break;
                o += (size_t)n;
        }
}

/* A call that could not even start (the token file unreadable, out of memory). */
static kube_result local_failure(int r, const char *what, const char *token_file, char *msg, size_t len)
{
        if (token_file[0] && r != -ENOMEM && r != -EINVAL)
                errbuf_printf(msg, len, "%s: cannot read the token file %s: %s", what, token_file, strerror(-r));
        else
                errbuf_printf(msg, len, "%s: %s", what, strerror(-r));
        return (kube_result){.error = r, .message = msg, .body = ""};
}

static void labels_done(run_cluster *c, run_cluster_call call, const kube_result *r)
{
        uint64_t now = loop_now_ms();

        if (account(c, call, r))
                return; /* the backoff: pump() syncs again when it ends */
        if (r->error == 0) {
                if (r->changed)
                        log_info("cluster reporting: labels of Node %s set: %s", c->node, c->sent_sig);
                if (c->blocked_label_msg[0])
                        log_info("cluster reporting: the labels of Node %s are in sync again", c->node);
                c->blocked_label_msg[0] = '\0';
                snprintf(c->synced_sig, sizeof(c->synced_sig), "%s", c->sent_sig);
                c->label_due = now + c->resync_ms;
        } else if (r->error == -EBUSY) { /* lost the race to other writers of the Node every time */
                log_info("cluster reporting: %s; trying again", r->message);
                c->label_due = now + backoff_ms(c, 2);
        } else {
                blocked(c->blocked_label_msg, sizeof(c->blocked_label_msg), c, call, r);
                c->label_due = now + c->blocked_ms;
        }
        /* What changed while this call was in flight (a plugin registered between the GET
         * and its answer) goes now, whatever this call's outcome: the call carried the
         * labels as they were when it began. A re-scan that came meanwhile asks for a fresh
         * GET (the one in flight may have read the Node before someone edited it), not
         * sooner than the re-scan floor after this call began. */
        if (strcmp(c->want_sig, c->sent_sig) != 0)
                c->label_due = 0;
        else if (c->label_resync && r->error == 0 && c->label_due > c->label_started + RUN_CLUSTER_RESCAN_SYNC_MS)
                c->label_due = c->label_started + RUN_CLUSTER_RESCAN_SYNC_MS;
        c->label_resync = false;
}

static void on_labels(const kube_result *r, void *ud)
{
        run_cluster *c = ud;
        bool patch = r->changed || strncmp(r->message, "PATCH ", 6) == 0;

        c->label_busy = false;
        c->st.calls[RUN_CLUSTER_CALL_NODE_GET]++;
        if (patch)
                c->st.calls[RUN_CLUSTER_CALL_NODE_PATCH]++;
        labels_done(c, patch ? RUN_CLUSTER_CALL_NODE_PATCH : RUN_CLUSTER_CALL_NODE_GET, r);
        pump(c);
}

static void start_labels(run_cluster *c)
{
        char msg[512];

        snprintf(c->sent_sig, sizeof(c->sent_sig), "%s", c->want_sig);
        c->label_started = loop_now_ms();
        c->label_resync = false;
        int r = kube_node_sync_labels(c->kube, c->node, c->want.l, c->want.n, on_labels, c);
        if (r >= 0) {
                c->label_busy = true;
                return;
        }
        kube_result f = local_failure(r, "labels", c->token_file, msg, sizeof(msg));
        c->st.errors[RUN_CLUSTER_CALL_NODE_GET][classify(&f)]++;
        labels_done(c, RUN_CLUSTER_CALL_NODE_GET, &f);
}

/* ---- events ---- */

static void events_done(run_cluster *c, event_call *k, const kube_result *r)
{
        run_cluster_call call = k->kind == KEV_CREATE ? RUN_CLUSTER_CALL_EVENT_CREATE : RUN_CLUSTER_CALL_EVENT_PATCH;
        uint64_t now = loop_now_ms();

        if (account(c, call, r)) {
                if (r->status == 0)
                        kev_defer(&c->kev, k->name); /* it never reached the server */
                else
                        kev_result(&c->kev, k->name, -EAGAIN);
                return;
        }
        if (r->error == 0) {
                kev_result(&c->kev, k->name, 0);
                if (c->blocked_event_msg[0])
                        log_info("cluster reporting: Events are accepted again");
                c->blocked_event_msg[0] = '\0';
                return;
        }
        if (r->error == -EEXIST && k->kind == KEV_CREATE && k->count < 2) {
                kev_result(&c->kev, k->name, 0); /* created by an earlier try whose answer was lost */
                return;
        }
        if ((r->error == -EEXIST && k->kind == KEV_CREATE) || (r->error == -ENOENT && k->kind == KEV_PATCH)) {
                kev_result(&c->kev, k->name, r->error); /* patch instead / create again */
                return;
        }
        blocked(c->blocked_event_msg, sizeof(c->blocked_event_msg), c, call, r);
        kev_result(&c->kev, k->name, r->error);
        c->events_blocked_until = now + c->blocked_ms;
}

static void on_event(const kube_result *r, void *ud)
{
        event_call *k = ud;
        run_cluster *c = k->c;

        c->st.calls[k->kind == KEV_CREATE ? RUN_CLUSTER_CALL_EVENT_CREATE : RUN_CLUSTER_CALL_EVENT_PATCH]++;
        events_done(c, k, r);
        k->used = false;
        c->ev_busy--;
        pump(c);
}

static void start_event(run_cluster *c, const kev_action *a)
{
        event_call *k = NULL;
        char msg[512];
        int r;

        for (size_t i = 0; i < RUN_CLUSTER_EVENT_CALLS && !k; i++)
                if (!c->ev[i].used)
                        k = &c->ev[i];
        if (!k) {
                kev_defer(&c->kev, a->name);
                return;
        }
        *k = (event_call){.c = c, .used = true, .kind = a->kind, .count = a->count};
        snprintf(k->name, sizeof(k->name), "%s", a->name);
        if (a->kind == KEV_CREATE) {
                kube_event e = {.name = a->name, .node = c->node, .type = a->type, .reason = a->reason,
                                .action = "Check", .note = a->note, .reporting_instance = c->instance,
                                .event_time_us = a->first_us, .series_count = a->count >= 2 ? a->count : 0,
                                .series_last_us = a->last_us};
                r = kube_event_create(c->kube, &e, on_event, k);
        } else {
                r = kube_event_patch_series(c->kube, a->name, a->count, a->last_us, on_event, k);
        }
        if (r >= 0) {
                c->ev_busy++;
                return;
        }
        kube_result f = local_failure(r, "Event", c->token_file, msg, sizeof(msg));
        c->st.errors[k->kind == KEV_CREATE ? RUN_CLUSTER_CALL_EVENT_CREATE : RUN_CLUSTER_CALL_EVENT_PATCH][classify(&f)]++;
        events_done(c, k, &f);
        k->used = false;
}

/* ---- the pump: what may be sent now, and when to look again ---- */

static void arm(run_cluster *c, uint64_t at)
{
        (void)loop_timer_at(c->l, c->timer_fd, at);
}

static void pump(run_cluster *c)
{
        uint64_t now = loop_now_ms(), next = UINT64_MAX;
        kev_action a;

        if (c->retry_at > now) {
                arm(c, c->retry_at);
                return;
        }
        /* while the server fails, one call at a time probes it */
        bool probing = c->failures > 0;
        if (probing && (c->label_busy || c->ev_busy))
                return;
        if (c->have_want && !c->label_busy && now >= c->label_due) /* a change set label_due to 0 */
                start_labels(c);
        if (c->have_want && !c->label_busy)
                next = c->label_due;
        if (c->retry_at > now) { /* that call failed at once */
                arm(c, c->retry_at);
                return;
        }
        if (now >= c->events_blocked_until)
                while (c->ev_busy < RUN_CLUSTER_EVENT_CALLS && !(probing && (c->label_busy || c->ev_busy)) &&
                       c->retry_at <= now && kev_next(&c->kev, now, &a) == 1)
                        start_event(c, &a);
        uint64_t w = kev_wakeup_ms(&c->kev, now);
        if (w != UINT64_MAX && c->ev_busy < RUN_CLUSTER_EVENT_CALLS) {
                if (w < c->events_blocked_until)
                        w = c->events_blocked_until;
                if (w < c->retry_at)
                        w = c->retry_at;
                if (w <= now)
                        w = now + 1;
                if (w < next)
                        next = w;
        }
        arm(c, next);
}

static int on_timer(loop *l, void *ud)
{
        (void)l;
        pump(ud);
        return 0;
}

/* ---- public ---- */

void run_cluster_update(run_cluster *c, const report_labels *labels, const report_checks *checks)
{
        uint64_t now = loop_now_ms();
        int64_t wall = wall_us();
        char sig[sizeof(c->want_sig)];

        if (!c)
                return;
        labels_sig(labels, sig, sizeof(sig));
        if (!c->have_want || strcmp(sig, c->want_sig) != 0) {
                c->want = *labels;
                for (size_t i = 0; i < c->want.n; i++) /* point into our own copy */
                        if (c->want.l[i].value)
                                c->want.l[i].value = c->want.values[i];
                snprintf(c->want_sig, sizeof(c->want_sig), "%s", sig);
                c->have_want = true;
                c->label_due = 0; /* a change is worth a try even after a refusal */
        }
        if (checks) {
                report_checks copy = {0};
                _cleanup_free_ report_event *evs = calloc(REPORT_MAX_EVENTS, sizeof(*evs));
                if (!evs || (checks->n && !(copy.items = calloc(checks->n, sizeof(*copy.items))))) {
                        log_error("cluster reporting: out of memory; Events of this change are lost");
                } else {
                        size_t n = report_events(c->have_prev ? &c->prev : NULL, checks, evs);
                        for (size_t i = 0; i < n; i++) {
                                kev_action a;
                                if (strcmp(evs[i].type, "Warning") == 0)
                                        c->st.events_warning++;
                                else
                                        c->st.events_normal++;
                                if (kev_observe(&c->kev, now, wall, evs[i].check, evs[i].type, evs[i].reason,
                                                evs[i].note, &a) != 1)
                                        continue; /* held back by the rate limit: kev_next() sends it */
                                if (c->retry_at > now || c->failures || now < c->events_blocked_until ||
                                    c->ev_busy >= RUN_CLUSTER_EVENT_CALLS)
                                        kev_defer(&c->kev, a.name);
                                else
                                        start_event(c, &a);
                        }
                        if (checks->n)
                                memcpy(copy.items, checks->items, checks->n * sizeof(*copy.items));
                        copy.n = checks->n;
                        report_checks_free(&c->prev);
                        c->prev = copy;
                        copy.items = NULL;
                        c->have_prev = true;
                }
                free(copy.items);
        }
        pump(c);
}

void run_cluster_resync(run_cluster *c)
{
        if (!c || !c->have_want)
                return;
        if (c->label_busy) { /* it may have read the Node before the edit: once more after it */
                c->label_resync = true;
                return;
        }
        if (c->blocked_label_msg[0]) /* refused: its own retry (RUN_CLUSTER_BLOCKED_MS) or a change */
                return;
        uint64_t at = c->label_started ? c->label_started + RUN_CLUSTER_RESCAN_SYNC_MS : 0;
        if (at < c->label_due)
                c->label_due = at;
        pump(c);
}

void run_cluster_get_stats(const run_cluster *c, run_cluster_stats *ret)
{
        run_cluster_stats s = {0};
        if (c) {
                s = c->st;
                s.api_up = c->api_up;
                s.labels_synced = c->have_want && strcmp(c->want_sig, c->synced_sig) == 0;
                s.events_held = c->kev.suppressed;
        }
        *ret = s;
}

kube_client *run_cluster_kube(const run_cluster *c)
{
        return c ? c->kube : NULL;
}

const char *run_cluster_node(const run_cluster *c)
{
        return c ? c->node : NULL;
}

/* SPINLANE_KUBE_RESYNC_MS (hidden, for tests): the label re-check and the retry of what
 * was refused, in place of 5 min and 60 s. */
static void periods(run_cluster *c)
{
        char why[160];
        uint64_t v;
        c->resync_ms = RUN_CLUSTER_RESYNC_MS;
        c->blocked_ms = RUN_CLUSTER_BLOCKED_MS;
        if (envknob_u64("SPINLANE_KUBE_RESYNC_MS", 100, 3600000, 0, &v, why, sizeof(why)) < 0)
                log_warn("%s, ignored", why);
        else if (v) /* 0: unset (below the bounds, never a value) */
                c->resync_ms = c->blocked_ms = v;
}

int run_cluster_new(loop *l, const char *kubeconfig, run_cluster **ret)
{
        const char *node = getenv("NODE_NAME");
        char err[KUBE_ERR_LEN];
        kube_config cfg = {0};
        run_cluster *c;
        int r;

        *ret = NULL;
        if (!node || !*node) {
                log_info("cluster reporting off: NODE_NAME is not set (the DaemonSet sets it from spec.nodeName); no "
                         "Node labels, no Events");
                return 0;
        }
        if (!kube_name_ok(node)) {
                log_warn("cluster reporting off: NODE_NAME=\"%.300s\" is not a Node name (lower-case DNS subdomain, at "
                         "most 253 bytes)",
                         node);
                return 0;
        }
        if (kubeconfig) {
                r = kube_config_load(kubeconfig, &cfg, err, sizeof(err));
                if (r < 0) {
                        log_error("--kubeconfig %s: %s", kubeconfig, *err ? err : strerror(-r));
                        kube_config_clear(&cfg);
                        return -EINVAL;
                }
        } else {
                const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
                const char *sa = getenv("SPINLANE_SA_DIR"); /* hidden, for tests: the service-account dir */
                if (!host || !*host) {
                        log_info("cluster reporting off: not in a cluster (KUBERNETES_SERVICE_HOST is not set) and no "
                                 "--kubeconfig");
                        return 0;
                }
                r = kube_config_in_cluster(host, port, sa && *sa ? sa : NULL, &cfg, err, sizeof(err));
                if (r < 0) {
                        log_warn("cluster reporting off: in-cluster config: %s", err);
                        kube_config_clear(&cfg);
                        return 0;
                }
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
                kube_config_clear(&cfg);
                return -ENOMEM;
        }
        c->l = l;
        c->timer_fd = -1;
        c->rng = loop_now_ms() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
        periods(c);
        snprintf(c->node, sizeof(c->node), "%s", node);
        snprintf(c->instance, sizeof(c->instance), "spinlane-agent-%.113s", node);
        snprintf(c->token_file, sizeof(c->token_file), "%s", cfg.token_file ? cfg.token_file : "");
        kev_init(&c->kev, NULL, node, loop_now_ms());
        if ((r = http_client_new(l, &c->http)) < 0 || (r = kube_client_new(l, c->http, &cfg, NULL, &c->kube)) < 0 ||
            (r = loop_add_timer(l, 0, 0, on_timer, c, &c->timer_fd)) < 0) {
                kube_config_clear(&cfg);
                run_cluster_free(c);
                return log_errno(LOG_ERROR, r, "cluster reporting");
        }
        log_info("cluster reporting on: Node %s, API server %s (%s)", node, cfg.server,
                 kubeconfig ? kubeconfig : "in-cluster service account");
        kube_config_clear(&cfg);
        *ret = c;
        return 0;
}

void run_cluster_free(run_cluster *c)
{
        if (!c)
                return;
        kube_client_free(c->kube);
        http_client_free(c->http);
        if (c->timer_fd >= 0)
                (void)loop_remove_timer(c->l, c->timer_fd);
        report_checks_free(&c->prev);
        free(c);
}
