/* SPDX-License-Identifier: Apache-2.0 */
/* NIC binding through sysfs under --root: driver_override, unbind, drivers_probe/bind,
 * with a state file that remembers each NIC's original driver so `spinlane-agent restore`
 * can give it back. Every NIC ends either fully on the target driver or back on its
 * original one; if even the roll-back fails the result says so and the state keeps the
 * NIC for restore. All sysfs writes go through a bind_ops table (tests emulate the
 * kernel there). Never logs: results carry the message the caller logs. */
#ifndef SPIN_BIND_H
#define SPIN_BIND_H

#include "hostfs.h"
#include "nlparse.h"

#include <stdbool.h>
#include <stddef.h>

#define BIND_STATE_DIR "/var/lib/spinlane"
#define BIND_STATE_PATH "/var/lib/spinlane/bind-state.json"
#define BIND_STATE_MAX 256        /* NICs tracked */
#define BIND_STATE_MAX_TEXT (128 * 1024)
#define BIND_DRIVER_LEN 32
#define BIND_PCI_LEN 16
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

typedef struct bind_state_entry {
        char pci[BIND_PCI_LEN];
        char original[BIND_DRIVER_LEN]; /* driver before spinlane touched it; "" = none */
        char target[BIND_DRIVER_LEN];   /* driver spinlane bound it to */
        char netdev[16];                /* its kernel netdev before binding ("" none) */
        /* Its MAC, read from that netdev before the unbind took it away ("" unknown: no
         * netdev then, or a file written before spinlane recorded MACs). The NIC's address
         * is looked up by it later (docs/addresses.md). No IPv4 address is recorded: a NIC
         * whose netdev had one is never bound (bind_netdev_in_use). */
        char mac[18];
} bind_state_entry;

typedef struct bind_state {
        bind_state_entry e[BIND_STATE_MAX];
        size_t n;
} bind_state;

/* Pure: parse the state file's text. A truncated or garbled file is -EBADMSG with a
 * message in err naming what is wrong; *ret untouched on failure. */
int bind_state_parse(const char *text, size_t len, bind_state *ret, char *err, size_t err_size);
/* Its text (malloc'ed, NUL-terminated) or NULL on -ENOMEM. */
char *bind_state_format(const bind_state *s);
/* Load <root>/var/lib/spinlane/bind-state.json. Returns 1 when the file existed, 0 when it
 * did not (empty state), negative on error (-EBADMSG: truncated/garbled, message in err). */
int bind_state_load(const hostfs *h, bind_state *ret, char *err, size_t err_size);
/* Write atomically (temp file in the same dir, fsync, rename); an empty state removes
 * the file. Creates the directory when needed. */
int bind_state_save(const hostfs *h, const bind_state *s);
const bind_state_entry *bind_state_find(const bind_state *s, const char *pci);

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
