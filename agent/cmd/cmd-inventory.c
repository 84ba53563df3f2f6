/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent inventory [--root DIR] [--config FILE] --json`: the node inventory as
 * one JSON document on stdout. Read-only; exit 0, or 2 on a usage or internal error. */
#include "cmd.h"

#include "config.h"
#include "device-map.h"
#include "hostfs.h"
#include "inventory.h"
#include "select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_inventory(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent inventory [--root DIR] [--config FILE] --json";
        agent_options o;
        hostfs h;
        inventory *inv = NULL;
        int r;

        r = agent_setup(argc, argv, usage, &o, &h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        if (!o.json) {
                fprintf(stderr, "spinlane-agent inventory: only --json output exists\nusage: %s\n", usage);
                return AGENT_EXIT_ERROR;
        }
        config cfg;
        if (agent_config(&o, &cfg) < 0)
                return AGENT_EXIT_ERROR;
        selection sel;
        if (agent_scan("inventory", &h, &cfg, &inv, &sel) < 0)
                return AGENT_EXIT_ERROR;
        /* resources: what the daemon advertises under this config */
        device_map map = { 0 };
        json_t *j = device_map_build(&sel, NULL, &map) < 0 ? NULL : inventory_to_json(inv, &map, cfg.resource_prefix);
        device_map_free(&map);
        selection_free(&sel);
        char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        if (s)
                printf("%s\n", s);
        else
                fprintf(stderr, "spinlane-agent inventory: out of memory\n");
        free(s);
        json_decref(j);
        inventory_free(inv);
        return s ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
}
