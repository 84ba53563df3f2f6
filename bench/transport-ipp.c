/* SPDX-License-Identifier: Apache-2.0 */
/* Instructions per packet, meant to run under callgrind (see bench/transport-ipp.sh):
 * the RX path (tr_poll: parse + demux + callback) and the TX path (tr_sendmmsg: next hop +
 * mbuf + header build + checksums) on a net_ring port whose rings this program feeds and
 * drains, the same two paths with no stack (the raw arm of transport-bench: rx_burst and
 * free; alloc, copy a pre-built frame, tx_burst), plus the pure parse+demux and build
 * functions alone. Each measured region is a function of its own so callgrind's
 * inclusive cost can be divided by the packet count. With --memif the same four data
 * paths run on a net_memif link (the link of transport-bench), its PMD's copies included:
 * the other end is this program exec'd as a peer (--memif-peer), which valgrind does not
 * follow, so it sends and drains at full speed while the measured side runs under
 * callgrind. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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


/* ---- --memif: the four data paths on a net_memif link ---- */

#define MEMIF_N 65536 /* datagrams per measured path */

static const uint8_t memif_mac[2][6] = { { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
                                         { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 } };

struct memif_side {
        struct tr_port *p;
        struct tr_queue *q;
        struct tr_endpoint *ep;
        uint16_t port_id;
        struct sockaddr_in dst;
};

/* EAL with one memif port (server: the measured side, 10.9.0.1; client: the peer,
 * 10.9.0.2); the server's socket exists once this returns. */
static int memif_eal(struct memif_side *s, const char *sock, bool server)
{
        static struct tr_eal_args ea;
        char args[512];
        const uint8_t *m = memif_mac[server ? 0 : 1];
        snprintf(args, sizeof(args),
                 "--no-huge --no-pci -m 256 --log-level=error --no-telemetry --file-prefix sl-tr-ipp-%d "
                 "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no,rsize=11,"
                 "mac=%02x:%02x:%02x:%02x:%02x:%02x",
                 (int)getpid(), server ? "server" : "client", sock, m[0], m[1], m[2], m[3], m[4], m[5]);
        if (tr_eal_args_split(args, strlen(args), "ipp", &ea) < 0 || tr_eal_init(&ea) < 0 ||
            tr_port_find("net_memif0", &s->port_id) < 0) {
                fprintf(stderr, "ipp: EAL init failed (%s)\n", args);
                return -1;
        }
        return 0;
}

/* The stack's port on it as transport-bench opens it, and an endpoint. */
static bool memif_no_udp_csum; /* --no-udp-csum: both ends' ports with no_udp_csum */
static unsigned memif_size = 32; /* --size N: the datagrams' payload (1..1408) */

static uint16_t memif_flen(void)
{
        return (uint16_t)(TR_UDP_HDRS + memif_size < 60 ? 60 : TR_UDP_HDRS + memif_size);
}

static int memif_open(struct memif_side *s, bool server)
{
        char err[256];
        struct in_addr me, peer;
        inet_pton(AF_INET, server ? "10.9.0.1" : "10.9.0.2", &me);
        inet_pton(AF_INET, server ? "10.9.0.2" : "10.9.0.1", &peer);
        struct tr_port_config cfg = { .port_id = s->port_id, .ipv4 = me.s_addr, .prefix_len = 24,
                                      .rx_ring = 1024, .tx_ring = 1024, .burst = BURST, .link_wait_ms = 10000,
                                      .no_udp_csum = memif_no_udp_csum };
        if (tr_port_open(&cfg, &s->p, err, sizeof(err)) < 0) {
                fprintf(stderr, "ipp: port: %s\n", err);
                return -1;
        }
        s->q = tr_port_queue(s->p, 0);
        struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(server ? 7101 : 7100) };
        s->dst = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(server ? 7100 : 7101), .sin_addr = peer };
        return tr_endpoint_open(s->p, &b, NULL, &s->ep);
}

/* What one side sends: a burst of the stack's datagrams (msgs, to the other side, from
 * payload) and the raw arm's frame to the other side with both checksums (tmpl). */
