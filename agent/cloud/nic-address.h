/* SPDX-License-Identifier: Apache-2.0 */
/* Where a NIC's IPv4 address comes from: a static config entry (by PCI address or MAC)
 * overrides the cloud's metadata. Plain structs in, one address or an error message out:
 * pure (no I/O, no globals, never logs); the config parser fills nic_addr_static (with
 * nic_addr_static_parse) and the daemon passes what the metadata said. */
#ifndef SPIN_NIC_ADDRESS_H
#define SPIN_NIC_ADDRESS_H

#include "ipv4.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NIC_ADDR_ERR_LEN 256

typedef enum nic_addr_source {
        NIC_ADDR_NONE,
        NIC_ADDR_STATIC,    /* "static": the config */
        NIC_ADDR_AWS,       /* "aws-imds" */
        NIC_ADDR_AZURE,     /* "azure-imds" */
        _NIC_ADDR_SOURCE_MAX,
} nic_addr_source;
/* "static", "aws-imds", "azure-imds" ("none" for NIC_ADDR_NONE). */
const char *nic_addr_source_name(nic_addr_source s);

typedef struct nic_addr {
        uint32_t ipv4;      /* host byte order */
        uint8_t prefix_len; /* 1..32 */
        uint32_t gateway;   /* 0 = none (on-link peers only) */
        nic_addr_source source;
} nic_addr;

/* One static entry of the config: matches a NIC by PCI address or by MAC (or both must
 * then hold). */
typedef struct nic_addr_static {
        char pci[16];     /* "0000:00:06.0"; "" = any */
        bool has_mac;
        uint8_t mac[6];
        ipv4_cidr ipv4;   /* the NIC's address and its prefix, "a.b.c.d/len" */
        uint32_t gateway; /* 0 = none given */
} nic_addr_static;

/* The rule every NIC address passes, whatever its source: c.addr is a usable host address
 * of its own subnet (prefix /1../32; for /1../30 neither the network nor the broadcast
 * address) and unicast (ipv4_is_unicast: not 0/8, not 127/8, not 224.0.0.0 and above).
 * Static entries and metadata answers both go through it. 0, or -EDOM with a message
 * naming the address. */
int nic_addr_check(ipv4_cidr c, char *err, size_t err_size);

/* The subnet prefixes a metadata answer may carry: AWS subnets are /16../28 (EC2
 * CreateSubnet), Azure's smallest is /29; /8 leaves room for the largest Azure VNets.
 * Wider or narrower is a broken or hostile answer, not a subnet a NIC sits in. */
#define NIC_ADDR_META_PREFIX_MIN 8
#define NIC_ADDR_META_PREFIX_MAX 29

/* What a metadata answer (address with its subnet's prefix) must also be, on top of
 * nic_addr_check(): not link-local (169.254.0.0/16, where the metadata service itself
 * answers) and a prefix within NIC_ADDR_META_PREFIX_MIN..MAX. 0, or -EDOM with a message. */
int nic_addr_check_metadata(ipv4_cidr c, char *err, size_t err_size);

/* Fill ret's address from the config strings ipv4 ("a.b.c.d/len" that passes
 * nic_addr_check()) and gateway (NULL = none; else an address inside that subnet, not the NIC's
 * own). The match fields (pci, mac) are the caller's. -EINVAL with a message naming the
 * value. */
int nic_addr_static_parse(const char *ipv4, const char *gateway, nic_addr_static *ret, char *err,
                          size_t err_size);

/* The address of the NIC at pci (may be NULL) with MAC mac (NULL = unknown): the static
 * entry that matches it, else metadata (NULL or source NONE = none known). -ENOENT when
 * neither gives one; -ENOTUNIQ when two static entries match and disagree. */
int nic_addr_resolve(const char *pci, const uint8_t *mac, const nic_addr_static *entries, size_t n,
                     const nic_addr *metadata, nic_addr *ret, char *err, size_t err_size);

/* Two NICs claiming one address: -EEXIST and the first such pair (i < j). */
int nic_addr_find_duplicate(const nic_addr *addrs, size_t n, size_t *ret_i, size_t *ret_j);

#endif
