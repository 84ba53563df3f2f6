/* SPDX-License-Identifier: Apache-2.0 */
/* DPDK UDP/IPv4 transport: port bring-up, the per-thread TX/RX paths, ARP, IGMP and
 * host-local kernel sockets. Never logs. The data path (tr_send, tr_sendmmsg, tr_poll)
 * never allocates: mbufs come from one pool made at open; control frames go through a
 * spare TX queue under a lock. */
#include "transport.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_rwlock.h>
#include <rte_spinlock.h>

#include "arp_table.h"
#include "demux.h"
#include "sizing.h"

#define TR_MAX_BURST 256
#define TR_SLOW_EVERY 16 /* polls between two looks at the kernel sockets and IGMP timers */
#define TR_IGMP_SLOTS (2 * TR_MAX_GROUPS) /* joined groups + leaves still being repeated */

#define CNT_ADD(q, f, v) __atomic_store_n(&(q)->c.f, (q)->c.f + (v), __ATOMIC_RELAXED)
#define CNT_INC(q, f) CNT_ADD(q, f, 1)
#define CNT_DROP(q, why) __atomic_store_n(&(q)->c.drops[why], (q)->c.drops[why] + 1, __ATOMIC_RELAXED)

struct tr_queue {
        struct tr_port *port;
        uint16_t qid;
        uint16_t ip_id;
        unsigned polls;
        struct tr_counters c;
} __rte_cache_aligned;

/* IGMP timers of one group: state-change reports still to repeat (a join's, or a
 * leave's after the group is gone) and an answer to a query. */
struct tr_igmp_slot {
        uint32_t group;      /* network order; 0 = free slot */
        uint8_t retx_left;   /* state-change reports still to send */
        uint8_t answer_version; /* version of the query being answered */
        bool retx_leave;     /* the state change is a leave */
        uint64_t retx_due;   /* ns */
        uint64_t answer_due; /* ns; 0 = no query to answer */
};

struct tr_endpoint {
        struct tr_port *port;
        uint32_t ip;    /* network order */
        uint16_t lport; /* host order */
        void *clientd;
        int kfd;        /* host-local kernel socket on 127.0.0.1:lport, or -1 */
};

struct tr_port {
        uint16_t port_id, n_queues, n_rxq, burst, mtu, ctl_qid;
        uint8_t mac[6];
        uint8_t ttl, igmp_version;
        uint32_t ip, mask, gateway;
        bool host_local, ip_csum_offload, udp_csum_offload;
        uint64_t tsc_hz, ns_mult; /* ns = cycles * ns_mult >> 32 */
        uint16_t next_ephemeral;
        struct rte_mempool *pool;
        struct tr_queue q[TR_MAX_QUEUES];

        rte_rwlock_t bind_lock; /* demux, groups: written by control calls, read per burst */
        struct tr_demux demux;
        uint32_t groups[TR_MAX_GROUPS];
        unsigned n_groups;

        rte_spinlock_t arp_lock; /* the ARP table, the control TX queue, the IGMP timers */
        struct tr_arp_table arp;
        struct tr_igmp_slot igmp[TR_IGMP_SLOTS];
        uint64_t igmp_next;      /* earliest IGMP timer (ns), UINT64_MAX for none; read unlocked */
        uint64_t igmp_uri_ns;    /* Unsolicited Report Interval */
        uint64_t rng;            /* xorshift state for IGMP delays */
        uint8_t igmp_robustness;
        struct tr_rate reply_rate;
        struct tr_counters ctl; /* frames sent by control calls, under arp_lock */
};

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        if (!err || !errlen)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

static inline uint64_t now_ns(const struct tr_port *p)
{
        return (uint64_t)(((unsigned __int128)rte_get_tsc_cycles() * p->ns_mult) >> 32);
}

int tr_eal_init(struct tr_eal_args *args)
{
        int r = rte_eal_init(args->argc, args->argv);
        if (r < 0)
                return rte_errno ? -rte_errno : -EINVAL;
        return 0;
}

void tr_eal_cleanup(void)
{
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
        rte_eal_cleanup();
        /* the runtime dir (config, fbarrays, sockets: megabytes in /run) outlives the
         * EAL otherwise; it holds only files */
        DIR *d = dir[0] ? opendir(dir) : NULL;
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
        (void)rmdir(dir);
}

int tr_port_find(const char *name, uint16_t *ret_port_id)
{
        uint16_t id;
        if (rte_eth_dev_get_port_by_name(name, &id) != 0)
                return -ENODEV;
        *ret_port_id = id;
        return 0;
}

