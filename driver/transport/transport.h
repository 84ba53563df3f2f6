/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane's DPDK UDP/IPv4 transport: one port per NIC, one RX/TX queue pair per polling
 * thread, endpoints bound to (address, UDP port), datagrams sent one at a time or in
 * batches (would-block, never queued) and received in bursts through a callback, as
 * Aeron's UDP channel transport bindings expect. ARP, IGMP and host-local destinations
 * (kernel UDP) are handled inside. Never logs; the data path never allocates. */
#ifndef TR_TRANSPORT_H
#define TR_TRANSPORT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eal_args.h"
#include "frame.h"

#define TR_MAX_QUEUES 8
#define TR_MAX_GROUPS 32
#define TR_DEFAULT_MTU 1408 /* Aeron's default MTU: the largest UDP payload */

/* Initialise the EAL from an explicit argument list (see tr_eal_args_split). Returns 0
 * or a negative errno (rte_errno). Call once per process, from main. */
int tr_eal_init(struct tr_eal_args *args);
/* rte_eal_cleanup, then remove this process's EAL runtime directory (/var/run/dpdk/PREFIX). */
void tr_eal_cleanup(void);

/* DPDK port id of a device by name ("net_memif0", "0000:00:06.0"); -ENODEV if none. */
int tr_port_find(const char *name, uint16_t *ret_port_id);

struct tr_port_config {
        uint16_t port_id;
        uint16_t n_queues;      /* polling threads (1..TR_MAX_QUEUES); 0 = 1 */
        uint16_t rx_ring;       /* RX descriptors; 0 = 1024 (or the device's max if lower) */
        uint16_t tx_ring;       /* TX descriptors; 0 = 1024 (likewise) */
        uint16_t burst;         /* RX/TX burst; 0 = 32, at most 256 */
        uint16_t mtu;           /* largest UDP payload (Aeron MTU); 0 = 1408 */
        uint32_t ipv4;          /* our address, network order */
        uint8_t prefix_len;     /* subnet prefix, 1..32 */
        uint32_t gateway;       /* next hop outside the subnet, network order; 0 = none */
        uint32_t link_wait_ms;  /* wait this long for link up at open; 0 = do not wait */
        uint32_t arp_ttl_ms;    /* 0 = 60000 */
        uint32_t arp_retry_ms;  /* per-address request interval; 0 = 100 */
        uint32_t arp_rate;      /* ARP requests and replies per second each; 0 = 100 */
        uint32_t arp_reprobe_ms; /* re-probe an entry in use unconfirmed this long; 0 = 2000,
                                    UINT32_MAX = never (the entry then holds until arp_ttl_ms) */
        uint16_t probe_port;    /* the probe responder's UDP port (host order); 0 = off */
        uint32_t probe_rate;    /* probe replies per second; 0 = 1000 */
        uint8_t igmp_version;   /* 2 or 3; 0 = 3 */
        uint8_t igmp_robustness; /* state-change reports sent per join/leave (1..7); 0 = 2 */
        uint32_t igmp_unsolicited_ms; /* Unsolicited Report Interval; 0 = 1000 (v3), 10000 (v2) */
        uint8_t ttl;            /* IPv4 TTL of datagrams; 0 = 64 */
        bool no_host_local;     /* do not open kernel sockets for host-local peers */
        bool no_udp_csum;       /* where the device cannot offload the UDP checksum, send 0 ("no
                                   checksum", RFC 768) instead of summing each datagram in
                                   software; off by default, as RFC 1122 4.1.3.4 wants. A device
                                   with the offload always gets a checksum. Received checksums
                                   are verified either way (0 is accepted, as by Linux). */
        bool clamp_rings;       /* fit explicit ring sizes to the device instead of refusing */
};

struct tr_port;
struct tr_queue;
struct tr_endpoint;

/* Configure and start cfg->port_id: one pool, n_queues RX/TX queue pairs plus one
 * control TX queue, MTU, MAC filter, then a gratuitous ARP. On failure returns a
 * negative errno and writes the reason to err (errlen bytes) when given. */
int tr_port_open(const struct tr_port_config *cfg, struct tr_port **ret, char *err, size_t errlen);
/* Stop the port and free everything; endpoints must be closed first. Accepts NULL. */
void tr_port_close(struct tr_port *p);

/* The queue pair of polling thread i (0..n_queues-1). Everything received is delivered
 * by tr_poll of queue 0, whichever of the device's RX queues it came in on (RSS is off;
 * memif puts on our RX queue i what its peer sent on TX queue i): the thread that polls
 * queue 0 receives for every endpoint, and tr_poll of another queue returns 0. */
