/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's node verdicts service: the node checks (agent/node/checks.h) of every
 * scan, over its device map, printed at start and whenever they change (the `kubectl
 * logs` contract); the report reads the last list. Top-level code: logs. */
#include "run-daemon.h"

#include "checks.h"
#include "kargs.h"
#include "log.h"
#include "verdict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct run_verdicts {
        verdict_list list;
        bool have;
};

int run_verdicts_new(run_verdicts **ret)
{
        run_verdicts *v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

void run_verdicts_free(run_verdicts *v)
{
        if (!v)
                return;
        verdict_list_free(&v->list);
        free(v);
}

const verdict_list *run_verdicts_list(const run_daemon *d)
{
        return &d->verdicts->list;
}

const bool *run_verdicts_have(const run_daemon *d)
{
        return &d->verdicts->have;
}

static void verdicts_rescan(run_daemon *d, const run_node *node)
{
        run_verdicts *v = d->verdicts;
        verdict_list vl = { 0 };
        /* The device map (the one rule the device plugins advertise by) and the config's
         * bind driver. */
        const config *c = run_live_config(d);
        /* the kernel-args verdict reads what preparation recorded (a garbled record is
         * prep-kernel-args' FAIL; here it counts as none) */
        kargs_state kst;
        char kerr[256];
        int kr = kargs_state_load(&d->h, &kst, kerr, sizeof(kerr));
        checks_options copt = { .map = node->map,
                                .bind_driver = config_driver_name(c->binding.ena),
                                .hugetlbfs_pod_mount = c->hugetlbfs.pod_mount,
                                .hugetlbfs_mount_point = c->hugetlbfs.mount_point,
                                .config = c, .kargs_state = kr > 0 ? &kst : NULL };

        if (checks_node(node->inv, &copt, &vl) < 0) {
                log_error("node checks failed: out of memory");
                verdict_list_free(&vl);
                return;
        }
        if (v->have && verdict_list_equal(&vl, &v->list)) {
                verdict_list_free(&vl);
                return;
        }
        if (v->have)
                log_info("node verdicts changed");
        verdict_print(&vl, stdout, d->opt.json);
        fflush(stdout);
        verdict_list_free(&v->list);
        v->list = vl;
        v->have = true;
}

static int verdicts_start(run_daemon *d, const run_node *node)
{
        verdicts_rescan(d, node);
        return 0;
}

static void verdicts_stop(run_daemon *d)
{
        verdict_list_free(&d->verdicts->list);
}

const run_service run_service_verdicts = { "verdicts", { "node-preparation" }, verdicts_start, verdicts_rescan, NULL,
                                           verdicts_stop };