static uint16_t fit_ring(uint16_t want, const struct rte_eth_desc_lim *lim)
{
        return tr_ring_fit(want, lim->nb_min, lim->nb_max, lim->nb_align);
}

/* Push the joined groups' MACs (and the all-systems group's, for queries) to the device;
 * allmulticast when it has no list. */
static int apply_mc_filter(struct tr_port *p)
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

/* Send one control frame (ARP, IGMP) through the control TX queue. Caller holds arp_lock. */
static int ctl_tx_locked(struct tr_port *p, const uint8_t *frame, size_t len)
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

/* Same, taking the lock; bumps *counter (a control counter of the port) on success. */
static int ctl_tx(struct tr_port *p, const uint8_t *frame, size_t len, uint64_t *counter)
{
        rte_spinlock_lock(&p->arp_lock);
        int r = ctl_tx_locked(p, frame, len);
        if (r == 0)
                __atomic_store_n(counter, *counter + 1, __ATOMIC_RELAXED);
        rte_spinlock_unlock(&p->arp_lock);
        return r;
}

int tr_port_announce(struct tr_port *p)
{
        uint8_t f[TR_ETH_MIN_FRAME];
        size_t n = tr_frame_build_arp(f, 1, bcast_mac, p->mac, p->ip, NULL, p->ip);
        return ctl_tx(p, f, n, &p->ctl.garp_tx);
}