struct tr_queue *tr_port_queue(struct tr_port *p, unsigned i);
void tr_port_mac(const struct tr_port *p, uint8_t ret[6]);
bool tr_port_link_up(const struct tr_port *p);
/* Broadcast a gratuitous ARP for our address (done once at open). */
int tr_port_announce(struct tr_port *p);

/* Resolve ip's MAC (on the subnet; the gateway's for an address outside it): 1 and
 * ret_mac when known, 0 while an ARP request is out (one is sent when due: keep polling
 * queue 0 and ask again), -ENETUNREACH without a route. For the datapath check. */
int tr_port_resolve(struct tr_port *p, uint32_t ip, uint8_t ret_mac[6]);

/* Bind an endpoint to bind->sin_addr (ours or INADDR_ANY or a multicast group) and
 * bind->sin_port (0 = pick one). clientd is handed to the receive callback. */
int tr_endpoint_open(struct tr_port *p, const struct sockaddr_in *bind, void *clientd,
                     struct tr_endpoint **ret);
void tr_endpoint_close(struct tr_endpoint *ep);
/* The bound address and port (Aeron's bind_addr_and_port). */
void tr_endpoint_local(const struct tr_endpoint *ep, struct sockaddr_in *ret);
/* Join / leave a multicast group on the port: MAC filter and an IGMP report at once,
 * repeated so that igmp_robustness reports go out in all (RFC 3376 5.1 / RFC 2236 3; an
 * IGMPv2 leave goes once), spaced by the Unsolicited Report Interval (v2) or at random
 * within it (v3). Queries for joined groups are answered after a random delay within the
 * query's Max Resp Time. Those timers run in tr_poll of queue 0: no thread of its own. */
int tr_port_join(struct tr_port *p, uint32_t group);
int tr_port_leave(struct tr_port *p, uint32_t group);

struct tr_msg {
        const struct sockaddr_in *dst;
        const void *data;
        size_t len;
};

/* Send one datagram from ep to dst on q's TX queue. Returns 1 when handed to the NIC (or
 * the kernel, for host-local peers), 0 when it would block (TX ring full, no mbuf, next
 * hop not resolved yet: an ARP request has been sent, retry later), negative errno for
 * errors (-EMSGSIZE above the MTU, -ENETUNREACH without a route). */
int tr_send(struct tr_queue *q, struct tr_endpoint *ep, const struct sockaddr_in *dst,
            const void *data, size_t len);
/* Send up to n datagrams in bursts; returns how many were sent (stops at the first that
 * would block) or a negative errno when the first fails. */
int tr_sendmmsg(struct tr_queue *q, struct tr_endpoint *ep, const struct tr_msg *msgs, size_t n);

/* Called for each datagram: payload valid only during the call. */
typedef void (*tr_recv_fn)(void *clientd, void *endpoint_clientd, const uint8_t *data,
                           size_t len, const struct sockaddr_in *src);
/* Receive one burst on q; answer ARP and IGMP; hand each UDP datagram to fn. On queue 0,
 * every 16 calls, also read the host-local kernel sockets that have data (a sleeping
 * control thread of the port watches them, so without host-local traffic this makes no
 * system call) and fire the IGMP timers: all receiving happens on queue 0's thread.
 * Returns the number of datagrams delivered. */
int tr_poll(struct tr_queue *q, tr_recv_fn fn, void *clientd);

struct tr_counters {
        uint64_t rx_frames, rx_datagrams, rx_bytes;
        uint64_t tx_datagrams, tx_bytes;
        uint64_t tx_wouldblock_ring, tx_wouldblock_nombuf, tx_wouldblock_arp;
        uint64_t arp_requests_rx, arp_replies_rx, arp_requests_tx, arp_replies_tx, garp_tx;
        uint64_t igmp_rx, igmp_reports_tx;
        uint64_t host_local_tx, host_local_rx;
        uint64_t arp_reprobes_tx;     /* re-probes of entries in use (also in arp_requests_tx) */
        uint64_t probe_rx, probe_tx;  /* probe requests received on the probe port, replies sent */
        uint64_t drops[TR_DROP__MAX];
};

/* Sum of every queue's counters; safe to call from any thread while the port runs. */
void tr_port_counters(struct tr_port *p, struct tr_counters *ret);
/* Total of all drops. */
uint64_t tr_counters_drops(const struct tr_counters *c);

#endif
