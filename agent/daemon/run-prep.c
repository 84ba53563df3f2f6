/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's node preparation service: agent/prep's prepare loop (prep-daemon.c), which
 * applies the config, re-applies it on SIGHUP, a config change or an ENA reset, owns the
 * live config (run_live_config) and watches its file; a changed file is the rebuild.
 * Top-level code: logs. */
#include "run-daemon.h"

#include "prep-daemon.h"
#include "prep-inventory.h"

const config *run_live_config(const run_daemon *d)
{
        return d->prep ? prep_daemon_config(d->prep) : &d->cfg;
}

/* The config file changed (inotify) and brought a good config: the rebuild, as SIGHUP. */
static void prep_config_changed(void *ud)
{
        run_rebuild_soon(ud, "config changed");
}

static int prep_start(run_daemon *d, const run_node *node)
{
        prep_daemon_options o = { .config_path = d->opt.config, .scan = prep_scan_inventory,
                                  .json = d->opt.json, .on_config_changed = prep_config_changed,
                                  .userdata = d, .initial = &d->cfg, .initial_from_file = d->cfg_from_file };
        (void)node; /* preparation scans afresh */
        int r = prep_daemon_new(d->l, &d->h, &o, &d->prep);
        if (r < 0)
                return r;
        /* NICs may have moved: let the other services see the node as it is now. */
        run_debounce(d, "after node preparation");
        return 0;
}

/* Preparation has re-read and applied the config before the rebuild (on SIGHUP; on a
 * changed file prep-daemon.c itself): nothing to tear down. */
static int prep_reload(run_daemon *d)
{
        (void)d;
        return 0;
}

static void prep_stop(run_daemon *d)
{
        prep_daemon_free(d->prep);
        d->prep = NULL;
}

const run_service run_service_prep = { "node-preparation", { NULL }, prep_start, NULL, prep_reload, prep_stop };
