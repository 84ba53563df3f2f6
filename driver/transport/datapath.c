/* SPDX-License-Identifier: Apache-2.0 */
/* The data path, run by each polling thread on its own queue: tr_send / tr_sendmmsg (a
 * prepared flow's headers, or the next hop resolved for a new one; mbufs from the port's
 * pool; one tx_burst) and tr_poll of queue 0 (every RX queue, the inline UDP parse or the
 * full one, demux, callback; ARP/IGMP handed to control.c; every 16th poll the host-local
 * sockets the watcher flagged and the IGMP timers). Never allocates, never logs, makes no
 * system call without host-local traffic; counts instead. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
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

/* Destination MAC for dst: 1 resolved (with *ret_until, the TSC cycle it holds until),
 * 0 would block (request sent or pending), <0 error. */
static int next_hop_mac(struct tr_queue *q, uint32_t dst, uint8_t mac[6], uint64_t *ret_until)
{
        struct tr_port *p = q->port;
        uint32_t hop = dst;

        if (tr_ipv4_is_multicast(dst)) {
                tr_ipv4_mcast_mac(dst, mac);
                *ret_until = UINT64_MAX;
                return 1;
        }
        if (dst == 0xffffffffu || dst == (p->ip | ~p->mask)) {
                memcpy(mac, bcast_mac, 6);
                *ret_until = UINT64_MAX;
                return 1;
        }
        if ((dst & p->mask) != (p->ip & p->mask)) {
                if (!p->gateway)
                        return -ENETUNREACH;
                hop = p->gateway;
        }
        uint64_t tsc = rte_get_tsc_cycles(), t = tr_now_ns(p);
        rte_spinlock_lock(&p->arp_lock);
        enum tr_arp_result a = tr_arp_lookup(&p->arp, hop, t, mac);
        if (a == TR_ARP_HIT_PROBE || a == TR_ARP_HIT_PROBE_BCAST) {
                tr_ctl_arp_reprobe_locked(q, hop, a == TR_ARP_HIT_PROBE ? mac : NULL);
                a = TR_ARP_HIT;
        }
        if (a == TR_ARP_HIT) {
                /* until the entry expires or is due for a re-probe, in TSC cycles; queue 0
                 * invalidates the flows then, and the next datagram looks it up again */
                uint64_t until = tr_arp_recheck(&p->arp, hop, t);
                *ret_until = tsc + (uint64_t)(((unsigned __int128)(until - t) * p->tsc_hz) / 1000000000u);
                if (*ret_until < p->flows_expire)
                        __atomic_store_n(&p->flows_expire, *ret_until, __ATOMIC_RELAXED);
        }
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

static inline uint32_t source_ip(const struct tr_port *p, const struct tr_endpoint *ep)
{
        return ep->ip && !tr_ipv4_is_multicast(ep->ip) ? ep->ip : p->ip;
}

static inline uint64_t flow_key(const struct sockaddr_in *dst)
{
        return (uint64_t)dst->sin_port << 32 | dst->sin_addr.s_addr;
}

static inline struct tr_flow *flow_slot(struct tr_queue *q, uint64_t key)
{
        uint32_t h = ((uint32_t)key ^ (uint32_t)(key >> 32)) * 0x9e3779b1u;
        return &q->flows[h >> (32 - 3)];
}
_Static_assert(TR_FLOWS == 8, "flow_slot takes 3 bits of the hash");

#define TR_HOST_LOCAL 2 /* flow_fill's *err for a destination the kernel takes */

/* A flow not cached (or stale): resolve the next hop and prepare its headers. Returns the
 * template, or NULL with *err set (1 would block, TR_HOST_LOCAL, <0 error). */
static __attribute__((noinline)) const struct tr_udp_tmpl *flow_fill(struct tr_queue *q, struct tr_flow *f,
                                                                   const struct tr_endpoint *ep,
                                                                   const struct sockaddr_in *dst, uint32_t gen,
                                                                   int *err)
{
        struct tr_port *p = q->port;
        uint8_t mac[6];
        uint64_t until;
        if (tr_is_host_local(p, dst->sin_addr.s_addr)) {
                *err = TR_HOST_LOCAL;
                return NULL;
        }
        int r = next_hop_mac(q, dst->sin_addr.s_addr, mac, &until);
        if (r <= 0) {
                *err = r ? r : 1;
                return NULL;
        }
        struct tr_udp_hdr_args a = {
                .dst_mac = mac, .src_mac = p->mac, .ip_src = source_ip(p, ep), .ip_dst = dst->sin_addr.s_addr,
                .src_port = ep->lport, .dst_port = ntohs(dst->sin_port), .ttl = p->ttl,
        };
        (void)until; /* queue 0 watches it (flows_expire) */
        tr_udp_tmpl_init(&f->t, &a);
        f->ep = ep;
        f->dst = flow_key(dst);
        f->gen = gen;
        return &f->t;
}

/* The headers for one datagram to dst: the cached flow when it holds. */
static inline const struct tr_udp_tmpl *flow_get(struct tr_queue *q, const struct tr_endpoint *ep,
                                                 const struct sockaddr_in *dst, uint32_t gen, int *err)
{
        uint64_t key = flow_key(dst);
        struct tr_flow *f = flow_slot(q, key);
        if (likely(f->ep == ep && f->dst == key && f->gen == gen))
                return &f->t;
        return flow_fill(q, f, ep, dst, gen, err);
}

/* Which headers each of the next datagrams gets, up to one burst. A host-local datagram
 * at the head goes to the kernel at once (*done advances); one later in the run ends it,
 * to keep the order. Returns how many can be built; *err is set (1 would block, <0
 * error) when it stopped early for a reason other than the burst size. */
static unsigned tx_plan(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *msgs, size_t n,
                        size_t *done, const struct tr_udp_tmpl **tmpl_of, uint32_t gen, int *err)
{
        struct tr_port *p = q->port;
        const struct sockaddr_in *last_dst = NULL; /* a run to one destination (Aeron's case): */
        const struct tr_udp_tmpl *last_t = NULL;   /* its flow is looked up once */
        unsigned k = 0;
        while (*done + k < n && k < p->burst) {
                const struct tr_msg *m = &msgs[*done + k];
                if (unlikely(m->len > p->mtu)) {
                        *err = -EMSGSIZE;
                        break;
                }
                if (m->dst == last_dst) {
                        tmpl_of[k++] = last_t;
                        continue;
                }
                if (unlikely(m->dst->sin_family != AF_INET)) {
                        *err = -EAFNOSUPPORT;
                        break;
                }
                const struct tr_udp_tmpl *t = flow_get(q, ep, m->dst, gen, err);
                if (unlikely(!t)) {
                        if (*err != TR_HOST_LOCAL)
                                break; /* *err says why */
                        *err = 0;
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
                last_dst = m->dst;
                last_t = t;
                tmpl_of[k++] = t;
        }
        return k;
}

/* What tx_build reads of the port for every datagram, read once per call (stores into
 * the mbufs could alias the port, so the compiler reloads it otherwise). */
struct tx_mode {
        bool ip_sw, udp_sw, offload; /* checksums summed here (IPv4, UDP); offloaded to the NIC */
};

static inline struct tx_mode tx_mode_of(const struct tr_port *p)
{
        return (struct tx_mode){ .ip_sw = !p->ip_csum_offload, .udp_sw = p->udp_csum_sw,
                                 .offload = p->udp_csum_offload };
}

/* Fresh mbufs straight from the pool (raw: refcnt 1, one segment, no next, as DPDK
 * keeps them there), filled with one datagram each; *ip_id is the queue's next IPv4 id. */
static inline __attribute__((always_inline)) void tx_build(struct tx_mode mode, uint16_t *ip_id, struct rte_mbuf *m,
                                                           const struct tr_udp_tmpl *t, const void *data,
                                                           size_t len)
{
        uint8_t *d = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
        tr_udp_tmpl_write(t, d, data, len, (*ip_id)++, mode.ip_sw, mode.udp_sw);
        size_t flen = TR_UDP_HDRS + len;
        if (flen < TR_ETH_MIN_FRAME) {
                memset(d + flen, 0, TR_ETH_MIN_FRAME - flen);
                flen = TR_ETH_MIN_FRAME;
        }
        m->data_off = RTE_PKTMBUF_HEADROOM;
        m->data_len = (uint16_t)flen;
        m->pkt_len = (uint32_t)flen;
        m->packet_type = 0;
        m->ol_flags = 0;
        m->tx_offload = 0;
        if (mode.offload) {
                struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + TR_ETH_HLEN);
                struct rte_udp_hdr *u = (struct rte_udp_hdr *)(d + TR_ETH_HLEN + TR_IP_HLEN);
                m->l2_len = TR_ETH_HLEN;
                m->l3_len = TR_IP_HLEN;
                m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
                u->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
        }
}

/* k built mbufs (msgs' datagrams, bytes their payloads) to the NIC in one tx_burst; what it
 * does not take is freed, not queued, and counted as would-block. Returns how many went. */
static inline __attribute__((always_inline)) uint16_t tx_hand(struct tr_queue *q, struct rte_mbuf **out,
                                                              const struct tr_msg *msgs, unsigned k,
                                                              uint64_t bytes)
{
        const struct tr_port *p = q->port;
        uint16_t sent = rte_eth_tx_burst(p->port_id, q->qid, out, (uint16_t)k);
        if (unlikely(sent < k)) {
                for (unsigned i = sent; i < k; i++)
                        bytes -= msgs[i].len;
                rte_pktmbuf_free_bulk(out + sent, k - sent);
                TR_CNT_INC(q, tx_wouldblock_ring);
        }
        TR_CNT_ADD(q, tx_datagrams, sent);
        TR_CNT_ADD(q, tx_bytes, bytes);
        return sent;
}

int tr_sendmmsg(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *msgs, size_t n)
{
        struct tr_port *p = q->port;
        struct rte_mbuf *out[TR_MAX_BURST];
        const struct tr_udp_tmpl *tmpl_of[TR_MAX_BURST]; /* datagram -> its flow's headers */
        size_t done = 0;
        int err = 0;
        uint32_t gen = __atomic_load_n(&p->tx_gen, __ATOMIC_ACQUIRE);

        /* the usual call (Aeron's send_func, a burst of one publication's frames): up to a
         * burst of datagrams all to one prepared flow, taken without the plan's arrays */
        if (likely(n - 1 < p->burst && msgs[0].dst->sin_family == AF_INET)) {
                const struct sockaddr_in *dst = msgs[0].dst;
                uint64_t key = flow_key(dst);
                const struct tr_flow *f = flow_slot(q, key);
                size_t i = 0;
                if (likely(f->ep == ep && f->dst == key && f->gen == gen))
                        while (i < n && msgs[i].dst == dst && msgs[i].len <= p->mtu)
                                i++;
                if (likely(i == n) && likely(rte_mempool_get_bulk(p->pool, (void **)out, (unsigned)n) == 0)) {
                        uint64_t bytes = 0;
                        struct tx_mode mode = tx_mode_of(p);
                        uint16_t id = q->ip_id;
                        for (i = 0; i < n; i++) {
                                tx_build(mode, &id, out[i], &f->t, msgs[i].data, msgs[i].len);
                                bytes += msgs[i].len;
                        }
                        q->ip_id = id;
                        return tx_hand(q, out, msgs, (unsigned)n, bytes);
                }
        }
        while (done < n && !err) {
                /* 1. how many of the next datagrams can go, with which headers */
                unsigned k = tx_plan(q, ep, msgs, n, &done, tmpl_of, gen, &err);
                if (k == 0)
                        break;
                /* 2. mbufs for all of them at once, or would-block */
                if (unlikely(rte_mempool_get_bulk(p->pool, (void **)out, k) != 0)) {
                        TR_CNT_INC(q, tx_wouldblock_nombuf);
                        break;
                }
                uint64_t bytes = 0;
                struct tx_mode mode = tx_mode_of(p);
                uint16_t id = q->ip_id;
                for (unsigned i = 0; i < k; i++) {
                        const struct tr_msg *m = &msgs[done + i];
                        tx_build(mode, &id, out[i], tmpl_of[i], m->data, m->len);
                        bytes += m->len;
                }
                q->ip_id = id;
                /* 3. hand them to the NIC */
                uint16_t sent = tx_hand(q, out, msgs + done, k, bytes);
                if (unlikely(sent < k))
                        err = 1;
                done += sent;
        }
        if (done == 0 && err < 0)
                return err;
        return (int)done;
}

/* One datagram to a prepared flow, the usual case of tr_send, without tr_sendmmsg's runs
 * and arrays; anything else (a new destination, host-local, would-block, an error) goes
 * the general way, which decides. */
int tr_send(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
            const void *data, size_t len)
{
        struct tr_port *p = q->port;
        uint64_t key = flow_key(dst);
        const struct tr_flow *f = flow_slot(q, key);
        struct rte_mbuf *m;

        if (likely(len <= p->mtu && dst->sin_family == AF_INET && f->ep == ep && f->dst == key &&
                   f->gen == __atomic_load_n(&p->tx_gen, __ATOMIC_ACQUIRE) &&
                   rte_mempool_get(p->pool, (void **)&m) == 0)) {
                tx_build(tx_mode_of(p), &q->ip_id, m, &f->t, data, len);
                if (likely(rte_eth_tx_burst(p->port_id, q->qid, &m, 1) == 1)) {
                        TR_CNT_INC(q, tx_datagrams);
                        TR_CNT_ADD(q, tx_bytes, len);
                        return 1;
                }
                rte_pktmbuf_free(m);
                TR_CNT_INC(q, tx_wouldblock_ring);
                return 0;
        }
        struct tr_msg msg = { .dst = dst, .data = data, .len = len };
        return tr_sendmmsg(q, ep, &msg, 1);
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

/* The endpoint for (dst, port): the queue's last answer (poll_rxq forgets it when the
 * demux changed; it cannot change during a burst, under the read lock). Caller holds
 * bind_lock as a reader. */
static inline struct tr_endpoint *demux_get(const struct tr_port *p, struct tr_queue *q, uint32_t dst,
                                            uint16_t port)
{
        uint64_t key = (uint64_t)port << 32 | dst;
        if (likely(q->rx_key == key))
                return q->rx_ep;
        struct tr_endpoint *ep = tr_demux_lookup(&p->demux, dst, port);
        q->rx_key = ep ? key : TR_RX_KEY_NONE; /* a miss is not kept: the next one looks again */
        q->rx_ep = ep;
        return ep;
}

/* Broadcast, or a group we joined: the other addresses a datagram may be for. */
static __attribute__((noinline)) bool for_us_other(const struct tr_port *p, uint32_t ip)
{
        return ip == 0xffffffffu || ip == (p->ip | ~p->mask) || (tr_ipv4_is_multicast(ip) && joined(p, ip));
}

/* A datagram for us that no endpoint takes: the probe responder's (no endpoint of its
 * own), or a drop. Out of line and given f's fields by value, so that the inline parse's
 * tr_frame never has to be in memory on the usual path. */
static __attribute__((noinline)) void rx_no_endpoint(struct tr_queue *q, const uint8_t *d, uint32_t ip_src,
                                                     uint32_t ip_dst, uint16_t dst_port, uint16_t payload_off,
                                                     uint16_t payload_len)
{
        const struct tr_port *p = q->port;
        if (dst_port != p->probe_port || !p->probe_port || ip_dst != p->ip) {
                TR_CNT_DROP(q, TR_DROP_NO_ENDPOINT);
                return;
        }
        const uint8_t *u = d + payload_off - TR_UDP_HLEN;
        struct tr_frame f = { .kind = TR_FRAME_UDP, .dst_mac = d, .src_mac = d + 6, .ip_src = ip_src,
                              .ip_dst = ip_dst, .src_port = fr_rd16(u), .dst_port = dst_port,
                              .payload_off = payload_off, .payload_len = payload_len };
        tr_probe_on_udp(q, d, &f);
}

/* A parsed UDP datagram: for us (our address, broadcast, a joined group), to which
 * endpoint; the callback. Returns 1 when delivered. */
static inline int rx_udp(const struct tr_port *p, struct tr_queue *q, const uint8_t *d,
                         const struct tr_frame *f, tr_recv_fn fn, void *clientd, uint64_t *bytes)
{
        if (unlikely(f->ip_dst != p->ip) && !for_us_other(p, f->ip_dst)) {
                TR_CNT_DROP(q, TR_DROP_NOT_FOR_US);
                return 0;
        }
        struct tr_endpoint *ep = demux_get(p, q, f->ip_dst, f->dst_port);
        if (unlikely(!ep)) {
                rx_no_endpoint(q, d, f->ip_src, f->ip_dst, f->dst_port, f->payload_off, f->payload_len);
                return 0;
        }
        /* the source port as the frame has it (network order), from the UDP header that
         * ends where the payload starts: no swap there and back */
        struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = fr_rd16_raw(d + f->payload_off - TR_UDP_HLEN),
                                   .sin_addr.s_addr = f->ip_src };
        fn(clientd, ep->clientd, d + f->payload_off, f->payload_len, &src);
        *bytes += f->payload_len;
        return 1;
}

/* Unicast to another MAC (multicast and broadcast MACs pass: the IP check decides). One
 * 8-byte load of the frame's start (the destination MAC and 2 bytes of the source: every
 * frame the parsers let through is longer), masked to the 6 bytes of the MAC. */
static inline bool not_our_mac(const struct tr_port *p, const uint8_t *dst_mac)
{
        return (fr_rd64_raw(dst_mac) & TR_MAC_MASK) != p->mac64 && !(dst_mac[0] & 1);
}

/* Whatever the inline parse did not take: the full parser, drops, ARP, IGMP, and the
 * UDP datagrams it accepts. */
static __attribute__((noinline)) int rx_other(const struct tr_port *p, struct tr_queue *q, const uint8_t *d,
                                              size_t len, unsigned flags, tr_recv_fn fn, void *clientd,
                                              uint64_t *bytes)
{
        struct tr_frame f;
        tr_frame_parse(d, len, flags, &f);
        if (f.kind == TR_FRAME_DROP) {
                TR_CNT_DROP(q, f.drop);
                return 0;
        }
        if (not_our_mac(p, f.dst_mac)) {
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
        return rx_udp(p, q, d, &f, fn, clientd, bytes);
}

/* One received frame. Caller holds bind_lock as a reader. Returns 1 when a datagram was
 * delivered (its payload added to *bytes), else 0. offload: the port may mark checksums
 * good (a constant where rx_burst_loop is inlined: the test is per burst). */
static inline __attribute__((always_inline)) int rx_one(const struct tr_port *p, struct tr_queue *q,
                                                        struct rte_mbuf *m, bool offload, tr_recv_fn fn,
                                                        void *clientd, uint64_t *bytes)
{
        const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
        unsigned flags = 0;

        if (offload) {
                uint64_t ol = m->ol_flags;
                if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
                        flags |= TR_PARSE_IP_CSUM_DONE;
                if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
                        flags |= TR_PARSE_L4_CSUM_DONE;
        }
        /* the usual UDP datagram inline; anything else (ARP, IGMP, drops) the full parser */
        struct tr_frame f;
        if (unlikely(!tr_frame_parse_udp_fast(d, m->data_len, flags, &f)))
                return rx_other(p, q, d, m->data_len, flags, fn, clientd, bytes);
        if (unlikely(not_our_mac(p, d))) {
                TR_CNT_DROP(q, TR_DROP_NOT_OUR_MAC);
                return 0;
        }
        return rx_udp(p, q, d, &f, fn, clientd, bytes);
}

_Static_assert(offsetof(struct rte_mbuf, nb_segs) == offsetof(struct rte_mbuf, refcnt) + 2,
               "rx_odd reads refcnt and nb_segs as one word");

/* Not 0 when m is not what RX queues make (pool mp, one segment, not shared, not
 * attached): then the burst goes back through rte_pktmbuf_free_bulk, which handles
 * anything; else in one rte_mempool_put_bulk, what free_bulk does for plain mbufs
 * without its per-mbuf work. Read beside the frame's own fields, no branch per mbuf. */
static inline uint64_t rx_odd(const struct rte_mbuf *m, const struct rte_mempool *mp)
{
        uint32_t rc_segs; /* refcnt and nb_segs both 1, read together */
        memcpy(&rc_segs, (const char *)m + offsetof(struct rte_mbuf, refcnt), sizeof(rc_segs));
        return ((uintptr_t)m->pool ^ (uintptr_t)mp) | (rc_segs ^ (1u | 1u << 16)) |
               (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL));
}

/* A burst's frames, prefetching each next one; returns the datagrams delivered. */
static inline __attribute__((always_inline)) int rx_burst_loop(const struct tr_port *p, struct tr_queue *q,
                                                               struct rte_mbuf **pkts, uint16_t n,
                                                               bool offload, tr_recv_fn fn, void *clientd,
                                                               uint64_t *bytes, uint64_t *odd)
{
        const struct rte_mempool *mp = pkts[0]->pool;
        int delivered = 0;
        for (uint16_t i = 0; i < n; i++) {
                if (i + 1 < n)
                        rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
                *odd |= rx_odd(pkts[i], mp);
                delivered += rx_one(p, q, pkts[i], offload, fn, clientd, bytes);
        }
        return delivered;
}

static int poll_rxq(struct tr_queue *q, uint16_t rxq, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        struct rte_mbuf *pkts[TR_MAX_BURST];
        int delivered;

        uint16_t n = rte_eth_rx_burst(p->port_id, rxq, pkts, p->burst);
        if (n == 0)
                return 0;
        TR_CNT_ADD(q, rx_frames, n);
        uint64_t bytes = 0, odd = 0;
        rte_rwlock_read_lock(&p->bind_lock);
        if (unlikely(q->rx_gen != p->demux_gen)) { /* the demux changed: its last answer goes */
                q->rx_gen = p->demux_gen;
                q->rx_key = TR_RX_KEY_NONE;
        }
        if (p->rx_csum_offload)
                delivered = rx_burst_loop(p, q, pkts, n, true, fn, clientd, &bytes, &odd);
        else
                delivered = rx_burst_loop(p, q, pkts, n, false, fn, clientd, &bytes, &odd);
        rte_rwlock_read_unlock(&p->bind_lock);
        if (unlikely(odd))
                rte_pktmbuf_free_bulk(pkts, n);
        else
                rte_mempool_put_bulk(pkts[0]->pool, (void **)pkts, n);
        TR_CNT_ADD(q, rx_bytes, bytes);
        TR_CNT_ADD(q, rx_datagrams, (uint64_t)delivered);
        return delivered;
}

/* All receiving happens on queue 0's thread: every RX queue of the device (RSS is off,
 * but memif hands us on RX queue i what its peer sent on TX queue i), the host-local
 * sockets, the IGMP timers. The control queue's RX mirror (where a memif peer's ARP and
 * IGMP arrive; a NIC puts nothing there) is read with the slow work, every 16th poll:
 * none of that is in a hurry, and an empty poll is one rx_burst less. Other queues are
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
                tr_ctl_flows_tick(p);
                if (p->n_rxq > p->n_queues)
                        delivered += poll_rxq(q, p->ctl_qid, fn, clientd);
        }
        delivered += poll_rxq(q, 0, fn, clientd);
        for (uint16_t r = 1; unlikely(r < p->n_queues); r++)
                delivered += poll_rxq(q, r, fn, clientd);
        return delivered;
}
