/* SPDX-License-Identifier: Apache-2.0 */
/* The rtnetlink dump parser (agent/node/nlparse.c): what makes an interface "in use" (an
 * address other than IPv6 link-local, a route in any table - through a nexthop object or
 * a multipath hop too -, a policy rule, a master, an upper device) and what does not (the
 * kernel's own link-local, multicast and local-table routes, a veth's peer); the reasons
 * as text; the lowest default metric of the main table; incomplete, interrupted, refused,
 * malformed and over-limit answers; the same result fed in pieces of any size. */
#include "nlparse.h"

#include "cleanup.h"
#include "nlbuild.h"
#include "testutil.h"

#include <errno.h>

/* A node like an EKS one: lo, ens5 (primary: address, default metric 512), ens6 (a second
 * ENI with its own default metric 513), ens7 (VPC CNI: routes only in table 2, a rule),
 * ens8 (only IPv6 link-local), br0 with ens9 enslaved, ens10 under a vlan, a veth pair. */
static void eks_like(nlfacts *f)
{
        memset(f, 0, sizeof(*f));
        nlf_link(f, 1, "lo", 0, 0, "");
        nlf_link(f, 2, "ens5", 0, 0, "");
        nlf_link(f, 3, "ens6", 0, 0, "");
        nlf_link(f, 4, "ens7", 0, 0, "");
        nlf_link(f, 5, "ens8", 0, 0, "");
        nlf_link(f, 6, "br0", 0, 0, "bridge");
        nlf_link(f, 7, "ens9", 6, 0, "");
        nlf_link(f, 8, "ens10", 0, 0, "");
        nlf_link(f, 9, "ens10.100", 0, 8, "vlan");
        nlf_link(f, 10, "veth-a", 0, 11, "veth");
        nlf_link(f, 11, "veth-b", 0, 10, "veth");
        nlf_addr(f, 1, "127.0.0.1/8");
        nlf_addr(f, 1, "::1/128");
        nlf_addr(f, 2, "10.0.1.5/24");
        nlf_addr(f, 2, "fe80::5/64");
        nlf_addr(f, 3, "10.0.1.6/24");
        nlf_addr(f, 5, "fe80::8/64");
        nlf_addr(f, 7, "fe80::9/64");
        nlf_rule(f, 0, NULL, NULL, RT_TABLE_LOCAL);
        nlf_rule(f, 512, NULL, NULL, 2);          /* "from <pod ip> lookup 2": no interface */
        nlf_rule(f, 1536, "ens7", NULL, 2);
        nlf_rule(f, 32766, NULL, NULL, RT_TABLE_MAIN);
        nlf_route(f, "default", "10.0.1.1", 2, RT_TABLE_MAIN, 512);
        nlf_route(f, "default", "10.0.1.1", 3, RT_TABLE_MAIN, 513);
        nlf_route(f, "10.0.1.0/24", NULL, 2, RT_TABLE_MAIN, 512);
        nlf_route(f, "10.0.1.0/24", NULL, 3, RT_TABLE_MAIN, 513);
        nlf_route(f, "default", "10.0.2.1", 4, 2, 0);
        nlf_route(f, "10.0.2.1/32", NULL, 4, 2, 0);
        /* the kernel's own: local-table entries per address, IPv6 link-local and multicast */
        nlf_route_full(f, "10.0.1.5/32", NULL, 2, RT_TABLE_LOCAL, 0, RTN_LOCAL, 0, NULL, 0);
        nlf_route_full(f, "10.0.1.255/32", NULL, 2, RT_TABLE_LOCAL, 0, RTN_BROADCAST, 0, NULL, 0);
        nlf_route_full(f, "127.0.0.0/8", NULL, 1, RT_TABLE_LOCAL, 0, RTN_LOCAL, 0, NULL, 0);
        nlf_route(f, "fe80::/64", NULL, 5, RT_TABLE_MAIN, 256);
        nlf_route(f, "fe80::/64", NULL, 2, RT_TABLE_MAIN, 256);
        nlf_route_full(f, "fe80::8/128", NULL, 5, RT_TABLE_LOCAL, 0, RTN_LOCAL, 0, NULL, 0);
        nlf_route_full(f, "ff00::/8", NULL, 5, RT_TABLE_LOCAL, 256, RTN_MULTICAST, 0, NULL, 0);
        nlf_route_full(f, "ff00::/8", NULL, 5, RT_TABLE_MAIN, 256, RTN_UNICAST, 0, NULL, 0);
        /* a blackhole has no device */
        nlf_route_full(f, "192.0.2.0/24", NULL, 0, RT_TABLE_MAIN, 0, RTN_BLACKHOLE, 0, NULL, 0);
}

