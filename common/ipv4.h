/* SPDX-License-Identifier: Apache-2.0 */
/* IPv4 addresses and CIDR blocks: a strict parser ("a.b.c.d", "a.b.c.d/len"; no leading
 * zeros, no spaces, every number checked), subnet arithmetic and printing. Addresses are
 * in host byte order. Pure: no I/O, no globals, never logs; outputs untouched on failure. */
#ifndef SPIN_IPV4_H
#define SPIN_IPV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPV4_STR_MAX 16  /* "255.255.255.255" + NUL */
#define IPV4_CIDR_STR_MAX 19

typedef struct ipv4_cidr {
        uint32_t addr;      /* host byte order */
        uint8_t prefix_len; /* 0..32 */
} ipv4_cidr;

/* Exactly len bytes of s (no NUL needed) as a dotted quad. -EINVAL otherwise. */
int ipv4_parse(const char *s, size_t len, uint32_t *ret);
/* "a.b.c.d/len" with len 0..32 (host bits may be set: an interface address). */
int ipv4_cidr_parse(const char *s, size_t len, ipv4_cidr *ret);

uint32_t ipv4_netmask(uint8_t prefix_len);
/* The block's base address (host bits cleared). */
uint32_t ipv4_network(ipv4_cidr c);
bool ipv4_in_subnet(uint32_t addr, ipv4_cidr subnet);
/* A usable host address of subnet: inside it and, for prefixes up to /30, neither the
 * network nor the broadcast address. -EDOM otherwise. */
int ipv4_check_host(uint32_t addr, ipv4_cidr subnet);
/* An address a host's interface may have: not in 0.0.0.0/8 ("this network"), not
 * loopback (127.0.0.0/8), not multicast or reserved (224.0.0.0 and above). */
bool ipv4_is_unicast(uint32_t addr);
/* In 169.254.0.0/16 (IPv4 link-local, RFC 3927; the cloud metadata services live there). */
bool ipv4_is_link_local(uint32_t addr);
/* The subnet's base + 1 (the VPC router on AWS, the default gateway on Azure). -EDOM for
 * /31 and /32, which have no such address to spare. */
int ipv4_gateway_of(ipv4_cidr subnet, uint32_t *ret);

/* Print into buf (at least IPV4_STR_MAX / IPV4_CIDR_STR_MAX bytes); returns buf. */
char *ipv4_format(uint32_t addr, char *buf);
char *ipv4_cidr_format(ipv4_cidr c, char *buf);

#endif
