/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus text of a CnC file (driver/stat/stat-prom.c): system counters by name,
 * stream positions and lags, spinlane's counters with their NIC labels, escaping, one
 * TYPE line per family, no repeated series, and the "up" gauge with its reason for files
 * that cannot be read. */
#include "stat-prom.h"

#include <errno.h>

#include "cleanup.h"
#include "cnc-build.h"
#include "testutil.h"

static char *render(const uint8_t *buf, size_t len)
{
        stat_prom_self self = { .version = "9.9.9", .remaps = 2, .read_errors = 1 };
        char *out = NULL;
        size_t n = 0;
        CHECK_INT(stat_prom_render(buf, len, &self, &out, &n), 0);
        CHECK(out && strlen(out) == n);
        return out;
}

static int count(const char *hay, const char *needle)
{
        int n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

#define HAS(text, s)                                                                        \
        do {                                                                                \
                bool _has = strstr((text), (s)) != NULL;                                    \
                CHECK(_has);                                                                \
                if (!_has)                                                                  \
                        fprintf(stderr, "  missing: %s\n", (s));                            \
        } while (0)

static void test_escape_and_names(void)
{
        static const struct {
                const char *in, *esc, *name;
        } cases[] = {
                { "plain", "plain", "plain" },
                { "a\"b\\c\nd", "a\\\"b\\\\c\\nd", "a_b_c_d" },
                { "tab\there\x01", "tab?here?", "tab_here" },
                { "\xc3\xa9t\xc3\xa9", "??t??", "t" },
                { "would-block tx ring full", "would-block tx ring full", "would_block_tx_ring_full" },
                { "  Hand-Off  Out ", "  Hand-Off  Out ", "hand_off_out" },
                { "", "", "" },
        };
        char out[64];
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CHECK_INT(stat_prom_escape(cases[i].in, strlen(cases[i].in), out, sizeof(out)), strlen(cases[i].esc));
                CHECK_STR(out, cases[i].esc);
                CHECK_INT(stat_prom_name(cases[i].in, strlen(cases[i].in), out, sizeof(out)), strlen(cases[i].name));
                CHECK_STR(out, cases[i].name);
        }
        /* truncation keeps whole escapes and the terminator */
        CHECK_INT(stat_prom_escape("ab\"cd", 5, out, 4), 2);
        CHECK_STR(out, "ab");
        CHECK_INT(stat_prom_name("abcdef", 6, out, 4), 3);
        CHECK_STR(out, "abc");
}

