/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA kubelet plugin (dra-plugin.h): two gRPC C-core servers on one completion queue,
 * its pump thread, the calls (parsed by dra-request.c), the ResourceClaim reads through
 * agent/kube, the CDI specs (deviceplugin/dp-cdi.c) and the checkpoint. Every call is
 * handled on the loop thread; a prepare waiting for the API server is parked, never
 * waited for. Never logs: messages go to the owner's log_fn. */
#include "dra-plugin.h"

#include "array.h"
#include "cleanup.h"
#include "dp-cdi.h"
#include "dra-request.h"
#include "rpc-unary.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

enum { M_GET_INFO, M_NOTIFY, M_PREP_V1, M_UNPREP_V1, M_PREP_V1B1, M_UNPREP_V1B1, _M_MAX };
enum { S_PLUGIN, S_REG, _S_MAX };

static const struct {
        const char *path;
        int srv;
} methods[_M_MAX] = {
        [M_GET_INFO] = { "/pluginregistration.Registration/GetInfo", S_REG },
        [M_NOTIFY] = { "/pluginregistration.Registration/NotifyRegistrationStatus", S_REG },
        [M_PREP_V1] = { "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", S_PLUGIN },
        [M_UNPREP_V1] = { "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources", S_PLUGIN },
        [M_PREP_V1B1] = { "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources", S_PLUGIN },
        [M_UNPREP_V1B1] = { "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources", S_PLUGIN },
};

enum tag_op { OP_REQUEST, OP_DONE, OP_SHUTDOWN };

typedef struct tag {
        enum tag_op op;
        void *obj;
        int srv;                  /* OP_SHUTDOWN: which server */
} tag;

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

struct call {
        dra_plugin *p;
        int method;
        grpc_call *call;
        gpr_timespec deadline;
        grpc_metadata_array md;
        grpc_byte_buffer *payload, *send_buf;
        grpc_slice details;
        bool have_details;
        int cancelled;
        tag t_req, t_done;
        claim_state *claims;
        size_t n_claims, pending;
        call *next, *prev;        /* parked: waiting for the API server */
};

typedef struct q_item {
        void *tag;
        bool ok;
} q_item;

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
        grpc_server *srv[_S_MAX];
        void *rm[_M_MAX];
        tag t_shutdown[_S_MAX];
        bool srv_up[_S_MAX];
        unsigned live;                    /* call objects */
        bool stopping;
        grpc_completion_queue *cq;
        pthread_t pump;
        bool pump_started;
        int efd;
        pthread_mutex_t mu;
        q_item *q;
        size_t qn, qcap;
        call *parked;
        claim_get *rq_head, *rq_tail;     /* reads waiting for a slot, oldest first */
        size_t n_queued, n_reading;       /* n_reading <= DRA_MAX_READS */
        device_list nics, cores;
        dp_alloc_config cfg;
        dra_prepared *prepared;
        size_t n_prepared, cap_prepared;
        bool checkpoint_bad;
        char checkpoint_err[DRA_ERR_LEN];
        uint64_t refusal_window_ms;       /* the start of the current window of refusal lines */
        unsigned refusal_lines;           /* logged in it */
        uint64_t refusals_dropped;        /* not logged since the last line that was */
};