static nlparse_usage *parse(const nlfacts *f, int want)
{
        size_t n;
        uint8_t *b = nlf_bytes(f, &n);
        nlparse_usage *u = NULL;
        CHECK_INT(nlf_parse(b, n, &u), want);
        free(b);
        return u;
}

static void expect_use(const nlparse_usage *u, const char *name, int want, const char *why)
{
        char buf[NLPARSE_WHY_LEN] = "untouched";
        int r = nlparse_in_use(u, name, buf, sizeof(buf));
        CHECK_INT(r, want);
        if (r != want)
                fprintf(stderr, "  for %s\n", name);
        CHECK_STR(buf, r == 1 ? why : "untouched");
}

static void test_usage(void)
{
        nlfacts f;
        eks_like(&f);
        nlparse_usage *u = parse(&f, 0);

        expect_use(u, "ens5", 1,
                   "ens5 has address 10.0.1.5/24, has route \"default via 10.0.1.1 table main metric 512\" (+1 more)");
        expect_use(u, "ens6", 1,
                   "ens6 has address 10.0.1.6/24, has route \"default via 10.0.1.1 table main metric 513\" (+1 more)");
        expect_use(u, "ens7", 1,
                   "ens7 has route \"default via 10.0.2.1 table 2 metric 0\" (+1 more), is named by policy rule "
                   "\"1536: iif ens7 lookup 2\"");
        expect_use(u, "ens8", 0, NULL);
        expect_use(u, "ens9", 1, "ens9 is enslaved to br0");
        expect_use(u, "ens10", 1, "ens10 is the lower device of ens10.100");
        expect_use(u, "veth-a", 0, NULL); /* its IFLA_LINK is its peer */
        expect_use(u, "br0", 0, NULL);
        expect_use(u, "lo", 1, "lo has address 127.0.0.1/8 (+1 more)");
        expect_use(u, "ens99", -ENOENT, NULL);
        expect_use(u, "", -ENOENT, NULL);

        const nlparse_link *l = nlparse_find(u, "ens5");
        CHECK(l && l->default4 && l->default4_metric == 512 && l->has_ipv4 && !l->default6);
        l = nlparse_find(u, "ens6");
        CHECK(l && l->default4 && l->default4_metric == 513);
        l = nlparse_find(u, "ens7");
        CHECK(l && !l->default4); /* its default route is in table 2, not main */
        CHECK(nlparse_find_index(u, 9) && strcmp(nlparse_find_index(u, 9)->name, "ens10.100") == 0);
        CHECK(nlparse_find_index(u, 77) == NULL);
        nlparse_usage_free(u);

        /* An oif rule, and a rule naming an interface that does not exist (yet). */
        nlf_rule(&f, 100, NULL, "ens8", 100);
        nlf_rule(&f, 101, "ens42", NULL, 100);
        u = parse(&f, 0);
        expect_use(u, "ens8", 1, "ens8 is named by policy rule \"100: oif ens8 lookup 100\"");
        expect_use(u, "ens42", 1, "ens42 is named by policy rule \"101: iif ens42 lookup 100\"");
        nlparse_usage_free(u);
        nlf_free(&f);
}

