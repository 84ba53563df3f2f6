/* SPDX-License-Identifier: Apache-2.0 */
/* Two processes, each with its own EAL, over net_memif (a file socket in a temp dir):
 * the client resolves the server by ARP, sends 2000 numbered datagrams (single sends and
 * batches), the server echoes each, the client checks every echo arrived intact. Then
 * "bye"/"ack": the server stops polling before the client closes, and closes only after
 * memif's disconnect is done, the client's regions unmapped from it (/proc/self/maps;
 * DPDK 22.11's memif unmaps its rings on a peer's disconnect from the interrupt thread,
 * racing rx_burst and the port's own close). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include <rte_cycles.h>

#include "dpdk-testutil.h"

#define N_MSGS 2000

struct echo_ctx {
        struct tr_queue *q;
        struct tr_endpoint *ep;
        int n;
        int bad;
        unsigned char seen[N_MSGS];
        /* echoes that would block, sent after the next poll (the ARP reply that unblocks
         * them is received by that poll, never inside a callback) */
        struct {
                uint8_t data[64];
                size_t len;
                struct sockaddr_in to;
        } pending[N_MSGS];
        int n_pending;
        bool bye, acked;
};

static uint64_t ms_now(void)
{
        return rte_get_tsc_cycles() * 1000 / rte_get_tsc_hz();
}

/* The parent has no EAL (no TSC rate): the monotonic clock. */
static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void server_rx(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                      const struct sockaddr_in *src)
{
        struct echo_ctx *c = clientd;
        (void)ep_clientd;
        if (len == 3 && memcmp(data, "bye", 3) == 0) {
                c->bye = true;
                return;
        }
        /* echo back; what would block (the client's MAC not known yet: it may have
         * learnt ours from our gratuitous ARP and sent before we saw its request) waits
         * for the next poll, in order */
        int r = c->n_pending ? 0 : tr_send(c->q, c->ep, src, data, len);
        if (r == 0 && c->n_pending < N_MSGS && len <= sizeof(c->pending[0].data)) {
                memcpy(c->pending[c->n_pending].data, data, len);
                c->pending[c->n_pending].len = len;
                c->pending[c->n_pending++].to = *src;
                return;
        }
        c->n += r == 1;
        c->bad += r <= 0;
}

/* Send the echoes that would have blocked, in order, until one still would. */
static void flush_pending(struct echo_ctx *c)
{
        int k = 0;
        while (k < c->n_pending) {
                int r = tr_send(c->q, c->ep, &c->pending[k].to, c->pending[k].data, c->pending[k].len);
                if (r == 0)
                        break;
                c->n += r == 1;
                c->bad += r < 0;
                k++;
        }
        memmove(c->pending, c->pending + k, (size_t)(c->n_pending - k) * sizeof(c->pending[0]));
        c->n_pending -= k;
}

static void client_rx(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                      const struct sockaddr_in *src)
{
        struct echo_ctx *c = clientd;
        uint32_t seq;
        (void)ep_clientd;
        if (len == 3 && memcmp(data, "ack", 3) == 0) {
                c->acked = true;
                return;
        }
        if (len != 64 || src->sin_addr.s_addr != t_ip4("10.1.0.1") || ntohs(src->sin_port) != 7001) {
                c->bad++;
                return;
        }
        memcpy(&seq, data, 4);
        for (size_t i = 4; i < len; i++)
                if (data[i] != (uint8_t)(seq + i))
                        c->bad++;
        if (seq >= N_MSGS || c->seen[seq]) {
                c->bad++;
                return;
        }
        c->seen[seq] = 1;
        c->n++;
}

/* The memif regions (memfds the client made, "memif_region_<n>") mapped in this process
 * now, from /proc/self/maps; -1 when it cannot be read. */
static int memif_regions_mapped(void)
{
        FILE *f = fopen("/proc/self/maps", "re");
        char line[512];
        int n = 0;
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, "/memfd:memif_region_"))
                        n++;
        fclose(f);
        return n;
}

