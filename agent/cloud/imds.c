/* SPDX-License-Identifier: Apache-2.0 */
/* The metadata lookups: one small state machine per lookup (AWS: token → local-ipv4s →
 * subnet; Azure: network document), one shared IMDSv2 token with its waiters, retries on
 * loop timers. Owns its lookups and the token; never logs, never puts the token into a
 * message. */
#include "imds.h"

#include "cleanup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum step { ST_IPV4S, ST_SUBNET, ST_AZURE } step;

typedef struct lookup {
        struct lookup *next;
        imds *m;
        imds_cloud cloud;
        uint8_t mac[6];
        step step;
        unsigned attempt;      /* failed attempts of the current request */
        bool reauthed;         /* one fresh token after a 401 */
        bool waiting_token;
        uint64_t token_gen;    /* the token generation the request carried */
        uint32_t ipv4;
        http_request *req;
        int timer_fd;
        imds_done_fn fn;
        void *userdata;
} lookup;

struct imds {
        loop *loop;
        http_client *http;
        imds_options o;
        char base[256];
        char token[IMDS_TOKEN_MAX];
        bool token_valid;
        uint64_t token_expires_ms;
        uint64_t token_gen;
        unsigned tokens_fetched;
        http_request *token_req;
        unsigned token_attempt;
        int token_timer;
        lookup *lookups;
        unsigned busy;
        bool doomed;
};

static void imds_destroy(imds *m);

const char *imds_base_url(void)
{
        const char *e = getenv(IMDS_ENV_URL);
        return e && *e ? e : IMDS_DEFAULT_BASE_URL;
}

unsigned imds_tokens_fetched(const imds *m) { return m ? m->tokens_fetched : 0; }

static uint64_t now_ms(const imds *m) { return m->o.now_ms ? m->o.now_ms() : loop_now_ms(); }

/* ---- completion ------------------------------------------------------------------- */

static void lookup_unlink(imds *m, lookup *k)
{
        for (lookup **p = &m->lookups; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        return;
                }
}

static void lookup_free(lookup *k)
{
        if (k->req)
                http_cancel(k->m->http, k->req);
        if (k->timer_fd >= 0)
                loop_remove_timer(k->m->loop, k->timer_fd);
        free(k);
}

static void leave(imds *m)
{
        if (--m->busy == 0 && m->doomed)
                imds_destroy(m);
}

static void lookup_end(lookup *k, int error, const imds_addr *a, const char *msg)
{
        imds *m = k->m;

        lookup_unlink(m, k);
        k->req = NULL; /* finished or never started */
        m->busy++;
        if (!m->doomed)
                k->fn(error, a, msg, k->userdata);
        lookup_free(k);
        leave(m);
}

