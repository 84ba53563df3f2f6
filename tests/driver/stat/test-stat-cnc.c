/* SPDX-License-Identifier: Apache-2.0 */
/* The CnC parser (driver/stat/stat-cnc.c): a good file's header and counters; truncated,
 * garbage and wrong-version files refused with their own errors and the output untouched;
 * labels and channel lengths out of range clamped or refused. */
#include "stat-cnc.h"

#include <errno.h>

#include "cleanup.h"
#include "cnc-build.h"
#include "testutil.h"

typedef struct seen {
        int n;
        stat_counter c[8];
} seen;

static int keep(const stat_counter *c, void *ud)
{
        seen *s = ud;
        if (s->n < 8)
                s->c[s->n] = *c;
        s->n++;
        return 0;
}

static int stop(const stat_counter *c, void *ud)
{
        (void)c, (void)ud;
        return -ECANCELED;
}

static void test_good(void)
{
        cnc_build b = cb_new(8);
        stat_cnc_header h;
        seen s = { 0 };

        cb_system(&b, 0, 0, "Bytes sent", 1234);
        cb_counter(&b, 1, STAT_CNC_RECORD_RECLAIMED, 0, "\x01\0\0\0", 4, "Bytes received", 99);
        cb_stream(&b, 2, 4, "sub-pos", 7, -5, 1001, "aeron:udp?endpoint=10.0.0.2:40123", " @0", 4096);
        cb_system(&b, 3, 5, "NAKs sent", 3);
        cb_system(&b, 5, 6, "after the first unused record: never read", 1);

        CHECK_INT(stat_cnc_header_parse(b.buf, b.len, &h), 0);
        CHECK_INT(h.version, STAT_CNC_VERSION);
        CHECK_INT(h.pid, 4242);
        CHECK_INT(h.start_timestamp_ms, 1764800000123LL);
        CHECK_INT(h.file_page_size, 4096);
        CHECK_INT(h.driver_heartbeat_ms, 0); /* a 64-byte ring has no trailer */
        CHECK_INT(h.max_counters, 8);
        CHECK_INT(h.metadata_offset, b.meta);
        CHECK_INT(h.values_offset, b.values);

        CHECK_INT(stat_cnc_foreach(b.buf, b.len, &h, keep, &s), 3); /* 1 reclaimed, 4 unused: the end */
        CHECK_INT(s.n, 3);
        CHECK_INT(s.c[0].id, 0);
        CHECK_INT(s.c[0].value, 1234);
        CHECK_STR(s.c[0].label, "Bytes sent");
        CHECK_INT(s.c[1].id, 2);
        CHECK_INT(s.c[1].type_id, 4);
        CHECK_INT(s.c[2].id, 3);
        CHECK_INT(s.c[2].value, 3);

        int64_t reg = 0;
        int32_t session = 0, stream = 0;
        char channel[STAT_CNC_KEY_CHANNEL_MAX + 1];
        CHECK_INT(stat_cnc_stream_key(&s.c[1], &reg, &session, &stream, channel, sizeof(channel)), 0);
        CHECK_INT(reg, 7);
        CHECK_INT(session, -5);
        CHECK_INT(stream, 1001);
        CHECK_STR(channel, "aeron:udp?endpoint=10.0.0.2:40123");
        CHECK_STR(s.c[1].label, "sub-pos: 7 -5 1001 aeron:udp?endpoint=10.0.0.2:40123 @0");

        /* fn's error stops the walk */
        CHECK_INT(stat_cnc_foreach(b.buf, b.len, &h, stop, NULL), -ECANCELED);
        free(b.buf);
}

/* Header fields (offset, value) that make the file unreadable, with the error. */
static void test_bad_headers(void)
{
        static const struct {
                const char *what;
                size_t off;
                int32_t v;
                int err;
        } cases[] = {
                { "version 0: still being created", 0, 0, -EAGAIN },
                { "version 1.0.0", 0, 1 << 16, -EPROTONOSUPPORT },
                { "version -1", 0, -1, -EPROTONOSUPPORT },
                { "negative to-driver length", 4, -64, -EBADMSG },
                { "to-clients length over 1 GiB", 8, (1 << 30) + 1, -EBADMSG },
                { "to-driver length past the file", 4, 1 << 20, -ENODATA },
                { "negative metadata length", 12, -1, -EBADMSG },
                { "metadata too short for the values", 12, 512, -EBADMSG },
                { "values not whole records", 16, 8 * 128 - 1, -EBADMSG },
                { "error log past the file", 20, 1 << 16, -ENODATA },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cnc_build b = cb_new(8);
                stat_cnc_header h, before;
                memset(&h, 0x5a, sizeof(h));
                before = h;
                cb_w32(b.buf + cases[i].off, cases[i].v);
                int r = stat_cnc_header_parse(b.buf, b.len, &h);
                if (r != cases[i].err)
                        fprintf(stderr, "case \"%s\": %d\n", cases[i].what, r);
                CHECK_INT(r, cases[i].err);
                CHECK(memcmp(&h, &before, sizeof(h)) == 0); /* untouched */
                free(b.buf);
        }
        /* a minor or patch version of the same major is read (its layout is the same) */
        cnc_build b = cb_new(2);
        stat_cnc_header h;
        cb_w32(b.buf, (0 << 16) | (3 << 8) | 1);
        CHECK_INT(stat_cnc_header_parse(b.buf, b.len, &h), 0);
        CHECK_INT(stat_cnc_version_of(b.buf, b.len), (3 << 8) | 1);
        CHECK_INT(stat_cnc_version_of(b.buf, 3), 0);
        CHECK_INT(stat_cnc_header_parse(NULL, 0, &h), -EINVAL);
        free(b.buf);
}

