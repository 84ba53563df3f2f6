/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing of the bypass driver's environment contract. Pure: no I/O, no globals, never
 * logs; every value is length-limited and checked, and every problem names its variable. */
#include "spa-env.h"

#include "alloc-env.h"
#include "eal_args.h"
#include "envp.h"
#include "ipv4.h"
#include "parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct problems {
        char *buf;
        size_t size, len;
        unsigned n;
};

static void problem(struct problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct problems *p, const char *fmt, ...)
{
        va_list ap;

        p->n++;
        if (!p->buf || p->size == 0 || p->len + 1 >= p->size)
                return;
        if (p->len) {
                int k = snprintf(p->buf + p->len, p->size - p->len, "; ");
                p->len = k < 0 ? p->len : p->len + (size_t)k >= p->size ? p->size - 1 : p->len + (size_t)k;
        }
        va_start(ap, fmt);
        int k = vsnprintf(p->buf + p->len, p->size - p->len, fmt, ap);
        va_end(ap);
        if (k > 0)
                p->len = p->len + (size_t)k >= p->size ? p->size - 1 : p->len + (size_t)k;
}

/* Printable copy for messages: anything outside printable ASCII becomes '?', long
 * values are cut with "...". */
static void quote(const char *s, char *buf, size_t size)
{
        size_t n = 0, len = strnlen(s, SPA_VALUE_MAX + 1);

        for (size_t i = 0; i < len && n + 1 < size; i++) {
                if (len > 64 && i == 61 && size > 4) {
                        snprintf(buf + n, size - n, "...");
                        n = strlen(buf);
                        break;
                }
                unsigned char c = (unsigned char)s[i];
                buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
        }
        buf[n] = '\0';
}

/* The contract's addresses in network byte order, parsed by common/ipv4 (the one strict
 * dotted-quad parser): a prefix of 1..32 here, since an interface needs one. */
int spa_parse_ipv4_prefix(const char *s, uint32_t *ret_ip, uint8_t *ret_len)
{
        ipv4_cidr c;

        if (!s || ipv4_cidr_parse(s, strlen(s), &c) < 0 || c.prefix_len < 1)
                return -EINVAL;
        *ret_ip = htonl(c.addr);
        if (ret_len)
                *ret_len = c.prefix_len;
        return 0;
}

int spa_parse_ipv4(const char *s, uint32_t *ret_ip)
{
        uint32_t a;

        if (!s || ipv4_parse(s, strlen(s), &a) < 0)
                return -EINVAL;
        *ret_ip = htonl(a);
        return 0;
}

bool spa_ipv4_host_ok(uint32_t ip, uint8_t prefix_len)
{
        uint32_t h = ntohl(ip);

        if (prefix_len < 1 || prefix_len > 32 || !ipv4_is_unicast(h))
                return false;
        return ipv4_check_host(h, (ipv4_cidr){ .addr = h, .prefix_len = prefix_len }) == 0;
}

static uint32_t mask_of(uint8_t len)
{
        return htonl(ipv4_netmask(len));
}

static bool device_ok(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n >= SPA_DEVICE_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == ':' || c == '-'))
                        return false;
        }
        return true;
}

/* A bounded variable: NULL when unset; too long is a problem and NULL. */
static const char *bounded(const char *const *envp, struct problems *pr, const char *name, size_t max)
{
        const char *v = envp_get(envp, name);
        if (v && strnlen(v, max + 1) > max) {
                problem(pr, "%s is longer than %zu characters", name, max);
                return NULL;
        }
        return v;
}

static void parse_role(const char *const *envp, struct problems *pr, const char *role, struct spa_role *r, bool *ok)
{
        char name[ALLOC_ENV_NAME_MAX], ipv4_name[ALLOC_ENV_NAME_MAX], q[80];
        const char *v;

        bypass_env_role(name, sizeof(name), role, BYPASS_DEVICE);
        v = bounded(envp, pr, name, SPA_VALUE_MAX);
        if (!v) {
                if (!envp_get(envp, name))
                        problem(pr, "%s is not set (a DPDK device name: a PCI address or a vdev name such as net_af_packet0)",
                                name);
                *ok = false;
        } else if (!device_ok(v)) {
                quote(v, q, sizeof(q));
                problem(pr, "%s=\"%s\" is not a DPDK device name ([A-Za-z0-9_.:-], at most %d characters)", name, q,
                        SPA_DEVICE_MAX - 1);
                *ok = false;
        } else
                snprintf(r->device, sizeof(r->device), "%s", v);

        bypass_env_role(ipv4_name, sizeof(ipv4_name), role, BYPASS_IPV4);
        v = bounded(envp, pr, ipv4_name, SPA_VALUE_MAX);
        if (!v) {
                if (!envp_get(envp, ipv4_name))
                        problem(pr, "%s is not set (this NIC's address as a.b.c.d/len)", ipv4_name);
                *ok = false;
        } else if (spa_parse_ipv4_prefix(v, &r->ipv4, &r->prefix_len) < 0) {
                quote(v, q, sizeof(q));
                problem(pr, "%s=\"%s\" is not an IPv4 address with a prefix length (a.b.c.d/len, len 1..32)", ipv4_name, q);
                *ok = false;
        } else if (!spa_ipv4_host_ok(r->ipv4, r->prefix_len)) {
                quote(v, q, sizeof(q));
                problem(pr, "%s=\"%s\" cannot be a host's address (zero, loopback, multicast, broadcast or the subnet's own address)",
                        ipv4_name, q);
                *ok = false;
        }

        bypass_env_role(name, sizeof(name), role, BYPASS_GATEWAY);
        v = bounded(envp, pr, name, SPA_VALUE_MAX);
        r->gateway = 0;
        if (v && *v) {
                uint32_t gw;
                quote(v, q, sizeof(q));
                if (spa_parse_ipv4(v, &gw) < 0) {
                        problem(pr, "%s=\"%s\" is not an IPv4 address (a.b.c.d)", name, q);
                        *ok = false;
                } else if (r->prefix_len && ((gw & mask_of(r->prefix_len)) != (r->ipv4 & mask_of(r->prefix_len)) ||
                                             gw == r->ipv4 || !spa_ipv4_host_ok(gw, r->prefix_len))) {
                        problem(pr, "%s=\"%s\" is not another host of the subnet of %s", name, q, ipv4_name);
                        *ok = false;
                } else
                        r->gateway = gw;
        }
}

