/* SPDX-License-Identifier: Apache-2.0 */
/* The one device map: every NIC and core of the node as the one device value
 * (common/device.h): which spinlane advertises to the kubelet (<prefix>/dpdk-nic,
 * <prefix>/isolated-core), each with its health, attributes and device nodes, and for
 * every one not advertised the one reason why. The rule lives here and nowhere else, the
 * history too: what a device the kubelet was told of keeps when it is no longer takeable,
 * unbound or gone. The daemon builds it once a scan and hands it to every service (the
 * device plugins' lists: device_map_list), `inventory --json` lists its resources,
 * `explain` prints it, the node checks read it. Pure: no I/O, never logs. */
#ifndef SPIN_AGENT_DEVICE_MAP_H
#define SPIN_AGENT_DEVICE_MAP_H

#include "device.h"
#include "inventory.h"
#include "select.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* NICs in PCI order, then cores in first-CPU order, then vanished devices (NICs, cores)
 * in the order of the history. */
typedef struct device_map {
        device_entry *items;
        size_t n;
} device_map;

/* The map of sel->inv under sel (its config and selection). prev (NULL: none) is the
 * map of the scan before, what the kubelet was told before: a device it lists (Healthy
 * or Unhealthy) stays listed, Unhealthy, when it is no longer takeable; one gone from the
 * node keeps its last value, Unhealthy (DEVICE_VANISHED); a NIC listed before that has
 * lost its device nodes (unbound) keeps the ones the pod was given. A NIC is Healthy when
 * the config selects it, it is DPDK-ready (device_map_nic_ready) and its address is known
 * (INV_ADDR_KNOWN); selected and ready without an address it is listed Unhealthy. A core
 * is Healthy when select_core takes it. -ENOMEM leaves *ret untouched. */
int device_map_build(const selection *sel, const device_map *prev, device_map *ret);
/* Accepts a zeroed map; leaves it zeroed. */
void device_map_free(device_map *m);

/* The entry of (kind, id); NULL when absent. */
const device_entry *device_map_find(const device_map *m, device_kind kind, const char *id);
/* The entry of inventory NIC nic (by PCI address); NULL when absent. */
const device_entry *device_map_nic(const device_map *m, const inv_nic *nic);
/* Whether the entry's state or reason differs from prev's for the same device, or the
 * device is new (NULL prev: every entry is new). */
bool device_map_changed(const device_map *prev, const device_entry *e);

/* The devices of kind the kubelet is told of (Healthy or Unhealthy), as a device plugin
 * lists them (device_list_sort), into *ret (empty before). -ENOMEM leaves it empty. */
int device_map_list(const device_map *m, device_kind kind, device_list *ret);

/* The line a person reads: "<prefix>/dpdk-nic 0000:00:06.0: advertised, Healthy: ...",
 * "...: not advertised (primary): ..." (prefix NULL: DEVICE_PREFIX_DEFAULT).
 * Truncated to len. */
void device_map_line(const device_entry *e, const char *prefix, char *buf, size_t len);
/* {"resource","id","state","reason","detail"} (new reference; NULL on -ENOMEM). */
json_t *device_map_json(const device_entry *e, const char *prefix);

/* A NIC a DPDK pod may be given as it stands: dpdk_ready and not the primary. (A NIC the
 * node uses is on its kernel driver, so not dpdk_ready, unless it is a MANA VF, which
 * DPDK shares with its kernel driver.) */
bool device_map_nic_ready(const inv_nic *nic);
/* The rule's first half, before the address: the config selects the NIC and it is
 * DPDK-ready. Such a NIC is listed whatever its address, so the addresses resolve
 * exactly these (the address is the rule's last input: addresses.c asks this, not the
 * finished map). */
bool device_map_nic_wants_address(const selection *sel, const inv_nic *nic);
/* Whether the config selects the NIC, as the map says (its reason is none of primary,
 * not-selected, over-max): the node checks read this. */
bool device_map_nic_selected(const device_map *m, const inv_nic *nic);

#endif
