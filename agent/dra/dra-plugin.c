/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA kubelet plugin (dra-plugin.h): two servers of common/grpc's engine (its
 * completion queue, pump thread, socket life cycle and protections), the calls (parsed by
 * dra-request.c), the ResourceClaim reads through agent/kube, the CDI specs
 * (deviceplugin/dp-cdi.c) and the checkpoint. Every call is handled on the loop thread; a
 * prepare waiting for the API server is parked, never waited for. Never logs: messages go
 * to the owner's log_fn. */
#include "dra-plugin.h"

#include "array.h"
#include "cleanup.h"
#include "dp-cdi.h"
#include "dra-request.h"
#include "rpc-server.h"
#include "rpc-unary.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_GET_INFO, M_NOTIFY, M_PREP_V1, M_UNPREP_V1, M_PREP_V1B1, M_UNPREP_V1B1, _M_MAX };
enum { S_PLUGIN, S_REG, _S_MAX };

/* Each server's methods, in the order of the enum above (the plugin's from M_PREP_V1). */
static const char *const reg_methods[] = {
        "/pluginregistration.Registration/GetInfo",
        "/pluginregistration.Registration/NotifyRegistrationStatus",
};
static const char *const plugin_methods[] = {
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources",
};

typedef struct call call;

/* One ResourceClaim read, waiting for its turn (queued) or in flight (started: the
 * userdata of its kube_request; cancelled with kube_cancel when its call goes first). */
typedef struct claim_get {
        dra_plugin *p;
        call *c;
        size_t i;
        bool started;
        struct claim_get *next;   /* the wait queue */
        char path[512];
} claim_get;

typedef struct claim_state {
        dra_claim_ref ref;
        char error[DRA_ERR_LEN];
        dra_result *results;
        size_t n_results;
        bool fetched;             /* results came from the API server now */
        claim_get *get;
} claim_state;

/* A call's own data (rpc_call_data of rc). */
struct call {
        dra_plugin *p;
        rpc_call *rc;
        int method;
        claim_state *claims;
        size_t n_claims, pending;
        call *next, *prev;        /* parked: waiting for the API server */
};

struct dra_plugin {
        loop *l;
        hostfs h;
        char node[DRA_NAME_LEN];
        kube_client *kube;
        char cdi_dir[PATH_MAX];
        bool nic, core;
        dra_log_fn log;
        void (*changed)(void *ud);
        void *ud;
        bool registered;
        char sock[_S_MAX][PATH_MAX];      /* host paths (under --root) */
        rpc_engine *rpc;                  /* the completion queue, its pump, the servers */
        rpc_server *srv[_S_MAX];          /* NULL once gRPC released it */
        bool stopping;
        call *parked;
        claim_get *rq_head, *rq_tail;     /* reads waiting for a slot, oldest first */
        size_t n_queued, n_reading;       /* n_reading <= DRA_MAX_READS */
        device_list nics, cores;
        dp_alloc_config cfg;
        dra_prepared *prepared;
        size_t n_prepared, cap_prepared;
        bool checkpoint_bad;
        char checkpoint_err[DRA_ERR_LEN];
        rpc_ratelimit refusals;           /* refusal lines; unsaid: not logged since the last that was */
};

