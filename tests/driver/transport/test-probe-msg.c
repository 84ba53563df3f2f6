/* SPDX-License-Identifier: Apache-2.0 */
/* Probe messages: build, parse, answer; bad inputs refused, outputs untouched. */
#include <errno.h>
#include <string.h>

#include "probe_msg.h"
#include "testutil.h"

static void test_round_trip(void)
{
        uint8_t req[64], rep[64];
        struct tr_probe p = { 0 };
        CHECK_INT(tr_probe_build(req, sizeof(req), TR_PROBE_REQUEST, 0xdeadbeef, 42), 64);
        CHECK_INT(tr_probe_parse(req, sizeof(req), &p), 0);
        CHECK_INT(p.type, TR_PROBE_REQUEST);
        CHECK_INT(p.id, 0xdeadbeef);
        CHECK_INT(p.seq, 42);
        CHECK_INT(tr_probe_answer(req, sizeof(req), rep, sizeof(rep)), 64);
        CHECK_INT(tr_probe_parse(rep, sizeof(rep), &p), 0);
        CHECK_INT(p.type, TR_PROBE_REPLY);
        CHECK_INT(p.seq, 42);
        CHECK(memcmp(req + 6, rep + 6, sizeof(req) - 6) == 0); /* the rest echoed */
        /* a reply is never answered; a short buffer is refused */
        CHECK_INT(tr_probe_answer(rep, sizeof(rep), req, sizeof(req)), -EBADMSG);
        CHECK_INT(tr_probe_build(req, sizeof(req), TR_PROBE_REQUEST, 1, 1), 64);
        CHECK_INT(tr_probe_answer(req, sizeof(req), rep, 63), -ENOBUFS);
        CHECK_INT(tr_probe_build(req, 15, TR_PROBE_REQUEST, 1, 1), -EINVAL);
}

static void test_bad(void)
{
        static const struct {
                const char *bytes;
                size_t len;
        } bad[] = {
                { "", 0 },
                { "SLPR\x01\x01\0\0\0\0\0\0\0\0\0", 15 },       /* one byte short */
                { "SLPX\x01\x01\0\0\0\0\0\0\0\0\0\0", 16 },     /* magic */
                { "SLPR\x02\x01\0\0\0\0\0\0\0\0\0\0", 16 },     /* version */
                { "SLPR\x01\x03\0\0\0\0\0\0\0\0\0\0", 16 },     /* type */
                { "SLPR\x01\x00\0\0\0\0\0\0\0\0\0\0", 16 },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct tr_probe p = { .type = 99, .id = 7, .seq = 7 };
                uint8_t out[32];
                CHECK_INT(tr_probe_parse((const uint8_t *)bad[i].bytes, bad[i].len, &p), -EBADMSG);
                CHECK_INT(p.type, 99); /* untouched */
                CHECK_INT(tr_probe_answer((const uint8_t *)bad[i].bytes, bad[i].len, out, sizeof(out)), -EBADMSG);
        }
}

int main(void)
{
        test_round_trip();
        test_bad();
        return test_done();
}
