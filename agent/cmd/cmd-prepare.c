/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent prepare [--root DIR] [--config FILE] [--json]`: prepare the node once
 * (bind the selected NICs, hugepages, hugetlbfs, kernel-path tuning), log each step and
 * print the preparation verdicts, then exit: 0 nothing failed, 1 a step failed, 2 bad
 * config or usage. The same path as `run --once` (for an init container). */
#include "cmd.h"

#include "hostfs.h"
#include "log.h"
#include "prep-daemon.h"
#include "prep-inventory.h"


int cmd_prepare(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent prepare [--root DIR] [--config FILE] [--json]";
        agent_options o;
        hostfs h;
        int r;

        r = agent_setup(argc, argv, usage, &o, &h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        log_setup(o.log_json ? LOG_FORMAT_JSON : LOG_FORMAT_HUMAN, LOG_INFO);
        return prep_once(&h, o.config, prep_scan_inventory, NULL, o.json);
}
