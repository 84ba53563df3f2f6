/* SPDX-License-Identifier: Apache-2.0 */
/* The probe message of spinlane's path probe (the datapath check and a running driver's
 * probe responder): a UDP payload of at least 16 bytes, "SLPR", version 1, a type
 * (request or reply), an id and a sequence number, then padding. A reply is the request
 * with its type changed: never larger. Pure: no I/O, no globals, never logs. */
#ifndef TR_PROBE_MSG_H
#define TR_PROBE_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_PROBE_HDR 16        /* "SLPR", version, type, 2 reserved, id, seq */
#define TR_PROBE_VERSION 1
#define TR_PROBE_REQUEST 1
#define TR_PROBE_REPLY 2
#define TR_PROBE_DEFAULT_PORT 39990 /* SPINLANE_PROBE_PORT's default */

struct tr_probe {
        uint8_t type;   /* TR_PROBE_REQUEST or TR_PROBE_REPLY */
        uint32_t id;    /* the prober's token (host order) */
        uint32_t seq;   /* host order */
};

/* Parse a probe payload: 0 and *ret filled, or -EBADMSG (short, not "SLPR", another
 * version, an unknown type); ret untouched then. */
int tr_probe_parse(const uint8_t *d, size_t len, struct tr_probe *ret);

/* Write a probe of len bytes (>= TR_PROBE_HDR, else -EINVAL) into out: the header and
 * zero padding. Returns len. */
int tr_probe_build(uint8_t *out, size_t len, uint8_t type, uint32_t id, uint32_t seq);

/* The answer to req (len bytes) into out (outlen bytes): the same bytes with the type
 * turned into a reply. Returns the reply's length (= len), or -EBADMSG when req is not a
 * probe request (replies are never answered: two responders cannot ping-pong), -ENOBUFS
 * when out is too small. */
int tr_probe_answer(const uint8_t *req, size_t len, uint8_t *out, size_t outlen);

#endif
