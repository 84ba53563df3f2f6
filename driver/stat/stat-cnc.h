/* SPDX-License-Identifier: Apache-2.0 */
/* The media driver's CnC file (cnc.dat, Aeron's aeron_cnc_file_descriptor.h and
 * aeron_counters_manager.h): its header, and the allocated counters of its counters
 * metadata and values buffers. The file is written by another process and read here as
 * untrusted bytes: every length is checked against the bytes given, every field is read
 * once (memcpy), the walk is bounded. Pure: no I/O, no globals, never logs. */
#ifndef SPIN_STAT_CNC_H
#define SPIN_STAT_CNC_H

#include <stddef.h>
#include <stdint.h>

/* The CnC version this parser knows: Aeron's AERON_CNC_VERSION, semantic 0.2.0 (Aeron 1.x
 * since 1.30). A file of another major version is refused. */
#define STAT_CNC_VERSION ((0 << 16) | (2 << 8) | 0)
#define STAT_CNC_VERSION_MAJOR(v) (((uint32_t)(v) >> 16) & 0xff)
/* The header: two cache lines before the first buffer. */
#define STAT_CNC_HEADER_LENGTH 128
/* One counter's metadata record (512 bytes: state, type id, free-for-reuse deadline, a
 * 112-byte key, the label's length and 380 bytes of label) and value record (128 bytes). */
#define STAT_CNC_METADATA_RECORD 512
#define STAT_CNC_VALUE_RECORD 128
#define STAT_CNC_KEY_OFFSET 16
#define STAT_CNC_KEY_LENGTH 112
#define STAT_CNC_LABEL_OFFSET 132
#define STAT_CNC_LABEL_MAX 380
/* Hard limits: a buffer length over 1 GiB, or more counters than this, is refused. */
#define STAT_CNC_BUFFER_MAX (1u << 30)
#define STAT_CNC_COUNTERS_MAX 65536
/* The to-driver ring's trailer (aeron_rb_descriptor_t, 768 bytes) ends the buffer; the
 * consumer heartbeat is its 6th 128-byte slot's first 8 bytes. */
#define STAT_CNC_RB_TRAILER 768
#define STAT_CNC_RB_HEARTBEAT 640

/* Record states (aeronc.h). */
#define STAT_CNC_RECORD_UNUSED 0
#define STAT_CNC_RECORD_ALLOCATED 1
#define STAT_CNC_RECORD_RECLAIMED (-1)

typedef struct stat_cnc_header {
        int32_t version;
        int32_t to_driver_length, to_clients_length;
        int32_t counters_metadata_length, counters_values_length, error_log_length;
        int64_t client_liveness_timeout_ns;
        int64_t start_timestamp_ms;     /* when the driver created the file (epoch ms) */
        int64_t pid;                    /* the driver's process id */
        int32_t file_page_size;
        /* the driver conductor's heartbeat (epoch ms): the to-driver ring's consumer
         * heartbeat, in the ring's trailer; 0 when the ring is too short to hold one */
        int64_t driver_heartbeat_ms;
        /* computed: where the two counters buffers start, and how many counters they hold */
        size_t metadata_offset, values_offset;
        uint32_t max_counters;
} stat_cnc_header;

/* Reads the header of the len bytes at buf into ret. 0, or:
 * -EAGAIN the version is still 0 (the driver is creating the file: try again later),
 * -EPROTONOSUPPORT another major version (stat_cnc_version_of says which), -ENODATA fewer
 * bytes than the header or than its buffers add up to (a truncated file), -EBADMSG a
 * negative or absurd length, or metadata too short for its values. ret untouched on
 * failure. */
int stat_cnc_header_parse(const uint8_t *buf, size_t len, stat_cnc_header *ret);
/* The version field of the header (0 when len is too short for it). */
int32_t stat_cnc_version_of(const uint8_t *buf, size_t len);

typedef struct stat_counter {
        int32_t id;
        int32_t type_id;
        int64_t value;
        int64_t registration_id;
        uint8_t key[STAT_CNC_KEY_LENGTH];
        char label[STAT_CNC_LABEL_MAX + 1];     /* NUL-terminated; any bytes (not checked as UTF-8) */
        size_t label_length;
} stat_counter;

/* Calls fn for each allocated counter of the file (h from stat_cnc_header_parse over the
 * same bytes), in id order, stopping at the first unused record as Aeron's reader does, and
 * after STAT_CNC_COUNTERS_MAX. A label length out of range is clamped to the record. fn
 * returning < 0 stops the walk with that value. Returns the number of counters seen, or
 * -EINVAL (arguments), -ENODATA (the buffers are not within len). */
typedef int (*stat_counter_fn)(const stat_counter *c, void *userdata);
int stat_cnc_foreach(const uint8_t *buf, size_t len, const stat_cnc_header *h, stat_counter_fn fn, void *userdata);

/* A stream position counter's key (Aeron's aeron_stream_position_counter_key_layout_t):
 * registration id, session id, stream id, the channel (its first 92 bytes) into
 * channel (NUL-terminated, at least 93 bytes). -EBADMSG when the channel length is out of
 * range. */
#define STAT_CNC_KEY_CHANNEL_MAX 92
int stat_cnc_stream_key(const stat_counter *c, int64_t *ret_registration_id, int32_t *ret_session_id,
                        int32_t *ret_stream_id, char *channel, size_t channel_size);

#endif
