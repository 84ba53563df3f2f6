/* SPDX-License-Identifier: Apache-2.0 */
/* The transport on a net_ring port whose rings the test holds: frames are injected into
 * the RX ring and what the transport transmits is read off the TX rings. Covers ARP
 * (answer, learn, resolve, gateway, rate limits, flood), UDP both ways with checksums,
 * demux, multicast + IGMP (repeated reports, queries answered), host-local kernel sockets, would-block, and malformed frames
 * dropped and counted by reason. */
#include <errno.h>
#include <sys/socket.h>
#include <time.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpdk-testutil.h"
#include "probe_msg.h"

static struct rte_ring *rxr, *txr[2];
static struct rte_mempool *tpool;
static struct tr_port *port;
static struct tr_queue *q;
static const uint8_t peer_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static uint8_t our_mac[6];

static void inject(const uint8_t *f, size_t len)
{
        struct rte_mbuf *m = rte_pktmbuf_alloc(tpool);
        if (!m)
                abort();
        uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
        if (len && !d)
                abort();
        if (len)
                memcpy(d, f, len);
        if (rte_ring_enqueue(rxr, m) != 0)
                abort();
}

/* Take one frame off TX queue qi; returns its length or 0 if none. */
static size_t take(int qi, uint8_t *buf, size_t cap)
{
        /* set by a successful dequeue; NULL first because gcc -Os cannot follow DPDK's
         * inline copy loop to see that (maybe-uninitialized) */
        struct rte_mbuf *m = NULL;
        if (rte_ring_dequeue(txr[qi], (void **)&m) != 0 || !m)
                return 0;
        size_t n = rte_pktmbuf_data_len(m);
        if (n > cap)
                n = cap;
        memcpy(buf, rte_pktmbuf_mtod(m, void *), n);
        rte_pktmbuf_free(m);
        return n;
}

static void drain(int qi)
{
        uint8_t b[2048];
        while (take(qi, b, sizeof(b)))
                ;
}

struct got {
        int n;
        uint8_t data[2048];
        size_t len;
        struct sockaddr_in src;
        void *ep_clientd;
};

static void on_dgram(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                     const struct sockaddr_in *src)
{
        struct got *g = clientd;
        g->n++;
        g->len = len;
        memcpy(g->data, data, len < sizeof(g->data) ? len : sizeof(g->data));
        g->src = *src;
        g->ep_clientd = ep_clientd;
}

static size_t udp_frame(uint8_t *f, const char *src, uint16_t sport, const char *dst, uint16_t dport,
                        const uint8_t *dmac, const void *payload, size_t len)
{
        memcpy(f + TR_UDP_HDRS, payload, len);
        struct tr_udp_hdr_args a = { .dst_mac = dmac, .src_mac = peer_mac, .ip_src = t_ip4(src),
                                     .ip_dst = t_ip4(dst), .src_port = sport, .dst_port = dport,
                                     .ttl = 64, .ip_csum = true, .udp_csum = true };
        if (tr_frame_build_udp(f, len, &a) != 0)
                abort();
        size_t n = TR_UDP_HDRS + len;
        if (n < 60) {
                memset(f + n, 0, 60 - n);
                n = 60;
        }
        return n;
}

