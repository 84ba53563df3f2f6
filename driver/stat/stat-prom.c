/* SPDX-License-Identifier: Apache-2.0 */
/* Counters to Prometheus text: collect one sample per series (family, type, help, escaped
 * labels, value), derive the lags from the stream positions, sort by family so that each
 * family's samples are together, drop a repeated series, print. No I/O, no globals, never
 * logs. */
#include "stat-prom.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "stat-cnc.h"

#define FAMILY_MAX 128
#define LABELS_MAX 1536 /* escaped labels of one series: a 380-byte channel can double */

enum { COUNTER, GAUGE };

typedef struct sample {
        char family[FAMILY_MAX];
        int type;
        const char *help;       /* static text */
        char *labels;           /* "a=\"x\",b=\"y\"" or "" */
        int64_t value;
        int exp;                /* printed as value e<exp>: -9 for ns in seconds, -3 for ms */
        uint32_t seq;
} sample;

/* One stream position counter, kept for the lags. */
typedef struct position {
        int32_t type_id, session_id, stream_id;
        int64_t registration_id, value;
        char channel[STAT_CNC_LABEL_MAX + 1];
} position;

typedef struct collect {
        sample *s;
        size_t n, cap;
        position *p;
        size_t np, pcap;
        int err;
} collect;

/* Aeron's system counters (type id 0) by their key (the system counter id), Aeron 1.52's
 * aeron_counters.h; an id not here is rendered by its label. */
