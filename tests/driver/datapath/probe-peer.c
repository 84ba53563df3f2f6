/* SPDX-License-Identifier: Apache-2.0 */
/* A peer for the datapath tests: the transport's probe responder as a running driver has
 * it (a port on net_af_packet with probe_port set), polled until SIGTERM/SIGINT; prints
 * "ready" once the port is open and its probe counters at exit. Usage:
 * probe-peer IFACE A.B.C.D/LEN PROBE_PORT */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
        (void)s;
        stop = 1;
}

static void on_dgram(void *c, void *e, const uint8_t *d, size_t l, const struct sockaddr_in *s)
{
        (void)c, (void)e, (void)d, (void)l, (void)s;
}

int main(int argc, char **argv)
{
        static struct tr_eal_args a;
        char eal[512], err[256] = "", ip[32];
        if (argc != 4)
                return 2;
        snprintf(ip, sizeof(ip), "%s", argv[2]);
        char *slash = strchr(ip, '/');
        if (!slash)
                return 2;
        *slash = '\0';
        struct in_addr in;
        if (inet_pton(AF_INET, ip, &in) != 1)
                return 2;
        snprintf(eal, sizeof(eal), "--no-huge --no-pci -m 128 --file-prefix sl-dpp-%d --log-level=error --vdev=net_af_packet0,iface=%s,qpairs=2",
                 (int)getpid(), argv[1]);
        if (tr_eal_args_split(eal, strlen(eal), "probe-peer", &a) != 0 || tr_eal_init(&a) < 0) {
                fprintf(stderr, "probe-peer: EAL did not start\n");
                return 1;
        }
        uint16_t id;
        struct tr_port *p;
        struct tr_port_config cfg = { .ipv4 = in.s_addr, .prefix_len = (uint8_t)atoi(slash + 1), .link_wait_ms = 30000,
                                      .no_host_local = true, .probe_port = (uint16_t)atoi(argv[3]) };
        if (tr_port_find("net_af_packet0", &id) < 0)
                return 1;
        cfg.port_id = id;
        if (tr_port_open(&cfg, &p, err, sizeof(err)) < 0) {
                fprintf(stderr, "probe-peer: %s\n", err);
                return 1;
        }
        signal(SIGTERM, on_sig);
        signal(SIGINT, on_sig);
        printf("ready\n");
        fflush(stdout);
        struct tr_queue *q = tr_port_queue(p, 0);
        while (!stop) {
                if (tr_poll(q, on_dgram, NULL) == 0)
                        usleep(20); /* a test peer on a loaded 2-CPU machine: do not hog it */
        }
        struct tr_counters c;
        tr_port_counters(p, &c);
        printf("probe_rx %llu probe_tx %llu probe_rate_drops %llu\n", (unsigned long long)c.probe_rx,
               (unsigned long long)c.probe_tx, (unsigned long long)c.drops[TR_DROP_PROBE_RATE]);
        fflush(stdout);
        tr_port_close(p);
        tr_eal_cleanup();
        return 0;
}
