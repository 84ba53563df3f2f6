/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice reconciler: one call at a time, one timer. A sync reads the pool (a GET
 * of each slice by name: as many as the devices need, as many as we know exist, and as
 * many as slice 0's resourceSliceCount says were written), then makes the writes it calls
 * for, one after the other (POST or PUT of every slice at the new generation, DELETE of
 * the slices past the end), or nothing. What changes while a sync runs makes another sync
 * after it; a lost race or a failure ends the sync and the pool is read again. The API
 * server's reply is read by dra_slice_parse (dra-slice.c), the one parser of it. */
#include "dra-slices.h"

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
#define MAX DRA_POOL_MAX_SLICES

typedef enum op { OP_NONE, OP_GET, OP_CREATE, OP_UPDATE, OP_DELETE } op;

typedef struct plan_step {
        op o;
        unsigned idx;
} plan_step;

/* What the last read of one slice found. */
typedef struct slice_read {
        bool found;
        bool differ;    /* found, and not what it should hold at this generation */
        int64_t generation;
        char rv[64];
} slice_read;

struct dra_slices {
        loop *l;
        kube_client *kube;
        char node[KUBE_NAME_MAX + 1];
        char name[DRA_NAME_MAX + 1]; /* slice 0's: the pool's name in the lines */
        int timer_fd;
        uint64_t rng, resync_ms, blocked_ms;
        json_t *want;           /* devices to publish (an array; empty: none) */
        bool have_want;
        bool dirty;             /* want changed, or a re-read is due: sync */
        op busy;                /* the call in flight */
        unsigned busy_idx;      /* its slice */
        bool exists[MAX];       /* the server had slice i at the last answer */
        bool known[MAX];        /* exists[i] is known */
        /* the sync under way: its reads, then its plan */
        bool syncing;
        unsigned n_read, reading;
        unsigned read_top;      /* the most slices a read of the pool covered */
        slice_read got[MAX];
        plan_step plan[MAX];
        unsigned n_plan, at;
        json_t *sent;           /* the devices of the writes under way */
        int64_t plan_gen;
        int64_t generation;     /* the highest generation we read or wrote (0: none yet) */
        unsigned failures;      /* retryable failures in a row */
        unsigned conflicts;     /* 409s in a row */
        uint64_t next_at;       /* no sync before (loop ms) */
        uint64_t sync_started;
        char streak[96], blocked[160];
        bool was_blocked;       /* the sync started after a refusal (said when it is accepted) */
        bool stopping;
        void (*done)(void *);
        void *done_ud;
};

static void pump(dra_slices *s);

static uint64_t backoff_ms(dra_slices *s, unsigned failures)
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

/* Slice idx's name (idx < MAX, the node checked at dra_slices_new: cannot fail). */
static const char *slice_name(const dra_slices *s, unsigned idx, char buf[static DRA_NAME_MAX + 2])
{
        if (dra_slice_name_at(s->node, idx, buf, DRA_NAME_MAX + 2) < 0)
                snprintf(buf, DRA_NAME_MAX + 2, "%s", s->name);
        return buf;
}

/* The slices a device list fills (at most MAX: dra_slice_build leaves the rest out). */
static size_t pool_n(const json_t *devices)
{
        size_t n = dra_pool_slices(devices);
        return n > MAX ? MAX : n;
}

static size_t want_slices(const dra_slices *s)
{
        return pool_n(s->want);
}

/* One past the highest slice the server had at its last answer. */
static unsigned known_top(const dra_slices *s)
{
        for (unsigned i = MAX; i > 0; i--)
                if (s->exists[i - 1])
                        return i;
        return 0;
}

static void arm(dra_slices *s, uint64_t at)
{
        (void)loop_timer_at(s->l, s->timer_fd, at);
}

static void finish_stop(dra_slices *s)
{
        void (*done)(void *) = s->done;
        s->done = NULL;
        if (done)
                done(s->done_ud);
}

static void end_sync(dra_slices *s)
{
        s->syncing = false;
        s->n_plan = s->at = s->reading = s->n_read = 0;
}

/* What retrying soon cannot fix: one line per distinct refusal, then again in blocked_ms. */
static void refused(dra_slices *s, op o, unsigned idx, const kube_result *r)
{
        char key[160], name[DRA_NAME_MAX + 2];
        snprintf(key, sizeof(key), "%s %ld", op_verb(o), r->status);
        s->next_at = loop_now_ms() + s->blocked_ms;
        if (strcmp(key, s->blocked) == 0)
                return;
        snprintf(s->blocked, sizeof(s->blocked), "%s", key);
        slice_name(s, idx, name);
        if (r->status == 403)
                log_error("ResourceSlice %s: %s; RBAC: the agent's ClusterRole must grant get, create, update and "
                          "delete on resourceslices (API group resource.k8s.io); trying again every %g s",
                          name, r->message, (double)s->blocked_ms / 1000);
        else if (r->status == 404 && o != OP_GET && o != OP_DELETE)
                log_error("ResourceSlice %s: %s; does the API server serve resource.k8s.io/v1 (Kubernetes 1.34 or "
                          "later)? trying again every %g s",
                          name, r->message, (double)s->blocked_ms / 1000);
        else
                log_error("ResourceSlice %s: %s; trying again every %g s", name, r->message,
                          (double)s->blocked_ms / 1000);
}

/* Accounting common to every answer. True: retry later (backoff armed). */
static bool failed_retryable(dra_slices *s, unsigned idx, const kube_result *r)
{
        char name[DRA_NAME_MAX + 2];
        if (r->error == 0 || !r->retry) {
                if (s->failures)
                        log_info("ResourceSlice %s: the API server answers again", slice_name(s, idx, name));
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
                         slice_name(s, idx, name), r->message, (unsigned long long)d);
        }
        s->dirty = true;
        return true;
}