static const struct {
        const char *name;
        int type;
        bool nanos;
        const char *help;
} sys[] = {
        [0] = { "aeron_bytes_sent_total", COUNTER, false, "Bytes sent by the media driver." },
        [1] = { "aeron_bytes_received_total", COUNTER, false, "Bytes received by the media driver." },
        [2] = { "aeron_receiver_proxy_fails_total", COUNTER, false, "Failed offers to the receiver proxy." },
        [3] = { "aeron_sender_proxy_fails_total", COUNTER, false, "Failed offers to the sender proxy." },
        [4] = { "aeron_conductor_proxy_fails_total", COUNTER, false, "Failed offers to the driver conductor proxy." },
        [5] = { "aeron_naks_sent_total", COUNTER, false, "NAKs sent (this driver's receivers saw loss)." },
        [6] = { "aeron_naks_received_total", COUNTER, false, "NAKs received (receivers of this driver's publications saw loss)." },
        [7] = { "aeron_status_messages_sent_total", COUNTER, false, "Status messages sent." },
        [8] = { "aeron_status_messages_received_total", COUNTER, false, "Status messages received." },
        [9] = { "aeron_heartbeats_sent_total", COUNTER, false, "Heartbeats sent." },
        [10] = { "aeron_heartbeats_received_total", COUNTER, false, "Heartbeats received." },
        [11] = { "aeron_retransmits_sent_total", COUNTER, false, "Retransmits sent." },
        [12] = { "aeron_flow_control_under_runs_total", COUNTER, false, "Flow control under runs." },
        [13] = { "aeron_flow_control_over_runs_total", COUNTER, false, "Flow control over runs." },
        [14] = { "aeron_invalid_packets_total", COUNTER, false, "Invalid packets received." },
        [15] = { "aeron_errors_total", COUNTER, false, "Errors recorded in the driver's error log." },
        [16] = { "aeron_short_sends_total", COUNTER, false, "Short sends (a would-block of the transport is one)." },
        [17] = { "aeron_free_fails_total", COUNTER, false, "Failed attempts to free log buffers." },
        [18] = { "aeron_sender_flow_control_limits_total", COUNTER, false, "Sender flow control limits, i.e. back-pressure events." },
        [19] = { "aeron_unblocked_publications_total", COUNTER, false, "Unblocked publications." },
        [20] = { "aeron_unblocked_commands_total", COUNTER, false, "Unblocked control commands." },
        [21] = { "aeron_possible_ttl_asymmetry_total", COUNTER, false, "Possible TTL asymmetry." },
        [22] = { "aeron_controllable_idle_strategy_status", GAUGE, false, "ControllableIdleStrategy status." },
        [23] = { "aeron_loss_gap_fills_total", COUNTER, false, "Loss gap fills (data lost for good, filled with padding)." },
        [24] = { "aeron_client_timeouts_total", COUNTER, false, "Client liveness timeouts." },
        [25] = { "aeron_resolution_changes_total", COUNTER, false, "Name resolution changes." },
        [26] = { "aeron_conductor_max_cycle_time_seconds", GAUGE, true, "Conductor max cycle time doing its work." },
        [27] = { "aeron_conductor_cycle_time_threshold_exceeded_total", COUNTER, false, "Conductor work cycles over the threshold." },
        [28] = { "aeron_sender_max_cycle_time_seconds", GAUGE, true, "Sender max cycle time doing its work." },
        [29] = { "aeron_sender_cycle_time_threshold_exceeded_total", COUNTER, false, "Sender work cycles over the threshold." },
        [30] = { "aeron_receiver_max_cycle_time_seconds", GAUGE, true, "Receiver max cycle time doing its work." },
        [31] = { "aeron_receiver_cycle_time_threshold_exceeded_total", COUNTER, false, "Receiver work cycles over the threshold." },
        [32] = { "aeron_name_resolver_max_time_seconds", GAUGE, true, "NameResolver max time." },
        [33] = { "aeron_name_resolver_time_threshold_exceeded_total", COUNTER, false, "NameResolver calls over the threshold." },
        [34] = { "aeron_software_version", GAUGE, false, "Aeron software version (major << 16 | minor << 8 | patch)." },
        [35] = { "aeron_mapped_bytes", GAUGE, false, "Bytes currently mapped." },
        [36] = { "aeron_retransmitted_bytes_total", COUNTER, false, "Retransmitted bytes." },
        [37] = { "aeron_retransmit_overflows_total", COUNTER, false, "Retransmit pool overflows." },
        [38] = { "aeron_error_frames_received_total", COUNTER, false, "Error frames received." },
        [39] = { "aeron_error_frames_sent_total", COUNTER, false, "Error frames sent." },
        [40] = { "aeron_publications_revoked_total", COUNTER, false, "Publications revoked." },
        [41] = { "aeron_publication_images_revoked_total", COUNTER, false, "Publication images revoked." },
        [42] = { "aeron_images_rejected_total", COUNTER, false, "Images rejected." },
        [43] = { "aeron_control_protocol_version", GAUGE, false, "Control protocol version." },
        [44] = { "aeron_status_messages_rejected_total", COUNTER, false, "Status messages rejected." },
        [45] = { "aeron_native_resource_agent_proxy_fails_total", COUNTER, false, "Failed offers to the native resource agent proxy." },
};

/* Stream position counters (aeron_counters.h type ids) */
#define T_PUB_LIMIT 1
#define T_SND_POS 2
#define T_RCV_HWM 3
#define T_SUB_POS 4
#define T_RCV_POS 5
#define T_SND_CHANNEL 6
#define T_RCV_CHANNEL 7
#define T_SND_LIMIT 9
#define T_PUB_POS 12
#define T_SND_BPE 13
#define T_SND_NAKS 19
#define T_RCV_NAKS 20
/* spinlane's (driver/aeron/spa-internal.h): port counters 4200..4203 and 4205 (the probe
 * responder's), agent counters 4204 */
#define T_SPINLANE_PORT_FIRST 4200
#define T_SPINLANE_PORT_LAST 4203
#define T_SPINLANE_AGENT 4204
#define T_SPINLANE_PORT_PROBE 4205

static const char *position_name(int32_t t)
{
        switch (t) {
        case T_PUB_LIMIT: return "publisher_limit";
        case T_SND_POS: return "sender_position";
        case T_RCV_HWM: return "receiver_hwm";
        case T_SUB_POS: return "subscriber_position";
        case T_RCV_POS: return "receiver_position";
        case T_SND_LIMIT: return "sender_limit";
        case T_PUB_POS: return "publisher_position";
        default: return NULL;
        }
}

