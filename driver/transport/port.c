/* SPDX-License-Identifier: Apache-2.0 */
/* Port bring-up: the EAL, then for one port the checks (the pure sizing module), the
 * host-local watcher, the mbuf pool, device configuration, RX/TX queues, start, MAC, link
 * wait and the first gratuitous ARP; close, accessors and counters. Never logs: refusals go to the caller's
 * buffer. Not on the data path. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "port_internal.h"
#include "sizing.h"

_Static_assert(TR_MBUF_DATAROOM == RTE_MBUF_DEFAULT_DATAROOM, "sizing checks the MTU against the pool's data room");

#define TR_POOL_CACHE 256

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        if (!err || !errlen)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
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

/* The config checked on its own, then against the device's queue and ring limits. */
static int plan_port(const struct tr_port_config *cfg, struct rte_eth_dev_info *info,
                     struct tr_port_plan *ret, char *err, size_t errlen)
{
        struct tr_port_plan plan;
        int r;

        if (!rte_eth_dev_is_valid_port(cfg->port_id)) {
                set_err(err, errlen, "no DPDK port %u", cfg->port_id);
                return -ENODEV;
        }
        r = tr_port_plan(cfg, &plan, err, errlen);
        if (r < 0)
                return r;
        r = rte_eth_dev_info_get(cfg->port_id, info);
        if (r < 0) {
                set_err(err, errlen, "cannot read device info of port %u", cfg->port_id);
                return r;
        }
        const struct tr_dev_caps caps = {
                .driver = info->driver_name,
                .max_rx_queues = info->max_rx_queues,
                .max_tx_queues = info->max_tx_queues,
                .rx = { info->rx_desc_lim.nb_min, info->rx_desc_lim.nb_max, info->rx_desc_lim.nb_align },
                .tx = { info->tx_desc_lim.nb_min, info->tx_desc_lim.nb_max, info->tx_desc_lim.nb_align },
        };
        return tr_port_plan_fit(&plan, cfg, &caps, ret, err, errlen);
}

/* The port structure with the plan applied, its locks, clock, ARP table and IGMP timers. */
static struct tr_port *port_new(const struct tr_port_config *cfg, const struct tr_port_plan *plan)
{
        struct tr_port *p = rte_zmalloc_socket("spinlane-port", sizeof(*p), RTE_CACHE_LINE_SIZE,
                                               rte_eth_dev_socket_id(cfg->port_id));
        if (!p)
                return NULL;
        p->port_id = cfg->port_id;
        p->n_queues = plan->n_queues;
        p->n_rxq = plan->n_rxq;
        p->ctl_qid = plan->n_queues;
        p->burst = plan->burst;
        p->mtu = plan->mtu;
        p->ip = cfg->ipv4;
        p->mask = plan->mask;
        p->gateway = cfg->gateway;
        p->ttl = plan->ttl;
        p->host_local = !cfg->no_host_local;
        p->udp_csum_sw = !cfg->no_udp_csum; /* unless the device offloads it (dev_configure) */
        p->hl_epfd = p->hl_evfd = -1;
        p->tsc_hz = rte_get_tsc_hz();
        p->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / p->tsc_hz);
        p->next_ephemeral = 49152;
        rte_rwlock_init(&p->bind_lock);
        rte_spinlock_init(&p->arp_lock);
        uint64_t t0 = tr_now_ns(p);
        tr_igmp_init(&p->igmp, plan->igmp_version, plan->igmp_robustness, plan->igmp_uri_ns,
                     rte_get_tsc_cycles() ^ ((uint64_t)cfg->ipv4 << 16) ^ 0x9e3779b97f4a7c15ull);
        p->igmp_next = tr_igmp_next(&p->igmp);
        p->flows_expire = UINT64_MAX;
        uint32_t rate = plan->arp_rate;
        tr_arp_table_init(&p->arp, plan->arp_ttl_ns, plan->arp_retry_ns, rate, t0);
        tr_arp_table_set_reprobe(&p->arp, plan->arp_reprobe_ns);
        tr_rate_init(&p->reply_rate, rate, rate < 16 ? rate : 16, t0);
        p->probe_port = cfg->probe_port;
        tr_rate_init(&p->probe_rate, plan->probe_rate, plan->probe_rate < 64 ? plan->probe_rate : 64, t0);
        for (unsigned i = 0; i < plan->n_queues; i++) {
                p->q[i].port = p;
                p->q[i].qid = (uint16_t)i;
                p->q[i].rx_key = TR_RX_KEY_NONE;
        }
        return p;
}

/* One pool for the port: every RX descriptor full, every TX descriptor in flight, a burst
 * per thread being built, the control queue, and the per-lcore caches. */
static int pool_create(struct tr_port *p, const struct tr_port_plan *plan, char *err, size_t errlen)
{
        char name[RTE_MEMPOOL_NAMESIZE];
        unsigned n_mbufs = tr_pool_size(plan->n_queues, plan->rx_ring, plan->tx_ring, plan->burst,
                                        TR_POOL_CACHE, rte_lcore_count());
        snprintf(name, sizeof(name), "sl-tr-%u", p->port_id);
        p->pool = rte_pktmbuf_pool_create(name, n_mbufs, TR_POOL_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          rte_eth_dev_socket_id(p->port_id));
        if (!p->pool) {
                set_err(err, errlen, "cannot create a pool of %u mbufs: %s", n_mbufs, rte_strerror(rte_errno));
                return -ENOMEM;
        }
        return 0;
}

/* rte_eth_dev_configure with the checksum offloads the device has (both TX offloads or
 * none: the builder computes both sums otherwise), the final ring sizes and the MTU. */