static void memif_frames(struct memif_side *s, bool server, struct tr_msg *msgs, const uint8_t *payload,
                         uint8_t *tmpl)
{
        for (int i = 0; i < BURST; i++)
                msgs[i] = (struct tr_msg){ .dst = &s->dst, .data = payload, .len = memif_size };
        struct tr_udp_hdr_args ha = { .dst_mac = memif_mac[server ? 1 : 0], .src_mac = memif_mac[server ? 0 : 1],
                                      .ttl = 64, .src_port = server ? 7101 : 7100, .dst_port = server ? 7100 : 7101,
                                      .ip_csum = true, .udp_csum = true };
        inet_pton(AF_INET, server ? "10.9.0.1" : "10.9.0.2", &ha.ip_src);
        inet_pton(AF_INET, server ? "10.9.0.2" : "10.9.0.1", &ha.ip_dst);
        tr_frame_build_udp(tmpl, memif_size, &ha);
}

/* Both ends: one datagram each way, which resolves both MACs (each side answers the
 * other's ARP while it polls). */
static int memif_hello(struct memif_side *s)
{
        static uint8_t payload[32];
        long want = delivered + 32;
        bool sent = false;
        for (long i = 0; i < 100000000 && (!sent || delivered < want); i++) {
                tr_poll(s->q, on_rx, NULL);
                if (!sent)
                        sent = tr_send(s->q, s->ep, &s->dst, payload, 32) == 1;
                if (i % 1000 == 999)
                        usleep(100);
        }
        return sent && delivered >= want ? 0 : -1;
}

static void drain_all(uint16_t port)
{
        struct rte_mbuf *pk[BURST];
        uint16_t n;
        for (uint16_t r = 0; r < 2; r++)
                while ((n = rte_eth_rx_burst(port, r, pk, BURST)) > 0)
                        rte_pktmbuf_free_bulk(pk, n);
}

/* The peer: commands from the measuring side on fd 0, one byte each, each answered 'k'
 * on fd 1 when done: 's' fill the ring with the stack's datagrams (until a burst does not
 * all go), 'r' fill it with the same frames raw, 'd' drain MEMIF_CHUNK frames, 'q' quit.
 * The measured side works in chunks of MEMIF_CHUNK, less than the ring holds, so that none
 * of its measured polls is empty and none of its bursts finds the ring full. */
#define MEMIF_CHUNK 1024
static int memif_peer(const char *sock)
{
        struct memif_side s = { 0 };
        char c;
        /* the server's socket first */
        if (read(0, &c, 1) != 1 || memif_eal(&s, sock, false) < 0 || memif_open(&s, false) < 0 ||
            memif_hello(&s) < 0)
                return 1;
        static uint8_t payload[2048];
        struct tr_msg msgs[BURST];
        uint8_t tmpl[2048] = { 0 };
        memif_frames(&s, false, msgs, payload, tmpl);
        struct rte_mempool *pool = rte_pktmbuf_pool_create("ipp-peer", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        while (pool && read(0, &c, 1) == 1 && c != 'q') {
                long done = 0;
                struct rte_mbuf *m[BURST];
                while (c == 'd' && done < MEMIF_CHUNK) {
                        uint16_t n = rte_eth_rx_burst(s.port_id, 0, m, BURST);
                        rte_pktmbuf_free_bulk(m, n);
                        done += n;
                }
                for (int k = BURST; (c == 's' || c == 'r') && k == BURST;) {
                        if (c == 's') {
                                k = tr_sendmmsg(s.q, s.ep, msgs, BURST);
                                continue;
                        }
                        if (rte_pktmbuf_alloc_bulk(pool, m, BURST) != 0)
                                return 1;
                        for (int i = 0; i < BURST; i++) {
                                memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), tmpl, memif_flen());
                                m[i]->data_len = m[i]->pkt_len = memif_flen();
                        }
                        k = rte_eth_tx_burst(s.port_id, 0, m, BURST);
                        if (k < BURST)
                                rte_pktmbuf_free_bulk(m + k, (unsigned)(BURST - k));
                }
                if (write(1, "k", 1) != 1)
                        return 1;
        }
        tr_endpoint_close(s.ep);
        tr_port_close(s.p);
        tr_eal_cleanup();
        return 0;
}

static int memif_cmd(int wfd, int rfd, char c)
{
        char a;
        return write(wfd, &c, 1) == 1 && (c == 'q' || c == 'g' || (read(rfd, &a, 1) == 1 && a == 'k')) ? 0 : -1;
}