size_t stat_prom_escape(const char *s, size_t n, char *out, size_t size)
{
        size_t o = 0;

        if (!size)
                return 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)s[i];
                char e[3] = { 0 };
                size_t k;
                if (ch == '\\' || ch == '"')
                        e[0] = '\\', e[1] = (char)ch, k = 2;
                else if (ch == '\n')
                        e[0] = '\\', e[1] = 'n', k = 2;
                else if (ch < 0x20 || ch >= 0x7f)
                        e[0] = '?', k = 1;
                else
                        e[0] = (char)ch, k = 1;
                if (o + k >= size)
                        break;
                memcpy(out + o, e, k);
                o += k;
        }
        out[o] = '\0';
        return o;
}

size_t stat_prom_name(const char *s, size_t n, char *out, size_t size)
{
        size_t o = 0;
        bool gap = false;

        if (!size)
                return 0;
        for (size_t i = 0; i < n && o + 1 < size; i++) {
                char ch = s[i];
                if (ch >= 'A' && ch <= 'Z')
                        ch = (char)(ch - 'A' + 'a');
                if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
                        if (gap && o > 0) {
                                out[o++] = '_';
                                if (o + 1 >= size)
                                        break;
                        }
                        gap = false;
                        out[o++] = ch;
                } else
                        gap = true;
        }
        out[o] = '\0';
        return o;
}

/* Labels as "k=\"v\"" pairs from a NULL-terminated list of key, value (raw) strings. */
static char *labels_of(const char *const *kv)
{
        char buf[LABELS_MAX], esc[LABELS_MAX];
        size_t o = 0;

        buf[0] = '\0';
        for (size_t i = 0; kv[i]; i += 2) {
                stat_prom_escape(kv[i + 1], strlen(kv[i + 1]), esc, sizeof(esc));
                int w = snprintf(buf + o, sizeof(buf) - o, "%s%s=\"%s\"", o ? "," : "", kv[i], esc);
                if (w < 0 || (size_t)w >= sizeof(buf) - o)
                        break; /* cannot happen with our labels' bounds; keep what fits */
                o += (size_t)w;
        }
        return strdup(buf);
}

static void add(collect *c, const char *family, int type, const char *help, int64_t value, bool nanos,
                const char *const *kv)
{
        if (c->err)
                return;
        if (ARRAY_GROW(c->s, c->cap, c->n + 1, 64) < 0) {
                c->err = -ENOMEM;
                return;
        }
        sample *s = &c->s[c->n];
        memset(s, 0, sizeof(*s));
        snprintf(s->family, sizeof(s->family), "%s", family);
        s->type = type;
        s->help = help;
        s->value = value;
        s->exp = nanos ? -9 : 0;
        s->labels = labels_of(kv);
        if (!s->labels) {
                c->err = -ENOMEM;
                return;
        }
        s->seq = (uint32_t)c->n;
        c->n++;
}

static void i64s(char *buf, size_t size, int64_t v)
{
        snprintf(buf, size, "%" PRId64, v);
}

/* The channel of a stream counter: from its label ("name: reg session stream channel
 * [suffix]") when the numbers there agree with the key (the label holds the whole
 * channel, the key its first 92 bytes), else the key's. */
static void stream_channel(const stat_counter *k, int64_t reg, int32_t session, int32_t stream,
                           const char *key_channel, char *out, size_t size)
{
        const char *p = strstr(k->label, ": ");
        long long r;
        int se, st, used = 0;

        if (p && sscanf(p + 2, "%lld %d %d %n", &r, &se, &st, &used) == 3 && used > 0 && r == reg && se == session &&
            st == stream) {
                const char *ch = p + 2 + used;
                size_t n = strcspn(ch, " ");
                if (n > 0 && n < size) {
                        memcpy(out, ch, n);
                        out[n] = '\0';
                        return;
                }
        }
        snprintf(out, size, "%s", key_channel);
}