static void setup(void)
{
        struct tr_port_config cfg = { .rx_ring = 256, .tx_ring = 256, .ipv4 = t_ip4("10.0.0.1"),
                                      .prefix_len = 24, .gateway = t_ip4("10.0.0.254"),
                                      .igmp_unsolicited_ms = 100, .probe_port = 39990 };
        char err[256] = "";
        uint16_t pid;

        rxr = rte_ring_create("t-rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[0] = rte_ring_create("t-tx0", 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[1] = rte_ring_create("t-tx1", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        tpool = rte_pktmbuf_pool_create("t-pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        if (!rxr || !txr[0] || !txr[1] || !tpool)
                TEST_FATAL("cannot create rings/pool: %s", rte_strerror(rte_errno));
        int id = rte_eth_from_rings("net_ring_t", &rxr, 1, txr, 2, 0);
        if (id < 0)
                TEST_FATAL("rte_eth_from_rings failed: %s", rte_strerror(rte_errno));
        CHECK_INT(tr_port_find("net_ring_net_ring_t", &pid), 0);
        CHECK_INT(pid, id);
        cfg.port_id = pid;

        /* refusals carry their reason */
        struct tr_port *bad = NULL;
        struct tr_port_config c2 = cfg;
        c2.n_queues = 2; /* the rings give one RX queue */
        CHECK(tr_port_open(&c2, &bad, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "queues") != NULL);
        c2 = cfg;
        c2.mtu = 4000;
        CHECK(tr_port_open(&c2, &bad, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "MTU 4000") != NULL);
        c2 = cfg;
        c2.gateway = t_ip4("10.0.1.1");
        CHECK(tr_port_open(&c2, &bad, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "gateway") != NULL);
        CHECK(bad == NULL);

        int r = tr_port_open(&cfg, &port, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "tr_port_open: %s\n", err);
        CHECK_INT(r, 0);
        if (r < 0)
                exit(test_done());
        q = tr_port_queue(port, 0);
        CHECK(q != NULL);
        CHECK(tr_port_queue(port, 1) == NULL);
        tr_port_mac(port, our_mac);
}

static void test_garp(void)
{
        uint8_t b[128];
        struct tr_frame f;
        size_t n = take(1, b, sizeof(b));
        CHECK_INT(n, 60);
        tr_frame_parse(b, n, 0, &f);
        CHECK_INT(f.kind, TR_FRAME_ARP);
        CHECK(f.arp_spa == t_ip4("10.0.0.1") && f.arp_tpa == t_ip4("10.0.0.1"));
        CHECK(memcmp(f.dst_mac, "\xff\xff\xff\xff\xff\xff", 6) == 0);
}

static void test_arp_answer_and_udp(void)
{
        uint8_t f[2048], b[2048];
        struct tr_frame p;
        struct got g = { 0 };
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        int tag;
        struct tr_endpoint *ep;
        struct sockaddr_in any = t_sin(NULL, 5000);

        /* an ARP request for us gets a reply to the asker */
        size_t n = tr_frame_build_arp(f, 1, bc, peer_mac, t_ip4("10.0.0.2"), NULL, t_ip4("10.0.0.1"));
        inject(f, n);
        /* and one for someone else does not */
        n = tr_frame_build_arp(f, 1, bc, peer_mac, t_ip4("10.0.0.2"), NULL, t_ip4("10.0.0.77"));
        inject(f, n);
        CHECK_INT(tr_poll(q, on_dgram, &g), 0);
        n = take(1, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_ARP);
        CHECK_INT(p.arp_op, 2);
        CHECK(memcmp(p.dst_mac, peer_mac, 6) == 0);
        CHECK(memcmp(p.arp_sha, our_mac, 6) == 0);
        CHECK(p.arp_spa == t_ip4("10.0.0.1") && p.arp_tpa == t_ip4("10.0.0.2"));
        CHECK_INT(take(1, b, sizeof(b)), 0);

        CHECK_INT(tr_endpoint_open(port, &any, &tag, &ep), 0);
        struct tr_endpoint *dup;
        CHECK_INT(tr_endpoint_open(port, &any, &tag, &dup), -EADDRINUSE);
        struct sockaddr_in other = t_sin("10.9.9.9", 1);
        CHECK_INT(tr_endpoint_open(port, &other, &tag, &dup), -EADDRNOTAVAIL);

        /* receive: payload, source, endpoint clientd */
        n = udp_frame(f, "10.0.0.2", 4000, "10.0.0.1", 5000, our_mac, "hello, bypass", 13);
        inject(f, n);
        CHECK_INT(tr_poll(q, on_dgram, &g), 1);
        CHECK_INT(g.n, 1);
        CHECK_INT(g.len, 13);
        CHECK(memcmp(g.data, "hello, bypass", 13) == 0);
        CHECK(g.src.sin_addr.s_addr == t_ip4("10.0.0.2"));
        CHECK_INT(ntohs(g.src.sin_port), 4000);
        CHECK(g.ep_clientd == &tag);

        /* send: the peer's MAC was learnt from its request; checksums verify */
        struct sockaddr_in dst = t_sin("10.0.0.2", 4000);
        CHECK_INT(tr_send(q, ep, &dst, "reply", 5), 1);
        n = take(0, b, sizeof(b));
        CHECK_INT(n, 60);
        tr_frame_parse(b, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        CHECK(memcmp(p.dst_mac, peer_mac, 6) == 0);
        CHECK(memcmp(p.src_mac, our_mac, 6) == 0);
        CHECK(p.ip_src == t_ip4("10.0.0.1"));
        CHECK_INT(p.src_port, 5000);
        CHECK_INT(p.dst_port, 4000);
        CHECK_INT(p.payload_len, 5);
        CHECK(memcmp(b + p.payload_off, "reply", 5) == 0);
        CHECK(b[TR_UDP_HDRS - 2] != 0 || b[TR_UDP_HDRS - 1] != 0); /* a real UDP checksum */

        /* too big for the MTU */
        static uint8_t big[1409];
        CHECK_INT(tr_send(q, ep, &dst, big, 1409), -EMSGSIZE);
        CHECK_INT(tr_send(q, ep, &dst, big, 1408), 1);
        drain(0);

        /* unresolved next hop: would-block and one ARP request, no second within retry */
        struct sockaddr_in d3 = t_sin("10.0.0.3", 4000);
        CHECK_INT(tr_send(q, ep, &d3, "x", 1), 0);
        CHECK_INT(tr_send(q, ep, &d3, "x", 1), 0);
        n = take(1, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_ARP);
        CHECK_INT(p.arp_op, 1);
        CHECK(p.arp_tpa == t_ip4("10.0.0.3"));
        CHECK_INT(take(1, b, sizeof(b)), 0);
        CHECK_INT(take(0, b, sizeof(b)), 0);
        /* the reply resolves it */
        static const uint8_t mac3[6] = { 0x02, 3, 3, 3, 3, 3 };
        n = tr_frame_build_arp(f, 2, our_mac, mac3, t_ip4("10.0.0.3"), our_mac, t_ip4("10.0.0.1"));
        inject(f, n);
        tr_poll(q, on_dgram, &g);
        CHECK_INT(tr_send(q, ep, &d3, "x", 1), 1);
        n = take(0, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK(memcmp(p.dst_mac, mac3, 6) == 0);

        /* off-subnet: ARP for the gateway */
        struct sockaddr_in far = t_sin("192.168.7.7", 9);
        CHECK_INT(tr_send(q, ep, &far, "x", 1), 0);
        n = take(1, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK(p.kind == TR_FRAME_ARP && p.arp_tpa == t_ip4("10.0.0.254"));

        /* batch: 100 datagrams, the 64-slot TX ring takes 63: would-block, not queued */
        struct tr_msg msgs[100];
        for (int i = 0; i < 100; i++)
                msgs[i] = (struct tr_msg){ .dst = &dst, .data = "0123456789abcdef0123456789abcdef", .len = 32 };
        int sent = tr_sendmmsg(q, ep, msgs, 100);
        CHECK(sent > 0 && sent < 100);
        struct tr_counters c;
        tr_port_counters(port, &c);
        CHECK(c.tx_wouldblock_ring >= 1);
        int taken = 0;
        while (take(0, b, sizeof(b)))
                taken++;
        CHECK_INT(taken, sent);
        CHECK_INT(tr_sendmmsg(q, ep, msgs, 32), 32);
        drain(0);

        tr_endpoint_close(ep);
        /* after close: no endpoint */
        n = udp_frame(f, "10.0.0.2", 4000, "10.0.0.1", 5000, our_mac, "x", 1);
        inject(f, n);
        tr_port_counters(port, &c);
        uint64_t before = c.drops[TR_DROP_NO_ENDPOINT];
        CHECK_INT(tr_poll(q, on_dgram, &g), 0);
        tr_port_counters(port, &c);
        CHECK_INT(c.drops[TR_DROP_NO_ENDPOINT], before + 1);
}

static void test_malformed(void)
{
        uint8_t f[2048], good[2048];
        struct got g = { 0 };
        int tag;
        struct tr_endpoint *ep;
        struct sockaddr_in any = t_sin(NULL, 5000);
        struct tr_counters c0, c1;
        static const uint8_t other_mac[6] = { 0x02, 9, 9, 9, 9, 9 };
        uint64_t want[TR_DROP__MAX] = { 0 };

        CHECK_INT(tr_endpoint_open(port, &any, &tag, &ep), 0);
        size_t gn = udp_frame(good, "10.0.0.2", 4000, "10.0.0.1", 5000, our_mac, "payload-payload!", 16);
        tr_port_counters(port, &c0);

#define INJ(why, ...)                                                                      \
        do {                                                                               \
                memcpy(f, good, gn);                                                       \
                size_t len = gn;                                                           \
                __VA_ARGS__;                                                               \
                inject(f, len);                                                            \
                want[why]++;                                                               \
        } while (0)
        uint8_t *ip = f + TR_ETH_HLEN;
        INJ(TR_DROP_RUNT, len = 0);
        INJ(TR_DROP_RUNT, len = 7);
        INJ(TR_DROP_RUNT, len = 13);
        INJ(TR_DROP_IP_TRUNCATED, len = 20);
        INJ(TR_DROP_ETHERTYPE, f[12] = 0x81; f[13] = 0);
        INJ(TR_DROP_ETHERTYPE, f[12] = 0x86; f[13] = 0xdd);
        INJ(TR_DROP_IP_IHL, ip[0] = 0x44);
        INJ(TR_DROP_IP_IHL, ip[0] = 0x4f; len = 50);
        INJ(TR_DROP_IP_LENGTH, ip[2] = 0x10);        /* total length 4096+ beyond the frame */
        INJ(TR_DROP_IP_CHECKSUM, ip[8] = 3);          /* TTL changed, checksum not */
        INJ(TR_DROP_UDP_LENGTH, ip[24] = 0x01);       /* UDP length 256+ beyond IP payload */
        INJ(TR_DROP_UDP_CHECKSUM, f[TR_UDP_HDRS] ^= 0xff);
        INJ(TR_DROP_NOT_OUR_MAC, memcpy(f, other_mac, 6));
        /* ours but for the last byte, and but for the first (still unicast): the data path
         * compares the MAC in one masked 8-byte load */
        INJ(TR_DROP_NOT_OUR_MAC, f[5] ^= 0x01);
        INJ(TR_DROP_NOT_OUR_MAC, f[0] ^= 0x04);
        INJ(TR_DROP_IP_VERSION, ip[0] = 0x65);
        /* fragments and non-UDP need a valid IP checksum to get that far */
        INJ(TR_DROP_IP_FRAGMENT, ip[6] |= 0x20; ip[10] = ip[11] = 0;
            uint16_t cs = tr_csum_fold(tr_csum_partial(ip, 20, 0)); memcpy(ip + 10, &cs, 2));
        INJ(TR_DROP_PROTO, ip[9] = 6; ip[10] = ip[11] = 0;
            uint16_t cs = tr_csum_fold(tr_csum_partial(ip, 20, 0)); memcpy(ip + 10, &cs, 2));
        INJ(TR_DROP_NOT_FOR_US, len = udp_frame(f, "10.0.0.2", 4000, "10.0.0.99", 5000, our_mac, "x", 1));
        INJ(TR_DROP_NOT_FOR_US, len = udp_frame(f, "10.0.0.2", 4000, "239.9.9.9", 5000,
                                                (const uint8_t *)"\x01\x00\x5e\x09\x09\x09", "x", 1));
        INJ(TR_DROP_NO_ENDPOINT, len = udp_frame(f, "10.0.0.2", 4000, "10.0.0.1", 5001, our_mac, "x", 1));
        /* ARP with odd sizes */
        INJ(TR_DROP_ARP_MALFORMED, len = tr_frame_build_arp(f, 1, our_mac, peer_mac, t_ip4("10.0.0.2"), NULL, t_ip4("10.0.0.1")); f[18] = 8);
        INJ(TR_DROP_ARP_MALFORMED, len = tr_frame_build_arp(f, 1, our_mac, peer_mac, t_ip4("10.0.0.2"), NULL, t_ip4("10.0.0.1")); f[19] = 16);
        INJ(TR_DROP_ARP_MALFORMED, len = 30; f[12] = 0x08; f[13] = 0x06);
#undef INJ
        int delivered = 0;
        for (int i = 0; i < 4; i++)
                delivered += tr_poll(q, on_dgram, &g);
        CHECK_INT(delivered, 0);
        tr_port_counters(port, &c1);
        for (int d = 1; d < TR_DROP__MAX; d++) {
                if (c1.drops[d] - c0.drops[d] != want[d])
                        fprintf(stderr, "drop %s: %llu, want %llu\n", tr_drop_name((enum tr_drop)d),
                                (unsigned long long)(c1.drops[d] - c0.drops[d]), (unsigned long long)want[d]);
                CHECK_INT(c1.drops[d] - c0.drops[d], want[d]);
        }
        /* and a good one still goes through afterwards */
        inject(good, gn);
        CHECK_INT(tr_poll(q, on_dgram, &g), 1);
        tr_endpoint_close(ep);
}

static void test_arp_flood(void)
{
        uint8_t f[64];
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        struct tr_counters c0, c1;
        struct got g = { 0 };

        drain(1);
        tr_port_counters(port, &c0);
        uint64_t t0 = rte_get_tsc_cycles();
        for (int round = 0; round < 4; round++) {
                for (int i = 0; i < 250; i++) {
                        uint8_t mac[6] = { 0x02, 0xf1, 0, 0, (uint8_t)round, (uint8_t)i };
                        size_t n = tr_frame_build_arp(f, 1, bc, mac, t_ip4("10.0.1.0") + htonl((uint32_t)(round * 250 + i)),
                                                      NULL, t_ip4("10.0.0.1"));
                        inject(f, n);
                }
                while (tr_poll(q, on_dgram, &g) > 0 || rte_ring_count(rxr) > 0)
                        ;
        }
        double secs = (double)(rte_get_tsc_cycles() - t0) / (double)rte_get_tsc_hz();
        tr_port_counters(port, &c1);
        uint64_t replies = c1.arp_replies_tx - c0.arp_replies_tx;
        uint64_t limited = c1.drops[TR_DROP_ARP_RATE] - c0.drops[TR_DROP_ARP_RATE];
        CHECK_INT(c1.arp_requests_rx - c0.arp_requests_rx, 1000);
        CHECK_INT(replies + limited, 1000);
        CHECK(replies >= 8); /* the burst, less what earlier tests used */
        CHECK(replies <= 16 + (uint64_t)(secs * 100) + 1);
        int on_wire = 0;
        uint8_t b[128];
        while (take(1, b, sizeof(b)))
                on_wire++;
        CHECK_INT(on_wire, replies);
        printf("ARP flood: 1000 requests in %.3f s, %llu replies, %llu rate-limited\n", secs,
               (unsigned long long)replies, (unsigned long long)limited);
}

/* The probe responder: a request to our address on the probe port comes back as a reply
 * of the same length (the same bytes but the type), to the sender's MAC, address and
 * port, on the control queue; a reply, garbage or another address gets nothing; a flood
 * is held to the bucket (burst 64 + 1000/s), every request counted as answered or
 * dropped. */
static void test_probe_responder(void)
{
        uint8_t f[256], b[2048], req[100];
        struct tr_counters c0, c1;
        struct got g = { 0 };
        struct tr_frame fr;
        struct tr_probe pr;

        drain(1);
        tr_port_counters(port, &c0);
        CHECK_INT(tr_probe_build(req, sizeof(req), TR_PROBE_REQUEST, 77, 5), (int)sizeof(req));
        inject(f, udp_frame(f, "10.0.0.2", 5555, "10.0.0.1", 39990, our_mac, req, sizeof(req)));
        while (tr_poll(q, on_dgram, &g) > 0 || rte_ring_count(rxr) > 0)
                ;
        size_t n = take(1, b, sizeof(b));
        CHECK_INT(n, TR_UDP_HDRS + sizeof(req));
        tr_frame_parse(b, n, 0, &fr);
        CHECK_INT(fr.kind, TR_FRAME_UDP);
        CHECK(memcmp(fr.dst_mac, peer_mac, 6) == 0);
        CHECK_INT(fr.ip_dst, t_ip4("10.0.0.2"));
        CHECK_INT(fr.ip_src, t_ip4("10.0.0.1"));
        CHECK_INT(fr.dst_port, 5555);
        CHECK_INT(fr.src_port, 39990);
        CHECK_INT(fr.payload_len, sizeof(req)); /* never larger than the request */
        CHECK_INT(tr_probe_parse(b + fr.payload_off, fr.payload_len, &pr), 0);
        CHECK_INT(pr.type, TR_PROBE_REPLY);
        CHECK_INT(pr.id, 77);
        CHECK_INT(pr.seq, 5);
        CHECK(memcmp(b + fr.payload_off + 6, req + 6, sizeof(req) - 6) == 0);
        CHECK_INT(g.n, 0); /* no endpoint saw it */

        /* a reply, garbage, the probe port of another address: nothing goes out */
        uint8_t rep[16];
        tr_probe_build(rep, sizeof(rep), TR_PROBE_REPLY, 1, 1);
        inject(f, udp_frame(f, "10.0.0.2", 5555, "10.0.0.1", 39990, our_mac, rep, sizeof(rep)));
        inject(f, udp_frame(f, "10.0.0.2", 5555, "10.0.0.1", 39990, our_mac, "hello, echo me", 14));
        inject(f, udp_frame(f, "10.0.0.2", 5555, "10.0.0.9", 39990, our_mac, req, sizeof(req)));
        while (tr_poll(q, on_dgram, &g) > 0 || rte_ring_count(rxr) > 0)
                ;
        CHECK_INT(take(1, b, sizeof(b)), 0);
        tr_port_counters(port, &c1);
        CHECK_INT(c1.probe_rx - c0.probe_rx, 1);
        CHECK_INT(c1.probe_tx - c0.probe_tx, 1);
        CHECK_INT(c1.drops[TR_DROP_PROBE_MALFORMED] - c0.drops[TR_DROP_PROBE_MALFORMED], 2);

        /* a flood: 4 x 200 requests as fast as they come */
        tr_port_counters(port, &c0);
        uint64_t t0 = rte_get_tsc_cycles();
        for (int round = 0; round < 4; round++) {
                for (int i = 0; i < 200; i++) {
                        tr_probe_build(req, 16, TR_PROBE_REQUEST, 78, (uint32_t)i);
                        inject(f, udp_frame(f, "10.0.0.2", 5555, "10.0.0.1", 39990, our_mac, req, 16));
                }
                while (tr_poll(q, on_dgram, &g) > 0 || rte_ring_count(rxr) > 0)
                        ;
                drain(1);
        }
        double secs = (double)(rte_get_tsc_cycles() - t0) / (double)rte_get_tsc_hz();
        tr_port_counters(port, &c1);
        uint64_t replies = c1.probe_tx - c0.probe_tx, limited = c1.drops[TR_DROP_PROBE_RATE] - c0.drops[TR_DROP_PROBE_RATE];
        CHECK_INT(c1.probe_rx - c0.probe_rx, 800);
        CHECK_INT(replies + limited, 800);
        CHECK(replies >= 63); /* the burst, less the one answered above */
        CHECK(replies <= 64 + (uint64_t)(secs * 1000) + 1);
        printf("probe flood: 800 requests in %.3f s, %llu replies, %llu rate-limited\n", secs,
               (unsigned long long)replies, (unsigned long long)limited);
}

/* ms on the transport's own clock (the TSC at DPDK's rate): its timers are checked
 * against the same time base, whatever DPDK's TSC calibration makes of a VM's clock
 * (here 6 % off CLOCK_MONOTONIC). */
static long now_ms(void)
{
        return (long)((unsigned __int128)rte_get_tsc_cycles() * 1000 / rte_get_tsc_hz());
}

/* tr_poll() runs the port's timers (and reads its kernel sockets) once every
 * TR_SLOW_EVERY (16, transport.c) polls of queue 0: a round of this many polls contains
 * one such look, whatever the count so far. */
#define POLLS_PER_TICK 16

static int poll_round(struct tr_queue *qq, struct got *g)
{
        int n = 0;
        for (int i = 0; i < POLLS_PER_TICK; i++)
                n += tr_poll(qq, on_dgram, g);
        return n;
}

/* Poll queue 0 in rounds (its timers run there, and a query injected before is read by
 * the first round) until an IGMP frame leaves on the control ring, for at most max_ms. Returns when
 * it was seen, in ms from the start, or -1. *ret_before: when the last round that did not
 * produce it began, in ms after the first round ended (by then the query was read), or
 * -1 if the first round produced it. The frame was due after that round began, so a
 * timer armed by then and due within L gives before < L however late a loaded machine
 * runs the test. The frame in *ret, bytes in buf. */
static long wait_igmp(struct tr_frame *ret, uint8_t *buf, size_t cap, long max_ms, long *ret_before)
{
        struct got g = { 0 };
        long t0 = now_ms(), first_end = -1, before = -1;
        do {
                long t = now_ms();
                poll_round(q, &g);
                if (first_end < 0)
                        first_end = now_ms();
                size_t n;
                while ((n = take(1, buf, cap)) > 0) {
                        tr_frame_parse(buf, n, 0, ret);
                        if (ret->kind == TR_FRAME_IGMP) {
                                if (ret_before)
                                        *ret_before = before;
                                return now_ms() - t0;
                        }
                }
                before = t - first_end;
        } while (now_ms() - t0 <= max_ms);
        return -1;
}

/* No IGMP frame within a quiet window (a frame that should not exist at all). */
#define QUIET_MS 300
/* Rounding to whole ms, both ways. */
#define CLOCK_SLACK_MS 2

/* An IGMP query from the router 10.0.0.254: version 2 (8 bytes) or 3 (12 bytes), to
 * 224.0.0.1 for a General Query (group NULL) or to the group. */
static size_t igmp_query(uint8_t *f, int version, uint8_t code, const char *group)
{
        uint32_t g = group ? t_ip4(group) : 0, dst = group ? g : t_ip4("224.0.0.1");
        size_t l4 = version == 3 ? 12 : 8;
        uint8_t *ip = f + TR_ETH_HLEN, *m = ip + 24;
        memset(f, 0, 64);
        tr_ipv4_mcast_mac(dst, f);
        memcpy(f + 6, peer_mac, 6);
        f[12] = 0x08;
        ip[0] = 0x46;
        ip[3] = (uint8_t)(24 + l4);
        ip[8] = 1;
        ip[9] = TR_IPPROTO_IGMP;
        uint32_t src = t_ip4("10.0.0.254");
        memcpy(ip + 12, &src, 4);
        memcpy(ip + 16, &dst, 4);
        ip[20] = 0x94;
        ip[21] = 0x04;
        uint16_t c = tr_csum_fold(tr_csum_partial(ip, 24, 0));
        memcpy(ip + 10, &c, 2);
        m[0] = 0x11;
        m[1] = code;
        memcpy(m + 4, &g, 4);
        if (version == 3) {
                m[8] = 2;   /* QRV 2 */
                m[9] = 125; /* QQIC */
        }
        c = tr_csum_fold(tr_csum_partial(m, l4, 0));
        memcpy(m + 2, &c, 2);
        return 60;
}

static void test_multicast(void)
{
        uint8_t f[2048], b[2048];
        struct tr_frame p;
        struct got g = { 0 };
        int tag;
        struct tr_endpoint *ep;
        struct sockaddr_in grp = t_sin("239.1.2.3", 6000);
        const uint8_t *gmac = (const uint8_t *)"\x01\x00\x5e\x01\x02\x03";
        const uint32_t g_be = t_ip4("239.1.2.3");
        long ms;

        drain(1);
        /* a join: a report now and Robustness Variable (2) in all, the second within the
         * Unsolicited Report Interval (100 ms here; random in it for IGMPv3) */
        CHECK_INT(tr_port_join(port, g_be), 0);
        CHECK_INT(tr_port_join(port, g_be), -EALREADY);
        CHECK_INT(tr_port_join(port, t_ip4("10.1.2.3")), -EINVAL);
        size_t n = take(1, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_IGMP);
        CHECK_INT(p.igmp_type, 0x22); /* IGMPv3 report */
        CHECK(p.ip_dst == t_ip4("224.0.0.22"));
        CHECK_INT(b[TR_ETH_HLEN + 24 + 8], 2); /* MODE_IS_EXCLUDE {} = join */
        CHECK(take(1, b, sizeof(b)) == 0);    /* only one at once */
        long before;
        ms = wait_igmp(&p, b, sizeof(b), TEST_WAIT_MS, &before);
        CHECK(ms >= 0 && before < 100 + CLOCK_SLACK_MS);
        CHECK(p.kind == TR_FRAME_IGMP && p.igmp_type == 0x22 && b[TR_ETH_HLEN + 24 + 8] == 2);
        CHECK(memcmp(b + TR_ETH_HLEN + 24 + 12, &g_be, 4) == 0);
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1); /* two in all */

        CHECK_INT(tr_endpoint_open(port, &grp, &tag, &ep), 0);
        n = udp_frame(f, "10.0.0.2", 4000, "239.1.2.3", 6000, gmac, "mcast", 5);
        inject(f, n);
        CHECK_INT(tr_poll(q, on_dgram, &g), 1);
        CHECK(memcmp(g.data, "mcast", 5) == 0);

        /* a General Query (v3, Max Resp 0.2 s): one current-state report for the group,
         * not at once but within the Max Resp Time */
        struct tr_counters c0, c1;
        tr_port_counters(port, &c0);
        inject(b, igmp_query(b, 3, 2, NULL));
        ms = wait_igmp(&p, b, sizeof(b), TEST_WAIT_MS, &before);
        CHECK(ms >= 0 && before < 200 + CLOCK_SLACK_MS);
        CHECK(p.kind == TR_FRAME_IGMP && p.igmp_type == 0x22 && b[TR_ETH_HLEN + 24 + 8] == 2);
        CHECK(memcmp(b + TR_ETH_HLEN + 24 + 12, &g_be, 4) == 0);
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1); /* one answer per query */
        tr_port_counters(port, &c1);
        CHECK_INT(c1.igmp_rx - c0.igmp_rx, 1);
        CHECK_INT(c1.igmp_reports_tx - c0.igmp_reports_tx, 1);
        /* Max Resp Code 0x8f in v3: (0xf | 0x10) << 3 = 248 tenths; v2 code 0 = v1: 10 s */
        CHECK_INT(tr_igmp_max_resp_ds(0x8f, 12), 248);
        CHECK_INT(tr_igmp_max_resp_ds(0, 8), 100);
        CHECK_INT(tr_igmp_max_resp_ds(25, 8), 25);

        /* a Group-Specific Query for another group: nothing; for ours: an answer */
        inject(b, igmp_query(b, 3, 1, "239.9.9.9"));
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1);
        inject(b, igmp_query(b, 3, 1, "239.1.2.3"));
        ms = wait_igmp(&p, b, sizeof(b), TEST_WAIT_MS, &before);
        CHECK(ms >= 0 && before < 100 + CLOCK_SLACK_MS);
        CHECK(p.kind == TR_FRAME_IGMP && p.igmp_type == 0x22);
        /* an IGMPv2 querier is answered in IGMPv2: a membership report to the group */
        inject(b, igmp_query(b, 2, 1, NULL));
        ms = wait_igmp(&p, b, sizeof(b), TEST_WAIT_MS, &before);
        CHECK(ms >= 0 && before < 100 + CLOCK_SLACK_MS);
        CHECK(p.kind == TR_FRAME_IGMP && p.igmp_type == 0x16 && p.igmp_group == g_be && p.ip_dst == g_be);
        /* a malformed length (10 bytes) is no query: ignored */
        n = igmp_query(b, 3, 1, NULL);
        b[TR_ETH_HLEN + 3] = 24 + 10;
        b[TR_ETH_HLEN + 10] = b[TR_ETH_HLEN + 11] = 0;
        uint16_t cs = tr_csum_fold(tr_csum_partial(b + TR_ETH_HLEN, 24, 0));
        memcpy(b + TR_ETH_HLEN + 10, &cs, 2);
        b[TR_ETH_HLEN + 24 + 2] = b[TR_ETH_HLEN + 24 + 3] = 0;
        cs = tr_csum_fold(tr_csum_partial(b + TR_ETH_HLEN + 24, 10, 0));
        memcpy(b + TR_ETH_HLEN + 24 + 2, &cs, 2);
        inject(b, n);
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1);

        /* sending to a group needs no ARP: the group MAC */
        CHECK_INT(tr_send(q, ep, &grp, "out", 3), 1);
        n = take(0, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK(memcmp(p.dst_mac, gmac, 6) == 0);
        CHECK(p.ip_src == t_ip4("10.0.0.1"));

        /* a query pending at leave is not answered; the leave is repeated too (v3) */
        inject(b, igmp_query(b, 3, 50, NULL)); /* up to 5 s */
        tr_poll(q, on_dgram, &g);
        CHECK_INT(tr_port_leave(port, g_be), 0);
        CHECK_INT(tr_port_leave(port, g_be), -ENOENT);
        n = take(1, b, sizeof(b));
        tr_frame_parse(b, n, 0, &p);
        CHECK(p.kind == TR_FRAME_IGMP && p.igmp_type == 0x22);
        CHECK_INT(b[TR_ETH_HLEN + 24 + 8], 3); /* CHANGE_TO_INCLUDE {} = leave */
        ms = wait_igmp(&p, b, sizeof(b), TEST_WAIT_MS, &before);
        CHECK(ms >= 0 && before < 100 + CLOCK_SLACK_MS);
        CHECK(p.kind == TR_FRAME_IGMP && b[TR_ETH_HLEN + 24 + 8] == 3);
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1);
        inject(b, igmp_query(b, 3, 1, NULL)); /* no group left: no answer */
        CHECK_INT(wait_igmp(&p, b, sizeof(b), QUIET_MS, NULL), -1);
        inject(f, udp_frame(f, "10.0.0.2", 4000, "239.1.2.3", 6000, gmac, "mcast", 5));
        CHECK_INT(tr_poll(q, on_dgram, &g), 0);
        tr_endpoint_close(ep);
}

