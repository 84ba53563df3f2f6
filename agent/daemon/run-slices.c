/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice reconciler: one call at a time, one timer. A sync is a GET of the
 * slice by name, then the one write it calls for (POST, PUT or DELETE), or nothing. What
 * changes while a call is in flight makes another sync after it. The API server's reply
 * is read by dra_slice_parse (agent/node/dra-slice.c), the one parser of it. */
#include "run-slices.h"

#include "cleanup.h"
#include "dra-slice.h"
#include "envknob.h"
#include "errbuf.h"
#include "kube-api.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 60000

typedef enum op { OP_NONE, OP_GET, OP_CREATE, OP_UPDATE, OP_DELETE } op;

struct run_slices {
        loop *l;
        kube_client *kube;
        char node[KUBE_NAME_MAX + 1];
        char name[DRA_NAME_MAX + 1];
        char path[sizeof(RUN_SLICES_PATH) + DRA_NAME_MAX + 2];
        int timer_fd;
        uint64_t rng, resync_ms, blocked_ms;
        json_t *want;           /* devices to publish (an array; empty: none) */
        bool have_want;
        bool dirty;             /* want changed, or a re-read is due: sync */
        op busy;                /* the call in flight */
        json_t *sent;           /* the devices of the write in flight */
        int64_t generation;     /* the last generation we read or wrote (0: none yet) */
        bool exists;            /* the server had it at the last answer */
        bool known;             /* exists is known */
        unsigned failures;      /* retryable failures in a row */
        unsigned conflicts;     /* 409s in a row */
        uint64_t next_at;       /* no sync before (loop ms) */
        uint64_t sync_started;
        char streak[96], blocked[160];
        bool stopping;
        void (*done)(void *);
        void *done_ud;
};

static void pump(run_slices *s);

static uint64_t backoff_ms(run_slices *s, unsigned failures)
{
        uint64_t step = BACKOFF_MIN_MS;
        for (unsigned i = 1; i < failures && step < BACKOFF_MAX_MS; i++)
                step *= 2;
        if (step > BACKOFF_MAX_MS)
                step = BACKOFF_MAX_MS;
        s->rng ^= s->rng << 13; /* xorshift64: jitter */
        s->rng ^= s->rng >> 7;
        s->rng ^= s->rng << 17;
        return step / 2 + s->rng % (step / 2 + 1);
}

static const char *op_verb(op o)
{
        switch (o) {
        case OP_GET: return "get";
        case OP_CREATE: return "create";
        case OP_UPDATE: return "update";
        case OP_DELETE: return "delete";
        default: return "?";
        }
}

static void arm(run_slices *s, uint64_t at)
{
        uint64_t now = loop_now_ms();
        if (at == UINT64_MAX)
                (void)loop_timer_set(s->l, s->timer_fd, 0, 0);
        else
                (void)loop_timer_set(s->l, s->timer_fd, at > now ? at - now : 1, 0);
}

static void finish_stop(run_slices *s)
{
        void (*done)(void *) = s->done;
        s->done = NULL;
        if (done)
                done(s->done_ud);
}

/* What retrying soon cannot fix: one line per distinct refusal, then again in blocked_ms. */
static void refused(run_slices *s, op o, const kube_result *r)
{
        char key[160];
        snprintf(key, sizeof(key), "%s %ld", op_verb(o), r->status);
        s->next_at = loop_now_ms() + s->blocked_ms;
        if (strcmp(key, s->blocked) == 0)
                return;
        snprintf(s->blocked, sizeof(s->blocked), "%s", key);
        if (r->status == 403)
                log_error("ResourceSlice %s: %s; RBAC: the agent's ClusterRole must grant get, create, update and "
                          "delete on resourceslices (API group resource.k8s.io); trying again every %g s",
                          s->name, r->message, (double)s->blocked_ms / 1000);
        else if (r->status == 404 && o != OP_GET && o != OP_DELETE)
                log_error("ResourceSlice %s: %s; does the API server serve resource.k8s.io/v1 (Kubernetes 1.34 or "
                          "later)? trying again every %g s",
                          s->name, r->message, (double)s->blocked_ms / 1000);
        else
                log_error("ResourceSlice %s: %s; trying again every %g s", s->name, r->message,
                          (double)s->blocked_ms / 1000);
}

/* Accounting common to every answer. True: retry later (backoff armed). */
static bool failed_retryable(run_slices *s, const kube_result *r)
{
        if (r->error == 0 || !r->retry) {
                if (s->failures)
                        log_info("ResourceSlice %s: the API server answers again", s->name);
                s->failures = 0;
                s->streak[0] = '\0';
                return false;
        }
        uint64_t d = backoff_ms(s, ++s->failures);
        if (r->retry_after_s && (uint64_t)r->retry_after_s * 1000 > d)
                d = (uint64_t)r->retry_after_s * 1000;
        s->next_at = loop_now_ms() + d;
        char key[96];
        snprintf(key, sizeof(key), "%ld %d", r->status, r->error);
        if (strcmp(key, s->streak) != 0) {
                snprintf(s->streak, sizeof(s->streak), "%s", key);
                log_warn("ResourceSlice %s: %s; retrying in %llu ms, with backoff while it fails (the device plugins "
                         "do not wait for it)",
                         s->name, r->message, (unsigned long long)d);
        }
        s->dirty = true;
        return true;
}

