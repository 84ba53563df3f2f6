/* SPDX-License-Identifier: Apache-2.0 */
/* Frame parser and builders: a round trip, checksums against a reference, and a table of malformed
 * frames that must each be dropped for the right reason; the inline fast paths (UDP parse,
 * header template) against the full parser and builder. */
#include "frame.h"
#include "frame_fast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "testutil.h"

#define ELEMENTSOF_(a) (sizeof(a) / sizeof((a)[0]))

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };

static uint32_t ip4(const char *s)
{
        struct in_addr a;
        inet_pton(AF_INET, s, &a);
        return a.s_addr;
}

/* A valid 32-byte datagram 10.0.0.1:4000 -> 10.0.0.2:5000; returns the frame length. */
static size_t good_udp(uint8_t *f)
{
        memset(f, 0, 128);
        for (int i = 0; i < 32; i++)
                f[TR_UDP_HDRS + i] = (uint8_t)(i * 7);
        struct tr_udp_hdr_args a = { .dst_mac = mac_b, .src_mac = mac_a, .ip_src = ip4("10.0.0.1"),
                                     .ip_dst = ip4("10.0.0.2"), .src_port = 4000, .dst_port = 5000,
                                     .ip_id = 7, .ttl = 64, .ip_csum = true, .udp_csum = true };
        CHECK_INT(tr_frame_build_udp(f, 32, &a), 0);
        return TR_UDP_HDRS + 32;
}

static void fix_ip_csum(uint8_t *f)
{
        uint8_t *ip = f + TR_ETH_HLEN;
        size_t ihl = (size_t)(ip[0] & 0xf) * 4;
        ip[10] = ip[11] = 0;
        uint16_t c = tr_csum_fold(tr_csum_partial(ip, ihl, 0));
        memcpy(ip + 10, &c, 2);
}

static void test_known_checksum(void)
{
        /* the IPv4 header example from RFC 1071-style textbooks: checksum 0xb861 */
        const uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
        uint16_t c = tr_csum_fold(tr_csum_partial(h, 20, 0));
        CHECK_INT(ntohs(c), 0xb861);
        /* odd length: the last byte is the high half of a word */
        const uint8_t o[3] = { 0x01, 0x02, 0x03 };
        CHECK_INT(ntohs(tr_csum_fold(tr_csum_partial(o, 3, 0))), (uint16_t)~(0x0102 + 0x0300));
}

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 17;
        rng_state ^= rng_state << 5;
        return rng_state;
}

/* RFC 1071 the slow way: big-endian 16-bit words, an odd last byte as a high half. */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
        uint32_t s = 0;
        for (size_t i = 0; i + 1 < len; i += 2)
                s += (uint32_t)(p[i] << 8 | p[i + 1]);
        if (len & 1)
                s += (uint32_t)p[len - 1] << 8;
        while (s >> 16)
                s = (s & 0xffff) + (s >> 16);
        return (uint16_t)~s;
}

/* The word-at-a-time sum against the reference, for every length up to 300 (each
 * remainder path of the loop) at every alignment, with random and all-ones data (the
 * carries), and chained partial sums. */
static void test_checksum_reference(void)
{
        static uint8_t buf[320];
        int bad = 0;
        for (int fill = 0; fill < 2; fill++) {
                for (size_t i = 0; i < sizeof(buf); i++)
                        buf[i] = fill ? 0xff : (uint8_t)rng();
                for (size_t off = 0; off < 8; off++)
                        for (size_t len = 0; len <= 300; len++) {
                                uint16_t c = ntohs(tr_csum_fold(tr_csum_partial(buf + off, len, 0)));
                                bad += c != ref_csum(buf + off, len);
                                size_t half = (len / 2) & ~(size_t)1; /* an even split point */
                                uint32_t part = tr_csum_partial(buf + off, half, 0);
                                c = ntohs(tr_csum_fold(tr_csum_partial(buf + off + half, len - half, part)));
                                bad += c != ref_csum(buf + off, len);
                        }
        }
        CHECK_INT(bad, 0);
}

