/* SPDX-License-Identifier: Apache-2.0 */
/* Ethernet/ARP/IPv4/UDP/IGMP frames: a parser that classifies one received frame and
 * builders that write headers into a caller's buffer. Pure: no I/O, no globals, no DPDK,
 * never logs; every header read is checked against the frame length first. */
#ifndef TR_FRAME_H
#define TR_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_ETH_HLEN 14
#define TR_IP_HLEN 20
#define TR_UDP_HLEN 8
#define TR_UDP_HDRS (TR_ETH_HLEN + TR_IP_HLEN + TR_UDP_HLEN) /* 42 */
#define TR_ARP_LEN 28
#define TR_ETH_MIN_FRAME 60 /* without FCS */

#define TR_ETHERTYPE_IPV4 0x0800
#define TR_ETHERTYPE_ARP 0x0806
#define TR_ETHERTYPE_VLAN 0x8100
#define TR_IPPROTO_IGMP 2
#define TR_IPPROTO_UDP 17

/* Why a frame was not delivered. Stable order: docs/transport.md lists them. */
enum tr_drop {
        TR_DROP_NONE = 0,
        TR_DROP_RUNT,          /* shorter than an Ethernet header */
        TR_DROP_ETHERTYPE,     /* not IPv4 or ARP (VLAN tags included) */
        TR_DROP_NOT_OUR_MAC,   /* unicast MAC that is not ours */
        TR_DROP_ARP_MALFORMED, /* short, or hardware/protocol type or sizes not Ethernet/IPv4 */
        TR_DROP_IP_TRUNCATED,  /* frame shorter than an IPv4 header */
        TR_DROP_IP_VERSION,    /* version != 4 */
        TR_DROP_IP_IHL,        /* IHL < 5 or header beyond the frame */
        TR_DROP_IP_OPTIONS,    /* IHL > 5 on a UDP datagram */
        TR_DROP_IP_LENGTH,     /* total length < header or beyond the frame */
        TR_DROP_IP_CHECKSUM,
        TR_DROP_IP_FRAGMENT,   /* MF set or offset != 0 */
        TR_DROP_IP_SRC,        /* source is multicast/broadcast/zero/loopback */
        TR_DROP_PROTO,         /* neither UDP nor IGMP */
        TR_DROP_UDP_TRUNCATED, /* IP payload shorter than a UDP header */
        TR_DROP_UDP_LENGTH,    /* UDP length < 8 or beyond the IP payload */
        TR_DROP_UDP_CHECKSUM,
        TR_DROP_IGMP_MALFORMED,
        TR_DROP_NOT_FOR_US,    /* IPv4 destination is not ours, nor a joined group */
        TR_DROP_NO_ENDPOINT,   /* no endpoint bound to (destination, port) */
        TR_DROP_ARP_RATE,      /* ARP reply suppressed by the rate limit */
        TR_DROP_TOO_BIG,       /* host-local datagram (kernel socket) above the MTU */
        TR_DROP_PROBE_RATE,    /* probe request not answered: the responder's rate limit */
        TR_DROP_PROBE_MALFORMED, /* datagram to the probe port that is no probe request */
        TR_DROP__MAX
};

/* Name of a drop reason for counters ("runt", "ip_ihl", …); "?" when out of range. */
const char *tr_drop_name(enum tr_drop d);

enum tr_frame_kind {
        TR_FRAME_DROP = 0,
        TR_FRAME_ARP,
        TR_FRAME_UDP,
        TR_FRAME_IGMP,
};

/* What the parser found. Addresses are in network byte order as on the wire. */
struct tr_frame {
        enum tr_frame_kind kind;
        enum tr_drop drop;      /* set when kind == TR_FRAME_DROP */
        const uint8_t *dst_mac, *src_mac; /* point into the frame (valid while it is) */
        /* ARP */
        uint16_t arp_op;        /* host order: 1 request, 2 reply */
        uint8_t arp_sha[6];
        uint32_t arp_spa, arp_tpa;
        /* IPv4 */
        uint32_t ip_src, ip_dst;
        /* UDP (host order ports) */
        uint16_t src_port, dst_port;
        uint16_t payload_off, payload_len;
        /* IGMP */
        uint8_t igmp_type;
        uint8_t igmp_code;      /* Max Resp Code of a query (v2: tenths of a second) */
        uint16_t igmp_len;      /* IGMP message length: 8 for v1/v2, >= 12 for a v3 query */
        uint32_t igmp_group;
};

/* Checksum choices: which checks the caller (a NIC offload) has done already. */
#define TR_PARSE_IP_CSUM_DONE 0x1u
#define TR_PARSE_L4_CSUM_DONE 0x2u

/* Classify frame[0..len). Always fills ret->kind (and ret->drop for drops); never reads
 * beyond len. MAC filtering is the caller's (it knows which multicast MACs it joined). */
void tr_frame_parse(const uint8_t *frame, size_t len, unsigned flags, struct tr_frame *ret);

/* One's complement sum helpers (RFC 1071). */
uint32_t tr_csum_partial(const void *buf, size_t len, uint32_t sum);
uint16_t tr_csum_fold(uint32_t sum);

/* Header fields for a UDP datagram; addresses network order, ports host order. */
struct tr_udp_hdr_args {
        const uint8_t *dst_mac, *src_mac;
        uint32_t ip_src, ip_dst;
        uint16_t src_port, dst_port;
        uint16_t ip_id;
        uint8_t ttl;
        bool ip_csum;           /* compute the IPv4 header checksum in software */
        bool udp_csum;          /* compute the UDP checksum in software (else 0 or offload) */
};

/* Write Ethernet+IPv4+UDP headers (42 bytes) at hdr; the payload of payload_len bytes
 * must already follow them (it is summed for the UDP checksum). -EMSGSIZE when the
 * datagram would not fit an IPv4 total length. */
int tr_frame_build_udp(uint8_t *hdr, size_t payload_len, const struct tr_udp_hdr_args *a);

/* Write a 42-byte ARP frame (request when op == 1, reply when op == 2) and pad to 60.
 * tha may be NULL (zeros). Returns the frame length (60). */
size_t tr_frame_build_arp(uint8_t out[TR_ETH_MIN_FRAME], uint16_t op, const uint8_t eth_dst[6],
                          const uint8_t sha[6], uint32_t spa, const uint8_t *tha, uint32_t tpa);

/* IGMP report for group: version 2 (membership report or, with leave, leave group) or
 * 3 (one record: MODE_IS_EXCLUDE{} to join, CHANGE_TO_INCLUDE{} to leave). Includes the
 * Router Alert option. out must hold 64 bytes; returns the frame length. */
size_t tr_frame_build_igmp(uint8_t out[64], int version, bool leave, const uint8_t src_mac[6],
                           uint32_t ip_src, uint32_t group);

/* Max Resp Time of an IGMP query in tenths of a second: v1 (code 0 in an 8-byte query)
 * 100, v2 the code, v3 the code or its floating-point form (RFC 3376 4.1.1). */
unsigned tr_igmp_max_resp_ds(uint8_t code, uint16_t igmp_len);

/* Multicast MAC of an IPv4 group (01:00:5e + low 23 bits). */
void tr_ipv4_mcast_mac(uint32_t group, uint8_t ret[6]);

static inline bool tr_ipv4_is_multicast(uint32_t ip_be)
{
        return (((const uint8_t *)&ip_be)[0] & 0xf0) == 0xe0;
}

#endif
