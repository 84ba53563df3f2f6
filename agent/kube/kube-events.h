/* SPDX-License-Identifier: Apache-2.0 */
/* Which Events to send and when: repeats of one Event (same check, type, reason and note
 * within the series window) become a series (one create, then patches of the count), and
 * a token bucket bounds the API calls so a flapping device cannot storm the API server;
 * what the bucket holds back is sent (with the count it reached) when tokens return. Pure:
 * the caller passes the time, performs the actions and reports their results; no I/O, no
 * globals, never logs. */
#ifndef SPIN_KUBE_EVENTS_H
#define SPIN_KUBE_EVENTS_H

#include "kube-api.h"

#include <stdbool.h>
#include <stdint.h>

#define KEV_MAX_ENTRIES 64
#define KEV_CHECK_MAX 64

typedef struct kev_params {
        uint64_t series_window_ms; /* repeats closer than this join a series; 0 = 6 min */
        unsigned burst;            /* bucket size; 0 = 25 */
        uint64_t refill_ms;        /* one token back every refill_ms; 0 = 5 min */
} kev_params;

typedef enum kev_kind { KEV_NONE, KEV_CREATE, KEV_PATCH } kev_kind;

/* One API call to make. The strings live in the aggregator until its next call. */
typedef struct kev_action {
        kev_kind kind;
        const char *name;   /* the Event's name */
        const char *check, *type, *reason, *note;
        int64_t first_us;   /* eventTime */
        int64_t last_us;    /* series.lastObservedTime */
        int32_t count;      /* occurrences so far: 1 = a singleton; >= 2 = a series */
} kev_action;

typedef struct kev_entry {
        bool used, created, pending;
        kev_kind in_flight;
        char name[KUBE_NAME_MAX + 1];
        char check[KEV_CHECK_MAX], type[8], reason[KUBE_REASON_MAX + 1], note[KUBE_NOTE_MAX + 1];
        int64_t first_us, last_us;
        int32_t count;
        uint64_t last_ms;
} kev_entry;

typedef struct kev {
        kev_params p;
        char node[KUBE_NAME_MAX + 1];
        double tokens;
        uint64_t refilled_ms;
        unsigned seq;
        uint64_t suppressed; /* observations held back by the bucket (a metric) */
        kev_entry e[KEV_MAX_ENTRIES];
} kev;

/* params may be NULL (the defaults). The bucket starts full at now_ms. */
void kev_init(kev *k, const kev_params *params, const char *node, uint64_t now_ms);

/* A check changed state (the caller only reports changes): 1 and *ret = what to send now,
 * or 0 when the bucket holds it back (kev_next() sends it later). -EINVAL for a bad
 * type or an empty check/reason. now_ms is monotonic, wall_us the wall clock. */
int kev_observe(kev *k, uint64_t now_ms, int64_t wall_us, const char *check, const char *type,
                const char *reason, const char *note, kev_action *ret);

/* The next held-back action the bucket now allows: 1 and *ret, or 0. */
int kev_next(kev *k, uint64_t now_ms, kev_action *ret);
/* When kev_next() may have something (UINT64_MAX: nothing is held back). */
uint64_t kev_wakeup_ms(const kev *k, uint64_t now_ms);

/* The outcome of the call for Event name: 0 done; -ENOENT (PATCH: the Event is gone, it
 * expired) → sent again as a create; -EEXIST (CREATE: it exists) → patched; any other
 * negative → held back and tried again when the bucket allows. */
void kev_result(kev *k, const char *name, int result);

/* The action for Event name never reached the API server (it is known to be down, or the
 * connection failed): pending again as if never taken, and its token back in the bucket
 * (the bucket protects the API server; a call it never saw costs it nothing). */
void kev_defer(kev *k, const char *name);

#endif