/* The measuring side (memif server); prints the datagram counts and empty polls. */
static int memif_main(const char *self)
{
        char dir[] = "/tmp/sl-tr-ipp-XXXXXX", sock[300];
        if (!mkdtemp(dir))
                return 1;
        snprintf(sock, sizeof(sock), "%s/memif.sock", dir);
        int to[2], from[2];
        if (pipe(to) < 0 || pipe(from) < 0)
                return 1;
        pid_t pid = fork();
        if (pid == 0) {
                dup2(to[0], 0);
                dup2(from[1], 1);
                char size[16];
                snprintf(size, sizeof(size), "%u", memif_size);
                execl(self, self, "--memif-peer", sock, "--size", size, memif_no_udp_csum ? "--no-udp-csum" : NULL,
                      (char *)NULL);
                _exit(127);
        }
        close(to[0]);
        close(from[1]);
        struct memif_side s = { 0 };
        int rc = 1;
        if (memif_eal(&s, sock, true) < 0 || memif_cmd(to[1], from[0], 'g') < 0 || memif_open(&s, true) < 0 ||
            memif_hello(&s) < 0)
                goto out;
        struct tr_msg msgs[BURST];
        static uint8_t payload[2048];
        uint8_t tmpl[2048] = { 0 };
        memif_frames(&s, true, msgs, payload, tmpl);
        struct rte_mempool *raw_pool = rte_pktmbuf_pool_create("i-raw", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        long rx = 0, rx_empty = 0, raw_rx = 0, raw_empty = 0, tx = 0, tx_short = 0, raw_tx = 0, raw_short = 0;
        drain_all(s.port_id);
        delivered = 0;
        if (!raw_pool)
                goto out;
        /* RX: chunks of what the peer put in the ring (more than a chunk) */
        for (long chunk = 0; chunk < MEMIF_N / MEMIF_CHUNK; chunk++) {
                if (memif_cmd(to[1], from[0], 's') < 0)
                        goto out;
                for (long got = 0; got < MEMIF_CHUNK;) {
                        int n = ipp_rx(s.q);
                        got += n;
                        rx_empty += n == 0;
                }
                drain_all(s.port_id);
        }
        rx = delivered / (long)memif_size;
        for (long chunk = 0; chunk < MEMIF_N / MEMIF_CHUNK; chunk++) {
                if (memif_cmd(to[1], from[0], 'r') < 0)
                        goto out;
                for (long got = 0; got < MEMIF_CHUNK;) {
                        int n = ipp_raw_rx(s.port_id);
                        got += n;
                        raw_rx += n;
                        raw_empty += n == 0;
                }
                drain_all(s.port_id);
        }
        /* TX: a chunk into the empty ring, then the peer drains it */
        for (long chunk = 0; chunk < MEMIF_N / MEMIF_CHUNK; chunk++) {
                for (long sent = 0; sent < MEMIF_CHUNK;) {
                        int n = ipp_tx(s.q, s.ep, msgs);
                        sent += n;
                        tx_short += n < BURST;
                }
                tx += MEMIF_CHUNK;
                if (memif_cmd(to[1], from[0], 'd') < 0)
                        goto out;
        }
        for (long chunk = 0; chunk < MEMIF_N / MEMIF_CHUNK; chunk++) {
                for (long sent = 0; sent < MEMIF_CHUNK;) {
                        int n = ipp_raw_tx(s.port_id, raw_pool, tmpl, memif_flen());
                        sent += n;
                        raw_short += n < BURST;
                }
                raw_tx += MEMIF_CHUNK;
                if (memif_cmd(to[1], from[0], 'd') < 0)
                        goto out;
        }
        printf("memif%s, %u B: rx %ld (empty polls %ld) raw rx %ld (empty %ld) tx %ld (short bursts %ld) raw tx %ld "
               "(short %ld)\n", memif_no_udp_csum ? " (no_udp_csum)" : "", memif_size, rx, rx_empty, raw_rx, raw_empty,
               tx, tx_short, raw_tx, raw_short);
        rc = 0;
out:
        memif_cmd(to[1], from[0], 'q');
        waitpid(pid, NULL, 0);
        /* the client has gone: DPDK 22.11's memif server closes cleanly once the link is down */
        for (int i = 0; i < 300 && s.p && tr_port_link_up(s.p); i++)
                usleep(10000);
        tr_endpoint_close(s.ep);
        tr_port_close(s.p);
        tr_eal_cleanup();
        unlink(sock);
        rmdir(dir);
        return rc;
}

int main(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--no-udp-csum") == 0)
                        memif_no_udp_csum = true;
                else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
                        memif_size = (unsigned)strtoul(argv[++i], NULL, 10);
        }
        if (memif_size < 1 || memif_size > 1408) {
                fprintf(stderr, "--size: 1..1408\n");
                return 2;
        }
        if (argc > 2 && strcmp(argv[1], "--memif-peer") == 0)
                return memif_peer(argv[2]);
        if (argc > 1 && strcmp(argv[1], "--memif") == 0)
                return memif_main(argv[0]);
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
