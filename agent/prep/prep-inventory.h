/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge from the node inventory (agent/node/inventory.h) to node preparation: the NIC
 * list and the scan function for prep_daemon/prep_once. Which NICs are taken is
 * agent/node/select.h. Never logs. */
#ifndef SPIN_PREP_INVENTORY_H
#define SPIN_PREP_INVENTORY_H

#include "inventory.h"
#include "prep.h"

/* Every NIC of the inventory (PCI order), at most max. */
size_t prep_nics_from_inventory(const inventory *inv, prep_nic *ret, size_t max);
/* A prep_scan_fn: inventory_scan() under h, then the NIC list. userdata unused. */
int prep_scan_inventory(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n);

#endif
