/* SPDX-License-Identifier: Apache-2.0 */
/* The data path, run by each polling thread on its own queue: tr_send / tr_sendmmsg
 * (next hop, mbufs from the port's pool, header build, one tx_burst) and tr_poll (one
 * rx_burst, parse, demux, callback; ARP/IGMP handed to control.c; host-local sockets and
 * IGMP timers on queue 0). Never allocates, never logs, counts instead. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "port_internal.h"
#include "sizing.h"

#define TR_SLOW_EVERY 16 /* polls between two looks at the kernel sockets and IGMP timers */

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Destination MAC for dst: 1 resolved, 0 would block (request sent or pending), <0 error. */
static int next_hop_mac(struct tr_queue *q, uint32_t dst, uint8_t mac[6])
{
        struct tr_port *p = q->port;
        uint32_t hop = dst;

        if (tr_ipv4_is_multicast(dst)) {
                tr_ipv4_mcast_mac(dst, mac);
                return 1;
        }
        if (dst == 0xffffffffu || dst == (p->ip | ~p->mask)) {
                memcpy(mac, bcast_mac, 6);
                return 1;
        }
        if ((dst & p->mask) != (p->ip & p->mask)) {
                if (!p->gateway)
                        return -ENETUNREACH;
                hop = p->gateway;
        }
        uint64_t t = tr_now_ns(p);
        rte_spinlock_lock(&p->arp_lock);
        enum tr_arp_result a = tr_arp_lookup(&p->arp, hop, t, mac);
        if (a == TR_ARP_SEND_REQUEST) {
                uint8_t f[TR_ETH_MIN_FRAME];
                size_t n = tr_frame_build_arp(f, 1, bcast_mac, p->mac, p->ip, NULL, hop);
                if (tr_ctl_tx_locked(p, f, n) == 0)
                        TR_CNT_INC(q, arp_requests_tx);
        }
        rte_spinlock_unlock(&p->arp_lock);
        if (a == TR_ARP_HIT)
                return 1;
        TR_CNT_INC(q, tx_wouldblock_arp);
        return 0;
}

static int host_local_send(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
                           const void *data, size_t len)
{
        struct sockaddr_in to = *dst;
        int fd = ep->kfd;
        if (fd < 0)
                return -ENETUNREACH;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (sendto(fd, data, len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) < 0)
                return errno == EAGAIN || errno == ENOBUFS ? 0 : -errno;
        TR_CNT_INC(q, host_local_tx);
        return 1;
}

/* Write one datagram into m (fresh from the pool). */
static inline void build(struct tr_queue *q, struct rte_mbuf *m, const struct tr_endpoint *ep,
                         uint32_t src_ip, const uint8_t dmac[6], const struct sockaddr_in *dst,
                         const void *data, size_t len)
{
        struct tr_port *p = q->port;
        uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
        memcpy(d + TR_UDP_HDRS, data, len);
        struct tr_udp_hdr_args a = {
                .dst_mac = dmac, .src_mac = p->mac, .ip_src = src_ip, .ip_dst = dst->sin_addr.s_addr,
                .src_port = ep->lport, .dst_port = ntohs(dst->sin_port), .ip_id = q->ip_id++,
                .ttl = p->ttl, .ip_csum = !p->ip_csum_offload, .udp_csum = !p->udp_csum_offload,
        };
        (void)tr_frame_build_udp(d, len, &a);
        size_t flen = TR_UDP_HDRS + len;
        if (flen < TR_ETH_MIN_FRAME) {
                memset(d + flen, 0, TR_ETH_MIN_FRAME - flen);
                flen = TR_ETH_MIN_FRAME;
        }
        m->data_len = (uint16_t)flen;
        m->pkt_len = (uint32_t)flen;
        if (p->udp_csum_offload) {
                struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + TR_ETH_HLEN);
                struct rte_udp_hdr *u = (struct rte_udp_hdr *)(d + TR_ETH_HLEN + TR_IP_HLEN);
                m->l2_len = TR_ETH_HLEN;
                m->l3_len = TR_IP_HLEN;
                m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
                u->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
        }
}

static inline uint32_t source_ip(const struct tr_port *p, const struct tr_endpoint *ep)
{
        return ep->ip && !tr_ipv4_is_multicast(ep->ip) ? ep->ip : p->ip;
}

/* Which MAC each of the next datagrams goes to (one ARP lookup per run of datagrams to
 * the same destination), up to one burst. A host-local datagram at the head goes to the
 * kernel at once (*done advances); one later in the run ends it, to keep the order.
 * Returns how many can be built; *err is set (1 would block, <0 error) when it stopped
 * early for a reason other than the burst size. */
