/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet PodResources client: one List call at a time on the kubelet's
 * pod-resources socket through the gRPC C core, on common/grpc's engine (its completion
 * queue and pump thread hand the finished call to the agent's loop); the callback and
 * every podres_* function run on the loop thread. Owns its channel and call; never logs. */
#ifndef SPIN_PODRES_H
#define SPIN_PODRES_H

#include "loop.h"
#include "podres-parse.h"

#include <stdint.h>

#define PODRES_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_MSG_LEN 256
#define PODRES_STOP_TIMEOUT_MS 10000 /* podres_client_free(): longest wait for a cancelled call */

typedef struct podres_client podres_client;

/* error: 0 and t the table (valid during the call), or a negative errno with message:
 * -EHOSTDOWN the socket is absent or refuses (gRPC UNAVAILABLE), -ETIMEDOUT, -EBADMSG
 * (an unreadable reply, or one beyond PODRES_MAX_REPLY), -EPROTO (another gRPC status:
 * message holds its code and details), -ENOMEM. */
typedef void (*podres_done_fn)(int error, const char *message, const podres_table *t, void *userdata);

/* A client for the unix socket at socket_path (copied) on loop l. */
int podres_client_new(loop *l, const char *socket_path, podres_client **ret);
/* Cancels the call in flight (its callback is not called), waits (at most
 * PODRES_STOP_TIMEOUT_MS) for gRPC to release it, frees the engine (or, when gRPC never
 * released it, leaves it to the exit). Accepts NULL; not from inside its own callback. */
void podres_client_free(podres_client *c);

/* Start List; the callback runs once, from the loop. -EBUSY while one is in flight. The
 * reply is filtered to the resources under prefix (e.g. "spinlane.io"). */
int podres_list(podres_client *c, const char *prefix, uint32_t timeout_ms, podres_done_fn fn, void *userdata);

#endif
