/* SPDX-License-Identifier: Apache-2.0 */
/* On-demand benchmark of the DPDK transport against its floor and against the kernel:
 * three arms in one harness (same link, pinning and busy polling): "raw" (memif with no
 * stack: pre-built frames, echo by swapping addresses, TX allocating mbufs and copying a
 * template), "stack" (libspintransport over the same memif) and "kernel" (UDP on
 * loopback). Ping-pong RTT and one-way throughput, each arm alternated over several reps
 * in one run, every result stamped with its parameters, then medians and the ratios
 * stack/raw and stack/kernel. Also counts stalls, where they happened and context
 * switches, to find what a tail is made of. Not a test: it asserts nothing. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_version.h>

#include "sizing.h"
#include "transport.h"

#ifndef SPINLANE_BUILD_TYPE
#define SPINLANE_BUILD_TYPE "?"
#endif

#define MAX_SAMPLES 2000000
#define BURST 32
#define RINGS 1024
#define MEMIF_RSIZE 11
#define POOL_CACHE 256
#define STALL_LOG 64

enum arm_kind { ARM_RAW, ARM_STACK, ARM_KERNEL, ARM__MAX };
static const char *const arm_names[ARM__MAX] = { "raw", "stack", "kernel" };
enum idle { IDLE_SPIN, IDLE_YIELD };

/* ---- parameters: one set per run, stamped on every result ---- */
static struct {
        long warmup, samples;
        double seconds;
        int reps;
        bool huge, host_local, udp_csum, arms[ARM__MAX];
        unsigned queues;
        enum idle idle;
        long stall_ns;
        const char *only;
        long interleave; /* 0: each arm its own processes; B: raw and stack in blocks of B in one pair */
} P = { .warmup = 10000, .samples = 100000, .seconds = 2.0, .reps = 3, .host_local = true, .udp_csum = true,
        .arms = { true, true, true }, .queues = 1, .idle = IDLE_SPIN, .stall_ns = 5000, .only = "all" };
static char stamp[512];
static uint64_t tsc_hz; /* calibrated in main against CLOCK_MONOTONIC: the kernel arm has no EAL */
static char sockpath[256];

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
        cpu_set_t s;
        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        if (sched_setaffinity(0, sizeof(s), &s) < 0)
                perror("sched_setaffinity");
}

static uint32_t ip4(const char *s)
{
        struct in_addr a;
        inet_pton(AF_INET, s, &a);
        return a.s_addr;
}

static void tsc_calibrate(void)
{
        uint64_t t0 = now_ns(), c0 = rte_rdtsc();
        while (now_ns() - t0 < 50000000u)
                ;
        uint64_t t1 = now_ns(), c1 = rte_rdtsc();
        tsc_hz = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(t1 - t0));
}

static const uint8_t mac_server[6] = { 0x02, 0, 0, 0, 0, 0x01 }, mac_client[6] = { 0x02, 0, 0, 0, 0, 0x02 };

/* ---- the arms: open, poll a queue, send n copies of a datagram, echo, close ---- */
struct arm {
        enum arm_kind kind;
        bool server;
        /* raw and stack */
        uint16_t port_id;
        /* raw: its own pool and a pre-built frame to the peer */
        struct rte_mempool *pool;
        uint8_t tmpl[2048];
        uint16_t tmpl_len;
        /* stack */
        struct tr_port *port;
        struct tr_queue *q[2];
        struct tr_endpoint *ep;
        /* kernel */
        int fd;
        struct sockaddr_in dst;
        long got;   /* datagrams received; written by the polling thread only */
        long polls; /* poll calls on queue 0 (for the stack: tr_poll's own count) */
};

static void on_rx(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                  const struct sockaddr_in *src)
{
        struct arm *a = clientd;
        (void)ep_clientd;
        (void)data;
        (void)len;
        (void)src;
        __atomic_store_n(&a->got, a->got + 1, __ATOMIC_RELEASE);
}

static uint16_t frame_len(size_t payload)
{
        return (uint16_t)(TR_UDP_HDRS + payload < TR_ETH_MIN_FRAME ? TR_ETH_MIN_FRAME : TR_UDP_HDRS + payload);
}

/* The raw arm's frame: built once, with both checksums, as a peer's stack would send it. */
static void raw_template(struct arm *a, size_t payload)
{
        memset(a->tmpl, 0, sizeof(a->tmpl));
        struct tr_udp_hdr_args h = {
                .dst_mac = a->server ? mac_client : mac_server, .src_mac = a->server ? mac_server : mac_client,
                .ip_src = ip4(a->server ? "10.9.0.1" : "10.9.0.2"), .ip_dst = ip4(a->server ? "10.9.0.2" : "10.9.0.1"),
                .src_port = a->server ? 7101 : 7100, .dst_port = a->server ? 7100 : 7101, .ttl = 64,
                .ip_csum = true, .udp_csum = true,
        };
        (void)tr_frame_build_udp(a->tmpl, payload, &h);
        a->tmpl_len = frame_len(payload);
}

/* The raw arm's own pool, sized and cached as tr_port_open sizes the stack's. */
static int raw_pool(struct arm *a, uint16_t rx, uint16_t tx, char *err, size_t errlen)
{
        unsigned n = tr_pool_size((uint16_t)P.queues, rx, tx, BURST, POOL_CACHE, rte_lcore_count());
        a->pool = rte_pktmbuf_pool_create("bench-raw", n, POOL_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          rte_eth_dev_socket_id(a->port_id));
        if (!a->pool) {
                snprintf(err, errlen, "raw: no pool of %u", n);
                return -1;
        }
        return 0;
}

/* The raw port: what tr_port_open does for the device with nothing of the stack: same
 * rings, burst, pool size and cache, one queue pair per thread. */
static int raw_open(struct arm *a, char *err, size_t errlen)
{
        struct rte_eth_conf conf;
        struct rte_eth_dev_info info;
        uint16_t rx = RINGS, tx = RINGS;
        memset(&conf, 0, sizeof(conf));
        if (rte_eth_dev_info_get(a->port_id, &info) < 0 ||
            rte_eth_dev_configure(a->port_id, (uint16_t)P.queues, (uint16_t)P.queues, &conf) < 0 ||
            rte_eth_dev_adjust_nb_rx_tx_desc(a->port_id, &rx, &tx) < 0) {
                snprintf(err, errlen, "raw: cannot configure port %u", a->port_id);
                return -1;
        }
        if (raw_pool(a, rx, tx, err, errlen) < 0)
                return -1;
        for (uint16_t i = 0; i < P.queues; i++)
                if (rte_eth_rx_queue_setup(a->port_id, i, rx, (unsigned)rte_eth_dev_socket_id(a->port_id), NULL, a->pool) < 0 ||
                    rte_eth_tx_queue_setup(a->port_id, i, tx, (unsigned)rte_eth_dev_socket_id(a->port_id), NULL) < 0) {
                        snprintf(err, errlen, "raw: queue %u setup", i);
                        return -1;
                }
        if (rte_eth_dev_start(a->port_id) < 0) {
                snprintf(err, errlen, "raw: start");
                return -1;
        }
        struct rte_eth_link link = { 0 };
        for (int i = 0; i < 1000 && link.link_status != RTE_ETH_LINK_UP; i++) {
                rte_eth_link_get_nowait(a->port_id, &link);
                if (link.link_status != RTE_ETH_LINK_UP)
                        rte_delay_us_sleep(10000);
        }
        raw_template(a, 32);
        return link.link_status == RTE_ETH_LINK_UP ? 0 : -1;
}

