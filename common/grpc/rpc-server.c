/* SPDX-License-Identifier: Apache-2.0 */
/* The gRPC engine (rpc-server.h): the completion queue and its pump thread, the hand-over
 * to the loop, the servers (bind, rename into place, shutdown), their calls, streams and
 * the stream cap. Never logs; owns no policy beyond the protections every server gets. */
#include "rpc-server.h"

#include "array.h"

#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

enum { TAG_OTHER, TAG_REQUEST, TAG_DONE };

typedef struct q_item {
        rpc_tag *tag;
        bool ok;
} q_item;

struct rpc_engine {
        loop *l;
        pthread_mutex_t *lock;    /* the owner's state lock, or NULL: no fast path */
        grpc_completion_queue *cq;
        pthread_t pump;
        bool pump_started;
        int efd;
        bool hooked;
        pthread_mutex_t mu;       /* the hand-over queue */
        q_item *q;
        size_t qn, qcap;
        bool stopping;
        unsigned n_servers;
        size_t n_calls;
        unsigned gen;             /* names each server's bind path */
};

struct rpc_server {
        rpc_engine *e;
        rpc_server_opts o;
        grpc_server *server;
        void *rm[RPC_MAX_METHODS];
        unsigned refs;            /* live calls + the pending shutdown tag */
        bool shutting_down;
        dev_t dev;                /* the socket file this server renamed into place */
        ino_t ino;
        rpc_tag t_shutdown;
        rpc_call *streams;        /* newest first */
        unsigned n_streams;
};

/* The call and the owner's data after it, aligned for anything. */
typedef struct call_box {
        rpc_call c;
        max_align_t data[];
} call_box;

static void lock(rpc_engine *e)
{
        if (e->lock)
                pthread_mutex_lock(e->lock);
}

static void unlock(rpc_engine *e)
{
        if (e->lock)
                pthread_mutex_unlock(e->lock);
}

/* ---- the pump ---- */

static void push(rpc_engine *e, rpc_tag *t, bool ok)
{
        pthread_mutex_lock(&e->mu);
        if (ARRAY_GROW(e->q, e->qcap, e->qn + 1, 64) < 0)
                abort(); /* losing a tag would leak a call forever */
        e->q[e->qn++] = (q_item){ t, ok };
        pthread_mutex_unlock(&e->mu);
        uint64_t one = 1;
        ssize_t w = write(e->efd, &one, sizeof(one));
        (void)w; /* a full counter is still readable: nothing is lost */
}

void rpc_engine_post(rpc_engine *e, rpc_tag *t, bool ok)
{
        push(e, t, ok);
}

static void call_free(rpc_call *c);
static void on_request(void *obj, bool ok);

/* On the pump thread, the owner's lock held: a unary call of a fast server that is not
 * shutting down is taken here, and a finished one released (so no server is destroyed
 * from this thread). False leaves the tag to the loop thread. */
static bool fast_path(rpc_engine *e, rpc_tag *t, bool ok)
{
        if (e->stopping || (t->kind != TAG_REQUEST && t->kind != TAG_DONE))
                return false;
        rpc_call *c = t->obj;
        rpc_server *s = c->srv;
        if (s->shutting_down || !s->o.fast)
                return false;
        if (t->kind == TAG_DONE) {
                call_free(c);
                return true;
        }
        if (!ok || c->method < 0 || (s->o.stream_methods & (1u << c->method)))
                return false;
        on_request(c, true);
        return true;
}