/* Datagrams of every payload size up to 200 parse; one flipped bit in the payload is a
 * UDP checksum drop, one in the IPv4 addresses an IPv4 checksum drop. */
static void test_checksum_verify(void)
{
        static uint8_t f[TR_UDP_HDRS + 256];
        int bad = 0;
        for (size_t n = 0; n <= 200; n++) {
                for (size_t i = 0; i < n; i++)
                        f[TR_UDP_HDRS + i] = (uint8_t)rng();
                struct tr_udp_hdr_args a = { .dst_mac = mac_b, .src_mac = mac_a, .ip_src = ip4("10.0.0.1"),
                                             .ip_dst = ip4("10.0.0.2"), .src_port = 4000, .dst_port = 5000,
                                             .ip_id = (uint16_t)n, .ttl = 64, .ip_csum = true, .udp_csum = true };
                CHECK_INT(tr_frame_build_udp(f, n, &a), 0);
                struct tr_frame r;
                tr_frame_parse(f, TR_UDP_HDRS + n, 0, &r);
                bad += r.kind != TR_FRAME_UDP || r.payload_len != n;
                if (n) {
                        size_t at = TR_UDP_HDRS + rng() % n;
                        uint8_t bit = (uint8_t)(1u << (rng() % 8));
                        f[at] ^= bit;
                        tr_frame_parse(f, TR_UDP_HDRS + n, 0, &r);
                        bad += r.kind != TR_FRAME_DROP || r.drop != TR_DROP_UDP_CHECKSUM;
                        tr_frame_parse(f, TR_UDP_HDRS + n, TR_PARSE_L4_CSUM_DONE, &r);
                        bad += r.kind != TR_FRAME_UDP; /* the NIC said good: not re-checked */
                        f[at] ^= bit;
                }
                size_t at = TR_ETH_HLEN + 12 + rng() % 8;
                f[at] ^= 0x10;
                tr_frame_parse(f, TR_UDP_HDRS + n, 0, &r);
                bad += r.kind != TR_FRAME_DROP || r.drop != TR_DROP_IP_CHECKSUM;
                f[at] ^= 0x10;
        }
        CHECK_INT(bad, 0);
}