static int arm_open(struct arm *a, enum arm_kind kind, bool server, int cpu)
{
        memset(a, 0, sizeof(*a));
        a->kind = kind;
        a->server = server;
        a->fd = -1;
        pin(cpu);
        a->dst = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(server ? 7100 : 7101) };
        if (kind == ARM_KERNEL) {
                struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(server ? 7101 : 7100),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                a->dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                a->fd = socket(AF_INET, SOCK_DGRAM, 0);
                int big = 8 << 20;
                setsockopt(a->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
                setsockopt(a->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
                return bind(a->fd, (struct sockaddr *)&me, sizeof(me));
        }
        a->dst.sin_addr.s_addr = ip4(server ? "10.9.0.2" : "10.9.0.1");
        char args[768], err[256] = "";
        static struct tr_eal_args ea;
        const uint8_t *m = server ? mac_server : mac_client;
        snprintf(args, sizeof(args),
                 "-l %d %s --no-pci -m 512 --file-prefix sl-tr-bench-%d --log-level=error "
                 "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no,rsize=%d,mac=%02x:%02x:%02x:%02x:%02x:%02x",
                 cpu, P.huge ? "--in-memory" : "--no-huge", (int)getpid(), server ? "server" : "client",
                 sockpath, MEMIF_RSIZE, m[0], m[1], m[2], m[3], m[4], m[5]);
        if (tr_eal_args_split(args, strlen(args), "bench", &ea) < 0 || tr_eal_init(&ea) < 0) {
                fprintf(stderr, "bench: EAL init failed (%s)\n", args);
                return -1;
        }
        if (tr_port_find("net_memif0", &a->port_id) < 0)
                return -1;
        if (kind == ARM_RAW) {
                if (raw_open(a, err, sizeof(err)) < 0) {
                        fprintf(stderr, "bench: %s\n", err);
                        return -1;
                }
                return 0;
        }
        struct tr_port_config cfg = { .port_id = a->port_id, .n_queues = (uint16_t)P.queues,
                                      .ipv4 = ip4(server ? "10.9.0.1" : "10.9.0.2"), .prefix_len = 24,
                                      .rx_ring = RINGS, .tx_ring = RINGS, .burst = BURST,
                                      .link_wait_ms = 10000, .no_host_local = !P.host_local,
                                      .no_udp_csum = !P.udp_csum };
        if (tr_port_open(&cfg, &a->port, err, sizeof(err)) < 0) {
                fprintf(stderr, "bench: %s\n", err);
                return -1;
        }
        for (unsigned i = 0; i < P.queues; i++)
                a->q[i] = tr_port_queue(a->port, i);
        /* interleaved: the raw arm runs on this same port's queue 0 between the stack's
         * blocks (same thread, the stack idle meanwhile), with its own pool and frame */
        if (P.interleave) {
                if (raw_pool(a, RINGS, RINGS, err, sizeof(err)) < 0) {
                        fprintf(stderr, "bench: %s\n", err);
                        return -1;
                }
                raw_template(a, 32);
        }
        struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(server ? 7101 : 7100) };
        return tr_endpoint_open(a->port, &b, NULL, &a->ep);
}

static void arm_close(struct arm *a)
{
        if (a->kind == ARM_KERNEL) {
                close(a->fd);
                return;
        }
        if (a->port) { /* the stack's port (interleaved: whichever arm ran last) */
                tr_endpoint_close(a->ep);
                tr_port_close(a->port);
                if (a->pool)
                        rte_mempool_free(a->pool);
        } else {
                rte_eth_dev_stop(a->port_id);
                rte_eth_dev_close(a->port_id);
                rte_mempool_free(a->pool);
        }
        tr_eal_cleanup();
}

/* Receive what queue qi has (the raw arm drains every RX queue from queue 0, as the
 * stack does); returns the datagrams received. */
static int arm_poll(struct arm *a, unsigned qi)
{
        if (qi == 0)
                a->polls++;
        if (a->kind == ARM_STACK)
                return tr_poll(a->q[qi], on_rx, a);
        if (a->kind == ARM_RAW) {
                struct rte_mbuf *pk[BURST];
                int n = 0;
                for (uint16_t r = 0; qi == 0 && r < P.queues; r++) {
                        uint16_t k = rte_eth_rx_burst(a->port_id, r, pk, BURST);
                        if (k) {
                                rte_pktmbuf_free_bulk(pk, k);
                                n += k;
                        }
                }
                if (n)
                        __atomic_store_n(&a->got, a->got + n, __ATOMIC_RELEASE);
                return n;
        }
        struct mmsghdr mm[BURST];
        struct iovec iov[BURST];
        static __thread uint8_t bufs[BURST][2048];
        struct sockaddr_in srcs[BURST];
        for (int i = 0; i < BURST; i++) {
                iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
                mm[i].msg_hdr = (struct msghdr){ .msg_name = &srcs[i], .msg_namelen = sizeof(srcs[i]),
                                                 .msg_iov = &iov[i], .msg_iovlen = 1 };
        }
        int n = recvmmsg(a->fd, mm, BURST, MSG_DONTWAIT, NULL);
        for (int i = 0; i < n; i++)
                on_rx(a, NULL, bufs[i], mm[i].msg_len, &srcs[i]);
        return n < 0 ? 0 : n;
}

/* Send n (1..BURST) datagrams of len bytes on queue qi; returns how many went. */
static int arm_send(struct arm *a, unsigned qi, const void *buf, size_t len, int n)
{
        if (a->kind == ARM_STACK) {
                if (n == 1) {
                        int r = tr_send(a->q[qi], a->ep, &a->dst, buf, len);
                        return r < 0 ? 0 : r;
                }
                struct tr_msg m[BURST];
                for (int i = 0; i < n; i++)
                        m[i] = (struct tr_msg){ .dst = &a->dst, .data = buf, .len = len };
                int r = tr_sendmmsg(a->q[qi], a->ep, m, (size_t)n);
                return r < 0 ? 0 : r;
        }
        if (a->kind == ARM_RAW) {
                struct rte_mbuf *m[BURST];
                if (rte_pktmbuf_alloc_bulk(a->pool, m, (unsigned)n) != 0)
                        return 0;
                for (int i = 0; i < n; i++) {
                        memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), a->tmpl, a->tmpl_len);
                        m[i]->data_len = a->tmpl_len;
                        m[i]->pkt_len = a->tmpl_len;
                }
                uint16_t sent = rte_eth_tx_burst(a->port_id, (uint16_t)qi, m, (uint16_t)n);
                if (sent < n)
                        rte_pktmbuf_free_bulk(m + sent, (unsigned)(n - sent));
                return sent;
        }
        if (n == 1) {
                ssize_t r = sendto(a->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&a->dst, sizeof(a->dst));
                return r < 0 ? 0 : 1;
        }
        struct mmsghdr mm[BURST];
        struct iovec iov = { (void *)buf, len };
        for (int i = 0; i < n; i++)
                mm[i].msg_hdr = (struct msghdr){ .msg_name = &a->dst, .msg_namelen = sizeof(a->dst),
                                                 .msg_iov = &iov, .msg_iovlen = 1 };
        int r = sendmmsg(a->fd, mm, (unsigned)n, MSG_DONTWAIT);
        return r < 0 ? 0 : r;
}

/* Send one datagram until it goes (ARP resolution on the first), polling meanwhile. */
static void send_blocking(struct arm *a, unsigned qi, const void *buf, size_t len)
{
        while (arm_send(a, qi, buf, len, 1) != 1)
                if (qi == 0)
                        arm_poll(a, 0);
}