int tr_port_open(const struct tr_port_config *cfg, struct tr_port **ret, char *err, size_t errlen)
{
        struct rte_eth_dev_info info;
        struct rte_eth_conf conf;
        struct rte_ether_addr mac;
        char name[RTE_MEMPOOL_NAMESIZE];
        struct tr_port *p;
        uint16_t nq = cfg->n_queues ? cfg->n_queues : 1;
        uint16_t rx_ring = cfg->rx_ring ? cfg->rx_ring : 1024;
        uint16_t tx_ring = cfg->tx_ring ? cfg->tx_ring : 1024;
        uint16_t burst = cfg->burst ? cfg->burst : 32;
        uint16_t mtu = cfg->mtu ? cfg->mtu : TR_DEFAULT_MTU;
        int r;

        if (!rte_eth_dev_is_valid_port(cfg->port_id)) {
                set_err(err, errlen, "no DPDK port %u", cfg->port_id);
                return -ENODEV;
        }
        if (nq > TR_MAX_QUEUES || burst > TR_MAX_BURST || cfg->prefix_len < 1 || cfg->prefix_len > 32 ||
            cfg->ipv4 == 0 || (cfg->igmp_version && cfg->igmp_version != 2 && cfg->igmp_version != 3) ||
            cfg->igmp_robustness > 7) {
                set_err(err, errlen, "bad configuration (queues %u, burst %u, prefix /%u, igmp v%u robustness %u)",
                        nq, burst, cfg->prefix_len, cfg->igmp_version, cfg->igmp_robustness);
                return -EINVAL;
        }
        uint32_t mask = cfg->prefix_len == 32 ? 0xffffffffu : htonl(~(0xffffffffu >> cfg->prefix_len));
        if (cfg->gateway && (cfg->gateway & mask) != (cfg->ipv4 & mask)) {
                set_err(err, errlen, "gateway outside the /%u subnet of our address", cfg->prefix_len);
                return -EINVAL;
        }
        if ((size_t)mtu + TR_UDP_HDRS > RTE_MBUF_DEFAULT_DATAROOM) {
                set_err(err, errlen, "MTU %u does not fit one %u-byte packet buffer", mtu,
                        RTE_MBUF_DEFAULT_DATAROOM);
                return -EINVAL;
        }
        r = rte_eth_dev_info_get(cfg->port_id, &info);
        if (r < 0) {
                set_err(err, errlen, "cannot read device info of port %u", cfg->port_id);
                return r;
        }
        if (nq > info.max_rx_queues || nq + 1 > info.max_tx_queues) {
                set_err(err, errlen, "device %s has %u RX / %u TX queues, %u+%u needed",
                        info.driver_name, info.max_rx_queues, info.max_tx_queues, nq, nq + 1);
                return -EINVAL;
        }
        uint16_t rx_fit = fit_ring(rx_ring, &info.rx_desc_lim);
        uint16_t tx_fit = fit_ring(tx_ring, &info.tx_desc_lim);
        /* defaults are fitted silently; sizes the caller chose are refused with the
         * device's limits (MANA: 256) unless clamping was asked for */
        bool explicit_ring = (cfg->rx_ring && rx_fit != rx_ring) || (cfg->tx_ring && tx_fit != tx_ring);
        if (explicit_ring && !cfg->clamp_rings) {
                set_err(err, errlen,
                        "rings %u/%u outside what %s accepts (RX %u..%u, TX %u..%u descriptors)",
                        rx_ring, tx_ring, info.driver_name, info.rx_desc_lim.nb_min,
                        info.rx_desc_lim.nb_max, info.tx_desc_lim.nb_min, info.tx_desc_lim.nb_max);
                return -EINVAL;
        }
        rx_ring = rx_fit;
        tx_ring = tx_fit;

        p = rte_zmalloc_socket("spinlane-port", sizeof(*p), RTE_CACHE_LINE_SIZE,
                               rte_eth_dev_socket_id(cfg->port_id));
        if (!p) {
                set_err(err, errlen, "out of DPDK memory for the port");
                return -ENOMEM;
        }
        p->port_id = cfg->port_id;
        p->n_queues = nq;
        p->ctl_qid = nq;
        p->burst = burst;
        p->mtu = mtu;
        p->ip = cfg->ipv4;
        p->mask = mask;
        p->gateway = cfg->gateway;
        p->ttl = cfg->ttl ? cfg->ttl : 64;
        p->igmp_version = cfg->igmp_version ? cfg->igmp_version : 3;
        p->igmp_robustness = cfg->igmp_robustness ? cfg->igmp_robustness : 2;
        p->igmp_uri_ns = cfg->igmp_unsolicited_ms ? (uint64_t)cfg->igmp_unsolicited_ms * 1000000
                                                  : (p->igmp_version == 3 ? 1000000000ull : 10000000000ull);
        p->igmp_next = UINT64_MAX;
        p->host_local = !cfg->no_host_local;
        p->tsc_hz = rte_get_tsc_hz();
        p->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / p->tsc_hz);
        p->next_ephemeral = 49152;
        rte_rwlock_init(&p->bind_lock);
        rte_spinlock_init(&p->arp_lock);
        uint64_t t0 = now_ns(p);
        p->rng = rte_get_tsc_cycles() ^ ((uint64_t)cfg->ipv4 << 16) ^ 0x9e3779b97f4a7c15ull;
        uint32_t rate = cfg->arp_rate ? cfg->arp_rate : 100;
        tr_arp_table_init(&p->arp, (uint64_t)(cfg->arp_ttl_ms ? cfg->arp_ttl_ms : 60000) * 1000000,
                          (uint64_t)(cfg->arp_retry_ms ? cfg->arp_retry_ms : 100) * 1000000, rate, t0);
        tr_rate_init(&p->reply_rate, rate, rate < 16 ? rate : 16, t0);
        for (unsigned i = 0; i < nq; i++) {
                p->q[i].port = p;
                p->q[i].qid = (uint16_t)i;
        }

        /* Pool: every RX descriptor full, every TX descriptor in flight, a burst per
         * thread being built, the control queue, and the per-lcore caches. */
        unsigned cache = 256;
        unsigned n_mbufs = tr_pool_size(nq, rx_ring, tx_ring, burst, cache, rte_lcore_count());
        snprintf(name, sizeof(name), "sl-tr-%u", cfg->port_id);
        p->pool = rte_pktmbuf_pool_create(name, n_mbufs, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          rte_eth_dev_socket_id(cfg->port_id));
        if (!p->pool) {
                set_err(err, errlen, "cannot create a pool of %u mbufs: %s", n_mbufs, rte_strerror(rte_errno));
                r = -ENOMEM;
                goto fail;
        }

        memset(&conf, 0, sizeof(conf));
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
        uint64_t want_tx = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
        if ((info.tx_offload_capa & want_tx) == want_tx) {
                conf.txmode.offloads = want_tx;
                p->ip_csum_offload = p->udp_csum_offload = true;
        }
        uint64_t want_rx = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
        conf.rxmode.offloads = info.rx_offload_capa & want_rx;
        /* A spare RX queue mirrors the control TX queue where the device has one: a
         * memif peer's control ring lands there, and queue 0's poller drains it. */
        p->n_rxq = info.max_rx_queues > nq ? nq + 1 : nq;
        r = rte_eth_dev_configure(p->port_id, p->n_rxq, nq + 1, &conf);
        if (r < 0) {
                set_err(err, errlen, "rte_eth_dev_configure(port %u, %u queues): %s", p->port_id, nq, strerror(-r));
                goto fail;
        }
        r = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &rx_ring, &tx_ring);
        if (r < 0 && r != -ENOTSUP) {
                set_err(err, errlen, "ring sizes %u/%u refused: %s", rx_ring, tx_ring, strerror(-r));
                goto fail;
        }
        uint16_t dev_mtu = 0;
        if (rte_eth_dev_get_mtu(p->port_id, &dev_mtu) < 0 || dev_mtu < mtu + TR_IP_HLEN + TR_UDP_HLEN) {
                r = rte_eth_dev_set_mtu(p->port_id, (uint16_t)(mtu + TR_IP_HLEN + TR_UDP_HLEN));
                if (r < 0) {
                        set_err(err, errlen, "device MTU %u below %u (Aeron MTU %u + 28) and cannot be raised: %s",
                                dev_mtu, mtu + 28, mtu, strerror(-r));
                        goto fail;
                }
        }
        int socket = rte_eth_dev_socket_id(p->port_id);
        for (uint16_t i = 0; i < p->n_rxq; i++) {
                r = rte_eth_rx_queue_setup(p->port_id, i, rx_ring, (unsigned)socket, NULL, p->pool);
                if (r < 0) {
                        set_err(err, errlen, "RX queue %u (%u descriptors): %s", i, rx_ring, strerror(-r));
                        goto fail;
                }
        }
        for (uint16_t i = 0; i <= nq; i++) {
                r = rte_eth_tx_queue_setup(p->port_id, i, tx_ring, (unsigned)socket, NULL);
                if (r < 0) {
                        set_err(err, errlen, "TX queue %u (%u descriptors): %s", i, tx_ring, strerror(-r));
                        goto fail;
                }
        }
        r = rte_eth_dev_start(p->port_id);
        if (r < 0) {
                set_err(err, errlen, "rte_eth_dev_start(port %u): %s", p->port_id, strerror(-r));
                goto fail;
        }
        r = rte_eth_macaddr_get(p->port_id, &mac);
        if (r < 0) {
                set_err(err, errlen, "cannot read the MAC of port %u", p->port_id);
                rte_eth_dev_stop(p->port_id);
                goto fail;
        }
        memcpy(p->mac, mac.addr_bytes, 6);
        (void)apply_mc_filter(p);

        if (cfg->link_wait_ms) {
                uint64_t deadline = now_ns(p) + (uint64_t)cfg->link_wait_ms * 1000000;
                while (!tr_port_link_up(p) && now_ns(p) < deadline)
                        rte_delay_us_sleep(10000);
                if (!tr_port_link_up(p)) {
                        set_err(err, errlen, "link of port %u still down after %u ms", p->port_id, cfg->link_wait_ms);
                        rte_eth_dev_stop(p->port_id);
                        r = -ETIMEDOUT;
                        goto fail;
                }
        }
        (void)tr_port_announce(p);
        *ret = p;
        return 0;