/* The heartbeat from a to-driver ring with a trailer. */
static void test_heartbeat(void)
{
        cnc_build b = cb_new(2);
        uint8_t *big = calloc(1, b.len + 1024);
        stat_cnc_header h;
        /* the same file with a 1024-byte to-driver ring: everything after it moves */
        memcpy(big, b.buf, STAT_CNC_HEADER_LENGTH);
        cb_w32(big + 4, 1024 + CB_RING);
        cb_w64(big + STAT_CNC_HEADER_LENGTH + 1024 + CB_RING - STAT_CNC_RB_TRAILER + STAT_CNC_RB_HEARTBEAT, 1764800001000LL);
        CHECK_INT(stat_cnc_header_parse(big, b.len + 1024, &h), 0);
        CHECK_INT(h.driver_heartbeat_ms, 1764800001000LL);
        CHECK_INT(h.metadata_offset, b.meta + 1024);
        free(big);
        free(b.buf);
}

/* Every truncation of a good file is refused before any byte past the end is read (ASan
 * sees a read past a heap block of exactly that length). */
static void test_truncated(void)
{
        cnc_build b = cb_new(4);
        cb_system(&b, 0, 0, "Bytes sent", 1);
        for (size_t len = 0; len < b.len; len++) {
                uint8_t *copy = malloc(len ? len : 1);
                stat_cnc_header h;
                memcpy(copy, b.buf, len);
                CHECK_INT(stat_cnc_header_parse(copy, len, &h), -ENODATA);
                free(copy);
        }
        /* a header from the whole file over a shorter copy: the walk refuses it */
        stat_cnc_header h;
        CHECK_INT(stat_cnc_header_parse(b.buf, b.len, &h), 0);
        CHECK_INT(stat_cnc_foreach(b.buf, b.values, &h, keep, &(seen){ 0 }), -ENODATA);
        CHECK_INT(stat_cnc_foreach(b.buf, b.len - CB_RING, &h, keep, &(seen){ 0 }), 1); /* the error log is not walked */
        h.max_counters = STAT_CNC_COUNTERS_MAX + 1;
        CHECK_INT(stat_cnc_foreach(b.buf, b.len, &h, keep, &(seen){ 0 }), -ENODATA);
        free(b.buf);
}

static void test_labels_and_keys(void)
{
        cnc_build b = cb_new(4);
        stat_cnc_header h;
        seen s = { 0 };
        uint8_t *m;

        cb_system(&b, 0, 0, "x", 1);
        cb_system(&b, 1, 1, "y", 2);
        cb_stream(&b, 2, 2, "snd-pos", 1, 2, 3, "aeron:udp", "", 0);
        m = b.buf + b.meta;
        cb_w32(m + STAT_CNC_LABEL_OFFSET - 4, -7);                              /* negative: empty */
        cb_w32(m + STAT_CNC_METADATA_RECORD + STAT_CNC_LABEL_OFFSET - 4, 100000); /* clamped to the record */
        memset(m + STAT_CNC_METADATA_RECORD + STAT_CNC_LABEL_OFFSET, 'z', STAT_CNC_LABEL_MAX);
        CHECK_INT(stat_cnc_header_parse(b.buf, b.len, &h), 0);
        CHECK_INT(stat_cnc_foreach(b.buf, b.len, &h, keep, &s), 3);
        CHECK_INT(s.c[0].label_length, 0);
        CHECK_STR(s.c[0].label, "");
        CHECK_INT(s.c[1].label_length, STAT_CNC_LABEL_MAX);
        CHECK_INT(strlen(s.c[1].label), STAT_CNC_LABEL_MAX);

        int64_t reg = 9;
        int32_t se = 9, st = 9;
        char ch[STAT_CNC_KEY_CHANNEL_MAX + 1] = "untouched";
        cb_w32(s.c[2].key + 16, STAT_CNC_KEY_CHANNEL_MAX + 1);
        CHECK_INT(stat_cnc_stream_key(&s.c[2], &reg, &se, &st, ch, sizeof(ch)), -EBADMSG);
        cb_w32(s.c[2].key + 16, -1);
        CHECK_INT(stat_cnc_stream_key(&s.c[2], &reg, &se, &st, ch, sizeof(ch)), -EBADMSG);
        CHECK_INT(reg, 9);
        CHECK_STR(ch, "untouched");
        CHECK_INT(stat_cnc_stream_key(&s.c[2], &reg, &se, &st, ch, 10), -EINVAL); /* too small for a channel */
        free(b.buf);
}

/* Garbage: random bytes with a good version field are refused or walked within bounds. */
static void test_garbage(void)
{
        uint32_t x = 12345;
        for (int round = 0; round < 2000; round++) {
                size_t len = 128 + (size_t)(round * 7 % 4096);
                uint8_t *g = malloc(len);
                for (size_t i = 0; i < len; i++) {
                        x = x * 1103515245u + 12345u;
                        g[i] = (uint8_t)(x >> 16);
                }
                if (round % 2)
                        cb_w32(g, STAT_CNC_VERSION);
                if (round % 4 == 1) /* small lengths that add up within the file */
                        for (int f = 1; f <= 5; f++)
                                cb_w32(g + 4 * f, (int32_t)((g[4 * f] % 4) * 128));
                stat_cnc_header h;
                if (stat_cnc_header_parse(g, len, &h) == 0)
                        CHECK(stat_cnc_foreach(g, len, &h, keep, &(seen){ 0 }) >= 0);
                free(g);
        }
}

int main(void)
{
        test_good();
        test_bad_headers();
        test_truncated();
        test_heartbeat();
        test_labels_and_keys();
        test_garbage();
        printf("%d checks, %d failed\n", test_checks, test_failures);
        return test_failures ? 1 : 0;
}
