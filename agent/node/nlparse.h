/* SPDX-License-Identifier: Apache-2.0 */
/* Pure parser of rtnetlink dump answers (links, addresses, nexthop objects, policy rules,
 * IPv4 and IPv6 routes of every table) into the "link usage" table: per network
 * interface, what of the node's own networking it carries, and why it must not be taken;
 * and the one message and attribute walker of rtnetlink, which the link events of
 * prep/tune.c use too. Bounded (NLPARSE_MAX_*), no I/O, no globals, never logs; the
 * socket and the recorded dumps of fake trees are netlink.c's. */
#ifndef SPIN_NLPARSE_H
#define SPIN_NLPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

/* Hard limits: what exceeds them makes the table incomplete (-E2BIG), never truncated. */
#define NLPARSE_MAX_LINKS 16384     /* interfaces in one namespace (pods' veths included) */
#define NLPARSE_MAX_NEXTHOPS 65536  /* nexthop objects */
#define NLPARSE_MAX_NH_MEMBERS 262144 /* members of all nexthop groups together */
#define NLPARSE_MAX_MSGS (4u << 20) /* messages of all dumps together (~4 M routes) */
#define NLPARSE_NAME_LEN 16         /* IFNAMSIZ */
#define NLPARSE_WHAT_LEN 112        /* one address, route or rule as text */
#define NLPARSE_WHY_LEN 512         /* what callers should give nlparse_in_use() */

/* The dumps that make a complete table, in the order they must be fed: links name the
 * interfaces, nexthop objects resolve the routes that use them. */
typedef enum nlparse_dump {
        NLPARSE_DUMP_LINK,    /* RTM_GETLINK, AF_UNSPEC */
        NLPARSE_DUMP_ADDR,    /* RTM_GETADDR, AF_UNSPEC */
        NLPARSE_DUMP_NEXTHOP, /* RTM_GETNEXTHOP, AF_UNSPEC (a kernel without them refuses it) */
        NLPARSE_DUMP_RULE,    /* RTM_GETRULE, AF_UNSPEC */
        NLPARSE_DUMP_ROUTE4,  /* RTM_GETROUTE, AF_INET, every table */
        NLPARSE_DUMP_ROUTE6,  /* RTM_GETROUTE, AF_INET6, every table */
        _NLPARSE_DUMP_MAX,
} nlparse_dump;
/* "links", "addresses", "nexthops", "rules", "IPv4 routes", "IPv6 routes". */
const char *nlparse_dump_name(nlparse_dump d);
/* The request's nlmsg_type and rtgen family for dump d (what netlink.c sends). */
void nlparse_dump_request(nlparse_dump d, uint16_t *ret_type, uint8_t *ret_family);

/* One interface. Counts are of what makes it "in use"; the texts are the first of each. */
typedef struct nlparse_link {
        uint32_t ifindex;             /* 0: known only by name (a rule naming an absent link) */
        char name[NLPARSE_NAME_LEN];  /* "" when no link message named it */
        uint32_t master;              /* IFLA_MASTER: enslaved to that ifindex (bridge, bond, vrf) */
        uint32_t lower_of;            /* an upper device (vlan, macvlan, ...) of this ns sits on it */
        uint32_t n_addrs;             /* addresses other than IPv6 link-local (fe80::/10) */
        uint32_t n_routes;            /* routes through it in any table (see nlparse_feed) */
        uint32_t n_rules;             /* policy rules whose iif or oif it is */
        bool has_ipv4;                /* one of those addresses is IPv4 */
        bool default4, default6;      /* a default route through it in the main table */
        uint32_t default4_metric, default6_metric; /* the lowest such metric */
        char addr[NLPARSE_WHAT_LEN];  /* "10.0.1.7/24" */
        char route[NLPARSE_WHAT_LEN]; /* "default via 10.0.0.1 table main metric 512" */
        char rule[NLPARSE_WHAT_LEN];  /* "32765: iif ens6 lookup 100" */
        char upper[NLPARSE_NAME_LEN]; /* name of the upper device when lower_of is set */
} nlparse_link;

typedef struct nlparse_nexthop {
        uint32_t id, oif;             /* oif 0: a group (members) or a blackhole */
        uint32_t first, n;            /* group members in nlparse_usage.members */
} nlparse_nexthop;

/* The table. Read links[] freely; change it only through nlparse_feed(). */
typedef struct nlparse_usage {
        nlparse_link *links;
        size_t n_links, cap_links;
        uint32_t *hash;               /* ifindex -> links index + 1 (open addressing) */
        size_t hash_size;
        nlparse_nexthop *nh;
        size_t n_nh, cap_nh;
        uint32_t *members;            /* nexthop ids of groups */
        size_t n_members, cap_members;
        unsigned done;                /* bit (1 << nlparse_dump) per complete dump */
        unsigned refused;             /* dumps the kernel refused (only NEXTHOP may be) */
        uint64_t n_msgs;
        /* Set when a fact cannot be attributed (a route through an unknown nexthop
         * object): the whole table is then undecided (nlparse_finish fails). */
        char undecided[NLPARSE_WHAT_LEN + 64];
} nlparse_usage;