fail:
        rte_mempool_free(p->pool);
        rte_free(p);
        return r < 0 ? r : -EIO;
}

void tr_port_close(struct tr_port *p)
{
        if (!p)
                return;
        rte_eth_dev_stop(p->port_id);
        rte_eth_dev_close(p->port_id);
        rte_mempool_free(p->pool);
        rte_free(p);
}

struct tr_queue *tr_port_queue(struct tr_port *p, unsigned i)
{
        return i < p->n_queues ? &p->q[i] : NULL;
}

void tr_port_mac(const struct tr_port *p, uint8_t ret[6])
{
        memcpy(ret, p->mac, 6);
}

bool tr_port_link_up(const struct tr_port *p)
{
        struct rte_eth_link link;
        if (rte_eth_link_get_nowait(p->port_id, &link) < 0)
                return false;
        return link.link_status == RTE_ETH_LINK_UP;
}

static bool is_host_local(const struct tr_port *p, uint32_t ip)
{
        return ip == p->ip || ((const uint8_t *)&ip)[0] == 127;
}

int tr_endpoint_open(struct tr_port *p, const struct sockaddr_in *bind_addr, void *clientd,
                     struct tr_endpoint **ret)
{
        uint32_t ip = bind_addr->sin_addr.s_addr;
        uint16_t lport = ntohs(bind_addr->sin_port);
        int fd = -1, r;