static void on_reply(const kube_result *r, void *ud);

/* The method is spelled at every call (tests/helm/test-helm.py reads them: the chart's
 * RBAC grants exactly these verbs). */
static int start(dra_slices *s, op o, const char *method, unsigned idx, const json_t *obj)
{
        char name[DRA_NAME_MAX + 2], path[sizeof(DRA_SLICES_PATH) + DRA_NAME_MAX + 2];
        _cleanup_free_ char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
        if (obj && !body)
                return -ENOMEM;
        if (o == OP_CREATE)
                snprintf(path, sizeof(path), "%s", DRA_SLICES_PATH);
        else
                snprintf(path, sizeof(path), "%s/%s", DRA_SLICES_PATH, slice_name(s, idx, name));
        int r = kube_request(s->kube, method, path, body ? "application/json" : NULL, body, on_reply, s);
        if (r >= 0) {
                s->busy = o;
                s->busy_idx = idx;
        }
        return r;
}

/* The plan's next step, or the end of the sync. */
static int next_step(dra_slices *s)
{
        size_t n = pool_n(s->sent);
        while (s->at < s->n_plan) {
                const plan_step *p = &s->plan[s->at];
                if (p->o == OP_DELETE)
                        return start(s, OP_DELETE, "DELETE", p->idx, NULL);
                _cleanup_(json_decrefp) json_t *chunk = dra_pool_chunk(s->sent, p->idx);
                _cleanup_(json_decrefp) json_t *obj =
                        chunk ? dra_slice_json_at(s->node, p->idx, n, chunk, s->plan_gen,
                                                  p->o == OP_UPDATE ? s->got[p->idx].rv : NULL)
                              : NULL;
                if (!obj)
                        return -ENOMEM;
                return start(s, p->o, p->o == OP_CREATE ? "POST" : "PUT", p->idx, obj);
        }
        /* done */
        end_sync(s);
        s->conflicts = 0;
        s->was_blocked = false;
        if (dra_devices_differ(s->sent, s->want))
                s->dirty = true; /* changed meanwhile */
        return 0;
}

/* Every slice read: the writes the pool calls for. */
static int decide(dra_slices *s)
{
        size_t n = want_slices(s);
        bool rewrite = false;

        s->n_plan = s->at = 0;
        for (unsigned i = 0; i < n; i++)
                if (!s->got[i].found || s->got[i].differ || s->got[i].generation != s->got[0].generation)
                        rewrite = true;
        if (rewrite) {
                for (unsigned i = 0; i < n; i++)
                        s->plan[s->n_plan++] = (plan_step){ s->got[i].found ? OP_UPDATE : OP_CREATE, i };
                s->plan_gen = s->generation + 1;
        }
        for (unsigned i = (unsigned)n; i < s->n_read; i++)
                if (s->got[i].found && s->n_plan < MAX)
                        s->plan[s->n_plan++] = (plan_step){ OP_DELETE, i };
        json_decref(s->sent);
        s->sent = json_deep_copy(s->want);
        if (!s->sent)
                return -ENOMEM;
        return next_step(s);
}

