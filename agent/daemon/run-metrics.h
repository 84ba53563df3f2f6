/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's HTTP endpoints, /metrics (Prometheus text format), /healthz and /readyz,
 * on libmicrohttpd in external-epoll mode: its epoll fd and its timeout are sources of the
 * daemon's loop, so every request is answered on the loop thread from the state as it is
 * (no snapshot crosses a thread). One run_metrics is one listener with its own budget (the
 * daemon runs two: /metrics, and the probes on 127.0.0.1). Bounded so that a slow or
 * hostile client cannot stall the loop or wedge the listener: non-blocking sockets, a
 * connection cap in total and per address, an inactivity timeout, a deadline per request
 * (headers, then the whole answer), a request size bound, GET and HEAD only, and a wake-up
 * armed whenever a connection exists or has just gone (libmicrohttpd puts its listening
 * socket back in its epoll set only when it runs). Never logs. */
#ifndef SPIN_RUN_METRICS_H
#define SPIN_RUN_METRICS_H

#include "loop.h"
#include "report.h"

#include <stdbool.h>
#include <stddef.h>

/* The /metrics listener's budget: in total and per client address. */
#define RUN_METRICS_MAX_CONNECTIONS 32
#define RUN_METRICS_PER_IP 8
/* The probe listener's own budget (on 127.0.0.1 every client has the same address). */
#define RUN_METRICS_PROBE_CONNECTIONS 16
#define RUN_METRICS_PROBE_HEADER_MS 2000 /* a kubelet probe sends its request with the connect */
#define RUN_METRICS_TIMEOUT_S 10        /* inactivity: MHD closes a connection silent this long */
/* Deadlines, from the accept (or the end of the previous request on a kept-alive
 * connection): the request's headers complete within HEADER_MS, the whole answer sent
 * within REQUEST_MS. A connection past either is shut down whatever it still sends. */
#define RUN_METRICS_HEADER_MS 5000
#define RUN_METRICS_REQUEST_MS 15000
#define RUN_METRICS_REQUEST_BYTES 16384 /* per connection: request line, headers, buffers */

typedef struct run_metrics_ops {
        /* The /metrics body: a new NUL-terminated string, or a negative errno (503). NULL:
         * this listener serves no /metrics. */
        int (*render)(void *userdata, char **ret, size_t *ret_len);
        /* /readyz: true (200, with the text in why when it wrote one, else "ok"), or false
         * with why (503). NULL: this listener serves no /healthz and no /readyz. */
        bool (*ready)(void *userdata, char *why, size_t len);
        /* /healthz (with ready): false with why (503) while the agent is not well (a gRPC
         * server failed its self-check); NULL or true: 200 "ok". */
        bool (*healthy)(void *userdata, char *why, size_t len);
        void *userdata;
        unsigned max_connections;       /* 0: RUN_METRICS_MAX_CONNECTIONS */
        unsigned per_ip;                /* 0: RUN_METRICS_PER_IP; at most max_connections */
        const char *not_found;          /* the 404 body's hint, e.g. "try /metrics\n"; NULL: a default */
        /* The probe listener's policy: the listener accepts itself (never out of the
         * loop's epoll set), and a connection accepted at max_connections takes the slot
         * of the oldest one whose request has not arrived (a trickle, a half request
         * whose peer closed, an idle connection): shut down at once. A probe, whose
         * request comes with its connection, never waits behind strangers. */
        bool evict_idle;
        unsigned header_ms;             /* 0: RUN_METRICS_HEADER_MS */
} run_metrics_ops;

typedef struct run_metrics run_metrics;

/* Listen on b (not off) and serve from l (ops: at least one of render and ready). A
 * negative errno of socket/bind/listen (with
 * err saying what and where), -ENOMEM, -EIO (the library refused to start). */
int run_metrics_new(loop *l, const report_bind *b, const run_metrics_ops *ops, run_metrics **ret, char *err,
                    size_t err_size);
/* Closes every connection and the socket. Accepts NULL. */
void run_metrics_free(run_metrics *m);
/* The port actually bound (":0" is not accepted, but tests read it back). */
unsigned run_metrics_port(const run_metrics *m);
/* Connections open now (tracked from accept to close). */
unsigned run_metrics_connections(const run_metrics *m);

#endif
