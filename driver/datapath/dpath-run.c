/* SPDX-License-Identifier: Apache-2.0 */
/* The datapath check's DPDK half: the EAL and the ports as the driver will open them,
 * link-up, ARP, probe round trips (the receiver's own probe responder answers the
 * sender's probes; a peer driver's answers those to SPINLANE_DATAPATH_PEER), then every
 * port closed and the EAL cleaned up. One thread; never logs: results go to the caller. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pause.h>

#include "dpath.h"
#include "probe_msg.h"
#include "spa-env.h"
#include "transport.h"

struct dp {
        const struct dpath_opts *o;
        struct tr_port *tp[2];
        unsigned n;
        uint64_t hz;
        /* the probe in flight */
        uint32_t id, seq;
        bool answered;
        uint64_t rx_tsc;
};

static uint64_t tsc(void)
{
        return rte_get_tsc_cycles();
}

static double ms_since(const struct dp *d, uint64_t t0)
{
        return (double)(tsc() - t0) * 1000.0 / (double)d->hz;
}

static void on_dgram(void *clientd, void *ep_clientd, const uint8_t *data, size_t len, const struct sockaddr_in *src)
{
        struct dp *d = clientd;
        struct tr_probe p;
        (void)ep_clientd;
        (void)src;
        if (tr_probe_parse(data, len, &p) == 0 && p.type == TR_PROBE_REPLY && p.id == d->id && p.seq == d->seq &&
            !d->answered) {
                d->answered = true;
                d->rx_tsc = tsc();
        }
}

/* Poll every port once: receive (our answers), and the receiver's responder. */
static void poll_all(struct dp *d)
{
        for (unsigned i = 0; i < d->n; i++)
                if (d->tp[i])
                        tr_poll(tr_port_queue(d->tp[i], 0), on_dgram, d);
}