static unsigned tx_plan(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *msgs,
                        size_t n, size_t *done, uint8_t (*macs)[6], const uint8_t **mac_of, int *err)
{
        struct tr_port *p = q->port;
        unsigned k = 0;
        uint32_t last_dst = 0;
        while (*done + k < n && k < p->burst) {
                const struct tr_msg *m = &msgs[*done + k];
                uint32_t dip = m->dst->sin_addr.s_addr;
                if (unlikely(m->len > p->mtu)) {
                        *err = -EMSGSIZE;
                        break;
                }
                if (unlikely(m->dst->sin_family != AF_INET)) {
                        *err = -EAFNOSUPPORT;
                        break;
                }
                if (unlikely(tr_is_host_local(p, dip))) {
                        if (k) /* keep order: send what came before first */
                                break;
                        int r = host_local_send(q, ep, m->dst, m->data, m->len);
                        if (r <= 0) {
                                *err = r ? r : 1;
                                break;
                        }
                        (*done)++;
                        continue;
                }
                if (k && dip == last_dst) {
                        mac_of[k] = mac_of[k - 1];
                } else {
                        int r = next_hop_mac(q, dip, macs[k]);
                        mac_of[k] = macs[k];
                        if (r <= 0) {
                                *err = r ? r : 1;
                                break;
                        }
                        last_dst = dip;
                }
                k++;
        }
        return k;
}

int tr_sendmmsg(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *msgs, size_t n)
{
        struct tr_port *p = q->port;
        struct rte_mbuf *out[TR_MAX_BURST];
        uint8_t macs[TR_MAX_BURST][6];
        const uint8_t *mac_of[TR_MAX_BURST]; /* datagram -> its resolved MAC in macs */
        size_t done = 0;
        uint32_t src = source_ip(p, ep);
        int err = 0;

        while (done < n && !err) {
                /* 1. how many of the next datagrams can go, and to which MAC */
                unsigned k = tx_plan(q, ep, msgs, n, &done, macs, mac_of, &err);
                if (k == 0)
                        break;
                /* 2. mbufs for all of them at once, or would-block */
                if (unlikely(rte_pktmbuf_alloc_bulk(p->pool, out, k) != 0)) {
                        TR_CNT_INC(q, tx_wouldblock_nombuf);
                        break;
                }
                uint64_t bytes = 0;
                for (unsigned i = 0; i < k; i++) {
                        const struct tr_msg *m = &msgs[done + i];
                        build(q, out[i], ep, src, mac_of[i], m->dst, m->data, m->len);
                        bytes += m->len;
                }
                /* 3. hand them to the NIC; what it does not take is freed, not queued */
                uint16_t sent = rte_eth_tx_burst(p->port_id, q->qid, out, (uint16_t)k);
                if (unlikely(sent < k)) {
                        for (unsigned i = sent; i < k; i++)
                                bytes -= msgs[done + i].len;
                        rte_pktmbuf_free_bulk(out + sent, k - sent);
                        TR_CNT_INC(q, tx_wouldblock_ring);
                        err = 1;
                }
                TR_CNT_ADD(q, tx_datagrams, sent);
                TR_CNT_ADD(q, tx_bytes, bytes);
                done += sent;
        }
        if (done == 0 && err < 0)
                return err;
        return (int)done;
}

int tr_send(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
            const void *data, size_t len)
{
        struct tr_msg m = { .dst = dst, .data = data, .len = len };
        return tr_sendmmsg(q, ep, &m, 1);
}

static bool joined(const struct tr_port *p, uint32_t group)
{
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group)
                        return true;
        return false;
}

/* Read the host-local sockets the watcher flagged (at most a burst each; one with more
 * stays flagged). Only when a bit is set: no system call otherwise. */
static int poll_host_local(struct tr_queue *q, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        int delivered = 0;
        uint8_t buf[RTE_MBUF_DEFAULT_DATAROOM]; /* above the MTU: truncated, then dropped */
        uint64_t ready = __atomic_exchange_n(&p->hl_ready, 0, __ATOMIC_ACQUIRE), more = 0;

        /* endpoints are closed only by their owner's thread under the write lock, so the
         * pointers stay valid while this thread holds the read lock */
        rte_rwlock_read_lock(&p->bind_lock);
        while (ready) {
                unsigned i = (unsigned)__builtin_ctzll(ready);
                struct tr_endpoint *ep = p->hl_eps[i];
                ready &= ready - 1;
                if (!ep)
                        continue;
                int k = 0;
                for (; k < p->burst; k++) {
                        struct sockaddr_in src;
                        socklen_t sl = sizeof(src);
                        ssize_t r = recvfrom(ep->kfd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
                                             (struct sockaddr *)&src, &sl);
                        if (r < 0) {
                                if (errno == EAGAIN || errno == EWOULDBLOCK)
                                        break;
                                continue; /* a pending error (ICMP port unreachable) is consumed */
                        }
                        if (r > p->mtu) { /* MSG_TRUNC: r is the datagram's real length */
                                TR_CNT_DROP(q, TR_DROP_TOO_BIG);
                                continue;
                        }
                        TR_CNT_INC(q, host_local_rx);
                        fn(clientd, ep->clientd, buf, (size_t)r, &src);
                        delivered++;
                }
                if (k == p->burst) /* not drained: the watcher will not tell us again */
                        more |= 1ull << i;
        }
        rte_rwlock_read_unlock(&p->bind_lock);
        if (more)
                __atomic_fetch_or(&p->hl_ready, more, __ATOMIC_RELEASE);
        return delivered;
}

