/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: builds rtnetlink dump answers as the kernel sends them (links, addresses,
 * nexthops, rules, routes; NLMSG_DONE / NLMSG_ERROR) for the parser tests, the fuzz
 * corpus and the emulated node's recorded dump (agent/node/netlink.h). Header only, test
 * code: aborts on allocation failure or a bad literal. */
#ifndef SPIN_TEST_NLBUILD_H
#define SPIN_TEST_NLBUILD_H

#include "nlparse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct nlb {
        uint8_t *buf;
        size_t len, cap;
        size_t msg;  /* start of the message being built */
        size_t nest; /* start of the open nested attribute, 0 none */
} nlb;

static inline void nlb_put(nlb *b, const void *data, size_t len)
{
        size_t need = b->len + NLMSG_ALIGN(len);
        if (need > b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                while (cap < need)
                        cap *= 2;
                b->buf = realloc(b->buf, cap);
                if (!b->buf)
                        abort();
                b->cap = cap;
        }
        if (len)
                memcpy(b->buf + b->len, data, len);
        memset(b->buf + b->len + len, 0, NLMSG_ALIGN(len) - len);
        b->len = need;
}

static inline void nlb_free(nlb *b)
{
        free(b->buf);
        memset(b, 0, sizeof(*b));
}

/* Start a message: header then the family header (hdr, hlen bytes). */
static inline void nlb_msg(nlb *b, uint16_t type, uint16_t flags, uint32_t seq, const void *hdr, size_t hlen)
{
        struct nlmsghdr nh = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq};
        b->msg = b->len;
        nlb_put(b, &nh, sizeof(nh));
        nlb_put(b, hdr, hlen);
}

static inline void nlb_end(nlb *b)
{
        uint32_t n = (uint32_t)(b->len - b->msg);
        memcpy(b->buf + b->msg, &n, sizeof(n));
}

static inline void nlb_attr(nlb *b, uint16_t type, const void *data, size_t len)
{
        struct rtattr ra = {.rta_len = (unsigned short)(sizeof(ra) + len), .rta_type = type};
        size_t at = b->len;
        nlb_put(b, &ra, sizeof(ra));
        /* the data follows the 4-byte header directly */
        b->len = at + sizeof(ra);
        nlb_put(b, data, len);
}

static inline void nlb_u32(nlb *b, uint16_t type, uint32_t v) { nlb_attr(b, type, &v, sizeof(v)); }
static inline void nlb_str(nlb *b, uint16_t type, const char *s) { nlb_attr(b, type, s, strlen(s) + 1); }

static inline void nlb_nest_begin(nlb *b, uint16_t type)
{
        struct rtattr ra = {.rta_len = 0, .rta_type = type};
        b->nest = b->len;
        nlb_put(b, &ra, sizeof(ra));
}

static inline void nlb_nest_end(nlb *b)
{
        unsigned short n = (unsigned short)(b->len - b->nest);
        memcpy(b->buf + b->nest, &n, sizeof(n));
        b->nest = 0;
}

static inline void nlb_done(nlb *b, uint32_t seq)
{
        int zero = 0;
        nlb_msg(b, NLMSG_DONE, NLM_F_MULTI, seq, &zero, sizeof(zero));
        nlb_end(b);
}

static inline void nlb_error(nlb *b, uint32_t seq, int err)
{
        struct nlmsgerr e = {.error = err};
        nlb_msg(b, NLMSG_ERROR, 0, seq, &e, sizeof(e));
        nlb_end(b);
}

/* "10.0.0.0/24", "default", "fe80::/64" -> family, bytes, prefix length. */
static inline int nlb_prefix(const char *s, uint8_t *addr, unsigned *plen)
{
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", s);
        memset(addr, 0, 16);
        char *slash = strchr(buf, '/');
        if (slash)
                *slash = '\0';
        int fam = strchr(buf, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(fam, buf, addr) != 1)
                abort();
        *plen = slash ? (unsigned)atoi(slash + 1) : (fam == AF_INET ? 32 : 128);
        return fam;
}

/* The facts of one network namespace, as the six dumps (nlparse_dump order, seq d + 1). */
typedef struct nlfacts {
        nlb d[_NLPARSE_DUMP_MAX];
        int nexthop_error; /* answer the nexthop dump with this error instead (0: a dump) */
} nlfacts;

static inline void nlf_free(nlfacts *f)
{
        for (int i = 0; i < _NLPARSE_DUMP_MAX; i++)
                nlb_free(&f->d[i]);
}

