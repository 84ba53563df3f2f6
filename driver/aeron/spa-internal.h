/* SPDX-License-Identifier: Apache-2.0 */
/* The adapter's shared state: the DPDK ports, one agent per Aeron role with its queue and
 * its inbound hand-off ring, and one record per Aeron transport. Private to
 * libspinlane_aeron.so; included only by its own files. */
#ifndef SPA_INTERNAL_H
#define SPA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "spa-env.h"
#include "spa-ring.h"
#include "transport.h"

struct aeron_udp_channel_transport_stct;
struct aeron_udp_transport_poller_stct;
struct aeron_counters_manager_stct;

enum spa_role_id { SPA_SENDER = 0, SPA_RECEIVER = 1, SPA_CONDUCTOR = 2, SPA_ROLES = 3 };

/* Per-port counters published in Aeron's counters file, in this order. */
enum spa_port_counter {
        SPA_PC_RX_FRAMES,
        SPA_PC_RX_DATAGRAMS,
        SPA_PC_RX_BYTES,
        SPA_PC_TX_DATAGRAMS,
        SPA_PC_TX_BYTES,
        SPA_PC_HOST_LOCAL_RX,
        SPA_PC_HOST_LOCAL_TX,
        SPA_PC_WB_RING,
        SPA_PC_WB_NOMBUF,
        SPA_PC_WB_ARP,
        SPA_PC_ARP_REQ_RX,
        SPA_PC_ARP_REP_RX,
        SPA_PC_ARP_REQ_TX,
        SPA_PC_ARP_REP_TX,
        SPA_PC_GARP_TX,
        SPA_PC_IGMP_RX,
        SPA_PC_IGMP_TX,
        SPA_PC_DROPS_TOTAL,
        SPA_PC_ARP_REPROBE_TX, /* after the drops total: the existing counters keep their order */
        SPA_PC_PROBE_RX,
        SPA_PC_PROBE_TX,
        SPA_PC__FIXED, /* then one per drop reason 1..TR_DROP__MAX-1 */
};
#define SPA_PORT_COUNTERS (SPA_PC__FIXED + TR_DROP__MAX - 1)

/* Per-agent counters (written by that agent's thread only). */
enum spa_agent_counter {
        SPA_AC_HANDOFF_OUT,   /* datagrams copied to the other agent's ring */
        SPA_AC_HANDOFF_IN,    /* datagrams taken from this agent's ring and delivered */
        SPA_AC_HANDOFF_FULL,  /* the other agent's ring was full: dropped */
        SPA_AC_HANDOFF_STALE, /* taken from the ring for a transport no longer (or not yet) polled */
        SPA_AC_NOT_POLLED,    /* arrived before the transport was added to this agent's poller */
        SPA_AC_LCORE,         /* the DPDK lcore id of the agent's thread (rte_thread_register), -1 none */
        SPA_AC_THREAD_CHECKS, /* callbacks whose thread was checked (checked build only) */
        SPA_AC__MAX,
};

/* Aeron counter type ids of the adapter (Aeron reserves 50-95 for its Premium transports). */
#define SPA_COUNTER_TYPE_PORT_TRAFFIC 4200
#define SPA_COUNTER_TYPE_PORT_WOULD_BLOCK 4201
#define SPA_COUNTER_TYPE_PORT_ARP 4202
#define SPA_COUNTER_TYPE_PORT_DROP 4203
#define SPA_COUNTER_TYPE_AGENT 4204
#define SPA_COUNTER_TYPE_PORT_PROBE 4205

struct spa_group {
        uint32_t group; /* network order */
        unsigned refs;
};

struct spa_port {
        struct tr_port *tp;
        unsigned index;            /* 0: the sender's (or the shared) port, 1: the receiver's */
        uint16_t port_id;
        uint16_t mtu;              /* the largest UDP payload (Aeron's MTU) */
        const struct spa_role *cfg; /* device, address, gateway */
        const char *role_var;      /* BYPASS_ROLE_SENDER or _RECEIVER: names the variables in messages */
        struct spa_group groups[TR_MAX_GROUPS]; /* joins, refcounted; under spa_state.lock */
        volatile int64_t *counters[SPA_PORT_COUNTERS];
};

struct spa_transport;

struct spa_agent {
        enum spa_role_id role;
        struct spa_port *port;     /* NULL for the conductor: kernel transports only */
        struct tr_queue *q;        /* this agent's queue on its port */
        bool refresh;              /* this agent polls queue 0 of its port: it receives for the port and
                                    * refreshes its counters (tr_poll of another queue returns 0) */
        struct spa_ring in;        /* datagrams other agents received for this agent's transports */
        struct spa_agent *peer;    /* the agent whose ring foreign datagrams go to (shared port) */
        struct aeron_udp_transport_poller_stct *poller;

        /* this agent's transports, by kind (owned by the agent's thread) */
        struct spa_transport **dpdk, **kernel;
        unsigned n_dpdk, n_kernel, cap_dpdk, cap_kernel;

        /* the poll in progress (valid inside poller_poll only) */
        void *recv_func;           /* aeron_udp_transport_recv_func_t */
        void *recv_clientd;
        int64_t poll_bytes;

        volatile int64_t *counters[SPA_AC__MAX];
        pthread_t thread;
        bool entered;              /* thread known */
        uint64_t polls;
        uint64_t next_refresh_tsc;
};

struct spa_transport {
        uint64_t id;
        bool kernel;               /* delegated to Aeron's own kernel UDP transport */
        bool polled;               /* in its agent's poller; written and read by that agent only */
        struct spa_agent *agent;   /* owner: its queue sends, its thread receives */
        struct aeron_udp_channel_transport_stct *transport;
        struct tr_endpoint *ep;
        uint32_t group;            /* joined multicast group (network order), 0 = none */
        size_t rcvbuf;
};

#endif