/* Resolve ip from port tp, polling everything meanwhile: ms, or -1 after the bound. */
static double resolve(struct dp *d, struct tr_port *tp, uint32_t ip)
{
        uint8_t mac[6];
        uint64_t t0 = tsc(), end = t0 + d->hz * d->o->timeout_ms / 1000;
        while (tsc() < end) {
                int r = tr_port_resolve(tp, ip, mac);
                if (r > 0)
                        return ms_since(d, t0);
                if (r < 0)
                        return -1;
                poll_all(d);
        }
        return -1;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* Probe dst from tp: rounds sequential round trips, one at a time, at most one per
 * millisecond (the responder's rate limit stays out of the figures). The first answer
 * may take the whole bound (a path warming up), each later one 200 ms; three lost in a
 * row end it. */
static void measure(struct dp *d, struct tr_port *tp, uint32_t dst_ip, uint16_t dst_port, struct dpath_rtt *ret)
{
        const struct dpath_opts *o = d->o;
        uint64_t *rtt = calloc(o->rounds ? o->rounds : 1, sizeof(uint64_t));
        struct tr_endpoint *ep = NULL;
        struct sockaddr_in any = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
        to.sin_addr.s_addr = dst_ip;
        to.sin_port = htons(dst_port);
        ret->arp_ms = resolve(d, tp, dst_ip);
        if (!rtt || ret->arp_ms < 0 || tr_endpoint_open(tp, &any, NULL, &ep) < 0) {
                free(rtt);
                return;
        }
        d->id = (uint32_t)tsc() ^ 0x5a5a5a5au;
        unsigned lost_run = 0;
        uint64_t last = 0, ms = d->hz / 1000;
        for (unsigned i = 0; i < o->rounds && lost_run < 3; i++) {
                uint8_t buf[DPATH_PROBE_LEN];
                while (tsc() - last < ms)
                        poll_all(d);
                tr_probe_build(buf, sizeof(buf), TR_PROBE_REQUEST, d->id, i);
                d->seq = i;
                d->answered = false;
                uint64_t bound = i == 0 ? (uint64_t)o->timeout_ms : (o->timeout_ms < 200 ? o->timeout_ms : 200);
                uint64_t t0 = tsc(), end = t0 + d->hz * bound / 1000;
                int s;
                while ((s = tr_send(tr_port_queue(tp, 0), ep, &to, buf, sizeof(buf))) == 0 && tsc() < end)
                        poll_all(d);
                last = t0;
                ret->sent++;
                if (s != 1) {
                        lost_run++;
                        continue;
                }
                while (!d->answered && tsc() < end)
                        poll_all(d);
                if (!d->answered) {
                        lost_run++;
                        continue;
                }
                lost_run = 0;
                rtt[ret->answered++] = (d->rx_tsc - t0) * 1000000000ull / d->hz;
        }
        qsort(rtt, ret->answered, sizeof(uint64_t), cmp_u64);
        ret->p50_ns = dpath_percentile(rtt, ret->answered, 50);
        ret->p99_ns = dpath_percentile(rtt, ret->answered, 99);
        ret->max_ns = ret->answered ? rtt[ret->answered - 1] : 0;
        free(rtt);
        tr_endpoint_close(ep);
}

static void fill_role(struct dpath_port *p, const char *role, const struct spa_role *r)
{
        snprintf(p->role, sizeof(p->role), "%s", role);
        snprintf(p->device, sizeof(p->device), "%s", r->device);
        p->ip = r->ipv4;
        p->prefix_len = r->prefix_len;
        p->gateway = r->gateway;
}

static uint32_t mask_of(uint8_t len)
{
        return len >= 32 ? 0xffffffffu : htonl(~(0xffffffffu >> len));
}

static void open_port(struct dp *d, struct dpath_port *p, uint16_t n_queues, uint16_t probe_port, struct tr_port **ret)
{
        uint16_t id;
        char err[256] = "";
        *ret = NULL;
        int r = tr_port_find(p->device, &id);
        if (r < 0) {
                p->open_err = r;
                snprintf(p->open_msg, sizeof(p->open_msg), "no such DPDK port (check the -a/--vdev EAL arguments)");
                return;
        }
        struct tr_port_config pc = {
                .port_id = id, .ipv4 = p->ip, .prefix_len = p->prefix_len, .gateway = p->gateway,
                .n_queues = n_queues, .no_host_local = true, .probe_port = probe_port,
        };
        uint64_t t0 = tsc(), end = t0 + d->hz * d->o->timeout_ms / 1000;
        r = tr_port_open(&pc, ret, err, sizeof(err));
        if (r < 0) {
                p->open_err = r;
                snprintf(p->open_msg, sizeof(p->open_msg), "%s", err[0] ? err : strerror(-r));
                *ret = NULL;
                return;
        }
        while (!(p->link_up = tr_port_link_up(*ret)) && tsc() < end)
                rte_delay_us_sleep(1000);
        p->link_ms = ms_since(d, t0);
}

void dpath_run(const struct spa_config *cfg, const struct dpath_opts *o, struct dpath_result *ret)
{
        static struct tr_eal_args a;
        struct dp d = { .o = o };

        memset(ret, 0, sizeof(*ret));
        int r = tr_eal_args_split(cfg->eal_args, strlen(cfg->eal_args), "spinlane-datapath", &a);
        if (r == 0)
                r = tr_eal_init(&a);
        if (r < 0) {
                ret->eal_err = r;
                snprintf(ret->eal_msg, sizeof(ret->eal_msg), "%s", strerror(-r));
                return;
        }
        d.hz = rte_get_tsc_hz();
        if (cfg->shared) {
                ret->n_ports = 1;
                fill_role(&ret->port[0], "sender+receiver", &cfg->sender);
        } else {
                ret->n_ports = 2;
                fill_role(&ret->port[0], "sender", &cfg->sender);
                fill_role(&ret->port[1], "receiver", &cfg->receiver);
        }
        d.n = ret->n_ports;
        for (unsigned i = 0; i < d.n; i++)
                /* as many queues as the driver takes (spa-bindings.c: two on a shared port) */
                open_port(&d, &ret->port[i], cfg->shared ? 2 : 1, i == d.n - 1 ? o->probe_port : 0, &d.tp[i]);

        /* ARP: the peer when it is on the port's subnet, else the gateway */
        for (unsigned i = 0; i < d.n; i++) {
                struct dpath_port *p = &ret->port[i];
                if (!d.tp[i] || !p->link_up)
                        continue;
                uint32_t m = mask_of(p->prefix_len);
                if (o->peer_ip && (o->peer_ip & m) == (p->ip & m)) {
                        p->arp_target = o->peer_ip;
                        p->arp_target_is_peer = true;
                } else
                        p->arp_target = p->gateway;
                if (p->arp_target)
                        p->arp_ms = resolve(&d, d.tp[i], p->arp_target);
        }

        /* round trips, from the sender's port */
        struct dpath_port *s = &ret->port[0];
        if (d.tp[0] && s->link_up && (!s->arp_target || s->arp_ms >= 0)) {
                struct dpath_port *rp = &ret->port[1];
                uint32_t m = mask_of(s->prefix_len);
                bool pair = d.n == 2 && d.tp[1] && rp->link_up && (rp->ip & m) == (s->ip & m);
                char ip[16];
                if (pair) {
                        struct dpath_rtt *t = &s->rtt[s->n_rtt++];
                        inet_ntop(AF_INET, &rp->ip, ip, sizeof(ip));
                        snprintf(t->to, sizeof(t->to), "receiver %s %s:%u", rp->device, ip, o->probe_port);
                        measure(&d, d.tp[0], rp->ip, o->probe_port, t);
                }
                if (o->peer_ip && (s->ip & m) != (o->peer_ip & m) && !s->gateway)
                        snprintf(s->note, sizeof(s->note), "SPINLANE_DATAPATH_PEER is outside the subnet and the NIC has no gateway");
                else if (o->peer_ip) {
                        struct dpath_rtt *t = &s->rtt[s->n_rtt++];
                        inet_ntop(AF_INET, &o->peer_ip, ip, sizeof(ip));
                        snprintf(t->to, sizeof(t->to), "peer %s:%u", ip, o->peer_port);
                        t->peer = true;
                        measure(&d, d.tp[0], o->peer_ip, o->peer_port, t);
                }
                if (!s->n_rtt && !s->note[0])
                        snprintf(s->note, sizeof(s->note), "%s",
                                 d.n == 1 ? "one NIC and no SPINLANE_DATAPATH_PEER"
                                          : "the two NICs are not in one subnet and no SPINLANE_DATAPATH_PEER");
        }
        for (unsigned i = 0; i < d.n; i++)
                tr_port_close(d.tp[i]);
        tr_eal_cleanup();
}
