/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel-path tuning of the NICs the kernel keeps: interrupt moderation off (ethtool
 * ioctl: adaptive-rx off, rx-usecs 0) and the NIC's IRQs onto a housekeeping CPU
 * (/proc/irq/N/smp_affinity_list); detection of an ENA device reset (rtnetlink link
 * events, IRQ affinity drift) so the daemon can re-apply. The ioctl and sysfs/procfs
 * writes go through a tune_ops table. Parsers here are pure; never logs. */
#ifndef SPIN_TUNE_H
#define SPIN_TUNE_H

#include "hostfs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNE_MAX_IRQS 256
#define TUNE_MSG_LEN 512

typedef struct tune_ops {
        /* Interrupt moderation off on ifname: 0 changed, 1 already off, -EOPNOTSUPP when
         * the driver has no coalescing settings, -ENOSYS when not possible here (a fake
         * root), other -errno. */
        int (*coalesce_off)(void *userdata, const char *ifname);
        /* Write a procfs/sysfs file (default hostfs_write). */
        int (*write)(void *userdata, const hostfs *h, const char *path, const char *data);
        void *userdata;
} tune_ops;

/* The real thing: SIOCETHTOOL in the agent's network namespace, and hostfs_write. */
extern const tune_ops tune_ops_default;

/* The ethtool ioctl itself (ETHTOOL_GCOALESCE, then ETHTOOL_SCOALESCE with
 * use_adaptive_rx_coalesce = 0 and rx_coalesce_usecs = 0 when not already so). */
int tune_coalesce_off_ioctl(const char *ifname);

/* Set ifname down (SIOCSIFFLAGS without IFF_UP): 0 done, 1 already down, -errno. */
int tune_link_down_ioctl(const char *ifname);

/* Pure: IRQ numbers of a NIC from /proc/interrupts text: lines whose action names
 * ifname ("eth1", "eth1-Tx-Rx-0") or the PCI address ("ena-mgmnt@pci:0000:00:06.0").
 * Adds to irqs (deduplicated, at most max); returns the count or -EINVAL. */
int tune_parse_interrupts(const char *text, const char *ifname, const char *pci, int *irqs, size_t max);

/* All IRQs of the NIC: /sys/bus/pci/devices/<pci>/msi_irqs entries and /proc/interrupts. */
int tune_nic_irqs(const hostfs *h, const char *ifname, const char *pci, int *irqs, size_t max);

typedef struct tune_result {
        int coalesce;            /* 0 changed, 1 already, 2 not asked, negative errno */
        size_t n_irqs;           /* IRQs found */
        size_t n_irqs_moved;     /* written */
        size_t n_irqs_ok;        /* already on the core, or moved and read back */
        size_t n_irqs_refused;   /* the kernel refused (managed IRQs: EIO) */
        char message[TUNE_MSG_LEN];
} tune_result;

/* Apply tuning to one NIC: moderation off if asked, IRQs to irq_core if >= 0. Returns
 * 0 when everything asked was done or was already so (-EOPNOTSUPP coalescing counts as
 * done with a note), else the first negative errno; *ret always filled. */
int tune_apply(const hostfs *h, const tune_ops *ops, const char *ifname, const char *pci,
               bool moderation_off, int irq_core, tune_result *ret);

/* 1 when some IRQ of the NIC is no longer on irq_core (what a device reset does),
 * 0 when all are, negative on error. */
int tune_irqs_drifted(const hostfs *h, const char *ifname, const char *pci, int irq_core);

/* rtnetlink link events. */
typedef struct tune_link_event {
        int ifindex;
        char ifname[16];
        bool up;        /* IFF_UP */
        bool carrier;   /* IFF_LOWER_UP */
        bool deleted;   /* RTM_DELLINK */
} tune_link_event;

/* A non-blocking NETLINK_ROUTE socket subscribed to RTMGRP_LINK (for the event loop). */
int tune_netlink_open(void);
/* Pure: parse one datagram of netlink messages (node/nlparse's walker: whole messages, a
 * multiple of 4 bytes each, IFLA_IFNAME as nlparse_attr_name takes it); fills up to max
 * events; returns count or -EBADMSG for a malformed or cut message. */
int tune_netlink_parse(const void *buf, size_t len, tune_link_event *ev, size_t max);

/* Tracks one tuned NIC across link events to spot an ENA reset: the carrier dropping and
 * coming back, or the netdev being recreated (new ifindex). */
typedef struct tune_watch {
        char ifname[16];
        int ifindex;     /* 0 unknown */
        bool carrier;
        bool saw_down;
} tune_watch;
/* Feed an event. Returns 1 when the NIC came back after a reset (re-apply tuning), else 0;
 * why gets a short reason. */
int tune_watch_event(tune_watch *w, const tune_link_event *ev, char *why, size_t why_size);

#endif
