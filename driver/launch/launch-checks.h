/* SPDX-License-Identifier: Apache-2.0 */
/* The pod checks of spinlane-launch (cpu-quota, smt-siblings, cpuset, isolated-cpus,
 * hugepages, devices, aeron-config, and allocation-env for the environment itself),
 * reading the container's view through hostfs (--root). Returns verdicts and the
 * driver's plan; never logs, never exits. */
#ifndef SPIN_LAUNCH_CHECKS_H
#define SPIN_LAUNCH_CHECKS_H

#include "hostfs.h"
#include "launch-env.h"
#include "launch-plan.h"
#include "verdict.h"

/* Run every check in a fixed order, appending one verdict per check id to vl. When the
 * environment allows a plan (granted CPUs known), *ret_plan is filled and *ret_have_plan
 * set. -ENOMEM only; every other problem is a verdict. */
int launch_checks_run(const hostfs *h, const launch_env *env, verdict_list *vl, lplan *ret_plan, bool *ret_have_plan);

#endif