static int run(bool server, const char *sock)
{
        char vdev[512], err[256] = "";
        struct tr_port *p;
        struct tr_endpoint *ep;
        static struct echo_ctx c;
        uint16_t pid;

        snprintf(vdev, sizeof(vdev), "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no",
                 server ? "server" : "client", sock);
        t_eal_start(server ? "memif-s" : "memif-c", vdev);
        if (tr_port_find("net_memif0", &pid) < 0)
                TEST_FATAL("no net_memif0 port although the memif PMD is installed");
        struct tr_port_config cfg = { .port_id = pid, .ipv4 = t_ip4(server ? "10.1.0.1" : "10.1.0.2"),
                                      .prefix_len = 24, .link_wait_ms = TEST_WAIT_MS, .rx_ring = 1024,
                                      .tx_ring = 1024 };
        int r = tr_port_open(&cfg, &p, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "%s: tr_port_open: %s\n", server ? "server" : "client", err);
                return 1;
        }
        struct sockaddr_in b = t_sin(server ? "10.1.0.1" : NULL, server ? 7001 : 7000);
        CHECK_INT(tr_endpoint_open(p, &b, NULL, &ep), 0);
        c.q = tr_port_queue(p, 0);
        c.ep = ep;
        uint64_t deadline = ms_now() + TEST_WAIT_MS;

        if (server) {
                while ((c.n < N_MSGS || !c.bye) && ms_now() < deadline) {
                        tr_poll(c.q, server_rx, &c);
                        flush_pending(&c);
                }
                CHECK_INT(c.n, N_MSGS);
                CHECK_INT(c.bad, 0);
                CHECK(c.bye);
                /* connected: the client's regions are mapped here (else the wait for their
                 * unmapping below would wait for nothing) */
                CHECK(memif_regions_mapped() > 0);
                /* no more polling from here: ack, then wait for the client to go */
                struct sockaddr_in client = t_sin("10.1.0.2", 7000);
                while (tr_send(c.q, ep, &client, "ack", 3) == 0 && ms_now() < deadline)
                        ;
                while (tr_port_link_up(p) && ms_now() < deadline)
                        usleep(1000);
                CHECK(!tr_port_link_up(p));
                /* memif says the link is down at the start of its disconnect and unmaps the
                 * client's regions (its rings) at the end, on the EAL interrupt thread: wait
                 * for that before tr_port_close frees them again (DPDK 22.11) */
                int mapped;
                while ((mapped = memif_regions_mapped()) > 0 && ms_now() < deadline)
                        usleep(1000);
                if (mapped != 0)
                        fprintf(stderr, "server: memif's disconnect left %d region mapping(s) after %d ms\n",
                                mapped, TEST_WAIT_MS);
                CHECK_INT(mapped, 0);
        } else {
                struct sockaddr_in dst = t_sin("10.1.0.1", 7001);
                static uint8_t msgs_buf[32][64];
                int next = 0;
                /* first datagram: would-block until ARP resolves */
                while (ms_now() < deadline) {
                        uint8_t m[64];
                        uint32_t seq = 0;
                        memcpy(m, &seq, 4);
                        for (size_t i = 4; i < 64; i++)
                                m[i] = (uint8_t)(seq + i);
                        r = tr_send(c.q, ep, &dst, m, 64);
                        CHECK(r >= 0);
                        if (r == 1)
                                break;
                        tr_poll(c.q, client_rx, &c);
                }
                next = 1;
                while (next < N_MSGS && ms_now() < deadline) {
                        /* alternate: batches of up to 32, then a single send */
                        struct tr_msg v[32];
                        int k = 0;
                        for (; k < 32 && next + k < N_MSGS; k++) {
                                uint32_t seq = (uint32_t)(next + k);
                                memcpy(msgs_buf[k], &seq, 4);
                                for (size_t i = 4; i < 64; i++)
                                        msgs_buf[k][i] = (uint8_t)(seq + i);
                                v[k] = (struct tr_msg){ .dst = &dst, .data = msgs_buf[k], .len = 64 };
                        }
                        if ((next / 32) % 2)
                                k = 1;
                        r = tr_sendmmsg(c.q, ep, v, (size_t)k);
                        CHECK(r >= 0);
                        if (r > 0)
                                next += r;
                        /* keep at most ~256 in flight so the echo never outruns the rings */
                        while (next - c.n > 256 && ms_now() < deadline)
                                tr_poll(c.q, client_rx, &c);
                        tr_poll(c.q, client_rx, &c);
                }
                while (c.n < N_MSGS && ms_now() < deadline)
                        tr_poll(c.q, client_rx, &c);
                CHECK_INT(c.n, N_MSGS);
                CHECK_INT(c.bad, 0);
                while (tr_send(c.q, ep, &dst, "bye", 3) == 0 && ms_now() < deadline)
                        tr_poll(c.q, client_rx, &c);
                while (!c.acked && ms_now() < deadline)
                        tr_poll(c.q, client_rx, &c);
                CHECK(c.acked);
        }
        struct tr_counters k;
        tr_port_counters(p, &k);
        printf("%s: rx %llu datagrams, tx %llu, arp req rx/tx %llu/%llu, replies rx/tx %llu/%llu, drops %llu\n",
               server ? "server" : "client", (unsigned long long)k.rx_datagrams,
               (unsigned long long)k.tx_datagrams, (unsigned long long)k.arp_requests_rx,
               (unsigned long long)k.arp_requests_tx, (unsigned long long)k.arp_replies_rx,
               (unsigned long long)k.arp_replies_tx, (unsigned long long)tr_counters_drops(&k));
        CHECK(k.drops[TR_DROP_UDP_CHECKSUM] == 0 && k.drops[TR_DROP_IP_CHECKSUM] == 0);
        if (server)
                CHECK(k.arp_replies_tx >= 1);
        else
                CHECK(k.arp_requests_tx >= 1 && k.arp_replies_rx >= 1);
        tr_endpoint_close(ep);
        tr_port_close(p);
        tr_eal_cleanup();
        return test_done();
}