static void *pump_main(void *arg)
{
        rpc_engine *e = arg;
        for (;;) {
                grpc_event ev = grpc_completion_queue_next(e->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                if (ev.type == GRPC_QUEUE_SHUTDOWN)
                        break;
                if (ev.type != GRPC_OP_COMPLETE)
                        continue;
                bool done = false;
                if (e->lock) {
                        pthread_mutex_lock(e->lock);
                        done = fast_path(e, ev.tag, ev.success != 0);
                        pthread_mutex_unlock(e->lock);
                }
                if (!done)
                        push(e, ev.tag, ev.success != 0);
        }
        return NULL;
}

static int drain(rpc_engine *e)
{
        uint64_t cnt;
        if (read(e->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
                return -errno;
        pthread_mutex_lock(&e->mu);
        q_item *items = e->q;
        size_t n = e->qn;
        e->q = NULL;
        e->qn = e->qcap = 0;
        pthread_mutex_unlock(&e->mu);
        lock(e);
        for (size_t i = 0; i < n; i++)
                items[i].tag->fn(items[i].tag->obj, items[i].ok);
        unlock(e);
        free(items);
        return 0;
}

static int on_efd(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events;
        return drain(ud);
}

/* ---- the engine ---- */

int rpc_engine_new(loop *l, pthread_mutex_t *lk, rpc_engine **ret)
{
        rpc_engine *e = calloc(1, sizeof(*e));
        int r;

        if (!e)
                return -ENOMEM;
        e->l = l;
        e->lock = lk;
        pthread_mutex_init(&e->mu, NULL);
        e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e->efd < 0) {
                r = -errno;
                pthread_mutex_destroy(&e->mu);
                free(e);
                return r;
        }
        grpc_init();
        e->cq = grpc_completion_queue_create_for_next(NULL);
        if (pthread_create(&e->pump, NULL, pump_main, e) != 0)
                r = -EAGAIN;
        else {
                e->pump_started = true;
                r = loop_add_fd(l, e->efd, EPOLLIN, on_efd, e);
        }
        if (r < 0) {
                grpc_completion_queue_shutdown(e->cq);
                if (e->pump_started)
                        pthread_join(e->pump, NULL);
                grpc_completion_queue_destroy(e->cq);
                grpc_shutdown();
                close(e->efd);
                pthread_mutex_destroy(&e->mu);
                free(e);
                return r;
        }
        e->hooked = true;
        *ret = e;
        return 0;
}

grpc_completion_queue *rpc_engine_cq(rpc_engine *e)
{
        return e->cq;
}

unsigned rpc_engine_servers(const rpc_engine *e)
{
        return e->n_servers;
}

size_t rpc_engine_calls(const rpc_engine *e)
{
        return e->n_calls;
}

bool rpc_engine_on_pump(const rpc_engine *e)
{
        return e->pump_started && pthread_equal(pthread_self(), e->pump);
}

void rpc_engine_stop(rpc_engine *e)
{
        e->stopping = true;
}

bool rpc_engine_wait(rpc_engine *e, bool (*done)(void *ud), void *ud, unsigned timeout_ms)
{
        uint64_t end = loop_now_ms() + timeout_ms;
        for (;;) {
                lock(e);
                bool d = done(ud);
                unlock(e);
                if (d)
                        return true;
                uint64_t now = loop_now_ms();
                if (now >= end)
                        return false;
                struct pollfd pfd = { .fd = e->efd, .events = POLLIN };
                if (poll(&pfd, 1, (int)(end - now)) < 0 && errno != EINTR)
                        return false;
                if (drain(e) < 0)
                        return false;
        }
}

/* An engine was left to the exit (its calls never released): gRPC, process-wide, keeps
 * its reference, so no later teardown can wait for gRPC to finish. */
static bool engine_abandoned;

static void unhook(rpc_engine *e)
{
        if (e->hooked && e->l)
                (void)loop_remove_fd(e->l, e->efd);
        e->hooked = false;
}

void rpc_engine_abandon(rpc_engine *e)
{
        if (!e)
                return;
        unhook(e);
        engine_abandoned = true;
}

int rpc_engine_free(rpc_engine *e, rpc_teardown mode, unsigned wait_ms)
{
        int r = 0;
        if (!e)
                return 0;
        unhook(e);
        grpc_completion_queue_shutdown(e->cq);
        pthread_join(e->pump, NULL);
        grpc_completion_queue_destroy(e->cq);
        /* Tags the pump queued and no one ran (only the owner's posted ones can be left). */
        for (size_t i = 0; i < e->qn; i++)
                if (e->q[i].tag->drop)
                        e->q[i].tag->drop(e->q[i].tag->obj);
        free(e->q);
        close(e->efd);
        pthread_mutex_destroy(&e->mu);
        free(e);
        if (mode == RPC_TEARDOWN_ASYNC) {
                grpc_shutdown();
                return 0;
        }
        /* Nothing of gRPC may run at exit. Our reference goes synchronously, but gRPC
         * holds its own while it still works (a connection attempt in flight, a channel or
         * server released on one of its threads, then torn down on a detached thread).
         * The count reaches zero when the last of it is done (grpc_is_initialized()
         * answers under the lock that last step holds): wait for that, bounded. An engine
         * left to the exit holds a reference for good: nothing to wait for. */
        grpc_shutdown_blocking();
        if (mode != RPC_TEARDOWN_WAIT || engine_abandoned)
                return 0;
        uint64_t end = loop_now_ms() + wait_ms;
        while (grpc_is_initialized() && loop_now_ms() < end)
                usleep(10 * 1000);
        if (grpc_is_initialized())
                r = -ETIMEDOUT;
        return r;
}

/* ---- calls ---- */

void *rpc_call_data(rpc_call *c)
{
        return ((call_box *)c)->data;
}

grpc_byte_buffer *rpc_bytes_to_bb(const uint8_t *buf, size_t len)
{
        grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, len);
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
        grpc_slice_unref(sl);
        return bb;
}

static void srv_unref(rpc_server *s);

static void call_free(rpc_call *c)
{
        rpc_server *s = c->srv;
        if (s->o.on_call_free)
                s->o.on_call_free(c, s->o.ud);
        if (c->call)
                grpc_call_unref(c->call);
        grpc_metadata_array_destroy(&c->md);
        if (c->method < 0)
                grpc_call_details_destroy(&c->details);
        if (c->payload)
                grpc_byte_buffer_destroy(c->payload);
        if (c->send_buf)
                grpc_byte_buffer_destroy(c->send_buf);
        if (c->have_details)
                grpc_slice_unref(c->status_details);
        free(c);
        s->e->n_calls--;
        srv_unref(s);
}

static void on_done(void *obj, bool ok)
{
        (void)ok;
        call_free(obj);
}

static void on_stream_sent(void *obj, bool ok);
static void on_stream_closed(void *obj, bool ok);

/* One request outstanding per method (method -1: any method not registered). */
static int post_request(rpc_server *s, int method)
{
        rpc_engine *e = s->e;
        call_box *b = calloc(1, sizeof(*b) + s->o.call_extra);
        grpc_call_error err;

        if (!b)
                return -ENOMEM;
        rpc_call *c = &b->c;
        c->srv = s;
        c->method = method;
        c->t_req = (rpc_tag){ .fn = on_request, .obj = c, .kind = TAG_REQUEST };
        c->t_batch = (rpc_tag){ .fn = on_done, .obj = c, .kind = TAG_DONE };
        c->t_close = (rpc_tag){ .fn = on_stream_closed, .obj = c };
        grpc_metadata_array_init(&c->md);
        if (method < 0) {
                grpc_call_details_init(&c->details);
                err = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, e->cq, e->cq, &c->t_req);
        } else {
                err = grpc_server_request_registered_call(s->server, s->rm[method], &c->call, &c->deadline, &c->md,
                                                          &c->payload, e->cq, e->cq, &c->t_req);
        }
        if (err != GRPC_CALL_OK) {
                grpc_metadata_array_destroy(&c->md);
                if (method < 0)
                        grpc_call_details_destroy(&c->details);
                free(b);
                return -EIO;
        }
        s->refs++;
        e->n_calls++;
        return 0;
}

