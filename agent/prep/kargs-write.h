/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel arguments into the host's boot loader (kernel_args.manage): find the boot loader
 * from the host tree, write spinlane's arguments (a /etc/default/grub.d drop-in and
 * update-grub, or grubby --update-kernel=ALL --args), record them in the state file
 * (agent/node/kargs.h) before the first write, set the reboot sentinel kured watches, and
 * take exactly that back on restore. Never reboots, never touches an argument it did not
 * write, never logs (results carry the lines the caller logs). */
#ifndef SPIN_KARGS_WRITE_H
#define SPIN_KARGS_WRITE_H

#include "config.h"
#include "hostfs.h"
#include "inventory.h"
#include "kargs.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>

#define PREP_CHECK_KERNEL_ARGS "prep-kernel-args"
#define KARGS_MSG_LEN 1024
#define KARGS_TOOL_LEN 64

/* How long a host tool may run before it and its process group are killed (SIGKILL).
 * update-grub takes seconds on a cloud image (no os-prober), grubby less. The bound stays
 * under the chart's probes: a pass in the daemon's loop blocks /healthz, and the liveness
 * probe restarts the agent after about 30 s unanswered (3 x 10 s), the startup probe
 * after 120 s; a longer bound would let a hung tool turn into a restart loop instead of
 * a prep-kernel-args FAIL. */
#define KARGS_TOOL_TIMEOUT_MS 20000

/* How a host tool runs. argv[0] is the tool's host path ("/usr/sbin/update-grub"). 0 when
 * it exited 0; -EIO when it exited otherwise or died (out: the last line it printed, and
 * the status); -ETIME when it ran past timeout_ms and was killed (out says so); another
 * negative errno when it could not be started. */
typedef struct kargs_ops {
        int (*run)(void *userdata, const hostfs *h, char *const argv[], unsigned timeout_ms, char *out,
                   size_t out_size);
        void *userdata;
        unsigned timeout_ms; /* 0: KARGS_TOOL_TIMEOUT_MS (tests set a short one) */
} kargs_ops;
/* The real one. On a live root (hostfs_is_live): fork, chroot into the root (none for the
 * real root), exec the tool with PATH=/usr/sbin:/usr/bin:/sbin:/bin, so it edits the
 * host's /boot and /etc as the host's own package would. On a fake tree (tests): exec
 * <root><argv[0]> unchrooted (a fake tool the fixture placed there) with
 * SPINLANE_FAKE_ROOT=<root>; never a tool of the machine running the test. The tool runs
 * in a process group of its own; its output is read (bounded) and its exit waited for,
 * both until timeout_ms, after which the group is killed (SIGKILL) and reaped. */
extern const kargs_ops kargs_ops_default;

/* The boot loader of the host under h: from /etc/os-release (ID, ID_LIKE: debian/ubuntu →
 * grub drop-in, amzn/fedora/rhel → grubby), else from which tool exists; the tool's host
 * path in tool ("" for none) and, for NONE, the reason in why. Reads only. */
kargs_loader kargs_detect(const hostfs *h, char *tool, size_t tool_size, char *why, size_t why_size);

/* The drop-in's text for args (what kargs_apply writes; "" when args is empty). */
void kargs_dropin_text(const kargs_list *args, char *buf, size_t size);

/* The host path of the reboot sentinel: /var/run/reboot-required, through the host's
 * /var/run symlink when it is an absolute one (Ubuntu: /var/run -> /run). Whatever the
 * link, hostfs resolves the path inside the root (never into the agent's own /run, never
 * above the root through ".."). */
int kargs_sentinel_path(const hostfs *h, char *buf, size_t size);

typedef struct kargs_result {
        bool wrote;          /* the boot loader was changed now */
        bool reboot_pending; /* the running kernel does not match what is written */
        bool sentinel_set;   /* the sentinel was created now */
        char lines[4][KARGS_MSG_LEN]; /* what was done, for the log */
        size_t n_lines;
} kargs_result;

/* The preparation step (only with kernel_args.manage): plan from c and inv, compare with
 * the running command line and the state, write what differs, set the sentinel when a
 * reboot is pending, and add the PREP_CHECK_KERNEL_ARGS verdict to l. A conflict (an
 * argument on the command line that is not spinlane's, with another value), a garbled
 * state, no boot loader or no safe plan: FAIL, nothing written. Returns 0, or -ENOMEM;
 * *ret always filled. */
int kargs_apply(const hostfs *h, const kargs_ops *ops, const config *c, const inventory *inv, verdict_list *l,
                kargs_result *ret);

/* `restore`: take back what the state records (remove the drop-in and run update-grub, or
 * grubby --remove-args), then drop the state; the sentinel is set when the running kernel
 * still has spinlane's arguments (a reboot takes them out), and removed when spinlane
 * created it and it is no longer needed. 0 nothing recorded or all taken back (msg says
 * which), negative when a step failed (the state then stays, msg says what). */
int kargs_restore(const hostfs *h, const kargs_ops *ops, const inventory *inv, char *msg, size_t msg_size);

#endif
