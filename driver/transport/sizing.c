/* SPDX-License-Identifier: Apache-2.0 */
/* Port configuration checks, ring fitting and pool sizing. Pure: no I/O, no DPDK, never
 * logs; reasons go to the caller's buffer. */
#include "sizing.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

uint16_t tr_ring_fit(uint16_t want, uint16_t min, uint16_t max, uint16_t align)
{
        uint32_t v = want;
        if (max && v > max)
                v = max;
        if (v < min)
                v = min;
        if (align > 1) {
                uint32_t down = v / align * align;
                /* round down unless that falls below the minimum, then up */
                v = down >= min && down ? down : (v + align - 1) / align * align;
                if (max && v > max)
                        v = max / align * align;
        }
        return (uint16_t)v;
}

uint32_t tr_pool_size(uint16_t n_queues, uint16_t rx_ring, uint16_t tx_ring, uint16_t burst,
                      uint32_t cache, uint32_t n_lcores)
{
        return (uint32_t)n_queues * ((uint32_t)rx_ring + tx_ring + 2u * burst) + tx_ring + 512 +
               cache * 3 / 2 * n_lcores; /* a cache holds up to 1.5x its size */
}

__attribute__((format(printf, 3, 4))) static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

int tr_port_plan(const struct tr_port_config *cfg, struct tr_port_plan *ret, char *err,
                 size_t errlen)
{
        struct tr_port_plan p = {
                .n_queues = cfg->n_queues ? cfg->n_queues : 1,
                .rx_ring = cfg->rx_ring ? cfg->rx_ring : 1024,
                .tx_ring = cfg->tx_ring ? cfg->tx_ring : 1024,
                .burst = cfg->burst ? cfg->burst : 32,
                .mtu = cfg->mtu ? cfg->mtu : TR_DEFAULT_MTU,
                .ttl = cfg->ttl ? cfg->ttl : 64,
                .igmp_version = cfg->igmp_version ? cfg->igmp_version : 3,
                .igmp_robustness = cfg->igmp_robustness ? cfg->igmp_robustness : 2,
                .arp_rate = cfg->arp_rate ? cfg->arp_rate : 100,
                .arp_ttl_ns = (uint64_t)(cfg->arp_ttl_ms ? cfg->arp_ttl_ms : 60000) * 1000000,
                .arp_retry_ns = (uint64_t)(cfg->arp_retry_ms ? cfg->arp_retry_ms : 100) * 1000000,
                .arp_reprobe_ns = cfg->arp_reprobe_ms == UINT32_MAX
                                          ? 0
                                          : (uint64_t)(cfg->arp_reprobe_ms ? cfg->arp_reprobe_ms : 2000) * 1000000,
                .probe_rate = cfg->probe_rate ? cfg->probe_rate : 1000,
        };
        if (p.n_queues > TR_MAX_QUEUES || p.burst > TR_MAX_BURST || cfg->prefix_len < 1 ||
            cfg->prefix_len > 32 || cfg->ipv4 == 0 ||
            (cfg->igmp_version && cfg->igmp_version != 2 && cfg->igmp_version != 3) ||
            cfg->igmp_robustness > 7)
                return refuse(err, errlen,
                              "bad configuration (queues %u, burst %u, prefix /%u, igmp v%u robustness %u)",
                              p.n_queues, p.burst, cfg->prefix_len, cfg->igmp_version,
                              cfg->igmp_robustness);
        p.mask = cfg->prefix_len == 32 ? 0xffffffffu : htonl(~(0xffffffffu >> cfg->prefix_len));
        if (cfg->gateway && (cfg->gateway & p.mask) != (cfg->ipv4 & p.mask))
                return refuse(err, errlen, "gateway outside the /%u subnet of our address", cfg->prefix_len);
        if ((size_t)p.mtu + TR_UDP_HDRS > TR_MBUF_DATAROOM)
                return refuse(err, errlen, "MTU %u does not fit one %u-byte packet buffer", p.mtu,
                              TR_MBUF_DATAROOM);
        p.igmp_uri_ns = cfg->igmp_unsolicited_ms ? (uint64_t)cfg->igmp_unsolicited_ms * 1000000
                                                 : (p.igmp_version == 3 ? 1000000000ull : 10000000000ull);
        p.n_rxq = p.n_queues;
        *ret = p;
        return 0;
}

int tr_port_plan_fit(const struct tr_port_plan *plan, const struct tr_port_config *cfg,
                     const struct tr_dev_caps *dev, struct tr_port_plan *ret, char *err,
                     size_t errlen)
{
        struct tr_port_plan p = *plan;
        uint16_t nq = p.n_queues;
        const char *drv = dev->driver ? dev->driver : "?";
        if (nq > dev->max_rx_queues || nq + 1 > dev->max_tx_queues)
                return refuse(err, errlen, "device %s has %u RX / %u TX queues, %u+%u needed",
                              drv, dev->max_rx_queues, dev->max_tx_queues, nq, nq + 1);
        uint16_t rx_fit = tr_ring_fit(p.rx_ring, dev->rx.nb_min, dev->rx.nb_max, dev->rx.nb_align);
        uint16_t tx_fit = tr_ring_fit(p.tx_ring, dev->tx.nb_min, dev->tx.nb_max, dev->tx.nb_align);
        /* defaults are fitted silently; sizes the caller chose are refused with the
         * device's limits (MANA: 256) unless clamping was asked for */
        bool explicit_ring = (cfg->rx_ring && rx_fit != p.rx_ring) || (cfg->tx_ring && tx_fit != p.tx_ring);
        if (explicit_ring && !cfg->clamp_rings)
                return refuse(err, errlen,
                              "rings %u/%u outside what %s accepts (RX %u..%u, TX %u..%u descriptors)",
                              p.rx_ring, p.tx_ring, drv, dev->rx.nb_min, dev->rx.nb_max,
                              dev->tx.nb_min, dev->tx.nb_max);
        p.rx_ring = rx_fit;
        p.tx_ring = tx_fit;
        /* A spare RX queue mirrors the control TX queue where the device has one: a
         * memif peer's control ring lands there, and queue 0's poller drains it. */
        p.n_rxq = dev->max_rx_queues > nq ? nq + 1 : nq;
        *ret = p;
        return 0;
}