static void test_nexthops(void)
{
        nlfacts f;
        eks_like(&f);
        uint32_t grp[] = {21, 22};
        nlf_nexthop(&f, 21, 5, NULL, 0);
        nlf_nexthop(&f, 22, 8, NULL, 0);
        nlf_nexthop(&f, 23, 0, grp, 2);
        nlf_route_full(&f, "198.51.100.0/24", NULL, 0, 10, 0, RTN_UNICAST, 21, NULL, 0);
        nlf_route_full(&f, "203.0.113.0/24", NULL, 0, 11, 0, RTN_UNICAST, 23, NULL, 0);
        nlparse_usage *u = parse(&f, 0);
        expect_use(u, "ens8", 1, "ens8 has route \"198.51.100.0/24 table 10 metric 0\" (+1 more)");
        expect_use(u, "ens10", 1, "ens10 has route \"203.0.113.0/24 table 11 metric 0\", is the lower device of ens10.100");
        nlparse_usage_free(u);

        /* A multipath route counts on every hop. */
        nlfacts g;
        memset(&g, 0, sizeof(g));
        nlf_link(&g, 2, "a", 0, 0, "");
        nlf_link(&g, 3, "b", 0, 0, "");
        int hops[] = {2, 3};
        nlf_route_full(&g, "default", NULL, 0, RT_TABLE_MAIN, 10, RTN_UNICAST, 0, hops, 2);
        u = parse(&g, 0);
        expect_use(u, "b", 1, "b has route \"default table main metric 10\"");
        CHECK(nlparse_find(u, "a")->default4 && nlparse_find(u, "b")->default4_metric == 10);
        nlparse_usage_free(u);

        /* A route through a nexthop object the nexthop dump did not list: undecided. */
        nlf_route_full(&g, "10.9.0.0/16", NULL, 0, 7, 0, RTN_UNICAST, 99, NULL, 0);
        u = parse(&g, -ENODATA);
        char why[256];
        CHECK_INT(nlparse_finish(u, why, sizeof(why)), -ENODATA);
        CHECK_STR(why, "a route in table 7 uses nexthop object 99, which the nexthop dump did not list");
        nlparse_usage_free(u);
        /* Same when the kernel has no nexthop objects at all (it refused the dump). */
        g.nexthop_error = -EOPNOTSUPP;
        u = parse(&g, -ENODATA);
        CHECK(u->refused == 1u << NLPARSE_DUMP_NEXTHOP);
        nlparse_usage_free(u);
        nlf_free(&g);
        /* ... while a refused nexthop dump is fine when no route needs one. */
        eks_like(&g);
        g.nexthop_error = -EOPNOTSUPP;
        u = parse(&g, 0);
        expect_use(u, "ens8", 0, NULL);
        nlparse_usage_free(u);
        nlf_free(&g);
        nlf_free(&f);
}

/* Feeding in pieces of every size gives the same answer as feeding it whole. */
static void test_pieces(void)
{
        nlfacts f;
        eks_like(&f);
        size_t len;
        uint8_t *all = nlf_bytes(&f, &len);
        static const size_t sizes[] = {1, 3, 16, 17, 100, 4096};
        for (size_t s = 0; s < ELEMENTSOF(sizes); s++) {
                nlparse_usage *u = NULL;
                CHECK_INT(nlparse_usage_new(&u), 0);
                size_t off = 0, have = 0, fed = 0;
                int d = 0, r = 0;
                uint8_t *win = malloc(len);
                while (d < _NLPARSE_DUMP_MAX) {
                        size_t used = 0;
                        r = nlparse_feed(u, (nlparse_dump)d, (uint32_t)d + 1, win, have, &used);
                        CHECK(r >= 0);
                        if (r < 0)
                                break;
                        memmove(win, win + used, have - used);
                        have -= used;
                        if (r == 1) {
                                d++;
                                continue;
                        }
                        size_t k = sizes[s] < len - off ? sizes[s] : len - off;
                        CHECK(k > 0);
                        if (!k)
                                break;
                        memcpy(win + have, all + off, k);
                        have += k;
                        off += k;
                        fed++;
                }
                CHECK_INT(have, 0);
                CHECK_INT(off, len);
                CHECK_INT(nlparse_finish(u, NULL, 0), 0);
                expect_use(u, "ens8", 0, NULL);
                expect_use(u, "ens9", 1, "ens9 is enslaved to br0");
                free(win);
                nlparse_usage_free(u);
        }
        free(all);
        nlf_free(&f);
}

/* One bad message in an otherwise good links dump. */
static int feed_links(const nlb *extra, uint32_t seq)
{
        nlfacts f;
        memset(&f, 0, sizeof(f));
        nlf_link(&f, 2, "eth0", 0, 0, "");
        nlb b = {0};
        nlb_put(&b, f.d[0].buf, f.d[0].len);
        if (extra)
                nlb_put(&b, extra->buf, extra->len);
        nlb_done(&b, seq);
        nlparse_usage *u = NULL;
        size_t used = 0;
        CHECK_INT(nlparse_usage_new(&u), 0);
        int r = nlparse_feed(u, NLPARSE_DUMP_LINK, 1, b.buf, b.len, &used);
        nlparse_usage_free(u);
        nlb_free(&b);
        nlf_free(&f);
        return r;
}