void rpc_call_reply(rpc_call *c, const uint8_t *resp, size_t len, int code, const char *message)
{
        grpc_op ops[4];
        size_t n = 0;

        memset(ops, 0, sizeof(ops));
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        if (code == GRPC_STATUS_OK && resp) {
                c->send_buf = rpc_bytes_to_bb(resp, len);
                ops[n].op = GRPC_OP_SEND_MESSAGE;
                ops[n++].data.send_message.send_message = c->send_buf;
        }
        ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        ops[n].data.send_status_from_server.status = (grpc_status_code)code;
        if (message && *message) {
                c->status_details = grpc_slice_from_copied_string(message);
                c->have_details = true;
                ops[n].data.send_status_from_server.status_details = &c->status_details;
        }
        n++;
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
        c->t_batch = (rpc_tag){ .fn = on_done, .obj = c, .kind = TAG_DONE };
        if (grpc_call_start_batch(c->call, ops, n, &c->t_batch, NULL) != GRPC_CALL_OK)
                call_free(c);
}

static void on_request(void *obj, bool ok)
{
        rpc_call *c = obj;
        rpc_server *s = c->srv;

        if (!ok) { /* server shutting down: the request was never matched */
                call_free(c);
                return;
        }
        if (!s->shutting_down && !s->e->stopping)
                (void)post_request(s, c->method); /* keep one request outstanding per method */
        if (c->method < 0)
                rpc_call_reply(c, NULL, 0, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
        else
                s->o.on_call(c, s->o.ud);
}

/* ---- streams ---- */

static void stream_unlink(rpc_call *c)
{
        rpc_server *s = c->srv;
        if (c->prev)
                c->prev->next = c->next;
        else if (s->streams == c)
                s->streams = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->next = c->prev = NULL;
        s->n_streams--;
}

static void stream_maybe_free(rpc_call *c)
{
        if (c->send_pending || c->close_pending)
                return;
        stream_unlink(c);
        call_free(c);
}

/* End the stream in order (status OK) once no send is pending. */
static void stream_end(rpc_call *c)
{
        grpc_op op;

        c->ending = true;
        if (c->send_pending || c->status_sent || !c->close_pending)
                return;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        op.data.send_status_from_server.status = GRPC_STATUS_OK;
        c->status_sent = true;
        c->t_batch = (rpc_tag){ .fn = on_stream_sent, .obj = c };
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_batch, NULL) == GRPC_CALL_OK)
                c->send_pending = true;
}

