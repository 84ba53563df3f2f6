/* SPDX-License-Identifier: Apache-2.0 */
/* On-demand benchmark of the DPDK transport: 32-byte ping-pong RTT over net_memif against
 * a kernel UDP ping-pong on loopback (same harness, same run, each side busy-polling and
 * pinned to its own CPU), then one-way throughput of 32 B and 288 B datagrams in bursts of
 * 32 over both. Prints the parameters, a table and the ratios. Not a test. */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define MAX_SAMPLES 2000000

static long warmup = 10000, samples = 100000;
static double seconds = 2.0;
static const char *only = "all"; /* all | pingpong | oneway */
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

/* ---- one abstraction over both arms: send one / a batch, poll with a callback ---- */
struct arm {
        bool dpdk;
        /* dpdk */
        struct tr_port *port;
        struct tr_queue *q;
        struct tr_endpoint *ep;
        /* kernel */
        int fd;
        struct sockaddr_in peer;
        bool have_peer;
};

static volatile long got;
static volatile uint64_t got_bytes;
static struct sockaddr_in last_src;

static void on_rx(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                  const struct sockaddr_in *src)
{
        (void)clientd;
        (void)ep_clientd;
        (void)data;
        got++;
        got_bytes += len;
        last_src = *src;
}

static int arm_poll(struct arm *a)
{
        if (a->dpdk)
                return tr_poll(a->q, on_rx, NULL);
        struct mmsghdr mm[32];
        struct iovec iov[32];
        static uint8_t bufs[32][2048];
        static struct sockaddr_in srcs[32];
        for (int i = 0; i < 32; i++) {
                iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
                mm[i].msg_hdr = (struct msghdr){ .msg_name = &srcs[i], .msg_namelen = sizeof(srcs[i]),
                                                 .msg_iov = &iov[i], .msg_iovlen = 1 };
        }
        int n = recvmmsg(a->fd, mm, 32, MSG_DONTWAIT, NULL);
        for (int i = 0; i < n; i++)
                on_rx(NULL, NULL, bufs[i], mm[i].msg_len, &srcs[i]);
        return n < 0 ? 0 : n;
}

/* 1 sent, 0 would block */
static int arm_send(struct arm *a, const struct sockaddr_in *dst, const void *buf, size_t len)
{
        if (a->dpdk)
                return tr_send(a->q, a->ep, dst, buf, len);
        ssize_t r = sendto(a->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)dst, sizeof(*dst));
        return r < 0 ? 0 : 1;
}

static int arm_send_batch(struct arm *a, const struct sockaddr_in *dst, const void *buf, size_t len, int n)
{
        if (a->dpdk) {
                struct tr_msg m[32];
                for (int i = 0; i < n; i++)
                        m[i] = (struct tr_msg){ .dst = dst, .data = buf, .len = len };
                int r = tr_sendmmsg(a->q, a->ep, m, (size_t)n);
                return r < 0 ? 0 : r;
        }
        struct mmsghdr mm[32];
        struct iovec iov = { (void *)buf, len };
        for (int i = 0; i < n; i++)
                mm[i].msg_hdr = (struct msghdr){ .msg_name = (void *)dst, .msg_namelen = sizeof(*dst),
                                                 .msg_iov = &iov, .msg_iovlen = 1 };
        int r = sendmmsg(a->fd, mm, (unsigned)n, MSG_DONTWAIT);
        return r < 0 ? 0 : r;
}

static int arm_open(struct arm *a, bool dpdk, bool server, int cpu)
{
        memset(a, 0, sizeof(*a));
        a->dpdk = dpdk;
        a->fd = -1;
        pin(cpu);
        if (!dpdk) {
                struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(server ? 7101 : 7100),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                a->fd = socket(AF_INET, SOCK_DGRAM, 0);
                int big = 8 << 20;
                setsockopt(a->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
                setsockopt(a->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
                return bind(a->fd, (struct sockaddr *)&me, sizeof(me));
        }
        char args[512], err[256] = "";
        static struct tr_eal_args ea;
        snprintf(args, sizeof(args),
                 "-l %d --no-huge --no-pci -m 512 --file-prefix sl-tr-bench-%d --log-level=error "
                 "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no,rsize=11",
                 cpu, (int)getpid(), server ? "server" : "client", sockpath);
        if (tr_eal_args_split(args, strlen(args), "bench", &ea) < 0 || tr_eal_init(&ea) < 0)
                return -1;
        uint16_t pid;
        if (tr_port_find("net_memif0", &pid) < 0)
                return -1;
        struct tr_port_config cfg = { .port_id = pid, .ipv4 = ip4(server ? "10.9.0.1" : "10.9.0.2"),
                                      .prefix_len = 24, .link_wait_ms = 10000, .no_host_local = true };
        if (tr_port_open(&cfg, &a->port, err, sizeof(err)) < 0) {
                fprintf(stderr, "bench: %s\n", err);
                return -1;
        }
        a->q = tr_port_queue(a->port, 0);
        struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(server ? 7101 : 7100) };
        return tr_endpoint_open(a->port, &b, NULL, &a->ep);
}

static void arm_close(struct arm *a)
{
        if (a->dpdk) {
                tr_endpoint_close(a->ep);
                tr_port_close(a->port);
                tr_eal_cleanup();
        } else
                close(a->fd);
}

static struct sockaddr_in peer_of(bool dpdk, bool server)
{
        struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(server ? 7100 : 7101) };
        s.sin_addr.s_addr = dpdk ? ip4(server ? "10.9.0.2" : "10.9.0.1") : htonl(INADDR_LOOPBACK);
        return s;
}

