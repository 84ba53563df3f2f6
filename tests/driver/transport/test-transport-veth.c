/* SPDX-License-Identifier: Apache-2.0 */
/* DPDK (net_af_packet on a veth end in its own namespace) against the kernel's own UDP
 * stack: a kernel peer on the subnet (in a router namespace) and one behind that router.
 * ARP both ways, datagrams both ways, the kernel accepting our checksums (its echo and
 * its UDP InCsumErrors), gateway routing, and 3 % netem loss where netem exists. Every
 * namespace (and so every veth) is deleted at exit, also on failure or a signal. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <rte_cycles.h>

#include "dpdk-testutil.h"

static char ns_d[32], ns_r[32], ns_f[32];
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
        sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", ns_d, ns_r, ns_f);
}

static void on_signal(int sig)
{
        cleanup();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* The kernel lacks a driver: not loaded, not built in (its config says), and no module to
 * load. When it cannot tell (no /proc/config.gz, no /lib/modules), assume it has it. */
static bool kernel_lacks(const char *module, const char *config)
{
        char p[128];
        snprintf(p, sizeof(p), "/sys/module/%s", module);
        if (access(p, F_OK) == 0)
                return false;
        if (access("/proc/config.gz", R_OK) == 0)
                return sh("zcat /proc/config.gz | grep -Eq '^%s=[ym]$'", config) != 0;
        return access("/lib/modules", F_OK) == 0 && sh("modprobe -n -q %s 2>/dev/null", module) != 0;
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

/* Kernel peer: bound to bind_ip:9000, says hello to 10.2.0.1:7000 every 50 ms until it
 * hears something, then echoes every datagram until "bye". Exit 0 when it echoed. */
static int kernel_peer(const char *ns, const char *bind_ip)
{
        if (enter_ns(ns) < 0)
                return 2;
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in me = t_sin(bind_ip, 9000), dpdk = t_sin("10.2.0.1", 7000);
        if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0)
                return 3;
        struct timeval tv = { .tv_usec = 50000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int echoed = 0, idle = 0;
        bool heard = false;
        char buf[2048];
        while (idle < 600) { /* 30 s without traffic */
                if (!heard)
                        sendto(fd, "kernel-hello", 12, 0, (struct sockaddr *)&dpdk, sizeof(dpdk));
                struct sockaddr_in src;
                socklen_t sl = sizeof(src);
                ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&src, &sl);
                if (n < 0) {
                        idle++;
                        continue;
                }
                idle = 0;
                heard = true;
                if (n == 3 && memcmp(buf, "bye", 3) == 0)
                        break;
                if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&src, sl) == n)
                        echoed++;
        }
        return echoed > 0 ? 0 : 4;
}

struct rx {
        int hello_r, hello_f;
        int echoes_r, echoes_f;
        int mark_f;             /* the last "mark-N" echoed (N; not counted in echoes_f) */
        int bad;
};

static void on_dgram(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                     const struct sockaddr_in *src)
{
        struct rx *x = clientd;
        bool from_r = src->sin_addr.s_addr == t_ip4("10.2.0.254");
        bool from_f = src->sin_addr.s_addr == t_ip4("10.3.0.2");
        (void)ep_clientd;
        if ((!from_r && !from_f) || ntohs(src->sin_port) != 9000) {
                x->bad++;
                return;
        }
        if (len == 12 && memcmp(data, "kernel-hello", 12) == 0) {
                *(from_r ? &x->hello_r : &x->hello_f) += 1;
                return;
        }
        if (len > 5 && len < 16 && memcmp(data, "mark-", 5) == 0 && from_f) {
                char n[16];
                memcpy(n, data + 5, len - 5);
                n[len - 5] = '\0';
                x->mark_f = atoi(n);
        } else if (len >= 4 && memcmp(data, "ping", 4) == 0)
                *(from_r ? &x->echoes_r : &x->echoes_f) += 1;
        else
                x->bad++;
}

