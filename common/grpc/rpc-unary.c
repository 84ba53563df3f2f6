/* SPDX-License-Identifier: Apache-2.0 */
/* A unary gRPC client call: start the six-op batch, free what it filled, copy the status
 * details out bounded; and a received message's bytes (rpc-unary.h). */
#include "rpc-unary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>

void rpc_unary_init(rpc_unary *u)
{
        memset(u, 0, sizeof(*u));
        u->details = grpc_empty_slice();
        grpc_metadata_array_init(&u->md_initial);
        grpc_metadata_array_init(&u->md_trailing);
}

int rpc_unary_start(rpc_unary *u, grpc_channel *channel, grpc_completion_queue *cq, const char *method,
                    gpr_timespec deadline, grpc_byte_buffer *send, void *tag)
{
        grpc_op ops[6];
        grpc_slice m = grpc_slice_from_static_string(method);

        u->send_buf = send;
        u->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL, deadline, NULL);
        memset(ops, 0, sizeof(ops));
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_SEND_MESSAGE;
        ops[1].data.send_message.send_message = u->send_buf;
        ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
        ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[3].data.recv_initial_metadata.recv_initial_metadata = &u->md_initial;
        ops[4].op = GRPC_OP_RECV_MESSAGE;
        ops[4].data.recv_message.recv_message = &u->recv_buf;
        ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
        ops[5].data.recv_status_on_client.trailing_metadata = &u->md_trailing;
        ops[5].data.recv_status_on_client.status = &u->status;
        ops[5].data.recv_status_on_client.status_details = &u->details;
        if (!u->send_buf || !u->call || grpc_call_start_batch(u->call, ops, 6, tag, NULL) != GRPC_CALL_OK)
                return -EIO;
        return 0;
}

void rpc_unary_destroy(rpc_unary *u)
{
        if (u->call)
                grpc_call_unref(u->call);
        if (u->send_buf)
                grpc_byte_buffer_destroy(u->send_buf);
        if (u->recv_buf)
                grpc_byte_buffer_destroy(u->recv_buf);
        grpc_metadata_array_destroy(&u->md_initial);
        grpc_metadata_array_destroy(&u->md_trailing);
        grpc_slice_unref(u->details);
        u->call = NULL;
        u->send_buf = u->recv_buf = NULL;
        u->details = grpc_empty_slice();
}

size_t rpc_unary_details(const rpc_unary *u, char *buf, size_t len)
{
        size_t dl = GRPC_SLICE_LENGTH(u->details);
        if (dl >= len)
                dl = len - 1;
        memcpy(buf, GRPC_SLICE_START_PTR(u->details), dl);
        buf[dl] = '\0';
        return dl;
}

grpc_channel *rpc_channel_create(const char *target, const rpc_channel_opts *opts)
{
        grpc_arg args[5];
        size_t n = 0;
        const struct {
                const char *key;
                int value;
        } want[] = {
                { GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1 },
                { GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, opts->initial_backoff_ms },
                { GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, opts->min_backoff_ms },
                { GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, opts->max_backoff_ms },
                { GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, opts->max_receive },
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                if (!want[i].value)
                        continue;
                args[n].type = GRPC_ARG_INTEGER;
                args[n].key = (char *)want[i].key;
                args[n].value.integer = want[i].value;
                n++;
        }
        grpc_channel_args ca = { .num_args = n, .args = args };
        grpc_channel_credentials *creds = grpc_insecure_credentials_create();
        grpc_channel *ch = grpc_channel_create(target, creds, &ca);
        grpc_channel_credentials_release(creds);
        return ch;
}

int rpc_bytes_read(grpc_byte_buffer *bb, size_t max, uint8_t **ret, size_t *ret_len)
{
        grpc_byte_buffer_reader rd;

        *ret = NULL;
        *ret_len = 0;
        if (!bb)
                return -ENODATA;
        if (max && grpc_byte_buffer_length(bb) > max)
                return -E2BIG;
        if (!grpc_byte_buffer_reader_init(&rd, bb))
                return -EBADMSG;
        grpc_slice sl = grpc_byte_buffer_reader_readall(&rd);
        grpc_byte_buffer_reader_destroy(&rd);
        size_t n = GRPC_SLICE_LENGTH(sl);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) {
                grpc_slice_unref(sl);
                return -ENOMEM;
        }
        memcpy(buf, GRPC_SLICE_START_PTR(sl), n);
        grpc_slice_unref(sl);
        *ret = buf;
        *ret_len = n;
        return 0;
}
