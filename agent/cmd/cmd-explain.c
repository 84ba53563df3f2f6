/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent explain [NIC|CORE] [--root DIR] [--config FILE] [--json]`: the device
 * map (agent/node/device-map.h) as a person reads it: one line per NIC and core of the
 * node, advertised to the kubelet (Healthy or Unhealthy) or the one reason why not. With
 * a PCI address or a core id, that device's line only. Read-only. Exit 0; 1 when the
 * device asked about is not advertised Healthy; 2 on a usage or internal error or an
 * unknown device. */
#include "cmd.h"

#include "cleanup.h"

#include "config.h"
#include "device-map.h"
#include "hostfs.h"
#include "inventory.h"
#include "select.h"

#include <stdio.h>
#include <stdlib.h>

static void print_entry(const agent_options *o, const config *c, const device_entry *e)
{
        if (o->json) {
                json_t *j = device_map_json(e, c->resource_prefix);
                char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                if (s)
                        printf("%s\n", s);
                free(s);
                json_decref(j);
                return;
        }
        char line[DEVICE_DETAIL_LEN + 256];
        device_map_line(e, c->resource_prefix, line, sizeof(line));
        printf("%s\n", line);
}

int cmd_explain(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent explain [NIC|CORE] [--root DIR] [--config FILE] [--json]";
        _cleanup_(agent_end) agent_cmd c;

        int r = agent_begin(argc, argv, usage, &c);
        if (r >= 0)
                return r;
        const agent_options *o = &c.o;
        const device_map *map = &c.map;
        int rc = AGENT_EXIT_OK;
        if (o->device) {
                const device_entry *e = device_map_find(map, DEVICE_NIC, o->device);
                if (!e)
                        e = device_map_find(map, DEVICE_CORE, o->device);
                if (!e) {
                        agent_error(o, "explain: this node has no NIC with PCI address %s and no core %s (`explain` "
                                        "without an argument lists them all)", o->device, o->device);
                        rc = AGENT_EXIT_ERROR;
                } else {
                        print_entry(o, &c.cfg, e);
                        rc = e->state == DEVICE_HEALTHY ? AGENT_EXIT_OK : AGENT_EXIT_FAIL;
                }
        } else {
                for (size_t i = 0; i < map->n; i++)
                        print_entry(o, &c.cfg, &map->items[i]);
        }
        fflush(stdout);
        return rc;
}
