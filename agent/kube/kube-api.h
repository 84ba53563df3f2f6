/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes API requests the agent makes and the replies it reads, as bytes: the
 * Node label merge patch (only keys under the agent's prefix), events.k8s.io/v1 Event
 * bodies and their series patches, API Status errors, Retry-After. Pure: no I/O, no
 * globals, never logs; replies are untrusted and bounded; outputs untouched on failure. */
#ifndef SPIN_KUBE_API_H
#define SPIN_KUBE_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KUBE_LABEL_PREFIX "spinlane.io/"
#define KUBE_REPORTING_CONTROLLER "spinlane.io/agent"
#define KUBE_EVENT_NAMESPACE "default" /* Events about cluster-scoped objects (Nodes) */
#define KUBE_MAX_REPLY (2 * 1024 * 1024)
#define KUBE_MAX_LABELS 64     /* of ours on a Node */
#define KUBE_NOTE_MAX 1024     /* bytes (the API server's limit) */
#define KUBE_REASON_MAX 128
#define KUBE_NAME_MAX 253      /* a DNS subdomain */
#define KUBE_MSG_MAX 256       /* a Status message kept, in bytes */

typedef struct kube_label {
        const char *key;   /* must start with the prefix */
        const char *value; /* a label value (<= 63, [A-Za-z0-9._-], alphanumeric ends, or
                              ""), or NULL: a key of ours that must be absent */
} kube_label;

/* Label syntax (RFC 1123 prefix + "/" + name <= 63; value as above). */
bool kube_label_key_valid(const char *key);
bool kube_label_value_valid(const char *value);
/* An object name the agent sends in a path (a node's, an Event's): 1..KUBE_NAME_MAX of
 * [a-z0-9.-]. NULL is not one. */
bool kube_name_ok(const char *name);

/* What the agent needs of a GET /api/v1/nodes/NAME reply: metadata.uid,
 * metadata.resourceVersion and the labels under prefix (a new JSON object key -> value).
 * -EBADMSG naming what is missing or malformed, -E2BIG beyond the limits. */
typedef struct kube_node_info {
        char uid[64];
        char resource_version[64];
        json_t *own_labels;
} kube_node_info;
int kube_node_parse(const char *body, size_t len, const char *prefix, kube_node_info *ret, char *err,
                    size_t err_size);
void kube_node_info_clear(kube_node_info *n);

/* The merge patch (application/merge-patch+json) that makes the Node's labels named in
 * want[] what want[] says: changed and new keys set, keys whose value is NULL removed
 * (null) when present, no other key named, not even one under prefix (others may put
 * labels there: the DaemonSet's own node selector spinlane.io/node-pool is the user's). resource_version (may be NULL) makes the patch conditional
 * (409 when the Node changed since). Returns 1 and a new string in *ret_body, or 0 when
 * nothing would change (*ret_body untouched). -EINVAL for a key outside prefix or a bad
 * key or value (message names it). current may be NULL (no labels of ours). */
int kube_label_patch(const kube_label *want, size_t n, const json_t *current, const char *resource_version,
                     const char *prefix, char **ret_body, char *err, size_t err_size);

/* "nic-address" + "Failed" -> "NicAddressFailed": each [a-z0-9] run after a '-', '_' or
 * '.' starts upper-case. -EINVAL for an empty or odd id, -ENAMETOOLONG beyond len. */
int kube_reason_from_check(const char *check_id, const char *suffix, char *buf, size_t len);

/* A MicroTime: "2006-01-02T15:04:05.000000Z" from microseconds since the epoch (UTC). */
char *kube_microtime(int64_t us, char *buf, size_t len);

/* An events.k8s.io/v1 Event about a Node. */
typedef struct kube_event {
        const char *name;               /* unique in the namespace (kube_event_name) */
        const char *node;               /* regarding: the Node */
        const char *node_uid;           /* may be NULL */
        const char *type;               /* "Normal" or "Warning" */
        const char *reason;             /* UpperCamelCase, <= 128 */
        const char *action;             /* machine-readable, <= 128 (e.g. "Check") */
        const char *note;               /* cut to 1024 bytes at a UTF-8 boundary */
        const char *reporting_instance; /* <= 128 (e.g. "spinlane-agent-NODE") */
        int64_t event_time_us;          /* first observed, wall clock */
        int32_t series_count;           /* 0: a singleton; else >= 2 */
        int64_t series_last_us;
} kube_event;

/* The POST body (a new string). -EINVAL naming a bad field. */
int kube_event_body(const kube_event *e, char **ret, char *err, size_t err_size);
/* The merge patch of a series: {"series":{"count":N,"lastObservedTime":"..."}}. */
int kube_event_series_patch(int32_t count, int64_t last_us, char **ret);
/* "NODE.<hex>" (at most KUBE_NAME_MAX): unique per (time, seq). */
int kube_event_name(const char *node, int64_t us, unsigned seq, char *buf, size_t len);

/* A Status error reply. Always fills ret: for a body that is not a Status, reason is ""
 * and message says what came ("non-JSON reply of N bytes"). Strings are cut and stripped
 * of control bytes. */
typedef struct kube_status {
        long code;                  /* Status.code, else the HTTP status */
        char reason[64];            /* "Conflict", "Invalid", "Forbidden", ... */
        char message[KUBE_MSG_MAX];
} kube_status;
void kube_status_parse(const char *body, size_t len, long http_status, kube_status *ret);

/* Retry-After as delta-seconds (an HTTP date is -EINVAL), capped at max_s. */
int kube_retry_after_parse(const char *v, uint32_t max_s, uint32_t *ret);

#endif