static void on_stream(collect *c, const stat_counter *k)
{
        char kc[STAT_CNC_KEY_CHANNEL_MAX + 1], channel[STAT_CNC_LABEL_MAX + 1], se[16], st[16], rg[24];
        int64_t reg;
        int32_t session, stream;

        if (stat_cnc_stream_key(k, &reg, &session, &stream, kc, sizeof(kc)) < 0)
                return;
        stream_channel(k, reg, session, stream, kc, channel, sizeof(channel));
        snprintf(se, sizeof(se), "%" PRId32, session);
        snprintf(st, sizeof(st), "%" PRId32, stream);
        i64s(rg, sizeof(rg), reg);
        const char *name = position_name(k->type_id);
        if (name) {
                const char *kv[] = { "position", name, "channel", channel, "stream_id", st, "session_id", se,
                                     "registration_id", rg, NULL };
                add(c, "aeron_stream_position_bytes", GAUGE,
                    "Stream positions (bytes into the stream): publisher limit and position, sender position and limit, receiver high-water mark and position, subscriber positions.",
                    k->value, false, kv);
                if (c->err || ARRAY_GROW(c->p, c->pcap, c->np + 1, 16) < 0) {
                        c->err = c->err ? c->err : -ENOMEM;
                        return;
                }
                position *p = &c->p[c->np++];
                p->type_id = k->type_id;
                p->session_id = session;
                p->stream_id = stream;
                p->registration_id = reg;
                p->value = k->value;
                snprintf(p->channel, sizeof(p->channel), "%s", channel);
                return;
        }
        const char *kv[] = { "channel", channel, "stream_id", st, "session_id", se, NULL };
        if (k->type_id == T_SND_BPE)
                add(c, "aeron_stream_sender_back_pressure_events_total", COUNTER,
                    "Back-pressure events of a publication's sender.", k->value, false, kv);
        else if (k->type_id == T_SND_NAKS)
                add(c, "aeron_stream_naks_received_total", COUNTER, "NAKs received by a publication's sender.",
                    k->value, false, kv);
        else if (k->type_id == T_RCV_NAKS)
                add(c, "aeron_stream_naks_sent_total", COUNTER, "NAKs sent by an image's receiver.", k->value,
                    false, kv);
}

static void on_channel_status(collect *c, const stat_counter *k)
{
        const char *p = strstr(k->label, ": ");
        char channel[STAT_CNC_LABEL_MAX + 1], id[16];
        size_t n;

        if (!p)
                return;
        p += 2;
        n = strcspn(p, " ");
        memcpy(channel, p, n);
        channel[n] = '\0';
        snprintf(id, sizeof(id), "%" PRId32, k->id);
        const char *kv[] = { "direction", k->type_id == T_SND_CHANNEL ? "send" : "receive", "channel", channel,
                             "counter_id", id, NULL };
        add(c, "aeron_channel_status", GAUGE,
            "Channel endpoint status: 0 initializing, 1 active, 2 closing, -1 errored.", k->value, false, kv);
}

/* "spinlane <name>: <device> <ipv4/len>" */
static void on_spinlane_port(collect *c, const stat_counter *k)
{
        char name[STAT_CNC_LABEL_MAX + 1], mname[FAMILY_MAX], family[FAMILY_MAX + 32];
        char device[STAT_CNC_LABEL_MAX + 1] = "", ipv4[STAT_CNC_LABEL_MAX + 1] = "";
        const char *l = k->label, *colon;
        size_t n;

        if (strncmp(l, "spinlane ", 9) != 0 || !(colon = strstr(l + 9, ": ")))
                return;
        n = (size_t)(colon - (l + 9));
        memcpy(name, l + 9, n);
        name[n] = '\0';
        const char *rest = colon + 2;
        n = strcspn(rest, " ");
        memcpy(device, rest, n);
        device[n] = '\0';
        if (rest[n] == ' ')
                snprintf(ipv4, sizeof(ipv4), "%s", rest + n + 1);
        if (strncmp(name, "drop ", 5) == 0) {
                const char *kv[] = { "nic", device, "ipv4", ipv4, "reason", name + 5, NULL };
                add(c, "spinlane_port_drops_total", COUNTER, "Frames the spinlane DPDK port dropped, by reason.",
                    k->value, false, kv);
                return;
        }
        const char *kv[] = { "nic", device, "ipv4", ipv4, NULL };
        if (strcmp(name, "drops total") == 0) {
                add(c, "spinlane_port_dropped_frames_total", COUNTER,
                    "Frames the spinlane DPDK port dropped, all reasons.", k->value, false, kv);
                return;
        }
        if (!stat_prom_name(name, strlen(name), mname, sizeof(mname)))
                return;
        snprintf(family, sizeof(family), "spinlane_port_%s_total", mname);
        add(c, family, COUNTER, "A counter of the spinlane DPDK port (Aeron counter types 4200-4203, 4205).", k->value,
            false, kv);
}