static int dev_configure(struct tr_port *p, const struct rte_eth_dev_info *info, uint16_t *rx_ring,
                         uint16_t *tx_ring, char *err, size_t errlen)
{
        struct rte_eth_conf conf;
        int r;

        memset(&conf, 0, sizeof(conf));
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
        uint64_t want_tx = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
        if ((info->tx_offload_capa & want_tx) == want_tx) {
                conf.txmode.offloads = want_tx;
                p->ip_csum_offload = p->udp_csum_offload = true;
        }
        uint64_t want_rx = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
        conf.rxmode.offloads = info->rx_offload_capa & want_rx;
        p->rx_csum_offload = conf.rxmode.offloads != 0;
        if (p->udp_csum_offload)
                p->udp_csum_sw = false;
        r = rte_eth_dev_configure(p->port_id, p->n_rxq, p->n_queues + 1, &conf);
        if (r < 0) {
                set_err(err, errlen, "rte_eth_dev_configure(port %u, %u queues): %s", p->port_id,
                        p->n_queues, strerror(-r));
                return r;
        }
        r = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, rx_ring, tx_ring);
        if (r < 0 && r != -ENOTSUP) {
                set_err(err, errlen, "ring sizes %u/%u refused: %s", *rx_ring, *tx_ring, strerror(-r));
                return r;
        }
        uint16_t dev_mtu = 0, need = (uint16_t)(p->mtu + TR_IP_HLEN + TR_UDP_HLEN);
        if (rte_eth_dev_get_mtu(p->port_id, &dev_mtu) < 0 || dev_mtu < need) {
                r = rte_eth_dev_set_mtu(p->port_id, need);
                if (r < 0) {
                        set_err(err, errlen, "device MTU %u below %u (Aeron MTU %u + 28) and cannot be raised: %s",
                                dev_mtu, need, p->mtu, strerror(-r));
                        return r;
                }
        }
        return 0;
}

static int queues_setup(struct tr_port *p, uint16_t rx_ring, uint16_t tx_ring, char *err, size_t errlen)
{
        int socket = rte_eth_dev_socket_id(p->port_id);
        for (uint16_t i = 0; i < p->n_rxq; i++) {
                int r = rte_eth_rx_queue_setup(p->port_id, i, rx_ring, (unsigned)socket, NULL, p->pool);
                if (r < 0) {
                        set_err(err, errlen, "RX queue %u (%u descriptors): %s", i, rx_ring, strerror(-r));
                        return r;
                }
        }
        for (uint16_t i = 0; i <= p->n_queues; i++) {
                int r = rte_eth_tx_queue_setup(p->port_id, i, tx_ring, (unsigned)socket, NULL);
                if (r < 0) {
                        set_err(err, errlen, "TX queue %u (%u descriptors): %s", i, tx_ring, strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* Start the device, read its MAC, set the multicast filter, wait for the link when asked.
 * On failure the device is stopped again. */
static int dev_start(struct tr_port *p, uint32_t link_wait_ms, char *err, size_t errlen)
{
        struct rte_ether_addr mac;
        int r = rte_eth_dev_start(p->port_id);
        if (r < 0) {
                set_err(err, errlen, "rte_eth_dev_start(port %u): %s", p->port_id, strerror(-r));
                return r;
        }
        r = rte_eth_macaddr_get(p->port_id, &mac);
        if (r < 0) {
                set_err(err, errlen, "cannot read the MAC of port %u", p->port_id);
                rte_eth_dev_stop(p->port_id);
                return r;
        }
        memcpy(p->mac, mac.addr_bytes, 6);
        uint8_t mac8[8] = { 0 };
        memcpy(mac8, p->mac, 6);
        memcpy(&p->mac64, mac8, 8);
        (void)tr_ctl_mc_filter(p);

        if (link_wait_ms) {
                uint64_t deadline = tr_now_ns(p) + (uint64_t)link_wait_ms * 1000000;
                while (!tr_port_link_up(p) && tr_now_ns(p) < deadline)
                        rte_delay_us_sleep(10000);
                if (!tr_port_link_up(p)) {
                        set_err(err, errlen, "link of port %u still down after %u ms", p->port_id, link_wait_ms);
                        rte_eth_dev_stop(p->port_id);
                        return -ETIMEDOUT;
                }
        }
        return 0;
}

int tr_port_open(const struct tr_port_config *cfg, struct tr_port **ret, char *err, size_t errlen)
{
        struct rte_eth_dev_info info;
        struct tr_port_plan plan;
        struct tr_port *p;

        int r = plan_port(cfg, &info, &plan, err, errlen);
        if (r < 0)
                return r;
        p = port_new(cfg, &plan);
        if (!p) {
                set_err(err, errlen, "out of DPDK memory for the port");
                return -ENOMEM;
        }
        uint16_t rx_ring = plan.rx_ring, tx_ring = plan.tx_ring;
        r = p->host_local ? tr_hl_start(p) : 0;
        if (r < 0)
                set_err(err, errlen, "cannot start the host-local socket watcher: %s", strerror(-r));
        if (r == 0)
                r = pool_create(p, &plan, err, errlen);
        if (r == 0)
                r = dev_configure(p, &info, &rx_ring, &tx_ring, err, errlen);
        if (r == 0)
                r = queues_setup(p, rx_ring, tx_ring, err, errlen);
        if (r == 0)
                r = dev_start(p, cfg->link_wait_ms, err, errlen);
        if (r < 0) {
                tr_hl_stop(p);
                rte_mempool_free(p->pool);
                rte_free(p);
                return r;
        }
        (void)tr_port_announce(p);
        *ret = p;
        return 0;
}

void tr_port_close(struct tr_port *p)
{
        if (!p)
                return;
        rte_eth_dev_stop(p->port_id);
        rte_eth_dev_close(p->port_id);
        tr_hl_stop(p);
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