/* The stream can take a message: the owner's, or its end when it is ending. */
static void stream_kick(rpc_call *c)
{
        if (c->send_pending || !c->close_pending || c->status_sent)
                return;
        if (c->ending) {
                stream_end(c);
                return;
        }
        c->srv->o.on_stream_ready(c, c->srv->o.ud);
}

int rpc_stream_send(rpc_call *c, const uint8_t *buf, size_t len)
{
        grpc_op ops[2];
        size_t n = 0;

        if (c->send_pending || !c->close_pending || c->status_sent || c->ending)
                return -EBUSY;
        memset(ops, 0, sizeof(ops));
        if (!c->initial_sent) {
                ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
                c->initial_sent = true;
        }
        if (c->send_buf)
                grpc_byte_buffer_destroy(c->send_buf);
        c->send_buf = rpc_bytes_to_bb(buf, len);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->send_buf;
        c->t_batch = (rpc_tag){ .fn = on_stream_sent, .obj = c };
        if (grpc_call_start_batch(c->call, ops, n, &c->t_batch, NULL) != GRPC_CALL_OK)
                return -EIO;
        c->send_pending = true;
        return 0;
}

/* A send (or the final status) completed: the next message, if the owner has one. */
static void on_stream_sent(void *obj, bool ok)
{
        rpc_call *c = obj;
        c->send_pending = false;
        if (c->send_buf) {
                grpc_byte_buffer_destroy(c->send_buf);
                c->send_buf = NULL;
        }
        if (ok)
                stream_kick(c);
        stream_maybe_free(c);
}

/* The client closed (or the call was cancelled): freed once no batch is pending. */
static void on_stream_closed(void *obj, bool ok)
{
        rpc_call *c = obj;
        (void)ok;
        c->close_pending = false;
        stream_maybe_free(c);
}

/* max_streams open: end the oldest one not protected (its client gets
 * RESOURCE_EXHAUSTED). False when there is none to end, or too many are still ending. */