/* "spinlane <role> <name>" */
static void on_spinlane_agent(collect *c, const stat_counter *k)
{
        char role[32], mname[FAMILY_MAX], family[FAMILY_MAX + 32];
        const char *l = k->label, *sp;
        size_t n;

        if (strncmp(l, "spinlane ", 9) != 0 || !(sp = strchr(l + 9, ' ')))
                return;
        n = (size_t)(sp - (l + 9));
        if (n == 0 || n >= sizeof(role))
                return;
        memcpy(role, l + 9, n);
        role[n] = '\0';
        if (!stat_prom_name(sp + 1, strlen(sp + 1), mname, sizeof(mname)))
                return;
        const char *kv[] = { "agent", role, NULL };
        if (strcmp(mname, "lcore_id") == 0) {
                add(c, "spinlane_agent_lcore_id", GAUGE, "The DPDK lcore id of the agent's thread (-1: not started).",
                    k->value, false, kv);
                return;
        }
        snprintf(family, sizeof(family), "spinlane_agent_%s_total", mname);
        add(c, family, COUNTER, "A counter of a spinlane agent (sender, receiver, conductor; Aeron counter type 4204).",
            k->value, false, kv);
}

static int on_counter(const stat_counter *k, void *ud)
{
        collect *c = ud;
        char tid[16], cid[16];

        switch (k->type_id) {
        case 0: {
                int32_t sid;
                memcpy(&sid, k->key, sizeof(sid));
                if (sid >= 0 && (size_t)sid < sizeof(sys) / sizeof(sys[0]) && sys[sid].name) {
                        const char *kv[] = { NULL };
                        add(c, sys[sid].name, sys[sid].type, sys[sid].help, k->value, sys[sid].nanos, kv);
                } else {
                        snprintf(cid, sizeof(cid), "%" PRId32, sid);
                        const char *kv[] = { "id", cid, "name", k->label, NULL };
                        add(c, "aeron_system_counter", GAUGE, "An Aeron system counter this version does not name.",
                            k->value, false, kv);
                }
                break;
        }
        case T_PUB_LIMIT: case T_SND_POS: case T_RCV_HWM: case T_SUB_POS: case T_RCV_POS: case T_SND_LIMIT:
        case T_PUB_POS: case T_SND_BPE: case T_SND_NAKS: case T_RCV_NAKS:
                on_stream(c, k);
                break;
        case T_SND_CHANNEL: case T_RCV_CHANNEL:
                on_channel_status(c, k);
                break;
        case T_SPINLANE_AGENT:
                on_spinlane_agent(c, k);
                break;
        default:
                if ((k->type_id >= T_SPINLANE_PORT_FIRST && k->type_id <= T_SPINLANE_PORT_LAST) ||
                    k->type_id == T_SPINLANE_PORT_PROBE) {
                        on_spinlane_port(c, k);
                        break;
                }
                snprintf(tid, sizeof(tid), "%" PRId32, k->type_id);
                snprintf(cid, sizeof(cid), "%" PRId32, k->id);
                const char *kv[] = { "type_id", tid, "counter_id", cid, "label", k->label, NULL };
                add(c, "aeron_counter", GAUGE, "Any other counter of the CnC file, by type id and label.", k->value,
                    false, kv);
        }
        return c->err;
}

/* a - b, saturated: positions come from another process's file and may be anything */
static int64_t diff(int64_t a, int64_t b)
{
        int64_t r;
        if (__builtin_sub_overflow(a, b, &r))
                return b < 0 ? INT64_MAX : INT64_MIN;
        return r;
}

