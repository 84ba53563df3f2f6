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

/* The config's NIC selection over a whole inventory: prep_select() (the same function
 * node preparation binds by), so nics.max and the interface names remembered in the
 * bind state count as they do there. selected[i] is for inv->nics[i]. The node checks
 * (prep_checks_nic_in_selection) and the device plugin (advertise exactly the selected,
 * DPDK-ready, non-primary NICs) use it. */
typedef struct prep_selection {
        const inventory *inv;   /* borrowed: must outlive the selection */
        bool *selected;
} prep_selection;

/* st may be NULL. -ENOMEM leaves *ret untouched. */
int prep_selection_new(const config *c, const inventory *inv, const bind_state *st, prep_selection *ret);
void prep_selection_free(prep_selection *s);
/* nic must be an element of s->inv->nics. */
bool prep_selection_has(const prep_selection *s, const inv_nic *nic);
/* checks_options.nic_selected with userdata = const prep_selection *. */
bool prep_checks_nic_in_selection(const inv_nic *nic, void *userdata);

#endif