/* kind "" = a plain device; lower = IFLA_LINK (0 none). */
static inline void nlf_link(nlfacts *f, int ifindex, const char *name, uint32_t master, uint32_t lower,
                            const char *kind)
{
        nlb *b = &f->d[NLPARSE_DUMP_LINK];
        struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = 0x1043};
        nlb_msg(b, RTM_NEWLINK, NLM_F_MULTI, NLPARSE_DUMP_LINK + 1, &ifi, sizeof(ifi));
        nlb_str(b, IFLA_IFNAME, name);
        nlb_u32(b, IFLA_MTU, 1500);
        if (master)
                nlb_u32(b, IFLA_MASTER, master);
        if (lower)
                nlb_u32(b, IFLA_LINK, lower);
        if (kind && *kind) {
                nlb_nest_begin(b, IFLA_LINKINFO);
                nlb_str(b, IFLA_INFO_KIND, kind);
                nlb_nest_end(b);
        }
        nlb_end(b);
}

static inline void nlf_addr(nlfacts *f, int ifindex, const char *cidr)
{
        nlb *b = &f->d[NLPARSE_DUMP_ADDR];
        uint8_t a[16];
        unsigned plen;
        int fam = nlb_prefix(cidr, a, &plen);
        bool ll = fam == AF_INET6 && a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
        struct ifaddrmsg ifa = {.ifa_family = (uint8_t)fam, .ifa_prefixlen = (uint8_t)plen,
                                .ifa_scope = ll ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE, .ifa_index = (uint32_t)ifindex};
        size_t alen = fam == AF_INET ? 4 : 16;
        nlb_msg(b, RTM_NEWADDR, NLM_F_MULTI, NLPARSE_DUMP_ADDR + 1, &ifa, sizeof(ifa));
        nlb_attr(b, IFA_ADDRESS, a, alen);
        if (fam == AF_INET)
                nlb_attr(b, IFA_LOCAL, a, alen);
        nlb_end(b);
}

/* A route: dst "default" or a prefix; gw NULL or an address; oif 0 = none; type
 * RTN_UNICAST unless given; nh_id > 0 uses a nexthop object instead of oif. */
static inline void nlf_route_full(nlfacts *f, const char *dst, const char *gw, int oif, uint32_t table,
                                  uint32_t metric, uint8_t type, uint32_t nh_id, const int *hops, size_t n_hops)
{
        uint8_t a[16], g[16];
        unsigned plen = 0, gl;
        int fam;
        if (strncmp(dst, "default", 7) == 0) {
                fam = strcmp(dst, "default6") == 0 ? AF_INET6 : AF_INET;
                memset(a, 0, sizeof(a));
        } else
                fam = nlb_prefix(dst, a, &plen);
        nlb *b = &f->d[fam == AF_INET ? NLPARSE_DUMP_ROUTE4 : NLPARSE_DUMP_ROUTE6];
        struct rtmsg rtm = {.rtm_family = (uint8_t)fam, .rtm_dst_len = (uint8_t)plen,
                            .rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_COMPAT, .rtm_protocol = RTPROT_BOOT,
                            .rtm_scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK, .rtm_type = type ? type : RTN_UNICAST};
        size_t alen = fam == AF_INET ? 4 : 16;
        nlb_msg(b, RTM_NEWROUTE, NLM_F_MULTI, (uint32_t)(fam == AF_INET ? NLPARSE_DUMP_ROUTE4 : NLPARSE_DUMP_ROUTE6) + 1,
                &rtm, sizeof(rtm));
        nlb_u32(b, RTA_TABLE, table);
        if (plen)
                nlb_attr(b, RTA_DST, a, alen);
        if (metric)
                nlb_u32(b, RTA_PRIORITY, metric);
        if (gw) {
                nlb_prefix(gw, g, &gl);
                nlb_attr(b, RTA_GATEWAY, g, alen);
        }
        if (oif)
                nlb_u32(b, RTA_OIF, (uint32_t)oif);
        if (nh_id)
                nlb_u32(b, RTA_NH_ID, nh_id);
        if (n_hops) {
                nlb_nest_begin(b, RTA_MULTIPATH);
                for (size_t i = 0; i < n_hops; i++) {
                        struct rtnexthop h = {.rtnh_len = sizeof(h), .rtnh_ifindex = hops[i]};
                        nlb_put(b, &h, sizeof(h));
                }
                nlb_nest_end(b);
        }
        nlb_end(b);
}

