/* SPDX-License-Identifier: Apache-2.0 */
/* Instructions per packet, meant to run under callgrind (see bench/transport-ipp.sh):
 * the RX path (tr_poll: parse + demux + callback) and the TX path (tr_sendmmsg: next hop +
 * mbuf + header build + checksums) on a net_ring port whose rings this program feeds and
 * drains, the same two paths with no stack (the raw arm of transport-bench: rx_burst and
 * free; alloc, copy a pre-built frame, tx_burst), plus the pure parse+demux and build
 * functions alone. Each measured region is a function of its own so callgrind's
 * inclusive cost can be divided by the packet count. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "demux.h"
#include "frame_fast.h"
#include "transport.h"

#define ROUNDS 2000
#define BURST 32

static struct rte_ring *rxr, *txr[2];
static struct rte_mempool *tpool;
static uint8_t frame[128];
static size_t frame_len;
static long delivered;

static void on_rx(void *c, void *e, const uint8_t *d, size_t l, const struct sockaddr_in *s)
{
        (void)c;
        (void)e;
        (void)d;
        (void)s;
        delivered += (long)l;
}

__attribute__((noinline)) int ipp_rx(struct tr_queue *q);
__attribute__((noinline)) int ipp_rx(struct tr_queue *q)
{
        return tr_poll(q, on_rx, NULL);
}

__attribute__((noinline)) int ipp_tx(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *m);
__attribute__((noinline)) int ipp_tx(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *m)
{
        return tr_sendmmsg(q, ep, m, BURST);
}

/* The raw arm's receive: one rx_burst, then the mbufs go back. */
__attribute__((noinline)) int ipp_raw_rx(uint16_t port);
__attribute__((noinline)) int ipp_raw_rx(uint16_t port)
{
        struct rte_mbuf *pk[BURST];
        uint16_t n = rte_eth_rx_burst(port, 0, pk, BURST);
        rte_pktmbuf_free_bulk(pk, n);
        return n;
}

/* The raw arm's send: mbufs, a copy of the pre-built frame into each, one tx_burst. */
__attribute__((noinline)) int ipp_raw_tx(uint16_t port, struct rte_mempool *mp, const uint8_t *tmpl, uint16_t len);
__attribute__((noinline)) int ipp_raw_tx(uint16_t port, struct rte_mempool *mp, const uint8_t *tmpl, uint16_t len)
{
        struct rte_mbuf *m[BURST];
        if (rte_pktmbuf_alloc_bulk(mp, m, BURST) != 0)
                return 0;
        for (int i = 0; i < BURST; i++) {
                memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), tmpl, len);
                m[i]->data_len = len;
                m[i]->pkt_len = len;
        }
        uint16_t sent = rte_eth_tx_burst(port, 0, m, BURST);
        if (sent < BURST)
                rte_pktmbuf_free_bulk(m + sent, BURST - sent);
        return sent;
}

__attribute__((noinline)) long ipp_pure_rx(const struct tr_demux *d);
__attribute__((noinline)) long ipp_pure_rx(const struct tr_demux *d)
{
        long n = 0;
        for (int i = 0; i < BURST; i++) {
                struct tr_frame f;
                tr_frame_parse(frame, frame_len, 0, &f);
                n += tr_demux_lookup(d, f.ip_dst, f.dst_port) != NULL;
        }
        return n;
}

/* The data path's inline parse of the usual datagram (software checksums) + demux. */
__attribute__((noinline)) long ipp_pure_rx_fast(const struct tr_demux *d);
__attribute__((noinline)) long ipp_pure_rx_fast(const struct tr_demux *d)
{
        long n = 0;
        for (int i = 0; i < BURST; i++) {
                struct tr_frame f;
                if (tr_frame_parse_udp_fast(frame, frame_len, 0, &f))
                        n += tr_demux_lookup(d, f.ip_dst, f.dst_port) != NULL;
        }
        return n;
}

