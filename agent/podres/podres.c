/* SPDX-License-Identifier: Apache-2.0 */
/* PodResources List over the gRPC C core: the call is rpc-unary's, on the queue of
 * common/grpc's engine, whose pump thread hands the finished call to the loop; decoding
 * and the callback run on the loop thread. One call at a time. Never logs. */
#include "podres.h"

#include "cleanup.h"
#include "rpc-server.h"
#include "rpc-unary.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct podres_call {
        podres_client *client;
        rpc_unary u;
        rpc_tag tag;
        char prefix[PODRES_RESOURCE_LEN];
        podres_done_fn fn;
        void *userdata;
        bool cancelled; /* by podres_client_free: no callback */
} podres_call;

struct podres_client {
        loop *l;
        char target[4200];
        rpc_engine *rpc;    /* the completion queue and its pump */
        grpc_channel *channel;
        podres_call *call;  /* the call in flight */
};

static void call_free(podres_call *k)
{
        if (!k)
                return;
        rpc_unary_destroy(&k->u);
        free(k);
}

/* The reply bytes (new), bounded. */
static int reply_bytes(grpc_byte_buffer *bb, uint8_t **ret, size_t *ret_len)
{
        int r = rpc_bytes_read(bb, PODRES_MAX_REPLY, ret, ret_len);
        return r == -ENODATA ? 0 : r; /* no message: an empty reply */
}

/* The call ended (its tag, on the loop thread). */
static void finish(void *obj, bool ok)
{
        podres_call *k = obj;
        podres_client *c = k->client;
        char msg[PODRES_MSG_LEN], details[160], err[160];
        podres_table t = {0};
        _cleanup_free_ uint8_t *bytes = NULL;
        size_t len = 0;
        int r;

        c->call = NULL;
        if (k->cancelled) {
                call_free(k);
                return;
        }
        size_t dl = rpc_unary_details(&k->u, details, sizeof(details));
        for (size_t i = 0; i < dl; i++)
                if ((unsigned char)details[i] < 0x20 || (unsigned char)details[i] >= 0x7f)
                        details[i] = '?';
        if (!ok) {
                r = -EPROTO;
                snprintf(msg, sizeof(msg), "the List call failed in gRPC");
        } else if (k->u.status == GRPC_STATUS_UNAVAILABLE) {
                r = -EHOSTDOWN;
                snprintf(msg, sizeof(msg), "%s: unavailable (%s)", c->target + 5, details[0] ? details : "no details");
        } else if (k->u.status == GRPC_STATUS_DEADLINE_EXCEEDED) {
                r = -ETIMEDOUT;
                snprintf(msg, sizeof(msg), "%s: no answer to List in time", c->target + 5);
        } else if (k->u.status == GRPC_STATUS_RESOURCE_EXHAUSTED) {
                r = -EBADMSG;
                snprintf(msg, sizeof(msg), "List reply beyond %u bytes (%s)", PODRES_MAX_REPLY, details);
        } else if (k->u.status != GRPC_STATUS_OK) {
                r = -EPROTO;
                snprintf(msg, sizeof(msg), "List failed: gRPC status %d: %s", (int)k->u.status,
                         details[0] ? details : "no details");
        } else if ((r = reply_bytes(k->u.recv_buf, &bytes, &len)) < 0) {
                snprintf(msg, sizeof(msg), "List reply unreadable: %s", strerror(-r));
                r = r == -ENOMEM ? r : -EBADMSG;
        } else if ((r = podres_parse_list(bytes, len, k->prefix, &t, err, sizeof(err))) < 0) {
                snprintf(msg, sizeof(msg), "List reply: %s", err);
                r = r == -ENOMEM ? r : -EBADMSG;
        } else {
                snprintf(msg, sizeof(msg), "%zu devices held by pods", t.n);
        }
        podres_done_fn fn = k->fn;
        void *ud = k->userdata;
        call_free(k);
        fn(r, msg, r < 0 ? NULL : &t, ud);
        podres_table_free(&t);
}

int podres_client_new(loop *l, const char *socket_path, podres_client **ret)
{
        podres_client *c;
        int r;

        if (!l || !socket_path || !*socket_path || !ret || strlen(socket_path) > 4096)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->l = l;
        snprintf(c->target, sizeof(c->target), "unix:%s", socket_path);
        r = rpc_engine_new(l, NULL, &c->rpc);
        if (r < 0) {
                free(c);
                return r;
        }
        c->channel = rpc_channel_create(c->target, &(rpc_channel_opts){ .initial_backoff_ms = 100,
                                                                        .max_backoff_ms = 1000,
                                                                        .max_receive = (int)PODRES_MAX_REPLY });
        if (!c->channel) {
                podres_client_free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

int podres_list(podres_client *c, const char *prefix, uint32_t timeout_ms, podres_done_fn fn, void *userdata)
{
        if (!c || !fn || !prefix || !*prefix || strlen(prefix) >= PODRES_RESOURCE_LEN - 2 || timeout_ms == 0)
                return -EINVAL;
        if (c->call)
                return -EBUSY;
        podres_call *k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->client = c;
        k->tag = (rpc_tag){ .fn = finish, .obj = k };
        snprintf(k->prefix, sizeof(k->prefix), "%s", prefix);
        k->fn = fn;
        k->userdata = userdata;
        rpc_unary_init(&k->u);
        /* ListPodResourcesRequest has no fields: zero bytes */
        grpc_slice empty = grpc_empty_slice();
        gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
        if (rpc_unary_start(&k->u, c->channel, rpc_engine_cq(c->rpc), "/v1.PodResourcesLister/List", deadline,
                            grpc_raw_byte_buffer_create(&empty, 1), &k->tag) < 0) {
                call_free(k);
                return -EIO;
        }
        c->call = k;
        return 0;
}

static bool call_gone(void *ud)
{
        return !((podres_client *)ud)->call;
}

void podres_client_free(podres_client *c)
{
        if (!c)
                return;
        if (c->call) {
                /* cancel, then wait (bounded) for the tag: a call must be released before
                 * its queue shuts down */
                c->call->cancelled = true;
                grpc_call_cancel(c->call->u.call, NULL);
                if (!rpc_engine_wait(c->rpc, call_gone, c, PODRES_STOP_TIMEOUT_MS)) {
                        rpc_engine_abandon(c->rpc); /* gRPC still holds the call */
                        return;
                }
        }
        if (c->channel)
                grpc_channel_destroy(c->channel);
        (void)rpc_engine_free(c->rpc, RPC_TEARDOWN_ASYNC, 0);
        free(c);
}