static void logf_(dra_plugin *p, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(dra_plugin *p, int level, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (p->log)
                p->log(level, msg, p->ud);
}

/* A refusal's line (a call or a claim the kubelet asked for and did not get): at most
 * DRA_REFUSAL_LINES per DRA_REFUSAL_WINDOW_MS, the rest counted and said in one line with
 * the next that is logged. A caller sending thousands of bad calls costs a few lines. */
static void refusal_log(dra_plugin *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refusal_log(dra_plugin *p, const char *fmt, ...)
{
        char msg[1024];
        uint64_t now = loop_now_ms();
        va_list ap;

        if (now - p->refusal_window_ms >= DRA_REFUSAL_WINDOW_MS) {
                p->refusal_window_ms = now;
                p->refusal_lines = 0;
        }
        if (p->refusal_lines >= DRA_REFUSAL_LINES) {
                p->refusals_dropped++;
                return;
        }
        p->refusal_lines++;
        if (p->refusals_dropped) {
                logf_(p, 1, "DRA: %llu more refusals not logged (at most %u lines every %u s)",
                      (unsigned long long)p->refusals_dropped, DRA_REFUSAL_LINES, DRA_REFUSAL_WINDOW_MS / 1000);
                p->refusals_dropped = 0;
        }
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (p->log)
                p->log(1, msg, p->ud);
}

/* ---- the pump: the completion queue's one reader ---- */

static void *pump_main(void *arg)
{
        dra_plugin *p = arg;
        for (;;) {
                grpc_event ev = grpc_completion_queue_next(p->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                if (ev.type == GRPC_QUEUE_SHUTDOWN)
                        break;
                if (ev.type != GRPC_OP_COMPLETE)
                        continue;
                pthread_mutex_lock(&p->mu);
                if (ARRAY_GROW(p->q, p->qcap, p->qn + 1, 64) < 0)
                        abort(); /* losing a tag would leak a call forever */
                p->q[p->qn++] = (q_item){ ev.tag, ev.success != 0 };
                pthread_mutex_unlock(&p->mu);
                uint64_t one = 1;
                ssize_t w = write(p->efd, &one, sizeof(one));
                (void)w;
        }
        return NULL;
}

/* ---- calls ---- */

static void call_free(call *c)
{
        dra_plugin *p = c->p;
        for (size_t i = 0; i < c->n_claims; i++) {
                if (c->claims[i].get)
                        c->claims[i].get->c = NULL; /* not reached: only parked calls have reads */
                free(c->claims[i].results);
        }
        free(c->claims);
        if (c->call)
                grpc_call_unref(c->call);
        grpc_metadata_array_destroy(&c->md);
        if (c->payload)
                grpc_byte_buffer_destroy(c->payload);
        if (c->send_buf)
                grpc_byte_buffer_destroy(c->send_buf);
        if (c->have_details)
                grpc_slice_unref(c->details);
        free(c);
        p->live--;
}

static int post_request(dra_plugin *p, int m)
{
        call *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->p = p;
        c->method = m;
        c->t_req = (tag){ OP_REQUEST, c, 0 };
        c->t_done = (tag){ OP_DONE, c, 0 };
        grpc_metadata_array_init(&c->md);
        if (grpc_server_request_registered_call(p->srv[methods[m].srv], p->rm[m], &c->call, &c->deadline, &c->md,
                                                &c->payload, p->cq, p->cq, &c->t_req) != GRPC_CALL_OK) {
                grpc_metadata_array_destroy(&c->md);
                free(c);
                return -EIO;
        }
        p->live++;
        return 0;
}

static void reply(call *c, const uint8_t *resp, size_t len, grpc_status_code code, const char *msg)
{
        grpc_op ops[4];
        size_t n = 0;

        memset(ops, 0, sizeof(ops));
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        if (code == GRPC_STATUS_OK && resp) {
                grpc_slice sl = grpc_slice_from_copied_buffer((const char *)resp, len);
                c->send_buf = grpc_raw_byte_buffer_create(&sl, 1);
                grpc_slice_unref(sl);
                ops[n].op = GRPC_OP_SEND_MESSAGE;
                ops[n++].data.send_message.send_message = c->send_buf;
        }
        ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        ops[n].data.send_status_from_server.status = code;
        if (msg && *msg) {
                c->details = grpc_slice_from_copied_string(msg);
                c->have_details = true;
                ops[n].data.send_status_from_server.status_details = &c->details;
        }
        n++;
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
        if (grpc_call_start_batch(c->call, ops, n, &c->t_done, NULL) != GRPC_CALL_OK)
                call_free(c);
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

        if (rpc_bytes_read(c->payload, 0, &req, &len) < 0) {
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

static void on_request(call *c, bool ok)
{
        dra_plugin *p = c->p;
        if (!ok) { /* shutting down: never matched */
                call_free(c);
                return;
        }
        if (!p->stopping)
                (void)post_request(p, c->method);
        handle(c);
}

static void dispatch(dra_plugin *p, void *tagp, bool ok)
{
        tag *t = tagp;
        switch (t->op) {
        case OP_REQUEST:
                on_request(t->obj, ok);
                break;
        case OP_DONE:
                call_free(t->obj);
                break;
        case OP_SHUTDOWN:
                p->srv_up[t->srv] = false;
                break;
        }
}

static int drain(dra_plugin *p)
{
        uint64_t cnt;
        if (read(p->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
                return -errno;
        pthread_mutex_lock(&p->mu);
        q_item *items = p->q;
        size_t n = p->qn;
        p->q = NULL;
        p->qn = p->qcap = 0;
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < n; i++)
                dispatch(p, items[i].tag, items[i].ok);
        free(items);
        return 0;
}

static int on_efd(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events;
        return drain(ud);
}

/* ---- serving ---- */

static int serve(dra_plugin *p, int s)
{
        char addr[PATH_MAX + 8], dir[PATH_MAX];
        grpc_arg args[1];

        snprintf(dir, sizeof(dir), "%s", s == S_REG ? DRA_REGISTRY_SOCKET : DRA_PLUGIN_SOCKET);
        *strrchr(dir, '/') = '\0';
        int r = hostfs_mkdir_p(&p->h, dir);
        if (r < 0)
                return r;
        if (unlink(p->sock[s]) < 0 && errno != ENOENT)
                return -errno;
        args[0].type = GRPC_ARG_INTEGER;
        args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
        args[0].value.integer = DRA_MAX_REQUEST;
        grpc_channel_args ca = { .num_args = 1, .args = args };
        p->srv[s] = grpc_server_create(&ca, NULL);
        if (!p->srv[s])
                return -ENOMEM;
        grpc_server_register_completion_queue(p->srv[s], p->cq, NULL);
        for (int m = 0; m < _M_MAX; m++)
                if (methods[m].srv == s)
                        p->rm[m] = grpc_server_register_method(p->srv[s], methods[m].path, NULL,
                                                               GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        snprintf(addr, sizeof(addr), "unix:%s", p->sock[s]);
        grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
        int port = grpc_server_add_http2_port(p->srv[s], addr, creds);
        grpc_server_credentials_release(creds);
        if (port == 0) {
                grpc_server_destroy(p->srv[s]);
                p->srv[s] = NULL;
                return -EADDRNOTAVAIL;
        }
        grpc_server_start(p->srv[s]);
        p->srv_up[s] = true;
        (void)chmod(p->sock[s], 0660);
        for (int m = 0; m < _M_MAX; m++)
                if (methods[m].srv == s && (r = post_request(p, m)) < 0)
                        return r;
        return 0;
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
        p->efd = -1;
        dp_alloc_config_default(&p->cfg);
        pthread_mutex_init(&p->mu, NULL);
        for (int s = 0; s < _S_MAX; s++)
                p->t_shutdown[s] = (tag){ OP_SHUTDOWN, p, s };
        if ((r = hostfs_path(&p->h, DRA_PLUGIN_SOCKET, p->sock[S_PLUGIN], sizeof(p->sock[0]))) < 0 ||
            (r = hostfs_path(&p->h, DRA_REGISTRY_SOCKET, p->sock[S_REG], sizeof(p->sock[0]))) < 0) {
                free(p);
                return r;
        }
        checkpoint_load(p);
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0) {
                r = -errno;
                pthread_mutex_destroy(&p->mu);
                free(p);
                return r;
        }
        grpc_init();
        p->cq = grpc_completion_queue_create_for_next(NULL);
        if (pthread_create(&p->pump, NULL, pump_main, p) != 0) {
                grpc_completion_queue_shutdown(p->cq);
                grpc_completion_queue_destroy(p->cq);
                p->cq = NULL;
                grpc_shutdown();
                dra_plugin_free(p);
                return -EAGAIN;
        }
        p->pump_started = true;
        /* the DRA socket answers before the kubelet can find the registration socket */
        if ((r = loop_add_fd(p->l, p->efd, EPOLLIN, on_efd, p)) < 0 || (r = serve(p, S_PLUGIN)) < 0 ||
            (r = serve(p, S_REG)) < 0) {
                dra_plugin_free(p);
                return r;
        }
        logf_(p, 0, "DRA: serving %s (%s%s%s) on %s, registration on %s", DRA_DRIVER, p->nic ? "nic" : "",
              p->nic && p->core ? "," : "", p->core ? "core" : "", DRA_PLUGIN_SOCKET, DRA_REGISTRY_SOCKET);
        *ret = p;
        return 0;
}

void dra_plugin_free(dra_plugin *p)
{
        if (!p)
                return;
        p->stopping = true;
        for (int s = 0; s < _S_MAX; s++) /* the registration socket first: the kubelet stops using us */
                (void)unlink(p->sock[_S_MAX - 1 - s]);
        /* queued reads belong to parked calls, freed with them below */
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
                grpc_call_cancel_with_status(c->call, GRPC_STATUS_UNAVAILABLE, "the plugin is stopping", NULL);
                call_free(c);
        }
        for (int s = 0; s < _S_MAX; s++)
                if (p->srv[s]) {
                        grpc_server_shutdown_and_notify(p->srv[s], p->cq, &p->t_shutdown[s]);
                        grpc_server_cancel_all_calls(p->srv[s]);
                }
        uint64_t end = loop_now_ms() + DRA_STOP_TIMEOUT_MS;
        bool done = false;
        while (p->pump_started && loop_now_ms() < end) {
                done = p->live == 0 && !p->srv_up[S_PLUGIN] && !p->srv_up[S_REG];
                if (done)
                        break;
                struct pollfd pfd = { .fd = p->efd, .events = POLLIN };
                if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
                        break;
                if (drain(p) < 0)
                        break;
        }
        if (p->l && p->efd >= 0)
                (void)loop_remove_fd(p->l, p->efd);
        if (p->pump_started && !done) {
                logf_(p, 1, "DRA: calls not released after %d ms; leaving them to the exit", DRA_STOP_TIMEOUT_MS);
                return;
        }
        if (p->pump_started) {
                grpc_completion_queue_shutdown(p->cq);
                pthread_join(p->pump, NULL);
                grpc_completion_queue_destroy(p->cq);
                for (int s = 0; s < _S_MAX; s++)
                        if (p->srv[s])
                                grpc_server_destroy(p->srv[s]);
                grpc_shutdown();
        }
        for (size_t i = 0; i < p->n_prepared; i++)
                dra_prepared_clear(&p->prepared[i]);
        free(p->prepared);
        free(p->q);
        device_list_free(&p->nics);
        device_list_free(&p->cores);
        if (p->efd >= 0)
                close(p->efd);
        pthread_mutex_destroy(&p->mu);
        free(p);
}