/* Server, one thread: receive a burst and send each datagram back. The raw arm swaps the
 * addresses of the frames it got and returns the same mbufs; the others send anew. */
static int arm_echo(struct arm *a, const uint8_t *msg, size_t len)
{
        if (a->kind != ARM_RAW) {
                long before = a->got;
                arm_poll(a, 0);
                for (long i = before; i < a->got; i++)
                        send_blocking(a, 0, msg, len);
                return (int)(a->got - before);
        }
        struct rte_mbuf *pk[BURST];
        a->polls++;
        uint16_t n = rte_eth_rx_burst(a->port_id, 0, pk, BURST);
        for (uint16_t i = 0; i < n; i++) {
                uint8_t *d = rte_pktmbuf_mtod(pk[i], uint8_t *), t[6];
                uint32_t ip;
                uint16_t port;
                memcpy(t, d, 6);
                memcpy(d, d + 6, 6);
                memcpy(d + 6, t, 6);
                memcpy(&ip, d + 26, 4);
                memcpy(d + 26, d + 30, 4);
                memcpy(d + 30, &ip, 4);
                memcpy(&port, d + 34, 2);
                memcpy(d + 34, d + 36, 2);
                memcpy(d + 36, &port, 2);
        }
        uint16_t sent = 0;
        while (sent < n)
                sent += rte_eth_tx_burst(a->port_id, 0, pk + sent, (uint16_t)(n - sent));
        a->got += n;
        return n;
}

