/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA kubelet plugin's untrusted inputs and its answers, as bytes and text in and
 * out: the kubelet's NodePrepareResources / NodeUnprepareResources requests (bounded:
 * claims per request, string lengths, the claim's names checked as Kubernetes names), the
 * ResourceClaim the API server returns (the allocation results of this driver and pool),
 * the checkpoint of prepared claims, the device names of the contract, and the packed
 * responses. v1 and v1beta1 messages are the same on the wire: one decoder serves both.
 * No I/O, no globals, never logs: every refusal is a message naming what was wrong. */
#ifndef SPIN_DRA_REQUEST_H
#define SPIN_DRA_REQUEST_H

#include "dp-devices.h"
#include "dra-slice.h" /* DRA_DRIVER, the device names */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DRA_MAX_REQUEST (256 * 1024) /* bytes of one request message */
#define DRA_MAX_CLAIMS 64            /* claims in one request */
#define DRA_MAX_DEVICES 64           /* allocation results of one claim (ours) */
#define DRA_MAX_CHECKPOINT (4 * 1024 * 1024)
#define DRA_MAX_PREPARED 4096        /* claims in the checkpoint */
#define DRA_UID_LEN 64               /* a UID: at most 63 of [0-9a-z-] */
#define DRA_NS_LEN 64                /* a namespace: a DNS label */
#define DRA_NAME_LEN 254             /* a claim or pool name: a DNS subdomain */
#define DRA_DEV_LEN 64               /* a device or request name: a DNS label */
#define DRA_ERR_LEN 512

typedef struct dra_claim_ref {
        char ns[DRA_NS_LEN];
        char uid[DRA_UID_LEN];
        char name[DRA_NAME_LEN];
} dra_claim_ref;

typedef struct dra_result {
        char request[DRA_DEV_LEN];
        char pool[DRA_NAME_LEN];
        char device[DRA_DEV_LEN];
} dra_result;

/* A prepared claim, as the checkpoint keeps it. */
typedef struct dra_prepared {
        dra_claim_ref ref;
        dra_result *results;    /* malloc'ed */
        size_t n_results;
} dra_prepared;

void dra_prepared_clear(dra_prepared *p);

/* The claims of a NodePrepareResourcesRequest or NodeUnprepareResourcesRequest (what
 * names the call in messages: "NodePrepareResources"). 0 with a malloc'ed array (n >= 1,
 * no UID twice); -EINVAL with err naming the claim and field; -EMSGSIZE for a request over
 * DRA_MAX_REQUEST or DRA_MAX_CLAIMS (err says which); -ENOMEM. Outputs untouched on
 * failure. */
int dra_decode_claims(const char *what, const uint8_t *req, size_t len, dra_claim_ref **ret, size_t *ret_n,
                      char *err, size_t errlen);

/* The ResourceClaim JSON (body, len) of ref: metadata.uid must be ref->uid, and the
 * results of status.allocation.devices.results[] with driver DRA_DRIVER and pool == pool
 * are taken (at least one; at most DRA_MAX_DEVICES). 0 with a malloc'ed array, or -EINVAL
 * / -ENOENT (no such results) with err; -ENOMEM. */
int dra_claim_parse(const char *body, size_t len, const dra_claim_ref *ref, const char *pool, dra_result **ret,
                    size_t *ret_n, char *err, size_t errlen);

/* The checkpoint: {"version":1,"claims":[{"namespace","name","uid","devices":[{"request",
 * "pool","device"}]}]}. Parse: 0 with a malloc'ed array (free each with
 * dra_prepared_clear); -EINVAL with err for anything that is not that; -ENOMEM. */
int dra_checkpoint_parse(const char *text, size_t len, dra_prepared **ret, size_t *ret_n, char *err,
                         size_t errlen);
/* Format: a malloc'ed JSON text, NULL when out of memory. */
char *dra_checkpoint_format(const dra_prepared *claims, size_t n);

/* The device's name in the ResourceSlice, by dra-slice.h's one rule ("nic-" + the PCI
 * address with ':' and '.' as '-', "core-" + the core's id). -ENAMETOOLONG, -EINVAL. */
int dra_device_name(device_kind kind, const device_entry *d, char *buf, size_t size);

/* One claim's answer: error "" = prepared, with its results (each answered with the CDI
 * device "spinlane.io/claim=<uid>"). */
typedef struct dra_answer {
        const char *uid;
        const char *error;
        const dra_result *results;
        size_t n_results;
} dra_answer;

/* The packed NodePrepareResourcesResponse / NodeUnprepareResourcesResponse (results
 * unused there) of answers. 0, -ENOMEM. */
int dra_encode_prepare(const dra_answer *answers, size_t n, uint8_t **ret_buf, size_t *ret_len);
int dra_encode_unprepare(const dra_answer *answers, size_t n, uint8_t **ret_buf, size_t *ret_len);

/* The registration API: GetInfo's PluginInfo (type "DRAPlugin", name DRA_DRIVER, the
 * endpoint, the versions "v1.DRAPlugin", "v1beta1.DRAPlugin"); the RegistrationStatus
 * (bounded, the error as a printable string in err). */
int dra_encode_plugin_info(const char *endpoint, uint8_t **ret_buf, size_t *ret_len);
int dra_decode_empty(const uint8_t *req, size_t len);
int dra_decode_registration_status(const uint8_t *req, size_t len, bool *ret_registered, char *err, size_t errlen);

#endif