static void on_reply(const kube_result *r, void *ud);

static int start(run_slices *s, op o, const char *method, const json_t *obj)
{
        _cleanup_free_ char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
        if (obj && !body)
                return -ENOMEM;
        int r = kube_request(s->kube, method, o == OP_CREATE ? RUN_SLICES_PATH : s->path,
                             body ? "application/json" : NULL, body, on_reply, s);
        if (r >= 0)
                s->busy = o;
        return r;
}

static int write_slice(run_slices *s, op o, const char *rv)
{
        json_t *obj = dra_slice_json(s->node, s->want, s->generation + 1, rv);
        if (!obj)
                return -ENOMEM;
        json_decref(s->sent);
        s->sent = json_deep_copy(s->want);
        int r = s->sent ? start(s, o, o == OP_CREATE ? "POST" : "PUT", obj) : -ENOMEM;
        json_decref(obj);
        return r;
}

/* The GET came back 200 or 404: the one write it calls for. */
static void decide(run_slices *s, const kube_result *r)
{
        bool none = !s->want || json_array_size(s->want) == 0;
        char why[256];
        int k = 0;

        if (r->status == 404) {
                bool was = s->known && s->exists;
                s->known = true;
                s->exists = false;
                if (none)
                        return;
                if (was)
                        log_warn("ResourceSlice %s: gone from the API server (deleted by someone else); putting it "
                                 "back",
                                 s->name);
                k = write_slice(s, OP_CREATE, NULL);
        } else {
                dra_slice_seen seen = { 0 };
                if (dra_slice_parse(r->body, r->body_len, s->node, &seen, why, sizeof(why)) < 0) {
                        log_error("ResourceSlice %s: the API server's answer cannot be read: %s; trying again in %g s",
                                  s->name, why, (double)s->blocked_ms / 1000);
                        s->next_at = loop_now_ms() + s->blocked_ms;
                        s->dirty = true;
                        return;
                }
                s->known = s->exists = true;
                if (seen.generation > s->generation)
                        s->generation = seen.generation;
                if (none)
                        k = start(s, OP_DELETE, "DELETE", NULL);
                else if (!seen.ours || dra_devices_differ(seen.devices, s->want))
                        k = write_slice(s, OP_UPDATE, seen.resource_version);
                dra_slice_seen_clear(&seen);
        }
        if (k < 0) {
                log_errno(LOG_ERROR, k, "ResourceSlice %s", s->name);
                s->next_at = loop_now_ms() + s->blocked_ms;
                s->dirty = true;
        }
}

static void on_reply(const kube_result *r, void *ud)
{
        run_slices *s = ud;
        op o = s->busy;

        s->busy = OP_NONE;
        if (s->stopping && o != OP_DELETE) { /* the call that was in flight at the stop */
                if (start(s, OP_DELETE, "DELETE", NULL) < 0)
                        finish_stop(s);
                return;
        }
        if (s->stopping) {
                if (r->error == 0)
                        log_info("ResourceSlice %s deleted (the agent stops advertising)", s->name);
                else if (r->status != 404)
                        log_warn("ResourceSlice %s: %s; left in place at the stop", s->name, r->message);
                finish_stop(s);
                return;
        }
        if (failed_retryable(s, r)) {
                pump(s);
                return;
        }
        if (r->status == 409 || (o == OP_UPDATE && r->status == 404)) { /* lost a race: read it again */
                /* The first loss is read again at once; every repeat waits twice as long
                 * (up to BACKOFF_MAX_MS), until a write goes through: two agents on one
                 * slice (a rollout) or a writer that always wins cost a request a minute,
                 * not eight a second. Logged at the 4th, 8th, 16th... in a row. */
                unsigned n = ++s->conflicts;
                if (n > 1)
                        s->next_at = loop_now_ms() + backoff_ms(s, n - 1);
                if (n > KUBE_CONFLICT_RETRIES && (n & (n - 1)) == 0)
                        log_info("ResourceSlice %s: %s (%u in a row); trying again in %llu ms", s->name, r->message,
                                 n, (unsigned long long)(s->next_at - loop_now_ms()));
                s->dirty = true;
                pump(s);
                return;
        }
        if (o == OP_GET && (r->error == 0 || r->status == 404)) {
                s->blocked[0] = '\0';
                decide(s, r);
        } else if (r->error == 0) {
                bool was_blocked = s->blocked[0] != '\0';
                s->blocked[0] = '\0';
                s->conflicts = 0;
                if (o == OP_DELETE) {
                        s->known = true;
                        s->exists = false;
                        log_info("ResourceSlice %s deleted (no device to publish)", s->name);
                } else {
                        s->generation++;
                        s->known = s->exists = true;
                        log_info("ResourceSlice %s %s: generation %lld, %zu device%s%s", s->name,
                                 o == OP_CREATE ? "created" : "updated", (long long)s->generation,
                                 json_array_size(s->sent), json_array_size(s->sent) == 1 ? "" : "s",
                                 was_blocked ? " (accepted again)" : "");
                        if (dra_devices_differ(s->sent, s->want))
                                s->dirty = true; /* changed meanwhile */
                }
        } else if (o == OP_DELETE && r->status == 404) {
                s->known = true;
                s->exists = false;
        } else {
                refused(s, o, r);
                s->dirty = true;
        }
        pump(s);
}

