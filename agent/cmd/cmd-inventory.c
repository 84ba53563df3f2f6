/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent inventory [--root DIR] [--config FILE] --json`: the node inventory as
 * one JSON document on stdout. Read-only; exit 0, or 2 on a usage or internal error. */
#include "cmd.h"

#include "cleanup.h"
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
        _cleanup_(agent_end) agent_cmd c;

        int r = agent_begin(argc, argv, usage, &c);
        if (r >= 0)
                return r;
        if (!c.o.json) {
                fprintf(stderr, "spinlane-agent inventory: only --json output exists\nusage: %s\n", usage);
                return AGENT_EXIT_ERROR;
        }
        /* resources: what the daemon advertises under this config */
        json_t *j = inventory_to_json(c.inv, &c.map, c.cfg.resource_prefix);
        char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        if (s)
                printf("%s\n", s);
        else
                fprintf(stderr, "spinlane-agent inventory: out of memory\n");
        free(s);
        json_decref(j);
        return s ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
}