/* Slice idx read (200 or 404): note it, then the next read or the decision. */
static int read_one(dra_slices *s, unsigned idx, const kube_result *r)
{
        char name[DRA_NAME_MAX + 2], why[256];
        size_t n = want_slices(s);
        slice_read *g = &s->got[idx];

        memset(g, 0, sizeof(*g));
        if (r->status == 404) {
                if (s->known[idx] && s->exists[idx] && idx < n)
                        log_warn("ResourceSlice %s: gone from the API server (deleted by someone else); putting it "
                                 "back",
                                 slice_name(s, idx, name));
                s->known[idx] = true;
                s->exists[idx] = false;
        } else {
                dra_slice_seen seen = { 0 };
                if (dra_slice_parse(r->body, r->body_len, s->node, &seen, why, sizeof(why)) < 0) {
                        log_error("ResourceSlice %s: the API server's answer cannot be read: %s; trying again in %g s",
                                  slice_name(s, idx, name), why, (double)s->blocked_ms / 1000);
                        s->next_at = loop_now_ms() + s->blocked_ms;
                        s->dirty = true;
                        end_sync(s);
                        return 0;
                }
                s->known[idx] = s->exists[idx] = true;
                g->found = true;
                g->generation = seen.generation;
                snprintf(g->rv, sizeof(g->rv), "%s", seen.resource_version);
                if (seen.generation > s->generation)
                        s->generation = seen.generation;
                if (idx < n) {
                        _cleanup_(json_decrefp) json_t *chunk = dra_pool_chunk(s->want, idx);
                        if (!chunk) {
                                dra_slice_seen_clear(&seen);
                                return -ENOMEM;
                        }
                        g->differ = !seen.pool_ours || seen.slice_count != (int64_t)n ||
                                    dra_devices_differ(seen.devices, chunk);
                }
                /* slice 0 says how many the pool had: the ones past our end are stale */
                if (idx == 0 && seen.pool_ours && seen.slice_count > (int64_t)s->n_read)
                        s->n_read = seen.slice_count > MAX ? MAX : (unsigned)seen.slice_count;
                dra_slice_seen_clear(&seen);
        }
        s->reading = idx + 1;
        if (s->n_read > s->read_top)
                s->read_top = s->n_read;
        if (s->reading < s->n_read)
                return start(s, OP_GET, "GET", s->reading, NULL);
        return decide(s);
}

/* The stop: delete every slice the server may hold (it had it, or we do not know, up to
 * the most the pool had in a read, the devices' count and at least slice 0), one after
 * the other. 1: a DELETE went out; 0: none left; -EIO: it could not be sent. */
static int stop_next(dra_slices *s)
{
        size_t top = want_slices(s);
        if (top < s->read_top)
                top = s->read_top;
        if (top < 1)
                top = 1;
        for (unsigned i = 0; i < MAX; i++)
                if (s->exists[i] || (!s->known[i] && i < top)) {
                        s->exists[i] = false;
                        s->known[i] = true;
                        return start(s, OP_DELETE, "DELETE", i, NULL) < 0 ? -EIO : 1;
                }
        return 0;
}

static void stop_reply(dra_slices *s, op o, unsigned idx, const kube_result *r)
{
        char name[DRA_NAME_MAX + 2];
        if (o == OP_DELETE) {
                if (r->error == 0)
                        log_info("ResourceSlice %s deleted (the agent stops advertising)", slice_name(s, idx, name));
                else if (r->status != 404)
                        log_warn("ResourceSlice %s: %s; left in place at the stop", slice_name(s, idx, name),
                                 r->message);
        } else if (o == OP_CREATE || o == OP_UPDATE) { /* the write in flight at the stop */
                if (r->error == 0)
                        s->exists[idx] = true;
        }
        if (stop_next(s) <= 0)
                finish_stop(s);
}

