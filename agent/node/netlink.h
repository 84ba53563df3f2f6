/* SPDX-License-Identifier: Apache-2.0 */
/* The node's link usage (agent/node/nlparse.h) from where it lives: the kernel's rtnetlink
 * (NETLINK_ROUTE dumps of the agent's network namespace, which the DaemonSet shares with
 * the host) on a live root, the dumps recorded in the tree under a fake one. Bounded in
 * bytes, messages and time; an incomplete answer is an error, never a partial table.
 * Owns the socket for the duration of one call; never logs. */
#ifndef SPIN_NETLINK_H
#define SPIN_NETLINK_H

#include "hostfs.h"
#include "nlparse.h"

#include <stdint.h>

/* Fake trees only: the six dumps' messages as the kernel would send them, concatenated
 * in nlparse_dump order with sequence numbers 1..6, each ending in NLMSG_DONE (the
 * nexthop dump may instead be one NLMSG_ERROR: a kernel without nexthop objects).
 * tests/fixtures/make-node.py writes it. Never read under a live root. */
#define NETLINK_RECORDED_DUMP "/spinlane-fixture/rtnetlink.dump"

#define NETLINK_TIMEOUT_MS 10000            /* the whole collection */
#define NETLINK_MAX_BYTES (512ull << 20)    /* all answers together */
#define NETLINK_MAX_DATAGRAM (1u << 20)     /* one answer */
#define NETLINK_ATTEMPTS 3                  /* asked again after NLM_F_DUMP_INTR */

typedef struct netlink_limits {
        unsigned timeout_ms;   /* 0: NETLINK_TIMEOUT_MS */
        uint64_t max_bytes;    /* 0: NETLINK_MAX_BYTES */
        unsigned attempts;     /* 0: NETLINK_ATTEMPTS */
} netlink_limits;

/* Dump links, addresses, nexthops, rules and the routes of every table of the calling
 * thread's network namespace into a new table. An interrupted dump (NLM_F_DUMP_INTR) is
 * asked again up to attempts times. Fails, with the reason in why, on a kernel error
 * (-errno), a malformed or truncated answer (-EBADMSG), no complete answer in time
 * (-ETIMEDOUT), past max_bytes (-E2BIG), still interrupted (-EINTR), or a table that
 * cannot attribute a fact (-ENODATA). *ret untouched on failure. lim may be NULL. */
/* A non-blocking netlink socket of protocol (NETLINK_ROUTE, NETLINK_KOBJECT_UEVENT...)
 * bound to the multicast groups, for the event loop. The fd, or negative errno. */
int netlink_subscribe(int type, int protocol, unsigned groups);

/* One datagram from the kernel on netlink socket fd into buf (size bytes), without
 * blocking: 0 and its length in *ret_len. A datagram another process sent (sender
 * nl_pid != 0) is dropped and the next one read. -EAGAIN when nothing is queued,
 * -EMSGSIZE when the datagram was larger than size (MSG_TRUNC: its rest is lost),
 * -ENOBUFS when the kernel dropped messages for this socket, another -errno; *ret_len
 * untouched on failure. Sequence numbers are the parser's (nlparse_feed checks a dump's;
 * events carry the seq of whoever caused them). */
int netlink_recv(int fd, void *buf, size_t size, size_t *ret_len);

int netlink_usage_dump(const netlink_limits *lim, nlparse_usage **ret, char *why, size_t size);

/* The same from a recorded dump file under h (NETLINK_RECORDED_DUMP's format), streamed:
 * -ENODATA when it ends before the last dump's NLMSG_DONE, -EBADMSG when something
 * follows it. */
int netlink_usage_read(const hostfs *h, const char *path, const netlink_limits *lim, nlparse_usage **ret,
                       char *why, size_t size);

/* The host's link usage: under the real root the kernel's (this namespace); under a live
 * --root (hostfs_is_live: the DaemonSet's /host) the kernel's too, after checking that
 * this process shares the network namespace of the host's PID 1 (<root>/proc/1/ns/net;
 * -EXDEV when not: hostNetwork is missing); under a fake tree NETLINK_RECORDED_DUMP.
 * why names the source. */
int netlink_usage_load(const hostfs *h, nlparse_usage **ret, char *why, size_t size);

/* "rtnetlink" or NETLINK_RECORDED_DUMP: where netlink_usage_load() reads for h. */
const char *netlink_usage_source(const hostfs *h);

#endif
