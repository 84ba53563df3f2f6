/* SPDX-License-Identifier: Apache-2.0 */
/* NIC addresses from the cloud's instance metadata service, without blocking the loop:
 * AWS IMDSv2 (a session token from PUT /latest/api/token, reused until it expires and
 * renewed on a 401, then GETs of the ENI's local-ipv4s and subnet-ipv4-cidr-block under
 * /latest/meta-data/network/interfaces/macs/<mac>/) and Azure IMDS (GET
 * /metadata/instance/network with "Metadata: true" and a pinned api-version). Short
 * timeouts, bounded bodies, retries with backoff on transport errors, 5xx and 429. I/O
 * through agent/http; the replies go through the pure imds-parse. Never logs. */
#ifndef SPIN_IMDS_H
#define SPIN_IMDS_H

#include "http.h"
#include "imds-parse.h"
#include "loop.h"

#include <stdint.h>

#define IMDS_DEFAULT_BASE_URL "http://169.254.169.254"
#define IMDS_ENV_URL "SPINLANE_IMDS_URL"
#define IMDS_AZURE_API_VERSION "2021-02-01" /* pinned: the network schema used here */
#define IMDS_AWS_TOKEN_TTL_MAX 21600u        /* seconds (6 hours), AWS's maximum */
#define IMDS_MSG_LEN 512

typedef enum imds_cloud {
        IMDS_AWS,
        IMDS_AZURE,
} imds_cloud;

typedef struct imds_options {
        const char *base_url;        /* NULL = imds_base_url() */
        uint32_t connect_timeout_ms; /* 0 = 1000 */
        uint32_t timeout_ms;         /* per request, 0 = 2000 */
        unsigned attempts;           /* per request, 0 = 4 (1 + 3 retries) */
        uint32_t backoff_ms;         /* first retry delay, doubled each retry, 0 = 200 */
        uint32_t backoff_max_ms;     /* 0 = 5000 */
        uint32_t token_ttl_s;        /* IMDSv2 token TTL asked for, 0 = 21600, at most that */
        uint64_t (*now_ms)(void);    /* monotonic clock; NULL = loop_now_ms (tests inject) */
} imds_options;

typedef struct imds imds;

/* error 0: addr is the NIC's address (valid during the call). Else a negative errno and
 * message, one line naming the request and what was wrong (never a token):
 * -ETIMEDOUT/-ECONNREFUSED/... (IMDS unreachable, after the retries), -ENOENT (HTTP 404:
 * the MAC is not an interface of this instance), -EACCES (401/403), -EBADMSG (a garbled
 * reply), -ENODATA (no IPv4 on that interface), -EDOM (an address outside its subnet),
 * -EFBIG (a reply beyond its bound), -EIO (another HTTP status). */
typedef void (*imds_done_fn)(int error, const imds_addr *addr, const char *message, void *userdata);

/* The base URL: $SPINLANE_IMDS_URL if set and not empty, else IMDS_DEFAULT_BASE_URL. */
const char *imds_base_url(void);

/* A metadata client on loop l and HTTP client h (neither owned). -EINVAL for a base URL
 * that is not http:// (the metadata services speak plain HTTP on a link-local address). */
int imds_new(loop *l, http_client *h, const imds_options *o, imds **ret);
/* Cancels every lookup (their callbacks are not called). Accepts NULL; safe from inside a
 * lookup's callback. */
void imds_free(imds *m);

/* Look the NIC with MAC mac up. The callback runs once, from the loop (never from inside
 * this call). -ENOMEM, -EINVAL. */
int imds_lookup(imds *m, imds_cloud cloud, const uint8_t mac[6], imds_done_fn fn, void *userdata);

/* IMDSv2 tokens fetched so far (tests: proves reuse). */
unsigned imds_tokens_fetched(const imds *m);

#endif
