/* SPDX-License-Identifier: Apache-2.0 */
/* The datapath check as the launcher runs it: spinlane-datapath (which links DPDK; the
 * launcher does not) run with the driver's environment before the driver starts, its
 * verdict lines read back into the launcher's list. */
#ifndef SPIN_LAUNCH_DATAPATH_H
#define SPIN_LAUNCH_DATAPATH_H

#include <stddef.h>

#include "launch-env.h"
#include "verdict.h"

#define LDP_HELPER "spinlane-datapath"
#define LDP_OUTPUT_MAX 65536 /* the most of the helper's output read */

/* Verdict lines (one JSON object per line, as `--json` prints them) from buf[0..len)
 * into vl: only `datapath` verdicts with a known level are taken; a line that is not one
 * is counted in *ret_bad. Pure: no I/O, never logs. -ENOMEM only. */
int ldp_parse(const char *buf, size_t len, verdict_list *vl, unsigned *ret_bad);

/* Run helper (a path) with the driver's environment envp and the settings of env's
 * datapath, wait for it (bounded: it is killed past its own bounds with a margin) and
 * add its verdicts to vl; a helper that cannot run, dies or says nothing gives a FAIL
 * datapath verdict saying so. -ENOMEM only. */
int ldp_run(const char *helper, const launch_env *env, char *const *envp, verdict_list *vl);

#endif
