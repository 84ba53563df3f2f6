/* SPDX-License-Identifier: Apache-2.0 */
/* Static entries over metadata: the precedence of NIC address sources. Pure; never logs. */
#include "errbuf.h"
#include "nic-address.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *nic_addr_source_name(nic_addr_source s)
{
        static const char *const names[] = {"none", "static", "aws-imds", "azure-imds"};
        return (unsigned)s < _NIC_ADDR_SOURCE_MAX ? names[s] : "none";
}

int nic_addr_check(ipv4_cidr c, char *err, size_t err_size)
{
        char a[IPV4_CIDR_STR_MAX];

        if (c.prefix_len < 1 || c.prefix_len > 32) {
                errbuf_printf(err, err_size, "\"%s\": the prefix must be /1../32", ipv4_cidr_format(c, a));
                return -EDOM;
        }
        if (ipv4_check_host(c.addr, c) < 0) {
                errbuf_printf(err, err_size, "\"%s\" is the network or broadcast address of its subnet", ipv4_cidr_format(c, a));
                return -EDOM;
        }
        if (!ipv4_is_unicast(c.addr)) {
                errbuf_printf(err, err_size, "\"%s\" cannot be an interface's address (zero, loopback, multicast or reserved)",
                        ipv4_cidr_format(c, a));
                return -EDOM;
        }
        return 0;
}

int nic_addr_check_metadata(ipv4_cidr c, char *err, size_t err_size)
{
        char a[IPV4_CIDR_STR_MAX];
        int r = nic_addr_check(c, err, err_size);

        if (r < 0)
                return r;
        if (ipv4_is_link_local(c.addr)) {
                errbuf_printf(err, err_size, "\"%s\" is link-local (169.254.0.0/16), not a NIC's address", ipv4_cidr_format(c, a));
                return -EDOM;
        }
        if (c.prefix_len < NIC_ADDR_META_PREFIX_MIN || c.prefix_len > NIC_ADDR_META_PREFIX_MAX) {
                errbuf_printf(err, err_size, "\"%s\": the subnet prefix is outside /%d../%d", ipv4_cidr_format(c, a),
                        NIC_ADDR_META_PREFIX_MIN, NIC_ADDR_META_PREFIX_MAX);
                return -EDOM;
        }
        return 0;
}

int nic_addr_static_parse(const char *ipv4, const char *gateway, nic_addr_static *ret, char *err,
                          size_t err_size)
{
        ipv4_cidr c;
        uint32_t gw = 0;
        char why[NIC_ADDR_ERR_LEN];

        if (!ipv4 || ipv4_cidr_parse(ipv4, strlen(ipv4), &c) < 0 || c.prefix_len < 1) {
                errbuf_printf(err, err_size, "ipv4: expected \"a.b.c.d/len\" (len 1..32), got \"%.40s\"", ipv4 ? ipv4 : "");
                return -EINVAL;
        }
        if (nic_addr_check(c, why, sizeof(why)) < 0) {
                errbuf_printf(err, err_size, "ipv4: %s", why);
                return -EINVAL;
        }
        if (gateway) {
                if (ipv4_parse(gateway, strlen(gateway), &gw) < 0 || !ipv4_is_unicast(gw)) {
                        errbuf_printf(err, err_size, "gateway: expected \"a.b.c.d\", got \"%.40s\"", gateway);
                        return -EINVAL;
                }
                if (ipv4_check_host(gw, c) < 0 || gw == c.addr) {
                        errbuf_printf(err, err_size, "gateway: %.40s is not another host of the subnet of %.40s", gateway, ipv4);
                        return -EINVAL;
                }
        }
        ret->ipv4 = c;
        ret->gateway = gw;
        return 0;
}

static bool matches(const nic_addr_static *e, const char *pci, const uint8_t *mac)
{
        bool by_pci = e->pci[0] != '\0', by_mac = e->has_mac;

        if (!by_pci && !by_mac)
                return false;
        if (by_pci && (!pci || strcmp(e->pci, pci) != 0))
                return false;
        if (by_mac && (!mac || memcmp(e->mac, mac, 6) != 0))
                return false;
        return true;
}

int nic_addr_resolve(const char *pci, const uint8_t *mac, const nic_addr_static *entries, size_t n,
                     const nic_addr *metadata, nic_addr *ret, char *err, size_t err_size)
{
        const nic_addr_static *hit = NULL;
        size_t hit_i = 0;

        for (size_t i = 0; i < n; i++) {
                const nic_addr_static *e = &entries[i];
                if (!matches(e, pci, mac))
                        continue;
                if (hit && (hit->ipv4.addr != e->ipv4.addr || hit->ipv4.prefix_len != e->ipv4.prefix_len ||
                            hit->gateway != e->gateway)) {
                        errbuf_printf(err, err_size, "static entries %zu and %zu both match NIC %s and disagree", hit_i, i,
                                pci ? pci : "(unknown PCI address)");
                        return -ENOTUNIQ;
                }
                if (!hit) {
                        hit = e;
                        hit_i = i;
                }
        }
        if (hit) {
                *ret = (nic_addr){.ipv4 = hit->ipv4.addr, .prefix_len = hit->ipv4.prefix_len,
                                  .gateway = hit->gateway, .source = NIC_ADDR_STATIC};
                return 0;
        }
        if (metadata && metadata->source != NIC_ADDR_NONE) {
                *ret = *metadata;
                return 0;
        }
        errbuf_printf(err, err_size, "no static entry matches NIC %s and the metadata gave no address", pci ? pci : "(unknown)");
        return -ENOENT;
}

int nic_addr_find_duplicate(const nic_addr *addrs, size_t n, size_t *ret_i, size_t *ret_j)
{
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        if (addrs[i].source != NIC_ADDR_NONE && addrs[j].source != NIC_ADDR_NONE &&
                            addrs[i].ipv4 == addrs[j].ipv4) {
                                *ret_i = i;
                                *ret_j = j;
                                return -EEXIST;
                        }
        return 0;
}