        if (bind_addr->sin_family != AF_INET)
                return -EAFNOSUPPORT;
        if (ip != 0 && ip != p->ip && !tr_ipv4_is_multicast(ip))
                return -EADDRNOTAVAIL;
        struct tr_endpoint *ep = calloc(1, sizeof(*ep));
        if (!ep)
                return -ENOMEM;
        if (p->host_local && !tr_ipv4_is_multicast(ip)) {
                struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(lport),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t sl = sizeof(lo);
                fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0 || bind(fd, (struct sockaddr *)&lo, sizeof(lo)) < 0 ||
                    getsockname(fd, (struct sockaddr *)&lo, &sl) < 0) {
                        r = -errno;
                        goto fail;
                }
                lport = ntohs(lo.sin_port);
        }
        rte_rwlock_write_lock(&p->bind_lock);
        if (lport == 0) {
                r = -EADDRINUSE;
                for (unsigned tries = 0; tries < 16384 && r == -EADDRINUSE; tries++) {
                        lport = p->next_ephemeral;
                        p->next_ephemeral = p->next_ephemeral == 65535 ? 49152 : p->next_ephemeral + 1;
                        r = tr_demux_add(&p->demux, ip, lport, ep);
                }
        } else
                r = tr_demux_add(&p->demux, ip, lport, ep);
        rte_rwlock_write_unlock(&p->bind_lock);
        if (r < 0)
                goto fail;
        ep->port = p;
        ep->ip = ip;
        ep->lport = lport;
        ep->clientd = clientd;
        ep->kfd = fd;
        *ret = ep;
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        free(ep);
        return r;
}

void tr_endpoint_close(struct tr_endpoint *ep)
{
        if (!ep)
                return;
        rte_rwlock_write_lock(&ep->port->bind_lock);
        (void)tr_demux_remove(&ep->port->demux, ep->ip, ep->lport);
        rte_rwlock_write_unlock(&ep->port->bind_lock);
        if (ep->kfd >= 0)
                close(ep->kfd);
        free(ep);
}

void tr_endpoint_local(const struct tr_endpoint *ep, struct sockaddr_in *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->sin_family = AF_INET;
        ret->sin_addr.s_addr = ep->ip;
        ret->sin_port = htons(ep->lport);
}

/* Send a report for group now. Caller holds arp_lock. */
static void igmp_report_locked(struct tr_port *p, int version, uint32_t group, bool leave)
{
        uint8_t f[64];
        size_t n = tr_frame_build_igmp(f, version, leave, p->mac, p->ip, group);
        if (ctl_tx_locked(p, f, n) == 0)
                __atomic_store_n(&p->ctl.igmp_reports_tx, p->ctl.igmp_reports_tx + 1, __ATOMIC_RELAXED);
}

/* A random number of ns in [0, max] (xorshift64; delays only, not security). */
static uint64_t igmp_random_ns(struct tr_port *p, uint64_t max)
{
        uint64_t x = p->rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p->rng = x;
        return max ? x % (max + 1) : 0;
}

/* Spacing of repeated state-change reports: the interval itself for IGMPv2 (RFC 2236 3),
 * a random time within it for IGMPv3 (RFC 3376 5.1). */
static uint64_t igmp_retx_delay(struct tr_port *p)
{
        if (p->igmp_version == 2)
                return p->igmp_uri_ns;
        return 1 + igmp_random_ns(p, p->igmp_uri_ns - 1);
}

static void igmp_update_next(struct tr_port *p)
{
        uint64_t next = UINT64_MAX;
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                const struct tr_igmp_slot *s = &p->igmp[i];
                if (!s->group)
                        continue;
                if (s->retx_left && s->retx_due < next)
                        next = s->retx_due;
                if (s->answer_due && s->answer_due < next)
                        next = s->answer_due;
        }
        __atomic_store_n(&p->igmp_next, next, __ATOMIC_RELAXED);
}

/* The slot of group; with create, a free one, else one that only repeats a leave (those
 * repeats are best effort). NULL when none. Caller holds arp_lock. */
static struct tr_igmp_slot *igmp_slot(struct tr_port *p, uint32_t group, bool create)
{
        struct tr_igmp_slot *free_slot = NULL, *leaving = NULL;
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                struct tr_igmp_slot *s = &p->igmp[i];
                if (s->group == group)
                        return s;
                if (!s->group && !free_slot)
                        free_slot = s;
                if (s->group && s->retx_leave && !leaving)
                        leaving = s;
        }
        if (!create)
                return NULL;
        struct tr_igmp_slot *s = free_slot ? free_slot : leaving;
        if (s)
                *s = (struct tr_igmp_slot){ .group = group };
        return s;
}

/* A join or leave: the first report now, the rest of the Robustness Variable later. */
static void igmp_state_change(struct tr_port *p, uint32_t group, bool leave)
{
        rte_spinlock_lock(&p->arp_lock);
        igmp_report_locked(p, p->igmp_version, group, leave);
        /* an IGMPv2 leave goes once; everything else is repeated */
        bool repeat = p->igmp_robustness > 1 && !(leave && p->igmp_version == 2);
        struct tr_igmp_slot *s = igmp_slot(p, group, repeat);
        if (s) {
                s->retx_leave = leave;
                s->retx_left = repeat ? (uint8_t)(p->igmp_robustness - 1) : 0;
                s->retx_due = now_ns(p) + igmp_retx_delay(p);
                if (leave)
                        s->answer_due = 0;
                if (!s->retx_left && !s->answer_due)
                        s->group = 0;
        }
        igmp_update_next(p);
        rte_spinlock_unlock(&p->arp_lock);
}