static void test_host_local(void)
{
        struct got g = { 0 };
        int tag;
        struct tr_endpoint *ep;
        struct sockaddr_in any = t_sin(NULL, 0), local;

        CHECK_INT(tr_endpoint_open(port, &any, &tag, &ep), 0);
        tr_endpoint_local(ep, &local);
        CHECK(ntohs(local.sin_port) != 0);
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in lo = t_sin("127.0.0.1", 0);
        socklen_t sl = sizeof(lo);
        CHECK(bind(fd, (struct sockaddr *)&lo, sizeof(lo)) == 0);
        CHECK(getsockname(fd, (struct sockaddr *)&lo, &sl) == 0);
        struct timeval tv = { .tv_sec = 2 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        /* to our own address: over the kernel, never the NIC */
        struct sockaddr_in self = lo;
        self.sin_addr.s_addr = t_ip4("10.0.0.1");
        CHECK_INT(tr_send(q, ep, &self, "to-self", 7), 1);
        char buf[64];
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        CHECK_INT(r, 7);
        CHECK(memcmp(buf, "to-self", 7) == 0);
        CHECK_INT(rte_ring_count(txr[0]), 0);
        /* and back: the kernel peer sends to the endpoint's port on loopback */
        struct sockaddr_in to = t_sin("127.0.0.1", ntohs(local.sin_port));
        CHECK(sendto(fd, "from-kernel", 11, 0, (struct sockaddr *)&to, sizeof(to)) == 11);
        int got = 0;
        for (long end = now_ms() + TEST_WAIT_MS; !got && now_ms() < end;) {
                got += tr_poll(q, on_dgram, &g);
                usleep(100);
        }
        CHECK_INT(got, 1);
        CHECK(memcmp(g.data, "from-kernel", 11) == 0);
        CHECK(g.src.sin_port == lo.sin_port);
        /* a datagram above the MTU (1408) from a local socket: dropped as too_big */
        static char big[1409];
        struct tr_counters c0, c1;
        tr_port_counters(port, &c0);
        CHECK(sendto(fd, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)sizeof(big));
        CHECK(sendto(fd, big, 1408, 0, (struct sockaddr *)&to, sizeof(to)) == 1408);
        got = 0;
        for (long end = now_ms() + TEST_WAIT_MS; !got && now_ms() < end;) {
                got += tr_poll(q, on_dgram, &g);
                usleep(100);
        }
        CHECK_INT(got, 1);
        CHECK_INT(g.len, 1408);
        tr_port_counters(port, &c1);
        CHECK_INT(c1.drops[TR_DROP_TOO_BIG] - c0.drops[TR_DROP_TOO_BIG], 1);
        close(fd);
        tr_endpoint_close(ep);
}

/* Two polling threads' queues on one port: each sends on its own TX ring, all RX lands
 * on queue 0, control frames go out on the spare TX ring. */
static void test_multiqueue(void)
{
        struct rte_ring *rx[2], *tx[3];
        char name[32], err[256] = "";
        for (int i = 0; i < 2; i++) {
                snprintf(name, sizeof(name), "mq-rx%d", i);
                rx[i] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        }
        for (int i = 0; i < 3; i++) {
                snprintf(name, sizeof(name), "mq-tx%d", i);
                tx[i] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        }
        int id = rte_eth_from_rings("mq", rx, 2, tx, 3, 0);
        CHECK(id >= 0);
        struct tr_port_config cfg = { .port_id = (uint16_t)id, .n_queues = 2, .rx_ring = 128, .tx_ring = 128,
                                      .ipv4 = t_ip4("10.5.0.1"), .prefix_len = 24, .no_host_local = true,
                                      .igmp_version = 2, .igmp_unsolicited_ms = 150 };
        struct tr_port *mp;
        int r = tr_port_open(&cfg, &mp, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "mq open: %s\n", err);
        CHECK_INT(r, 0);
        if (r < 0)
                return;
        struct rte_mbuf *m = NULL;
        CHECK_INT(rte_ring_dequeue(tx[2], (void **)&m), 0); /* the gratuitous ARP: control ring */
        rte_pktmbuf_free(m);
        struct tr_endpoint *ep;
        struct sockaddr_in b = t_sin(NULL, 5000), dst = t_sin("239.0.0.9", 5000);
        CHECK_INT(tr_endpoint_open(mp, &b, NULL, &ep), 0);
        CHECK_INT(tr_send(tr_port_queue(mp, 0), ep, &dst, "q0", 2), 1);
        CHECK_INT(tr_send(tr_port_queue(mp, 1), ep, &dst, "q1", 2), 1);
        CHECK_INT(tr_send(tr_port_queue(mp, 1), ep, &dst, "q1", 2), 1);
        CHECK_INT(rte_ring_count(tx[0]), 1);
        CHECK_INT(rte_ring_count(tx[1]), 2);
        CHECK_INT(rte_ring_count(tx[2]), 0);
        struct tr_counters c;
        tr_port_counters(mp, &c);
        CHECK_INT(c.tx_datagrams, 3);
        for (int i = 0; i < 3; i++)
                while (rte_ring_dequeue(tx[i], (void **)&m) == 0)
                        rte_pktmbuf_free(m);
        /* IGMPv2: a membership report to the group itself, repeated once after exactly
         * the Unsolicited Report Interval (150 ms here), then a single leave to
         * all-routers (never repeated in v2) */
        uint8_t fb[128];
        struct tr_frame f;
        struct tr_queue *q0 = tr_port_queue(mp, 0);
        struct got g = { 0 };
        long t_join0 = now_ms(), t_second = -1, before_second = -1;
        CHECK_INT(tr_port_join(mp, t_ip4("239.7.7.7")), 0);
        long t_join1 = now_ms(); /* the join happened between t_join0 and t_join1 */
        int reports = 0, leaves = 0;
        /* round 0 until both reports, round 1 (after the leave) until the leave; each then
         * stays quiet for QUIET_MS: no third report, no second leave */
        for (int round = 0; round < 2; round++) {
                long end = now_ms() + TEST_WAIT_MS, quiet_end = -1;
                while (now_ms() < (quiet_end >= 0 ? quiet_end : end)) {
                        long t = now_ms();
                        poll_round(q0, &g);
                        while (rte_ring_dequeue(tx[2], (void **)&m) == 0) {
                                size_t n = rte_pktmbuf_data_len(m);
                                if (n > sizeof(fb))
                                        n = sizeof(fb);
                                memcpy(fb, rte_pktmbuf_mtod(m, void *), n);
                                rte_pktmbuf_free(m);
                                tr_frame_parse(fb, n, 0, &f);
                                CHECK_INT(f.kind, TR_FRAME_IGMP);
                                CHECK(f.igmp_group == t_ip4("239.7.7.7"));
                                if (f.igmp_type == 0x16) {
                                        CHECK(f.ip_dst == t_ip4("239.7.7.7"));
                                        if (++reports == 2)
                                                t_second = now_ms();
                                } else {
                                        CHECK_INT(f.igmp_type, 0x17);
                                        CHECK(f.ip_dst == t_ip4("224.0.0.2"));
                                        leaves++;
                                }
                        }
                        if (reports < 2)
                                before_second = t; /* the second report was not due yet */
                        if (quiet_end < 0 && (round == 0 ? reports >= 2 : leaves >= 1))
                                quiet_end = now_ms() + QUIET_MS;
                        usleep(1000);
                }
                if (round == 0)
                        CHECK_INT(tr_port_leave(mp, t_ip4("239.7.7.7")), 0);
        }
        CHECK_INT(reports, 2);
        CHECK_INT(leaves, 1);
        /* due 150 ms after the join: seen no earlier, and not yet due when the last poll
         * before it began */
        CHECK(t_second - t_join0 >= 150 - CLOCK_SLACK_MS);
        CHECK(before_second - t_join1 < 150 + CLOCK_SLACK_MS);
        tr_endpoint_close(ep);
        tr_port_close(mp);
}

/* A prepared flow does not outlive its ARP entry: once arp_ttl_ms has passed, the next
 * send asks for the peer again (would-block until the answer), as without the cache. */
static void test_flow_expiry(void)
{
        struct rte_ring *rx, *tx[2];
        rx = rte_ring_create("fx-rx", 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        tx[0] = rte_ring_create("fx-tx0", 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        tx[1] = rte_ring_create("fx-tx1", 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        int id = rte_eth_from_rings("fx", &rx, 1, tx, 2, 0);
        CHECK(id >= 0);
        struct tr_port_config cfg = { .port_id = (uint16_t)id, .rx_ring = 128, .tx_ring = 128,
                                      .ipv4 = t_ip4("10.6.0.1"), .prefix_len = 24, .no_host_local = true,
                                      .arp_ttl_ms = 30 };
        struct tr_port *fp;
        char err[256] = "";
        int r = tr_port_open(&cfg, &fp, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "flow expiry open: %s\n", err);
        CHECK_INT(r, 0);
        if (r < 0)
                return;
        struct tr_queue *fq = tr_port_queue(fp, 0);
        struct rte_mbuf *m = NULL;
        struct got g = { 0 };
        while (rte_ring_dequeue(tx[1], (void **)&m) == 0) /* the gratuitous ARP */
                rte_pktmbuf_free(m);
        struct tr_endpoint *ep;
        struct sockaddr_in b = t_sin(NULL, 5000), dst = t_sin("10.6.0.2", 6000);
        CHECK_INT(tr_endpoint_open(fp, &b, NULL, &ep), 0);
        /* the peer asks for us: we learn it, and answer */
        uint8_t f[64], our[6];
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        tr_port_mac(fp, our);
        tr_frame_build_arp(f, 1, bc, peer_mac, t_ip4("10.6.0.2"), NULL, t_ip4("10.6.0.1"));
        m = rte_pktmbuf_alloc(tpool);
        memcpy(rte_pktmbuf_append(m, 60), f, 60);
        CHECK_INT(rte_ring_enqueue(rx, m), 0);
        tr_poll(fq, on_dgram, &g);
        while (rte_ring_dequeue(tx[1], (void **)&m) == 0)
                rte_pktmbuf_free(m);
        CHECK_INT(tr_send(fq, ep, &dst, "a", 1), 1); /* resolved: the flow is made */
        CHECK_INT(tr_send(fq, ep, &dst, "b", 1), 1); /* and used */
        /* keep polling queue 0 and sending; within a generous bound, after 30 ms the entry
         * expires and a send turns into an ARP request */
        long t0 = now_ms(), sent = 2, asked = 0;
        while (!asked && now_ms() - t0 < 10000) {
                tr_poll(fq, on_dgram, &g);
                sent += tr_send(fq, ep, &dst, "c", 1) == 1;
                while (rte_ring_dequeue(tx[0], (void **)&m) == 0)
                        rte_pktmbuf_free(m);
                while (rte_ring_dequeue(tx[1], (void **)&m) == 0) {
                        struct tr_frame a;
                        tr_frame_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), 0, &a);
                        asked += a.kind == TR_FRAME_ARP && a.arp_op == 1 && a.arp_tpa == t_ip4("10.6.0.2");
                        rte_pktmbuf_free(m);
                }
        }
        CHECK_INT(asked, 1);
        CHECK(now_ms() - t0 >= 25); /* not before the TTL (less 5 ms for clock granularity) */
        CHECK(sent > 2);
        CHECK_INT(tr_send(fq, ep, &dst, "d", 1), 0); /* unresolved now: would block */
        tr_endpoint_close(ep);
        tr_port_close(fp);
}

/* no_udp_csum: on a device without the offload (net_ring has none) datagrams go with a UDP
 * checksum of 0 and a valid IPv4 header checksum, through tr_send, a burst to one flow and
 * a burst to two; without it (the control) the checksum is summed and verifies. */
static void test_no_udp_csum(void)
{
        for (int opt = 0; opt < 2; opt++) {
                char name[16];
                struct rte_ring *rx, *tx[2];
                snprintf(name, sizeof(name), "nc%d-rx", opt);
                rx = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
                snprintf(name, sizeof(name), "nc%d-tx0", opt);
                tx[0] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
                snprintf(name, sizeof(name), "nc%d-tx1", opt);
                tx[1] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
                snprintf(name, sizeof(name), "nc%d", opt);
                int id = rte_eth_from_rings(name, &rx, 1, tx, 2, 0);
                CHECK(id >= 0);
                struct tr_port_config cfg = { .port_id = (uint16_t)id, .rx_ring = 128, .tx_ring = 128,
                                              .ipv4 = t_ip4("10.7.0.1"), .prefix_len = 24, .no_host_local = true,
                                              .no_udp_csum = opt == 1 };
                struct tr_port *np;
                char err[256] = "";
                int r = tr_port_open(&cfg, &np, err, sizeof(err));
                if (r < 0)
                        fprintf(stderr, "no_udp_csum open: %s\n", err);
                CHECK_INT(r, 0);
                if (r < 0)
                        return;
                struct tr_queue *nq = tr_port_queue(np, 0);
                struct rte_mbuf *m = NULL;
                struct got g = { 0 };
                struct tr_endpoint *ep;
                struct sockaddr_in b = t_sin(NULL, 5000), d1 = t_sin("10.7.0.2", 6000), d2 = t_sin("10.7.0.2", 6001);
                CHECK_INT(tr_endpoint_open(np, &b, NULL, &ep), 0);
                uint8_t f[64];
                static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
                tr_frame_build_arp(f, 1, bc, peer_mac, t_ip4("10.7.0.2"), NULL, t_ip4("10.7.0.1"));
                m = rte_pktmbuf_alloc(tpool);
                memcpy(rte_pktmbuf_append(m, 60), f, 60);
                CHECK_INT(rte_ring_enqueue(rx, m), 0);
                tr_poll(nq, on_dgram, &g); /* the peer is learnt */
                const char *pl = "0123456789abcdef0123456789abcdef!"; /* 33 bytes: past the two moves */
                struct tr_msg one[3], two[3];
                for (int i = 0; i < 3; i++) {
                        one[i] = (struct tr_msg){ .dst = &d1, .data = pl, .len = 16u + (size_t)i * 8 };
                        two[i] = (struct tr_msg){ .dst = i == 1 ? &d2 : &d1, .data = pl, .len = 33 };
                }
                CHECK_INT(tr_send(nq, ep, &d1, pl, 33), 1);
                CHECK_INT(tr_sendmmsg(nq, ep, one, 3), 3);
                CHECK_INT(tr_sendmmsg(nq, ep, two, 3), 3);
                int n = 0;
                while (rte_ring_dequeue(tx[0], (void **)&m) == 0) {
                        const uint8_t *fr = rte_pktmbuf_mtod(m, const uint8_t *);
                        struct tr_frame a;
                        tr_frame_parse(fr, rte_pktmbuf_data_len(m), 0, &a); /* verifies what is there */
                        CHECK_INT(a.kind, TR_FRAME_UDP);
                        size_t len = n == 0 || n >= 4 ? 33 : 16u + (size_t)(n - 1) * 8;
                        CHECK_INT(a.payload_len, len);
                        CHECK(a.kind == TR_FRAME_UDP && memcmp(fr + a.payload_off, pl, len) == 0);
                        uint16_t c = (uint16_t)(fr[TR_UDP_HDRS - 2] << 8 | fr[TR_UDP_HDRS - 1]);
                        if (opt)
                                CHECK_INT(c, 0);
                        else
                                CHECK(c != 0);
                        rte_pktmbuf_free(m);
                        n++;
                }
                CHECK_INT(n, 7);
                while (rte_ring_dequeue(tx[1], (void **)&m) == 0)
                        rte_pktmbuf_free(m);
                tr_endpoint_close(ep);
                tr_port_close(np);
        }
}

int main(void)
{
        t_skip_unless_dpdk(NULL); /* net_ring is linked in */
        t_eal_start("ring", NULL);
        setup();
        test_garp();
        test_arp_answer_and_udp();
        test_malformed();
        test_arp_flood();
        test_probe_responder();
        test_multicast();
        test_host_local();
        test_multiqueue();
        test_flow_expiry();
        test_no_udp_csum();
        struct tr_counters c;
        tr_port_counters(port, &c);
        printf("rx_frames %llu, rx_datagrams %llu, tx_datagrams %llu, drops %llu\n",
               (unsigned long long)c.rx_frames, (unsigned long long)c.rx_datagrams,
               (unsigned long long)c.tx_datagrams, (unsigned long long)tr_counters_drops(&c));
        tr_port_close(port);
        tr_eal_cleanup();
        return test_done();
}
