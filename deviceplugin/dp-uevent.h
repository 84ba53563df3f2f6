/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel uevents (NETLINK_KOBJECT_UEVENT, group 1): a pure, bounded parser of one
 * datagram and the rule that says which events can change what the device plugins
 * advertise (driver bind/unbind, device add/remove, CPU online/offline). No I/O. */
#ifndef SPIN_DP_UEVENT_H
#define SPIN_DP_UEVENT_H

#include <stdbool.h>
#include <stddef.h>

/* The kernel sends at most UEVENT_BUFFER_SIZE (2048) bytes of environment plus the
 * header; anything larger is not a kernel uevent. */
#define DP_UEVENT_MAX 8192

typedef struct dp_uevent {
        char action[16];     /* "add", "remove", "bind", "unbind", "online", "offline", "change", "move" */
        char devpath[256];   /* "/devices/system/cpu/cpu3" (cut to fit) */
        char subsystem[32];  /* "cpu", "pci", "vfio", ... ("" when absent; cut to fit) */
        char driver[32];     /* DRIVER= of bind/unbind ("" when absent) */
        bool truncated;      /* some value did not fit its field */
} dp_uevent;

/* Parse one kernel datagram "ACTION@DEVPATH\0KEY=VALUE\0...". Reads at most len bytes,
 * needs no NUL at the end. -EINVAL: not a kernel uevent (udev's "libudev" messages,
 * no '@' header, an action that is not lowercase letters, a header ACTION= or DEVPATH=
 * contradicts); -E2BIG: len > DP_UEVENT_MAX. ret is written only on success. */
int dp_uevent_parse(const void *buf, size_t len, dp_uevent *ret);

/* Whether the event may change the inventory the device plugins advertise. */
bool dp_uevent_relevant(const dp_uevent *ev);

#endif