static void test_bad(void)
{
        nlb m = {0};
        CHECK_INT(feed_links(NULL, 1), 1);
        CHECK_INT(feed_links(NULL, 2), -EBADMSG); /* another seq */

        /* NLM_F_DUMP_INTR: the dump changed under the reader */
        struct ifinfomsg ifi = {.ifi_index = 3};
        nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI | NLM_F_DUMP_INTR, 1, &ifi, sizeof(ifi));
        nlb_str(&m, IFLA_IFNAME, "eth1");
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -EINTR);
        nlb_free(&m);

        /* an attribute longer than its message */
        nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI, 1, &ifi, sizeof(ifi));
        nlb_str(&m, IFLA_IFNAME, "eth1");
        nlb_end(&m);
        m.buf[NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifi))] = 0x40; /* rta_len of IFLA_IFNAME */
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);

        /* names: none, unterminated, too long, with a slash */
        static const char *const names[] = {NULL, "0123456789abcdef", "a/b", ""};
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI, 1, &ifi, sizeof(ifi));
                if (names[i])
                        nlb_str(&m, IFLA_IFNAME, names[i]);
                nlb_end(&m);
                CHECK_INT(feed_links(&m, 1), -EBADMSG);
                nlb_free(&m);
        }
        nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI, 1, &ifi, sizeof(ifi));
        nlb_attr(&m, IFLA_IFNAME, "eth1", 4); /* no NUL */
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);

        /* an index of 0, a message of another dump, an ACK, a kernel error, an overrun */
        struct ifinfomsg zero = {.ifi_index = 0};
        nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI, 1, &zero, sizeof(zero));
        nlb_str(&m, IFLA_IFNAME, "eth1");
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);
        struct ifaddrmsg ifa = {.ifa_family = AF_INET, .ifa_index = 2};
        nlb_msg(&m, RTM_NEWADDR, NLM_F_MULTI, 1, &ifa, sizeof(ifa));
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);
        nlb_error(&m, 1, 0);
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);
        nlb_error(&m, 1, -EPERM);
        CHECK_INT(feed_links(&m, 1), -EPERM);
        nlb_free(&m);
        nlb_msg(&m, NLMSG_OVERRUN, 0, 1, NULL, 0);
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -ENOBUFS);
        nlb_free(&m);
        /* a negative NLMSG_DONE (the dump failed half-way) */
        int e = -EMSGSIZE;
        nlb_msg(&m, NLMSG_DONE, NLM_F_MULTI, 1, &e, sizeof(e));
        nlb_end(&m);
        CHECK_INT(feed_links(&m, 1), -EMSGSIZE);
        nlb_free(&m);
        /* a length below the header */
        nlb_msg(&m, RTM_NEWLINK, NLM_F_MULTI, 1, &ifi, sizeof(ifi));
        nlb_end(&m);
        uint32_t eight = 8;
        memcpy(m.buf, &eight, 4);
        CHECK_INT(feed_links(&m, 1), -EBADMSG);
        nlb_free(&m);

        /* dumps out of order, or twice; an incomplete table */
        nlparse_usage *u = NULL;
        size_t used;
        char why[128];
        CHECK_INT(nlparse_usage_new(&u), 0);
        nlb_done(&m, 2);
        CHECK_INT(nlparse_feed(u, NLPARSE_DUMP_ADDR, 2, m.buf, m.len, &used), -EBADMSG);
        CHECK_INT(nlparse_refused(u, NLPARSE_DUMP_NEXTHOP), -EINVAL);
        nlb_free(&m);
        nlb_done(&m, 1);
        CHECK_INT(nlparse_feed(u, NLPARSE_DUMP_LINK, 1, m.buf, m.len, &used), 1);
        CHECK_INT(used, m.len);
        CHECK_INT(nlparse_feed(u, NLPARSE_DUMP_LINK, 1, m.buf, m.len, &used), -EBADMSG);
        CHECK_INT(nlparse_refused(u, NLPARSE_DUMP_ADDR), -EINVAL);
        CHECK_INT(nlparse_finish(u, why, sizeof(why)), -ENODATA);
        CHECK_STR(why, "the addresses dump is incomplete");
        /* a message cut short waits for the rest */
        nlb_free(&m);
        nlb_done(&m, 2);
        CHECK_INT(nlparse_feed(u, NLPARSE_DUMP_ADDR, 2, m.buf, m.len - 1, &used), 0);
        CHECK_INT(used, 0);
        CHECK_INT(nlparse_feed(u, NLPARSE_DUMP_ADDR, 2, m.buf, m.len, &used), 1);
        nlparse_usage_free(u);
        nlb_free(&m);

        /* a route of the wrong family, a prefix longer than the address */
        nlfacts f;
        memset(&f, 0, sizeof(f));
        nlf_link(&f, 2, "eth0", 0, 0, "");
        struct rtmsg rtm = {.rtm_family = AF_INET6, .rtm_table = RT_TABLE_MAIN, .rtm_type = RTN_UNICAST};
        nlb_msg(&f.d[NLPARSE_DUMP_ROUTE4], RTM_NEWROUTE, NLM_F_MULTI, NLPARSE_DUMP_ROUTE4 + 1, &rtm, sizeof(rtm));
        nlb_end(&f.d[NLPARSE_DUMP_ROUTE4]);
        u = parse(&f, -EBADMSG);
        nlparse_usage_free(u);
        nlb_free(&f.d[NLPARSE_DUMP_ROUTE4]);
        rtm.rtm_family = AF_INET;
        rtm.rtm_dst_len = 33;
        nlb_msg(&f.d[NLPARSE_DUMP_ROUTE4], RTM_NEWROUTE, NLM_F_MULTI, NLPARSE_DUMP_ROUTE4 + 1, &rtm, sizeof(rtm));
        nlb_end(&f.d[NLPARSE_DUMP_ROUTE4]);
        u = parse(&f, -EBADMSG);
        nlparse_usage_free(u);
        nlf_free(&f);
}