/* Fire due IGMP timers; from tr_poll of queue 0. */
static void igmp_tick(struct tr_port *p)
{
        if (likely(__atomic_load_n(&p->igmp_next, __ATOMIC_RELAXED) == UINT64_MAX))
                return;
        uint64_t t = now_ns(p);
        if (t < __atomic_load_n(&p->igmp_next, __ATOMIC_RELAXED))
                return;
        rte_spinlock_lock(&p->arp_lock);
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                struct tr_igmp_slot *s = &p->igmp[i];
                if (!s->group)
                        continue;
                if (s->retx_left && s->retx_due <= t) {
                        igmp_report_locked(p, p->igmp_version, s->group, s->retx_leave);
                        s->retx_left--;
                        s->retx_due = t + igmp_retx_delay(p);
                }
                if (s->answer_due && s->answer_due <= t) {
                        igmp_report_locked(p, s->answer_version, s->group, false);
                        s->answer_due = 0;
                }
                if (!s->retx_left && !s->answer_due)
                        s->group = 0;
        }
        igmp_update_next(p);
        rte_spinlock_unlock(&p->arp_lock);
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
                r = apply_mc_filter(p);
                if (r < 0)
                        p->n_groups--;
        }
        rte_rwlock_write_unlock(&p->bind_lock);
        if (r < 0)
                return r;
        igmp_state_change(p, group, false);
        return 0;
}

int tr_port_leave(struct tr_port *p, uint32_t group)
{
        int r = -ENOENT;
        rte_rwlock_write_lock(&p->bind_lock);
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group) {
                        p->groups[i] = p->groups[--p->n_groups];
                        (void)apply_mc_filter(p);
                        r = 0;
                        break;
                }
        rte_rwlock_write_unlock(&p->bind_lock);
        if (r == 0)
                igmp_state_change(p, group, true);
        return r;
}

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
        uint64_t t = now_ns(p);
        rte_spinlock_lock(&p->arp_lock);
        enum tr_arp_result a = tr_arp_lookup(&p->arp, hop, t, mac);
        if (a == TR_ARP_SEND_REQUEST) {
                uint8_t f[TR_ETH_MIN_FRAME];
                size_t n = tr_frame_build_arp(f, 1, bcast_mac, p->mac, p->ip, NULL, hop);
                if (ctl_tx_locked(p, f, n) == 0)
                        CNT_INC(q, arp_requests_tx);
        }
        rte_spinlock_unlock(&p->arp_lock);
        if (a == TR_ARP_HIT)
                return 1;
        CNT_INC(q, tx_wouldblock_arp);
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
        CNT_INC(q, host_local_tx);
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

int tr_send(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
            const void *data, size_t len)
{
        struct tr_msg m = { .dst = dst, .data = data, .len = len };
        return tr_sendmmsg(q, ep, &m, 1);
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
                /* 1. how many of the next datagrams can go, and to which MAC (one ARP
                 *    lookup per run of datagrams to the same destination) */
                unsigned k = 0;
                uint32_t last_dst = 0;
                while (done + k < n && k < p->burst) {
                        const struct tr_msg *m = &msgs[done + k];
                        uint32_t dip = m->dst->sin_addr.s_addr;
                        if (unlikely(m->len > p->mtu)) {
                                err = -EMSGSIZE;
                                break;
                        }
                        if (unlikely(m->dst->sin_family != AF_INET)) {
                                err = -EAFNOSUPPORT;
                                break;
                        }
                        if (unlikely(is_host_local(p, dip))) {
                                if (k) /* keep order: send what came before first */
                                        break;
                                int r = host_local_send(q, ep, m->dst, m->data, m->len);
                                if (r <= 0) {
                                        err = r ? r : 1;
                                        break;
                                }
                                done++;
                                continue;
                        }
                        if (k && dip == last_dst) {
                                mac_of[k] = mac_of[k - 1];
                        } else {
                                int r = next_hop_mac(q, dip, macs[k]);
                                mac_of[k] = macs[k];
                                if (r <= 0) {
                                        err = r ? r : 1;
                                        break;
                                }
                                last_dst = dip;
                        }
                        k++;
                }
                if (k == 0)
                        break;
                /* 2. mbufs for all of them at once, or would-block */
                if (unlikely(rte_pktmbuf_alloc_bulk(p->pool, out, k) != 0)) {
                        CNT_INC(q, tx_wouldblock_nombuf);
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
                        CNT_INC(q, tx_wouldblock_ring);
                        err = 1;
                }
                CNT_ADD(q, tx_datagrams, sent);
                CNT_ADD(q, tx_bytes, bytes);
                done += sent;
        }
        if (done == 0 && err < 0)
                return err;
        return (int)done;
}

