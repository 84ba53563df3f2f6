/* SPDX-License-Identifier: Apache-2.0 */
/* Ring and pool sizing. Pure: no I/O, no DPDK, never logs. */
#include "sizing.h"

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
