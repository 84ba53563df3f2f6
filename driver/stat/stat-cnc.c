/* SPDX-License-Identifier: Apache-2.0 */
/* The CnC file's header and counters, read from bytes another process writes: each field
 * read once with memcpy (a torn value is a wrong number, never a wrong bound), every offset
 * checked against the length given. No I/O, no globals, never logs. */
#include "stat-cnc.h"

#include <errno.h>
#include <string.h>

static int32_t rd32(const uint8_t *p)
{
        int32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

static int64_t rd64(const uint8_t *p)
{
        int64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

int32_t stat_cnc_version_of(const uint8_t *buf, size_t len)
{
        return buf && len >= 4 ? rd32(buf) : 0;
}

int stat_cnc_header_parse(const uint8_t *buf, size_t len, stat_cnc_header *ret)
{
        stat_cnc_header h = { 0 };
        uint64_t total;

        if (!buf || !ret)
                return -EINVAL;
        if (len < STAT_CNC_HEADER_LENGTH)
                return -ENODATA;
        h.version = rd32(buf);
        if (h.version == 0)
                return -EAGAIN;
        if (STAT_CNC_VERSION_MAJOR(h.version) != STAT_CNC_VERSION_MAJOR(STAT_CNC_VERSION) || h.version < 0)
                return -EPROTONOSUPPORT;
        h.to_driver_length = rd32(buf + 4);
        h.to_clients_length = rd32(buf + 8);
        h.counters_metadata_length = rd32(buf + 12);
        h.counters_values_length = rd32(buf + 16);
        h.error_log_length = rd32(buf + 20);
        h.client_liveness_timeout_ns = rd64(buf + 24);
        h.start_timestamp_ms = rd64(buf + 32);
        h.pid = rd64(buf + 40);
        h.file_page_size = rd32(buf + 48);

        const int32_t lens[] = { h.to_driver_length, h.to_clients_length, h.counters_metadata_length,
                                 h.counters_values_length, h.error_log_length };
        total = STAT_CNC_HEADER_LENGTH;
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                if (lens[i] < 0 || (uint32_t)lens[i] > STAT_CNC_BUFFER_MAX)
                        return -EBADMSG;
                total += (uint32_t)lens[i];
        }
        /* Aeron's own rule: the metadata holds a record for every value record */
        if (h.counters_values_length % STAT_CNC_VALUE_RECORD != 0 ||
            (uint64_t)h.counters_metadata_length <
                    (uint64_t)h.counters_values_length / STAT_CNC_VALUE_RECORD * STAT_CNC_METADATA_RECORD)
                return -EBADMSG;
        if (total > len)
                return -ENODATA;
        h.metadata_offset = STAT_CNC_HEADER_LENGTH + (size_t)h.to_driver_length + (size_t)h.to_clients_length;
        if (h.to_driver_length >= STAT_CNC_RB_TRAILER)
                h.driver_heartbeat_ms = rd64(buf + STAT_CNC_HEADER_LENGTH + h.to_driver_length - STAT_CNC_RB_TRAILER +
                                             STAT_CNC_RB_HEARTBEAT);
        h.values_offset = h.metadata_offset + (size_t)h.counters_metadata_length;
        uint64_t n = (uint32_t)h.counters_values_length / STAT_CNC_VALUE_RECORD;
        h.max_counters = (uint32_t)(n > STAT_CNC_COUNTERS_MAX ? STAT_CNC_COUNTERS_MAX : n);
        *ret = h;
        return 0;
}

int stat_cnc_foreach(const uint8_t *buf, size_t len, const stat_cnc_header *h, stat_counter_fn fn, void *userdata)
{
        stat_counter c;
        int seen = 0;

        if (!buf || !h || !fn)
                return -EINVAL;
        /* the header may come from other bytes: check its buffers against these */
        if (h->max_counters > STAT_CNC_COUNTERS_MAX || h->metadata_offset > len || h->values_offset > len ||
            (uint64_t)h->max_counters * STAT_CNC_METADATA_RECORD > len - h->metadata_offset ||
            (uint64_t)h->max_counters * STAT_CNC_VALUE_RECORD > len - h->values_offset)
                return -ENODATA;
        for (uint32_t id = 0; id < h->max_counters; id++) {
                const uint8_t *m = buf + h->metadata_offset + (size_t)id * STAT_CNC_METADATA_RECORD;
                const uint8_t *v = buf + h->values_offset + (size_t)id * STAT_CNC_VALUE_RECORD;
                /* memcpy, not an atomic load: the bytes may be unaligned (they are
                 * aligned in a real file); the fence orders the reads after it */
                int32_t state = rd32(m);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (state == STAT_CNC_RECORD_UNUSED)
                        break;
                if (state != STAT_CNC_RECORD_ALLOCATED)
                        continue;
                memset(&c, 0, sizeof(c));
                c.id = (int32_t)id;
                c.type_id = rd32(m + 4);
                memcpy(c.key, m + STAT_CNC_KEY_OFFSET, STAT_CNC_KEY_LENGTH);
                int32_t ll = rd32(m + STAT_CNC_LABEL_OFFSET - 4);
                c.label_length = ll < 0 ? 0 : ll > STAT_CNC_LABEL_MAX ? STAT_CNC_LABEL_MAX : (size_t)ll;
                memcpy(c.label, m + STAT_CNC_LABEL_OFFSET, c.label_length);
                c.label[c.label_length] = '\0';
                c.value = rd64(v);
                c.registration_id = rd64(v + 8);
                seen++;
                int r = fn(&c, userdata);
                if (r < 0)
                        return r;
        }
        return seen;
}

int stat_cnc_stream_key(const stat_counter *c, int64_t *ret_registration_id, int32_t *ret_session_id,
                        int32_t *ret_stream_id, char *channel, size_t channel_size)
{
        int32_t cl;

        if (!c || !ret_registration_id || !ret_session_id || !ret_stream_id || !channel ||
            channel_size <= STAT_CNC_KEY_CHANNEL_MAX)
                return -EINVAL;
        cl = rd32(c->key + 16);
        if (cl < 0 || cl > STAT_CNC_KEY_CHANNEL_MAX)
                return -EBADMSG;
        memcpy(channel, c->key + 20, (size_t)cl);
        channel[cl] = '\0';
        *ret_registration_id = rd64(c->key);
        *ret_session_id = rd32(c->key + 8);
        *ret_stream_id = rd32(c->key + 12);
        return 0;
}
