/* SPDX-License-Identifier: Apache-2.0 */
/* Sizing of a port: the checks of a tr_port_config and what it resolves to (defaults,
 * subnet mask, timers), fitting it to a device's limits (queues, descriptor counts, MANA's
 * 256), and the mbuf count a port needs. Pure: no I/O, no DPDK, never logs; refusals
 * come back as -EINVAL with the reason written to the caller's buffer. */
#ifndef TR_SIZING_H
#define TR_SIZING_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define TR_MAX_BURST 256
#define TR_MBUF_DATAROOM 2048 /* RTE_MBUF_DEFAULT_DATAROOM: one datagram per mbuf */

/* The descriptor count closest to want that the device accepts: within [min, max]
 * (max 0 = no limit) and a multiple of align (0/1 = any). */
uint16_t tr_ring_fit(uint16_t want, uint16_t min, uint16_t max, uint16_t align);

/* Mbufs for n_queues polling threads: every RX descriptor full, every TX descriptor in
 * flight, two bursts being built per thread, the control queue, a reserve for control
 * frames, and the per-lcore caches. */
uint32_t tr_pool_size(uint16_t n_queues, uint16_t rx_ring, uint16_t tx_ring, uint16_t burst,
                      uint32_t cache, uint32_t n_lcores);

/* What a device accepts (from rte_eth_dev_info). */
struct tr_desc_lim {
        uint16_t nb_min, nb_max, nb_align; /* nb_max 0 = no limit */
};
struct tr_dev_caps {
        const char *driver; /* for messages */
        uint16_t max_rx_queues, max_tx_queues;
        struct tr_desc_lim rx, tx;
};

/* A port configuration with every default filled in and every value checked. */
struct tr_port_plan {
        uint16_t n_queues;  /* polling threads */
        uint16_t n_rxq;     /* RX queues to configure: n_queues, + 1 mirroring the control TX queue when the device has one */
        uint16_t rx_ring, tx_ring; /* descriptors, fitted to the device */
        uint16_t burst, mtu;
        uint32_t mask;      /* subnet mask, network order */
        uint8_t ttl, igmp_version, igmp_robustness;
        uint32_t arp_rate;
        uint64_t arp_ttl_ns, arp_retry_ns, igmp_uri_ns;
        uint64_t arp_reprobe_ns; /* 0 = never */
        uint32_t probe_rate;
};

/* Check cfg on its own (queues, burst, prefix, address, IGMP, gateway in the subnet, the
 * MTU against one mbuf) and fill in the defaults; the rings are left as asked (0 = 1024)
 * until tr_port_plan_fit. -EINVAL with the reason in err (errlen bytes, when given);
 * ret untouched on failure. */
int tr_port_plan(const struct tr_port_config *cfg, struct tr_port_plan *ret, char *err,
                 size_t errlen);

/* Fit plan (from tr_port_plan(cfg)) to the device: queue counts (n_queues RX, n_queues + 1
 * TX), ring sizes within the descriptor limits (defaults fitted silently; sizes cfg chose
 * refused with the limits in err unless cfg->clamp_rings), the spare RX queue. Writes the
 * fitted plan to ret (which may be plan) only on success; -EINVAL otherwise. */
int tr_port_plan_fit(const struct tr_port_plan *plan, const struct tr_port_config *cfg,
                     const struct tr_dev_caps *dev, struct tr_port_plan *ret, char *err,
                     size_t errlen);

#endif