/* Cloned cache entries are no routes; more links than the limit is an error. */
static void test_limits(void)
{
        nlfacts f;
        memset(&f, 0, sizeof(f));
        nlf_link(&f, 2, "eth0", 0, 0, "");
        struct rtmsg rtm = {.rtm_family = AF_INET, .rtm_dst_len = 32, .rtm_table = RT_TABLE_MAIN,
                            .rtm_type = RTN_UNICAST, .rtm_flags = RTM_F_CLONED};
        uint8_t dst[4] = {10, 1, 2, 3};
        nlb *b = &f.d[NLPARSE_DUMP_ROUTE4];
        nlb_msg(b, RTM_NEWROUTE, NLM_F_MULTI, NLPARSE_DUMP_ROUTE4 + 1, &rtm, sizeof(rtm));
        nlb_attr(b, RTA_DST, dst, 4);
        nlb_u32(b, RTA_OIF, 2);
        nlb_end(b);
        nlparse_usage *u = parse(&f, 0);
        expect_use(u, "eth0", 0, NULL);
        nlparse_usage_free(u);
        nlf_free(&f);

        memset(&f, 0, sizeof(f));
        for (int i = 1; i <= NLPARSE_MAX_LINKS + 1; i++) {
                char name[16];
                snprintf(name, sizeof(name), "v%d", i);
                nlf_link(&f, i, name, 0, 0, "veth");
        }
        u = parse(&f, -E2BIG);
        nlparse_usage_free(u);
        nlf_free(&f);
}

/* The walker nlparse_feed and prep/tune.c read with: whole messages, lengths a multiple
 * of 4, attributes inside their message, names NUL-terminated and printable. */
