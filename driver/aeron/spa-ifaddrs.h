/* SPDX-License-Identifier: Apache-2.0 */
/* Makes the DPDK ports visible to Aeron's interface lookup (channel `interface=` and the
 * default multicast interface): Aeron enumerates interfaces through a replaceable
 * getifaddrs, and this one puts "spinlane0" (the sender's or the shared port) and
 * "spinlane1" (the receiver's) in front of the kernel's list. */
#ifndef SPA_IFADDRS_H
#define SPA_IFADDRS_H

#include "spa-internal.h"

/* The ports' addresses must stay valid until uninstall. -ENOMEM never happens here. */
int spa_ifaddrs_install(const struct spa_port *ports, unsigned n_ports);
/* Back to Aeron's own lookup. */
void spa_ifaddrs_uninstall(void);

#endif
