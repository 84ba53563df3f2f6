/* SPDX-License-Identifier: Apache-2.0 */
/* rtnetlink dump answers -> the link usage table. Pure: no I/O, no globals, never logs;
 * every read checks its length first and every loop is bounded by the buffer. */
#include "nlparse.h"

#include "array.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define HDR NLMSG_HDRLEN /* 16 */

const char *nlparse_dump_name(nlparse_dump d)
{
        static const char *const names[] = {"links", "addresses", "nexthops", "rules", "IPv4 routes", "IPv6 routes"};
        return (unsigned)d < _NLPARSE_DUMP_MAX ? names[d] : "?";
}

void nlparse_dump_request(nlparse_dump d, uint16_t *ret_type, uint8_t *ret_family)
{
        static const uint16_t types[] = {RTM_GETLINK, RTM_GETADDR, RTM_GETNEXTHOP, RTM_GETRULE, RTM_GETROUTE, RTM_GETROUTE};
        static const uint8_t fams[] = {AF_UNSPEC, AF_UNSPEC, AF_UNSPEC, AF_UNSPEC, AF_INET, AF_INET6};
        *ret_type = (unsigned)d < _NLPARSE_DUMP_MAX ? types[d] : 0;
        *ret_family = (unsigned)d < _NLPARSE_DUMP_MAX ? fams[d] : 0;
}

static uint16_t answer_type(nlparse_dump d)
{
        static const uint16_t types[] = {RTM_NEWLINK, RTM_NEWADDR, RTM_NEWNEXTHOP, RTM_NEWRULE, RTM_NEWROUTE, RTM_NEWROUTE};
        return types[d];
}

int nlparse_usage_new(nlparse_usage **ret)
{
        nlparse_usage *u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        *ret = u;
        return 0;
}

void nlparse_usage_free(nlparse_usage *u)
{
        if (!u)
                return;
        free(u->links);
        free(u->hash);
        free(u->nh);
        free(u->members);
        free(u);
}

/* ---- the table ---- */

static size_t hash_slot(uint32_t ifindex, size_t size)
{
        return (size_t)((ifindex * 2654435761u) & (uint32_t)(size - 1));
}

static int hash_rebuild(nlparse_usage *u, size_t size)
{
        uint32_t *h = calloc(size, sizeof(*h));
        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < u->n_links; i++) {
                if (!u->links[i].ifindex)
                        continue;
                size_t s = hash_slot(u->links[i].ifindex, size);
                while (h[s])
                        s = (s + 1) & (size - 1);
                h[s] = (uint32_t)i + 1;
        }
        free(u->hash);
        u->hash = h;
        u->hash_size = size;
        return 0;
}

const nlparse_link *nlparse_find_index(const nlparse_usage *u, uint32_t ifindex)
{
        if (!ifindex || !u->hash_size)
                return NULL;
        for (size_t s = hash_slot(ifindex, u->hash_size), k = 0; k < u->hash_size; s = (s + 1) & (u->hash_size - 1), k++) {
                uint32_t v = u->hash[s];
                if (!v)
                        return NULL;
                if (u->links[v - 1].ifindex == ifindex)
                        return &u->links[v - 1];
        }
        return NULL;
}

const nlparse_link *nlparse_find(const nlparse_usage *u, const char *name)
{
        if (!name || !*name)
                return NULL;
        for (size_t i = 0; i < u->n_links; i++)
                if (strcmp(u->links[i].name, name) == 0)
                        return &u->links[i];
        return NULL;
}

