/* SPDX-License-Identifier: Apache-2.0 */
/* The instance-metadata replies of AWS (IMDSv2 text) and Azure (IMDS JSON), parsed into one
 * NIC address: IPv4/len, the subnet and its gateway (base + 1). Replies are untrusted: every
 * parser here is pure (bytes in, value or error message out; no I/O, no globals, never
 * logs), bounded, checks every number, and leaves its outputs untouched on failure. */
#ifndef SPIN_IMDS_PARSE_H
#define SPIN_IMDS_PARSE_H

#include "ipv4.h"

#include <stddef.h>
#include <stdint.h>

#define IMDS_TOKEN_MAX 1024          /* bytes of an IMDSv2 token, incl. NUL (AWS: ~56) */
#define IMDS_MAX_TEXT (64 * 1024)    /* an AWS text reply */
#define IMDS_MAX_JSON (256 * 1024)   /* the Azure network document */
#define IMDS_MAX_LINES 256           /* addresses in local-ipv4s */
#define IMDS_MAX_INTERFACES 64       /* interfaces in the Azure document */
#define IMDS_ERR_LEN 256

/* A NIC's address as the cloud knows it. */
typedef struct imds_addr {
        uint32_t ipv4;      /* host byte order */
        uint8_t prefix_len; /* the subnet's */
        uint32_t gateway;   /* subnet base + 1 */
} imds_addr;

/* "0a:1b:2c:3d:4e:5f" (AWS's per-MAC path component: lowercase, colons); buf >= 18. */
char *imds_aws_mac(const uint8_t mac[6], char *buf);
/* "0A1B2C3D4E5F" (Azure's macAddress: 12 uppercase hex digits); buf >= 13. */
char *imds_azure_mac(const uint8_t mac[6], char *buf);

/* The body of PUT /latest/api/token: printable ASCII without spaces (it goes into a
 * header), one trailing newline allowed. -EBADMSG otherwise, -E2BIG if too long. */
int imds_aws_token_parse(const char *body, size_t len, char *ret, size_t ret_size);
/* local-ipv4s: one address a line; the first is the ENI's primary private IPv4. Every
 * line must be an address. -ENODATA for an empty reply (no IPv4 on that ENI). */
int imds_aws_ipv4s_parse(const char *body, size_t len, uint32_t *ret_first, char *err, size_t err_size);
/* subnet-ipv4-cidr-block: one canonical CIDR block (no host bits set), with a prefix of
 * NIC_ADDR_META_PREFIX_MIN..MAX (/8../29). */
int imds_aws_subnet_parse(const char *body, size_t len, ipv4_cidr *ret, char *err, size_t err_size);

/* An address and its subnet made one imds_addr: -EDOM when the address is not a usable
 * host of the subnet (outside it, or its network/broadcast address), is the gateway, or
 * fails nic_addr_check_metadata() (the static entries' unicast rule, not link-local, a
 * subnet prefix of /8../29). Both clouds' answers go through here. */
int imds_addr_make(uint32_t ipv4, ipv4_cidr subnet, imds_addr *ret, char *err, size_t err_size);

/* GET /metadata/instance/network: the interface whose macAddress is mac, its first
 * ipv4.ipAddress[].privateIpAddress and ipv4.subnet[0] {address, prefix}. -EBADMSG for
 * bad JSON or a bad shape (the message names the field), -E2BIG beyond the limits,
 * -ENOENT when no interface has that MAC, -ENODATA when it has no private IPv4 or no
 * subnet, -EDOM as imds_addr_make(). */
int imds_azure_parse(const char *body, size_t len, const uint8_t mac[6], imds_addr *ret,
                     char *err, size_t err_size);

#endif
