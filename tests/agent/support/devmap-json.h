/* SPDX-License-Identifier: Apache-2.0 */
/* inventory_to_json as `spinlane-agent inventory --json` makes it: the config's selection
 * (no bind state), its device map, the document. For the node room's tests (they link
 * spinnode). */
#pragma once

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
