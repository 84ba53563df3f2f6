/* SPDX-License-Identifier: Apache-2.0 */
/* Private to the DPDK half of the transport (port.c, endpoint.c, control.c, datapath.c):
 * the port, queue and endpoint structures, their locks, counters and the clock. Nothing
 * outside driver/transport includes this. */
#ifndef TR_PORT_INTERNAL_H
#define TR_PORT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_rwlock.h>
#include <rte_spinlock.h>
#include <rte_thread.h>
#include <rte_version.h>

#include "arp_table.h"
#include "demux.h"
#include "frame_fast.h"
#include "igmp.h"
#include "transport.h"

_Static_assert(TR_IGMP_SLOTS >= 2 * TR_MAX_GROUPS, "an IGMP slot per group and per leave");

/* Counters have one writer each (the queue's thread, or arp_lock's holder for ctl) and
 * are read by tr_port_counters from any thread: relaxed stores, no read-modify-write. */
#define TR_CNT_ADD(q, f, v) __atomic_store_n(&(q)->c.f, (q)->c.f + (v), __ATOMIC_RELAXED)
#define TR_CNT_INC(q, f) TR_CNT_ADD(q, f, 1)
#define TR_CNT_DROP(q, why) __atomic_store_n(&(q)->c.drops[why], (q)->c.drops[why] + 1, __ATOMIC_RELAXED)

/* A sending thread's cache of prepared headers, one per recent (endpoint, destination):
 * the MAC resolved, the header template and its partial checksums. An entry holds while
 * the port's tx_gen is unchanged: an ARP update, an endpoint opened or closed, and the
 * expiry of an ARP entry a flow was made from (queue 0's poller watches flows_expire)
 * bump it. No clock is read per datagram. */
#define TR_FLOWS 8 /* power of two */
struct tr_flow {
        struct tr_udp_tmpl t;  /* 64 bytes: one cache line */
        const struct tr_endpoint *ep;
        uint64_t dst;          /* sin_port << 32 | sin_addr, as in the sockaddr (network order) */
        uint32_t gen;          /* port->tx_gen when filled */
} __rte_cache_aligned;

/* Laid out so that receiving touches the first cache line and sending the first two
 * (the counters it bumps) besides its flow. */
struct tr_queue {
        struct tr_port *port;
        uint16_t qid;
        uint16_t ip_id;
        unsigned polls;
        /* the last (destination, port) -> endpoint the demux gave (TR_RX_KEY_NONE: none);
         * forgotten at the start of a burst when port->demux_gen is no longer rx_gen */
        uint64_t rx_key;
        struct tr_endpoint *rx_ep;
        uint32_t rx_gen;
        struct tr_counters c;
        struct tr_flow flows[TR_FLOWS];
} __rte_cache_aligned;

/* The first 6 bytes of an 8-byte load in memory order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TR_MAC_MASK 0x0000ffffffffffffull
#else
#define TR_MAC_MASK 0xffffffffffff0000ull
#endif

#define TR_RX_KEY_NONE UINT64_MAX /* no (port << 32 | address) is: the port is 16 bits */

#define TR_HL_MAX 64 /* endpoints with a host-local socket: one bit each in hl_ready */
_Static_assert(TR_HL_MAX >= TR_DEMUX_MAX, "every endpoint may have a host-local socket");

struct tr_endpoint {
        struct tr_port *port;
        uint32_t ip;    /* network order */
        uint16_t lport; /* host order */
        void *clientd;
        int kfd;        /* host-local kernel socket on 127.0.0.1:lport, or -1 */
        unsigned hl_slot; /* its index in port->hl_eps when kfd >= 0 */
};

struct tr_port {
        /* what every datagram reads, in the first cache line; set at open */
        uint16_t port_id, n_queues, n_rxq, burst, mtu, ctl_qid;
        uint8_t mac[6];
        uint8_t ttl;
        uint32_t ip, mask, gateway;
        bool host_local, ip_csum_offload, udp_csum_offload;
        bool udp_csum_sw;        /* sum each datagram's UDP checksum in software (no offload,
                                    and not no_udp_csum) */
        bool rx_csum_offload;    /* the device may mark RX checksums good */
        uint64_t mac64;          /* our MAC as an 8-byte load of a frame sees it, & TR_MAC_MASK */
        struct rte_mempool *pool;
        uint32_t tx_gen;          /* bumped (atomic) whenever a cached flow may be stale: rare */
        uint64_t tsc_hz, ns_mult; /* ns = cycles * ns_mult >> 32 */
        uint16_t next_ephemeral;
        struct tr_queue q[TR_MAX_QUEUES];

        /* the poller takes bind_lock per burst and reads demux_gen beside it */
        rte_rwlock_t bind_lock __rte_cache_aligned; /* demux, groups: written by control calls */
        uint32_t demux_gen;     /* bumped under bind_lock (writer) at every demux change */
        unsigned n_groups;
        uint32_t groups[TR_MAX_GROUPS];
        struct tr_demux demux;

