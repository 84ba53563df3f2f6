/* SPDX-License-Identifier: Apache-2.0 */
/* The completion-queue pump: the one thread that drains the engine's completion queue.
 * A unary call of a server that is not shutting down is answered right there, under the
 * engine's state lock (fast_path: no thread hop on the hot path); every other tag goes
 * into a queue that an eventfd hands to the loop thread (dp_pump_drain), which routes it
 * (dispatch). Owns the queue; handles no call itself (dp-serve.c does) and never logs. */
#include "dp-internal.h"

#include "array.h"

#include <errno.h>
#include <grpc/support/time.h>
#include <stdlib.h>
#include <unistd.h>

/* Hand a tag to the loop thread. */
void dp_pump_push(dp_engine *e, void *tag, bool ok)
{
        pthread_mutex_lock(&e->mu);
        if (ARRAY_GROW(e->q, e->qcap, e->qn + 1, 64) < 0)
                abort(); /* losing a tag would leak a call forever */
        e->q[e->qn++] = (q_item){ tag, ok };
        pthread_mutex_unlock(&e->mu);
        uint64_t one = 1;
        ssize_t w = write(e->efd, &one, sizeof(one));
        (void)w; /* a full counter is still readable: nothing is lost */
}

static bool fast_path(dp_engine *e, void *tagp, bool ok);

void *dp_pump_main(void *arg)
{
        dp_engine *e = arg;
        for (;;) {
                grpc_event ev = grpc_completion_queue_next(e->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                if (ev.type == GRPC_QUEUE_SHUTDOWN)
                        break;
                if (ev.type != GRPC_OP_COMPLETE)
                        continue;
                pthread_mutex_lock(&e->state);
                bool done = fast_path(e, ev.tag, ev.success != 0);
                pthread_mutex_unlock(&e->state);
                if (!done)
                        dp_pump_push(e, ev.tag, ev.success != 0);
        }
        return NULL;
}

/* On the pump thread, state lock held: answer a unary call or release a finished one
 * here when its server is not shutting down (so no server can be destroyed from this
 * thread). Returns false to leave the tag to the loop thread. */
static bool fast_path(dp_engine *e, void *tagp, bool ok)
{
        dp_tag *t = tagp;
        dp_call *c;

        if (e->stopping || (t->op != OP_REQUEST && t->op != OP_UNARY_DONE))
                return false;
        c = t->obj;
        if (c->srv->shutting_down)
                return false;
        if (t->op == OP_UNARY_DONE) {
                dp_serve_call_free(c);
                return true;
        }
        if (!ok || c->method == M_LIST_AND_WATCH)
                return false;
        dp_serve_request(c, true);
        return true;
}

static void dispatch(dp_engine *e, void *tagp, bool ok)
{
        dp_tag *t = tagp;
        switch (t->op) {
        case OP_REQUEST:
                dp_serve_request(t->obj, ok);
                break;
        case OP_UNARY_DONE:
                dp_serve_call_free(t->obj);
                break;
        case OP_STREAM_SEND:
                dp_serve_stream_sent(t->obj, ok);
                break;
        case OP_STREAM_CLOSE:
                dp_serve_stream_closed(t->obj);
                break;
        case OP_SHUTDOWN:
                dp_serve_srv_unref(t->obj);
                break;
        case OP_REGISTER:
                dp_register_done(t->obj, ok);
                break;
        case OP_REFUSED:
                dp_serve_refusal_report(e, t->obj);
                break;
        }
}

int dp_pump_drain(dp_engine *e)
{
        q_item *items;
        size_t n;
        uint64_t cnt;

        if (read(e->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
                return -errno;
        pthread_mutex_lock(&e->mu);
        items = e->q;
        n = e->qn;
        e->q = NULL;
        e->qn = e->qcap = 0;
        pthread_mutex_unlock(&e->mu);
        pthread_mutex_lock(&e->state);
        for (size_t i = 0; i < n; i++)
                dispatch(e, items[i].tag, items[i].ok);
        pthread_mutex_unlock(&e->state);
        free(items);
        return 0;
}

int dp_pump_on_efd(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events;
        return dp_pump_drain(ud);
}