static inline void nlf_route(nlfacts *f, const char *dst, const char *gw, int oif, uint32_t table, uint32_t metric)
{
        nlf_route_full(f, dst, gw, oif, table, metric, RTN_UNICAST, 0, NULL, 0);
}

/* A policy rule; iif/oif NULL for none. */
static inline void nlf_rule(nlfacts *f, uint32_t pref, const char *iif, const char *oif, uint32_t table)
{
        nlb *b = &f->d[NLPARSE_DUMP_RULE];
        struct fib_rule_hdr frh = {.family = AF_INET, .table = table < 256 ? (uint8_t)table : RT_TABLE_COMPAT,
                                   .action = FR_ACT_TO_TBL};
        nlb_msg(b, RTM_NEWRULE, NLM_F_MULTI, NLPARSE_DUMP_RULE + 1, &frh, sizeof(frh));
        nlb_u32(b, FRA_TABLE, table);
        nlb_u32(b, FRA_PRIORITY, pref);
        if (iif)
                nlb_str(b, FRA_IIFNAME, iif);
        if (oif)
                nlb_str(b, FRA_OIFNAME, oif);
        nlb_end(b);
}

/* A nexthop object: oif, or a group of ids (n_group > 0). */
static inline void nlf_nexthop(nlfacts *f, uint32_t id, int oif, const uint32_t *group, size_t n_group)
{
        nlb *b = &f->d[NLPARSE_DUMP_NEXTHOP];
        struct nhmsg nhm = {.nh_family = AF_INET};
        nlb_msg(b, RTM_NEWNEXTHOP, NLM_F_MULTI, NLPARSE_DUMP_NEXTHOP + 1, &nhm, sizeof(nhm));
        nlb_u32(b, NHA_ID, id);
        if (n_group) {
                struct nexthop_grp g[16];
                memset(g, 0, sizeof(g));
                for (size_t i = 0; i < n_group && i < 16; i++)
                        g[i].id = group[i];
                nlb_attr(b, NHA_GROUP, g, sizeof(g[0]) * (n_group < 16 ? n_group : 16));
        } else
                nlb_u32(b, NHA_OIF, (uint32_t)oif);
        nlb_end(b);
}

/* The whole recorded answer: every dump followed by its NLMSG_DONE. Caller frees. */
static inline uint8_t *nlf_bytes(const nlfacts *f, size_t *ret_len)
{
        nlb out = {0};
        for (int d = 0; d < _NLPARSE_DUMP_MAX; d++) {
                if (d == NLPARSE_DUMP_NEXTHOP && f->nexthop_error) {
                        nlb_error(&out, (uint32_t)d + 1, f->nexthop_error);
                        continue;
                }
                if (f->d[d].len) {
                        size_t at = out.len;
                        nlb_put(&out, f->d[d].buf, f->d[d].len);
                        out.len = at + f->d[d].len;
                }
                nlb_done(&out, (uint32_t)d + 1);
        }
        *ret_len = out.len;
        return out.buf;
}

static inline int nlf_write(const nlfacts *f, const char *path)
{
        size_t n;
        uint8_t *b = nlf_bytes(f, &n);
        FILE *fp = fopen(path, "wb");
        int r = fp && fwrite(b, 1, n, fp) == n ? 0 : -1;
        if (fp && fclose(fp) != 0)
                r = -1;
        free(b);
        return r;
}

/* Feed a whole recorded answer to a new table the way netlink.c reads a file; returns
 * nlparse_finish()'s result (or the first feed error), *ret the table (caller frees). */
static inline int nlf_parse(const uint8_t *buf, size_t len, nlparse_usage **ret)
{
        nlparse_usage *u = NULL;
        size_t off = 0;
        int r = nlparse_usage_new(&u);
        if (r < 0)
                abort();
        *ret = u;
        for (int d = 0; d < _NLPARSE_DUMP_MAX; d++) {
                size_t used = 0;
                r = nlparse_feed(u, (nlparse_dump)d, (uint32_t)d + 1, buf + off, len - off, &used);
                if (r < 0 && d == NLPARSE_DUMP_NEXTHOP && used == 0 && (r == -EOPNOTSUPP || r == -EINVAL)) {
                        struct nlmsghdr nh;
                        memcpy(&nh, buf + off, sizeof(nh));
                        off += NLMSG_ALIGN(nh.nlmsg_len);
                        nlparse_refused(u, (nlparse_dump)d);
                        continue;
                }
                if (r < 0)
                        return r;
                off += used;
                if (r == 0)
                        return -ENODATA;
        }
        if (off != len)
                return -EBADMSG;
        return nlparse_finish(u, NULL, 0);
}

#endif
