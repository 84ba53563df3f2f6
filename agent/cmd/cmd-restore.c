/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent restore [--root DIR] [--json]`: give every NIC recorded in
 * /var/lib/spinlane/bind-state.json back to its original driver, one log line per NIC,
 * then drop the state; then take back the kernel arguments recorded in
 * /var/lib/spinlane/kernel-args.json (kernel_args.manage) from the boot loader
 * (docs/uninstall.md). Exit 0 all given back (or nothing recorded), 1 some NIC or the
 * boot loader could not be (it stays recorded), 2 usage error or a garbled state file. */
#include "cmd.h"

#include "bind.h"
#include "cleanup.h"
#include "hostfs.h"
#include "inventory.h"
#include "kargs-write.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel arguments: AGENT_EXIT_OK, _FAIL (still recorded) or _ERROR (garbled state). */
static int restore_kargs(const hostfs *h)
{
        char msg[KARGS_MSG_LEN];
        inventory *inv = NULL;
        int r = inventory_scan(h, &inv);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "scanning the node for its kernel command line");
                return AGENT_EXIT_FAIL;
        }
        r = kargs_restore(h, NULL, inv, msg, sizeof(msg));
        inventory_free(inv);
        if (r == -EBADMSG) {
                log_error("%s", msg);
                return AGENT_EXIT_ERROR;
        }
        if (r < 0) {
                log_error("%s", msg);
                return AGENT_EXIT_FAIL;
        }
        log_info("%s", msg);
        return AGENT_EXIT_OK;
}

int cmd_restore(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent restore [--root DIR] [--json]";
        char err[256];
        agent_options o;
        hostfs h;
        size_t n = 0, back = 0;
        int r;

        r = agent_setup(argc, argv, usage, &o, &h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        log_setup(o.log_json ? LOG_FORMAT_JSON : LOG_FORMAT_HUMAN, LOG_INFO);
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        _cleanup_free_ bind_result *res = calloc(BIND_STATE_MAX, sizeof(*res));
        if (!st || !res)
                return AGENT_EXIT_ERROR;
        r = bind_state_load(&h, st, err, sizeof(err));
        if (r < 0) {
                log_error("%s: %s; nothing touched (check `ls -l /sys/bus/pci/devices/*/driver`, give NICs back "
                          "by hand, then remove the file)",
                          BIND_STATE_PATH, err);
                return AGENT_EXIT_ERROR;
        }
        if (r == 0 || st->n == 0) {
                log_info("nothing to restore: %s records no NIC", BIND_STATE_PATH);
                return restore_kargs(&h);
        }
        size_t recorded = st->n;
        r = bind_restore(&h, NULL, st, res, &n);
        for (size_t i = 0; i < n; i++) {
                if (res[i].outcome == BIND_UNSAFE)
                        log_error("%s", res[i].message);
                else {
                        log_info("%s", res[i].message);
                        back++;
                }
        }
        if (r < 0 && st->n == 0)
                log_errno(LOG_ERROR, r, "updating %s", BIND_STATE_PATH);
        log_info("restore: %zu of %zu NIC(s) back on their original driver%s", back, recorded,
                 st->n ? "; the others stay recorded, run restore again once fixed" : "");
        int k = restore_kargs(&h);
        return r < 0 ? AGENT_EXIT_FAIL : k;
}
