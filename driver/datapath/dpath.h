/* SPDX-License-Identifier: Apache-2.0 */
/* The datapath check: what spinlane-datapath measures on each port the media driver will
 * open (time to link-up, ARP of the gateway or peer, UDP probe round trips between the
 * sender and receiver NICs and to a peer's probe responder), and the verdicts made of
 * it. dpath_judge is pure (no I/O, never logs); dpath_run is the DPDK half. */
#ifndef SPIN_DPATH_H
#define SPIN_DPATH_H

#include <stdbool.h>
#include <stdint.h>

#include "verdict.h"

#define DPATH_MAX_ROUNDS 10000
#define DPATH_DEFAULT_ROUNDS 32
#define DPATH_DEFAULT_TIMEOUT_MS 2000
#define DPATH_MAX_TIMEOUT_MS 60000
#define DPATH_PROBE_LEN 32  /* probe payload bytes */

/* What the launcher passes on (SPINLANE_DATAPATH_*, checked by its env parser). */
struct dpath_opts {
        unsigned rounds;      /* round trips per path */
        unsigned timeout_ms;  /* bound of each step: link-up, ARP, the first answer */
        uint32_t peer_ip;     /* SPINLANE_DATAPATH_PEER, network order; 0 = none */
        uint16_t peer_port;   /* host order */
        uint32_t max_p99_us;  /* 0 = no threshold */
        uint16_t probe_port;  /* the receiver's responder port during the check (host order) */
};

/* One measured path: probes from a port to an address. */
struct dpath_rtt {
        char to[112];         /* "receiver net_af_packet1 10.2.0.2:39990" or "peer 10.9.0.5:39990" */
        bool peer;            /* to SPINLANE_DATAPATH_PEER (else to our receiver NIC) */
        unsigned sent, answered;
        uint64_t p50_ns, p99_ns, max_ns;
        double arp_ms;        /* resolving the next hop first; < 0 unanswered */
};

#define DPATH_MAX_RTT 2

struct dpath_port {
        char role[24];        /* "sender", "receiver", "sender+receiver" */
        char device[64];
        uint32_t ip;          /* network order */
        uint8_t prefix_len;
        uint32_t gateway;     /* network order; 0 none */
        int open_err;         /* < 0: the port did not start; open_msg says why */
        char open_msg[256];
        bool link_up;
        double link_ms;       /* port start to link up (when link_up) */
        uint32_t arp_target;  /* the gateway or the peer's next hop; 0 = nothing to ask */
        bool arp_target_is_peer;
        double arp_ms;        /* < 0: no answer within the bound */
        struct dpath_rtt rtt[DPATH_MAX_RTT];
        unsigned n_rtt;
        char note[160];       /* why a round trip was not measured ("" none) */
};

struct dpath_result {
        struct dpath_port port[2];
        unsigned n_ports;
        int eal_err;          /* < 0: the EAL did not start */
        char eal_msg[256];
};

/* Nearest-rank percentile (0 < pct <= 100) of n sorted values; 0 when n == 0. */
uint64_t dpath_percentile(const uint64_t *sorted, unsigned n, unsigned pct);

/* One `datapath` verdict per port (or one for an EAL that did not start): FAIL naming
 * the NIC, the address and what did not answer (port start, link, ARP, probes) or a p99
 * above o->max_p99_us; WARN when a path lost some probes or nothing could be asked; PASS
 * with the figures otherwise. -ENOMEM only. */
int dpath_judge(const struct dpath_result *r, const struct dpath_opts *o, verdict_list *vl);

struct spa_config;
/* Start the EAL with cfg's arguments, open each port cfg names as the driver would (same
 * devices, addresses, gateways), measure, close everything and clean the EAL up (its
 * runtime directory removed): nothing is left for the driver to trip over. Fills *ret
 * always. */
void dpath_run(const struct spa_config *cfg, const struct dpath_opts *o, struct dpath_result *ret);

#endif
