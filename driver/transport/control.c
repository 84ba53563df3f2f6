/* SPDX-License-Identifier: Apache-2.0 */
/* The control plane of a port: the control TX queue (ARP and IGMP frames from any
 * thread, under arp_lock), answering ARP, gratuitous ARP, the multicast filter, joins and
 * leaves, and the glue between received queries and the pure IGMP timers (igmp.c). Never
 * logs; never allocates after open. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "port_internal.h"

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

int tr_ctl_tx_locked(struct tr_port *p, const uint8_t *frame, size_t len)
{
        struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
        if (!m)
                return -ENOBUFS;
        uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
        if (!d) {
                rte_pktmbuf_free(m);
                return -ENOBUFS;
        }
        memcpy(d, frame, len);
        if (rte_eth_tx_burst(p->port_id, p->ctl_qid, &m, 1) != 1) {
                rte_pktmbuf_free(m);
                return -EAGAIN;
        }
        return 0;
}

int tr_port_announce(struct tr_port *p)
{
        uint8_t f[TR_ETH_MIN_FRAME];
        size_t n = tr_frame_build_arp(f, 1, bcast_mac, p->mac, p->ip, NULL, p->ip);
        rte_spinlock_lock(&p->arp_lock);
        int r = tr_ctl_tx_locked(p, f, n);
        if (r == 0)
                __atomic_store_n(&p->ctl.garp_tx, p->ctl.garp_tx + 1, __ATOMIC_RELAXED);
        rte_spinlock_unlock(&p->arp_lock);
        return r;
}

void tr_ctl_arp_reprobe_locked(struct tr_queue *q, uint32_t ip, const uint8_t *mac)
{
        struct tr_port *p = q->port;
        uint8_t f[TR_ETH_MIN_FRAME];
        size_t n = tr_frame_build_arp(f, 1, mac ? mac : bcast_mac, p->mac, p->ip, NULL, ip);
        if (tr_ctl_tx_locked(p, f, n) == 0) {
                TR_CNT_INC(q, arp_requests_tx);
                TR_CNT_INC(q, arp_reprobes_tx);
        }
}

void tr_ctl_on_arp(struct tr_queue *q, const struct tr_frame *f)
{
        struct tr_port *p = q->port;
        uint64_t t = tr_now_ns(p);
        bool for_us = f->arp_tpa == p->ip;

        if (f->arp_op == 1)
                TR_CNT_INC(q, arp_requests_rx);
        else
                TR_CNT_INC(q, arp_replies_rx);
        if (f->arp_spa == p->ip) /* someone claims our address (or our own GARP looped) */
                return;
        rte_spinlock_lock(&p->arp_lock);
        if (f->arp_spa != 0 && tr_arp_update(&p->arp, f->arp_spa, f->arp_sha, for_us, t))
                tr_flows_invalidate(p); /* a MAC may have changed */
        if (f->arp_op == 1 && for_us) {
                if (tr_rate_allow(&p->reply_rate, t)) {
                        uint8_t fr[TR_ETH_MIN_FRAME];
                        size_t n = tr_frame_build_arp(fr, 2, f->arp_sha, p->mac, p->ip, f->arp_sha, f->arp_spa);
                        if (tr_ctl_tx_locked(p, fr, n) == 0)
                                TR_CNT_INC(q, arp_replies_tx);
                } else
                        TR_CNT_DROP(q, TR_DROP_ARP_RATE);
        }
        rte_spinlock_unlock(&p->arp_lock);
}

void tr_ctl_flows_expired(struct tr_port *p)
{
        rte_spinlock_lock(&p->arp_lock);
        if (rte_get_tsc_cycles() >= p->flows_expire) {
                __atomic_store_n(&p->flows_expire, UINT64_MAX, __ATOMIC_RELAXED);
                tr_flows_invalidate(p); /* each flow resolves again: the expired entry is asked for */
        }
        rte_spinlock_unlock(&p->arp_lock);
}

/* Send IGMP reports; caller holds arp_lock. */
static void igmp_send_locked(struct tr_port *p, const struct tr_igmp_report *rep, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                uint8_t f[64];
                size_t len = tr_frame_build_igmp(f, rep[i].version, rep[i].leave, p->mac, p->ip, rep[i].group);
                if (tr_ctl_tx_locked(p, f, len) == 0)
                        __atomic_store_n(&p->ctl.igmp_reports_tx, p->ctl.igmp_reports_tx + 1, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&p->igmp_next, tr_igmp_next(&p->igmp), __ATOMIC_RELAXED);
}

/* The poller holds bind_lock as a reader, so p->groups is stable. Nothing is sent here:
 * the answer goes out when its timer fires. */