/* One received frame: parse, filter, hand ARP/IGMP to the control plane, deliver UDP
 * (adding its payload to *bytes). Caller holds bind_lock as a reader. Returns 1 when a
 * datagram was delivered, else 0. */
static inline int rx_one(const struct tr_port *p, struct tr_queue *q, struct rte_mbuf *m,
                         tr_recv_fn fn, void *clientd, uint64_t *bytes)
{
        const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
        struct tr_frame f;
        unsigned flags = 0;
        uint64_t ol = m->ol_flags;

        if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
                flags |= TR_PARSE_IP_CSUM_DONE;
        if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
                flags |= TR_PARSE_L4_CSUM_DONE;
        tr_frame_parse(d, m->data_len, flags, &f);
        if (f.kind == TR_FRAME_DROP) {
                TR_CNT_DROP(q, f.drop);
                return 0;
        }
        if (!(f.dst_mac[0] & 1) && memcmp(f.dst_mac, p->mac, 6) != 0) {
                TR_CNT_DROP(q, TR_DROP_NOT_OUR_MAC);
                return 0;
        }
        if (f.kind == TR_FRAME_ARP) {
                tr_ctl_on_arp(q, &f);
                return 0;
        }
        if (f.kind == TR_FRAME_IGMP) {
                tr_ctl_on_igmp(q, &f);
                return 0;
        }
        if (f.ip_dst != p->ip && f.ip_dst != 0xffffffffu && f.ip_dst != (p->ip | ~p->mask) &&
            !(tr_ipv4_is_multicast(f.ip_dst) && joined(p, f.ip_dst))) {
                TR_CNT_DROP(q, TR_DROP_NOT_FOR_US);
                return 0;
        }
        struct tr_endpoint *ep = tr_demux_lookup(&p->demux, f.ip_dst, f.dst_port);
        if (!ep) {
                TR_CNT_DROP(q, TR_DROP_NO_ENDPOINT);
                return 0;
        }
        struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(f.src_port),
                                   .sin_addr.s_addr = f.ip_src };
        fn(clientd, ep->clientd, d + f.payload_off, f.payload_len, &src);
        *bytes += f.payload_len;
        return 1;
}

static int poll_rxq(struct tr_queue *q, uint16_t rxq, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        struct rte_mbuf *pkts[TR_MAX_BURST];
        int delivered = 0;

        uint16_t n = rte_eth_rx_burst(p->port_id, rxq, pkts, p->burst);
        if (n == 0)
                return delivered;
        TR_CNT_ADD(q, rx_frames, n);
        uint64_t bytes = 0;
        rte_rwlock_read_lock(&p->bind_lock);
        for (uint16_t i = 0; i < n; i++) {
                if (i + 1 < n)
                        rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
                delivered += rx_one(p, q, pkts[i], fn, clientd, &bytes);
        }
        rte_rwlock_read_unlock(&p->bind_lock);
        rte_pktmbuf_free_bulk(pkts, n);
        TR_CNT_ADD(q, rx_bytes, bytes);
        TR_CNT_ADD(q, rx_datagrams, (uint64_t)delivered);
        return delivered;
}

/* All receiving happens on queue 0's thread: every RX queue of the device (RSS is off,
 * but memif hands us on RX queue i what its peer sent on TX queue i, and the control
 * queue has its RX mirror), the host-local sockets, the IGMP timers. Other queues are
 * for sending. */
int tr_poll(struct tr_queue *q, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        int delivered = 0;

        if (q->qid != 0)
                return 0;
        if (unlikely((q->polls++ % TR_SLOW_EVERY) == 0)) {
                if (unlikely(__atomic_load_n(&p->hl_ready, __ATOMIC_RELAXED) != 0))
                        delivered += poll_host_local(q, fn, clientd);
                tr_ctl_igmp_tick(p);
        }
        delivered += poll_rxq(q, 0, fn, clientd);
        for (uint16_t r = 1; unlikely(r < p->n_rxq); r++)
                delivered += poll_rxq(q, r, fn, clientd);
        return delivered;
}