/* ARP received on the polling thread: learn, answer requests for us. */
static void on_arp(struct tr_queue *q, const struct tr_frame *f)
{
        struct tr_port *p = q->port;
        uint64_t t = now_ns(p);
        bool for_us = f->arp_tpa == p->ip;

        if (f->arp_op == 1)
                CNT_INC(q, arp_requests_rx);
        else
                CNT_INC(q, arp_replies_rx);
        if (f->arp_spa == p->ip) /* someone claims our address (or our own GARP looped) */
                return;
        rte_spinlock_lock(&p->arp_lock);
        if (f->arp_spa != 0)
                (void)tr_arp_update(&p->arp, f->arp_spa, f->arp_sha, for_us, t);
        if (f->arp_op == 1 && for_us) {
                if (tr_rate_allow(&p->reply_rate, t)) {
                        uint8_t fr[TR_ETH_MIN_FRAME];
                        size_t n = tr_frame_build_arp(fr, 2, f->arp_sha, p->mac, p->ip, f->arp_sha, f->arp_spa);
                        if (ctl_tx_locked(p, fr, n) == 0)
                                CNT_INC(q, arp_replies_tx);
                } else
                        CNT_DROP(q, TR_DROP_ARP_RATE);
        }
        rte_spinlock_unlock(&p->arp_lock);
}

/* IGMP received on the polling thread, which holds bind_lock as a reader: a query for
 * a group we joined (or a General Query) schedules an answer within its Max Resp Time,
 * unless one is due sooner already (RFC 2236 3, RFC 3376 5.2). Nothing is sent here. */
static void on_igmp(struct tr_queue *q, const struct tr_frame *f)
{
        struct tr_port *p = q->port;

        CNT_INC(q, igmp_rx);
        if (f->igmp_type != 0x11) /* only queries need an answer */
                return;
        if (f->igmp_len > 8 && f->igmp_len < 12) /* neither v1/v2 nor v3: ignored (RFC 3376 7.1) */
                return;
        if (f->igmp_group != 0 && !tr_ipv4_is_multicast(f->igmp_group))
                return;
        /* answer an older querier in its version (IGMPv2 is the oldest we speak) */
        uint8_t version = f->igmp_len >= 12 ? p->igmp_version : 2;
        uint64_t max = (uint64_t)tr_igmp_max_resp_ds(f->igmp_code, f->igmp_len) * 100000000;
        uint64_t t = now_ns(p);
        bool any = false;
        rte_spinlock_lock(&p->arp_lock);
        for (unsigned i = 0; i < p->n_groups; i++) {
                if (f->igmp_group != 0 && f->igmp_group != p->groups[i])
                        continue;
                struct tr_igmp_slot *s = igmp_slot(p, p->groups[i], true);
                if (!s)
                        continue;
                if (!s->answer_due || s->answer_due > t + max) {
                        s->answer_due = t + igmp_random_ns(p, max);
                        s->answer_version = version;
                        any = true;
                }
        }
        if (any)
                igmp_update_next(p);
        rte_spinlock_unlock(&p->arp_lock);
}

static bool joined(const struct tr_port *p, uint32_t group)
{
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group)
                        return true;
        return false;
}

static int poll_host_local(struct tr_queue *q, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        struct tr_endpoint *eps[TR_DEMUX_MAX];
        unsigned n = 0;
        int delivered = 0;
        uint8_t buf[RTE_MBUF_DEFAULT_DATAROOM]; /* above the MTU: truncated, then dropped */

        rte_rwlock_read_lock(&p->bind_lock);
        for (unsigned i = 0; i < p->demux.n; i++) {
                struct tr_endpoint *ep = p->demux.e[i].endpoint;
                if (ep->kfd >= 0)
                        eps[n++] = ep;
        }
        /* endpoints are closed only by their owner's thread, so the pointers stay valid
         * while this thread polls; the read lock keeps the table consistent */
        for (unsigned i = 0; i < n; i++) {
                for (int k = 0; k < p->burst; k++) {
                        struct sockaddr_in src;
                        socklen_t sl = sizeof(src);
                        ssize_t r = recvfrom(eps[i]->kfd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
                                             (struct sockaddr *)&src, &sl);
                        if (r < 0)
                                break;
                        if (r > p->mtu) { /* MSG_TRUNC: r is the datagram's real length */
                                CNT_DROP(q, TR_DROP_TOO_BIG);
                                continue;
                        }
                        CNT_INC(q, host_local_rx);
                        fn(clientd, eps[i]->clientd, buf, (size_t)r, &src);
                        delivered++;
                }
        }
        rte_rwlock_read_unlock(&p->bind_lock);
        return delivered;
}

