/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's scan: one inventory, the live config's selection and the NIC addresses
 * (run-address.c), and the device map built from them once a scan with the last one as
 * its history (agent/node/device-map.h: the rule, the one device value). Owns the map
 * every service reads; logs each device's line (what `explain` prints) when its state or
 * reason changes. Also the NIC address service's row. Top-level code: logs. */
#include "run-daemon.h"

#include "bind-state.h"
#include "cleanup.h"
#include "log.h"
#include "run-address.h"

#include <errno.h>
#include <stdlib.h>

struct run_scan {
        /* the device map of the last scan, the history of the next; forget: the next is
         * built without one (the device plugins were torn down) */
        device_map map;
        bool forget;
};

int run_scan_new(run_scan **ret)
{
        run_scan *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

void run_scan_free(run_scan *s)
{
        if (!s)
                return;
        device_map_free(&s->map);
        free(s);
}

void run_scan_forget(run_daemon *d)
{
        d->scan->forget = true;
}

void run_node_free(run_node *n)
{
        selection_free(&n->sel);
        inventory_free(n->inv);
        n->inv = NULL;
        n->map = NULL;
}

/* The map's line of every device whose state or reason changed (all of them the first
 * time): what `spinlane-agent explain` prints. */
static void log_map_changes(const run_daemon *d, const device_map *prev, const device_map *now)
{
        char line[DEVICE_DETAIL_LEN + 256];
        for (size_t i = 0; i < now->n; i++) {
                if (!device_map_changed(prev, &now->items[i]))
                        continue;
                device_map_line(&now->items[i], run_dp_prefix(d), line, sizeof(line));
                log_info("%s", line);
        }
}

int run_scan_node(run_daemon *d, run_node *ret)
{
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        const config *c = run_live_config(d);
        run_scan *s = d->scan;
        run_node n = { 0 };
        char err[256];

        if (!st)
                return -ENOMEM;
        int r = inventory_scan(&d->h, &n.inv);
        if (r < 0)
                return r;
        bool have = bind_state_load(&d->h, st, err, sizeof(err)) >= 0;
        r = selection_new(c, n.inv, have ? st : NULL, &n.sel);
        if (r < 0) {
                run_node_free(&n);
                return r;
        }
        if (d->addr && run_address_resolve(d->addr, c, have ? st : NULL, &n.sel, n.inv) < 0)
                log_error("NIC addresses: out of memory");
        /* the device map, once a scan, with the last one as its history */
        const device_map *prev = s->forget ? NULL : &s->map;
        device_map map;
        r = device_map_build(&n.sel, prev, &map);
        if (r < 0) {
                run_node_free(&n);
                return r;
        }
        log_map_changes(d, prev, &map);
        device_map_free(&s->map);
        s->map = map;
        s->forget = false;
        n.map = &s->map;
        *ret = n;
        return 0;
}

/* ---- service: NIC addresses (run-address.c; resolved into every scan above) ---- */

static int addr_reload(run_daemon *d)
{
        run_address_reload(d->addr);
        return 0;
}

const run_service run_service_addresses = { "nic-addresses", { NULL }, NULL, NULL, addr_reload, NULL };
