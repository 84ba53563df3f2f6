/* SPDX-License-Identifier: Apache-2.0 */
/* What the launcher hands the media driver: the choice of the CPUs to pin (spinlane's
 * grant or the kubelet's exclusive cores), the EAL argument string, the AERON_* defaults
 * it fills in (affinities from the pinned cores, DEDICATED threading, idle strategies
 * that never sleep), and the check of the resulting Aeron configuration.
 * Pure: no I/O, no globals, never logs. */
#ifndef SPIN_LAUNCH_PLAN_H
#define SPIN_LAUNCH_PLAN_H

#include "launch-env.h"
#include "verdict.h"

#define LPLAN_MAX_SET 32
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

/* Which CPUs the driver is pinned to. */
typedef enum lplan_pin_mode {
        LPLAN_PIN_SPINLANE, /* "spinlane-pinned": the container's cpuset holds the grant; pin to the grant */
        LPLAN_PIN_KUBELET,  /* "kubelet-pinned": the static CPU manager gave the container other whole
                             * isolated cores, at least as many as granted; pin to those */
        LPLAN_PIN_MISMATCH, /* neither: pin to the grant, which the cpuset does not hold (the cpuset
                             * check fails with the reason) */
} lplan_pin_mode;

typedef struct lplan_pin {
        lplan_pin_mode mode;
        cpuset cpus;       /* the CPUs the agents and EAL lcores are taken from */
        char reason[1024]; /* one sentence: what was chosen and why, or what is wrong */
        unsigned cores_granted, cores_allowed; /* physical cores of the grant, of the cpuset */
} lplan_pin;

const char *lplan_pin_mode_name(lplan_pin_mode m);

/* Choose the CPUs to pin. granted: SPINLANE_ISOLATED_CPUS (non-empty, else -EINVAL);
 * allowed: the container's cpuset (cpuset.cpus.effective ∩ Cpus_allowed_list);
 * online: the node's online CPUs, NULL when unknown (every CPU counts as online);
 * isolated: /sys/devices/system/cpu/isolated, NULL when unreadable; topo: core_of of
 * every CPU of granted and allowed and of their SMT siblings (-1 = unknown).
 * The grant inside the cpuset → SPINLANE (pins = grant). Otherwise the cpuset stands in
 * for the grant (KUBELET) when it is not the whole online set, every CPU of it is
 * isolated, it splits no physical core (each sibling of its CPUs is in it or offline)
 * and it holds at least as many whole cores as the grant spans; pins = that many of its
 * cores, those that hold granted CPUs first, then in CPU order. Else MISMATCH (pins =
 * grant), the reason naming every problem. *ret untouched on failure. */
int lplan_choose_cpus(const cpuset *granted, const cpuset *allowed, const cpuset *online, const cpuset *isolated,
                      const lplan_topo *topo, lplan_pin *ret);

typedef struct lplan_var {
        const char *name;
        char value[2048];
        bool defaulted; /* true: the launcher chose it; false: the pod set it */
} lplan_var;

typedef struct lplan {
        lplan_pin_mode mode;       /* where cpus came from */
        cpuset cpus;               /* the pinned CPUs: EAL lcores, default affinities */
        char eal_args[2048];
        lenv_aeron aeron;          /* the effective AERON_* values the driver will see */
        bool threading_defaulted, idle_sender_defaulted, idle_receiver_defaulted;
        bool idle_conductor_defaulted, aff_defaulted[3]; /* sender, receiver, conductor */
        lplan_var set[LPLAN_MAX_SET]; /* variables to put in the driver's environment */
        unsigned n_set;
        bool bypass;               /* the driver loads spinlane's bindings (the pod did not choose others) */
        char bypass_problem[640];  /* why the bypass contract is incomplete; "" when it is complete */
} lplan;

/* The most words SPINLANE_EAL_ARGS may hold: the transport's splitter refuses more
 * (TR_EAL_ARGS_MAX of driver/transport/eal_args.h; test-launch-plan checks they agree). */
#define LPLAN_EAL_MAX_WORDS 64

/* Compute the plan on pin->cpus (NULL: the grant, spinlane-pinned). Besides the EAL
 * arguments and Aeron's low-latency profile (DEDICATED, noop sender/receiver, non-sparse
 * pre-touched term buffers, 2 messages per send) it fills in the bypass driver's
 * contract from the granted NICs (one NIC: both roles; two: sender on the first,
 * receiver on the second) where the pod did not set it, and the bindings
 * (AERON_DRIVER_DYNAMIC_LIBRARIES = env->bypass.library). What it cannot fill (no NIC,
 * no address) is described in bypass_problem, for the aeron-bindings check. env must have
 * have_cpus and the pinned set must not be empty; -EINVAL otherwise, -ENAMETOOLONG when
 * the EAL arguments do not fit, -E2BIG when they are more than LPLAN_EAL_MAX_WORDS words.
 * *ret untouched on failure. */
int lplan_build(const launch_env *env, const lplan_pin *pin, const lplan_topo *topo, lplan *ret);

/* The aeron-config verdict(s) for the plan's effective values. -ENOMEM only. */
int lplan_check_aeron(const launch_env *env, const lplan *plan, const lplan_topo *topo, verdict_list *vl);

/* Whether Aeron's C driver treats an idle strategy name as one that never sleeps or
 * yields: 1 yes ("spinning", "noop"), 0 no (sleeping, yielding, backoff, the default),
 * -1 unknown (a custom strategy loaded by symbol name). */
int lplan_idle_never_parks(const char *name);

#endif