static bool link_up(struct arm *a)
{
        struct rte_eth_link link;
        return rte_eth_link_get_nowait(a->port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

/* ---- a histogram of durations: 10 ns buckets up to 20 us, then one overflow bucket ---- */
#define HB 2048
/* The server, done: stop polling and wait for the client to go before closing. DPDK
 * 22.11's memif unmaps its rings on a peer's disconnect from the interrupt thread, racing
 * a concurrent rx_burst; it reports the link down at the start of that disconnect and
 * frees the rings at the end, so closing meanwhile frees them twice ("EAL: Error: Invalid
 * memory"): link down, then 100 ms, then close. */
static void wait_peer_gone(struct arm *a)
{
        if (a->kind == ARM_KERNEL)
                return;
        uint64_t until = now_ns() + 3000000000ull;
        while (link_up(a) && now_ns() < until)
                usleep(1000);
        usleep(100000);
}

struct hist {
        uint32_t b[HB];
        uint64_t max_ns;
        long n;
};

static void hist_add(struct hist *h, uint64_t ns)
{
        uint64_t i = ns / 10;
        h->b[i < HB - 1 ? i : HB - 1]++;
        h->max_ns = ns > h->max_ns ? ns : h->max_ns;
        h->n++;
}

static double hist_q(const struct hist *h, double q)
{
        long want = (long)((double)h->n * q), seen = 0;
        for (int i = 0; i < HB; i++) {
                seen += h->b[i];
                if (seen > want)
                        return i == HB - 1 ? (double)h->max_ns : i * 10.0 + 5;
        }
        return (double)h->max_ns;
}

/* ---- results ---- */
enum test { T_PINGPONG, T_ONEWAY, T_PP_IL, T_OW_IL };
struct result {
        int arm, test, rep;
        bool server;
        size_t size;
        long n, want;
        double p50, p99, p999, max, mean; /* us */
        double rate, gbps;
        long recvd;
        /* what a tail is made of */
        long stalls;           /* client: RTTs above the stall threshold */
        long stalls_in_send;   /* of them, those whose send alone took over half the threshold */
        long gaps;             /* loop iterations (between two polls) above the threshold */
        long calls;            /* single echo/poll calls above the threshold */
        long calls_slow;       /* of them, on a poll the stack's slow path runs (every 16th) */
        double clock_max_us;   /* the slowest clock_gettime call */
        double busy_ns;        /* median duration of a call that did work: server echo (receive +
                                  send back), client send; client_rx_ns the poll that received */
        double client_rx_ns;
        long nivcsw, nvcsw, minflt;
        long first_stall[8];   /* client: sample index of the first stalls */
        /* polls that received nothing, on every 16th poll (the stack's slow path) or
         * another: p50, p99, p99.9, max (ns) and count */
        double empty_q[2][4];
        long empty_n[2];
        /* interleaved runs: the median over adjacent (stack, raw) block pairs of the
         * stack's figure over raw's (p50 and p99 for ping-pong, the rate for one-way), and
         * how many pairs */
        double pair_ratio[2];
        long pairs;
};

static void empty_polls(struct result *r, const struct hist *h)
{
        for (int k = 0; k < 2; k++) {
                r->empty_q[k][0] = hist_q(&h[k], 0.5);
                r->empty_q[k][1] = hist_q(&h[k], 0.99);
                r->empty_q[k][2] = hist_q(&h[k], 0.999);
                r->empty_q[k][3] = (double)h[k].max_ns;
                r->empty_n[k] = h[k].n;
        }
}

static int cmp_u64(const void *x, const void *y)
{
        uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
        return a < b ? -1 : a > b;
}

static void usage_begin(struct rusage *ru)
{
        getrusage(RUSAGE_THREAD, ru);
}

static void usage_end(const struct rusage *ru0, struct result *r)
{
        struct rusage ru;
        getrusage(RUSAGE_THREAD, &ru);
        r->nivcsw = ru.ru_nivcsw - ru0->ru_nivcsw;
        r->nvcsw = ru.ru_nvcsw - ru0->ru_nvcsw;
        r->minflt = ru.ru_minflt - ru0->ru_minflt;
}

static inline void idle_once(void)
{
        if (P.idle == IDLE_YIELD)
                sched_yield();
}

/* ---- two threads per side (P.queues == 2): queue 0 receives, queue 1 sends ---- */
struct duo {
        struct arm *a;
        volatile bool stop;
        bool registered;
        int cpu;
};

static void *rx_thread(void *arg)
{
        struct duo *d = arg;
        pin(d->cpu);
        while (!d->stop)
                if (arm_poll(d->a, 0) == 0)
                        idle_once();
        return NULL;
}

static long got_of(struct arm *a)
{
        return __atomic_load_n(&a->got, __ATOMIC_ACQUIRE);
}

/* ---- ping-pong: the server echoes, the client measures ---- */
static int pingpong_server(struct arm *a, int wfd)
{
        uint8_t msg[32] = { 0 };
        long total = P.warmup + P.samples, echoed = 0;
        struct result r = { .server = true, .arm = a->kind, .test = T_PINGPONG, .size = 32 };
        struct rusage ru0;
        uint64_t idle_since = now_ns(), thr = (uint64_t)P.stall_ns * tsc_hz / 1000000000u;
        uint64_t last = rte_rdtsc();
        bool measuring = false;
        struct duo d = { .a = a, .cpu = -1 };
        pthread_t th;
        uint64_t *busy = calloc((size_t)P.samples, sizeof(uint64_t));
        long nbusy = 0;
        static struct hist empty[2];
        if (!busy)
                return 1;
        if (P.queues == 2) {
                /* the adapter's shape: this thread sends on queue 1 what queue 0's thread got */
                d.cpu = sched_getcpu();
                if (pthread_create(&th, NULL, rx_thread, &d) != 0)
                        return 1;
                if (a->kind != ARM_KERNEL)
                        rte_thread_register();
        }
        while (echoed < total && now_ns() - idle_since < 5000000000ull) {
                if (!measuring && echoed >= P.warmup) {
                        measuring = true;
                        usage_begin(&ru0);
                }
                uint64_t t0 = rte_rdtsc();
                int n;
                if (P.queues == 2) {
                        long g = got_of(a);
                        n = 0;
                        while (echoed + n < g) {
                                send_blocking(a, 1, msg, sizeof(msg));
                                n++;
                        }
                        if (!n)
                                idle_once();
                } else
                        n = arm_echo(a, msg, sizeof(msg));
                uint64_t t1 = rte_rdtsc();
                if (measuring && n == 0 && P.queues == 1)
                        hist_add(&empty[(a->polls - 1) % 16 == 0], (t1 - t0) * 1000000000u / tsc_hz);
                if (measuring) {
                        if (t1 - t0 > thr) {
                                r.calls++;
                                r.calls_slow += (a->polls - 1) % 16 == 0;
                        }
                        if (t0 - last > thr)
                                r.gaps++;
                        if (n == 1 && nbusy < P.samples)
                                busy[nbusy++] = t1 - t0;
                }
                last = t1;
                echoed += n;
                if (n)
                        idle_since = now_ns();
        }
        if (measuring)
                usage_end(&ru0, &r);
        if (P.queues == 2) {
                d.stop = true;
                pthread_join(th, NULL);
                if (a->kind != ARM_KERNEL)
                        rte_thread_unregister();
        }
        r.recvd = echoed;
        qsort(busy, (size_t)nbusy, sizeof(uint64_t), cmp_u64);
        r.busy_ns = nbusy ? (double)busy[nbusy / 2] * 1e9 / (double)tsc_hz : 0;
        free(busy);
        empty_polls(&r, empty);
        int rc = write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
        wait_peer_gone(a);
        return rc;
}

/* Sort the round trips (ns) and fill r's count, mean and percentiles (us). */
static void rtt_fill(struct result *r, uint64_t *rtt, long n)
{
        qsort(rtt, (size_t)n, sizeof(uint64_t), cmp_u64);
        r->n = n;
        if (!n)
                return;
        double sum = 0;
        for (long i = 0; i < n; i++)
                sum += (double)rtt[i];
        r->mean = sum / (double)n / 1000;
        r->p50 = (double)rtt[n / 2] / 1000;
        r->p99 = (double)rtt[(long)((double)n * 0.99)] / 1000;
        r->p999 = (double)rtt[(long)((double)n * 0.999)] / 1000;
        r->max = (double)rtt[n - 1] / 1000;
}

static int pingpong_client(struct arm *a, int wfd, int rep)
{
        uint8_t msg[32] = { 0 };
        uint64_t *rtt = calloc((size_t)P.samples, sizeof(uint64_t));
        uint64_t *tsend = calloc((size_t)P.samples, sizeof(uint64_t)), *trecv = calloc((size_t)P.samples, sizeof(uint64_t));
        struct result r = { .arm = a->kind, .test = T_PINGPONG, .rep = rep, .size = 32, .want = P.samples };
        long total = P.warmup + P.samples, n = 0;
        uint64_t hz = tsc_hz, thr = (uint64_t)P.stall_ns * hz / 1000000000u, clock_max = 0;
        struct rusage ru0;
        struct duo d = { .a = a, .cpu = -1 };
        pthread_t th;
        unsigned sq = P.queues == 2 ? 1 : 0;
        static struct hist empty[2];
        if (!rtt || !tsend || !trecv)
                return 1;
        if (P.queues == 2) {
                d.cpu = sched_getcpu();
                if (pthread_create(&th, NULL, rx_thread, &d) != 0)
                        return 1;
                if (a->kind != ARM_KERNEL)
                        rte_thread_register();
        }
        for (long i = 0; i < total; i++) {
                if (i == P.warmup)
                        usage_begin(&ru0);
                long want = got_of(a) + 1;
                uint64_t c0 = rte_rdtsc();
                uint64_t t0 = now_ns(), deadline = t0 + 1000000000ull;
                uint64_t c1 = rte_rdtsc();
                send_blocking(a, sq, msg, sizeof(msg));
                uint64_t sent_at = rte_rdtsc(), last = sent_at, gap = 0, p0 = sent_at;
                while (got_of(a) < want && now_ns() < deadline) {
                        p0 = rte_rdtsc();
                        if (sq == 0)
                                arm_poll(a, 0);
                        else
                                idle_once();
                        uint64_t c = rte_rdtsc();
                        if (c - last > gap)
                                gap = c - last;
                        if (i >= P.warmup && sq == 0 && got_of(a) < want)
                                hist_add(&empty[(a->polls - 1) % 16 == 0], (c - p0) * 1000000000u / hz);
                        if (i >= P.warmup && c - p0 > thr) {
                                r.calls++;
                                r.calls_slow += (a->polls - 1) % 16 == 0;
                        }
                        last = c;
                }
                uint64_t t1 = now_ns();
                if (got_of(a) < want)
                        break; /* lost: stop, the shortfall is reported */
                if (c1 - c0 > clock_max)
                        clock_max = c1 - c0;
                if (i < P.warmup)
                        continue;
                rtt[n] = t1 - t0;
                tsend[n] = sent_at - c1;
                trecv[n] = last - p0;
                if (rtt[n] > (uint64_t)P.stall_ns) {
                        if (r.stalls < 8)
                                r.first_stall[r.stalls] = n;
                        r.stalls++;
                        r.stalls_in_send += sent_at - c1 > thr / 2;
                }
                r.gaps += gap > thr;
                n++;
        }
        if (n)
                usage_end(&ru0, &r);
        if (P.queues == 2) {
                d.stop = true;
                pthread_join(th, NULL);
                if (a->kind != ARM_KERNEL)
                        rte_thread_unregister();
        }
        qsort(tsend, (size_t)n, sizeof(uint64_t), cmp_u64);
        qsort(trecv, (size_t)n, sizeof(uint64_t), cmp_u64);
        r.busy_ns = n ? (double)tsend[n / 2] * 1e9 / (double)hz : 0;
        r.client_rx_ns = n ? (double)trecv[n / 2] * 1e9 / (double)hz : 0;
        free(tsend);
        free(trecv);
        empty_polls(&r, empty);
        r.clock_max_us = (double)clock_max * 1e6 / (double)hz;
        rtt_fill(&r, rtt, n);
        free(rtt);
        return write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
}

/* ---- one-way throughput: the client sends bursts of 32, the server counts ---- */
static int oneway_server(struct arm *a, size_t size, int wfd, int rep)
{
        struct result r = { .server = true, .arm = a->kind, .test = T_ONEWAY, .size = size, .rep = rep };
        struct rusage ru0;
        while (a->got == 0)
                arm_poll(a, 0);
        long start_n = a->got;
        usage_begin(&ru0);
        uint64_t t0 = now_ns(), end = t0 + (uint64_t)(P.seconds * 1e9), t1;
        /* read the clock every 64 polls: it costs more than an empty poll */
        do {
                for (int i = 0; i < 64; i++)
                        arm_poll(a, 0);
        } while ((t1 = now_ns()) < end);
        usage_end(&ru0, &r);
        double secs = (double)(t1 - t0) / 1e9;
        r.recvd = a->got - start_n;
        r.rate = (double)r.recvd / secs;
        r.gbps = r.rate * (double)size * 8 / 1e9;
        if (a->kind == ARM_RAW)
                raw_template(a, 4);
        send_blocking(a, 0, "stop", 4);
        if (write(wfd, &r, sizeof(r)) != sizeof(r))
                return 1;
        wait_peer_gone(a);
        return 0;
}

static int oneway_client(struct arm *a, size_t size, int wfd)
{
        static uint8_t msg[2048];
        struct result r = { .arm = a->kind, .test = T_ONEWAY, .size = size };
        unsigned sq = P.queues == 2 ? 1 : 0;
        struct duo d = { .a = a, .cpu = -1 };
        pthread_t th;
        if (a->kind == ARM_RAW)
                raw_template(a, size);
        send_blocking(a, 0, msg, size); /* resolves the next hop */
        if (P.queues == 2) {
                d.cpu = sched_getcpu();
                P.idle = IDLE_YIELD; /* the receiving thread only answers ARP and sees the stop */
                if (pthread_create(&th, NULL, rx_thread, &d) != 0)
                        return 1;
                if (a->kind != ARM_KERNEL)
                        rte_thread_register();
        }
        long sent = 1;
        while (got_of(a) == 0) {
                int k = arm_send(a, sq, msg, size, BURST);
                sent += k;
                /* look for the stop every 1024 datagrams, and whenever the ring is full (the
                 * server stops reading once it has sent the stop) */
                if (sq == 0 && (k < BURST || (sent & 1023) < BURST))
                        arm_poll(a, 0);
        }
        if (P.queues == 2) {
                d.stop = true;
                pthread_join(th, NULL);
                if (a->kind != ARM_KERNEL)
                        rte_thread_unregister();
        }
        r.recvd = sent;
        return write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
}

/* ---- interleaved: raw and stack alternated in blocks in one process pair ----
 * Both arms then share the processes, the memif region, the pinning and whatever the
 * host and the neighbours do during the run (FACTS.md §6: the machine's modes and noise
 * move at a scale of reps, not of a block). Blocks alternate stack, raw, stack, ...; the
 * ratios are taken over adjacent pairs. */
#define IL_MAX_BLOCKS 4096

static double median(double *v, int n)
{
        for (int i = 1; i < n; i++)
                for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
                        double t = v[k];
                        v[k] = v[k - 1];
                        v[k - 1] = t;
                }
        return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

static enum arm_kind il_kind(long block)
{
        return block % 2 ? ARM_RAW : ARM_STACK; /* the stack first: it resolves the peer's MAC */
}

/* Ping-pong: the round trip count decides the block on both sides (one datagram in
 * flight and none lost on memif, so they agree). Whole warm-up blocks, then 2 * nb
 * measured blocks; each block's first tenth is its own warm-up, not kept. */
static long il_pp_blocks(long *ret_warm)
{
        long b = P.interleave, keep = b - b / 10;
        long nb = (P.samples + keep - 1) / keep;
        *ret_warm = 2 * ((P.warmup + 2 * b - 1) / (2 * b));
        return nb;
}

static int il_pp_server(struct arm *a)
{
        uint8_t msg[32] = { 0 };
        long warm, nb = il_pp_blocks(&warm), total = (warm + 2 * nb) * P.interleave, echoed = 0;
        uint64_t idle_since = now_ns();
        while (echoed < total && now_ns() - idle_since < 5000000000ull) {
                a->kind = il_kind(echoed / P.interleave);
                if (arm_echo(a, msg, sizeof(msg)))
                        idle_since = now_ns();
                echoed = a->got;
        }
        wait_peer_gone(a);
        return echoed == total ? 0 : 1;
}

static int il_pp_client(struct arm *a, int wfd, int rep)
{
        uint8_t msg[32] = { 0 };
        long b = P.interleave, skip = b / 10, warm, nb = il_pp_blocks(&warm);
        long cap = nb * (b - skip), n[2] = { 0, 0 };
        uint64_t *rtt[2] = { calloc((size_t)cap, sizeof(uint64_t)), calloc((size_t)cap, sizeof(uint64_t)) };
        uint64_t *blk = calloc((size_t)b, sizeof(uint64_t));
        double *q[2][2]; /* [p50|p99][raw|stack] per measured block */
        for (int f = 0; f < 2; f++)
                for (int k = 0; k < 2; k++)
                        q[f][k] = calloc((size_t)nb, sizeof(double));
        struct result r[2] = { { .arm = ARM_RAW, .test = T_PINGPONG, .rep = rep, .size = 32, .want = cap },
                               { .arm = ARM_STACK, .test = T_PINGPONG, .rep = rep, .size = 32, .want = cap } };
        struct rusage ru0;
        int rc = 1;
        if (!rtt[0] || !rtt[1] || !blk || !q[0][0] || !q[0][1] || !q[1][0] || !q[1][1])
                goto out;
        usage_begin(&ru0);
        for (long j = 0; j < warm + 2 * nb; j++) {
                a->kind = il_kind(j);
                int k = a->kind == ARM_RAW ? 0 : 1;
                long nblk = 0;
                for (long i = 0; i < b; i++) {
                        long want = got_of(a) + 1;
                        uint64_t t0 = now_ns(), deadline = t0 + 1000000000ull;
                        send_blocking(a, 0, msg, sizeof(msg));
                        while (got_of(a) < want && now_ns() < deadline)
                                arm_poll(a, 0);
                        uint64_t t1 = now_ns();
                        if (got_of(a) < want)
                                goto lost;
                        if (j >= warm && i >= skip)
                                blk[nblk++] = t1 - t0;
                }
                if (j < warm)
                        continue;
                memcpy(rtt[k] + n[k], blk, (size_t)nblk * sizeof(uint64_t));
                n[k] += nblk;
                qsort(blk, (size_t)nblk, sizeof(uint64_t), cmp_u64);
                q[0][k][(j - warm) / 2] = (double)blk[nblk / 2];
                q[1][k][(j - warm) / 2] = (double)blk[(long)((double)nblk * 0.99)];
        }
lost:
        usage_end(&ru0, &r[1]);
        r[0].nivcsw = r[1].nivcsw;
        long pairs = n[0] < n[1] ? n[0] / (b - skip) : n[1] / (b - skip);
        for (int f = 0; f < 2; f++) {
                for (long i = 0; i < pairs; i++)
                        q[f][1][i] /= q[f][0][i];
                r[1].pair_ratio[f] = median(q[f][1], (int)pairs);
        }
        r[1].pairs = pairs;
        for (int k = 0; k < 2; k++)
                rtt_fill(&r[k], rtt[k], n[k]);
        rc = write(wfd, r, sizeof(r)) == sizeof(r) ? 0 : 1;
out:
        for (int k = 0; k < 2; k++) {
                free(rtt[k]);
                for (int f = 0; f < 2; f++)
                        free(q[f][k]);
        }
        free(blk);
        return rc;
}

/* One-way: the client sends for a block's time, then asks the server to switch; the
 * server drains what the old arm sent (memif's tx_burst has put it in the ring when it
 * returns, so an empty poll means all of it was read), counts it to that block and
 * answers. A block's rate is the server's count over the client's sending time. */
struct il_shared {
        uint32_t phase, ack;               /* the block the client asks for / the server is in */
        uint64_t dur_ns[IL_MAX_BLOCKS];    /* client: time spent sending in block j */
        long count[IL_MAX_BLOCKS];         /* server: datagrams of block j received */
};
static struct il_shared *SH;

#define IL_OW_BLOCK_NS 20000000ull /* 20 ms */
#define IL_OW_WARM 2               /* one pair of blocks, not kept */

static long il_ow_blocks(void)
{
        long nb = (long)(P.seconds * 1e9 / (double)IL_OW_BLOCK_NS);
        if (nb < 1)
                nb = 1;
        if (2 * nb + IL_OW_WARM > IL_MAX_BLOCKS)
                nb = (IL_MAX_BLOCKS - IL_OW_WARM) / 2;
        return nb;
}

static void il_ow_drain(struct arm *a)
{
        while (arm_poll(a, 0) > 0)
                ;
}

static int il_ow_server(struct arm *a, size_t size, int wfd, int rep)
{
        long nblocks = 2 * il_ow_blocks() + IL_OW_WARM;
        struct result r = { .server = true, .arm = ARM_STACK, .test = T_ONEWAY, .size = size, .rep = rep };
        uint32_t cur = 0; /* block cur+1 is being received; 0: none yet */
        uint64_t idle_since = now_ns();
        struct rusage ru0;
        usage_begin(&ru0);
        a->kind = il_kind(0);
        for (;;) {
                for (int i = 0; i < 64; i++)
                        arm_poll(a, 0);
                uint32_t ph = __atomic_load_n(&SH->phase, __ATOMIC_ACQUIRE);
                if (ph == cur) {
                        if (now_ns() - idle_since > 5000000000ull)
                                return 1;
                        continue;
                }
                il_ow_drain(a); /* the old block's last datagrams, with the old arm */
                if (cur)
                        SH->count[cur - 1] = a->got;
                a->got = 0;
                cur = ph;
                idle_since = now_ns();
                if ((long)ph > nblocks)
                        break; /* the client is done */
                a->kind = il_kind((long)ph - 1);
                __atomic_store_n(&SH->ack, ph, __ATOMIC_RELEASE);
        }
        usage_end(&ru0, &r);
        __atomic_store_n(&SH->ack, cur, __ATOMIC_RELEASE);
        double rate[2][IL_MAX_BLOCKS / 2];
        long n = 0;
        for (long j = IL_OW_WARM; j + 1 < nblocks; j += 2, n++) {
                rate[1][n] = (double)SH->count[j] / ((double)SH->dur_ns[j] / 1e9);
                rate[0][n] = (double)SH->count[j + 1] / ((double)SH->dur_ns[j + 1] / 1e9);
        }
        double ratio_v[IL_MAX_BLOCKS / 2];
        for (long i = 0; i < n; i++)
                ratio_v[i] = rate[1][i] / rate[0][i];
        r.pair_ratio[0] = median(ratio_v, (int)n);
        r.pairs = n;
        struct result out[2] = { r, r };
        out[0].arm = ARM_RAW;
        out[0].rate = median(rate[0], (int)n);
        out[1].rate = median(rate[1], (int)n);
        for (int k = 0; k < 2; k++)
                out[k].gbps = out[k].rate * (double)size * 8 / 1e9;
        int rc = write(wfd, out, sizeof(out)) == sizeof(out) ? 0 : 1;
        wait_peer_gone(a);
        return rc;
}

static int il_ow_client(struct arm *a, size_t size)
{
        static uint8_t msg[2048];
        long nblocks = 2 * il_ow_blocks() + IL_OW_WARM;
        a->kind = ARM_STACK;
        send_blocking(a, 0, msg, size); /* resolves the next hop; counted to no block */
        for (uint32_t j = 1; j <= (uint32_t)nblocks + 1; j++) {
                __atomic_store_n(&SH->phase, j, __ATOMIC_RELEASE);
                uint64_t until = now_ns() + 5000000000ull;
                while (__atomic_load_n(&SH->ack, __ATOMIC_ACQUIRE) != j)
                        if (now_ns() > until)
                                return 1;
                if (j > (uint32_t)nblocks)
                        break;
                a->kind = il_kind((long)j - 1);
                if (a->kind == ARM_RAW)
                        raw_template(a, size);
                uint64_t t0 = now_ns(), t1;
                do {
                        for (int i = 0; i < 64; i++)
                                arm_send(a, 0, msg, size, BURST);
                } while ((t1 = now_ns()) - t0 < IL_OW_BLOCK_NS);
                SH->dur_ns[j - 1] = t1 - t0;
        }
        return 0;
}

/* Run server and client in two processes (server on CPU 1, client on CPU 0). */
static int run_pair(enum test t, enum arm_kind kind, size_t size, int rep, struct result *res, int nres)
{
        int pfd[2];
        char dir[] = "/tmp/sl-tr-bench-XXXXXX";
        if (pipe(pfd) < 0 || !mkdtemp(dir))
                return -1;
        snprintf(sockpath, sizeof(sockpath), "%s/memif.sock", dir);
        if (t == T_OW_IL) {
                SH = mmap(NULL, sizeof(*SH), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                if (SH == MAP_FAILED)
                        return -1;
        }
        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        close(pfd[0]);
                        bool server = i == 0;
                        struct arm a;
                        if (arm_open(&a, kind, server, server ? 1 : 0) < 0)
                                _exit(1);
                        int rc;
                        if (t == T_PINGPONG)
                                rc = server ? pingpong_server(&a, pfd[1]) : pingpong_client(&a, pfd[1], rep);
                        else if (t == T_ONEWAY)
                                rc = server ? oneway_server(&a, size, pfd[1], rep) : oneway_client(&a, size, pfd[1]);
                        else if (t == T_PP_IL)
                                rc = server ? il_pp_server(&a) : il_pp_client(&a, pfd[1], rep);
                        else
                                rc = server ? il_ow_server(&a, size, pfd[1], rep) : il_ow_client(&a, size);
                        arm_close(&a);
                        _exit(rc);
                }
                if (i == 0)
                        usleep(300000);
        }
        close(pfd[1]);
        int n = 0;
        while (n < nres && read(pfd[0], &res[n], sizeof(res[n])) == sizeof(res[n]))
                n++;
        close(pfd[0]);
        for (int i = 0; i < 2; i++)
                waitpid(kids[i], NULL, 0);
        unlink(sockpath);
        rmdir(dir);
        if (t == T_OW_IL)
                munmap(SH, sizeof(*SH));
        return n;
}

/* ---- summary: medians of the reps ---- */
#define MAX_REPS 15
static double range_lo(const double *v, int n)
{
        double m = n ? v[0] : 0;
        for (int i = 1; i < n; i++)
                m = v[i] < m ? v[i] : m;
        return m;
}

static double range_hi(const double *v, int n)
{
        double m = n ? v[0] : 0;
        for (int i = 1; i < n; i++)
                m = v[i] > m ? v[i] : m;
        return m;
}

struct cell {
        double v[MAX_REPS];
        int n;
};

static void cell_add(struct cell *c, double v)
{
        if (c->n < MAX_REPS)
                c->v[c->n++] = v;
}

static double cell_median(const struct cell *c)
{
        double t[MAX_REPS];
        memcpy(t, c->v, sizeof(t));
        return median(t, c->n);
}

static void print_cell(const struct cell *c, const char *fmt)
{
        char a[32], b[32], m[32];
        if (!c->n) {
                printf(" %19s", "-");
                return;
        }
        snprintf(m, sizeof(m), fmt, cell_median(c));
        snprintf(a, sizeof(a), fmt, range_lo(c->v, c->n));
        snprintf(b, sizeof(b), fmt, range_hi(c->v, c->n));
        char s[128];
        snprintf(s, sizeof(s), "%s (%s-%s)", m, a, b);
        printf(" %19s", s);
}

static double ratio(const struct cell *x, const struct cell *y)
{
        double d = cell_median(y);
        return x->n && y->n && d > 0 ? cell_median(x) / d : 0;
}

/* Interleaved ping-pong: one process pair, both arms; prints each arm's line and adds
 * the rep's figures and its pair ratios (p50 into pr[0], p99 into pr[1]). */
static void il_pp_print(int rep, struct cell pp[ARM__MAX][5], struct cell pr[2])
{
        struct result res[2];
        int n = run_pair(T_PP_IL, ARM_STACK, 32, rep, res, 2);
        if (n != 2 || res[0].n == 0 || res[1].n == 0) {
                printf("pingpong arm=raw+stack rep=%d/%d FAILED to run [%s]\n", rep, P.reps, stamp);
                return;
        }
        for (int i = 0; i < 2; i++) {
                const struct result *c = &res[i];
                printf("pingpong arm=%-6s rep=%d/%d n=%ld/%ld p50=%.2f p99=%.2f p99.9=%.2f max=%.1f mean=%.2f us",
                       arm_names[c->arm], rep, P.reps, c->n, c->want, c->p50, c->p99, c->p999, c->max, c->mean);
                if (c->arm == ARM_STACK)
                        printf(" | stack/raw over %ld block pairs: p50 %.3f p99 %.3f (median) | ctxsw inv client %ld",
                               c->pairs, c->pair_ratio[0], c->pair_ratio[1], c->nivcsw);
                printf(" [%s]\n", stamp);
                double v[5] = { c->p50, c->p99, c->p999, c->max, c->mean };
                for (int f = 0; f < 5; f++)
                        cell_add(&pp[c->arm][f], v[f]);
        }
        cell_add(&pr[0], res[1].pair_ratio[0]);
        cell_add(&pr[1], res[1].pair_ratio[1]);
        fflush(stdout);
}

/* Interleaved one-way of one size: the server's rates per arm (medians over blocks). */
static void il_ow_print(int rep, size_t size, struct cell ow[ARM__MAX][2], int s, struct cell *pr)
{
        struct result res[2];
        int n = run_pair(T_OW_IL, ARM_STACK, size, rep, res, 2);
        if (n != 2 || res[0].pairs == 0) {
                printf("oneway arm=raw+stack size=%zu rep=%d/%d FAILED to run [%s]\n", size, rep, P.reps, stamp);
                return;
        }
        for (int i = 0; i < 2; i++) {
                const struct result *x = &res[i];
                printf("oneway arm=%-6s size=%zu rep=%d/%d msgs/s=%.0f Gbit/s=%.2f (median of %ld blocks of 20 ms)",
                       arm_names[x->arm], size, rep, P.reps, x->rate, x->gbps, x->pairs);
                if (x->arm == ARM_STACK)
                        printf(" | stack/raw over %ld block pairs: %.3f (median) | ctxsw inv server %ld", x->pairs,
                               x->pair_ratio[0], x->nivcsw);
                printf(" [%s]\n", stamp);
                cell_add(&ow[x->arm][s], x->rate / 1e6);
        }
        cell_add(pr, res[1].pair_ratio[0]);
        fflush(stdout);
}

static void parse_arms(const char *s)
{
        for (int k = 0; k < ARM__MAX; k++)
                P.arms[k] = strstr(s, arm_names[k]) != NULL;
}

int main(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *v = i + 1 < argc ? argv[i + 1] : "";
                if (!strcmp(argv[i], "--samples"))
                        P.samples = atol(v), i++;
                else if (!strcmp(argv[i], "--warmup"))
                        P.warmup = atol(v), i++;
                else if (!strcmp(argv[i], "--seconds"))
                        P.seconds = atof(v), i++;
                else if (!strcmp(argv[i], "--reps"))
                        P.reps = atoi(v), i++;
                else if (!strcmp(argv[i], "--only"))
                        P.only = v, i++;
                else if (!strcmp(argv[i], "--arms"))
                        parse_arms(v), i++;
                else if (!strcmp(argv[i], "--queues"))
                        P.queues = (unsigned)atoi(v), i++;
                else if (!strcmp(argv[i], "--stall-us"))
                        P.stall_ns = (long)(atof(v) * 1000), i++;
                else if (!strcmp(argv[i], "--idle"))
                        P.idle = !strcmp(v, "yield") ? IDLE_YIELD : IDLE_SPIN, i++;
                else if (!strcmp(argv[i], "--huge"))
                        P.huge = true;
                else if (!strcmp(argv[i], "--no-host-local"))
                        P.host_local = false;
                else if (!strcmp(argv[i], "--no-udp-csum"))
                        P.udp_csum = false;
                else if (!strcmp(argv[i], "--interleave"))
                        P.interleave = atol(v), i++;
                else
                        P.samples = -1;
        }
        if (P.samples < 1 || P.samples > MAX_SAMPLES || P.warmup < 0 || P.seconds <= 0 || P.reps < 1 ||
            P.reps > MAX_REPS || P.queues < 1 || P.queues > 2 || P.stall_ns < 100 ||
            (P.interleave && (P.interleave < 100 || P.interleave > P.samples || P.queues != 1 ||
                              !P.arms[ARM_RAW] || !P.arms[ARM_STACK]))) {
                fprintf(stderr,
                        "usage: %s [--samples N] [--warmup N] [--seconds S] [--reps R] [--only pingpong|oneway]\n"
                        "          [--arms raw,stack,kernel] [--queues 1|2] [--idle spin|yield] [--huge]\n"
                        "          [--no-host-local] [--no-udp-csum] [--stall-us US] [--interleave B]\n"
                        "  --interleave B: raw and stack in one process pair, alternated in blocks of B round\n"
                        "  trips (100..samples; one-way: blocks of 20 ms); needs both arms and one queue\n",
                        argv[0]);
                return 2;
        }
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        tsc_calibrate();
        char il[48] = "no";
        if (P.interleave)
                snprintf(il, sizeof(il), "%ld-rtt/20ms-blocks", P.interleave);
        snprintf(stamp, sizeof(stamp),
                 "warmup=%ld samples=%ld seconds=%.1f link=memif(copy,rsize=%d) burst=%d rings=%d/%d queues=%u "
                 "threads/side=%u idle=%s huge=%s pin=client:0,server:1 host_local=%s udp_csum=%s interleave=%s cpus=%ld build=%s "
                 "cc=%s dpdk=%s",
                 P.warmup, P.samples, P.seconds, MEMIF_RSIZE, BURST, RINGS, RINGS, P.queues, P.queues,
                 P.idle == IDLE_YIELD ? "yield" : "busy", P.huge ? "2M" : "no", P.host_local ? "on" : "off",
                 P.udp_csum ? "sw" : "0(no_udp_csum)", il, ncpu,
                 SPINLANE_BUILD_TYPE, __VERSION__, rte_version());
        printf("# spinlane transport bench, %d reps per arm, arms alternated within each rep\n# [%s]\n", P.reps, stamp);
        if (ncpu < 2 * (long)P.queues + 1)
                printf("# NOTE: %ld CPUs for %u busy threads: the OS and its timers share the CPUs with the pollers,\n"
                       "# so tails (p99.9, max) measure the scheduler as much as the code.\n", ncpu, 2 * P.queues);

        struct cell pp[ARM__MAX][5] = { { { { 0 }, 0 } } }; /* p50 p99 p99.9 max mean */
        struct cell ow[ARM__MAX][2] = { { { { 0 }, 0 } } };
        struct cell pair[4] = { { { 0 }, 0 } }; /* interleaved: pair ratios p50, p99, one-way 32 B, 288 B */
        size_t sizes[2] = { 32, 288 };
        bool do_pp = strcmp(P.only, "oneway") != 0, do_ow = strcmp(P.only, "pingpong") != 0;

        for (int rep = 1; do_pp && rep <= P.reps; rep++)
                for (int k = 0; k < ARM__MAX; k++) {
                        if (!P.arms[k] || (P.interleave && k == ARM_RAW))
                                continue;
                        if (P.interleave && k == ARM_STACK) {
                                il_pp_print(rep, pp, &pair[0]);
                                continue;
                        }
                        struct result res[2], *c = NULL, *s = NULL;
                        int n = run_pair(T_PINGPONG, (enum arm_kind)k, 32, rep, res, 2);
                        for (int i = 0; i < n; i++)
                                *(res[i].server ? &s : &c) = &res[i];
                        if (!c || c->n == 0) {
                                printf("pingpong arm=%s rep=%d/%d FAILED to run [%s]\n", arm_names[k], rep, P.reps, stamp);
                                continue;
                        }
                        printf("pingpong arm=%-6s rep=%d/%d n=%ld/%ld p50=%.2f p99=%.2f p99.9=%.2f max=%.1f mean=%.2f us"
                               " | >%.0fus: rtt %ld (send %ld) gap c/s %ld/%ld poll c/s %ld/%ld (slow-poll %ld/%ld)"
                               " | ctxsw inv c/s %ld/%ld vol %ld/%ld flt %ld/%ld clock_max %.2fus"
                               " | median ns: client send %.0f, client receiving poll %.0f, server echo %.0f | first",
                               arm_names[k], rep, P.reps, c->n, c->want, c->p50, c->p99, c->p999, c->max, c->mean,
                               (double)P.stall_ns / 1000, c->stalls, c->stalls_in_send, c->gaps, s ? s->gaps : -1,
                               c->calls, s ? s->calls : -1, c->calls_slow, s ? s->calls_slow : -1, c->nivcsw, s ? s->nivcsw : -1, c->nvcsw,
                               s ? s->nvcsw : -1, c->minflt, s ? s->minflt : -1, c->clock_max_us, c->busy_ns,
                               c->client_rx_ns, s ? s->busy_ns : -1);
                        for (long i = 0; i < c->stalls && i < 8; i++)
                                printf(" %ld", c->first_stall[i]);
                        for (int side = 0; side < 2; side++) {
                                const struct result *x = side ? s : c;
                                if (!x)
                                        continue;
                                printf(" | %s empty polls ns p50/p99/p99.9/max: other %.0f/%.0f/%.0f/%.0f (%ld),"
                                       " 16th %.0f/%.0f/%.0f/%.0f (%ld)", side ? "server" : "client",
                                       x->empty_q[0][0], x->empty_q[0][1], x->empty_q[0][2], x->empty_q[0][3],
                                       x->empty_n[0], x->empty_q[1][0], x->empty_q[1][1], x->empty_q[1][2],
                                       x->empty_q[1][3], x->empty_n[1]);
                        }
                        printf(" [%s]\n", stamp);
                        fflush(stdout);
                        double v[5] = { c->p50, c->p99, c->p999, c->max, c->mean };
                        for (int f = 0; f < 5; f++)
                                cell_add(&pp[k][f], v[f]);
                }
        for (int rep = 1; do_ow && rep <= P.reps; rep++)
                for (int s = 0; s < 2; s++)
                        for (int k = 0; k < ARM__MAX; k++) {
                                if (!P.arms[k] || (P.interleave && k == ARM_RAW))
                                        continue;
                                if (P.interleave && k == ARM_STACK) {
                                        il_ow_print(rep, sizes[s], ow, s, &pair[2 + s]);
                                        continue;
                                }
                                struct result res[2], *rx = NULL, *tx = NULL;
                                int n = run_pair(T_ONEWAY, (enum arm_kind)k, sizes[s], rep, res, 2);
                                for (int i = 0; i < n; i++)
                                        *(res[i].server ? &rx : &tx) = &res[i];
                                if (!rx) {
                                        printf("oneway arm=%s size=%zu rep=%d/%d FAILED to run [%s]\n", arm_names[k],
                                               sizes[s], rep, P.reps, stamp);
                                        continue;
                                }
                                printf("oneway arm=%-6s size=%zu rep=%d/%d msgs/s=%.0f Gbit/s=%.2f sent=%ld recvd=%ld"
                                       " | ctxsw inv %ld vol %ld [%s]\n",
                                       arm_names[k], sizes[s], rep, P.reps, rx->rate, rx->gbps, tx ? tx->recvd : -1,
                                       rx->recvd, rx->nivcsw, rx->nvcsw, stamp);
                                fflush(stdout);
                                cell_add(&ow[k][s], rx->rate / 1e6);
                        }

        printf("\n# medians of %d reps (range), [%s]\n", P.reps, stamp);
        if (do_pp) {
                printf("%-22s %19s %19s %19s %19s\n", "32 B RTT (us)", "p50", "p99", "p99.9", "max");
                for (int k = 0; k < ARM__MAX; k++) {
                        if (!P.arms[k])
                                continue;
                        printf("%-22s", arm_names[k]);
                        for (int f = 0; f < 4; f++)
                                print_cell(&pp[k][f], f == 3 ? "%.1f" : "%.2f");
                        printf("\n");
                }
                if (P.arms[ARM_STACK] && P.arms[ARM_RAW]) /* a ratio only of arms that ran */
                        printf("%-22s %19.2f %19.2f %19.2f %19.2f   (target <= 1.15, 1.15, 2.0)\n", "ratio stack/raw",
                               ratio(&pp[ARM_STACK][0], &pp[ARM_RAW][0]), ratio(&pp[ARM_STACK][1], &pp[ARM_RAW][1]),
                               ratio(&pp[ARM_STACK][2], &pp[ARM_RAW][2]), ratio(&pp[ARM_STACK][3], &pp[ARM_RAW][3]));
                if (P.interleave) {
                        printf("%-22s", "pairs stack/raw");
                        print_cell(&pair[0], "%.3f");
                        print_cell(&pair[1], "%.3f");
                        printf("   (median over reps of each rep's median over adjacent block pairs)\n");
                }
                if (P.arms[ARM_STACK] && P.arms[ARM_KERNEL])
                        printf("%-22s %19.2f %19.2f %19.2f %19.2f   (target <= 0.30 at p50, p99)\n", "ratio stack/kernel",
                               ratio(&pp[ARM_STACK][0], &pp[ARM_KERNEL][0]), ratio(&pp[ARM_STACK][1], &pp[ARM_KERNEL][1]),
                               ratio(&pp[ARM_STACK][2], &pp[ARM_KERNEL][2]), ratio(&pp[ARM_STACK][3], &pp[ARM_KERNEL][3]));
        }
        if (do_ow) {
                printf("%-22s %19s %19s\n", "one-way (M msgs/s)", "32 B", "288 B");
                for (int k = 0; k < ARM__MAX; k++) {
                        if (!P.arms[k])
                                continue;
                        printf("%-22s", arm_names[k]);
                        for (int s = 0; s < 2; s++)
                                print_cell(&ow[k][s], "%.2f");
                        printf("\n");
                }
                if (P.arms[ARM_STACK] && P.arms[ARM_RAW])
                        printf("%-22s %19.2f %19.2f   (target >= 0.90)\n", "ratio stack/raw", ratio(&ow[ARM_STACK][0], &ow[ARM_RAW][0]),
                               ratio(&ow[ARM_STACK][1], &ow[ARM_RAW][1]));
                if (P.interleave) {
                        printf("%-22s", "pairs stack/raw");
                        print_cell(&pair[2], "%.3f");
                        print_cell(&pair[3], "%.3f");
                        printf("   (median over reps of each rep's median over adjacent block pairs)\n");
                }
                if (P.arms[ARM_STACK] && P.arms[ARM_KERNEL])
                        printf("%-22s %19.1f %19.1f\n", "ratio stack/kernel", ratio(&ow[ARM_STACK][0], &ow[ARM_KERNEL][0]),
                               ratio(&ow[ARM_STACK][1], &ow[ARM_KERNEL][1]));
        }
        return 0;
}
