/* SPDX-License-Identifier: Apache-2.0 */
/* Probe messages: parse, build, answer. Pure: no I/O, no globals, never logs. */
#include "probe_msg.h"

#include <errno.h>
#include <string.h>

static const uint8_t magic[4] = { 'S', 'L', 'P', 'R' };

static uint32_t rd32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
}

int tr_probe_parse(const uint8_t *d, size_t len, struct tr_probe *ret)
{
        if (!d || len < TR_PROBE_HDR || memcmp(d, magic, 4) != 0 || d[4] != TR_PROBE_VERSION ||
            (d[5] != TR_PROBE_REQUEST && d[5] != TR_PROBE_REPLY))
                return -EBADMSG;
        ret->type = d[5];
        ret->id = rd32(d + 8);
        ret->seq = rd32(d + 12);
        return 0;
}

int tr_probe_build(uint8_t *out, size_t len, uint8_t type, uint32_t id, uint32_t seq)
{
        if (len < TR_PROBE_HDR || len > 65507)
                return -EINVAL;
        memset(out, 0, len);
        memcpy(out, magic, 4);
        out[4] = TR_PROBE_VERSION;
        out[5] = type;
        wr32(out + 8, id);
        wr32(out + 12, seq);
        return (int)len;
}

int tr_probe_answer(const uint8_t *req, size_t len, uint8_t *out, size_t outlen)
{
        struct tr_probe p;
        if (tr_probe_parse(req, len, &p) < 0 || p.type != TR_PROBE_REQUEST || len > 65507)
                return -EBADMSG;
        if (outlen < len)
                return -ENOBUFS;
        memmove(out, req, len);
        out[5] = TR_PROBE_REPLY;
        return (int)len;
}
