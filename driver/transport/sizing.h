/* SPDX-License-Identifier: Apache-2.0 */
/* Ring and pool sizing for a port: fitting descriptor counts to a device's limits and
 * the mbuf count a port needs. Pure: no I/O, no DPDK, never logs. */
#ifndef TR_SIZING_H
#define TR_SIZING_H

#include <stdint.h>

/* The descriptor count closest to want that the device accepts: within [min, max]
 * (max 0 = no limit) and a multiple of align (0/1 = any). */
uint16_t tr_ring_fit(uint16_t want, uint16_t min, uint16_t max, uint16_t align);

/* Mbufs for n_queues polling threads: every RX descriptor full, every TX descriptor in
 * flight, two bursts being built per thread, the control queue, a reserve for control
 * frames, and the per-lcore caches. */
uint32_t tr_pool_size(uint16_t n_queues, uint16_t rx_ring, uint16_t tx_ring, uint16_t burst,
                      uint32_t cache, uint32_t n_lcores);

#endif