static void test_driver_file(void)
{
        cnc_build b = cb_new(32);
        const char *ch = "aeron:udp?endpoint=10.9.0.2:40456|alias=\"q\"";
        struct { int32_t index, item; } pk = { 0, 3 };
        unsigned id = 0;

        cb_system(&b, id++, 0, "Bytes sent", 5000);
        cb_system(&b, id++, 5, "NAKs sent", 7);
        cb_system(&b, id++, 15, "Errors: version=1.52.2 commit=5b62f21d917a", 2);
        cb_system(&b, id++, 26, "Conductor max cycle time doing its work in ns", 1500);
        cb_system(&b, id++, 999, "A counter from a newer Aeron", 4);
        cb_stream(&b, id++, 1, "pub-lmt", 11, 77, 1001, ch, "", 131072);
        cb_stream(&b, id++, 12, "pub-pos (sampled)", 11, 77, 1001, ch, "", 9000);
        cb_stream(&b, id++, 2, "snd-pos", 11, 77, 1001, ch, "", 8000);
        cb_stream(&b, id++, 3, "rcv-hwm", 21, 77, 1001, ch, "", 7000);
        cb_stream(&b, id++, 5, "rcv-pos", 21, 77, 1001, ch, "", 6500);
        cb_stream(&b, id++, 4, "sub-pos", 31, 77, 1001, ch, " @0", 6000);
        cb_stream(&b, id++, 4, "sub-pos", 32, 77, 1001, ch, " @0", 5000);
        cb_stream(&b, id++, 4, "sub-pos", 32, 77, 1001, ch, " @0", 5000); /* the same series again */
        cb_stream(&b, id++, 20, "rcv-naks-sent", 21, 77, 1001, ch, "", 3);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 6, "", 0, "snd-channel: aeron:udp?endpoint=10.9.0.2:40456", 1);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4200, &pk, sizeof(pk), "spinlane rx frames: net_memif0 10.9.0.1/24", 321);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4201, &pk, sizeof(pk),
                   "spinlane would-block tx ring full: net_memif0 10.9.0.1/24", 4);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4203, &pk, sizeof(pk), "spinlane drops total: net_memif0 10.9.0.1/24", 12);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4203, &pk, sizeof(pk),
                   "spinlane drop udp_checksum: net_memif0 10.9.0.1/24", 10);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4203, &pk, sizeof(pk),
                   "spinlane drop not_for_us: net_memif0 10.9.0.1/24", 2);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4205, &pk, sizeof(pk),
                   "spinlane probe requests rx: net_memif0 10.9.0.1/24", 6);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4204, &pk, sizeof(pk), "spinlane sender hand-off out", 55);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 4204, &pk, sizeof(pk), "spinlane receiver lcore id", -1);
        cb_counter(&b, id++, STAT_CNC_RECORD_ALLOCATED, 11, "", 0, "client-heartbeat: id=5", 1764800000000LL);

        char *t = render(b.buf, b.len);
        HAS(t, "# HELP aeron_bytes_sent_total ");
        HAS(t, "# TYPE aeron_bytes_sent_total counter\naeron_bytes_sent_total 5000\n");
        HAS(t, "\naeron_naks_sent_total 7\n");
        HAS(t, "\naeron_errors_total 2\n");
        HAS(t, "# TYPE aeron_conductor_max_cycle_time_seconds gauge\naeron_conductor_max_cycle_time_seconds 1500e-9\n");
        HAS(t, "aeron_system_counter{id=\"999\",name=\"A counter from a newer Aeron\"} 4\n");
        const char *lab = "channel=\"aeron:udp?endpoint=10.9.0.2:40456|alias=\\\"q\\\"\",stream_id=\"1001\",session_id=\"77\"";
        char want[512];
        snprintf(want, sizeof(want), "aeron_stream_position_bytes{position=\"publisher_limit\",%s,registration_id=\"11\"} 131072\n", lab);
        HAS(t, want);
        snprintf(want, sizeof(want), "aeron_publication_unsent_bytes{%s,registration_id=\"11\"} 1000\n", lab);
        HAS(t, want);
        snprintf(want, sizeof(want), "aeron_publication_window_bytes{%s,registration_id=\"11\"} 122072\n", lab);
        HAS(t, want);
        snprintf(want, sizeof(want), "aeron_image_receiver_gap_bytes{%s,registration_id=\"21\"} 500\n", lab);
        HAS(t, want);
        snprintf(want, sizeof(want), "aeron_subscription_lag_bytes{%s,registration_id=\"31\"} 1000\n", lab);
        HAS(t, want);
        snprintf(want, sizeof(want), "aeron_subscription_lag_bytes{%s,registration_id=\"32\"} 2000\n", lab);
        HAS(t, want);
        CHECK_INT(count(t, "aeron_subscription_lag_bytes{"), 2);   /* the repeated series once */
        CHECK_INT(count(t, "position=\"subscriber_position\""), 2);
        snprintf(want, sizeof(want), "aeron_stream_naks_sent_total{%s} 3\n", lab);
        HAS(t, want);
        HAS(t, "aeron_channel_status{direction=\"send\",channel=\"aeron:udp?endpoint=10.9.0.2:40456\",counter_id=\"14\"} 1\n");
        HAS(t, "# TYPE spinlane_port_rx_frames_total counter\nspinlane_port_rx_frames_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\"} 321\n");
        HAS(t, "spinlane_port_would_block_tx_ring_full_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\"} 4\n");
        HAS(t, "spinlane_port_dropped_frames_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\"} 12\n");
        HAS(t, "spinlane_port_probe_requests_rx_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\"} 6\n");
        HAS(t, "spinlane_port_drops_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\",reason=\"udp_checksum\"} 10\n");
        HAS(t, "spinlane_port_drops_total{nic=\"net_memif0\",ipv4=\"10.9.0.1/24\",reason=\"not_for_us\"} 2\n");
        HAS(t, "spinlane_agent_hand_off_out_total{agent=\"sender\"} 55\n");
        HAS(t, "# TYPE spinlane_agent_lcore_id gauge\nspinlane_agent_lcore_id{agent=\"receiver\"} -1\n");
        HAS(t, "aeron_counter{type_id=\"11\",counter_id=\"23\",label=\"client-heartbeat: id=5\"} 1764800000000\n");
        HAS(t, "\nspinlane_stat_up 1\n");
        HAS(t, "spinlane_stat_info{version=\"9.9.9\"} 1\n");
        HAS(t, "\nspinlane_stat_cnc_remaps_total 2\n");
        HAS(t, "\naeron_driver_pid 4242\n");
        HAS(t, "\naeron_driver_start_timestamp_seconds 1764800000123e-3\n");
        HAS(t, "\nspinlane_stat_counters 24\n");
        /* one TYPE line per family, and every family's samples together */
        CHECK_INT(count(t, "# TYPE spinlane_port_drops_total "), 1);
        CHECK_INT(count(t, "# TYPE aeron_stream_position_bytes "), 1);
        const char *first = strstr(t, "spinlane_port_drops_total{"), *last = first;
        for (const char *p = first; p && (p = strstr(p + 1, "\nspinlane_port_drops_total{"));)
                last = p;
        CHECK(first && last && !memchr(first, '#', (size_t)(last - first)));
        free(t);
        free(b.buf);
}