        /* Host-local sockets: a control thread sleeps in epoll_wait on them and sets bit i
         * of hl_ready when hl_eps[i]'s socket becomes readable; queue 0's poller reads
         * only those, so with no host-local traffic it makes no system call. */
        struct tr_endpoint *hl_eps[TR_HL_MAX]; /* under bind_lock */
        uint64_t hl_ready;                     /* atomic */
        int hl_epfd, hl_evfd;                  /* epoll set, and the eventfd that stops the thread */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
        rte_thread_t hl_thread; /* rte_thread_create_control (DPDK >= 23.11) */
#else
        pthread_t hl_thread; /* rte_ctrl_thread_create (DPDK 22.11) */
#endif
        bool hl_running;

        rte_spinlock_t arp_lock; /* the ARP table, the control TX queue, the IGMP timers */
        struct tr_arp_table arp;
        struct tr_igmp igmp;
        uint64_t igmp_next;      /* tr_igmp_next(&igmp), copied under arp_lock; read unlocked */
        uint64_t flows_expire;   /* TSC: the earliest expiry of an ARP entry a flow uses (UINT64_MAX
                                    none); set under arp_lock, read unlocked by queue 0 */
        struct tr_rate reply_rate;
        struct tr_rate probe_rate; /* probe replies (probe.c), under arp_lock */
        uint16_t probe_port;       /* the probe responder's UDP port, host order; 0 = off */
        struct tr_counters ctl; /* frames sent by control calls, under arp_lock */
};

_Static_assert(offsetof(struct tr_port, tx_gen) + sizeof(uint32_t) <= RTE_CACHE_LINE_SIZE,
               "the fields every datagram reads share the port's first cache line");
_Static_assert(offsetof(struct tr_queue, rx_gen) + sizeof(uint32_t) <= RTE_CACHE_LINE_SIZE &&
                       offsetof(struct tr_queue, c.rx_bytes) + 8 <= RTE_CACHE_LINE_SIZE,
               "receiving touches the queue's first cache line only");
/* 64 bytes: one line on x86 and on most Arm cores; DPDK's generic arm64 build (Debian's,
 * the Graviton driver image) says 128, and then two flows share a line, neither straddling */
_Static_assert(sizeof(struct tr_udp_tmpl) == 64 && RTE_CACHE_LINE_SIZE % sizeof(struct tr_udp_tmpl) == 0,
               "a flow's headers fill 64 bytes, within one cache line");

static inline uint64_t tr_now_ns(const struct tr_port *p)
{
        return (uint64_t)(((unsigned __int128)rte_get_tsc_cycles() * p->ns_mult) >> 32);
}

/* Cached flows of every queue are stale from now on; under arp_lock or bind_lock. */
static inline void tr_flows_invalidate(struct tr_port *p)
{
        __atomic_fetch_add(&p->tx_gen, 1, __ATOMIC_RELEASE);
}

/* Destinations that do not go through the NIC: our own address and 127/8. */
static inline bool tr_is_host_local(const struct tr_port *p, uint32_t ip)
{
        return ip == p->ip || ((const uint8_t *)&ip)[0] == 127;
}

/* endpoint.c: the host-local watcher (a control thread) of a port with host_local. */
int tr_hl_start(struct tr_port *p);
void tr_hl_stop(struct tr_port *p);

/* control.c: the control TX queue and what uses it. */
/* Send one control frame (ARP, IGMP) through the control TX queue. Caller holds arp_lock. */
int tr_ctl_tx_locked(struct tr_port *p, const uint8_t *frame, size_t len);
/* An ARP request for ip from q's thread, unicast to mac (NULL: broadcast): the re-probe
 * of an entry in use. Caller holds arp_lock. */
void tr_ctl_arp_reprobe_locked(struct tr_queue *q, uint32_t ip, const uint8_t *mac);
/* ARP / IGMP received on queue 0's thread (IGMP: with bind_lock held as a reader). */
void tr_ctl_on_arp(struct tr_queue *q, const struct tr_frame *f);
void tr_ctl_on_igmp(struct tr_queue *q, const struct tr_frame *f);
/* Send the IGMP reports due at now. */
void tr_ctl_igmp_fire(struct tr_port *p, uint64_t now_ns);
/* The device's multicast filter from p->groups; caller holds bind_lock as the writer. */
int tr_ctl_mc_filter(struct tr_port *p);

/* probe.c: a datagram to the probe port that no endpoint took, on queue 0's thread:
 * answered when it is a probe request and the rate limit allows. */
void tr_probe_on_udp(struct tr_queue *q, const uint8_t *d, const struct tr_frame *f);

/* Flows made from an ARP entry that has now expired: all of them are stale. */
void tr_ctl_flows_expired(struct tr_port *p);

/* Fire due IGMP timers; from tr_poll of queue 0. One relaxed load when none is set. */
static inline void tr_ctl_igmp_tick(struct tr_port *p)
{
        uint64_t next = __atomic_load_n(&p->igmp_next, __ATOMIC_RELAXED);
        if (likely(next == TR_IGMP_NONE))
                return;
        uint64_t t = tr_now_ns(p);
        if (t >= next)
                tr_ctl_igmp_fire(p, t);
}

/* From tr_poll of queue 0, every 16th poll: one load, and a TSC read while flows exist. */
static inline void tr_ctl_flows_tick(struct tr_port *p)
{
        uint64_t fe = __atomic_load_n(&p->flows_expire, __ATOMIC_RELAXED);
        if (unlikely(fe != UINT64_MAX) && rte_get_tsc_cycles() >= fe)
                tr_ctl_flows_expired(p);
}

#endif
