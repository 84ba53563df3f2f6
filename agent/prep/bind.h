/* SPDX-License-Identifier: Apache-2.0 */
/* NIC binding through sysfs under --root: driver_override, unbind, drivers_probe/bind,
 * with a state file that remembers each NIC's original driver so `spinlane-agent restore`
 * can give it back. Every NIC ends either fully on the target driver or back on its
 * original one; if even the roll-back fails the result says so and the state keeps the
 * NIC for restore. All sysfs writes go through a bind_ops table (tests emulate the
 * kernel there). Never logs: results carry the message the caller logs. */
#ifndef SPIN_BIND_H
#define SPIN_BIND_H

#include "bind-state.h"
#include "hostfs.h"
#include "nlparse.h"

#include <stdbool.h>
#include <stddef.h>

#define BIND_MSG_LEN 512

/* Where every host write goes: sysfs stores, and the hugetlbfs mount with its
 * directory. Paths are host paths (joined under h's root by the real ops). Each returns
 * 0 or a negative errno. A NULL mount, umount or mkdir means the real one. */
typedef struct bind_ops {
        int (*write)(void *userdata, const hostfs *h, const char *path, const char *data);
        void *userdata;
        /* mount(2) of source at target; the real one answers -ENOSYS under a fake tree
         * (not hostfs_is_live): mounting there would stack on the build machine */
        int (*mount)(void *userdata, const hostfs *h, const char *source, const char *target, const char *fstype,
                     unsigned long flags, const char *data);
        int (*umount)(void *userdata, const hostfs *h, const char *target); /* -ENOSYS as mount */
        int (*mkdir)(void *userdata, const hostfs *h, const char *path);    /* mkdir -p */
} bind_ops;
/* The real thing: hostfs_write(), mount(2)/umount2(2) under a live root, hostfs_mkdir_p(). */
extern const bind_ops bind_ops_default;
int bind_ops_mount(const bind_ops *ops, const hostfs *h, const char *source, const char *target, const char *fstype,
                   unsigned long flags, const char *data);
int bind_ops_umount(const bind_ops *ops, const hostfs *h, const char *target);
int bind_ops_mkdir(const bind_ops *ops, const hostfs *h, const char *path);

typedef enum bind_outcome {
        BIND_OK,          /* now on the target driver (writes done) */
        BIND_ALREADY,     /* was already on the target driver: nothing written */
        BIND_REFUSED,     /* not touched: primary NIC, netdev in use, driver missing, gone */
        BIND_ROLLED_BACK, /* failed mid-way; back on its original driver, state cleaned */
        BIND_UNSAFE,      /* failed and the roll-back failed too: see message; kept in state */
} bind_outcome;
const char *bind_outcome_name(bind_outcome o); /* "bound", "already", "refused", ... */

typedef struct bind_result {
        char pci[BIND_PCI_LEN];
        bind_outcome outcome;
        int err;                    /* negative errno of the first failure, 0 if none */
        char driver[BIND_DRIVER_LEN]; /* driver the NIC is on afterwards ("" none / unknown) */
        char message[BIND_MSG_LEN]; /* one line for the log */
} bind_result;

/* Whether the node's own networking uses a netdev of the PCI device (<pci>/net/<if>, or
 * <pci>/virtioN/net/<if> for virtio-net): 1 with the reason in why ("ens6 has route
 * \"default via 10.0.1.1 table main metric 513\"": any address but IPv6 link-local, a
 * route in any table, a policy rule, a master, an upper device), 0 when it has no netdev
 * or none is used, negative when it cannot tell (the link usage is unreadable, a netdev
 * it does not know, an unreadable sysfs dir), with the reason in why. use: the node's
 * link usage (netlink_usage_load, agent/node/netlink.h); NULL loads it now. */
int bind_netdev_in_use(const hostfs *h, const nlparse_usage *use, const char *pci, char *why, size_t why_size);

/* Bind pci to target (e.g. "vfio-pci"). Checks first (device present, target driver
 * loaded, the node does not use its netdev (bind_netdev_in_use with use; a NIC the node
 * may use is refused, never guessed free)), records the original driver, the netdev and
 * its MAC in *state and saves it before the first write, then driver_override, unbind, drivers_probe, and
 * verifies the driver link. On failure rolls back and drops the state entry. Returns 0
 * for BIND_OK/ALREADY, the negative errno otherwise (-EBUSY: in use); *ret always
 * filled. */
int bind_nic(const hostfs *h, const bind_ops *ops, const nlparse_usage *use, const char *pci, const char *target,
             bind_state *state, bind_result *ret);

/* Give every NIC in *state back to its original driver; entries restored (or whose device
 * is gone) are dropped, failures stay; then saves (removes the file when empty).
 * ret (array of BIND_STATE_MAX) gets one result per entry. Returns 0 when all went
 * back, else the first negative errno. */
int bind_restore(const hostfs *h, const bind_ops *ops, bind_state *state, bind_result *ret,
                 size_t *ret_n);

/* The driver pci is bound to ("" when none). -ENODEV when the device is absent. */
int bind_current_driver(const hostfs *h, const char *pci, char *buf, size_t size);

#endif