int main(int argc, char **argv)
{
        char dir[] = "/tmp/sl-tr-memif-XXXXXX", sock[256];
        if (argc == 3) /* re-exec'd role: server|client SOCKET */
                return run(strcmp(argv[1], "server") == 0, argv[2]);
        t_skip_unless_dpdk("net_memif"); /* both sides need what the parent checks here */
        if (!mkdtemp(dir))
                return 1;
        snprintf(sock, sizeof(sock), "%s/memif.sock", dir);
        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        execl("/proc/self/exe", argv[0], i == 0 ? "server" : "client", sock, (char *)NULL);
                        _exit(127);
                }
                /* the client connects to the server's socket: start it once the socket is
                 * there (the server made it when its EAL started), not after a guess */
                for (uint64_t end = mono_ms() + TEST_WAIT_MS; i == 0 && access(sock, F_OK) != 0;) {
                        int st;
                        if (waitpid(kids[0], &st, WNOHANG) == kids[0] || mono_ms() >= end) {
                                fprintf(stderr, "the server exited or made no socket %s\n", sock);
                                kill(kids[0], SIGKILL);
                                waitpid(kids[0], NULL, 0);
                                rmdir(dir);
                                return 1;
                        }
                        usleep(10000);
                }
        }
        int rc = 0;
        for (int i = 0; i < 2; i++) {
                int st = 0;
                waitpid(kids[i], &st, 0);
                int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                printf("%s exited %d\n", i == 0 ? "server" : "client", code);
                if (code != 0)
                        rc = 1; /* a 77 too: what a side could lack was checked here first */
        }
        unlink(sock);
        rmdir(dir);
        return rc;
}
