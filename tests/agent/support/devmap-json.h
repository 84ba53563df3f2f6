/* SPDX-License-Identifier: Apache-2.0 */
/* inventory_to_json as `spinlane-agent inventory --json` makes it: the config's selection
 * (no bind state), its device map, the document. For the node room's tests (they link
 * spinnode). */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "device-map.h"
#include "inventory.h"
#include "select.h"

/* c NULL: the default config. NULL on -ENOMEM. */
static inline json_t *inventory_json_under(const inventory *inv, const config *c, const char *prefix)
{
        config def;
        selection sel = { 0 };
        device_map map = { 0 };
        json_t *j = NULL;

        if (!c) {
                config_init(&def);
                c = &def;
        }
        if (selection_new(c, inv, NULL, &sel) == 0 && device_map_build(&sel, NULL, &map) == 0)
                j = inventory_to_json(inv, &map, prefix);
        device_map_free(&map);
        selection_free(&sel);
        return j;
}

/* A device map of inv in which the NICs pick takes are selected (DEVICE_OK) and the others
 * not (DEVICE_NOT_SELECTED): the checks under selections no config makes (the primary
 * selected, MANA only). -ENOMEM leaves *ret untouched. */
static inline int device_map_where(const inventory *inv, bool (*pick)(const inv_nic *nic, void *userdata),
                                   device_map *ret)
{
        device_entry *items = calloc(inv->n_nics ? inv->n_nics : 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_nics; i++) {
                items[i].kind = DEVICE_NIC;
                snprintf(items[i].id, sizeof(items[i].id), "%s", inv->nics[i].pci);
                snprintf(items[i].pci, sizeof(items[i].pci), "%s", inv->nics[i].pci);
                items[i].index = (long)i;
                items[i].why = pick(&inv->nics[i], NULL) ? DEVICE_OK : DEVICE_NOT_SELECTED;
                items[i].state = items[i].why == DEVICE_OK ? DEVICE_HEALTHY : DEVICE_NOT_ADVERTISED;
        }
        *ret = (device_map){ .items = items, .n = inv->n_nics };
        return 0;
}