/* The data path's header template (software checksums), payload copied and summed. */
__attribute__((noinline)) void ipp_pure_tx_tmpl(uint8_t *out, const struct tr_udp_tmpl *t, const uint8_t *payload);
__attribute__((noinline)) void ipp_pure_tx_tmpl(uint8_t *out, const struct tr_udp_tmpl *t, const uint8_t *payload)
{
        for (int i = 0; i < BURST; i++)
                tr_udp_tmpl_write(t, out, payload, 32, (uint16_t)i, true, true);
}

/* Same with the checksums marked verified, as a NIC with RX checksum offload reports. */
__attribute__((noinline)) long ipp_pure_rx_offload(const struct tr_demux *d);
__attribute__((noinline)) long ipp_pure_rx_offload(const struct tr_demux *d)
{
        long n = 0;
        for (int i = 0; i < BURST; i++) {
                struct tr_frame f;
                tr_frame_parse(frame, frame_len, TR_PARSE_IP_CSUM_DONE | TR_PARSE_L4_CSUM_DONE, &f);
                n += tr_demux_lookup(d, f.ip_dst, f.dst_port) != NULL;
        }
        return n;
}

__attribute__((noinline)) void ipp_pure_tx(uint8_t *out, const struct tr_udp_hdr_args *a);
__attribute__((noinline)) void ipp_pure_tx(uint8_t *out, const struct tr_udp_hdr_args *a)
{
        for (int i = 0; i < BURST; i++)
                (void)tr_frame_build_udp(out, 32, a);
}

static int cmp_u64(const void *x, const void *y)
{
        uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
        return a < b ? -1 : a > b;
}

#define TIMED 100000
static uint64_t tcyc[TIMED];

static double median_ns(long n)
{
        qsort(tcyc, (size_t)n, sizeof(uint64_t), cmp_u64);
        return (double)tcyc[n / 2] * 1e9 / (double)rte_get_tsc_hz();
}

__attribute__((noinline)) void echo_stack(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
                                          const uint8_t *payload);
__attribute__((noinline)) void echo_stack(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
                                          const uint8_t *payload)
{
        tr_poll(q, on_rx, NULL);
        tr_send(q, ep, dst, payload, 32);
}

__attribute__((noinline)) void echo_raw(uint16_t port, struct rte_mbuf **pk);
__attribute__((noinline)) void echo_raw(uint16_t port, struct rte_mbuf **pk)
{
        uint16_t n = rte_eth_rx_burst(port, 0, pk, BURST);
        for (uint16_t k = 0; k < n; k++) {
                uint8_t *d = rte_pktmbuf_mtod(pk[k], uint8_t *), t[6];
                memcpy(t, d, 6);
                memcpy(d, d + 6, 6);
                memcpy(d + 6, t, 6);
        }
        rte_eth_tx_burst(port, 0, pk, n);
}

/* --time: not under callgrind; one datagram at a time as in a ping-pong, the echo of the
 * stack (tr_poll + tr_send) against the raw arm's (rx_burst, swap, tx_burst). The TSC is
 * read around runs of BATCH echoes (each with the harness's own enqueue and dequeue, the
 * same in both arms), so that its granularity does not round the figure; the arms
 * alternate run by run and each prints the median of its runs, in ns per echo. */