static void parse_u32(const char *const *envp, struct problems *pr, const char *name, uint32_t min, uint32_t max,
                      uint32_t def, uint32_t *ret, bool *ok)
{
        const char *v = bounded(envp, pr, name, 32);
        uint64_t n;

        *ret = def;
        if (!v)
                return;
        if (parse_u64(v, max, &n) < 0 || n < min) {
                char q[80];
                quote(v, q, sizeof(q));
                problem(pr, "%s=\"%s\" is not a number in %u..%u", name, q, min, max);
                *ok = false;
                return;
        }
        *ret = (uint32_t)n;
}

int spa_env_parse(const char *const *envp, struct spa_config *ret, char *err, size_t errlen)
{
        struct problems pr = { .buf = err, .size = errlen };
        struct spa_config c;
        bool ok = true;
        const char *v;
        char q[80];

        if (err && errlen)
                err[0] = '\0';
        memset(&c, 0, sizeof(c));

        v = bounded(envp, &pr, BYPASS_ENV_EAL_ARGS, SPA_EAL_ARGS_MAX);
        if (!v) {
                if (!envp_get(envp, BYPASS_ENV_EAL_ARGS))
                        problem(&pr, BYPASS_ENV_EAL_ARGS " is not set (the DPDK EAL arguments: lcores, memory, devices)");
                ok = false;
        } else {
                struct tr_eal_args probe; /* ~4.7 KB on the stack: only its result matters */
                int r = tr_eal_args_split(v, strlen(v), "aeronmd", &probe);
                if (r == -E2BIG) {
                        problem(&pr, BYPASS_ENV_EAL_ARGS " has more than %d words", TR_EAL_ARGS_MAX);
                        ok = false;
                } else if (r < 0) {
                        quote(v, q, sizeof(q));
                        problem(&pr, BYPASS_ENV_EAL_ARGS "=\"%s\" holds a control or non-ASCII character", q);
                        ok = false;
                } else if (probe.argc < 2) {
                        problem(&pr, BYPASS_ENV_EAL_ARGS " is empty");
                        ok = false;
                } else
                        snprintf(c.eal_args, sizeof(c.eal_args), "%s", v);
        }
        parse_role(envp, &pr, BYPASS_ROLE_SENDER, &c.sender, &ok);
        parse_role(envp, &pr, BYPASS_ROLE_RECEIVER, &c.receiver, &ok);
        if (c.sender.device[0] && c.receiver.device[0]) {
                c.shared = strcmp(c.sender.device, c.receiver.device) == 0;
                if (c.shared && c.sender.ipv4 && c.receiver.ipv4 &&
                    (c.sender.ipv4 != c.receiver.ipv4 || c.sender.prefix_len != c.receiver.prefix_len ||
                     c.sender.gateway != c.receiver.gateway)) {
                        problem(&pr,
                                BYPASS_ENV_SENDER_DEVICE " and " BYPASS_ENV_RECEIVER_DEVICE " name one port (%s) but " BYPASS_ENV_SENDER_IPV4
                                "/_" BYPASS_GATEWAY " and " BYPASS_ENV_RECEIVER_IPV4 "/_" BYPASS_GATEWAY " differ",
                                c.sender.device);
                        ok = false;
                }
                if (!c.shared && c.sender.ipv4 && c.sender.ipv4 == c.receiver.ipv4) {
                        problem(&pr, BYPASS_ENV_SENDER_IPV4 " and " BYPASS_ENV_RECEIVER_IPV4 " are the same address on two ports (%s, %s)",
                                c.sender.device, c.receiver.device);
                        ok = false;
                }
        }
        parse_u32(envp, &pr, BYPASS_ENV_LINK_WAIT_MS, 0, SPA_MAX_LINK_WAIT_MS, SPA_DEFAULT_LINK_WAIT_MS,
                  &c.link_wait_ms, &ok);
        parse_u32(envp, &pr, BYPASS_ENV_HANDOFF_SLOTS, SPA_MIN_HANDOFF_SLOTS, SPA_MAX_HANDOFF_SLOTS,
                  SPA_DEFAULT_HANDOFF_SLOTS, &c.handoff_slots, &ok);
        if ((c.handoff_slots & (c.handoff_slots - 1)) != 0) {
                problem(&pr, BYPASS_ENV_HANDOFF_SLOTS "=%u is not a power of two", c.handoff_slots);
                ok = false;
        }
        parse_u32(envp, &pr, BYPASS_ENV_PROBE_PORT, 0, 65535, SPA_DEFAULT_PROBE_PORT, &c.probe_port, &ok);
        c.host_local = true;
        v = bounded(envp, &pr, BYPASS_ENV_HOST_LOCAL, 32);
        if (v) {
                if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
                        c.host_local = true;
                else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
                        c.host_local = false;
                else {
                        quote(v, q, sizeof(q));
                        problem(&pr, BYPASS_ENV_HOST_LOCAL "=\"%s\" is not 1, 0, true or false", q);
                        ok = false;
                }
        }
        if (!ok || pr.n)
                return -EINVAL;
        *ret = c;
        return 0;
}