/* Positions are another process's numbers: lags of extreme ones saturate (no overflow:
 * UBSan would stop here). */
static void test_extreme_positions(void)
{
        cnc_build b = cb_new(4);
        cb_stream(&b, 0, 3, "rcv-hwm", 21, 1, 2, "aeron:udp", "", INT64_MIN + 5);
        cb_stream(&b, 1, 5, "rcv-pos", 21, 1, 2, "aeron:udp", "", INT64_MAX - 5);
        cb_stream(&b, 2, 4, "sub-pos", 31, 1, 2, "aeron:udp", " @0", INT64_MIN);
        char *t = render(b.buf, b.len);
        HAS(t, "aeron_image_receiver_gap_bytes{channel=\"aeron:udp\",stream_id=\"2\",session_id=\"1\",registration_id=\"21\"} -9223372036854775808\n");
        HAS(t, "aeron_subscription_lag_bytes{channel=\"aeron:udp\",stream_id=\"2\",session_id=\"1\",registration_id=\"31\"} 5\n");
        free(t);
        free(b.buf);
}

/* Files that cannot be read: spinlane_stat_up 0 with the reason, no driver series. */
static void test_unreadable(void)
{
        static const struct {
                const char *what;
                size_t off;
                int32_t v;
                size_t cut;
                const char *reason;
        } cases[] = {
                { "no file", 0, 0, 0, "no_file" },
                { "being created", 0, 0, 1, "starting" },
                { "another major version", 0, 1 << 16, 1, "version" },
                { "truncated", 4, STAT_CNC_VERSION, 100, "truncated" },
                { "garbage lengths", 12, -1, 1, "malformed" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cnc_build b = cb_new(2);
                cb_system(&b, 0, 0, "Bytes sent", 1);
                cb_w32(b.buf + cases[i].off, cases[i].v);
                size_t len = cases[i].cut == 1 ? b.len : cases[i].cut;
                char *t = render(i == 0 ? NULL : b.buf, len), want[128];
                snprintf(want, sizeof(want), "spinlane_stat_up{reason=\"%s\"} 0\n", cases[i].reason);
                HAS(t, want);
                CHECK(!strstr(t, "aeron_bytes_sent_total"));
                CHECK(!strstr(t, "aeron_driver_pid"));
                HAS(t, "spinlane_stat_read_errors_total 1\n");
                free(t);
                free(b.buf);
        }
}

int main(void)
{
        test_escape_and_names();
        test_driver_file();
        test_extreme_positions();
        test_unreadable();
        printf("%d checks, %d failed\n", test_checks, test_failures);
        return test_failures ? 1 : 0;
}