static void lookup_fail(lookup *k, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lookup_fail(lookup *k, int error, const char *fmt, ...)
{
        char msg[IMDS_MSG_LEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        lookup_end(k, error, NULL, msg);
}

/* ---- requests --------------------------------------------------------------------- */

static const char *step_path(const lookup *k, char *buf, size_t len)
{
        char mac[18];
        switch (k->step) {
        case ST_IPV4S:
                snprintf(buf, len, "/latest/meta-data/network/interfaces/macs/%s/local-ipv4s", imds_aws_mac(k->mac, mac));
                break;
        case ST_SUBNET:
                snprintf(buf, len, "/latest/meta-data/network/interfaces/macs/%s/subnet-ipv4-cidr-block",
                         imds_aws_mac(k->mac, mac));
                break;
        case ST_AZURE:
                snprintf(buf, len, "/metadata/instance/network?api-version=%s", IMDS_AZURE_API_VERSION);
                break;
        }
        return buf;
}

static const char *cloud_name(const lookup *k) { return k->cloud == IMDS_AWS ? "AWS IMDS" : "Azure IMDS"; }

static bool retryable_error(int e) { return e != -EFBIG && e != -EINVAL && e != -ENOMEM && e != -EKEYREJECTED && e != -ENOKEY; }
static bool retryable_status(long s) { return s >= 500 || s == 429 || s == 410 || s == 408; }

static uint32_t backoff(const imds *m, unsigned attempt)
{
        uint64_t d = m->o.backoff_ms;
        for (unsigned i = 1; i < attempt && d < m->o.backoff_max_ms; i++)
                d *= 2;
        return (uint32_t)(d < m->o.backoff_max_ms ? d : m->o.backoff_max_ms);
}

static void lookup_run(lookup *k);
static void aws_need_token(lookup *k);

static int on_lookup_retry(loop *l, void *userdata)
{
        lookup *k = userdata;
        loop_remove_timer(l, k->timer_fd);
        k->timer_fd = -1;
        if (k->cloud == IMDS_AWS)
                aws_need_token(k);
        else
                lookup_run(k);
        return 0;
}

/* Count a failed attempt; schedule the next one, or give up with what the last said. */
static void lookup_retry(lookup *k, int error, const char *what)
{
        char path[160];
        imds *m = k->m;

        if (++k->attempt >= m->o.attempts) {
                lookup_fail(k, error, "%s GET %s: %s (after %u attempts)", cloud_name(k),
                            step_path(k, path, sizeof(path)), what, k->attempt);
                return;
        }
        int r = loop_add_timer(m->loop, backoff(m, k->attempt), 0, on_lookup_retry, k, &k->timer_fd);
        if (r < 0)
                lookup_fail(k, r, "%s: cannot arm a retry timer", cloud_name(k));
}

static void on_lookup_reply(const http_response *r, void *userdata)
{
        lookup *k = userdata;
        imds *m = k->m;
        char path[160], err[IMDS_ERR_LEN] = "", what[HTTP_ERR_LEN + 32];
        ipv4_cidr subnet;
        imds_addr a;
        int e;

        k->req = NULL;
        step_path(k, path, sizeof(path));
        if (r->error < 0) {
                if (!retryable_error(r->error)) {
                        lookup_fail(k, r->error, "%s GET %s: %s", cloud_name(k), path, r->error_text);
                        return;
                }
                lookup_retry(k, r->error, r->error_text);
                return;
        }
        if (r->status == 401 && k->cloud == IMDS_AWS && !k->reauthed) {
                /* the token expired or was revoked: one fresh token, then this request again */
                k->reauthed = true;
                if (m->token_gen == k->token_gen)
                        m->token_valid = false;
                aws_need_token(k);
                return;
        }
        if (retryable_status(r->status)) {
                snprintf(what, sizeof(what), "HTTP %ld", r->status);
                lookup_retry(k, -EIO, what);
                return;
        }
        if (r->status == 404) {
                lookup_fail(k, -ENOENT, "%s GET %s: HTTP 404 (no such interface or item in the instance metadata)",
                            cloud_name(k), path);
                return;
        }
        if (r->status == 401 || r->status == 403) {
                lookup_fail(k, -EACCES, "%s GET %s: HTTP %ld%s", cloud_name(k), path, r->status,
                            k->reauthed ? " with a fresh token" : "");
                return;
        }
        if (r->status != 200) {
                lookup_fail(k, -EIO, "%s GET %s: HTTP %ld", cloud_name(k), path, r->status);
                return;
        }
        switch (k->step) {
        case ST_IPV4S:
                e = imds_aws_ipv4s_parse(r->body, r->body_len, &k->ipv4, err, sizeof(err));
                if (e < 0)
                        break;
                k->step = ST_SUBNET;
                k->attempt = 0;
                aws_need_token(k);
                return;
        case ST_SUBNET:
                e = imds_aws_subnet_parse(r->body, r->body_len, &subnet, err, sizeof(err));
                if (e == 0)
                        e = imds_addr_make(k->ipv4, subnet, &a, err, sizeof(err));
                if (e == 0) {
                        lookup_end(k, 0, &a, "");
                        return;
                }
                break;
        case ST_AZURE:
                e = imds_azure_parse(r->body, r->body_len, k->mac, &a, err, sizeof(err));
                if (e == 0) {
                        lookup_end(k, 0, &a, "");
                        return;
                }
                break;
        default:
                e = -EINVAL;
        }
        lookup_fail(k, e, "%s GET %s: %s", cloud_name(k), path, err);
}

static void lookup_run(lookup *k)
{
        imds *m = k->m;
        char path[160], url[512], tok[IMDS_TOKEN_MAX + 40];
        const char *hdrs[1];
        int r;

        snprintf(url, sizeof(url), "%s%s", m->base, step_path(k, path, sizeof(path)));
        if (k->cloud == IMDS_AWS) {
                snprintf(tok, sizeof(tok), "X-aws-ec2-metadata-token: %s", m->token);
                hdrs[0] = tok;
                k->token_gen = m->token_gen;
        } else {
                hdrs[0] = "Metadata: true";
        }
        r = http_submit(m->http,
                        &(http_options){.url = url, .headers = hdrs, .n_headers = 1,
                                        .connect_timeout_ms = m->o.connect_timeout_ms,
                                        .timeout_ms = m->o.timeout_ms,
                                        .max_body = k->cloud == IMDS_AWS ? IMDS_MAX_TEXT : IMDS_MAX_JSON},
                        on_lookup_reply, k, &k->req);
        explicit_bzero(tok, sizeof(tok));
        if (r < 0)
                lookup_fail(k, r, "%s GET %s: cannot start the request", cloud_name(k), path);
}

/* ---- the IMDSv2 token ------------------------------------------------------------- */

static bool token_fresh(const imds *m)
{
        uint64_t ttl_ms = (uint64_t)m->o.token_ttl_s * 1000, margin = ttl_ms / 10;
        if (margin > 60000)
                margin = 60000;
        return m->token_valid && now_ms(m) + margin < m->token_expires_ms;
}

static void token_fetch(imds *m);

/* Every lookup waiting for the token: go on (error == 0) or fail with msg. */
static void token_wake(imds *m, int error, const char *msg)
{
        m->busy++;
        for (lookup *k = m->lookups, *next; k && !m->doomed; k = next) {
                next = k->next;
                if (!k->waiting_token)
                        continue;
                k->waiting_token = false;
                if (error < 0)
                        lookup_fail(k, error, "AWS IMDS PUT /latest/api/token: %s", msg);
                else
                        lookup_run(k);
        }
        leave(m);
}

static int on_token_retry(loop *l, void *userdata)
{
        imds *m = userdata;
        loop_remove_timer(l, m->token_timer);
        m->token_timer = -1;
        token_fetch(m);
        return 0;
}

static void on_token_reply(const http_response *r, void *userdata)
{
        imds *m = userdata;
        char what[HTTP_ERR_LEN + 64];
        int e = 0;

        m->token_req = NULL;
        if (r->error == 0 && r->status == 200) {
                e = imds_aws_token_parse(r->body, r->body_len, m->token, sizeof(m->token));
                if (e == 0) {
                        m->token_valid = true;
                        m->token_gen++;
                        m->tokens_fetched++;
                        m->token_attempt = 0;
                        m->token_expires_ms = now_ms(m) + (uint64_t)m->o.token_ttl_s * 1000;
                        token_wake(m, 0, NULL);
                        return;
                }
                token_wake(m, -EBADMSG, e == -E2BIG ? "the token is too long" : "the reply is not a token");
                return;
        }
        if (r->error < 0)
                snprintf(what, sizeof(what), "%s", r->error_text);
        else
                snprintf(what, sizeof(what), "HTTP %ld", r->status);
        bool retry = r->error < 0 ? retryable_error(r->error) : retryable_status(r->status);
        if (retry && ++m->token_attempt < m->o.attempts) {
                if (loop_add_timer(m->loop, backoff(m, m->token_attempt), 0, on_token_retry, m, &m->token_timer) == 0)
                        return;
        }
        if (retry) {
                size_t n = strlen(what);
                snprintf(what + n, sizeof(what) - n, " (after %u attempts)", m->token_attempt);
        }
        m->token_attempt = 0;
        e = r->error < 0 ? r->error : r->status == 401 || r->status == 403 ? -EACCES : r->status == 404 ? -ENOENT : -EIO;
        token_wake(m, e, what);
}

static void token_fetch(imds *m)
{
        char url[512], ttl[64];
        const char *hdrs[1] = {ttl};
        int r;

        snprintf(url, sizeof(url), "%s/latest/api/token", m->base);
        snprintf(ttl, sizeof(ttl), "X-aws-ec2-metadata-token-ttl-seconds: %u", m->o.token_ttl_s);
        r = http_submit(m->http,
                        &(http_options){.method = "PUT", .url = url, .headers = hdrs, .n_headers = 1,
                                        .connect_timeout_ms = m->o.connect_timeout_ms,
                                        .timeout_ms = m->o.timeout_ms, .max_body = IMDS_MAX_TEXT},
                        on_token_reply, m, &m->token_req);
        if (r < 0)
                token_wake(m, r, "cannot start the request");
}

static void aws_need_token(lookup *k)
{
        imds *m = k->m;

        if (token_fresh(m)) {
                lookup_run(k);
                return;
        }
        k->waiting_token = true;
        if (!m->token_req && m->token_timer < 0)
                token_fetch(m);
}

/* ---- the client ------------------------------------------------------------------- */

int imds_new(loop *l, http_client *h, const imds_options *o, imds **ret)
{
        imds *m;
        const char *base;
        size_t n;

        if (!l || !h || !ret)
                return -EINVAL;
        base = o && o->base_url ? o->base_url : imds_base_url();
        n = strlen(base);
        while (n > 0 && base[n - 1] == '/')
                n--;
        if (strncmp(base, "http://", 7) != 0 || n <= 7 || n >= sizeof(m->base))
                return -EINVAL;
        if (o && o->token_ttl_s > IMDS_AWS_TOKEN_TTL_MAX)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->loop = l;
        m->http = h;
        m->token_timer = -1;
        if (o)
                m->o = *o;
        m->o.connect_timeout_ms = m->o.connect_timeout_ms ? m->o.connect_timeout_ms : 1000;
        m->o.timeout_ms = m->o.timeout_ms ? m->o.timeout_ms : 2000;
        m->o.attempts = m->o.attempts ? m->o.attempts : 4;
        m->o.backoff_ms = m->o.backoff_ms ? m->o.backoff_ms : 200;
        m->o.backoff_max_ms = m->o.backoff_max_ms ? m->o.backoff_max_ms : 5000;
        m->o.token_ttl_s = m->o.token_ttl_s ? m->o.token_ttl_s : IMDS_AWS_TOKEN_TTL_MAX;
        m->o.base_url = NULL;
        memcpy(m->base, base, n);
        m->base[n] = '\0';
        *ret = m;
        return 0;
}

static void imds_destroy(imds *m)
{
        while (m->lookups) {
                lookup *k = m->lookups;
                m->lookups = k->next;
                lookup_free(k);
        }
        if (m->token_req)
                http_cancel(m->http, m->token_req);
        if (m->token_timer >= 0)
                loop_remove_timer(m->loop, m->token_timer);
        explicit_bzero(m->token, sizeof(m->token));
        free(m);
}

void imds_free(imds *m)
{
        if (!m)
                return;
        if (m->busy > 0) {
                m->doomed = true;
                return;
        }
        imds_destroy(m);
}

int imds_lookup(imds *m, imds_cloud cloud, const uint8_t mac[6], imds_done_fn fn, void *userdata)
{
        lookup *k;

        if (!m || !mac || !fn || m->doomed || (cloud != IMDS_AWS && cloud != IMDS_AZURE))
                return -EINVAL;
        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        *k = (lookup){.m = m, .cloud = cloud, .step = cloud == IMDS_AWS ? ST_IPV4S : ST_AZURE,
                      .timer_fd = -1, .fn = fn, .userdata = userdata};
        memcpy(k->mac, mac, 6);
        k->next = m->lookups;
        m->lookups = k;
        /* start from the loop, so the callback never runs inside this call */
        int r = loop_add_timer(m->loop, 0, 0, on_lookup_retry, k, &k->timer_fd);
        if (r < 0) {
                lookup_unlink(m, k);
                free(k);
                return r;
        }
        return 0;
}