static bool same_stream(const position *a, const position *b, bool by_channel)
{
        return a->session_id == b->session_id && a->stream_id == b->stream_id &&
               (!by_channel || strcmp(a->channel, b->channel) == 0);
}

static void lag(collect *c, const char *family, const char *help, const position *p, int64_t v)
{
        char se[16], st[16], rg[24];
        snprintf(se, sizeof(se), "%" PRId32, p->session_id);
        snprintf(st, sizeof(st), "%" PRId32, p->stream_id);
        i64s(rg, sizeof(rg), p->registration_id);
        const char *kv[] = { "channel", p->channel, "stream_id", st, "session_id", se, "registration_id", rg, NULL };
        add(c, family, GAUGE, help, v, false, kv);
}

/* Positions into lags: a publication's unsent bytes (publisher position - sender position)
 * and its room before back pressure (publisher limit - publisher position), by the
 * publication's registration id; an image's receiver gap (high-water mark - receiver
 * position, by the image's); each subscriber's lag behind what arrived (high-water mark -
 * its position, by session, stream and channel, or session and stream). */
static void lags(collect *c)
{
        for (size_t i = 0; i < c->np; i++) {
                const position *a = &c->p[i];
                for (size_t j = 0; j < c->np; j++) {
                        const position *b = &c->p[j];
                        if (a->type_id == T_PUB_POS && b->type_id == T_SND_POS &&
                            a->registration_id == b->registration_id && same_stream(a, b, false))
                                lag(c, "aeron_publication_unsent_bytes",
                                    "Bytes a publication wrote that its sender has not sent (publisher position - sender position).",
                                    a, diff(a->value, b->value));
                        if (a->type_id == T_PUB_LIMIT && b->type_id == T_PUB_POS &&
                            a->registration_id == b->registration_id && same_stream(a, b, false))
                                lag(c, "aeron_publication_window_bytes",
                                    "Bytes a publication may still write before back pressure (publisher limit - publisher position).",
                                    b, diff(a->value, b->value));
                        if (a->type_id == T_RCV_HWM && b->type_id == T_RCV_POS &&
                            a->registration_id == b->registration_id && same_stream(a, b, false))
                                lag(c, "aeron_image_receiver_gap_bytes",
                                    "Bytes between an image's high-water mark and its receiver position (loss being repaired).",
                                    a, diff(a->value, b->value));
                }
                if (a->type_id != T_SUB_POS)
                        continue;
                const position *hwm = NULL;
                for (int pass = 0; pass < 2 && !hwm; pass++)
                        for (size_t j = 0; j < c->np && !hwm; j++)
                                if (c->p[j].type_id == T_RCV_HWM && same_stream(&c->p[j], a, pass == 0))
                                        hwm = &c->p[j];
                if (hwm)
                        lag(c, "aeron_subscription_lag_bytes",
                            "Bytes a subscriber is behind what its image received (receiver high-water mark - subscriber position).",
                            a, diff(hwm->value, a->value));
        }
}

