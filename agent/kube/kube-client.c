/* SPDX-License-Identifier: Apache-2.0 */
/* API calls over agent/http with bearer-token authentication: the token re-read from its
 * file at least every KUBE_TOKEN_REREAD_MS and once at once on a 401; label sync as GET →
 * merge patch (→ GET again on 409). Owns its calls and the token (wiped when freed);
 * never logs. */
#include "kube-client.h"

#include "cleanup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum call_kind { CALL_RAW, CALL_SYNC_GET, CALL_SYNC_PATCH } call_kind;

typedef struct call {
        struct call *next;
        kube_client *c;
        call_kind kind;
        char *method, *path, *ctype, *body;
        bool reauthed, changed;
        unsigned conflicts;
        unsigned sent_gen;      /* the token generation the request went out with */
        http_request *req;
        kube_done_fn fn;
        void *userdata;
        /* label sync */
        char *node;
        char **keys, **values;
        size_t n;
} call;

struct kube_client {
        loop *loop;
        http_client *http;
        kube_config cfg;
        kube_client_options o;
        char *token;
        uint64_t token_read_ms;
        unsigned token_reads;
        unsigned token_gen;     /* bumped whenever a read brings a different token */
        call *calls;
};

static uint64_t now_ms(const kube_client *c) { return c->o.now_ms ? c->o.now_ms() : loop_now_ms(); }

unsigned kube_client_token_reads(const kube_client *c) { return c ? c->token_reads : 0; }

static void token_drop(kube_client *c)
{
        if (c->token) {
                explicit_bzero(c->token, strlen(c->token));
                free(c->token);
                c->token = NULL;
        }
}

/* The token to send; re-read from the file when due or forced. */
static int token_get(kube_client *c, bool force, const char **ret)
{
        if (c->cfg.token) {
                *ret = c->cfg.token;
                return 0;
        }
        if (force || !c->token || now_ms(c) - c->token_read_ms >= KUBE_TOKEN_REREAD_MS) {
                char *t = NULL;
                int r = kube_token_read(c->cfg.token_file, &t);
                c->token_reads++;
                if (r < 0)
                        return r;
                if (!c->token || strcmp(c->token, t) != 0)
                        c->token_gen++;
                token_drop(c);
                c->token = t;
                c->token_read_ms = now_ms(c);
        }
        *ret = c->token;
        return 0;
}

static void call_free(call *k)
{
        if (!k)
                return;
        if (k->req)
                http_cancel(k->c->http, k->req);
        free(k->method);
        free(k->path);
        free(k->ctype);
        free(k->body);
        free(k->node);
        for (size_t i = 0; i < k->n; i++) {
                free(k->keys[i]);
                free(k->values[i]);
        }
        free(k->keys);
        free(k->values);
        free(k);
}

static void call_unlink(kube_client *c, call *k)
{
        for (call **p = &c->calls; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        return;
                }
}