/* A new empty table (NULL on -ENOMEM is reported as the return). */
int nlparse_usage_new(nlparse_usage **ret);
void nlparse_usage_free(nlparse_usage *u);

/* Feed the whole netlink messages at the start of buf, all of dump d with sequence
 * number seq. Stops after NLMSG_DONE or before a message that does not fit in what is
 * left (a stream read in pieces: feed the rest again with more bytes); *ret_used is what
 * was consumed. Returns 1 when d's NLMSG_DONE was consumed, 0 when more is to come, or a
 * negative errno, after which the table is unusable:
 *   -EBADMSG  malformed: a length below its header or not a multiple of 4, an attribute
 *             past its message, an unterminated or over-long name, a message type that
 *             does not belong to d, another seq, a dump fed out of order or twice
 *   -EINTR    the kernel flagged the dump inconsistent (NLM_F_DUMP_INTR): ask again
 *   -E2BIG    past a NLPARSE_MAX_* limit
 *   -ENOBUFS  NLMSG_OVERRUN
 *   other     the error the kernel answered instead (NLMSG_ERROR, or a negative
 *             NLMSG_DONE); for NLPARSE_DUMP_NEXTHOP the caller may then call
 *             nlparse_refused() and go on.
 * What counts as a route of an interface: every route in any table whose device (RTA_OIF,
 * a multipath hop, a nexthop object) it is, except what the kernel makes by itself for
 * every interface: routes in table local of type local/broadcast/anycast/multicast (one
 * per address), IPv6 link-local (fe80::/10) and multicast (ff00::/8) prefixes, and
 * cloned cache entries. */
int nlparse_feed(nlparse_usage *u, nlparse_dump d, uint32_t seq, const void *buf, size_t len, size_t *ret_used);

/* The kernel refused dump d (a kernel without nexthop objects answers -EOPNOTSUPP):
 * accepted for NLPARSE_DUMP_NEXTHOP only (routes naming a nexthop id then leave the table
 * undecided); -EINVAL for any other dump. */
int nlparse_refused(nlparse_usage *u, nlparse_dump d);

/* 0 when every dump is complete and every fact attributed; -ENODATA (reason in why)
 * otherwise. */
int nlparse_finish(const nlparse_usage *u, char *why, size_t size);

/* The interface named name; NULL when no dump named it. */
const nlparse_link *nlparse_find(const nlparse_usage *u, const char *name);
const nlparse_link *nlparse_find_index(const nlparse_usage *u, uint32_t ifindex);

/* Whether the interface named name carries any of the node's networking: 1 with every
 * reason in why ("ens6: address 10.0.1.7/24 (+1 more), route \"default via ...\" (+2
 * more), policy rule \"32765: iif ens6 lookup 100\", enslaved to br0"), 0 when it has at
 * most IPv6 link-local addresses and nothing else, -ENOENT when the dumps do not know it
 * (another network namespace, or created since). why is untouched unless 1. */
int nlparse_in_use(const nlparse_usage *u, const char *name, char *why, size_t size);

/* ---- the walker: every rtnetlink message and attribute is read through these ---- */

/* One message: hdr copied out (buffers need no alignment), data/len the whole message,
 * header included (data + NLMSG_HDRLEN is its body). */
typedef struct nlparse_msg {
        struct nlmsghdr hdr;
        const uint8_t *data;
        size_t len;
} nlparse_msg;

/* The message at buf + *off (len bytes in buf): 1 with *ret filled and *off past it; 0
 * when what is left is not a whole message (nothing, or a message cut at len: in a
 * datagram that is malformed, in a stream read in pieces it comes with the next piece),
 * *off unchanged; -EBADMSG for a length below the header or not a multiple of 4. */
int nlparse_msg_next(const void *buf, size_t len, size_t *off, nlparse_msg *ret);

/* One attribute: type without the NLA_F_NESTED/NLA_F_NET_BYTEORDER bits, its payload. */
typedef struct nlparse_attr {
        uint16_t type;
        const uint8_t *data;
        size_t len;
} nlparse_attr;

/* The next attribute in [buf + *off, buf + end) (end: the message's or the nest's
 * length): 1 with *ret filled and *off past it (padding included), 0 at the end,
 * -EBADMSG when an attribute is cut or shorter than its header. Start at the first
 * attribute's offset (NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(the family header)) of a
 * message; 0 in a nest's payload). */
int nlparse_attr_next(const void *buf, size_t end, size_t *off, nlparse_attr *ret);
/* The attribute's u32 (host order); -EBADMSG when shorter. */
int nlparse_attr_u32(const nlparse_attr *a, uint32_t *ret);
/* An interface name: NUL-terminated inside the attribute, 1..15 printable bytes, no '/'
 * (into ret, NLPARSE_NAME_LEN bytes); -EBADMSG otherwise, ret untouched. */
int nlparse_attr_name(const nlparse_attr *a, char *ret);

#endif
