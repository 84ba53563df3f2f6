/* SPDX-License-Identifier: Apache-2.0 */
/* Builds CnC files in memory for the tests (Aeron's layout: a 128-byte header, the two
 * command buffers, counters metadata and values, the error log), so that each test states
 * exactly the bytes it feeds the parser. */
#ifndef SPIN_CNC_BUILD_H
#define SPIN_CNC_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat-cnc.h"

#define CB_RING 64      /* each command buffer and the error log */

typedef struct cnc_build {
        uint8_t *buf;
        size_t len;
        size_t meta, values;
        unsigned n;     /* counters the file has room for */
} cnc_build;

static inline void cb_w32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static inline void cb_w64(uint8_t *p, int64_t v) { memcpy(p, &v, 8); }

static inline cnc_build cb_new(unsigned n)
{
        cnc_build b = { 0 };
        b.n = n;
        b.meta = STAT_CNC_HEADER_LENGTH + 2 * CB_RING;
        b.values = b.meta + (size_t)n * STAT_CNC_METADATA_RECORD;
        b.len = b.values + (size_t)n * STAT_CNC_VALUE_RECORD + CB_RING;
        b.buf = calloc(1, b.len);
        if (!b.buf)
                abort();
        cb_w32(b.buf, STAT_CNC_VERSION);
        cb_w32(b.buf + 4, CB_RING);
        cb_w32(b.buf + 8, CB_RING);
        cb_w32(b.buf + 12, (int32_t)(n * STAT_CNC_METADATA_RECORD));
        cb_w32(b.buf + 16, (int32_t)(n * STAT_CNC_VALUE_RECORD));
        cb_w32(b.buf + 20, CB_RING);
        cb_w64(b.buf + 24, 10000000000LL);
        cb_w64(b.buf + 32, 1764800000123LL);
        cb_w64(b.buf + 40, 4242);
        cb_w32(b.buf + 48, 4096);
        return b;
}

/* Counter id with state, type, key (klen bytes), label and value. */
static inline void cb_counter(cnc_build *b, unsigned id, int32_t state, int32_t type, const void *key, size_t klen,
                              const char *label, int64_t value)
{
        uint8_t *m = b->buf + b->meta + (size_t)id * STAT_CNC_METADATA_RECORD;
        uint8_t *v = b->buf + b->values + (size_t)id * STAT_CNC_VALUE_RECORD;
        size_t ll = strlen(label);
        if (id >= b->n || klen > STAT_CNC_KEY_LENGTH || ll > STAT_CNC_LABEL_MAX)
                abort();
        cb_w32(m, state);
        cb_w32(m + 4, type);
        memcpy(m + STAT_CNC_KEY_OFFSET, key, klen);
        cb_w32(m + STAT_CNC_LABEL_OFFSET - 4, (int32_t)ll);
        memcpy(m + STAT_CNC_LABEL_OFFSET, label, ll);
        cb_w64(v, value);
        cb_w64(v + 8, (int64_t)id);
}

static inline void cb_system(cnc_build *b, unsigned id, int32_t sys_id, const char *label, int64_t value)
{
        cb_counter(b, id, STAT_CNC_RECORD_ALLOCATED, 0, &sys_id, sizeof(sys_id), label, value);
}

/* A stream position counter as Aeron's aeron_stream_counter_allocate writes it. */
static inline void cb_stream(cnc_build *b, unsigned id, int32_t type, const char *name, int64_t reg, int32_t session,
                             int32_t stream, const char *channel, const char *suffix, int64_t value)
{
        uint8_t key[STAT_CNC_KEY_LENGTH] = { 0 };
        char label[STAT_CNC_LABEL_MAX + 1];
        size_t cl = strlen(channel) > STAT_CNC_KEY_CHANNEL_MAX ? STAT_CNC_KEY_CHANNEL_MAX : strlen(channel);
        cb_w64(key, reg);
        cb_w32(key + 8, session);
        cb_w32(key + 12, stream);
        cb_w32(key + 16, (int32_t)cl);
        memcpy(key + 20, channel, cl);
        snprintf(label, sizeof(label), "%s: %lld %d %d %s%s", name, (long long)reg, session, stream, channel, suffix);
        cb_counter(b, id, STAT_CNC_RECORD_ALLOCATED, type, key, sizeof(key), label, value);
}

#endif
