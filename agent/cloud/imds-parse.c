/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers of AWS IMDSv2 and Azure IMDS replies (untrusted). Pure: no I/O, no globals,
 * never logs; values quoted in messages are cut short and stripped of control bytes. */
#include "errbuf.h"
#include "imds-parse.h"
#include "nic-address.h"

#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A printable, bounded copy of untrusted text for a message. */
static const char *quote(const char *s, size_t len, char *buf, size_t size)
{
        size_t o = 0;
        for (size_t i = 0; i < len && o + 4 < size; i++)
                buf[o++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
        if (o + 4 >= size && len > o) {
                buf[o++] = '.';
                buf[o++] = '.';
                buf[o++] = '.';
        }
        buf[o] = '\0';
        return buf;
}

char *imds_aws_mac(const uint8_t mac[6], char *buf)
{
        snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
        return buf;
}

char *imds_azure_mac(const uint8_t mac[6], char *buf)
{
        snprintf(buf, 13, "%02X%02X%02X%02X%02X%02X", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
        return buf;
}

/* Drop one trailing "\n" or "\r\n". */
static size_t chomp(const char *s, size_t len)
{
        if (len > 0 && s[len - 1] == '\n')
                len--;
        if (len > 0 && s[len - 1] == '\r')
                len--;
        return len;
}

int imds_aws_token_parse(const char *body, size_t len, char *ret, size_t ret_size)
{
        if (!body || len > IMDS_MAX_TEXT)
                return -E2BIG;
        len = chomp(body, len);
        if (len == 0)
                return -EBADMSG;
        if (len >= IMDS_TOKEN_MAX || len >= ret_size)
                return -E2BIG;
        for (size_t i = 0; i < len; i++)
                if (body[i] <= 0x20 || body[i] >= 0x7f)
                        return -EBADMSG;
        memcpy(ret, body, len);
        ret[len] = '\0';
        return 0;
}

int imds_aws_ipv4s_parse(const char *body, size_t len, uint32_t *ret_first, char *err, size_t err_size)
{
        uint32_t first = 0;
        size_t n = 0;
        char q[48];

        if (!body || len > IMDS_MAX_TEXT) {
                errbuf_printf(err, err_size, "local-ipv4s: reply larger than %d bytes", IMDS_MAX_TEXT);
                return -E2BIG;
        }
        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(body + pos, '\n', len - pos);
                size_t end = nl ? (size_t)(nl - body) : len, l = end - pos;
                uint32_t a;
                if (l > 0 && body[pos + l - 1] == '\r')
                        l--;
                if (l > 0) {
                        if (ipv4_parse(body + pos, l, &a) < 0) {
                                errbuf_printf(err, err_size, "local-ipv4s: line %zu is not an IPv4 address: \"%s\"",
                                        n + 1, quote(body + pos, l, q, sizeof(q)));
                                return -EBADMSG;
                        }
                        if (n == 0)
                                first = a;
                        if (++n > IMDS_MAX_LINES) {
                                errbuf_printf(err, err_size, "local-ipv4s: more than %d addresses", IMDS_MAX_LINES);
                                return -E2BIG;
                        }
                }
                pos = end + 1;
        }
        if (n == 0) {
                errbuf_printf(err, err_size, "local-ipv4s: the interface has no private IPv4 address");
                return -ENODATA;
        }
        *ret_first = first;
        return 0;
}

int imds_aws_subnet_parse(const char *body, size_t len, ipv4_cidr *ret, char *err, size_t err_size)
{
        ipv4_cidr c;
        char q[48];

        if (!body || len > IMDS_MAX_TEXT) {
                errbuf_printf(err, err_size, "subnet-ipv4-cidr-block: reply larger than %d bytes", IMDS_MAX_TEXT);
                return -E2BIG;
        }
        len = chomp(body, len);
        if (ipv4_cidr_parse(body, len, &c) < 0) {
                errbuf_printf(err, err_size, "subnet-ipv4-cidr-block: not a CIDR block: \"%s\"", quote(body, len, q, sizeof(q)));
                return -EBADMSG;
        }
        if (c.prefix_len < NIC_ADDR_META_PREFIX_MIN || c.prefix_len > NIC_ADDR_META_PREFIX_MAX ||
            ipv4_network(c) != c.addr) {
                errbuf_printf(err, err_size, "subnet-ipv4-cidr-block: \"%s\" is not a usable subnet (prefix /%d../%d, no host bits)",
                        quote(body, len, q, sizeof(q)), NIC_ADDR_META_PREFIX_MIN, NIC_ADDR_META_PREFIX_MAX);
                return -EBADMSG;
        }
        *ret = c;
        return 0;
}

int imds_addr_make(uint32_t ipv4, ipv4_cidr subnet, imds_addr *ret, char *err, size_t err_size)
{
        char a[IPV4_STR_MAX], s[IPV4_CIDR_STR_MAX], why[IMDS_ERR_LEN];
        uint32_t gw;
        ipv4_cidr net = {.addr = ipv4_network(subnet), .prefix_len = subnet.prefix_len};

        if (ipv4_gateway_of(subnet, &gw) < 0 || ipv4_check_host(ipv4, subnet) < 0 || ipv4 == gw) {
                errbuf_printf(err, err_size, "address %s is not a usable host address of its subnet %s",
                        ipv4_format(ipv4, a), ipv4_cidr_format(net, s));
                return -EDOM;
        }
        /* the rule of static entries, and what only metadata must also be */
        if (nic_addr_check_metadata((ipv4_cidr){.addr = ipv4, .prefix_len = subnet.prefix_len}, why, sizeof(why)) < 0) {
                errbuf_printf(err, err_size, "address %s of subnet %s: %s", ipv4_format(ipv4, a), ipv4_cidr_format(net, s), why);
                return -EDOM;
        }
        *ret = (imds_addr){.ipv4 = ipv4, .prefix_len = subnet.prefix_len, .gateway = gw};
        return 0;
}

static int azure_mac_parse(const char *s, uint8_t ret[6])
{
        uint8_t m[6];
        if (strlen(s) != 12)
                return -EINVAL;
        for (int i = 0; i < 6; i++) {
                int h = parse_hex_digit(s[2 * i]), l = parse_hex_digit(s[2 * i + 1]);
                if (h < 0 || l < 0)
                        return -EINVAL;
                m[i] = (uint8_t)(h << 4 | l);
        }
        memcpy(ret, m, 6);
        return 0;
}

/* A JSON string field (Azure writes every primitive as a string). */
static const char *str_field(json_t *obj, const char *key)
{
        json_t *v = json_object_get(obj, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

static int azure_interface(json_t *itf, size_t idx, imds_addr *ret, char *err, size_t err_size)
{
        json_t *v4 = json_object_get(itf, "ipv4"), *ips, *subnets, *sn;
        const char *ip = NULL, *addr, *prefix;
        uint32_t a, base;
        ipv4_cidr subnet;
        char q[48];

        if (!json_is_object(v4)) {
                errbuf_printf(err, err_size, "interface[%zu]: no \"ipv4\" object", idx);
                return -ENODATA;
        }
        ips = json_object_get(v4, "ipAddress");
        subnets = json_object_get(v4, "subnet");
        if ((ips && !json_is_array(ips)) || (subnets && !json_is_array(subnets))) {
                errbuf_printf(err, err_size, "interface[%zu].ipv4: \"ipAddress\" and \"subnet\" must be arrays", idx);
                return -EBADMSG;
        }
        for (size_t i = 0; ips && i < json_array_size(ips) && i < IMDS_MAX_LINES; i++) {
                json_t *e = json_array_get(ips, i);
                const char *p = json_is_object(e) ? str_field(e, "privateIpAddress") : NULL;
                if (p && *p) {
                        ip = p;
                        break;
                }
        }
        if (!ip) {
                errbuf_printf(err, err_size, "interface[%zu]: no private IPv4 address", idx);
                return -ENODATA;
        }
        if (ipv4_parse(ip, strlen(ip), &a) < 0) {
                errbuf_printf(err, err_size, "interface[%zu].ipv4.ipAddress.privateIpAddress: not an IPv4 address: \"%s\"",
                        idx, quote(ip, strlen(ip), q, sizeof(q)));
                return -EBADMSG;
        }
        sn = subnets ? json_array_get(subnets, 0) : NULL;
        if (!json_is_object(sn)) {
                errbuf_printf(err, err_size, "interface[%zu]: no ipv4.subnet", idx);
                return -ENODATA;
        }
        addr = str_field(sn, "address");
        prefix = str_field(sn, "prefix");
        json_t *pj = json_object_get(sn, "prefix");
        char pbuf[8];
        if (!prefix && json_is_integer(pj) && json_integer_value(pj) >= 0 && json_integer_value(pj) <= 32) {
                snprintf(pbuf, sizeof(pbuf), "%lld", (long long)json_integer_value(pj));
                prefix = pbuf;
        }
        if (!addr || !prefix || ipv4_parse(addr, strlen(addr), &base) < 0) {
                errbuf_printf(err, err_size, "interface[%zu].ipv4.subnet[0]: needs \"address\" (IPv4) and \"prefix\"", idx);
                return -EBADMSG;
        }
        char cidr[40];
        snprintf(cidr, sizeof(cidr), "%.15s/%.3s", addr, prefix);
        if (strlen(prefix) > 2 || ipv4_cidr_parse(cidr, strlen(cidr), &subnet) < 0 ||
            subnet.prefix_len < NIC_ADDR_META_PREFIX_MIN || subnet.prefix_len > NIC_ADDR_META_PREFIX_MAX ||
            ipv4_network(subnet) != subnet.addr) {
                errbuf_printf(err, err_size, "interface[%zu].ipv4.subnet[0]: \"%s\" / \"%s\" is not a usable subnet", idx,
                        quote(addr, strlen(addr), q, sizeof(q)), quote(prefix, strlen(prefix), pbuf, sizeof(pbuf)));
                return -EBADMSG;
        }
        return imds_addr_make(a, subnet, ret, err, err_size);
}

int imds_azure_parse(const char *body, size_t len, const uint8_t mac[6], imds_addr *ret,
                     char *err, size_t err_size)
{
        json_error_t jerr;
        json_t *itfs;
        char want[13];
        size_t n;

        if (!body || len > IMDS_MAX_JSON) {
                errbuf_printf(err, err_size, "network document larger than %d bytes", IMDS_MAX_JSON);
                return -E2BIG;
        }
        json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                errbuf_printf(err, err_size, "not JSON (line %d: %s)", jerr.line, jerr.text);
                return -EBADMSG;
        }
        itfs = json_is_object(root) ? json_object_get(root, "interface") : NULL;
        if (!json_is_array(itfs)) {
                json_decref(root);
                errbuf_printf(err, err_size, "no \"interface\" array");
                return -EBADMSG;
        }
        n = json_array_size(itfs);
        if (n > IMDS_MAX_INTERFACES) {
                json_decref(root);
                errbuf_printf(err, err_size, "more than %d interfaces", IMDS_MAX_INTERFACES);
                return -E2BIG;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *itf = json_array_get(itfs, i);
                const char *m = json_is_object(itf) ? str_field(itf, "macAddress") : NULL;
                uint8_t got[6];
                char q[48];
                if (!m || azure_mac_parse(m, got) < 0) {
                        errbuf_printf(err, err_size, "interface[%zu].macAddress: expected 12 hex digits, got \"%s\"", i,
                                m ? quote(m, strlen(m), q, sizeof(q)) : "(none)");
                        json_decref(root);
                        return -EBADMSG;
                }
                if (memcmp(got, mac, 6) != 0)
                        continue;
                int k = azure_interface(itf, i, ret, err, err_size);
                json_decref(root);
                return k;
        }
        json_decref(root);
        errbuf_printf(err, err_size, "no interface with macAddress %s among %zu", imds_azure_mac(mac, want), n);
        return -ENOENT;
}
