/* SPDX-License-Identifier: Apache-2.0 */
/* What the launcher hands the media driver: the EAL argument string, the AERON_*
 * defaults it fills in (affinities from the granted cores, DEDICATED threading, idle
 * strategies that never sleep), and the check of the resulting Aeron configuration.
 * Pure: no I/O, no globals, never logs. */
#ifndef SPIN_LAUNCH_PLAN_H
#define SPIN_LAUNCH_PLAN_H

#include "launch-env.h"
#include "verdict.h"

#define LPLAN_MAX_SET 16
/* The largest Aeron MTU one DPDK packet buffer of the transport carries. */
#define LPLAN_TRANSPORT_MTU_MAX 1408
/* Aeron's frame alignment: an MTU must be a multiple of it. */
#define LPLAN_FRAME_ALIGNMENT 32

/* Physical-core grouping of CPUs: core_of[c] is the lowest CPU id among c's SMT
 * siblings (thread_siblings_list), or -1 when unknown. */
typedef struct lplan_topo {
        int core_of[CPUSET_MAX];
} lplan_topo;

void lplan_topo_init(lplan_topo *t);

typedef struct lplan_var {
        const char *name;
        char value[2048];
        bool defaulted; /* true: the launcher chose it; false: the pod set it */
} lplan_var;

typedef struct lplan {
        char eal_args[2048];
        lenv_aeron aeron;          /* the effective AERON_* values the driver will see */
        bool threading_defaulted, idle_sender_defaulted, idle_receiver_defaulted;
        bool idle_conductor_defaulted, aff_defaulted[3]; /* sender, receiver, conductor */
        lplan_var set[LPLAN_MAX_SET]; /* variables to put in the driver's environment */
        unsigned n_set;
} lplan;

/* Compute the plan. env must have have_cpus; -EINVAL otherwise, -ENAMETOOLONG when
 * the EAL arguments do not fit. *ret untouched on failure. */
int lplan_build(const launch_env *env, const lplan_topo *topo, lplan *ret);

/* The aeron-config verdict(s) for the plan's effective values. -ENOMEM only. */
int lplan_check_aeron(const launch_env *env, const lplan *plan, const lplan_topo *topo, verdict_list *vl);

/* Whether Aeron's C driver treats an idle strategy name as one that never sleeps or
 * yields: 1 yes ("spinning", "noop"), 0 no (sleeping, yielding, backoff, the default),
 * -1 unknown (a custom strategy loaded by symbol name). */
int lplan_idle_never_parks(const char *name);

#endif
