/* SPDX-License-Identifier: Apache-2.0 */
/* One unary call of the gRPC C core as a client makes it: the six ops of a request and
 * its reply started as one batch on a completion queue, the buffers they fill, and the
 * status details as a bounded string; the client channel both make; and the bytes of a
 * received message, for clients and servers alike. Shared by the device plugin, the
 * PodResources client and the DRA kubelet plugin. No threads, no logging; the
 * caller owns the queue and the tag. */
#ifndef SPINLANE_RPC_UNARY_H
#define SPINLANE_RPC_UNARY_H

#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>

typedef struct rpc_unary {
        grpc_call *call;
        grpc_byte_buffer *send_buf, *recv_buf;
        grpc_metadata_array md_initial, md_trailing;
        grpc_status_code status;
        grpc_slice details;
} rpc_unary;

/* Empty details and metadata arrays: what rpc_unary_destroy may always be called on. */
void rpc_unary_init(rpc_unary *u);

/* Start method on channel with send (owned from now on, also on failure) and the given
 * deadline; tag comes out of cq when the call ends. 0, or -EIO when gRPC refused. */
int rpc_unary_start(rpc_unary *u, grpc_channel *channel, grpc_completion_queue *cq, const char *method,
                    gpr_timespec deadline, grpc_byte_buffer *send, void *tag);

/* The call and everything it filled (not u itself). */
void rpc_unary_destroy(rpc_unary *u);

/* The status details, cut to fit buf (len > 0) and NUL-terminated; the length copied. */
size_t rpc_unary_details(const rpc_unary *u, char *buf, size_t len);

/* How a client channel to the kubelet's unix sockets reconnects. A private subchannel
 * (no other channel's backoff applies: a kubelet that restarts is found again quickly);
 * each field 0 leaves gRPC's default. */
typedef struct rpc_channel_opts {
        int initial_backoff_ms;
        int min_backoff_ms;   /* also the connect timeout, despite its name */
        int max_backoff_ms;
        int max_receive;      /* bytes of one reply */
} rpc_channel_opts;

/* An insecure channel to target ("unix:/path") with opts; NULL when gRPC refused. */
grpc_channel *rpc_channel_create(const char *target, const rpc_channel_opts *opts);

/* The bytes of a received message in a new buffer (one byte allocated for an empty
 * message), at most max bytes (0: no bound beyond the channel's). No message (bb NULL):
 * *ret NULL, *ret_len 0 and -ENODATA. -E2BIG past max, -EBADMSG when unreadable,
 * -ENOMEM. */
int rpc_bytes_read(grpc_byte_buffer *bb, size_t max, uint8_t **ret, size_t *ret_len);

#endif
