/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the port checks (tr_port_plan, tr_port_plan_fit) on any configuration and
 * device limits; what they accept must be within every limit they claim to enforce. */
#include "sizing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct cursor {
        const uint8_t *p;
        size_t n;
};

static uint32_t take(struct cursor *c, unsigned bytes)
{
        uint32_t v = 0;
        for (unsigned i = 0; i < bytes; i++) {
                v = v << 8 | (c->n ? *c->p : 0);
                if (c->n) {
                        c->p++;
                        c->n--;
                }
        }
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct cursor c = { data, size };
        struct tr_port_config cfg = {
                .port_id = (uint16_t)take(&c, 2), .n_queues = (uint16_t)take(&c, 2),
                .rx_ring = (uint16_t)take(&c, 2), .tx_ring = (uint16_t)take(&c, 2),
                .burst = (uint16_t)take(&c, 2), .mtu = (uint16_t)take(&c, 2), .ipv4 = take(&c, 4),
                .prefix_len = (uint8_t)take(&c, 1), .gateway = take(&c, 4),
                .arp_ttl_ms = take(&c, 4), .arp_retry_ms = take(&c, 4), .arp_rate = take(&c, 4),
                .igmp_version = (uint8_t)take(&c, 1), .igmp_robustness = (uint8_t)take(&c, 1),
                .igmp_unsolicited_ms = take(&c, 4), .ttl = (uint8_t)take(&c, 1),
        };
        uint32_t flags = take(&c, 1);
        cfg.no_host_local = flags & 1;
        cfg.clamp_rings = flags & 2;
        struct tr_dev_caps dev = {
                .driver = (flags & 4) ? NULL : "fuzz",
                .max_rx_queues = (uint16_t)take(&c, 2), .max_tx_queues = (uint16_t)take(&c, 2),
                .rx = { (uint16_t)take(&c, 2), (uint16_t)take(&c, 2), (uint16_t)take(&c, 2) },
                .tx = { (uint16_t)take(&c, 2), (uint16_t)take(&c, 2), (uint16_t)take(&c, 2) },
        };
        char err[96];
        struct tr_port_plan p;
        int r = tr_port_plan(&cfg, &p, err, sizeof(err));
        if (r < 0) {
                if (r != -EINVAL || !memchr(err, 0, sizeof(err)))
                        abort();
                return 0;
        }
        if (p.n_queues < 1 || p.n_queues > TR_MAX_QUEUES || p.burst < 1 || p.burst > TR_MAX_BURST ||
            (size_t)p.mtu + TR_UDP_HDRS > TR_MBUF_DATAROOM || p.mtu == 0 || cfg.ipv4 == 0 ||
            (p.igmp_version != 2 && p.igmp_version != 3) || p.igmp_robustness < 1 ||
            p.igmp_robustness > 7 || p.igmp_uri_ns == 0 || p.ttl == 0 || p.arp_rate == 0)
                abort();
        if (cfg.gateway && (cfg.gateway & p.mask) != (cfg.ipv4 & p.mask))
                abort();
        struct tr_port_plan f;
        r = tr_port_plan_fit(&p, &cfg, &dev, &f, err, sizeof(err));
        if (r < 0) {
                if (r != -EINVAL)
                        abort();
                return 0;
        }
        if (f.n_queues > dev.max_rx_queues || f.n_queues + 1 > dev.max_tx_queues ||
            f.n_rxq < f.n_queues || f.n_rxq > f.n_queues + 1 || f.n_rxq > dev.max_rx_queues)
                abort();
        /* an explicit size is taken as asked unless clamping was allowed */
        if (!cfg.clamp_rings && ((cfg.rx_ring && f.rx_ring != cfg.rx_ring) ||
                                 (cfg.tx_ring && f.tx_ring != cfg.tx_ring)))
                abort();
        (void)tr_pool_size(f.n_queues, f.rx_ring, f.tx_ring, f.burst, 256, 128);
        return 0;
}