static void pump(run_slices *s)
{
        uint64_t now = loop_now_ms();

        if (s->busy || s->stopping || !s->have_want)
                return;
        if (!s->dirty && now >= s->sync_started + s->resync_ms)
                s->dirty = true; /* the periodic read-back */
        if (!s->dirty) {
                arm(s, s->sync_started + s->resync_ms);
                return;
        }
        if (s->next_at > now) {
                arm(s, s->next_at);
                return;
        }
        s->dirty = false;
        s->sync_started = now;
        int r = start(s, OP_GET, "GET", NULL);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "ResourceSlice %s: GET", s->name);
                s->dirty = true;
                s->next_at = now + s->blocked_ms;
                arm(s, s->next_at);
                return;
        }
        arm(s, UINT64_MAX);
}

static int on_timer(loop *l, void *ud)
{
        (void)l;
        pump(ud);
        return 0;
}

void run_slices_set(run_slices *s, const json_t *devices)
{
        if (!s || s->stopping)
                return;
        json_t *copy = devices ? json_deep_copy(devices) : json_array();
        if (!copy) {
                log_error("ResourceSlice %s: out of memory; the slice stays as it was", s->name);
                return;
        }
        bool changed = !s->have_want || dra_devices_differ(copy, s->want);
        json_decref(s->want);
        s->want = copy;
        s->have_want = true;
        if (changed) {
                s->dirty = true;
                if (s->blocked[0]) /* a change is worth a try even after a refusal */
                        s->next_at = s->failures ? s->next_at : 0;
        }
        pump(s);
}

void run_slices_resync(run_slices *s)
{
        if (!s || s->stopping || !s->have_want || s->busy || s->blocked[0])
                return;
        if (loop_now_ms() >= s->sync_started + RUN_SLICES_RESCAN_SYNC_MS)
                s->dirty = true;
        pump(s);
}

int run_slices_stop(run_slices *s, void (*done)(void *ud), void *ud)
{
        if (!s || s->stopping)
                return 0;
        s->stopping = true;
        (void)loop_timer_set(s->l, s->timer_fd, 0, 0);
        if (s->known && !s->exists && !s->busy)
                return 0; /* the server has none */
        s->done = done;
        s->done_ud = ud;
        if (s->busy)
                return 1; /* on_reply sends the DELETE */
        if (start(s, OP_DELETE, "DELETE", NULL) < 0) {
                s->done = NULL;
                return 0;
        }
        return 1;
}

int run_slices_new(loop *l, kube_client *kube, const char *node, run_slices **ret)
{
        char why[160];
        uint64_t v;
        run_slices *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->l = l;
        s->kube = kube;
        s->timer_fd = -1;
        snprintf(s->node, sizeof(s->node), "%s", node);
        if ((r = dra_slice_name(node, s->name, sizeof(s->name))) < 0) {
                free(s);
                return r;
        }
        snprintf(s->path, sizeof(s->path), "%s/%s", RUN_SLICES_PATH, s->name);
        s->rng = loop_now_ms() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
        s->resync_ms = RUN_SLICES_RESYNC_MS;
        s->blocked_ms = RUN_SLICES_BLOCKED_MS;
        /* SPINLANE_KUBE_RESYNC_MS (hidden, for tests), as cluster reporting reads it */
        if (envknob_u64("SPINLANE_KUBE_RESYNC_MS", 100, 3600000, 0, &v, why, sizeof(why)) >= 0 && v)
                s->resync_ms = s->blocked_ms = v;
        if ((r = loop_add_timer(l, 0, 0, on_timer, s, &s->timer_fd)) < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void run_slices_free(run_slices *s)
{
        if (!s)
                return;
        if (s->timer_fd >= 0)
                (void)loop_remove_timer(s->l, s->timer_fd);
        json_decref(s->want);
        json_decref(s->sent);
        free(s);
}