#define BATCH 64
static void timed(struct tr_queue *q, struct tr_endpoint *ep, uint16_t port, const struct sockaddr_in *dst)
{
        struct rte_mbuf *m, *pk[BURST];
        static uint8_t payload[32];
        static uint64_t runs[2][TIMED / BATCH];
        long nruns = TIMED / BATCH;
        for (long i = 0; i < nruns; i++)
                for (int arm = 0; arm < 2; arm++) {
                        uint64_t t0 = rte_rdtsc();
                        for (int k = 0; k < BATCH; k++) {
                                m = rte_pktmbuf_alloc(tpool);
                                memcpy(rte_pktmbuf_append(m, (uint16_t)frame_len), frame, frame_len);
                                rte_ring_enqueue(rxr, m);
                                if (arm == 0)
                                        echo_stack(q, ep, dst, payload);
                                else
                                        echo_raw(port, pk);
                                while (rte_ring_dequeue(txr[0], (void **)&m) == 0)
                                        rte_pktmbuf_free(m);
                        }
                        runs[arm][i] = rte_rdtsc() - t0;
                }
        /* the harness alone (enqueue, dequeue, no echo), to subtract */
        static uint64_t base[TIMED / BATCH];
        for (long i = 0; i < nruns; i++) {
                uint64_t t0 = rte_rdtsc();
                for (int k = 0; k < BATCH; k++) {
                        m = rte_pktmbuf_alloc(tpool);
                        memcpy(rte_pktmbuf_append(m, (uint16_t)frame_len), frame, frame_len);
                        rte_ring_enqueue(rxr, m);
                        if (rte_ring_dequeue(rxr, (void **)&m) == 0)
                                rte_pktmbuf_free(m);
                }
                base[i] = rte_rdtsc() - t0;
        }
        memcpy(tcyc, base, sizeof(base));
        double b = median_ns(nruns) / BATCH;
        for (int arm = 0; arm < 2; arm++) {
                memcpy(tcyc, runs[arm], sizeof(runs[arm]));
                printf("%s echo of one 32-byte datagram: %.1f ns (median of %ld runs of %d, harness %.1f ns "
                       "subtracted)\n",
                       arm == 0 ? "stack (tr_poll + tr_send)      " : "raw (rx_burst, swap, tx_burst)",
                       median_ns(nruns) / BATCH - b, nruns, BATCH, b);
        }
}

