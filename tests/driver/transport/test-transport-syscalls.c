/* SPDX-License-Identifier: Apache-2.0 */
/* The polling thread makes no system call: on a net_ring port with everything a port can
 * have running (host-local sockets on, the default; an endpoint with its kernel socket; a
 * joined group whose IGMP timers fire; ARP resolved), a forked child runs tr_poll and
 * tr_send thousands of times under a seccomp filter that traps every system call, and
 * counts them. A host-local send at the end must be caught: the counter works. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpdk-testutil.h"

#define MAX_SEEN 16

/* Shared with the child: what it saw. */
struct seen {
        long loop_syscalls, control_syscalls, polls, sends, delivered, igmp_out;
        long nr[MAX_SEEN];
        int phase; /* 1 = in the loop, 2 = the control send */
};
static struct seen *S;

static struct rte_ring *rxr, *txr[2];
static struct rte_mempool *tpool;
static const uint8_t peer_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
        ucontext_t *uc = ucv;
        (void)sig;
        /* the trapped call did not run: make it fail as unknown (its return register
         * still holds the call number otherwise) */
#if defined(__x86_64__)
        uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#elif defined(__aarch64__)
        uc->uc_mcontext.regs[0] = (unsigned long long)-ENOSYS;
#else
        (void)uc;
#endif
        if (S->phase == 1) {
                if (S->loop_syscalls < MAX_SEEN)
                        S->nr[S->loop_syscalls] = si->si_syscall;
                S->loop_syscalls++;
        } else
                S->control_syscalls++;
}

/* Trap every system call but the ones a signal return and exiting need. */
static int trap_all_syscalls(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 3, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ? -errno : 0;
}

static void inject(const uint8_t *f, size_t len)
{
        struct rte_mbuf *m = rte_pktmbuf_alloc(tpool);
        if (!m)
                abort();
        memcpy(rte_pktmbuf_append(m, (uint16_t)len), f, len);
        if (rte_ring_enqueue(rxr, m) != 0)
                abort();
}

static long drain(int qi)
{
        struct rte_mbuf *m = NULL;
        long n = 0;
        while (rte_ring_dequeue(txr[qi], (void **)&m) == 0) {
                rte_pktmbuf_free(m);
                n++;
        }
        return n;
}

static void on_dgram(void *clientd, void *ep_clientd, const uint8_t *data, size_t len,
                     const struct sockaddr_in *src)
{
        (void)clientd;
        (void)ep_clientd;
        (void)data;
        (void)len;
        (void)src;
        S->delivered++;
}

/* The child: poll, receive, send, let the IGMP timers fire, all under the filter. */
static void child(struct tr_port *port, struct tr_endpoint *ep, const uint8_t *udp, size_t udp_len)
{
        struct tr_queue *q = tr_port_queue(port, 0);
        struct sockaddr_in peer = t_sin("10.0.0.2", 4000), self = t_sin("127.0.0.1", 4000);
        struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSYS, &sa, NULL) < 0 || trap_all_syscalls() < 0)
                syscall(SYS_exit_group, 3);
        S->phase = 1;
        uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 20; /* 50 ms: timers of 1 ms fire */
        for (long i = 0; i < 20000 || rte_get_tsc_cycles() < end; i++) {
                if (i % 4 == 0)
                        inject(udp, udp_len);
                tr_poll(q, on_dgram, NULL);
                S->polls++;
                if (i % 8 == 0 && tr_send(q, ep, &peer, "ping", 4) == 1)
                        S->sends++;
                drain(0);
                S->igmp_out += drain(1);
        }
        S->phase = 2;
        (void)tr_send(q, ep, &self, "host-local", 10); /* a sendto: must be trapped */
        /* the raw call: _exit would run the sanitizers' exit hooks (leak checks) first */
        syscall(SYS_exit_group, 0);
}

int main(void)
{
        t_eal_start("syscalls", NULL);
        S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        rxr = rte_ring_create("s-rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[0] = rte_ring_create("s-tx0", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        txr[1] = rte_ring_create("s-tx1", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        tpool = rte_pktmbuf_pool_create("s-pool", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        if (S == MAP_FAILED || !rxr || !txr[0] || !txr[1] || !tpool)
                TEST_SKIP("cannot create rings/pool: %s", rte_strerror(rte_errno));
        int id = rte_eth_from_rings("net_ring_s", &rxr, 1, txr, 2, 0);
        if (id < 0)
                TEST_SKIP("rte_eth_from_rings failed: %s", rte_strerror(rte_errno));
        /* host-local on (the default), IGMP repeats every millisecond or so */
        struct tr_port_config cfg = { .port_id = (uint16_t)id, .rx_ring = 256, .tx_ring = 256,
                                      .ipv4 = t_ip4("10.0.0.1"), .prefix_len = 24, .igmp_robustness = 7,
                                      .igmp_unsolicited_ms = 1 };
        struct tr_port *port;
        char err[256] = "";
        int r = tr_port_open(&cfg, &port, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "tr_port_open: %s\n", err);
        CHECK_INT(r, 0);
        if (r < 0)
                return test_done();
        struct tr_endpoint *ep;
        struct sockaddr_in any = t_sin(NULL, 4000);
        CHECK_INT(tr_endpoint_open(port, &any, NULL, &ep), 0);
        CHECK_INT(tr_port_join(port, t_ip4("239.1.2.3")), 0);

        /* the peer's MAC, learnt from its request for us */
        uint8_t f[128], our_mac[6];
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        tr_port_mac(port, our_mac);
        inject(f, tr_frame_build_arp(f, 1, bc, peer_mac, t_ip4("10.0.0.2"), NULL, t_ip4("10.0.0.1")));
        tr_poll(tr_port_queue(port, 0), on_dgram, NULL);
        drain(0);
        drain(1);
        /* a datagram from the peer to the endpoint */
        memcpy(f + TR_UDP_HDRS, "data", 4);
        struct tr_udp_hdr_args a = { .dst_mac = our_mac, .src_mac = peer_mac, .ip_src = t_ip4("10.0.0.2"),
                                     .ip_dst = t_ip4("10.0.0.1"), .src_port = 4000, .dst_port = 4000,
                                     .ttl = 64, .ip_csum = true, .udp_csum = true };
        CHECK_INT(tr_frame_build_udp(f, 4, &a), 0);
        memset(f + TR_UDP_HDRS + 4, 0, 60 - TR_UDP_HDRS - 4);

        pid_t pid = fork();
        if (pid == 0)
                child(port, ep, f, 60);
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fprintf(stderr, "child: status %#x\n", st);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        printf("child: %ld polls, %ld delivered, %ld sent, %ld IGMP reports; system calls: %ld in the loop,"
               " %ld for the host-local send\n",
               S->polls, S->delivered, S->sends, S->igmp_out, S->loop_syscalls, S->control_syscalls);
        for (long i = 0; i < S->loop_syscalls && i < MAX_SEEN; i++)
                fprintf(stderr, "system call %ld on the polling thread\n", S->nr[i]);
        CHECK_INT(S->loop_syscalls, 0);
        CHECK(S->control_syscalls >= 1); /* the trap works */
        CHECK(S->polls >= 20000);
        CHECK_INT(S->delivered, (S->polls + 3) / 4);
        CHECK(S->sends >= S->polls / 8);
        CHECK(S->igmp_out >= 1); /* the timers fired inside the loop */

        tr_endpoint_close(ep);
        tr_port_close(port);
        tr_eal_cleanup();
        return test_done();
}