static void test_walker(void)
{
        uint8_t b[64] __attribute__((aligned(4))) = {0};
        struct nlmsghdr nh = {.nlmsg_len = 28, .nlmsg_type = RTM_NEWLINK};
        nlparse_msg m;
        nlparse_attr a;
        uint32_t v = 0;
        char name[NLPARSE_NAME_LEN] = "keep";
        size_t off;

        /* message 1: a 16-byte header, one attribute of 8 bytes (u32 7), 4 more bytes of
         * attribute header naming 0 bytes; message 2 (bytes 28..43): a bare header */
        memcpy(b, &nh, sizeof(nh));
        struct rtattr ra = {.rta_len = 8, .rta_type = 3 | NLA_F_NESTED};
        memcpy(b + 16, &ra, sizeof(ra));
        v = 7;
        memcpy(b + 20, &v, 4);
        ra = (struct rtattr){.rta_len = 4, .rta_type = IFLA_IFNAME};
        memcpy(b + 24, &ra, sizeof(ra));
        nh.nlmsg_len = 16;
        memcpy(b + 28, &nh, sizeof(nh));

        off = 0;
        CHECK_INT(nlparse_msg_next(b, 44, &off, &m), 1);
        CHECK(off == 28 && m.len == 28 && m.data == b && m.hdr.nlmsg_type == RTM_NEWLINK);
        size_t ao = NLMSG_HDRLEN;
        CHECK_INT(nlparse_attr_next(m.data, m.len, &ao, &a), 1);
        CHECK(a.type == 3 && a.len == 4 && ao == 24); /* NLA_F_NESTED masked off */
        CHECK_INT(nlparse_attr_u32(&a, &v), 0);
        CHECK(v == 7);
        CHECK_INT(nlparse_attr_next(m.data, m.len, &ao, &a), 1);
        CHECK(a.type == IFLA_IFNAME && a.len == 0);
        CHECK_INT(nlparse_attr_u32(&a, &v), -EBADMSG);
        CHECK_INT(nlparse_attr_name(&a, name), -EBADMSG); /* no NUL inside */
        CHECK_STR(name, "keep");
        CHECK_INT(nlparse_attr_next(m.data, m.len, &ao, &a), 0);
        CHECK_INT(nlparse_msg_next(b, 44, &off, &m), 1);
        CHECK(off == 44 && m.len == 16);
        CHECK_INT(nlparse_msg_next(b, 44, &off, &m), 0); /* the end */

        /* cut at the buffer's end: 0, nothing consumed (the caller decides) */
        off = 0;
        CHECK_INT(nlparse_msg_next(b, 27, &off, &m), 0);
        CHECK(off == 0);
        CHECK_INT(nlparse_msg_next(b, 10, &off, &m), 0);
        /* an attribute past its message, and shorter than its header */
        ao = NLMSG_HDRLEN;
        CHECK_INT(nlparse_attr_next(b, 22, &ao, &a), -EBADMSG);
        ao = NLMSG_HDRLEN;
        CHECK_INT(nlparse_attr_next(b, 18, &ao, &a), -EBADMSG);
        ra = (struct rtattr){.rta_len = 2};
        memcpy(b + 16, &ra, sizeof(ra));
        ao = NLMSG_HDRLEN;
        CHECK_INT(nlparse_attr_next(b, 28, &ao, &a), -EBADMSG);
        /* lengths below the header or not a multiple of 4 */
        nh.nlmsg_len = 12;
        memcpy(b, &nh, sizeof(nh));
        off = 0;
        CHECK_INT(nlparse_msg_next(b, 44, &off, &m), -EBADMSG);
        nh.nlmsg_len = 18;
        memcpy(b, &nh, sizeof(nh));
        CHECK_INT(nlparse_msg_next(b, 44, &off, &m), -EBADMSG);
        CHECK(off == 0);

        /* names: printable, no '/', 1..15 bytes, NUL inside */
        static const struct {
                const char *bytes;
                size_t len;
                int want;
        } names[] = {
                {"eth0", 5, 0}, {"eth0\0pad", 8, 0}, {"", 1, -EBADMSG}, {"eth0", 4, -EBADMSG},
                {"a/b", 4, -EBADMSG}, {"a b", 4, -EBADMSG}, {"\x7f", 2, -EBADMSG},
                {"abcdefghijklmno", 16, 0}, {"abcdefghijklmnop", 17, -EBADMSG},
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                nlparse_attr t = {.type = IFLA_IFNAME, .data = (const uint8_t *)names[i].bytes, .len = names[i].len};
                CHECK_INT(nlparse_attr_name(&t, name), names[i].want);
        }
        CHECK_STR(name, "abcdefghijklmno");
}

int main(void)
{
        test_walker();
        test_usage();
        test_nexthops();
        test_pieces();
        test_bad();
        test_limits();
        return test_done();
}
