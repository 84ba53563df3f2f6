/* SPDX-License-Identifier: Apache-2.0 */
/* ARP that follows a peer: DPDK (net_af_packet on a veth end in its own namespace) sends
 * to a kernel echo peer on the subnet; the peer's interface then changes its MAC and
 * sends no ARP of its own (arp_notify off, the Linux default). The transport's re-probe
 * of the entry in use must find the new MAC and the echoes resume within 5 s (a bound on
 * the event, not a latency: the entry's expiry is 60 s away). Every namespace is deleted
 * at exit, also on failure or a signal. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <rte_cycles.h>

#include "dpdk-testutil.h"

static char ns_d[32], ns_r[32];
static int have_ns;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
        char cmd[2048];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(cmd))
                abort();
        int st = system(cmd);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cleanup(void)
{
        if (!have_ns)
                return;
        have_ns = 0;
        sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", ns_d, ns_r);
}

static void on_signal(int sig)
{
        cleanup();
        signal(sig, SIG_DFL);
        raise(sig);
}

static int enter_ns(const char *name)
{
        char path[128];
        snprintf(path, sizeof(path), "/var/run/netns/%s", name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
        close(fd);
        return r;
}

/* Kernel echo peer on 10.4.0.254:9000 until "bye" or 60 s of silence. */
static int kernel_peer(void)
{
        if (enter_ns(ns_r) < 0)
                return 2;
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in me = t_sin("10.4.0.254", 9000);
        if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0)
                return 3;
        struct timeval tv = { .tv_usec = 100000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        char buf[2048];
        for (int idle = 0; idle < 600;) {
                struct sockaddr_in src;
                socklen_t sl = sizeof(src);
                ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&src, &sl);
                if (n < 0) {
                        idle++;
                        continue;
                }
                idle = 0;
                if (n == 3 && memcmp(buf, "bye", 3) == 0)
                        return 0;
                sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&src, sl);
        }
        return 4;
}

static int echoes;

static void on_dgram(void *clientd, void *ep_clientd, const uint8_t *data, size_t len, const struct sockaddr_in *src)
{
        (void)clientd, (void)ep_clientd, (void)src;
        if (len >= 4 && memcmp(data, "ping", 4) == 0)
                echoes++;
}

static uint64_t ms_now(void)
{
        return rte_get_tsc_cycles() * 1000 / rte_get_tsc_hz();
}

/* Send a ping every 20 ms and poll until an echo comes back or bound_ms passes; the ms it
 * took, or -1. */
static long until_echo(struct tr_queue *q, struct tr_endpoint *ep, uint64_t bound_ms)
{
        struct sockaddr_in to = t_sin("10.4.0.254", 9000);
        uint64_t t0 = ms_now(), next = 0;
        int before = echoes;
        while (ms_now() - t0 < bound_ms) {
                if (ms_now() >= next) {
                        tr_send(q, ep, &to, "ping", 4);
                        next = ms_now() + 20;
                }
                tr_poll(q, on_dgram, NULL);
                if (echoes > before)
                        return (long)(ms_now() - t0);
        }
        return -1;
}

