/* SPDX-License-Identifier: Apache-2.0 */
/* A small non-blocking HTTP(S) client on libcurl's multi interface, driven by the daemon's
 * one epoll loop (common/loop.h): curl's sockets and its one timer become loop sources, so
 * no request ever blocks the loop. Owns the curl handles and their buffers. Never logs,
 * never follows redirects, never uses a proxy, and verifies TLS always (against the CA
 * given per request). */
#ifndef SPIN_HTTP_H
#define SPIN_HTTP_H

#include "loop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hard limits. A request asking for more is refused with -EINVAL. */
#define HTTP_MAX_BODY_LIMIT (64u * 1024 * 1024) /* the largest max_body a request may ask */
#define HTTP_DEFAULT_MAX_BODY (1024u * 1024)    /* when max_body is 0 */
#define HTTP_MAX_HEADER_BYTES (64u * 1024)      /* response header lines kept, in total */
#define HTTP_MAX_HEADERS 32                     /* request headers a request may add */
#define HTTP_DEFAULT_CONNECT_MS 2000u
#define HTTP_DEFAULT_TOTAL_MS 10000u
#define HTTP_MAX_TIMEOUT_MS (10u * 60 * 1000)
#define HTTP_ERR_LEN 256                        /* http_response.error holds at most this */
/* Connections of one client: in use at once (requests beyond wait in curl's queue, their
 * timeouts running), to one host, and kept idle for reuse (the oldest closed beyond). */
#define HTTP_MAX_CONNECTIONS 16
#define HTTP_MAX_HOST_CONNECTIONS 12
#define HTTP_MAX_IDLE_CONNECTIONS 4

typedef struct http_client http_client;
typedef struct http_request http_request;

typedef struct http_options {
        const char *method;    /* "GET" (default when NULL), "PUT", "POST", "PATCH", "DELETE" */
        const char *url;       /* http:// or https:// only */
        /* "Name: value" lines (no CR/LF inside: -EINVAL), at most HTTP_MAX_HEADERS; NULL
         * for none. Copied at submit. A body without a Content-Type header is sent with
         * none (curl's form-urlencoded default is removed). */
        const char *const *headers;
        size_t n_headers;
        const void *body;      /* request body (copied at submit); NULL = none */
        size_t body_len;
        /* https only: the CA to verify the server against, a PEM file or PEM bytes (one
         * of the two is required for https: -EINVAL otherwise). Peer and host name are
         * always verified; the system store is never used. */
        const char *ca_file;
        const void *ca_pem;
        size_t ca_pem_len;
        uint32_t connect_timeout_ms; /* 0 = HTTP_DEFAULT_CONNECT_MS */
        uint32_t timeout_ms;         /* whole request, 0 = HTTP_DEFAULT_TOTAL_MS */
        size_t max_body;             /* response body bound, 0 = HTTP_DEFAULT_MAX_BODY */
} http_options;

/* What a finished request gives its callback. Everything here is owned by the client and
 * valid only during the callback. */
typedef struct http_response {
        /* 0: a complete HTTP response arrived (any status). Otherwise a negative errno:
         * -ETIMEDOUT (connect or total timeout), -ECONNREFUSED, -EHOSTUNREACH (name not
         * resolved / no route), -ECONNRESET (peer closed or reset before the response was
         * complete), -EFBIG (body or headers beyond the limit), -EKEYREJECTED (server
         * certificate not trusted or name mismatch), -ENOKEY (the CA file/PEM unusable),
         * -EPROTO (TLS handshake or HTTP framing error), -ENOMEM, -EIO (other). */
        int error;
        const char *error_text; /* one line: what went wrong (names the limit for -EFBIG);
                                   "" when error == 0. Never contains request headers. */
        long status;            /* HTTP status code, 0 if none was received */
        const char *body;       /* NUL-terminated (the NUL is not counted), never NULL */
        size_t body_len;
        const char *headers;    /* the final response's header lines, each NUL-terminated,
                                   without CR/LF, the list ended by an empty string */
} http_response;

/* Called once per submitted request that was not cancelled, always from the loop (never
 * from inside http_submit). It may submit or cancel requests, and may free the client. */
typedef void (*http_done_fn)(const http_response *r, void *userdata);

/* A client bound to loop l (not owned). The process must ignore SIGPIPE (the daemon
 * does): curl runs with CURLOPT_NOSIGNAL (no signal handlers of a library in a threaded
 * process), so a TLS write to a peer that went away would otherwise raise it. */
int http_client_new(loop *l, http_client **ret);
/* Cancels every request in flight (their callbacks are not called) and frees the client.
 * Accepts NULL. Safe from inside a completion callback. */
void http_client_free(http_client *c);

/* Start a request. On success the callback will run exactly once, unless the request is
 * cancelled first; ret_req (optional) identifies it for http_cancel(). -EINVAL for bad
 * options (a programming error of the caller: no message), -ENOMEM. */
int http_submit(http_client *c, const http_options *o, http_done_fn fn, void *userdata,
                http_request **ret_req);
/* Abort a request in flight; its callback is not called. The handle is invalid after. */
void http_cancel(http_client *c, http_request *r);
/* Requests in flight. */
size_t http_pending(const http_client *c);

/* The value of response header name (case-insensitive), or NULL. Leading spaces of the
 * value are skipped. */
const char *http_response_header(const http_response *r, const char *name);

#endif
