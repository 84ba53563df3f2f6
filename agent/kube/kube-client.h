/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes API client: requests through agent/http (TLS verified against the
 * cluster CA), the bearer token re-read by path at least every minute and at once on a
 * 401 (bound tokens rotate), and the calls the agent makes: sync its Node labels (GET,
 * merge patch of its own keys only, conditional on the resourceVersion, again on 409),
 * create an Event, patch an Event's series. Never logs; never puts the token in a
 * message; retries beyond the 401 and 409 cases are the caller's (kube_result says
 * whether and when, Retry-After honoured). */
#ifndef SPIN_KUBE_CLIENT_H
#define SPIN_KUBE_CLIENT_H

#include "http.h"
#include "kube-api.h"
#include "kube-config.h"
#include "loop.h"

#include <stdbool.h>
#include <stdint.h>

#define KUBE_TOKEN_REREAD_MS 60000u
#define KUBE_CONFLICT_RETRIES 3

typedef struct kube_client kube_client;

typedef struct kube_client_options {
        uint32_t connect_timeout_ms; /* 0 = 5000 */
        uint32_t timeout_ms;         /* per request, 0 = 15000 */
        uint64_t (*now_ms)(void);    /* monotonic clock for the token re-read; NULL = loop_now_ms */
} kube_client_options;

typedef struct kube_result {
        /* 0: the call did what was asked (2xx; for label sync also "nothing to change").
         * Else negative: a transport errno from agent/http (-ETIMEDOUT, -ECONNREFUSED,
         * -EKEYREJECTED a wrong CA, ...), the token file's read error, -EACCES (401 after
         * a fresh token, or 403), -ENOENT (404), -EEXIST (409 on create), -EBUSY (409 on a
         * conditional patch after the retries), -EINVAL (422 or 400), -EAGAIN (429 or 5xx:
         * retry), -EBADMSG (a reply we cannot read), -EIO (another status). */
        int error;
        long status;              /* last HTTP status, 0 if none */
        const kube_status *api;   /* the Status of a non-2xx reply, else NULL */
        bool retry;               /* worth retrying later (5xx, 429, transport errors) */
        uint32_t retry_after_s;   /* Retry-After of a 429/503, 0 = none given */
        bool changed;             /* label sync: a patch was sent */
        const char *body;         /* the reply body ("" if none) */
        size_t body_len;
        const char *message;      /* one line: method, path, status, Status message */
} kube_result;

typedef void (*kube_done_fn)(const kube_result *r, void *userdata);

/* A client for cfg (copied) on loop l and HTTP client h (not owned). -EINVAL for a config
 * without server, CA or token source. */
int kube_client_new(loop *l, http_client *h, const kube_config *cfg, const kube_client_options *o,
                    kube_client **ret);
/* Cancels every call in flight (callbacks not called). Accepts NULL; not from inside one
 * of its own callbacks. */
void kube_client_free(kube_client *c);

/* One API call: method and path ("/api/v1/nodes/x"), an optional JSON body with its
 * content type. The callback runs once, from the loop. */
int kube_request(kube_client *c, const char *method, const char *path, const char *content_type,
                 const char *body, kube_done_fn fn, void *userdata);

/* Cancel every call in flight whose userdata is userdata: freed, its callback never
 * called (a caller going away before its replies). Not from inside one of those calls'
 * own callbacks. */
void kube_cancel(kube_client *c, const void *userdata);

/* Make the labels of Node node named in labels[] what labels[] says (a NULL value:
 * removed when present); no other label is touched. Never creates or deletes the Node. */
int kube_node_sync_labels(kube_client *c, const char *node, const kube_label *labels, size_t n,
                          kube_done_fn fn, void *userdata);

/* POST the Event (namespace KUBE_EVENT_NAMESPACE). */
int kube_event_create(kube_client *c, const kube_event *e, kube_done_fn fn, void *userdata);
/* Merge-patch the series of Event name. */
int kube_event_patch_series(kube_client *c, const char *name, int32_t count, int64_t last_us,
                            kube_done_fn fn, void *userdata);

/* Token files read so far (tests: proves the re-read). */
unsigned kube_client_token_reads(const kube_client *c);

#endif