int main(void)
{
        int pid = (int)getpid();
        char va[16], vb[16], vdev[128], err[256] = "";
        /* SPINLANE_TEST_ARP_REPROBE_MS=4294967295 turns the re-probe off: the control arm
         * that shows the test fails without it */
        const char *rp = getenv("SPINLANE_TEST_ARP_REPROBE_MS");

        if (geteuid() != 0)
                TEST_SKIP("needs root for network namespaces");
        if (sh("ip netns list >/dev/null 2>&1") != 0)
                TEST_SKIP("iproute2 'ip netns' does not work here");
        if (sh("command -v ethtool >/dev/null 2>&1") != 0)
                TEST_SKIP("no ethtool (Debian package ethtool): needed to turn off veth TX checksum offload");
        t_skip_unless_dpdk("net_af_packet");
        snprintf(ns_d, sizeof(ns_d), "sl-af-d%d", pid);
        snprintf(ns_r, sizeof(ns_r), "sl-af-r%d", pid);
        snprintf(va, sizeof(va), "slafa%d", pid);
        snprintf(vb, sizeof(vb), "slafb%d", pid);
        atexit(cleanup);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGABRT, on_signal);
        have_ns = 1;
        if (sh("ip netns add %s && ip netns add %s", ns_d, ns_r) != 0)
                TEST_FATAL("cannot create network namespaces");
        int r = sh("set -e; ip link add %s netns %s type veth peer name %s netns %s;"
                   "ip -n %s link set lo up; ip -n %s link set %s up;"
                   "ip -n %s link set lo up; ip -n %s link set %s address 02:00:00:00:aa:01;"
                   "ip -n %s addr add 10.4.0.254/24 dev %s; ip -n %s link set %s up;"
                   "ip netns exec %s sysctl -qw net.ipv4.conf.all.arp_notify=0 net.ipv4.conf.%s.arp_notify=0;"
                   "ip netns exec %s ethtool -K %s tx off >/dev/null",
                   va, ns_d, vb, ns_r, ns_d, ns_d, va, ns_r, ns_r, vb, ns_r, vb, ns_r, vb, ns_r, vb, ns_r, vb);
        if (r != 0)
                TEST_FATAL("cannot build the veth/namespace topology (exit %d)", r);

        pid_t kid = fork();
        if (kid == 0)
                _exit(kernel_peer());
        CHECK_INT(enter_ns(ns_d), 0);
        snprintf(vdev, sizeof(vdev), "--vdev=net_af_packet0,iface=%s,qpairs=2", va);
        t_eal_start("arpf", vdev);
        uint16_t port_id;
        if (tr_port_find("net_af_packet0", &port_id) < 0)
                TEST_FATAL("no net_af_packet0 port although the af_packet PMD is installed");
        struct tr_port_config cfg = { .port_id = port_id, .ipv4 = t_ip4("10.4.0.1"), .prefix_len = 24,
                                      .link_wait_ms = TEST_WAIT_MS, .no_host_local = true,
                                      .arp_reprobe_ms = rp ? (uint32_t)strtoul(rp, NULL, 10) : 0 };
        struct tr_port *p;
        r = tr_port_open(&cfg, &p, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "tr_port_open: %s\n", err);
        CHECK_INT(r, 0);
        if (r < 0)
                return test_done();
        struct tr_queue *q = tr_port_queue(p, 0);
        struct tr_endpoint *ep;
        struct sockaddr_in b = t_sin(NULL, 7000);
        CHECK_INT(tr_endpoint_open(p, &b, NULL, &ep), 0);

        /* echoes flow (we resolved the peer) */
        long first = until_echo(q, ep, TEST_WAIT_MS);
        CHECK(first >= 0);
        /* a few seconds of traffic: the entry is in use and confirmed by re-probes */
        uint64_t end = ms_now() + 2500;
        while (ms_now() < end)
                until_echo(q, ep, 50);
        struct tr_counters c0;
        tr_port_counters(p, &c0);

        /* the peer takes a new MAC and says nothing */
        CHECK_INT(sh("ip -n %s link set %s address 02:00:00:00:aa:02", ns_r, vb), 0);
        /* echoes of pings sent before the change may still be in flight: 200 ms of
         * polling without sending lets them in, then the first new echo is timed */
        for (uint64_t drain = ms_now() + 200; ms_now() < drain;)
                tr_poll(q, on_dgram, NULL);
        long took = until_echo(q, ep, 5000);
        printf("echoes resumed %ld ms after the MAC change (-1: not within 5 s)\n", took);
        CHECK(took >= 0 && took < 5000);
        struct tr_counters c1;
        tr_port_counters(p, &c1);
        printf("arp reprobes tx: %llu before the change, %llu after\n", (unsigned long long)c0.arp_reprobes_tx,
               (unsigned long long)c1.arp_reprobes_tx);
        CHECK(c1.arp_reprobes_tx > c0.arp_reprobes_tx);

        struct sockaddr_in to = t_sin("10.4.0.254", 9000);
        for (int i = 0; i < 3; i++)
                tr_send(q, ep, &to, "bye", 3);
        int st = 0;
        waitpid(kid, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        tr_endpoint_close(ep);
        tr_port_close(p);
        tr_eal_cleanup();
        cleanup();
        return test_done();
}