/* A new entry (ifindex may be 0 for a name-only one). */
static int link_add(nlparse_usage *u, uint32_t ifindex, const char *name, nlparse_link **ret)
{
        int r;

        if (u->n_links >= NLPARSE_MAX_LINKS)
                return -E2BIG;
        r = ARRAY_GROW(u->links, u->cap_links, u->n_links + 1, 64);
        if (r < 0)
                return r;
        nlparse_link *l = &u->links[u->n_links++];
        memset(l, 0, sizeof(*l));
        l->ifindex = ifindex;
        if (name)
                snprintf(l->name, sizeof(l->name), "%s", name);
        /* keep the hash at most half full */
        if (u->n_links * 2 > u->hash_size) {
                if ((r = hash_rebuild(u, u->hash_size ? u->hash_size * 2 : 128)) < 0) {
                        u->n_links--;
                        return r;
                }
        } else if (ifindex) {
                size_t s = hash_slot(ifindex, u->hash_size);
                while (u->hash[s])
                        s = (s + 1) & (u->hash_size - 1);
                u->hash[s] = (uint32_t)u->n_links;
        }
        *ret = l;
        return 0;
}

static int link_by_index(nlparse_usage *u, uint32_t ifindex, nlparse_link **ret)
{
        const nlparse_link *l = nlparse_find_index(u, ifindex);
        if (l) {
                *ret = (nlparse_link *)l;
                return 0;
        }
        return link_add(u, ifindex, NULL, ret);
}

static int link_by_name(nlparse_usage *u, const char *name, nlparse_link **ret)
{
        const nlparse_link *l = nlparse_find(u, name);
        if (l) {
                *ret = (nlparse_link *)l;
                return 0;
        }
        return link_add(u, 0, name, ret);
}

/* ---- reading messages: the one walker of rtnetlink (nlparse.h) ---- */

int nlparse_msg_next(const void *buf, size_t len, size_t *off, nlparse_msg *ret)
{
        const uint8_t *p = buf;
        struct nlmsghdr nh;

        if (*off > len || len - *off < sizeof(nh))
                return 0;
        memcpy(&nh, p + *off, sizeof(nh));
        /* The kernel's messages are whole multiples of 4 bytes (every header and
         * attribute is padded): anything else is not its answer. */
        if (nh.nlmsg_len < sizeof(nh) || nh.nlmsg_len % NLMSG_ALIGNTO)
                return -EBADMSG;
        if (nh.nlmsg_len > len - *off)
                return 0;
        ret->hdr = nh;
        ret->data = p + *off;
        ret->len = nh.nlmsg_len;
        *off += nh.nlmsg_len;
        return 1;
}

int nlparse_attr_next(const void *buf, size_t end, size_t *off, nlparse_attr *ret)
{
        const uint8_t *p = buf;
        struct rtattr ra;

        if (*off >= end)
                return 0;
        if (end - *off < sizeof(ra))
                return -EBADMSG;
        memcpy(&ra, p + *off, sizeof(ra));
        if (ra.rta_len < sizeof(ra) || ra.rta_len > end - *off)
                return -EBADMSG;
        ret->type = ra.rta_type & NLA_TYPE_MASK;
        ret->data = p + *off + sizeof(ra);
        ret->len = ra.rta_len - sizeof(ra);
        *off += RTA_ALIGN(ra.rta_len);
        return 1;
}

int nlparse_attr_u32(const nlparse_attr *a, uint32_t *ret)
{
        if (a->len < 4)
                return -EBADMSG;
        memcpy(ret, a->data, 4);
        return 0;
}

int nlparse_attr_name(const nlparse_attr *a, char *ret)
{
        size_t n = strnlen((const char *)a->data, a->len);
        if (n == a->len || n == 0 || n >= NLPARSE_NAME_LEN)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                if (a->data[i] < 0x21 || a->data[i] >= 0x7f || a->data[i] == '/')
                        return -EBADMSG;
        memcpy(ret, a->data, n);
        ret[n] = '\0';
        return 0;
}

static void setf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

