/* SPDX-License-Identifier: Apache-2.0 */
/* Test harness for node preparation: builds small fake node trees and emulates the
 * kernel's PCI binding semantics on them (driver_override, bind, unbind, drivers_probe)
 * behind a bind_ops table, logging every write and injecting faults. Test code only. */
#ifndef SPIN_SYSFS_EMU_H
#define SPIN_SYSFS_EMU_H

#include "bind.h"
#include "hostfs.h"
#include "prep.h"

#include <stdbool.h>

#define EMU_MAX_LOG 64
#define EMU_MAX_DEV 64
#define EMU_MAX_FAULTS 8
#define EMU_MAX_NET 64

typedef struct emu_fault {
        char path[256];   /* host path the fault applies to (exact) */
        char data[64];    /* "" = any data */
        int err;          /* returned instead of applying the write */
        int skip;         /* matching writes to let through before failing */
        int times;        /* how many times to fail (0 = forever) */
        bool vanish;      /* remove the device (data = PCI address) and return -ENODEV */
        bool no_effect;   /* return 0 but do nothing (a probe that silently binds nothing) */
} emu_fault;

typedef struct emu_dev {
        char pci[16];
        char native[32]; /* driver the kernel picks without an override */
        char netdev[16]; /* created under net/ while bound to native ("" none) */
} emu_dev;

/* One fact of the emulated kernel's rtnetlink: an address, a route, a rule, an extra
 * link (a bridge, ...) or a master of a netdev. */
typedef struct emu_net_fact {
        char kind;        /* 'a' address, 'r' route, 'u' rule, 'l' link, 'm' master */
        char ifname[16];
        char x[48], y[48]; /* address / destination, gateway / master name */
        unsigned table, metric;
} emu_net_fact;

typedef struct emu {
        hostfs h;
        char root[256];
        char log[EMU_MAX_LOG][320]; /* "path=data" ("\n" shown as \n) */
        int n_log;
        emu_fault faults[EMU_MAX_FAULTS];
        int n_faults;
        emu_dev devs[EMU_MAX_DEV];
        int n_devs;
        emu_net_fact net[EMU_MAX_NET];
        int n_net;
        bool net_managed; /* the emu writes the recorded rtnetlink dump (not a fixture's) */
} emu;

/* Make an empty tree in a fresh temp dir with sys/bus/pci/{devices,drivers,drivers_probe}
 * and the recorded rtnetlink dump (agent/node/netlink.h) of a node with no netdev yet. */
int emu_init(emu *e);
void emu_cleanup(emu *e); /* rm -rf the tree */
/* Take over a tree made by tests/fixtures/make-node.py: add the binding control files
 * (drivers_probe, drivers/<d>/{bind,unbind}, devices/<bdf>/driver_override) and learn
 * each Ethernet device's native driver (from the vendor) and netdev. */
int emu_adopt(emu *e, const char *root);
/* A loaded driver: sys/bus/pci/drivers/<name>/{bind,unbind}. */
int emu_add_driver(emu *e, const char *name);
/* A PCI NIC bound to driver ("" none) whose native driver is native; netdev created
 * when bound to native. */
int emu_add_nic(emu *e, const char *pci, const char *vendor, const char *device, const char *native,
                const char *driver, const char *netdev);
/* Write a file under the root (creating parent dirs). */
int emu_write_file(emu *e, const char *path, const char *text);
/* The emulated kernel's rtnetlink, written as the tree's recorded dump
 * (NETLINK_RECORDED_DUMP) after every change: a link for every emulated netdev that
 * exists now (bound to its native driver; ifindex 10 + its place), the extra links, and
 * the facts of the links that exist. A tree taken over with emu_adopt() keeps the
 * fixture's own dump until the first of these calls. */
void emu_net_addr(emu *e, const char *ifname, const char *cidr);
/* dst "default" or a prefix; gw NULL for none; table 254 is main. */
void emu_net_route(emu *e, const char *ifname, const char *dst, const char *gw, unsigned table, unsigned metric);
/* A policy rule "iif <ifname> lookup <table>". */
void emu_net_rule(emu *e, const char *ifname, unsigned table, unsigned pref);
/* An extra link (kind "bridge", ...), or (master non-NULL) ifname enslaved to master. */
void emu_net_link(emu *e, const char *ifname, const char *master);
/* No facts any more (the links stay). */
void emu_net_clear(emu *e);
/* Rewrite the dump now (the calls above do). */
int emu_net_sync(emu *e);

/* Add a fault; returns it for tweaks. */
emu_fault *emu_fault_add(emu *e, const char *path, const char *data, int err);
void emu_reset_log(emu *e);
/* The log joined with '|' for one-line comparison. */
const char *emu_log_str(emu *e);
/* Current driver ("" none, "GONE" if the device vanished). */
const char *emu_driver(emu *e, const char *pci);
bool emu_has_netdev(emu *e, const char *pci);
char *emu_read(emu *e, const char *path); /* static buffer; "" if absent */

/* A fresh "scan" of the emulated tree, as the inventory would give it (the primary is
 * the NIC whose netdev is eth0). Returns the count. */
size_t emu_scan_nics(emu *e, prep_nic *nics);
/* The same as a prep_scan_fn (userdata = the emu). */
int emu_scan_fn(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n);

extern const bind_ops emu_ops_template; /* userdata must be set to the emu */
static inline bind_ops emu_ops(emu *e)
{
        bind_ops o = emu_ops_template;
        o.userdata = e;
        return o;
}

#endif