static bool stream_make_room(rpc_server *s)
{
        rpc_call *victim = NULL;
        unsigned live = 0;
        char msg[160];

        for (rpc_call *c = s->streams; c; c = c->next) /* newest first: the last one found is the oldest */
                if (!c->ending) {
                        live++;
                        if (!c->protect)
                                victim = c;
                }
        if (live < s->o.max_streams)
                return s->n_streams < 2 * s->o.max_streams;
        if (!victim || s->n_streams >= 2 * s->o.max_streams)
                return false;
        snprintf(msg, sizeof(msg), "%s: %u streams open; the oldest (not the kubelet's) ended", s->o.stream_name,
                 s->o.max_streams);
        s->o.on_refused(s, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, s->o.ud);
        /* cancelled, not ended in order: a client that does not read may hold a send
         * pending for good; the pending batches complete (failed) and release it */
        victim->ending = true;
        snprintf(msg, sizeof(msg), "%s: too many open streams; the oldest was ended", s->o.stream_name);
        grpc_call_cancel_with_status(victim->call, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, NULL);
        return true;
}

int rpc_stream_open(rpc_call *c)
{
        rpc_server *s = c->srv;
        char msg[160];
        grpc_op op;

        if (s->shutting_down) {
                snprintf(msg, sizeof(msg), "%s: the server is shutting down", s->o.stream_name);
                rpc_call_reply(c, NULL, 0, GRPC_STATUS_UNAVAILABLE, msg);
                return -EBUSY;
        }
        if (s->n_streams >= s->o.max_streams && !stream_make_room(s)) {
                snprintf(msg, sizeof(msg), "%s: too many open streams (%u); refused", s->o.stream_name,
                         s->o.max_streams);
                s->o.on_refused(s, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, s->o.ud);
                snprintf(msg, sizeof(msg), "%s: too many open streams", s->o.stream_name);
                rpc_call_reply(c, NULL, 0, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
                return -EBUSY;
        }
        c->streaming = true;
        c->next = s->streams;
        if (s->streams)
                s->streams->prev = c;
        s->streams = c;
        s->n_streams++;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        op.data.recv_close_on_server.cancelled = &c->cancelled;
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_close, NULL) != GRPC_CALL_OK) {
                stream_maybe_free(c);
                return -EIO; /* freed: as a client that went away at once */
        }
        c->close_pending = true;
        stream_kick(c);
        return 0;
}

void rpc_stream_protect(rpc_call *c)
{
        for (rpc_call *o = c->srv->streams; o; o = o->next)
                o->protect = false;
        c->protect = true;
}

unsigned rpc_server_streams(const rpc_server *s)
{
        return s->n_streams;
}

void rpc_server_streams_ready(rpc_server *s)
{
        for (rpc_call *c = s->streams, *next; c; c = next) {
                next = c->next;
                stream_kick(c);
        }
}

/* ---- refusal reports ---- */

bool rpc_ratelimit_take(rpc_ratelimit *rl, uint64_t now_ms, unsigned burst, uint64_t window_ms, bool hold)
{
        if (now_ms - rl->window_ms >= window_ms && (!hold || !rl->unsaid)) {
                rl->window_ms = now_ms;
                rl->said = 0;
        }
        if (rl->said >= burst) {
                rl->unsaid++;
                return false;
        }
        rl->said++;
        return true;
}

/* ---- servers ---- */

bool rpc_server_shutting_down(const rpc_server *s)
{
        return s->shutting_down;
}

static void srv_unref(rpc_server *s)
{
        if (--s->refs > 0 || !s->shutting_down)
                return;
        rpc_engine *e = s->e;
        void (*gone)(rpc_server *, void *) = s->o.on_gone;
        void *ud = s->o.ud;
        grpc_server_destroy(s->server);
        e->n_servers--;
        if (gone) /* before free: the owner compares s, reads nothing of it */
                gone(s, ud);
        free(s);
}

static void on_shutdown(void *obj, bool ok)
{
        (void)ok;
        srv_unref(obj);
}