static int by_family(const void *x, const void *y)
{
        const sample *a = x, *b = y;
        int r = strcmp(a->family, b->family);
        if (r)
                return r;
        r = strcmp(a->labels, b->labels);
        if (r)
                return r;
        return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef struct text {
        char *b;
        size_t n, cap;
        int err;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
        va_list ap;
        int w;

        if (t->err)
                return;
        for (;;) {
                size_t room = t->cap - t->n;
                va_start(ap, fmt);
                w = vsnprintf(t->b ? t->b + t->n : NULL, room, fmt, ap);
                va_end(ap);
                if (w < 0) {
                        t->err = -EINVAL;
                        return;
                }
                if ((size_t)w < room) {
                        t->n += (size_t)w;
                        return;
                }
                if (ARRAY_GROW(t->b, t->cap, t->n + (size_t)w + 1, 4096) < 0) {
                        t->err = -ENOMEM;
                        return;
                }
        }
}

static void put_value(text *t, const sample *s)
{
        if (s->exp)
                put(t, "%" PRId64 "e%d\n", s->value, s->exp);
        else
                put(t, "%" PRId64 "\n", s->value);
}

static void self_metrics(collect *c, const stat_prom_self *self, int state, const stat_cnc_header *h, int n)
{
        const char *why = state == 0 ? "" : state == -EAGAIN ? "starting" : state == -EPROTONOSUPPORT ? "version"
                        : state == -ENODATA ? "truncated" : state == -ENOENT ? "no_file" : "malformed";
        const char *none[] = { NULL };
        const char *kv_why[] = { "reason", why, NULL };
        const char *kv_ver[] = { "version", self && self->version ? self->version : "", NULL };

        add(c, "spinlane_stat_up", GAUGE,
            "1: the media driver's CnC file was read; 0: not (reason: no_file, starting, version, truncated, malformed).",
            state == 0, false, state == 0 ? none : kv_why);
        add(c, "spinlane_stat_info", GAUGE, "spinlane-stat's version.", 1, false, kv_ver);
        add(c, "spinlane_stat_cnc_remaps_total", COUNTER, "Times a new CnC file (a driver restart) was mapped.",
            self ? (int64_t)self->remaps : 0, false, none);
        add(c, "spinlane_stat_read_errors_total", COUNTER, "Scrapes that found no readable CnC file.",
            self ? (int64_t)self->read_errors : 0, false, none);
        if (state != 0)
                return;
        add(c, "aeron_driver_cnc_version", GAUGE, "The CnC file's version (major << 16 | minor << 8 | patch).",
            h->version, false, none);
        add(c, "aeron_driver_pid", GAUGE, "The media driver's process id.", h->pid, false, none);
        add(c, "aeron_driver_start_timestamp_seconds", GAUGE, "When the media driver created its CnC file.",
            h->start_timestamp_ms, false, none);
        if (!c->err)
                c->s[c->n - 1].exp = -3; /* ms */
        if (h->driver_heartbeat_ms > 0) {
                add(c, "aeron_driver_heartbeat_timestamp_seconds", GAUGE,
                    "The driver conductor's last heartbeat (epoch): it stops when the driver stops.",
                    h->driver_heartbeat_ms, false, none);
                if (!c->err)
                        c->s[c->n - 1].exp = -3; /* ms */
        }
        add(c, "spinlane_stat_counters", GAUGE, "Allocated counters in the CnC file.", n, false, none);
}

int stat_prom_render(const uint8_t *buf, size_t len, const stat_prom_self *self, char **ret, size_t *ret_len)
{
        collect c = { 0 };
        text t = { 0 };
        stat_cnc_header h;
        int state = -ENOENT, n = 0;

        if (!ret || !ret_len)
                return -EINVAL;
        if (buf) {
                state = stat_cnc_header_parse(buf, len, &h);
                if (state == 0) {
                        n = stat_cnc_foreach(buf, len, &h, on_counter, &c);
                        if (n < 0 && !c.err)
                                state = n;
                }
        }
        if (!c.err)
                lags(&c);
        self_metrics(&c, self, state, &h, n);
        if (!c.err) {
                qsort(c.s, c.n, sizeof(*c.s), by_family);
                for (size_t i = 0; i < c.n; i++) {
                        const sample *s = &c.s[i];
                        bool first = i == 0 || strcmp(c.s[i - 1].family, s->family) != 0;
                        if (!first && strcmp(c.s[i - 1].labels, s->labels) == 0)
                                continue; /* a repeated series: Prometheus would refuse the scrape */
                        if (first)
                                put(&t, "# HELP %s %s\n# TYPE %s %s\n", s->family, s->help, s->family,
                                    s->type == COUNTER ? "counter" : "gauge");
                        put(&t, "%s%s%s%s ", s->family, s->labels[0] ? "{" : "", s->labels, s->labels[0] ? "}" : "");
                        put_value(&t, s);
                }
        }
        int r = c.err ? c.err : t.err;
        for (size_t i = 0; i < c.n; i++)
                free(c.s[i].labels);
        free(c.s);
        free(c.p);
        if (r < 0) {
                free(t.b);
                return r;
        }
        *ret = t.b;
        *ret_len = t.n;
        return 0;
}