static void on_reply(const kube_result *r, void *ud)
{
        dra_slices *s = ud;
        op o = s->busy;
        unsigned idx = s->busy_idx;
        char name[DRA_NAME_MAX + 2];
        int k = 0;

        s->busy = OP_NONE;
        if (s->stopping) {
                stop_reply(s, o, idx, r);
                return;
        }
        if (failed_retryable(s, idx, r)) {
                end_sync(s);
                pump(s);
                return;
        }
        if (r->status == 409 || (o == OP_UPDATE && r->status == 404)) { /* lost a race: read it again */
                /* The first loss is read again at once; every repeat waits twice as long
                 * (up to BACKOFF_MAX_MS), until a write goes through: two agents on one
                 * pool (a rollout) or a writer that always wins cost a request a minute,
                 * not eight a second. Logged at the 4th, 8th, 16th... in a row. */
                unsigned n = ++s->conflicts;
                if (n > 1)
                        s->next_at = loop_now_ms() + backoff_ms(s, n - 1);
                if (n > KUBE_CONFLICT_RETRIES && (n & (n - 1)) == 0)
                        log_info("ResourceSlice %s: %s (%u in a row); trying again in %llu ms",
                                 slice_name(s, idx, name), r->message, n,
                                 (unsigned long long)(s->next_at - loop_now_ms()));
                s->dirty = true;
                end_sync(s);
                pump(s);
                return;
        }
        if (o == OP_GET && (r->error == 0 || r->status == 404)) {
                s->was_blocked = s->was_blocked || s->blocked[0] != '\0';
                s->blocked[0] = '\0';
                k = read_one(s, idx, r);
        } else if (r->error == 0 || (o == OP_DELETE && r->status == 404)) {
                bool was_blocked = s->was_blocked || s->blocked[0] != '\0';
                size_t n = pool_n(s->sent);
                s->blocked[0] = '\0';
                s->was_blocked = false;
                if (o == OP_DELETE) {
                        s->known[idx] = true;
                        s->exists[idx] = false;
                        if (r->error == 0)
                                log_info("ResourceSlice %s deleted (%s)", slice_name(s, idx, name),
                                         n ? "past the pool's end: it has fewer slices now" : "no device to publish");
                } else {
                        _cleanup_(json_decrefp) json_t *chunk = dra_pool_chunk(s->sent, idx);
                        char part[48] = "";
                        if (s->plan_gen > s->generation)
                                s->generation = s->plan_gen;
                        s->known[idx] = s->exists[idx] = true;
                        if (n > 1)
                                snprintf(part, sizeof(part), " (slice %u of %zu)", idx + 1, n);
                        log_info("ResourceSlice %s %s: generation %lld, %zu device%s%s%s", slice_name(s, idx, name),
                                 o == OP_CREATE ? "created" : "updated", (long long)s->plan_gen,
                                 json_array_size(chunk), json_array_size(chunk) == 1 ? "" : "s", part,
                                 was_blocked ? " (accepted again)" : "");
                }
                s->at++;
                k = next_step(s);
        } else {
                refused(s, o, idx, r);
                s->dirty = true;
                end_sync(s);
        }
        if (k < 0) {
                log_errno(LOG_ERROR, k, "ResourceSlice %s", s->name);
                s->next_at = loop_now_ms() + s->blocked_ms;
                s->dirty = true;
                end_sync(s);
        }
        pump(s);
}

static void pump(dra_slices *s)
{
        uint64_t now = loop_now_ms();

        if (s->busy || s->syncing || s->stopping || !s->have_want)
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
        /* read what the devices need, what we know the server has, and (slice 0's count)
         * what the pool had */
        size_t n = want_slices(s);
        unsigned top = known_top(s);
        s->n_read = n > top ? (unsigned)n : top;
        if (s->n_read == 0)
                s->n_read = 1;
        if (s->n_read > s->read_top)
                s->read_top = s->n_read;
        s->reading = 0;
        s->n_plan = s->at = 0;
        s->syncing = true;
        int r = start(s, OP_GET, "GET", 0, NULL);
        if (r < 0) {
                end_sync(s);
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

void dra_slices_set(dra_slices *s, const json_t *devices)
{
        if (!s || s->stopping)
                return;
        json_t *copy = devices ? json_deep_copy(devices) : json_array();
        if (!copy) {
                log_error("ResourceSlice %s: out of memory; the slices stay as they were", s->name);
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

void dra_slices_resync(dra_slices *s)
{
        if (!s || s->stopping || !s->have_want || s->busy || s->syncing || s->blocked[0])
                return;
        if (loop_now_ms() >= s->sync_started + DRA_SLICES_RESCAN_SYNC_MS)
                s->dirty = true;
        pump(s);
}

int dra_slices_stop(dra_slices *s, void (*done)(void *ud), void *ud)
{
        if (!s || s->stopping)
                return 0;
        s->stopping = true;
        (void)loop_timer_set(s->l, s->timer_fd, 0, 0);
        s->done = done;
        s->done_ud = ud;
        if (s->busy) {
                s->known[s->busy_idx] = false; /* a write in flight may have made it */
                return 1;                      /* on_reply goes on with the DELETEs */
        }
        if (stop_next(s) <= 0) {
                s->done = NULL;
                return 0;
        }
        return 1;
}

int dra_slices_new(loop *l, kube_client *kube, const char *node, dra_slices **ret)
{
        char why[160];
        uint64_t v;
        dra_slices *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->l = l;
        s->kube = kube;
        s->timer_fd = -1;
        snprintf(s->node, sizeof(s->node), "%s", node);
        /* the longest name (the last index) must fit: then every slice_name does */
        char last[DRA_NAME_MAX + 2];
        if ((r = dra_slice_name(node, s->name, sizeof(s->name))) < 0 ||
            (r = dra_slice_name_at(node, MAX - 1, last, sizeof(last))) < 0) {
                free(s);
                return r;
        }
        s->rng = loop_now_ms() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
        s->resync_ms = DRA_SLICES_RESYNC_MS;
        s->blocked_ms = DRA_SLICES_BLOCKED_MS;
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

void dra_slices_free(dra_slices *s)
{
        if (!s)
                return;
        if (s->timer_fd >= 0)
                (void)loop_remove_timer(s->l, s->timer_fd);
        json_decref(s->want);
        json_decref(s->sent);
        free(s);
}