void rpc_server_shutdown(rpc_server *s)
{
        struct stat st;

        if (s->shutting_down)
                return;
        s->shutting_down = true;
        /* the socket file is ours to remove while it is the one this server put there
         * (gRPC removes only the path it bound, renamed away) */
        if (s->ino && lstat(s->o.path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
                (void)unlink(s->o.path);
        for (rpc_call *c = s->streams, *next; c; c = next) {
                next = c->next;
                stream_end(c);
        }
        s->t_shutdown = (rpc_tag){ .fn = on_shutdown, .obj = s };
        s->refs++;
        grpc_server_shutdown_and_notify(s->server, s->e->cq, &s->t_shutdown);
        grpc_server_cancel_all_calls(s->server);
}

int rpc_server_new(rpc_engine *e, const rpc_server_opts *o, rpc_server **ret)
{
        char addr[PATH_MAX + 8], bind_path[PATH_MAX], dir[PATH_MAX];
        const char *name = strrchr(o->path, '/');
        struct stat st;
        grpc_arg args[3];
        int n;

        if (!name || o->n_methods > RPC_MAX_METHODS || !o->on_call || (o->stream_methods && !o->on_stream_ready) ||
            (o->stream_methods && !o->on_refused))
                return -EINVAL;
        n = snprintf(dir, sizeof(dir), "%.*s", (int)(name - o->path), o->path);
        if (n < 0 || (size_t)n >= sizeof(dir))
                return -ENAMETOOLONG;
        /* No dir (kubelet not installed yet, or the dir is being re-created): say so
         * ourselves; gRPC's bind would print a multi-line error on every retry. */
        if (stat(dir[0] ? dir : "/", &st) < 0)
                return -ENOENT;
        n = snprintf(bind_path, sizeof(bind_path), "%s/.%s.%u", dir, name + 1, ++e->gen);
        if (n < 0 || (size_t)n >= sizeof(bind_path) || (size_t)n + 6 > sizeof(addr))
                return -ENAMETOOLONG;
        if (unlink(bind_path) < 0 && errno != ENOENT)
                return -errno;
        rpc_server *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->e = e;
        s->o = *o;
        args[0].type = GRPC_ARG_INTEGER;
        args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
        args[0].value.integer = o->max_receive;
        args[1].type = GRPC_ARG_INTEGER;
        args[1].key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS;
        args[1].value.integer = RPC_MAX_CONCURRENT_STREAMS;
        /* a connection without a call for this long is closed (GOAWAY; a client reconnects
         * when it calls again): idle local clients cannot pile up. A client that keeps a
         * stream open (the kubelet's ListAndWatch) is never idle. */
        args[2].type = GRPC_ARG_INTEGER;
        args[2].key = (char *)GRPC_ARG_MAX_CONNECTION_IDLE_MS;
        args[2].value.integer = o->idle_ms ? (int)o->idle_ms : RPC_IDLE_CONNECTION_MS;
        grpc_channel_args ca = { .num_args = 3, .args = args };
        s->server = grpc_server_create(&ca, NULL);
        if (!s->server) {
                free(s);
                return -ENOMEM;
        }
        grpc_server_register_completion_queue(s->server, e->cq, NULL);
        for (size_t m = 0; m < o->n_methods; m++)
                s->rm[m] = grpc_server_register_method(s->server, o->methods[m], NULL,
                                                       GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        snprintf(addr, sizeof(addr), "unix:%s", bind_path);
        grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
        int port = grpc_server_add_http2_port(s->server, addr, creds);
        grpc_server_credentials_release(creds);
        if (port == 0) {
                grpc_server_destroy(s->server);
                free(s);
                return -EADDRNOTAVAIL;
        }
        grpc_server_start(s->server);
        e->n_servers++;
        int r = 0;
        for (int m = -1; m < (int)o->n_methods && r >= 0; m++)
                r = post_request(s, m);
        /* 0660 before it gets the name clients dial: root and the group may connect, no
         * one else, whatever the umask was when gRPC bound it */
        if (r >= 0 && (chmod(bind_path, 0660) < 0 || rename(bind_path, o->path) < 0 || lstat(o->path, &st) < 0))
                r = -errno;
        if (r < 0) {
                (void)unlink(bind_path);
                rpc_server_shutdown(s); /* releases the requests already posted; on_gone follows */
                return r;
        }
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        *ret = s;
        return 0;
}