static uint64_t ms_now(void)
{
        return rte_get_tsc_cycles() * 1000 / rte_get_tsc_hz();
}

static void poll_until(struct tr_queue *q, struct rx *x, const int *what, int want, uint64_t ms)
{
        uint64_t end = ms_now() + ms;
        while (*what < want && ms_now() < end)
                tr_poll(q, on_dgram, x);
}

static uint64_t kernel_csum_errors(const char *ns)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "ip netns exec %s awk '/^Udp: [0-9]/ {print $7}' /proc/net/snmp", ns);
        FILE *f = popen(cmd, "r");
        unsigned long long v = 999;
        if (!f || fscanf(f, "%llu", &v) != 1)
                v = 999;
        if (f)
                pclose(f);
        return v;
}

int main(void)
{
        int pid = (int)getpid();
        char va[16], vb[16], vc[16], vd[16], vdev[128], err[256] = "";

        /* what the machine may lack, all before anything is created */
        if (geteuid() != 0)
                TEST_SKIP("needs root for network namespaces");
        if (sh("ip netns list >/dev/null 2>&1") != 0)
                TEST_SKIP("iproute2 'ip netns' does not work here");
        if (kernel_lacks("veth", "CONFIG_VETH"))
                TEST_SKIP("no veth driver in this kernel");
        /* netem (3 % loss) where the kernel has it, else the same 1000 echoes lossless */
        bool netem = !kernel_lacks("sch_netem", "CONFIG_NET_SCH_NETEM") && sh("command -v tc >/dev/null 2>&1") == 0;
        if (sh("command -v ethtool >/dev/null 2>&1") != 0)
                TEST_SKIP("no ethtool (Debian package ethtool): needed to turn off veth TX checksum offload");
        t_skip_unless_dpdk("net_af_packet");
        snprintf(ns_d, sizeof(ns_d), "sl-tr-d%d", pid);
        snprintf(ns_r, sizeof(ns_r), "sl-tr-r%d", pid);
        snprintf(ns_f, sizeof(ns_f), "sl-tr-f%d", pid);
        snprintf(va, sizeof(va), "sltra%d", pid);
        snprintf(vb, sizeof(vb), "sltrb%d", pid);
        snprintf(vc, sizeof(vc), "sltrc%d", pid);
        snprintf(vd, sizeof(vd), "sltrd%d", pid);
        atexit(cleanup);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGABRT, on_signal);
        have_ns = 1;
        if (sh("ip netns add %s && ip netns add %s && ip netns add %s", ns_d, ns_r, ns_f) != 0)
                TEST_FATAL("cannot create network namespaces");
        int r = sh("set -e; ip link add %s netns %s type veth peer name %s netns %s;"
                   "ip link add %s netns %s type veth peer name %s netns %s;"
                   "ip -n %s link set lo up; ip -n %s link set %s up;"
                   "ip -n %s link set lo up; ip -n %s addr add 10.2.0.254/24 dev %s; ip -n %s link set %s up;"
                   "ip -n %s addr add 10.3.0.254/24 dev %s; ip -n %s link set %s up;"
                   "ip netns exec %s sysctl -qw net.ipv4.ip_forward=1;"
                   "ip -n %s link set lo up; ip -n %s addr add 10.3.0.2/24 dev %s; ip -n %s link set %s up;"
                   "ip -n %s route add default via 10.3.0.254;"
                   "true",
                   va, ns_d, vb, ns_r, vc, ns_r, vd, ns_f,
                   ns_d, ns_d, va,
                   ns_r, ns_r, vb, ns_r, vb,
                   ns_r, vc, ns_r, vc,
                   ns_r,
                   ns_f, ns_f, vd, ns_f, vd,
                   ns_f);
        if (r != 0)
                TEST_FATAL("cannot build the veth/namespace topology (exit %d)", r);
        /* veth hands af_packet frames with partial (offloaded) checksums unless the
         * sender's TX checksumming is off: the kernel must put full checksums on the wire */
        if (sh("ip netns exec %s ethtool -K %s tx off >/dev/null 2>&1", ns_r, vb) != 0)
                TEST_FATAL("ethtool cannot turn off veth TX checksum offload");

        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
                kids[i] = fork();
                if (kids[i] == 0)
                        _exit(i == 0 ? kernel_peer(ns_r, "10.2.0.254") : kernel_peer(ns_f, "10.3.0.2"));
        }
        CHECK_INT(enter_ns(ns_d), 0);
        snprintf(vdev, sizeof(vdev), "--vdev=net_af_packet0,iface=%s,qpairs=2", va);
        t_eal_start("veth", vdev);
        uint16_t port_id;
        if (tr_port_find("net_af_packet0", &port_id) < 0)
                TEST_FATAL("no net_af_packet0 port although the af_packet PMD is installed");
        struct tr_port_config cfg = { .port_id = port_id, .ipv4 = t_ip4("10.2.0.1"), .prefix_len = 24,
                                      .gateway = t_ip4("10.2.0.254"), .link_wait_ms = TEST_WAIT_MS,
                                      .rx_ring = 512, .tx_ring = 512 };
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
        struct rx x = { 0 };

        /* kernel -> DPDK: the kernels ARP for 10.2.0.1 (we answer), then their hellos arrive */
        poll_until(q, &x, &x.hello_r, 1, TEST_WAIT_MS);
        poll_until(q, &x, &x.hello_f, 1, TEST_WAIT_MS);
        CHECK(x.hello_r >= 1);
        CHECK(x.hello_f >= 1);
        uint8_t mac[6];
        char want[64];
        tr_port_mac(p, mac);
        snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
        CHECK_INT(sh("ip -n %s neigh show 10.2.0.1 | grep -q %s", ns_r, want), 0);

        /* we resolve the router (our ARP request, its reply) with a first echo; then make
         * its kernel forget us: to echo again it must ARP, and we must answer */
        struct sockaddr_in warm = t_sin("10.2.0.254", 9000);
        for (uint64_t end = ms_now() + TEST_WAIT_MS; tr_send(q, ep, &warm, "ping-warm", 9) == 0 && ms_now() < end;)
                tr_poll(q, on_dgram, &x);
        poll_until(q, &x, &x.echoes_r, 1, TEST_WAIT_MS);
        CHECK_INT(x.echoes_r, 1);
        x.echoes_r = 0;
        CHECK_INT(sh("ip -n %s neigh flush dev %s", ns_r, vb), 0);

        /* DPDK -> kernel on the subnet and through the gateway; the echo proves the kernel
         * accepted our checksums */
        struct sockaddr_in to_r = t_sin("10.2.0.254", 9000), to_f = t_sin("10.3.0.2", 9000);
        for (int i = 0; i < 10; i++) {
                char m[32];
                int n = snprintf(m, sizeof(m), "ping-%d", i);
                int s;
                uint64_t end = ms_now() + TEST_WAIT_MS;
                while ((s = tr_send(q, ep, &to_r, m, (size_t)n)) == 0 && ms_now() < end)
                        tr_poll(q, on_dgram, &x);
                CHECK_INT(s, 1);
                end = ms_now() + TEST_WAIT_MS;
                while ((s = tr_send(q, ep, &to_f, m, (size_t)n)) == 0 && ms_now() < end)
                        tr_poll(q, on_dgram, &x);
                CHECK_INT(s, 1);
        }
        poll_until(q, &x, &x.echoes_r, 10, TEST_WAIT_MS);
        poll_until(q, &x, &x.echoes_f, 10, TEST_WAIT_MS);
        CHECK_INT(x.echoes_r, 10);
        CHECK_INT(x.echoes_f, 10);
        CHECK_INT(x.bad, 0);
        CHECK_INT(kernel_csum_errors(ns_r), 0);
        CHECK_INT(kernel_csum_errors(ns_f), 0);

        /* 3 % loss on the router's side of the link: about 30 of 1000 echoes go missing */
        if (netem)
                CHECK_INT(sh("ip netns exec %s tc qdisc add dev %s root netem loss 3%%", ns_r, vb), 0);
        else
                printf("SKIP (loss part): no netem in this kernel (or no tc): 1000 echoes without loss instead\n");
        {
                /* 20 rounds of 50: a round ends once the echo of its "mark-N" is in, so every
                 * echo of the round that will come has come (one path, in order; netem
                 * drops, never reorders) and no more than a round is ever in flight (the
                 * kernel peer's socket buffer would drop the rest on a loaded machine).
                 * The mark may be lost too: sent again every 100 ms. */
                int base = x.echoes_f, sent = 0;
                x.mark_f = -1;
                for (int round = 0; round < 20; round++) {
                        for (int i = 0; i < 50; i++) {
                                uint64_t end = ms_now() + TEST_WAIT_MS;
                                int s;
                                while ((s = tr_send(q, ep, &to_f, "ping-loss", 9)) == 0 && ms_now() < end)
                                        tr_poll(q, on_dgram, &x);
                                sent += s == 1;
                                tr_poll(q, on_dgram, &x);
                        }
                        char mark[16];
                        int ml = snprintf(mark, sizeof(mark), "mark-%d", round);
                        uint64_t end = ms_now() + TEST_WAIT_MS, again = 0;
                        while (x.mark_f != round && ms_now() < end) {
                                if (ms_now() >= again) {
                                        tr_send(q, ep, &to_f, mark, (size_t)ml);
                                        again = ms_now() + 100;
                                }
                                tr_poll(q, on_dgram, &x);
                        }
                        CHECK_INT(x.mark_f, round);
                }
                int got = x.echoes_f - base, lost = sent - got;
                printf("%s: sent %d, echoed back %d, lost %d\n", netem ? "netem 3%" : "no netem", sent, got, lost);
                CHECK_INT(sent, 1000);
                if (netem) {
                        CHECK(lost >= 5 && lost <= 90);
                        CHECK_INT(sh("ip netns exec %s tc qdisc del dev %s root", ns_r, vb), 0);
                } else {
                        CHECK_INT(lost, 0);
                }
        }

        for (int i = 0; i < 3; i++) {
                tr_send(q, ep, &to_r, "bye", 3);
                tr_send(q, ep, &to_f, "bye", 3);
        }
        for (int i = 0; i < 2; i++) {
                int st = 0;
                waitpid(kids[i], &st, 0);
                CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        struct tr_counters c;
        tr_port_counters(p, &c);
        printf("counters: rx %llu frames / %llu datagrams, tx %llu, arp req rx %llu tx %llu, replies rx %llu tx %llu, drops %llu\n",
               (unsigned long long)c.rx_frames, (unsigned long long)c.rx_datagrams, (unsigned long long)c.tx_datagrams,
               (unsigned long long)c.arp_requests_rx, (unsigned long long)c.arp_requests_tx,
               (unsigned long long)c.arp_replies_rx, (unsigned long long)c.arp_replies_tx,
               (unsigned long long)tr_counters_drops(&c));
        for (int d = 1; d < TR_DROP__MAX; d++)
                if (c.drops[d])
                        printf("  drop %s: %llu\n", tr_drop_name((enum tr_drop)d), (unsigned long long)c.drops[d]);
        CHECK(c.arp_replies_tx >= 1);
        CHECK_INT(c.drops[TR_DROP_UDP_CHECKSUM] + c.drops[TR_DROP_IP_CHECKSUM], 0);
        tr_endpoint_close(ep);
        tr_port_close(p);
        tr_eal_cleanup();
        cleanup();
        return test_done();
}