static void vlogf_(dra_plugin *p, int level, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void vlogf_(dra_plugin *p, int level, const char *fmt, va_list ap)
{
        char msg[1024];
        if (!p->log)
                return;
        vsnprintf(msg, sizeof(msg), fmt, ap);
        p->log(level, msg, p->ud);
}

static void logf_(dra_plugin *p, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(dra_plugin *p, int level, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vlogf_(p, level, fmt, ap);
        va_end(ap);
}

/* A refusal's line (a call or a claim the kubelet asked for and did not get): at most
 * DRA_REFUSAL_LINES per DRA_REFUSAL_WINDOW_MS, the rest counted and said in one line with
 * the next that is logged. A caller sending thousands of bad calls costs a few lines. */
static void refusal_log(dra_plugin *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refusal_log(dra_plugin *p, const char *fmt, ...)
{
        va_list ap;

        if (!rpc_ratelimit_take(&p->refusals, loop_now_ms(), DRA_REFUSAL_LINES, DRA_REFUSAL_WINDOW_MS, false))
                return;
        if (p->refusals.unsaid) {
                logf_(p, 1, "DRA: %llu more refusals not logged (at most %u lines every %u s)",
                      (unsigned long long)p->refusals.unsaid, DRA_REFUSAL_LINES, DRA_REFUSAL_WINDOW_MS / 1000);
                p->refusals.unsaid = 0;
        }
        va_start(ap, fmt);
        vlogf_(p, 1, fmt, ap);
        va_end(ap);
}

/* ---- calls ---- */

/* The engine frees a call: its claims (a parked call's reads are gone by then). */
static void call_free(rpc_call *rc, void *ud)
{
        call *c = rpc_call_data(rc);
        (void)ud;
        if (!c->p)
                return; /* never handled */
        for (size_t i = 0; i < c->n_claims; i++) {
                if (c->claims[i].get)
                        c->claims[i].get->c = NULL; /* not reached: only parked calls have reads */
                free(c->claims[i].results);
        }
        free(c->claims);
}

static void reply(call *c, const uint8_t *resp, size_t len, grpc_status_code code, const char *msg)
{
        rpc_call_reply(c->rc, resp, len, code, msg);
}

/* ---- the checkpoint ---- */

/* The answer an encoder made (r < 0: it ran out of memory). */
static void reply_encoded(call *c, int r, const uint8_t *buf, size_t len)
{
        if (r < 0)
                reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        else
                reply(c, buf, len, GRPC_STATUS_OK, NULL);
}

static dra_prepared *prepared_find(dra_plugin *p, const char *uid)
{
        for (size_t i = 0; i < p->n_prepared; i++)
                if (strcmp(p->prepared[i].ref.uid, uid) == 0)
                        return &p->prepared[i];
        return NULL;
}

static int checkpoint_write(dra_plugin *p)
{
        _cleanup_free_ char *text = dra_checkpoint_format(p->prepared, p->n_prepared);
        int r;
        if (!text)
                return -ENOMEM;
        if ((r = hostfs_mkdir_p(&p->h, DRA_CHECKPOINT_DIR)) < 0)
                return r;
        return hostfs_write_atomic(&p->h, DRA_CHECKPOINT, text, 0600);
}

static void checkpoint_load(dra_plugin *p)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        char err[DRA_ERR_LEN];
        int r = hostfs_read_alloc(&p->h, DRA_CHECKPOINT, DRA_MAX_CHECKPOINT + 1, &text, &len);
        if (r == -ENOENT)
                return;
        if (r >= 0)
                r = dra_checkpoint_parse(text, len, &p->prepared, &p->n_prepared, err, sizeof(err));
        else
                snprintf(err, sizeof(err), "%s", strerror(-r));
        if (r < 0) {
                p->checkpoint_bad = true;
                snprintf(p->checkpoint_err, sizeof(p->checkpoint_err), "the checkpoint %s cannot be used (%.400s)",
                         DRA_CHECKPOINT, err);
                logf_(p, 2, "DRA: %s: no claim is prepared until it is repaired or removed (unprepare still "
                            "removes the CDI spec)", p->checkpoint_err);
                return;
        }
        p->cap_prepared = p->n_prepared;
        logf_(p, 0, "DRA: %zu prepared claims in the checkpoint %s", p->n_prepared, DRA_CHECKPOINT);
}

/* ---- prepare ---- */

static const device_entry *device_find(const device_list *l, device_kind kind, const char *name, size_t *ret_idx)
{
        char b[DRA_DEV_LEN + 16];
        for (size_t i = 0; i < l->n; i++)
                if (dra_device_name(kind, &l->items[i], b, sizeof(b)) >= 0 && strcmp(b, name) == 0) {
                        *ret_idx = i;
                        return &l->items[i];
                }
        return NULL;
}

/* The CDI spec of one claim from its results: every device known, healthy and served
 * here. err says which device and why. */
static int claim_spec(dra_plugin *p, const dra_claim_ref *ref, const dra_result *res, size_t n, char *err,
                      size_t errlen)
{
        _cleanup_free_ size_t *nic_idx = calloc(n, sizeof(size_t));
        _cleanup_free_ size_t *core_idx = calloc(n, sizeof(size_t));
        _cleanup_free_ const device_entry **nics = calloc(n, sizeof(*nics));
        char **env1 = NULL, **env2 = NULL;
        size_t nn = 0, nc = 0, ne1 = 0, ne2 = 0;
        int r;

        if (!nic_idx || !core_idx || !nics)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t idx;
                const device_entry *d;
                bool is_nic = strncmp(res[i].device, "nic-", 4) == 0;
                if ((d = device_find(is_nic ? &p->nics : &p->cores, is_nic ? DEVICE_NIC : DEVICE_CORE, res[i].device,
                                     &idx)) == NULL) {
                        snprintf(err, errlen, "device %s (request %s) is not a device of node %s", res[i].device,
                                 res[i].request, p->node);
                        return -ENODEV;
                }
                if (is_nic ? !p->nic : !p->core) {
                        snprintf(err, errlen, "device %s: %s are not served through DRA on this node", res[i].device,
                                 is_nic ? "NICs" : "cores");
                        return -ENODEV;
                }
                if (!device_healthy(d)) {
                        snprintf(err, errlen, "device %s is unhealthy", res[i].device);
                        return -ENODEV;
                }
                for (size_t k = 0; k < (is_nic ? nn : nc); k++)
                        if ((is_nic ? nic_idx : core_idx)[k] == idx) {
                                snprintf(err, errlen, "device %s is allocated twice", res[i].device);
                                return -EINVAL;
                        }
                if (is_nic) {
                        nics[nn] = d;
                        nic_idx[nn++] = idx;
                } else {
                        core_idx[nc++] = idx;
                }
        }
        if ((nn && (r = dp_alloc_env(DEVICE_NIC, &p->cfg, &p->nics, nic_idx, nn, &env1, &ne1)) < 0) ||
            (nc && (r = dp_alloc_env(DEVICE_CORE, &p->cfg, &p->cores, core_idx, nc, &env2, &ne2)) < 0)) {
                dp_env_free(env1, ne1);
                return r;
        }
        _cleanup_free_ char **env = calloc(ne1 + ne2 + 1, sizeof(char *));
        if (!env) {
                r = -ENOMEM;
        } else {
                if (ne1)
                        memcpy(env, env1, ne1 * sizeof(char *));
                if (ne2)
                        memcpy(env + ne1, env2, ne2 * sizeof(char *));
                r = dp_cdi_write_claim(&p->h, p->cdi_dir, DRA_DRIVER, ref->uid,
                                       nn ? p->cfg.hugepage_host_dir : "", nics, nn, env, ne1 + ne2);
                if (r < 0)
                        snprintf(err, errlen, "writing its CDI spec under %.200s: %s", p->cdi_dir, strerror(-r));
        }
        dp_env_free(env1, ne1);
        dp_env_free(env2, ne2);
        return r;
}

static void prepare_finish(call *c)
{
        dra_plugin *p = c->p;
        _cleanup_free_ dra_answer *ans = calloc(c->n_claims, sizeof(*ans));
        _cleanup_free_ bool *fresh = calloc(c->n_claims, sizeof(bool)); /* recorded by this call */
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0, added = 0;
        int r;

        if (!ans || !fresh) {
                reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        for (size_t i = 0; i < c->n_claims; i++) {
                claim_state *s = &c->claims[i];
                if (!s->fetched || s->error[0])
                        continue;
                if (claim_spec(p, &s->ref, s->results, s->n_results, s->error, sizeof(s->error)) < 0) {
                        if (!s->error[0])
                                snprintf(s->error, sizeof(s->error), "out of memory");
                        continue;
                }
                if (prepared_find(p, s->ref.uid))
                        continue; /* recorded already (or a second prepare of it finished first) */
                if (ARRAY_GROW(p->prepared, p->cap_prepared, p->n_prepared + 1, 16) < 0) {
                        snprintf(s->error, sizeof(s->error), "out of memory");
                        continue;
                }
                dra_result *copy = malloc(s->n_results * sizeof(*copy));
                if (!copy) {
                        snprintf(s->error, sizeof(s->error), "out of memory");
                        continue;
                }
                memcpy(copy, s->results, s->n_results * sizeof(*copy));
                p->prepared[p->n_prepared++] = (dra_prepared){ .ref = s->ref, .results = copy, .n_results = s->n_results };
                fresh[i] = true;
                added++;
        }
        if (added && (r = checkpoint_write(p)) < 0) {
                /* not recorded: not prepared (its spec goes again); a claim recorded by an
                 * earlier call stays as it was */
                for (size_t i = 0; i < c->n_claims; i++) {
                        claim_state *s = &c->claims[i];
                        dra_prepared *e = fresh[i] ? prepared_find(p, s->ref.uid) : NULL;
                        if (!e)
                                continue;
                        (void)dp_cdi_remove_claim(&p->h, p->cdi_dir, DRA_DRIVER, s->ref.uid);
                        dra_prepared_clear(e);
                        *e = p->prepared[--p->n_prepared];
                        snprintf(s->error, sizeof(s->error), "writing the checkpoint %s: %s", DRA_CHECKPOINT,
                                 strerror(-r));
                }
        }
        for (size_t i = 0; i < c->n_claims; i++) {
                claim_state *s = &c->claims[i];
                ans[i] = (dra_answer){ .uid = s->ref.uid, .error = s->error, .results = s->results,
                                       .n_results = s->n_results };
                if (s->error[0])
                        refusal_log(p, "DRA: claim %s/%s (%s) not prepared: %s", s->ref.ns, s->ref.name, s->ref.uid,
                              s->error);
                else if (s->fetched)
                        logf_(p, 0, "DRA: claim %s/%s (%s) prepared: %zu devices", s->ref.ns, s->ref.name, s->ref.uid,
                              s->n_results);
        }
        r = dra_encode_prepare(ans, c->n_claims, &buf, &len);
        reply_encoded(c, r, buf, len);
}

static void unpark(call *c)
{
        dra_plugin *p = c->p;
        if (c->prev)
                c->prev->next = c->next;
        else if (p->parked == c)
                p->parked = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->next = c->prev = NULL;
}

/* A read ended (answered, failed, or never started): its claim's result, and the call
 * answered once it has all of them. */
static void claim_done(claim_get *g, const kube_result *kr, int start_error)
{
        call *c = g->c;
        if (!c) {
                free(g);
                return;
        }
        claim_state *s = &c->claims[g->i];
        s->get = NULL;
        free(g);
        if (start_error < 0)
                snprintf(s->error, sizeof(s->error), "reading ResourceClaim %s/%s: %s", s->ref.ns, s->ref.name,
                         strerror(-start_error));
        else if (kr->error < 0)
                snprintf(s->error, sizeof(s->error), "reading ResourceClaim %s/%s: %s", s->ref.ns, s->ref.name,
                         kr->message && *kr->message ? kr->message : strerror(-kr->error));
        else if (dra_claim_parse(kr->body, kr->body_len, &s->ref, c->p->node, &s->results, &s->n_results, s->error,
                                 sizeof(s->error)) >= 0)
                s->fetched = true;
        if (--c->pending == 0) {
                unpark(c);
                prepare_finish(c);
        }
}

static void on_claim(const kube_result *kr, void *ud);

/* Start queued reads while fewer than DRA_MAX_READS are in flight. */
static void reads_pump(dra_plugin *p)
{
        while (p->rq_head && p->n_reading < DRA_MAX_READS && !p->stopping) {
                claim_get *g = p->rq_head;
                p->rq_head = g->next;
                if (!p->rq_head)
                        p->rq_tail = NULL;
                g->next = NULL;
                p->n_queued--;
                int r = kube_request(p->kube, "GET", g->path, NULL, NULL, on_claim, g);
                if (r < 0) {
                        claim_done(g, NULL, r);
                        continue;
                }
                g->started = true;
                p->n_reading++;
        }
}

static void on_claim(const kube_result *kr, void *ud)
{
        claim_get *g = ud;
        dra_plugin *p = g->p;
        p->n_reading--;
        claim_done(g, kr, 0);
        reads_pump(p);
}

static void handle_prepare(call *c, const uint8_t *req, size_t len)
{
        dra_plugin *p = c->p;
        _cleanup_free_ dra_claim_ref *refs = NULL;
        size_t n = 0;
        char err[DRA_ERR_LEN];
        int r = dra_decode_claims("NodePrepareResources", req, len, &refs, &n, err, sizeof(err));
        if (r < 0) {
                refusal_log(p, "DRA: refused: %s", err);
                reply(c, NULL, 0, r == -ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INVALID_ARGUMENT, err);
                return;
        }
        c->claims = calloc(n, sizeof(*c->claims));
        if (!c->claims) {
                reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        c->n_claims = n;
        for (size_t i = 0; i < n; i++) {
                claim_state *s = &c->claims[i];
                s->ref = refs[i];
                const dra_prepared *e = prepared_find(p, s->ref.uid);
                if (p->checkpoint_bad) {
                        snprintf(s->error, sizeof(s->error), "%s", p->checkpoint_err);
                } else if (e) {
                        /* prepared before (the kubelet asks again after its restart, or after
                         * a reboot emptied /var/run/cdi): the recorded results, the spec
                         * written again from the devices as they are now */
                        s->results = malloc(e->n_results * sizeof(dra_result));
                        if (!s->results) {
                                snprintf(s->error, sizeof(s->error), "out of memory");
                                continue;
                        }
                        memcpy(s->results, e->results, e->n_results * sizeof(dra_result));
                        s->n_results = e->n_results;
                        s->fetched = true;
                } else if (!p->node[0]) {
                        snprintf(s->error, sizeof(s->error), "NODE_NAME is not set: the pool of this node is unknown");
                } else if (!p->kube) {
                        snprintf(s->error, sizeof(s->error), "no API server (cluster reporting is off): the "
                                                             "ResourceClaim cannot be read");
                } else if (p->n_queued >= DRA_MAX_QUEUED_READS) {
                        snprintf(s->error, sizeof(s->error),
                                 "%u ResourceClaim reads already wait for the API server: try again",
                                 DRA_MAX_QUEUED_READS);
                } else {
                        claim_get *g = calloc(1, sizeof(*g));
                        if (!g) {
                                snprintf(s->error, sizeof(s->error), "out of memory");
                                continue;
                        }
                        *g = (claim_get){ .p = p, .c = c, .i = i };
                        snprintf(g->path, sizeof(g->path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
                                 s->ref.ns, s->ref.name);
                        if (p->rq_tail)
                                p->rq_tail->next = g;
                        else
                                p->rq_head = g;
                        p->rq_tail = g;
                        p->n_queued++;
                        s->get = g;
                        c->pending++;
                }
        }
        if (c->pending) { /* parked until the API server has answered every read */
                c->next = p->parked;
                if (p->parked)
                        p->parked->prev = c;
                p->parked = c;
                /* the reads start here, never in the loop above: a read that fails to
                 * start finishes its claim, and the call only once it is parked */
                reads_pump(p);
                return;
        }
        prepare_finish(c);
}

static void handle_unprepare(call *c, const uint8_t *req, size_t len)
{
        dra_plugin *p = c->p;
        _cleanup_free_ dra_claim_ref *refs = NULL;
        _cleanup_free_ dra_answer *ans = NULL;
        _cleanup_free_ char (*errs)[DRA_ERR_LEN] = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n = 0, blen = 0;
        bool changed = false;
        char err[DRA_ERR_LEN];
        int r = dra_decode_claims("NodeUnprepareResources", req, len, &refs, &n, err, sizeof(err));
        if (r < 0) {
                refusal_log(p, "DRA: refused: %s", err);
                reply(c, NULL, 0, r == -ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INVALID_ARGUMENT, err);
                return;
        }
        ans = calloc(n, sizeof(*ans));
        errs = calloc(n, sizeof(*errs));
        if (!ans || !errs) {
                reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                ans[i] = (dra_answer){ .uid = refs[i].uid, .error = errs[i] };
                r = dp_cdi_remove_claim(&p->h, p->cdi_dir, DRA_DRIVER, refs[i].uid);
                if (r < 0) {
                        snprintf(errs[i], DRA_ERR_LEN, "removing its CDI spec under %.200s: %s", p->cdi_dir, strerror(-r));
                        continue;
                }
                dra_prepared *e = prepared_find(p, refs[i].uid);
                if (e) { /* an unknown claim is unprepared already */
                        dra_prepared_clear(e);
                        *e = p->prepared[--p->n_prepared];
                        changed = true;
                        logf_(p, 0, "DRA: claim %s/%s (%s) unprepared", refs[i].ns, refs[i].name, refs[i].uid);
                }
        }
        if (changed && (r = checkpoint_write(p)) < 0)
                for (size_t i = 0; i < n; i++)
                        if (!errs[i][0])
                                snprintf(errs[i], DRA_ERR_LEN, "writing the checkpoint %s: %s", DRA_CHECKPOINT,
                                         strerror(-r));
        r = dra_encode_unprepare(ans, n, &buf, &blen);
        reply_encoded(c, r, buf, blen);
}

static void handle(call *c)
{
        dra_plugin *p = c->p;
        _cleanup_free_ uint8_t *req = NULL, *resp = NULL;
        size_t len = 0, rlen = 0;
        char err[DRA_ERR_LEN];
        bool ok;

        if (rpc_bytes_read(c->rc->payload, 0, &req, &len) < 0) {
                reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "request message missing or unreadable");
                return;
        }
        switch (c->method) {
        case M_GET_INFO:
                if (dra_decode_empty(req, len) < 0) {
                        reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT, "GetInfo: malformed InfoRequest");
                        return;
                }
                if (dra_encode_plugin_info(DRA_PLUGIN_SOCKET, &resp, &rlen) < 0) {
                        reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
                        return;
                }
                reply(c, resp, rlen, GRPC_STATUS_OK, NULL);
                return;
        case M_NOTIFY:
                if (dra_decode_registration_status(req, len, &ok, err, sizeof(err)) < 0) {
                        reply(c, NULL, 0, GRPC_STATUS_INVALID_ARGUMENT,
                              "NotifyRegistrationStatus: malformed RegistrationStatus");
                        return;
                }
                if (ok)
                        logf_(p, 0, "DRA: registered with the kubelet as %s", DRA_DRIVER);
                else
                        logf_(p, 2, "DRA: the kubelet refused the registration: \"%s\"", err);
                if (ok != p->registered) {
                        p->registered = ok;
                        if (p->changed)
                                p->changed(p->ud);
                }
                reply(c, (const uint8_t *)"", 0, GRPC_STATUS_OK, NULL);
                return;
        case M_PREP_V1:
        case M_PREP_V1B1:
                handle_prepare(c, req, len);
                return;
        default:
                handle_unprepare(c, req, len);
                return;
        }
}

/* A call taken by one of the servers (loop thread). */
static void on_call(rpc_call *rc, dra_plugin *p, int method)
{
        call *c = rpc_call_data(rc);
        *c = (call){ .p = p, .rc = rc, .method = method };
        handle(c);
}

static void on_reg_call(rpc_call *rc, void *ud)
{
        on_call(rc, ud, M_GET_INFO + rc->method);
}

static void on_plugin_call(rpc_call *rc, void *ud)
{
        on_call(rc, ud, M_PREP_V1 + rc->method);
}

static void on_gone(rpc_server *s, void *ud)
{
        dra_plugin *p = ud;
        for (int i = 0; i < _S_MAX; i++)
                if (p->srv[i] == s)
                        p->srv[i] = NULL;
}

/* ---- serving ---- */

/* One server on its socket: the engine binds it under a name of its own, renames it into
 * place with mode 0660, closes idle connections and answers unknown methods. */
static int serve(dra_plugin *p, int s)
{
        char dir[PATH_MAX];

        snprintf(dir, sizeof(dir), "%s", s == S_REG ? DRA_REGISTRY_SOCKET : DRA_PLUGIN_SOCKET);
        *strrchr(dir, '/') = '\0';
        int r = hostfs_mkdir_p(&p->h, dir);
        if (r < 0)
                return r;
        rpc_server_opts o = {
                .path = p->sock[s],
                .methods = s == S_REG ? reg_methods : plugin_methods,
                .n_methods = s == S_REG ? sizeof(reg_methods) / sizeof(reg_methods[0])
                                        : sizeof(plugin_methods) / sizeof(plugin_methods[0]),
                .max_receive = DRA_MAX_REQUEST,
                .call_extra = sizeof(call),
                .on_call = s == S_REG ? on_reg_call : on_plugin_call,
                .on_call_free = call_free,
                .on_gone = on_gone,
                .ud = p,
        };
        return rpc_server_new(p->rpc, &o, &p->srv[s]);
}

bool dra_plugin_registered(const dra_plugin *p)
{
        return p && p->registered;
}

int dra_plugin_set_devices(dra_plugin *p, const device_list *nics, const device_list *cores,
                           const dp_alloc_config *cfg)
{
        device_list a = { 0 }, b = { 0 };
        if (device_list_copy(nics, &a) < 0 || device_list_copy(cores, &b) < 0) {
                device_list_free(&a);
                return -ENOMEM;
        }
        device_list_free(&p->nics);
        device_list_free(&p->cores);
        p->nics = a;
        p->cores = b;
        p->cfg = *cfg;
        return 0;
}

int dra_plugin_new(const dra_plugin_options *o, dra_plugin **ret)
{
        dra_plugin *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        p->l = o->l;
        p->h = *o->h;
        snprintf(p->node, sizeof(p->node), "%s", o->node ? o->node : "");
        p->kube = o->kube;
        snprintf(p->cdi_dir, sizeof(p->cdi_dir), "%s", o->cdi_dir);
        p->nic = o->nic;
        p->core = o->core;
        p->log = o->log;
        p->changed = o->registration_changed;
        p->ud = o->userdata;
        dp_alloc_config_default(&p->cfg);
        if ((r = hostfs_path(&p->h, DRA_PLUGIN_SOCKET, p->sock[S_PLUGIN], sizeof(p->sock[0]))) < 0 ||
            (r = hostfs_path(&p->h, DRA_REGISTRY_SOCKET, p->sock[S_REG], sizeof(p->sock[0]))) < 0) {
                free(p);
                return r;
        }
        checkpoint_load(p);
        /* no lock: every call is handled on the loop thread */
        if ((r = rpc_engine_new(p->l, NULL, &p->rpc)) < 0) {
                dra_plugin_free(p);
                return r;
        }
        /* the DRA socket answers before the kubelet can find the registration socket */
        if ((r = serve(p, S_PLUGIN)) < 0 || (r = serve(p, S_REG)) < 0) {
                dra_plugin_free(p);
                return r;
        }
        logf_(p, 0, "DRA: serving %s (%s%s%s) on %s, registration on %s", DRA_DRIVER, p->nic ? "nic" : "",
              p->nic && p->core ? "," : "", p->core ? "core" : "", DRA_PLUGIN_SOCKET, DRA_REGISTRY_SOCKET);
        *ret = p;
        return 0;
}

static bool released(void *ud)
{
        return rpc_engine_servers(((dra_plugin *)ud)->rpc) == 0;
}

void dra_plugin_free(dra_plugin *p)
{
        if (!p)
                return;
        p->stopping = true;
        if (p->rpc) {
                rpc_engine_stop(p->rpc);
                /* the registration socket first: the kubelet stops using us (each socket
                 * removed while it is the one its server put there) */
                for (int s = _S_MAX - 1; s >= 0; s--)
                        if (p->srv[s])
                                rpc_server_shutdown(p->srv[s]);
        }
        /* queued reads belong to parked calls, answered below */
        p->rq_head = p->rq_tail = NULL;
        p->n_queued = 0;
        while (p->parked) { /* their reads cancelled: no reply comes */
                call *c = p->parked;
                unpark(c);
                for (size_t i = 0; i < c->n_claims; i++)
                        if (c->claims[i].get) {
                                if (c->claims[i].get->started)
                                        kube_cancel(p->kube, c->claims[i].get);
                                free(c->claims[i].get);
                                c->claims[i].get = NULL;
                        }
                reply(c, NULL, 0, GRPC_STATUS_UNAVAILABLE, "the plugin is stopping");
        }
        if (p->rpc) {
                if (!rpc_engine_wait(p->rpc, released, p, DRA_STOP_TIMEOUT_MS)) {
                        logf_(p, 1, "DRA: calls not released after %d ms; leaving them to the exit",
                              DRA_STOP_TIMEOUT_MS);
                        rpc_engine_abandon(p->rpc);
                        return;
                }
                (void)rpc_engine_free(p->rpc, RPC_TEARDOWN_ASYNC, 0);
        }
        for (size_t i = 0; i < p->n_prepared; i++)
                dra_prepared_clear(&p->prepared[i]);
        free(p->prepared);
        device_list_free(&p->nics);
        device_list_free(&p->cores);
        free(p);
}