static void test_round_trip(void)
{
        uint8_t f[128];
        size_t n = good_udp(f);
        struct tr_frame p;

        tr_frame_parse(f, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        CHECK_INT(p.drop, TR_DROP_NONE);
        CHECK(p.ip_src == ip4("10.0.0.1"));
        CHECK(p.ip_dst == ip4("10.0.0.2"));
        CHECK_INT(p.src_port, 4000);
        CHECK_INT(p.dst_port, 5000);
        CHECK_INT(p.payload_off, 42);
        CHECK_INT(p.payload_len, 32);
        CHECK(memcmp(p.dst_mac, mac_b, 6) == 0);
        CHECK(f[TR_ETH_HLEN + 6] == 0x40); /* DF */
        /* padded to the Ethernet minimum still parses with the UDP length */
        tr_frame_parse(f, 60 > n ? 60 : n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        /* UDP checksum 0 = none: accepted */
        f[40] = f[41] = 0;
        tr_frame_parse(f, n, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        /* checksums done by the NIC: a wrong IP checksum is not looked at */
        n = good_udp(f);
        f[TR_ETH_HLEN + 10] ^= 0xff;
        tr_frame_parse(f, n, TR_PARSE_IP_CSUM_DONE, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        /* zero-length payload */
        struct tr_udp_hdr_args a = { .dst_mac = mac_b, .src_mac = mac_a, .ip_src = ip4("10.0.0.1"),
                                     .ip_dst = ip4("10.0.0.2"), .src_port = 1, .dst_port = 2,
                                     .ttl = 1, .ip_csum = true, .udp_csum = true };
        CHECK_INT(tr_frame_build_udp(f, 0, &a), 0);
        tr_frame_parse(f, 60, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_UDP);
        CHECK_INT(p.payload_len, 0);
        CHECK_INT(tr_frame_build_udp(f, 65536, &a), -EMSGSIZE);
}

enum mut {
        M_TRUNC, M_ETHERTYPE_VLAN, M_IHL4, M_IHL15, M_TOTLEN_BIG, M_TOTLEN_SMALL, M_IPCSUM,
        M_MF, M_FRAGOFF, M_OPTIONS, M_UDPLEN_BIG, M_UDPLEN_SMALL, M_UDPCSUM, M_TCP, M_SRC_MCAST,
        M_VERSION6, M_SRC_LOOP, M_UDP_TRUNC,
};

static const struct {
        enum mut m;
        size_t arg;
        enum tr_drop want;
} cases[] = {
        { M_TRUNC, 0, TR_DROP_RUNT },          { M_TRUNC, 13, TR_DROP_RUNT },
        { M_TRUNC, 14, TR_DROP_IP_TRUNCATED }, { M_TRUNC, 33, TR_DROP_IP_TRUNCATED },
        { M_TRUNC, 41, TR_DROP_IP_LENGTH },    { M_ETHERTYPE_VLAN, 0, TR_DROP_ETHERTYPE },
        { M_IHL4, 0, TR_DROP_IP_IHL },         { M_IHL15, 0, TR_DROP_IP_IHL },
        { M_TOTLEN_BIG, 0, TR_DROP_IP_LENGTH }, { M_TOTLEN_SMALL, 0, TR_DROP_IP_LENGTH },
        { M_IPCSUM, 0, TR_DROP_IP_CHECKSUM },  { M_MF, 0, TR_DROP_IP_FRAGMENT },
        { M_FRAGOFF, 0, TR_DROP_IP_FRAGMENT }, { M_OPTIONS, 0, TR_DROP_IP_OPTIONS },
        { M_UDPLEN_BIG, 0, TR_DROP_UDP_LENGTH }, { M_UDPLEN_SMALL, 0, TR_DROP_UDP_LENGTH },
        { M_UDPCSUM, 0, TR_DROP_UDP_CHECKSUM }, { M_TCP, 0, TR_DROP_PROTO },
        { M_SRC_MCAST, 0, TR_DROP_IP_SRC },    { M_VERSION6, 0, TR_DROP_IP_VERSION },
        { M_SRC_LOOP, 0, TR_DROP_IP_SRC },     { M_UDP_TRUNC, 0, TR_DROP_UDP_TRUNCATED },
};

static void test_malformed(void)
{
        for (size_t i = 0; i < ELEMENTSOF_(cases); i++) {
                uint8_t f[128];
                size_t n = good_udp(f);
                uint8_t *ip = f + TR_ETH_HLEN;
                struct tr_frame p;
                switch (cases[i].m) {
                case M_TRUNC: n = cases[i].arg; break;
                case M_ETHERTYPE_VLAN: f[12] = 0x81; f[13] = 0x00; break;
                case M_IHL4: ip[0] = 0x44; fix_ip_csum(f); break;
                case M_IHL15: ip[0] = 0x4f; n = 60; break;
                case M_TOTLEN_BIG: ip[2] = 0x05; fix_ip_csum(f); break;
                case M_TOTLEN_SMALL: ip[2] = 0; ip[3] = 19; fix_ip_csum(f); break;
                case M_IPCSUM: ip[10] ^= 1; break;
                case M_MF: ip[6] |= 0x20; fix_ip_csum(f); break;
                case M_FRAGOFF: ip[7] = 1; fix_ip_csum(f); break;
                case M_OPTIONS: /* shift UDP 4 bytes right behind a NOP option word */
                        memmove(ip + 24, ip + 20, n - 34);
                        memset(ip + 20, 1, 4);
                        ip[0] = 0x46; ip[3] += 4; n += 4; fix_ip_csum(f); break;
                case M_UDPLEN_BIG: ip[24] = 0; ip[25] = 41; break;
                case M_UDPLEN_SMALL: ip[24] = 0; ip[25] = 7; break;
                case M_UDPCSUM: f[TR_UDP_HDRS + 3] ^= 0x10; break;
                case M_TCP: ip[9] = 6; fix_ip_csum(f); break;
                case M_SRC_MCAST: ip[12] = 239; fix_ip_csum(f); break;
                case M_VERSION6: ip[0] = 0x65; break;
                case M_SRC_LOOP: ip[12] = 127; fix_ip_csum(f); break;
                case M_UDP_TRUNC: ip[2] = 0; ip[3] = 27; fix_ip_csum(f); break;
                }
                tr_frame_parse(f, n, 0, &p);
                if (p.kind != TR_FRAME_DROP || p.drop != cases[i].want)
                        fprintf(stderr, "case %zu: kind %d drop %s, want %s\n", i, p.kind,
                                tr_drop_name(p.drop), tr_drop_name(cases[i].want));
                CHECK_INT(p.kind, TR_FRAME_DROP);
                CHECK_INT(p.drop, cases[i].want);
                /* the inline parse refuses every one of them too (the full parser decides) */
                struct tr_frame fp;
                CHECK(!tr_frame_parse_udp_fast(f, n, 0, &fp));
        }
        struct tr_frame p;
        tr_frame_parse(NULL, 0, 0, &p);
        CHECK_INT(p.drop, TR_DROP_RUNT);
}

/* The inline parse takes the usual datagrams and then agrees with the full parser field
 * by field; what it leaves (rare sources, UDP shorter than the IP payload) the full
 * parser still accepts. */
static void test_fast_parse(void)
{
        for (unsigned len = 0; len <= 300; len++) {
                for (unsigned v = 0; v < 4; v++) {
                        uint8_t f[512], dmac[6] = { 0x02, 0, 0, 0, 0, (uint8_t)v };
                        for (unsigned i = 0; i < len; i++)
                                f[TR_UDP_HDRS + i] = (uint8_t)rng();
                        uint32_t src = htonl(0x0a000000u | (rng() & 0xffffff)), dst = (uint32_t)rng();
                        struct tr_udp_hdr_args a = { .dst_mac = dmac, .src_mac = mac_a, .ip_src = src, .ip_dst = dst,
                                                     .src_port = (uint16_t)rng(), .dst_port = (uint16_t)rng(),
                                                     .ip_id = (uint16_t)rng(), .ttl = 64, .ip_csum = true,
                                                     .udp_csum = v != 1 /* 1: no UDP checksum */ };
                        CHECK_INT(tr_frame_build_udp(f, len, &a), 0);
                        size_t n = TR_UDP_HDRS + len + (v == 3 ? 7 : 0); /* 3: Ethernet padding after it */
                        unsigned flags = v == 2 ? TR_PARSE_IP_CSUM_DONE | TR_PARSE_L4_CSUM_DONE : 0;
                        struct tr_frame full, fast;
                        memset(&fast, 0xee, sizeof(fast));
                        tr_frame_parse(f, n, flags, &full);
                        CHECK_INT(full.kind, TR_FRAME_UDP);
                        bool took = tr_frame_parse_udp_fast(f, n, flags, &fast);
                        CHECK(took);
                        if (!took)
                                continue;
                        CHECK_INT(fast.kind, full.kind);
                        CHECK_INT(fast.drop, full.drop);
                        CHECK(fast.dst_mac == full.dst_mac && fast.src_mac == full.src_mac);
                        CHECK(fast.ip_src == full.ip_src && fast.ip_dst == full.ip_dst);
                        CHECK_INT(fast.src_port, full.src_port);
                        CHECK_INT(fast.dst_port, full.dst_port);
                        CHECK_INT(fast.payload_off, full.payload_off);
                        CHECK_INT(fast.payload_len, full.payload_len);
                        /* a corrupted payload byte: both refuse (the fast one by declining) */
                        if (len && v == 0) {
                                f[TR_UDP_HDRS + len / 2] ^= 0x40;
                                tr_frame_parse(f, n, 0, &full);
                                CHECK_INT(full.drop, TR_DROP_UDP_CHECKSUM);
                                CHECK(!tr_frame_parse_udp_fast(f, n, 0, &fast));
                        }
                }
        }
        /* left to the full parser, which accepts them */
        uint8_t f[128];
        struct tr_frame full, fast;
        size_t n = good_udp(f);
        f[TR_ETH_HLEN + 12] = 240; /* class E source: not refused, not the usual */
        fix_ip_csum(f);
        f[TR_UDP_HDRS - 2] = f[TR_UDP_HDRS - 1] = 0; /* no UDP checksum */
        tr_frame_parse(f, n, 0, &full);
        CHECK_INT(full.kind, TR_FRAME_UDP);
        CHECK(!tr_frame_parse_udp_fast(f, n, 0, &fast));
        n = good_udp(f);
        f[TR_ETH_HLEN + 25] = 8 + 16; /* UDP length 24 of an IP payload of 40 */
        f[TR_UDP_HDRS - 2] = f[TR_UDP_HDRS - 1] = 0;
        tr_frame_parse(f, n, 0, &full);
        CHECK_INT(full.kind, TR_FRAME_UDP);
        CHECK_INT(full.payload_len, 16);
        CHECK(!tr_frame_parse_udp_fast(f, n, 0, &fast));
}

/* The per-flow template writes exactly what tr_frame_build_udp writes. */
static void test_template(void)
{
        struct tr_udp_tmpl t;
        for (unsigned len = 0; len <= 300; len++) {
                for (unsigned v = 0; v < 4; v++) {
                        uint8_t payload[300], want[512], got[512];
                        for (unsigned i = 0; i < len; i++)
                                payload[i] = (uint8_t)rng();
                        struct tr_udp_hdr_args a = { .dst_mac = mac_b, .src_mac = mac_a, .ip_src = (uint32_t)rng(),
                                                     .ip_dst = (uint32_t)rng(), .src_port = (uint16_t)rng(),
                                                     .dst_port = (uint16_t)rng(), .ip_id = (uint16_t)rng(),
                                                     .ttl = (uint8_t)rng(), .ip_csum = v & 1, .udp_csum = v & 2 };
                        memset(want, 0x77, sizeof(want));
                        memset(got, 0x77, sizeof(got));
                        memcpy(want + TR_UDP_HDRS, payload, len);
                        CHECK_INT(tr_frame_build_udp(want, len, &a), 0);
                        tr_udp_tmpl_init(&t, &a);
                        tr_udp_tmpl_write(&t, got, payload, len, a.ip_id, a.ip_csum, a.udp_csum);
                        /* 48 header bytes are written whatever the length: compare the frame */
                        size_t n = TR_UDP_HDRS + len;
                        if (memcmp(want, got, n) != 0)
                                fprintf(stderr, "template: len %u variant %u differs\n", len, v);
                        CHECK(memcmp(want, got, n) == 0);
                        /* and nothing after it (the inline payload copy's last move overlaps
                         * the one before, never the bytes beyond) */
                        for (size_t i = n > 48 ? n : 48; i < n + 32 && i < sizeof(got); i++)
                                CHECK_INT(got[i], 0x77);
                }
        }
        /* a datagram whose UDP sum is 0 is sent as 0xffff by both */
        uint8_t pl[2] = { 0, 0 }, want[64], got[64];
        struct tr_udp_hdr_args a = { .dst_mac = mac_b, .src_mac = mac_a, .ip_src = 0, .ip_dst = 0, .ttl = 1,
                                     .ip_csum = true, .udp_csum = true };
        for (unsigned p0 = 0; p0 < 65536; p0 += 257) {
                a.src_port = (uint16_t)p0;
                a.dst_port = (uint16_t)~p0;
                memcpy(want + TR_UDP_HDRS, pl, 2);
                tr_frame_build_udp(want, 2, &a);
                tr_udp_tmpl_init(&t, &a);
                tr_udp_tmpl_write(&t, got, pl, 2, 0, true, true);
                CHECK(memcmp(want, got, TR_UDP_HDRS + 2) == 0);
        }
}

static void test_arp(void)
{
        uint8_t f[TR_ETH_MIN_FRAME];
        struct tr_frame p;
        static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

        CHECK_INT(tr_frame_build_arp(f, 1, bc, mac_a, ip4("10.0.0.1"), NULL, ip4("10.0.0.2")), 60);
        tr_frame_parse(f, 60, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_ARP);
        CHECK_INT(p.arp_op, 1);
        CHECK(p.arp_spa == ip4("10.0.0.1"));
        CHECK(p.arp_tpa == ip4("10.0.0.2"));
        CHECK(memcmp(p.arp_sha, mac_a, 6) == 0);
        /* exactly 42 bytes is enough; 41 is not */
        tr_frame_parse(f, 42, 0, &p);
        CHECK_INT(p.kind, TR_FRAME_ARP);
        tr_frame_parse(f, 41, 0, &p);
        CHECK_INT(p.drop, TR_DROP_ARP_MALFORMED);
        /* odd hardware size, protocol size, hardware type, opcode, multicast sender */
        static const struct { size_t off; uint8_t v; } bad[] = {
                { 18, 8 }, { 19, 16 }, { 15, 6 }, { 16, 0x86 }, { 21, 3 }, { 22, 0x01 },
        };
        for (size_t i = 0; i < ELEMENTSOF_(bad); i++) {
                tr_frame_build_arp(f, 1, bc, mac_a, ip4("10.0.0.1"), NULL, ip4("10.0.0.2"));
                f[bad[i].off] = bad[i].v;
                tr_frame_parse(f, 60, 0, &p);
                CHECK_INT(p.kind, TR_FRAME_DROP);
                CHECK_INT(p.drop, TR_DROP_ARP_MALFORMED);
        }
}

static void test_igmp(void)
{
        uint8_t f[64];
        struct tr_frame p;
        for (int v = 2; v <= 3; v++)
                for (int leave = 0; leave <= 1; leave++) {
                        size_t n = tr_frame_build_igmp(f, v, leave, mac_a, ip4("10.0.0.1"), ip4("239.1.2.3"));
                        tr_frame_parse(f, n, 0, &p);
                        CHECK_INT(p.kind, TR_FRAME_IGMP);
                        CHECK_INT(p.igmp_type, v == 3 ? 0x22 : leave ? 0x17 : 0x16);
                        CHECK_INT(f[0], 0x01);
                        CHECK_INT(f[2], 0x5e);
                        CHECK_INT(f[TR_ETH_HLEN + 20], 0x94); /* router alert */
                        if (v == 2)
                                CHECK(p.igmp_group == ip4("239.1.2.3"));
                }
        uint8_t mac[6];
        tr_ipv4_mcast_mac(ip4("239.129.2.3"), mac);
        CHECK(mac[3] == 0x01 && mac[4] == 2 && mac[5] == 3);
        CHECK(tr_ipv4_is_multicast(ip4("224.0.0.1")));
        CHECK(!tr_ipv4_is_multicast(ip4("10.0.0.1")));
}

static void test_names(void)
{
        for (int i = 0; i < TR_DROP__MAX; i++)
                CHECK(strcmp(tr_drop_name((enum tr_drop)i), "?") != 0);
        CHECK_STR(tr_drop_name(TR_DROP__MAX), "?");
        CHECK_STR(tr_drop_name(TR_DROP_IP_IHL), "ip_ihl");
}

int main(void)
{
        test_known_checksum();
        test_checksum_reference();
        test_checksum_verify();
        test_round_trip();
        test_malformed();
        test_fast_parse();
        test_template();
        test_arp();
        test_igmp();
        test_names();
        return test_done();
}
