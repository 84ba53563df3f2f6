/* SPDX-License-Identifier: Apache-2.0 */
/* The bypass driver's environment contract (SPINLANE_EAL_ARGS, SPINLANE_SENDER_* and
 * SPINLANE_RECEIVER_* device, address and gateway, and the adapter's own knobs) parsed
 * into one value. Pure: parses an envp array, no I/O, no globals, never logs; every
 * problem is described in the caller's buffer naming the variable. */
#ifndef SPA_ENV_H
#define SPA_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPA_DEVICE_MAX 64          /* a DPDK device name: PCI address or vdev name */
#define SPA_EAL_ARGS_MAX 4096      /* as long as the transport's splitter accepts */
#define SPA_VALUE_MAX 4096         /* longest value looked at for any variable */
#define SPA_DEFAULT_LINK_WAIT_MS 10000
#define SPA_MAX_LINK_WAIT_MS 600000
#define SPA_DEFAULT_HANDOFF_SLOTS 1024
#define SPA_MIN_HANDOFF_SLOTS 16
#define SPA_MAX_HANDOFF_SLOTS 65536
#define SPA_DEFAULT_PROBE_PORT 39990 /* SPINLANE_PROBE_PORT: the probe responder (0 = off) */

/* One role's NIC: the sender's or the receiver's. */
struct spa_role {
        char device[SPA_DEVICE_MAX];
        uint32_t ipv4;      /* network order */
        uint8_t prefix_len; /* 1..32 */
        uint32_t gateway;   /* network order; 0 = none */
};

struct spa_config {
        char eal_args[SPA_EAL_ARGS_MAX + 1];
        struct spa_role sender, receiver;
        bool shared;            /* one port for both roles (the same device name) */
        uint32_t link_wait_ms;  /* SPINLANE_LINK_WAIT_MS: wait for link up at start */
        uint32_t handoff_slots; /* SPINLANE_HANDOFF_SLOTS: datagrams queued between the agents */
        bool host_local;        /* SPINLANE_HOST_LOCAL: kernel sockets for peers on this host */
        uint32_t probe_port;    /* SPINLANE_PROBE_PORT: the probe responder's UDP port; 0 = off */
};

/* Parse "a.b.c.d/len" (len 1..32) strictly: four decimal octets without leading zeros,
 * nothing else. -EINVAL otherwise; outputs untouched on failure. */
int spa_parse_ipv4_prefix(const char *s, uint32_t *ret_ip, uint8_t *ret_len);
/* Parse "a.b.c.d" strictly (as above, no prefix). */
int spa_parse_ipv4(const char *s, uint32_t *ret_ip);
/* Whether an address can be a host's own unicast address: not 0/8, 127/8, multicast,
 * class E or broadcast, and not the subnet's network or broadcast address (for /31
 * and /32 every address is a host). */
bool spa_ipv4_host_ok(uint32_t ip, uint8_t prefix_len);

/* Parse the contract. On success fills *ret and returns 0. On failure returns -EINVAL,
 * leaves *ret untouched and writes every problem found, joined by "; ", each naming
 * its variable, into err (errlen bytes, always NUL-terminated when errlen > 0). */
int spa_env_parse(const char *const *envp, struct spa_config *ret, char *err, size_t errlen);

#endif