static int poll_rxq(struct tr_queue *q, uint16_t rxq, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        struct rte_mbuf *pkts[TR_MAX_BURST];
        int delivered = 0;

        uint16_t n = rte_eth_rx_burst(p->port_id, rxq, pkts, p->burst);
        if (n == 0)
                return delivered;
        CNT_ADD(q, rx_frames, n);
        uint64_t bytes = 0;
        rte_rwlock_read_lock(&p->bind_lock);
        for (uint16_t i = 0; i < n; i++) {
                struct rte_mbuf *m = pkts[i];
                const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
                struct tr_frame f;
                unsigned flags = 0;
                uint64_t ol = m->ol_flags;

                if (i + 1 < n)
                        rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
                if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
                        flags |= TR_PARSE_IP_CSUM_DONE;
                if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
                        flags |= TR_PARSE_L4_CSUM_DONE;
                tr_frame_parse(d, m->data_len, flags, &f);
                if (f.kind == TR_FRAME_DROP) {
                        CNT_DROP(q, f.drop);
                        continue;
                }
                if (!(f.dst_mac[0] & 1) && memcmp(f.dst_mac, p->mac, 6) != 0) {
                        CNT_DROP(q, TR_DROP_NOT_OUR_MAC);
                        continue;
                }
                if (f.kind == TR_FRAME_ARP) {
                        on_arp(q, &f);
                        continue;
                }
                if (f.kind == TR_FRAME_IGMP) {
                        on_igmp(q, &f);
                        continue;
                }
                if (f.ip_dst != p->ip && f.ip_dst != 0xffffffffu && f.ip_dst != (p->ip | ~p->mask) &&
                    !(tr_ipv4_is_multicast(f.ip_dst) && joined(p, f.ip_dst))) {
                        CNT_DROP(q, TR_DROP_NOT_FOR_US);
                        continue;
                }
                struct tr_endpoint *ep = tr_demux_lookup(&p->demux, f.ip_dst, f.dst_port);
                if (!ep) {
                        CNT_DROP(q, TR_DROP_NO_ENDPOINT);
                        continue;
                }
                struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(f.src_port),
                                           .sin_addr.s_addr = f.ip_src };
                fn(clientd, ep->clientd, d + f.payload_off, f.payload_len, &src);
                bytes += f.payload_len;
                delivered++;
        }
        rte_rwlock_read_unlock(&p->bind_lock);
        rte_pktmbuf_free_bulk(pkts, n);
        CNT_ADD(q, rx_bytes, bytes);
        CNT_ADD(q, rx_datagrams, (uint64_t)delivered);
        return delivered;
}

int tr_poll(struct tr_queue *q, tr_recv_fn fn, void *clientd)
{
        struct tr_port *p = q->port;
        int delivered = 0;

        if (unlikely((q->polls++ % TR_SLOW_EVERY) == 0)) {
                /* all receiving happens on queue 0's thread, kernel sockets included */
                if (q->qid == 0) {
                        if (p->host_local)
                                delivered += poll_host_local(q, fn, clientd);
                        igmp_tick(p);
                }
        }
        delivered += poll_rxq(q, q->qid, fn, clientd);
        if (q->qid == 0 && p->n_rxq > p->n_queues)
                delivered += poll_rxq(q, p->ctl_qid, fn, clientd);
        return delivered;
}

void tr_port_counters(struct tr_port *p, struct tr_counters *ret)
{
        struct tr_counters sum;
        memset(&sum, 0, sizeof(sum));
        for (unsigned i = 0; i <= p->n_queues; i++) {
                const uint64_t *src = (const uint64_t *)(i < p->n_queues ? &p->q[i].c : &p->ctl);
                uint64_t *dst = (uint64_t *)&sum;
                for (size_t k = 0; k < sizeof(sum) / sizeof(uint64_t); k++)
                        dst[k] += __atomic_load_n(&src[k], __ATOMIC_RELAXED);
        }
        *ret = sum;
}

uint64_t tr_counters_drops(const struct tr_counters *c)
{
        uint64_t n = 0;
        for (unsigned i = 0; i < TR_DROP__MAX; i++)
                n += c->drops[i];
        return n;
}
