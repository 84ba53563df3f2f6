/* SPDX-License-Identifier: Apache-2.0 */
/* The adapter's counters in Aeron's counters file (AeronStat shows them): per DPDK port
 * traffic, would-blocks, ARP/IGMP and drops by reason, refreshed from the transport's
 * own counters; per agent the hand-off figures, written in place by that agent. */
#ifndef SPA_COUNTERS_H
#define SPA_COUNTERS_H

#include <stddef.h>

#include "spa-internal.h"

/* Allocate every counter (before the conductor runs: the counters manager is the
 * conductor's). -ENOMEM / -ENOSPC with the reason in err. */
int spa_counters_alloc(struct aeron_counters_manager_stct *cm, struct spa_port *ports, unsigned n_ports,
                       struct spa_agent *agents, char *err, size_t errlen);
/* Copy the port's transport counters into its Aeron counters (any one thread at a time). */
void spa_counters_refresh(struct spa_port *p);
/* The name of port counter i ("rx frames", "drop udp_checksum", ...) into buf. */
void spa_counter_name(unsigned i, char *buf, size_t len);

#endif
