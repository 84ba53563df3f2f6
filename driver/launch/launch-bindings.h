/* SPDX-License-Identifier: Apache-2.0 */
/* The aeron-bindings check: before anything starts, prove that the driver will load
 * spinlane's bindings and accept its contract. The library exists and loads (next to
 * the driver's own Aeron libraries), exports the bindings as a writable data object
 * (an unknown name crashes the stock aeronmd), was built against the driver's Aeron;
 * the driver is the shared-library aeronmd; the SPINLANE_* contract parses as the
 * driver will parse it. Reads files and dlopens them; never logs, never exits. */
#ifndef SPIN_LAUNCH_BINDINGS_H
#define SPIN_LAUNCH_BINDINGS_H

#include "launch-plan.h"
#include "verdict.h"

typedef struct lbind_in {
        const char *command;     /* the driver command (argv[0] of what will be exec'd) */
        const char *const *envp; /* the driver's environment: the plan's variables first, then the pod's */
        const lplan *plan;       /* NULL when there is no plan (the check is skipped) */
} lbind_in;

/* Append the aeron-bindings verdict. -ENOMEM only. */
int lbind_check(const lbind_in *in, verdict_list *vl);

/* Resolve a command as execvp would (a name without '/' through PATH) into ret (size
 * bytes). -ENOENT when nothing executable is found. */
int lbind_resolve_command(const char *command, const char *path, char *ret, size_t size);

#endif
