/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's HTTP endpoints, /metrics (Prometheus text format), /healthz and /readyz,
 * on libmicrohttpd in external-epoll mode: its epoll fd and its timeout are sources of the
 * daemon's loop, so every request is answered on the loop thread from the state as it is
 * (no snapshot crosses a thread). Bounded so that a slow or hostile client cannot stall
 * the loop: non-blocking sockets, a connection cap in total and per address, an
 * inactivity timeout, a request size bound, GET and HEAD only. Never logs. */
#ifndef SPIN_RUN_METRICS_H
#define SPIN_RUN_METRICS_H

#include "loop.h"
#include "report.h"

#include <stdbool.h>
#include <stddef.h>

#define RUN_METRICS_MAX_CONNECTIONS 32
#define RUN_METRICS_PER_IP 8
#define RUN_METRICS_TIMEOUT_S 10
#define RUN_METRICS_REQUEST_BYTES 16384 /* per connection: request line, headers, buffers */

typedef struct run_metrics_ops {
        /* The /metrics body: a new NUL-terminated string, or a negative errno (503). */
        int (*render)(void *userdata, char **ret, size_t *ret_len);
        /* /readyz: true, or false with why (503). */
        bool (*ready)(void *userdata, char *why, size_t len);
        void *userdata;
} run_metrics_ops;

typedef struct run_metrics run_metrics;

/* Listen on b (not off) and serve from l. A negative errno of socket/bind/listen (with
 * err saying what and where), -ENOMEM, -EIO (the library refused to start). */
int run_metrics_new(loop *l, const report_bind *b, const run_metrics_ops *ops, run_metrics **ret, char *err,
                    size_t err_size);
/* Closes every connection and the socket. Accepts NULL. */
void run_metrics_free(run_metrics *m);
/* The port actually bound (":0" is not accepted, but tests read it back). */
unsigned run_metrics_port(const run_metrics *m);

#endif
