/* SPDX-License-Identifier: Apache-2.0 */
/* Instructions per datagram of spinlane's Aeron bindings, meant to run under callgrind
 * (bench/aeron-ipp.sh): the send path (send_func with one datagram, and with two as
 * Aeron's low-latency profile sends), the receiver's poll with direct delivery, and a
 * datagram for the sender's transport that lands on the receiver's queue and is handed
 * over through the ring. One shared net_ring port (2 agent queues + control) whose rings
 * this program feeds and drains; a real Aeron driver context (counters, error log)
 * around the bindings. Each measured region is a function of its own. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "aeron_driver_context.h"
#include "aeron_system_counters.h"
#include "concurrent/aeron_counters_manager.h"
#include "concurrent/aeron_distinct_error_log.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "media/aeron_udp_transport_poller.h"
#include "util/aeron_clock.h"

#include "frame.h"
#include "transport.h"

#define ROUNDS 2000
#define BURST 32

extern aeron_udp_channel_transport_bindings_t spinlane_udp_channel_transport_bindings;
static aeron_udp_channel_transport_bindings_t *B = &spinlane_udp_channel_transport_bindings;

static struct rte_ring *rxr[3], *txr[3];
static struct rte_mempool *tpool;
static long delivered;

static void on_recv(aeron_udp_channel_data_paths_t *dp, aeron_udp_channel_transport_t *t, void *rc, void *ec,
                    void *dc, uint8_t *buf, size_t len, struct sockaddr_storage *addr, struct timespec *ts)
{
        (void)dp;
        (void)t;
        (void)rc;
        (void)ec;
        (void)dc;
        (void)buf;
        (void)addr;
        (void)ts;
        delivered += (long)len;
}

__attribute__((noinline)) int ipp_send1(aeron_udp_channel_transport_t *t, struct sockaddr_storage *dst,
                                        struct iovec *iov);
__attribute__((noinline)) int ipp_send1(aeron_udp_channel_transport_t *t, struct sockaddr_storage *dst,
                                        struct iovec *iov)
{
        int64_t bytes = 0;
        int n = 0;
        for (int i = 0; i < BURST; i++)
                n += B->send_func(NULL, t, dst, iov, 1, &bytes);
        return n;
}

__attribute__((noinline)) int ipp_send2(aeron_udp_channel_transport_t *t, struct sockaddr_storage *dst,
                                        struct iovec *iov);
__attribute__((noinline)) int ipp_send2(aeron_udp_channel_transport_t *t, struct sockaddr_storage *dst,
                                        struct iovec *iov)
{
        int64_t bytes = 0;
        int n = 0;
        for (int i = 0; i < BURST / 2; i++)
                n += B->send_func(NULL, t, dst, iov, 2, &bytes);
        return n;
}

__attribute__((noinline)) int ipp_poll(aeron_udp_transport_poller_t *p);
__attribute__((noinline)) int ipp_poll(aeron_udp_transport_poller_t *p)
{
        int64_t bytes = 0;
        return B->poller_poll_func(p, NULL, 0, &bytes, on_recv, NULL, NULL);
}

__attribute__((noinline)) int ipp_handoff(aeron_udp_transport_poller_t *rcv, aeron_udp_transport_poller_t *snd);
__attribute__((noinline)) int ipp_handoff(aeron_udp_transport_poller_t *rcv, aeron_udp_transport_poller_t *snd)
{
        int64_t bytes = 0;
        (void)B->poller_poll_func(rcv, NULL, 0, &bytes, on_recv, NULL, NULL); /* copies into the ring */
        return B->poller_poll_func(snd, NULL, 0, &bytes, on_recv, NULL, NULL); /* delivers */
}

static uint32_t ip4(const char *s)
{
        struct in_addr a;
        inet_pton(AF_INET, s, &a);
        return a.s_addr;
}

static void inject(const uint8_t *frame, size_t len, unsigned n)
{
        struct rte_mbuf *pk[BURST];
        if (rte_pktmbuf_alloc_bulk(tpool, pk, n) != 0)
                exit(1);
        for (unsigned i = 0; i < n; i++)
                memcpy(rte_pktmbuf_append(pk[i], (uint16_t)len), frame, len);
        if (rte_ring_enqueue_bulk(rxr[0], (void **)pk, n, NULL) != n)
                exit(1);
}

