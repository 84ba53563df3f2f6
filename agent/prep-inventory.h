/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge from the node inventory (agent/inventory.h) to node preparation: NIC list,
 * the scan function for prep_daemon/prep_once, and the config's NIC selection as the
 * node checks' nic_selected hook (checks_options). Never logs. */
#ifndef SPIN_PREP_INVENTORY_H
#define SPIN_PREP_INVENTORY_H

#include "inventory.h"
#include "prep.h"

void prep_nic_from_inv(const inv_nic *n, prep_nic *ret);
/* Every NIC of the inventory (PCI order), at most max. */
size_t prep_nics_from_inventory(const inventory *inv, prep_nic *ret, size_t max);
/* A prep_scan_fn: inventory_scan() under h, then the NIC list. userdata unused. */
int prep_scan_inventory(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n);
/* checks_options.nic_selected with userdata = const config *: the config's kinds, ids,
 * PCI addresses and interface names (never the primary). */
bool prep_checks_nic_selected(const inv_nic *nic, void *userdata);

#endif