int main(int argc, char **argv)
{
        static struct tr_eal_args ea;
        char args[256];
        snprintf(args, sizeof(args), "--no-huge --no-pci -m 256 --log-level=error --no-telemetry --file-prefix sl-tr-ipp-%d",
                 (int)getpid());
        if (tr_eal_args_split(args, strlen(args), "ipp", &ea) < 0 || tr_eal_init(&ea) < 0) {
                fprintf(stderr, "EAL init failed\n");
                return 1;
        }
        rxr = rte_ring_create("i-rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[0] = rte_ring_create("i-tx0", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[1] = rte_ring_create("i-tx1", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        /* with a per-lcore cache, as a PMD's RX pool has */
        tpool = rte_pktmbuf_pool_create("i-pool", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        int id = rte_eth_from_rings("ipp", &rxr, 1, txr, 2, 0);
        struct in_addr a1, a2;
        inet_pton(AF_INET, "10.0.0.1", &a1);
        inet_pton(AF_INET, "10.0.0.2", &a2);
        struct tr_port_config cfg = { .port_id = (uint16_t)id, .ipv4 = a1.s_addr, .prefix_len = 24,
                                      .rx_ring = 256, .tx_ring = 256, .no_host_local = true };
        struct tr_port *p;
        char err[256];
        if (id < 0 || tr_port_open(&cfg, &p, err, sizeof(err)) < 0) {
                fprintf(stderr, "port: %s\n", err);
                return 1;
        }
        struct tr_queue *q = tr_port_queue(p, 0);
        struct tr_endpoint *ep;
        struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(5000) };
        tr_endpoint_open(p, &b, NULL, &ep);
        uint8_t mac[6], peer[6] = { 2, 1, 2, 3, 4, 5 };
        tr_port_mac(p, mac);

        /* a valid 32-byte datagram 10.0.0.2:4000 -> 10.0.0.1:5000 */
        struct tr_udp_hdr_args ha = { .dst_mac = mac, .src_mac = peer, .ip_src = a2.s_addr, .ip_dst = a1.s_addr,
                                      .src_port = 4000, .dst_port = 5000, .ttl = 64, .ip_csum = true, .udp_csum = true };
        memset(frame, 0x5a, sizeof(frame));
        tr_frame_build_udp(frame, 32, &ha);
        frame_len = 74;

        /* the peer's MAC is learnt from one ARP request for us */
        uint8_t arp[64];
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        tr_frame_build_arp(arp, 1, bc, peer, a2.s_addr, NULL, a1.s_addr);
        struct rte_mbuf *m = rte_pktmbuf_alloc(tpool);
        memcpy(rte_pktmbuf_append(m, 60), arp, 60);
        rte_ring_enqueue(rxr, m);
        tr_poll(q, on_rx, NULL);

        struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(4000), .sin_addr = a2 };
        struct tr_msg msgs[BURST];
        static uint8_t payload[32];
        for (int i = 0; i < BURST; i++)
                msgs[i] = (struct tr_msg){ .dst = &dst, .data = payload, .len = 32 };

        long rx = 0, tx = 0;
        struct rte_mbuf *pk[BURST];
        for (int r = 0; r < ROUNDS; r++) {
                if (rte_pktmbuf_alloc_bulk(tpool, pk, BURST) != 0)
                        return 1;
                for (int i = 0; i < BURST; i++)
                        memcpy(rte_pktmbuf_append(pk[i], (uint16_t)frame_len), frame, frame_len);
                rte_ring_enqueue_bulk(rxr, (void **)pk, BURST, NULL);
                rx += ipp_rx(q);
                tx += ipp_tx(q, ep, msgs);
                unsigned n = rte_ring_dequeue_burst(txr[0], (void **)pk, BURST, NULL);
                rte_pktmbuf_free_bulk(pk, n);
                while (rte_ring_dequeue(txr[1], (void **)pk) == 0)
                        rte_pktmbuf_free(pk[0]);
        }
        /* the raw arm on the same port and rings (the stack is idle meanwhile): the frame
         * the stack sent is its template */
        uint8_t tmpl[128];
        memcpy(tmpl, frame, frame_len);
        struct rte_mempool *raw_pool = rte_pktmbuf_pool_create("i-raw", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        long raw_rx = 0, raw_tx = 0;
        for (int r = 0; raw_pool && r < ROUNDS; r++) {
                if (rte_pktmbuf_alloc_bulk(tpool, pk, BURST) != 0)
                        return 1;
                for (int i = 0; i < BURST; i++)
                        memcpy(rte_pktmbuf_append(pk[i], (uint16_t)frame_len), frame, frame_len);
                rte_ring_enqueue_bulk(rxr, (void **)pk, BURST, NULL);
                raw_rx += ipp_raw_rx((uint16_t)id);
                raw_tx += ipp_raw_tx((uint16_t)id, raw_pool, tmpl, (uint16_t)frame_len);
                unsigned n = rte_ring_dequeue_burst(txr[0], (void **)pk, BURST, NULL);
                rte_pktmbuf_free_bulk(pk, n);
        }
        rte_mempool_free(raw_pool);
        static struct tr_demux d;
        tr_demux_add(&d, 0, 5000, &d);
        uint8_t out[128];
        long pure = 0;
        struct tr_udp_tmpl tm;
        tr_udp_tmpl_init(&tm, &ha);
        for (int r = 0; r < ROUNDS; r++) {
                pure += ipp_pure_rx(&d);
                pure += ipp_pure_rx_offload(&d) - BURST;
                pure += ipp_pure_rx_fast(&d) - BURST;
                ipp_pure_tx(out, &ha);
                ipp_pure_tx_tmpl(out, &tm, payload);
        }
        if (argc > 1 && strcmp(argv[1], "--time") == 0)
                timed(q, ep, (uint16_t)id, &dst);
        printf("packets: rx %ld tx %ld raw rx %ld raw tx %ld pure %ld (rounds %d x burst %d)\n", rx, tx, raw_rx,
               raw_tx, pure, ROUNDS, BURST);
        tr_endpoint_close(ep);
        tr_port_close(p);
        tr_eal_cleanup();
        return rx == (long)ROUNDS * BURST && tx == (long)ROUNDS * BURST && raw_rx == rx && raw_tx == tx ? 0 : 1;
}