static void drain_tx(void)
{
        struct rte_mbuf *pk[BURST];
        for (unsigned q = 0; q < 3; q++) {
                unsigned n;
                while ((n = rte_ring_dequeue_burst(txr[q], (void **)pk, BURST, NULL)) > 0)
                        rte_pktmbuf_free_bulk(pk, n);
        }
}

int main(void)
{
        static struct tr_eal_args ea;
        char args[256];

        /* the EAL first (the ring port is made here), then the bindings find it running */
        snprintf(args, sizeof(args), "--no-huge --no-pci -m 256 --log-level=error --no-telemetry --file-prefix sl-aeron-ipp-%d",
                 (int)getpid());
        if (tr_eal_args_split(args, strlen(args), "aeron-ipp", &ea) < 0 || tr_eal_init(&ea) < 0) {
                fprintf(stderr, "EAL init failed\n");
                return 1;
        }
        char name[16];
        for (int i = 0; i < 3; i++) {
                snprintf(name, sizeof(name), "a-rx%d", i);
                rxr[i] = rte_ring_create(name, 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
                snprintf(name, sizeof(name), "a-tx%d", i);
                txr[i] = rte_ring_create(name, 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        }
        tpool = rte_pktmbuf_pool_create("a-pool", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        int port = rte_eth_from_rings("ipp0", rxr, 3, txr, 3, 0);
        char dev[RTE_ETH_NAME_MAX_LEN];
        if (port < 0 || !tpool || rte_eth_dev_get_name_by_port((uint16_t)port, dev) != 0)
                return 1;
        setenv("SPINLANE_EAL_ARGS", "--ignored", 1); /* the EAL runs already */
        setenv("SPINLANE_SENDER_DEVICE", dev, 1);
        setenv("SPINLANE_RECEIVER_DEVICE", dev, 1);
        setenv("SPINLANE_SENDER_IPV4", "10.0.0.1/24", 1);
        setenv("SPINLANE_RECEIVER_IPV4", "10.0.0.1/24", 1);
        setenv("SPINLANE_LINK_WAIT_MS", "0", 1);
        setenv("SPINLANE_HOST_LOCAL", "0", 1);

        /* a driver context with what the bindings use: counters and an error log */
        aeron_driver_context_t *ctx;
        static aeron_counters_manager_t cm;
        static aeron_system_counters_t sc;
        static aeron_distinct_error_log_t el;
        aeron_clock_cache_t *clock;
        static uint8_t meta[AERON_COUNTERS_METADATA_BUFFER_LENGTH(1 << 20)], values[1 << 20], errbuf[1 << 16];
        if (aeron_driver_context_init(&ctx) < 0 || aeron_clock_cache_alloc(&clock) < 0 ||
            aeron_counters_manager_init(&cm, meta, sizeof(meta), values, sizeof(values), clock, 1000) < 0 ||
            aeron_system_counters_init(&sc, &cm) < 0 ||
            aeron_distinct_error_log_init(&el, errbuf, sizeof(errbuf), aeron_epoch_clock) < 0) {
                fprintf(stderr, "Aeron context\n");
                return 1;
        }
        ctx->counters_manager = &cm;
        ctx->system_counters = &sc;
        ctx->error_log = &el;

        static aeron_udp_transport_poller_t ps, pr;
        static aeron_udp_channel_transport_t ts, tr, th;
        static aeron_udp_channel_data_paths_t dp;
        if (B->poller_init_func(&ps, ctx, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER) < 0 ||
            B->poller_init_func(&pr, ctx, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER) < 0) {
                fprintf(stderr, "poller init: %s\n", aeron_errmsg());
                return 1;
        }
        aeron_udp_channel_transport_params_t params = { .mtu_length = 1408 };
        struct sockaddr_storage any = { 0 }, rbind = { 0 }, hbind = { 0 }, dst = { 0 };
        struct sockaddr_in *s4 = (struct sockaddr_in *)&any;
        s4->sin_family = AF_INET;
        s4 = (struct sockaddr_in *)&rbind;
        s4->sin_family = AF_INET;
        s4->sin_addr.s_addr = ip4("10.0.0.1");
        s4->sin_port = htons(5000);
        s4 = (struct sockaddr_in *)&hbind;
        s4->sin_family = AF_INET;
        s4->sin_addr.s_addr = ip4("10.0.0.1");
        s4->sin_port = htons(5001);
        s4 = (struct sockaddr_in *)&dst;
        s4->sin_family = AF_INET;
        s4->sin_addr.s_addr = ip4("10.0.0.2");
        s4->sin_port = htons(4000);
        ts.data_paths = tr.data_paths = th.data_paths = &dp;
        if (B->init_func(&ts, &any, NULL, NULL, &params, ctx, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER) < 0 ||
            B->init_func(&tr, &rbind, NULL, NULL, &params, ctx, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER) < 0 ||
            B->init_func(&th, &hbind, NULL, NULL, &params, ctx, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER) < 0 ||
            B->poller_add_func(&ps, &ts) < 0 || B->poller_add_func(&pr, &tr) < 0 || B->poller_add_func(&ps, &th) < 0) {
                fprintf(stderr, "transports: %s\n", aeron_errmsg());
                return 1;
        }

        /* the port's MAC (ethdev of the ring port), then one ARP request from the peer
         * teaches the transport its MAC */
        struct rte_ether_addr mac;
        if (rte_eth_macaddr_get((uint16_t)port, &mac) != 0)
                return 1;
        uint8_t peer[6] = { 2, 1, 2, 3, 4, 5 }, arp[64];
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        tr_frame_build_arp(arp, 1, bc, peer, ip4("10.0.0.2"), NULL, ip4("10.0.0.1"));
        inject(arp, 60, 1);
        int64_t ignored = 0;
        (void)B->poller_poll_func(&pr, NULL, 0, &ignored, on_recv, NULL, NULL); /* outside the measured regions */
        drain_tx();

        /* 32-byte datagrams from the peer to the receiver's transport and to the sender's */
        uint8_t to_rcv[128], to_snd[128];
        struct tr_udp_hdr_args ha = { .dst_mac = mac.addr_bytes, .src_mac = peer, .ip_src = ip4("10.0.0.2"),
                                      .ip_dst = ip4("10.0.0.1"), .src_port = 4000, .dst_port = 5000, .ttl = 64,
                                      .ip_csum = true, .udp_csum = true };
        memset(to_rcv, 0x5a, sizeof(to_rcv));
        memcpy(to_snd, to_rcv, sizeof(to_snd));
        tr_frame_build_udp(to_rcv, 32, &ha);
        ha.dst_port = 5001;
        tr_frame_build_udp(to_snd, 32, &ha);
        size_t flen = TR_UDP_HDRS + 32;

        static uint8_t payload[2][32];
        struct iovec iov[2] = { { payload[0], 32 }, { payload[1], 32 } };
        long sent1 = 0, sent2 = 0, polled = 0, handed = 0;
        for (int r = 0; r < ROUNDS; r++) {
                sent1 += ipp_send1(&ts, &dst, iov);
                drain_tx();
                sent2 += ipp_send2(&ts, &dst, iov);
                drain_tx();
                inject(to_rcv, flen, BURST);
                polled += ipp_poll(&pr);
                inject(to_snd, flen, BURST);
                handed += ipp_handoff(&pr, &ps);
        }
        long want = (long)ROUNDS * BURST;
        printf("datagrams: send1 %ld send2 %ld poll %ld handoff %ld (rounds %d x %d), delivered bytes %ld\n", sent1, sent2,
               polled, handed, ROUNDS, BURST, delivered);
        B->poller_remove_func(&ps, &ts);
        B->poller_remove_func(&ps, &th);
        B->poller_remove_func(&pr, &tr);
        B->close_func(&ts);
        B->close_func(&tr);
        B->close_func(&th);
        B->poller_close_func(&ps);
        B->poller_close_func(&pr);
        return sent1 == want && sent2 == want && polled == want && handed == want ? 0 : 1;
}
