/* SPDX-License-Identifier: Apache-2.0 */
/* IPv4 and CIDR parsing and subnet arithmetic. Pure; never logs. */
#include "ipv4.h"

#include <errno.h>
#include <stdio.h>

/* One decimal octet at s[*pos..]: 1-3 digits, no leading zero, at most 255. */
static int octet(const char *s, size_t len, size_t *pos, unsigned *ret)
{
        size_t i = *pos, start = i;
        unsigned v = 0;

        while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3)
                v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
                return -EINVAL;
        if (i < len && s[i] >= '0' && s[i] <= '9')
                return -EINVAL; /* a fourth digit */
        *pos = i;
        *ret = v;
        return 0;
}

static int parse_quad(const char *s, size_t len, size_t *pos, uint32_t *ret)
{
        uint32_t a = 0;
        size_t i = *pos;

        for (int k = 0; k < 4; k++) {
                unsigned o;
                if (k > 0) {
                        if (i >= len || s[i] != '.')
                                return -EINVAL;
                        i++;
                }
                if (octet(s, len, &i, &o) < 0)
                        return -EINVAL;
                a = a << 8 | o;
        }
        *pos = i;
        *ret = a;
        return 0;
}

int ipv4_parse(const char *s, size_t len, uint32_t *ret)
{
        size_t pos = 0;
        uint32_t a;

        if (!s || parse_quad(s, len, &pos, &a) < 0 || pos != len)
                return -EINVAL;
        *ret = a;
        return 0;
}

int ipv4_cidr_parse(const char *s, size_t len, ipv4_cidr *ret)
{
        size_t pos = 0;
        uint32_t a;
        unsigned p = 0;

        if (!s || parse_quad(s, len, &pos, &a) < 0 || pos >= len || s[pos] != '/')
                return -EINVAL;
        pos++;
        if (pos >= len || len - pos > 2 || (s[pos] == '0' && len - pos > 1))
                return -EINVAL;
        for (; pos < len; pos++) {
                if (s[pos] < '0' || s[pos] > '9')
                        return -EINVAL;
                p = p * 10 + (unsigned)(s[pos] - '0');
        }
        if (p > 32)
                return -EINVAL;
        *ret = (ipv4_cidr){.addr = a, .prefix_len = (uint8_t)p};
        return 0;
}

uint32_t ipv4_netmask(uint8_t prefix_len)
{
        if (prefix_len == 0)
                return 0;
        if (prefix_len >= 32)
                return 0xffffffffu;
        return ~(0xffffffffu >> prefix_len);
}

uint32_t ipv4_network(ipv4_cidr c) { return c.addr & ipv4_netmask(c.prefix_len); }

bool ipv4_in_subnet(uint32_t addr, ipv4_cidr subnet)
{
        uint32_t m = ipv4_netmask(subnet.prefix_len);
        return (addr & m) == (subnet.addr & m);
}

int ipv4_check_host(uint32_t addr, ipv4_cidr subnet)
{
        uint32_t m = ipv4_netmask(subnet.prefix_len), base = subnet.addr & m;

        if (subnet.prefix_len > 32 || !ipv4_in_subnet(addr, subnet))
                return -EDOM;
        if (subnet.prefix_len <= 30 && (addr == base || addr == (base | ~m)))
                return -EDOM;
        return 0;
}

bool ipv4_is_unicast(uint32_t addr)
{
        uint32_t first = addr >> 24;
        return first != 0 && first != 127 && first < 224;
}

bool ipv4_is_link_local(uint32_t addr)
{
        return (addr >> 16) == 0xa9feu;
}

int ipv4_gateway_of(ipv4_cidr subnet, uint32_t *ret)
{
        if (subnet.prefix_len > 30)
                return -EDOM;
        *ret = ipv4_network(subnet) + 1;
        return 0;
}

char *ipv4_format(uint32_t a, char *buf)
{
        snprintf(buf, IPV4_STR_MAX, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
        return buf;
}

char *ipv4_cidr_format(ipv4_cidr c, char *buf)
{
        char a[IPV4_STR_MAX];
        snprintf(buf, IPV4_CIDR_STR_MAX, "%s/%u", ipv4_format(c.addr, a), c.prefix_len > 32 ? 32u : (unsigned)c.prefix_len);
        return buf;
}