/* Send until it goes (ARP resolution on the first one), polling meanwhile. */
static void send_blocking(struct arm *a, const struct sockaddr_in *dst, const void *buf, size_t len)
{
        while (arm_send(a, dst, buf, len) != 1)
                arm_poll(a);
}

struct result {
        char name[32];
        double p50, p99, p999, max, mean;
        long n;
        double rate, gbps;
        long sent, recvd;
};

static int cmp_u64(const void *x, const void *y)
{
        uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
        return a < b ? -1 : a > b;
}

/* ---- ping-pong: the server echoes, the client measures ---- */
static int pingpong(bool dpdk, bool server, int wfd)
{
        struct arm a;
        uint8_t msg[32] = { 0 };
        if (arm_open(&a, dpdk, server, server ? 1 : 0) < 0)
                return 1;
        struct sockaddr_in dst = peer_of(dpdk, server);
        long total = warmup + samples;
        if (server) {
                long echoed = 0;
                uint64_t idle_since = now_ns();
                while (echoed < total && now_ns() - idle_since < 5000000000ull) {
                        long before = got;
                        arm_poll(&a);
                        for (long i = before; i < got; i++) {
                                send_blocking(&a, &dst, msg, sizeof(msg));
                                echoed++;
                        }
                        if (got != before)
                                idle_since = now_ns();
                }
                arm_close(&a);
                return 0;
        }
        uint64_t *rtt = calloc((size_t)samples, sizeof(uint64_t));
        struct result r = { 0 };
        long n = 0;
        for (long i = 0; i < total; i++) {
                long want = got + 1;
                uint64_t t0 = now_ns(), deadline = t0 + 1000000000ull;
                send_blocking(&a, &dst, msg, sizeof(msg));
                while (got < want && now_ns() < deadline)
                        arm_poll(&a);
                if (got < want)
                        break; /* lost: stop, the shortfall is reported */
                if (i >= warmup)
                        rtt[n++] = now_ns() - t0;
        }
        qsort(rtt, (size_t)n, sizeof(uint64_t), cmp_u64);
        snprintf(r.name, sizeof(r.name), "%s", dpdk ? "dpdk-memif" : "kernel-udp-lo");
        r.n = n;
        if (n) {
                double sum = 0;
                for (long i = 0; i < n; i++)
                        sum += (double)rtt[i];
                r.mean = sum / (double)n / 1000;
                r.p50 = (double)rtt[n / 2] / 1000;
                r.p99 = (double)rtt[(long)((double)n * 0.99)] / 1000;
                r.p999 = (double)rtt[(long)((double)n * 0.999)] / 1000;
                r.max = (double)rtt[n - 1] / 1000;
        }
        free(rtt);
        if (write(wfd, &r, sizeof(r)) != sizeof(r))
                return 1;
        arm_close(&a);
        return 0;
}

/* ---- one-way throughput: the client sends bursts of 32, the server counts ---- */
static int oneway(bool dpdk, bool server, size_t size, int wfd)
{
        struct arm a;
        static uint8_t msg[2048];
        if (arm_open(&a, dpdk, server, server ? 1 : 0) < 0)
                return 1;
        struct sockaddr_in dst = peer_of(dpdk, server);
        struct result r = { 0 };
        snprintf(r.name, sizeof(r.name), "%s %zuB", dpdk ? "dpdk-memif" : "kernel-udp-lo", size);
        if (server) {
                /* count for `seconds` from the first datagram; then tell the client */
                while (got == 0)
                        arm_poll(&a);
                long start_n = got;
                uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t1;
                /* read the clock every 64 polls: it costs more than an empty poll */
                do {
                        for (int i = 0; i < 64; i++)
                                arm_poll(&a);
                } while ((t1 = now_ns()) < end);
                seconds = (double)(t1 - t0) / 1e9;
                r.recvd = got - start_n;
                r.rate = (double)r.recvd / seconds;
                r.gbps = r.rate * (double)size * 8 / 1e9;
                send_blocking(&a, &dst, "stop", 4);
                if (write(wfd, &r, sizeof(r)) != sizeof(r))
                        return 1;
                /* drain until the client stops */
                uint64_t quiet = now_ns() + 300000000ull;
                while (now_ns() < quiet)
                        arm_poll(&a);
                arm_close(&a);
                return 0;
        }
        send_blocking(&a, &dst, msg, size);
        long sent = 1;
        while (got == 0) {
                sent += arm_send_batch(&a, &dst, msg, size, 32);
                if ((sent & 1023) < 32)
                        arm_poll(&a);
        }
        r.sent = sent;
        if (write(wfd, &r, sizeof(r)) != sizeof(r))
                return 1;
        arm_close(&a);
        return 0;
}