static void finish(call *k, int error, const http_response *resp, const kube_status *api, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void finish(call *k, int error, const http_response *resp, const kube_status *api, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        kube_result r = {.error = error, .api = api, .changed = k->changed, .message = msg, .body = ""};

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (resp) {
                const char *ra = http_response_header(resp, "Retry-After");
                r.status = resp->status;
                r.body = resp->body;
                r.body_len = resp->body_len;
                if (ra)
                        kube_retry_after_parse(ra, 3600, &r.retry_after_s);
                /* not retried soon: a certificate the cluster CA does not trust, an unusable
                 * CA, a request we made wrong, a reply beyond the 2 MiB cap (asking again
                 * brings the same reply) */
                r.retry = resp->error < 0 ? (resp->error != -EKEYREJECTED && resp->error != -ENOKEY &&
                                             resp->error != -EINVAL && resp->error != -EFBIG)
                                          : (resp->status >= 500 || resp->status == 429);
        }
        k->req = NULL;
        call_unlink(k->c, k);
        k->fn(&r, k->userdata);
        call_free(k);
}

static int call_start(call *k, bool first);

static int status_errno(const call *k, long s)
{
        if (s == 401 || s == 403)
                return -EACCES;
        if (s == 404)
                return -ENOENT;
        if (s == 409)
                return strcmp(k->method, "POST") == 0 ? -EEXIST : -EBUSY;
        if (s == 400 || s == 422)
                return -EINVAL;
        if (s == 429 || s >= 500)
                return -EAGAIN;
        return -EIO;
}

/* The GET of a label sync came back: compute the patch, send it or finish. */
static void sync_got_node(call *k, const http_response *resp)
{
        char err[256];
        kube_node_info info = {0};
        _cleanup_free_ kube_label *want = NULL;
        char *patch = NULL;
        int r = kube_node_parse(resp->body, resp->body_len, KUBE_LABEL_PREFIX, &info, err, sizeof(err));

        if (r < 0) {
                finish(k, -EBADMSG, resp, NULL, "GET %s: %s", k->path, err);
                return;
        }
        want = calloc(k->n ? k->n : 1, sizeof(*want));
        if (!want) {
                kube_node_info_clear(&info);
                finish(k, -ENOMEM, resp, NULL, "out of memory");
                return;
        }
        for (size_t i = 0; i < k->n; i++)
                want[i] = (kube_label){k->keys[i], k->values[i]};
        r = kube_label_patch(want, k->n, info.own_labels, info.resource_version, KUBE_LABEL_PREFIX, &patch, err,
                             sizeof(err));
        kube_node_info_clear(&info);
        if (r < 0) {
                finish(k, r, resp, NULL, "labels of Node %s: %s", k->node, err);
                return;
        }
        if (r == 0) {
                finish(k, 0, resp, NULL, "labels of Node %s: nothing to change", k->node);
                return;
        }
        free(k->method);
        free(k->ctype);
        free(k->body);
        k->method = strdup("PATCH");
        k->ctype = strdup("application/merge-patch+json");
        k->body = patch;
        k->kind = CALL_SYNC_PATCH;
        if (!k->method || !k->ctype) {
                finish(k, -ENOMEM, resp, NULL, "out of memory");
                return;
        }
        call_start(k, false);
}

static void on_reply(const http_response *resp, void *userdata)
{
        call *k = userdata;
        kube_client *c = k->c;
        kube_status st;

        k->req = NULL;
        if (resp->error < 0) {
                finish(k, resp->error, resp, NULL, "%s %s: %s", k->method, k->path, resp->error_text);
                return;
        }
        if (resp->status == 401 && !k->reauthed && c->cfg.token_file) {
                /* maybe rotated: unless another call already read a new token since this
                 * one went out, read the file again now; try once more if it changed */
                const char *t;
                k->reauthed = true;
                if (k->sent_gen == c->token_gen) {
                        int r = token_get(c, true, &t);
                        if (r < 0) {
                                finish(k, r, resp, NULL, "%s %s: HTTP 401, and the token file %s cannot be read: %s",
                                       k->method, k->path, c->cfg.token_file, strerror(-r));
                                return;
                        }
                }
                if (k->sent_gen != c->token_gen) {
                        call_start(k, false);
                        return;
                }
                kube_status_parse(resp->body, resp->body_len, resp->status, &st);
                finish(k, -EACCES, resp, &st, "%s %s: HTTP 401 (the token in %s was read again and is unchanged): %s",
                       k->method, k->path, c->cfg.token_file, st.message);
                return;
        }
        if (resp->status >= 200 && resp->status < 300) {
                if (k->kind == CALL_SYNC_GET) {
                        sync_got_node(k, resp);
                        return;
                }
                if (k->kind == CALL_SYNC_PATCH)
                        k->changed = true;
                finish(k, 0, resp, NULL, "%s %s: HTTP %ld", k->method, k->path, resp->status);
                return;
        }
        if (resp->status == 409 && k->kind == CALL_SYNC_PATCH && k->conflicts < KUBE_CONFLICT_RETRIES) {
                /* the Node changed between our GET and PATCH: look again */
                k->conflicts++;
                k->kind = CALL_SYNC_GET;
                free(k->method);
                free(k->body);
                free(k->ctype);
                k->body = k->ctype = NULL;
                k->method = strdup("GET");
                if (!k->method) {
                        finish(k, -ENOMEM, resp, NULL, "out of memory");
                        return;
                }
                call_start(k, false);
                return;
        }
        kube_status_parse(resp->body, resp->body_len, resp->status, &st);
        finish(k, status_errno(k, resp->status), resp, &st, "%s %s: HTTP %ld%s%s: %s", k->method, k->path, resp->status,
               st.reason[0] ? " " : "", st.reason, st.message);
}

/* first: called from the public call (errors are returned, no callback); else from a
 * reply (errors finish the call). */
static int call_start(call *k, bool first)
{
        kube_client *c = k->c;
        char url[2304], auth[KUBE_TOKEN_MAX + 32], ct[128];
        const char *hdrs[3], *token;
        size_t nh = 0;
        int r = token_get(c, false, &token);

        if (r < 0) {
                if (first)
                        return r;
                finish(k, r, NULL, NULL, "%s %s: cannot read the token file %s: %s", k->method, k->path,
                       c->cfg.token_file, strerror(-r));
                return r;
        }
        snprintf(url, sizeof(url), "%s%s", c->cfg.server, k->path);
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        k->sent_gen = c->token_gen;
        hdrs[nh++] = auth;
        hdrs[nh++] = "Accept: application/json";
        if (k->ctype) {
                snprintf(ct, sizeof(ct), "Content-Type: %s", k->ctype);
                hdrs[nh++] = ct;
        }
        r = http_submit(c->http,
                        &(http_options){.method = k->method, .url = url, .headers = hdrs, .n_headers = nh,
                                        .body = k->body, .body_len = k->body ? strlen(k->body) : 0,
                                        .ca_file = c->cfg.ca_file, .ca_pem = c->cfg.ca_pem,
                                        .ca_pem_len = c->cfg.ca_pem_len,
                                        .connect_timeout_ms = c->o.connect_timeout_ms, .timeout_ms = c->o.timeout_ms,
                                        .max_body = KUBE_MAX_REPLY},
                        on_reply, k, &k->req);
        explicit_bzero(auth, sizeof(auth));
        if (r < 0 && !first)
                finish(k, r, NULL, NULL, "%s %s: cannot start the request", k->method, k->path);
        return r;
}

/* ---- public ----------------------------------------------------------------------- */

int kube_client_new(loop *l, http_client *h, const kube_config *cfg, const kube_client_options *o,
                    kube_client **ret)
{
        kube_client *c;

        if (!l || !h || !cfg || !ret || !cfg->server || (!cfg->ca_file && !cfg->ca_pem) ||
            (!cfg->token && !cfg->token_file))
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if (kube_config_copy(cfg, &c->cfg) < 0) {
                free(c);
                return -ENOMEM;
        }
        c->loop = l;
        c->http = h;
        if (o)
                c->o = *o;
        c->o.connect_timeout_ms = c->o.connect_timeout_ms ? c->o.connect_timeout_ms : 5000;
        c->o.timeout_ms = c->o.timeout_ms ? c->o.timeout_ms : 15000;
        *ret = c;
        return 0;
}

void kube_cancel(kube_client *c, const void *userdata)
{
        if (!c)
                return;
        for (call **p = &c->calls; *p;) {
                call *k = *p;
                if (k->userdata != userdata) {
                        p = &k->next;
                        continue;
                }
                *p = k->next;
                call_free(k);
        }
}

void kube_client_free(kube_client *c)
{
        if (!c)
                return;
        while (c->calls) {
                call *k = c->calls;
                c->calls = k->next;
                call_free(k);
        }
        token_drop(c);
        kube_config_clear(&c->cfg);
        free(c);
}

static call *call_new(kube_client *c, call_kind kind, const char *method, const char *path, const char *ctype,
                      const char *body, kube_done_fn fn, void *userdata)
{
        call *k = calloc(1, sizeof(*k));
        if (!k)
                return NULL;
        *k = (call){.c = c, .kind = kind, .fn = fn, .userdata = userdata};
        k->method = strdup(method);
        k->path = strdup(path);
        k->ctype = ctype ? strdup(ctype) : NULL;
        k->body = body ? strdup(body) : NULL;
        if (!k->method || !k->path || (ctype && !k->ctype) || (body && !k->body)) {
                call_free(k);
                return NULL;
        }
        return k;
}

/* Link and start; on failure nothing is linked, no callback runs. */
static int call_submit(call *k)
{
        kube_client *c = k->c;
        k->next = c->calls;
        c->calls = k;
        int r = call_start(k, true);
        if (r < 0) {
                call_unlink(c, k);
                call_free(k);
        }
        return r;
}

static bool path_ok(const char *p)
{
        if (!p || p[0] != '/')
                return false;
        for (; *p; p++)
                if (*p <= 0x20 || *p >= 0x7f)
                        return false;
        return true;
}

int kube_request(kube_client *c, const char *method, const char *path, const char *content_type,
                 const char *body, kube_done_fn fn, void *userdata)
{
        if (!c || !method || !path_ok(path) || !fn || (body && !content_type))
                return -EINVAL;
        call *k = call_new(c, CALL_RAW, method, path, content_type, body, fn, userdata);
        return k ? call_submit(k) : -ENOMEM;
}

int kube_node_sync_labels(kube_client *c, const char *node, const kube_label *labels, size_t n,
                          kube_done_fn fn, void *userdata)
{
        char path[KUBE_NAME_MAX + 32], err[256], *probe = NULL;

        if (!c || !kube_name_ok(node) || !fn || n > KUBE_MAX_LABELS || (n && !labels))
                return -EINVAL;
        /* refuse bad labels now rather than after a round trip */
        int r = kube_label_patch(labels, n, NULL, NULL, KUBE_LABEL_PREFIX, &probe, err, sizeof(err));
        free(probe);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
        call *k = call_new(c, CALL_SYNC_GET, "GET", path, NULL, NULL, fn, userdata);
        if (!k)
                return -ENOMEM;
        k->node = strdup(node);
        k->keys = calloc(n ? n : 1, sizeof(char *));
        k->values = calloc(n ? n : 1, sizeof(char *));
        if (!k->node || !k->keys || !k->values) {
                call_free(k);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                k->keys[i] = strdup(labels[i].key);
                k->values[i] = labels[i].value ? strdup(labels[i].value) : NULL;
                k->n = i + 1;
                if (!k->keys[i] || (labels[i].value && !k->values[i])) {
                        call_free(k);
                        return -ENOMEM;
                }
        }
        return call_submit(k);
}

int kube_event_create(kube_client *c, const kube_event *e, kube_done_fn fn, void *userdata)
{
        _cleanup_free_ char *body = NULL;
        char err[256];
        int r;

        if (!c || !e || !fn)
                return -EINVAL;
        r = kube_event_body(e, &body, err, sizeof(err));
        if (r < 0)
                return r;
        return kube_request(c, "POST", "/apis/events.k8s.io/v1/namespaces/" KUBE_EVENT_NAMESPACE "/events",
                            "application/json", body, fn, userdata);
}

int kube_event_patch_series(kube_client *c, const char *name, int32_t count, int64_t last_us,
                            kube_done_fn fn, void *userdata)
{
        _cleanup_free_ char *body = NULL;
        char path[KUBE_NAME_MAX + 64];
        int r;

        if (!c || !kube_name_ok(name) || !fn)
                return -EINVAL;
        r = kube_event_series_patch(count, last_us, &body);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/" KUBE_EVENT_NAMESPACE "/events/%s", name);
        return kube_request(c, "PATCH", path, "application/merge-patch+json", body, fn, userdata);
}