void tr_ctl_on_igmp(struct tr_queue *q, const struct tr_frame *f)
{
        struct tr_port *p = q->port;
        uint64_t t = tr_now_ns(p);

        TR_CNT_INC(q, igmp_rx);
        if (f->igmp_type != 0x11) /* not a query: nothing to schedule, no need to lock */
                return;
        rte_spinlock_lock(&p->arp_lock);
        if (tr_igmp_query(&p->igmp, f, p->groups, p->n_groups, t))
                __atomic_store_n(&p->igmp_next, tr_igmp_next(&p->igmp), __ATOMIC_RELAXED);
        rte_spinlock_unlock(&p->arp_lock);
}

void tr_ctl_igmp_fire(struct tr_port *p, uint64_t now_ns)
{
        struct tr_igmp_report rep[2 * TR_IGMP_SLOTS];
        rte_spinlock_lock(&p->arp_lock);
        unsigned n = tr_igmp_due(&p->igmp, now_ns, rep, sizeof(rep) / sizeof(rep[0]));
        igmp_send_locked(p, rep, n);
        rte_spinlock_unlock(&p->arp_lock);
}

/* A join or leave: the first report now, the rest of the Robustness Variable later. */
static void igmp_change(struct tr_port *p, uint32_t group, bool leave)
{
        struct tr_igmp_report rep;
        rte_spinlock_lock(&p->arp_lock);
        tr_igmp_change(&p->igmp, group, leave, tr_now_ns(p), &rep);
        igmp_send_locked(p, &rep, 1);
        rte_spinlock_unlock(&p->arp_lock);
}

/* Push the joined groups' MACs (and the all-systems group's, for queries) to the device;
 * allmulticast when it has no list. */
int tr_ctl_mc_filter(struct tr_port *p)
{
        struct rte_ether_addr macs[TR_MAX_GROUPS + 1];
        unsigned n = p->n_groups;
        for (unsigned i = 0; i < n; i++)
                tr_ipv4_mcast_mac(p->groups[i], macs[i].addr_bytes);
        if (n) /* General Queries go to 224.0.0.1 (all systems) */
                tr_ipv4_mcast_mac(htonl(0xe0000001u), macs[n++].addr_bytes);
        int r = rte_eth_dev_set_mc_addr_list(p->port_id, n ? macs : NULL, n);
        if (r == -ENOTSUP || r == -EIO) {
                r = p->n_groups ? rte_eth_allmulticast_enable(p->port_id) : 0;
                if (r == -ENOTSUP)
                        r = 0; /* virtual devices without filters pass everything */
        }
        return r;
}

int tr_port_join(struct tr_port *p, uint32_t group)
{
        int r = 0;
        if (!tr_ipv4_is_multicast(group))
                return -EINVAL;
        rte_rwlock_write_lock(&p->bind_lock);
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group)
                        r = -EALREADY;
        if (r == 0 && p->n_groups >= TR_MAX_GROUPS)
                r = -ENOSPC;
        if (r == 0) {
                p->groups[p->n_groups++] = group;
                r = tr_ctl_mc_filter(p);
                if (r < 0)
                        p->n_groups--;
        }
        rte_rwlock_write_unlock(&p->bind_lock);
        if (r < 0)
                return r;
        igmp_change(p, group, false);
        return 0;
}

int tr_port_leave(struct tr_port *p, uint32_t group)
{
        int r = -ENOENT;
        rte_rwlock_write_lock(&p->bind_lock);
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group) {
                        p->groups[i] = p->groups[--p->n_groups];
                        (void)tr_ctl_mc_filter(p);
                        r = 0;
                        break;
                }
        rte_rwlock_write_unlock(&p->bind_lock);
        if (r == 0)
                igmp_change(p, group, true);
        return r;
}

int tr_port_resolve(struct tr_port *p, uint32_t ip, uint8_t ret_mac[6])
{
        uint32_t hop = ip;
        if ((ip & p->mask) != (p->ip & p->mask)) {
                if (!p->gateway)
                        return -ENETUNREACH;
                hop = p->gateway;
        }
        uint8_t mac[6];
        rte_spinlock_lock(&p->arp_lock);
        enum tr_arp_result a = tr_arp_lookup(&p->arp, hop, tr_now_ns(p), mac);
        if (a == TR_ARP_SEND_REQUEST || a == TR_ARP_HIT_PROBE_BCAST || a == TR_ARP_HIT_PROBE) {
                uint8_t f[TR_ETH_MIN_FRAME];
                size_t n = tr_frame_build_arp(f, 1, a == TR_ARP_HIT_PROBE ? mac : bcast_mac, p->mac, p->ip, NULL, hop);
                if (tr_ctl_tx_locked(p, f, n) == 0)
                        __atomic_store_n(&p->ctl.arp_requests_tx, p->ctl.arp_requests_tx + 1, __ATOMIC_RELAXED);
        }
        rte_spinlock_unlock(&p->arp_lock);
        if (a == TR_ARP_SEND_REQUEST || a == TR_ARP_WAIT)
                return 0;
        memcpy(ret_mac, mac, 6);
        return 1;
}