/* Run server and client in two processes; collect what they write. */
static int run_pair(const char *mode, bool dpdk, size_t size, struct result *res, int nres)
{
        int pfd[2];
        char dir[] = "/tmp/sl-tr-bench-XXXXXX";
        if (pipe(pfd) < 0 || !mkdtemp(dir))
                return -1;
        snprintf(sockpath, sizeof(sockpath), "%s/memif.sock", dir);
        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        close(pfd[0]);
                        bool server = i == 0;
                        int rc = strcmp(mode, "pingpong") == 0 ? pingpong(dpdk, server, pfd[1])
                                                               : oneway(dpdk, server, size, pfd[1]);
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
        return n;
}

int main(int argc, char **argv)
{
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--samples"))
                        samples = atol(argv[i + 1]);
                else if (!strcmp(argv[i], "--warmup"))
                        warmup = atol(argv[i + 1]);
                else if (!strcmp(argv[i], "--seconds"))
                        seconds = atof(argv[i + 1]);
                else if (!strcmp(argv[i], "--only"))
                        only = argv[i + 1];
        }
        if (samples < 1 || samples > MAX_SAMPLES || warmup < 0 || seconds <= 0) {
                fprintf(stderr, "usage: %s [--samples N] [--warmup N] [--seconds S] [--only pingpong|oneway]\n", argv[0]);
                return 2;
        }
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        printf("# spinlane transport bench: %ld online CPUs; server pinned to CPU 1, client to CPU 0;\n"
               "# both sides busy-poll (no sleeping). memif: rsize=11 (2048 slots), burst 32, no hugepages.\n"
               "# ping-pong: 32 B payload, warm-up %ld, samples %ld. one-way: bursts of 32 for %.1f s.\n",
               ncpu, warmup, samples, seconds);
        if (ncpu < 3)
                printf("# NOTE: only %ld CPUs: the two busy-polling sides take every CPU, so the OS and\n"
                       "# its timers share them; tails (p99.9, max) measure the scheduler as much as the code.\n", ncpu);

        struct result pp[2];
        int ok_d = 0, ok_k = 0;
        if (strcmp(only, "oneway") == 0)
                goto oneway_tests;
        ok_d = run_pair("pingpong", true, 32, &pp[0], 1);
        ok_k = run_pair("pingpong", false, 32, &pp[1], 1);
        printf("\n%-16s %9s %9s %9s %9s %9s %9s\n", "RTT (us)", "samples", "p50", "p99", "p99.9", "max", "mean");
        for (int i = 0; i < 2; i++) {
                if ((i == 0 ? ok_d : ok_k) != 1) {
                        printf("%-16s failed to run\n", i == 0 ? "dpdk-memif" : "kernel-udp-lo");
                        continue;
                }
                printf("%-16s %9ld %9.2f %9.2f %9.2f %9.2f %9.2f\n", pp[i].name, pp[i].n, pp[i].p50,
                       pp[i].p99, pp[i].p999, pp[i].max, pp[i].mean);
        }
        if (ok_d == 1 && ok_k == 1 && pp[1].p50 > 0)
                printf("ratio dpdk/kernel: p50 %.2f, p99 %.2f, p99.9 %.2f (target <= 0.30 at p50 and p99)\n",
                       pp[0].p50 / pp[1].p50, pp[0].p99 / pp[1].p99, pp[0].p999 / pp[1].p999);

        if (strcmp(only, "pingpong") == 0)
                return 0;
oneway_tests:
        printf("\n%-22s %14s %10s\n", "one-way, burst 32", "msgs/s", "Gbit/s");
        double rates[2][2] = { { 0 } };
        size_t sizes[2] = { 32, 288 };
        for (int d = 0; d < 2; d++)
                for (int s = 0; s < 2; s++) {
                        struct result r[2];
                        int n = run_pair("oneway", d == 0, sizes[s], r, 2);
                        struct result *rx = NULL;
                        for (int i = 0; i < n; i++)
                                if (r[i].recvd)
                                        rx = &r[i];
                        if (!rx) {
                                printf("%-22s failed to run\n", d == 0 ? "dpdk-memif" : "kernel-udp-lo");
                                continue;
                        }
                        rates[d][s] = rx->rate;
                        printf("%-22s %14.0f %10.2f\n", rx->name, rx->rate, rx->gbps);
                }
        if (rates[1][0] > 0 && rates[1][1] > 0)
                printf("ratio dpdk/kernel: 32 B %.2fx, 288 B %.2fx (target >= 10 M msgs/s of 32 B on one core)\n",
                       rates[0][0] / rates[1][0], rates[0][1] / rates[1][1]);
        return 0;
}
