/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation: apply the config to the node - bind the selected NICs, check MANA's
 * kernel path, reserve hugepages, mount hugetlbfs, tune the NICs the kernel keeps - and
 * report each step as verdicts plus one log line per NIC. Owns no state beyond the bind
 * state file; never logs (the caller logs the report). */
#ifndef SPIN_PREP_H
#define SPIN_PREP_H

#include "bind.h"
#include "config.h"
#include "hugepages.h"
#include "hostfs.h"
#include "kargs-write.h"
#include "select.h"
#include "tune.h"
#include "verdict.h"

#include <stdbool.h>
#include <stdint.h>

#define PREP_MAX_NICS 256

/* What preparation needs to know about a NIC (filled from the inventory): what the
 * selection rule reads (agent/node/select.h). */
typedef select_nic prep_nic;

/* Every sysfs/procfs write, mount and ioctl goes through these (tests emulate the kernel). */
typedef struct prep_ops {
        bind_ops sysfs;
        tune_ops tune;
        /* Set a netdev down (MANA with binding.mana_netdev_down): 0 or -errno. */
        int (*link_down)(void *userdata, const char *ifname);
        void *link_userdata;
        /* Host tools (update-grub, grubby) for kernel_args.manage. */
        kargs_ops kargs;
} prep_ops;
/* Real writes and ioctls when the root is live (the real root, or --root /host with a
 * procfs at /host/proc: hostfs_is_live); under a fake tree the ioctls (coalescing,
 * link down) report -ENOSYS ("not the real root") and sysfs writes go to the tree. */
void prep_ops_default(const hostfs *h, prep_ops *ret);

/* A NIC the kernel keeps and that was tuned: watched for resets by the daemon. */
typedef struct prep_tuned {
        char ifname[16];
        char pci[16];
} prep_tuned;

typedef struct prep_report {
        verdict_list verdicts;          /* PREP_CHECK_* (hugepages.h) */
        bind_result nics[PREP_MAX_NICS]; /* one per selected NIC, in PCI order */
        size_t n_nics;
        char lines[PREP_MAX_NICS][TUNE_MSG_LEN]; /* other per-step log lines (MANA, tuning) */
        size_t n_lines;
        prep_tuned tuned[PREP_MAX_NICS];
        size_t n_tuned;
        bool hugetlbfs_mounted;
        bool kargs_wrote;          /* kernel_args.manage changed the boot loader in this pass */
        bool kargs_reboot_pending; /* ... and the running kernel does not have it yet */
} prep_report;

/* Apply c to the node. nics is the NIC list of a fresh scan. On success *ret is a new
 * report (free with prep_report_free) and the return is 0 when nothing failed, 1 when
 * some step failed (see the verdicts); -ENOMEM leaves *ret untouched. */
int prep_apply(const hostfs *h, const prep_ops *ops, const config *c, const prep_nic *nics, size_t n,
               prep_report **ret);
void prep_report_free(prep_report *r);

/* Re-apply kernel-path tuning to one NIC (after a reset). */
int prep_retune(const hostfs *h, const prep_ops *ops, const config *c, const prep_tuned *t, tune_result *ret);

#endif