static void addr_str(int family, const uint8_t *a, char *buf, size_t size)
{
        if (!inet_ntop(family, a, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

static void table_str(uint32_t t, char *buf, size_t size)
{
        if (t == RT_TABLE_MAIN)
                snprintf(buf, size, "main");
        else if (t == RT_TABLE_LOCAL)
                snprintf(buf, size, "local");
        else if (t == RT_TABLE_DEFAULT)
                snprintf(buf, size, "default");
        else
                snprintf(buf, size, "%u", t);
}

static bool v6_linklocal(const uint8_t *a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; }

/* ---- links ---- */

static int parse_link(nlparse_usage *u, const uint8_t *m, size_t len)
{
        struct ifinfomsg ifi;
        size_t off = HDR + NLMSG_ALIGN(sizeof(ifi));
        char name[NLPARSE_NAME_LEN] = "", kind[32] = "";
        uint32_t master = 0, lower = 0;
        bool have_name = false, other_ns = false, have_info = false;
        nlparse_attr a, info = {0};
        int r;

        if (len < off)
                return -EBADMSG;
        memcpy(&ifi, m + HDR, sizeof(ifi));
        if (ifi.ifi_index <= 0)
                return -EBADMSG;
        while ((r = nlparse_attr_next(m, len, &off, &a)) > 0) {
                switch (a.type) {
                case IFLA_IFNAME:
                        if ((r = nlparse_attr_name(&a, name)) < 0)
                                return r;
                        have_name = true;
                        break;
                case IFLA_MASTER:
                        if ((r = nlparse_attr_u32(&a, &master)) < 0)
                                return r;
                        break;
                case IFLA_LINK:
                        if ((r = nlparse_attr_u32(&a, &lower)) < 0)
                                return r;
                        break;
                case IFLA_LINK_NETNSID:
                        other_ns = true;
                        break;
                case IFLA_LINKINFO: {
                        size_t o2 = 0;
                        nlparse_attr b;
                        while ((r = nlparse_attr_next(a.data, a.len, &o2, &b)) > 0) {
                                if (b.type == IFLA_INFO_KIND) {
                                        size_t n = strnlen((const char *)b.data, b.len);
                                        if (n >= sizeof(kind))
                                                n = sizeof(kind) - 1;
                                        memcpy(kind, b.data, n);
                                        kind[n] = '\0';
                                } else if (b.type == IFLA_INFO_DATA) {
                                        info = b;
                                        have_info = true;
                                }
                        }
                        if (r < 0)
                                return r;
                        break;
                }
                default:
                        break;
                }
        }
        if (r < 0)
                return r;
        if (!have_name)
                return -EBADMSG;
        /* A vxlan names its underlay device inside its info data, not in IFLA_LINK. */
        if (have_info && strcmp(kind, "vxlan") == 0) {
                size_t o2 = 0;
                nlparse_attr b;
                while ((r = nlparse_attr_next(info.data, info.len, &o2, &b)) > 0)
                        if (b.type == IFLA_VXLAN_LINK && (r = nlparse_attr_u32(&b, &lower)) < 0)
                                return r;
                if (r < 0)
                        return r;
        }
        nlparse_link *l;
        /* A rule may have named it before (it cannot: rules come after links; but a
         * second message for the same index renames it). */
        if ((r = link_by_index(u, (uint32_t)ifi.ifi_index, &l)) < 0)
                return r;
        memcpy(l->name, name, sizeof(l->name));
        l->master = master == (uint32_t)ifi.ifi_index ? 0 : master;
        /* An upper device of this namespace (vlan, macvlan, ipvlan, a tunnel bound to a
         * device) lives on its IFLA_LINK; a veth's IFLA_LINK is its peer, not a lower. */
        if (lower && lower != (uint32_t)ifi.ifi_index && !other_ns && strcmp(kind, "veth") != 0) {
                nlparse_link *low;
                if ((r = link_by_index(u, lower, &low)) < 0)
                        return r;
                if (!low->lower_of) {
                        low->lower_of = (uint32_t)ifi.ifi_index;
                        memcpy(low->upper, name, sizeof(low->upper));
                }
        }
        return 0;
}

/* ---- addresses ---- */

static int parse_addr(nlparse_usage *u, const uint8_t *m, size_t len)
{
        struct ifaddrmsg ifa;
        size_t off = HDR + NLMSG_ALIGN(sizeof(ifa));
        const uint8_t *address = NULL, *local = NULL;
        nlparse_attr a;
        int r;

        if (len < off)
                return -EBADMSG;
        memcpy(&ifa, m + HDR, sizeof(ifa));
        if (ifa.ifa_index == 0)
                return -EBADMSG;
        size_t alen = ifa.ifa_family == AF_INET ? 4 : ifa.ifa_family == AF_INET6 ? 16 : 0;
        while ((r = nlparse_attr_next(m, len, &off, &a)) > 0) {
                if ((a.type == IFA_ADDRESS || a.type == IFA_LOCAL) && alen) {
                        if (a.len != alen)
                                return -EBADMSG;
                        if (a.type == IFA_ADDRESS)
                                address = a.data;
                        else
                                local = a.data;
                }
        }
        if (r < 0)
                return r;
        if (!alen)
                return 0; /* not an IP address (no other family answers this dump) */
        /* IFA_LOCAL is the interface's own address where the kernel sends both (IFA_ADDRESS
         * is then the peer of a point-to-point link). */
        const uint8_t *ip = local ? local : address;
        if (ifa.ifa_family == AF_INET6 && ip && v6_linklocal(ip))
                return 0;
        nlparse_link *l;
        if ((r = link_by_index(u, ifa.ifa_index, &l)) < 0)
                return r;
        if (l->n_addrs++ == 0) {
                if (ip) {
                        char s[INET6_ADDRSTRLEN];
                        addr_str(ifa.ifa_family, ip, s, sizeof(s));
                        setf(l->addr, sizeof(l->addr), "%s/%u", s, ifa.ifa_prefixlen);
                } else
                        setf(l->addr, sizeof(l->addr), "an %s address without IFA_ADDRESS",
                             ifa.ifa_family == AF_INET ? "IPv4" : "IPv6");
        }
        if (ifa.ifa_family == AF_INET)
                l->has_ipv4 = true;
        return 0;
}

/* ---- nexthop objects ---- */

static int parse_nexthop(nlparse_usage *u, const uint8_t *m, size_t len)
{
        struct nhmsg nhm;
        size_t off = HDR + NLMSG_ALIGN(sizeof(nhm));
        uint32_t id = 0, oif = 0;
        const uint8_t *group = NULL;
        size_t glen = 0;
        nlparse_attr a;
        int r;

        if (len < off)
                return -EBADMSG;
        while ((r = nlparse_attr_next(m, len, &off, &a)) > 0) {
                if (a.type == NHA_ID && (r = nlparse_attr_u32(&a, &id)) < 0)
                        return r;
                if (a.type == NHA_OIF && (r = nlparse_attr_u32(&a, &oif)) < 0)
                        return r;
                if (a.type == NHA_GROUP) {
                        if (a.len == 0 || a.len % sizeof(struct nexthop_grp))
                                return -EBADMSG;
                        group = a.data;
                        glen = a.len / sizeof(struct nexthop_grp);
                }
        }
        if (r < 0)
                return r;
        if (!id)
                return -EBADMSG;
        if (u->n_nh >= NLPARSE_MAX_NEXTHOPS || u->n_members + glen > NLPARSE_MAX_NH_MEMBERS)
                return -E2BIG;
        if ((r = ARRAY_GROW(u->nh, u->cap_nh, u->n_nh + 1, 32)) < 0 ||
            (r = ARRAY_GROW(u->members, u->cap_members, u->n_members + glen, 64)) < 0)
                return r;
        nlparse_nexthop *nh = &u->nh[u->n_nh++];
        *nh = (nlparse_nexthop){.id = id, .oif = group ? 0 : oif, .first = (uint32_t)u->n_members, .n = (uint32_t)glen};
        for (size_t i = 0; i < glen; i++) {
                struct nexthop_grp g;
                memcpy(&g, group + i * sizeof(g), sizeof(g));
                u->members[u->n_members++] = g.id;
        }
        return 0;
}

static int cmp_nh(const void *a, const void *b)
{
        uint32_t x = ((const nlparse_nexthop *)a)->id, y = ((const nlparse_nexthop *)b)->id;
        return (x > y) - (x < y);
}

static const nlparse_nexthop *nh_find(const nlparse_usage *u, uint32_t id)
{
        nlparse_nexthop key = {.id = id};
        return u->n_nh ? bsearch(&key, u->nh, u->n_nh, sizeof(*u->nh), cmp_nh) : NULL;
}

static int nexthops_done(nlparse_usage *u)
{
        if (u->n_nh)
                qsort(u->nh, u->n_nh, sizeof(*u->nh), cmp_nh);
        for (size_t i = 1; i < u->n_nh; i++)
                if (u->nh[i].id == u->nh[i - 1].id)
                        return -EBADMSG;
        return 0;
}

/* ---- rules ---- */

static const char *action_str(uint8_t action)
{
        switch (action) {
        case FR_ACT_TO_TBL: return "lookup";
        case FR_ACT_GOTO: return "goto";
        case FR_ACT_NOP: return "nop";
        case FR_ACT_BLACKHOLE: return "blackhole";
        case FR_ACT_UNREACHABLE: return "unreachable";
        case FR_ACT_PROHIBIT: return "prohibit";
        default: return "action";
        }
}

static int rule_names(nlparse_usage *u, const char *name, const char *what)
{
        nlparse_link *l;
        int r = link_by_name(u, name, &l);
        if (r < 0)
                return r;
        if (l->n_rules++ == 0)
                snprintf(l->rule, sizeof(l->rule), "%s", what);
        return 0;
}

static int parse_rule(nlparse_usage *u, const uint8_t *m, size_t len)
{
        struct fib_rule_hdr frh;
        size_t off = HDR + NLMSG_ALIGN(sizeof(frh));
        char iif[NLPARSE_NAME_LEN] = "", oif[NLPARSE_NAME_LEN] = "";
        uint32_t prio = 0, table;
        nlparse_attr a;
        int r;

        if (len < off)
                return -EBADMSG;
        memcpy(&frh, m + HDR, sizeof(frh));
        table = frh.table;
        while ((r = nlparse_attr_next(m, len, &off, &a)) > 0) {
                if (a.type == FRA_IIFNAME && (r = nlparse_attr_name(&a, iif)) < 0)
                        return r;
                if (a.type == FRA_OIFNAME && (r = nlparse_attr_name(&a, oif)) < 0)
                        return r;
                if (a.type == FRA_PRIORITY && (r = nlparse_attr_u32(&a, &prio)) < 0)
                        return r;
                if (a.type == FRA_TABLE && (r = nlparse_attr_u32(&a, &table)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (!*iif && !*oif)
                return 0; /* names no interface: the routes of its table do */
        char what[NLPARSE_WHAT_LEN], t[16] = "";
        if (frh.action == FR_ACT_TO_TBL)
                table_str(table, t, sizeof(t));
        snprintf(what, sizeof(what), "%u: %s%s%s%s%s %s%s%s", prio, *iif ? "iif " : "", iif, *iif && *oif ? " " : "",
                 *oif ? "oif " : "", oif, action_str(frh.action), *t ? " " : "", t);
        if (*iif && (r = rule_names(u, iif, what)) < 0)
                return r;
        if (*oif && strcmp(oif, iif) != 0 && (r = rule_names(u, oif, what)) < 0)
                return r;
        return 0;
}

/* ---- routes ---- */

#define ROUTE_MAX_DEVS 64 /* devices of one route kept (more hops: the rest count too) */

typedef struct route_devs {
        uint32_t dev[ROUTE_MAX_DEVS];
        size_t n;
        bool more;
} route_devs;

static void devs_add(route_devs *d, uint32_t ifindex)
{
        if (!ifindex)
                return;
        for (size_t i = 0; i < d->n; i++)
                if (d->dev[i] == ifindex)
                        return;
        if (d->n < ROUTE_MAX_DEVS)
                d->dev[d->n++] = ifindex;
        else
                d->more = true;
}

static int parse_route(nlparse_usage *u, nlparse_dump dump, const uint8_t *m, size_t len)
{
        struct rtmsg rtm;
        size_t off = HDR + NLMSG_ALIGN(sizeof(rtm));
        const uint8_t *dst = NULL, *gw = NULL;
        uint32_t table, metric = 0, oif = 0, nh_id = 0;
        route_devs devs = {.n = 0};
        nlparse_attr a;
        int r;

        if (len < off)
                return -EBADMSG;
        memcpy(&rtm, m + HDR, sizeof(rtm));
        int family = dump == NLPARSE_DUMP_ROUTE4 ? AF_INET : AF_INET6;
        size_t alen = family == AF_INET ? 4 : 16;
        if (rtm.rtm_family != family || rtm.rtm_dst_len > alen * 8)
                return -EBADMSG;
        table = rtm.rtm_table;
        while ((r = nlparse_attr_next(m, len, &off, &a)) > 0) {
                switch (a.type) {
                case RTA_DST:
                        if (a.len != alen)
                                return -EBADMSG;
                        dst = a.data;
                        break;
                case RTA_GATEWAY:
                        if (a.len != alen)
                                return -EBADMSG;
                        gw = a.data;
                        break;
                case RTA_OIF:
                        if ((r = nlparse_attr_u32(&a, &oif)) < 0)
                                return r;
                        break;
                case RTA_PRIORITY:
                        if ((r = nlparse_attr_u32(&a, &metric)) < 0)
                                return r;
                        break;
                case RTA_TABLE:
                        if ((r = nlparse_attr_u32(&a, &table)) < 0)
                                return r;
                        break;
                case RTA_NH_ID:
                        if ((r = nlparse_attr_u32(&a, &nh_id)) < 0)
                                return r;
                        break;
                case RTA_MULTIPATH: {
                        size_t o = 0;
                        while (o < a.len) {
                                struct rtnexthop nh;
                                if (a.len - o < sizeof(nh))
                                        return -EBADMSG;
                                memcpy(&nh, a.data + o, sizeof(nh));
                                if (nh.rtnh_len < sizeof(nh) || nh.rtnh_len > a.len - o)
                                        return -EBADMSG;
                                devs_add(&devs, (uint32_t)nh.rtnh_ifindex);
                                o += RTNH_ALIGN(nh.rtnh_len);
                        }
                        break;
                }
                default:
                        break;
                }
        }
        if (r < 0)
                return r;
        if (rtm.rtm_flags & RTM_F_CLONED)
                return 0;
        /* What the kernel makes for every address and every IPv6 interface. */
        if (table == RT_TABLE_LOCAL && (rtm.rtm_type == RTN_LOCAL || rtm.rtm_type == RTN_BROADCAST ||
                                        rtm.rtm_type == RTN_ANYCAST || rtm.rtm_type == RTN_MULTICAST))
                return 0;
        if (family == AF_INET6 && dst &&
            ((rtm.rtm_dst_len >= 10 && v6_linklocal(dst)) || (rtm.rtm_dst_len >= 8 && dst[0] == 0xff)))
                return 0;
        devs_add(&devs, oif);
        if (nh_id && devs.n == 0) {
                const nlparse_nexthop *nh = (u->done & (1u << NLPARSE_DUMP_NEXTHOP)) ? nh_find(u, nh_id) : NULL;
                if (!nh) {
                        if (!*u->undecided)
                                setf(u->undecided, sizeof(u->undecided),
                                     "a route in table %u uses nexthop object %u, which the nexthop dump did not list",
                                     table, nh_id);
                        return 0;
                }
                devs_add(&devs, nh->oif);
                for (uint32_t i = 0; i < nh->n; i++) {
                        const nlparse_nexthop *g = nh_find(u, u->members[nh->first + i]);
                        if (!g) {
                                if (!*u->undecided)
                                        setf(u->undecided, sizeof(u->undecided),
                                             "nexthop group %u names nexthop %u, which the nexthop dump did not list",
                                             nh_id, u->members[nh->first + i]);
                                return 0;
                        }
                        devs_add(&devs, g->oif);
                }
        }
        if (devs.more && !*u->undecided)
                setf(u->undecided, sizeof(u->undecided), "a route in table %u has more than %d devices", table,
                     ROUTE_MAX_DEVS);
        bool is_default = rtm.rtm_dst_len == 0 && table == RT_TABLE_MAIN && rtm.rtm_type == RTN_UNICAST;
        char what[NLPARSE_WHAT_LEN] = "";
        for (size_t i = 0; i < devs.n; i++) {
                nlparse_link *l;
                if ((r = link_by_index(u, devs.dev[i], &l)) < 0)
                        return r;
                if (l->n_routes++ == 0) {
                        if (!*what) {
                                char d[INET6_ADDRSTRLEN + 8] = "", g[INET6_ADDRSTRLEN] = "", t[16];
                                static const uint8_t zero[16];
                                table_str(table, t, sizeof(t));
                                addr_str(family, dst ? dst : zero, d, sizeof(d));
                                if (gw)
                                        addr_str(family, gw, g, sizeof(g));
                                if (rtm.rtm_dst_len == 0)
                                        snprintf(d, sizeof(d), "default");
                                else
                                        snprintf(d + strlen(d), sizeof(d) - strlen(d), "/%u", rtm.rtm_dst_len);
                                setf(what, sizeof(what), "%s%s%s table %s metric %u", d, gw ? " via " : "", g, t,
                                     metric);
                        }
                        memcpy(l->route, what, sizeof(l->route));
                }
                if (is_default && family == AF_INET && (!l->default4 || metric < l->default4_metric)) {
                        l->default4 = true;
                        l->default4_metric = metric;
                }
                if (is_default && family == AF_INET6 && (!l->default6 || metric < l->default6_metric)) {
                        l->default6 = true;
                        l->default6_metric = metric;
                }
        }
        return 0;
}

/* ---- feeding ---- */

int nlparse_feed(nlparse_usage *u, nlparse_dump d, uint32_t seq, const void *buf, size_t len, size_t *ret_used)
{
        const uint8_t *p = buf;
        size_t off = 0;
        int r = 0;

/* On an error, *ret_used is the offset of the message that caused it. */
#define FAIL(e)                                                                            \
        do {                                                                               \
                *ret_used = off;                                                           \
                return (e);                                                                \
        } while (0)

        *ret_used = 0;
        if ((unsigned)d >= _NLPARSE_DUMP_MAX || (u->done & (1u << d)) ||
            (u->done & ((1u << d) - 1)) != (1u << d) - 1)
                return -EBADMSG;
        for (;;) {
                nlparse_msg msg;
                size_t next = off;
                if ((r = nlparse_msg_next(p, len, &next, &msg)) < 0)
                        FAIL(r);
                if (r == 0)
                        break; /* the end, or the rest comes with the next piece */
                const struct nlmsghdr nh = msg.hdr;
                const uint8_t *m = msg.data;
                size_t mlen = msg.len;
                if (++u->n_msgs > NLPARSE_MAX_MSGS)
                        FAIL(-E2BIG);
                if (nh.nlmsg_seq != seq)
                        FAIL(-EBADMSG);
                if (nh.nlmsg_flags & NLM_F_DUMP_INTR)
                        FAIL(-EINTR);
                switch (nh.nlmsg_type) {
                case NLMSG_NOOP:
                        break;
                case NLMSG_OVERRUN:
                        FAIL(-ENOBUFS);
                case NLMSG_ERROR: {
                        int e;
                        if (mlen < HDR + sizeof(e))
                                FAIL(-EBADMSG);
                        memcpy(&e, m + HDR, sizeof(e));
                        FAIL(e < 0 && e > -4096 ? e : -EBADMSG); /* an ACK (0) has no place in a dump */
                }
                case NLMSG_DONE: {
                        int e = 0;
                        if (mlen >= HDR + sizeof(e))
                                memcpy(&e, m + HDR, sizeof(e));
                        if (e < 0)
                                FAIL(e > -4096 ? e : -EBADMSG);
                        if (d == NLPARSE_DUMP_NEXTHOP && (r = nexthops_done(u)) < 0)
                                FAIL(r);
                        u->done |= 1u << d;
                        *ret_used = next;
                        return 1;
                }
                default:
                        if (nh.nlmsg_type != answer_type(d))
                                FAIL(-EBADMSG);
                        switch (d) {
                        case NLPARSE_DUMP_LINK: r = parse_link(u, m, mlen); break;
                        case NLPARSE_DUMP_ADDR: r = parse_addr(u, m, mlen); break;
                        case NLPARSE_DUMP_NEXTHOP: r = parse_nexthop(u, m, mlen); break;
                        case NLPARSE_DUMP_RULE: r = parse_rule(u, m, mlen); break;
                        default: r = parse_route(u, d, m, mlen); break;
                        }
                        if (r < 0)
                                FAIL(r);
                }
                off = next;
        }
        *ret_used = off;
        return 0;
#undef FAIL
}

int nlparse_refused(nlparse_usage *u, nlparse_dump d)
{
        if (d != NLPARSE_DUMP_NEXTHOP || (u->done & (1u << d)) ||
            (u->done & ((1u << d) - 1)) != (1u << d) - 1)
                return -EINVAL;
        u->done |= 1u << d;
        u->refused |= 1u << d;
        u->n_nh = 0;
        u->n_members = 0;
        return 0;
}

int nlparse_finish(const nlparse_usage *u, char *why, size_t size)
{
        for (unsigned d = 0; d < _NLPARSE_DUMP_MAX; d++)
                if (!(u->done & (1u << d))) {
                        if (why && size)
                                snprintf(why, size, "the %s dump is incomplete", nlparse_dump_name((nlparse_dump)d));
                        return -ENODATA;
                }
        if (*u->undecided) {
                if (why && size)
                        snprintf(why, size, "%s", u->undecided);
                return -ENODATA;
        }
        return 0;
}

/* ---- the question ---- */

static void part(char *buf, size_t size, bool *first, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void part(char *buf, size_t size, bool *first, const char *fmt, ...)
{
        size_t n = strnlen(buf, size);
        va_list ap;
        if (n + 1 >= size)
                return;
        if (!*first) {
                snprintf(buf + n, size - n, ", ");
                n = strnlen(buf, size);
        }
        *first = false;
        va_start(ap, fmt);
        vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
}

static void more(char *buf, size_t size, uint32_t n)
{
        size_t k = strnlen(buf, size);
        if (n > 1 && k + 1 < size)
                snprintf(buf + k, size - k, " (+%u more)", n - 1);
}

int nlparse_in_use(const nlparse_usage *u, const char *name, char *why, size_t size)
{
        const nlparse_link *l = nlparse_find(u, name);
        char buf[NLPARSE_WHY_LEN];
        bool first = true;

        if (!l)
                return -ENOENT;
        if (!l->n_addrs && !l->n_routes && !l->n_rules && !l->master && !l->lower_of)
                return 0;
        snprintf(buf, sizeof(buf), "%s ", l->name);
        if (l->n_addrs) {
                part(buf, sizeof(buf), &first, "has address %s", l->addr);
                more(buf, sizeof(buf), l->n_addrs);
        }
        if (l->n_routes) {
                part(buf, sizeof(buf), &first, "has route \"%s\"", l->route);
                more(buf, sizeof(buf), l->n_routes);
        }
        if (l->n_rules) {
                part(buf, sizeof(buf), &first, "is named by policy rule \"%s\"", l->rule);
                more(buf, sizeof(buf), l->n_rules);
        }
        if (l->master) {
                const nlparse_link *m = nlparse_find_index(u, l->master);
                if (m && *m->name)
                        part(buf, sizeof(buf), &first, "is enslaved to %s", m->name);
                else
                        part(buf, sizeof(buf), &first, "is enslaved to ifindex %u", l->master);
        }
        if (l->lower_of)
                part(buf, sizeof(buf), &first, "is the lower device of %s", *l->upper ? l->upper : "another link");
        if (why && size)
                snprintf(why, size, "%s", buf);
        return 1;
}
