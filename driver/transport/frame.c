/* SPDX-License-Identifier: Apache-2.0 */
/* Ethernet/ARP/IPv4/UDP/IGMP parsing and header building. Pure: no I/O, no globals, no
 * DPDK, never logs; every read is preceded by a length check. */
#include "frame.h"
#include "frame_fast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

static const char *const drop_names[TR_DROP__MAX] = {
        [TR_DROP_NONE] = "none",
        [TR_DROP_RUNT] = "runt",
        [TR_DROP_ETHERTYPE] = "ethertype",
        [TR_DROP_NOT_OUR_MAC] = "not_our_mac",
        [TR_DROP_ARP_MALFORMED] = "arp_malformed",
        [TR_DROP_IP_TRUNCATED] = "ip_truncated",
        [TR_DROP_IP_VERSION] = "ip_version",
        [TR_DROP_IP_IHL] = "ip_ihl",
        [TR_DROP_IP_OPTIONS] = "ip_options",
        [TR_DROP_IP_LENGTH] = "ip_length",
        [TR_DROP_IP_CHECKSUM] = "ip_checksum",
        [TR_DROP_IP_FRAGMENT] = "ip_fragment",
        [TR_DROP_IP_SRC] = "ip_src",
        [TR_DROP_PROTO] = "proto",
        [TR_DROP_UDP_TRUNCATED] = "udp_truncated",
        [TR_DROP_UDP_LENGTH] = "udp_length",
        [TR_DROP_UDP_CHECKSUM] = "udp_checksum",
        [TR_DROP_IGMP_MALFORMED] = "igmp_malformed",
        [TR_DROP_NOT_FOR_US] = "not_for_us",
        [TR_DROP_NO_ENDPOINT] = "no_endpoint",
        [TR_DROP_ARP_RATE] = "arp_rate",
        [TR_DROP_TOO_BIG] = "too_big",
        [TR_DROP_PROBE_RATE] = "probe_rate",
        [TR_DROP_PROBE_MALFORMED] = "probe_malformed",
};

const char *tr_drop_name(enum tr_drop d)
{
        if ((unsigned)d >= TR_DROP__MAX)
                return "?";
        return drop_names[d];
}

uint32_t tr_csum_partial(const void *buf, size_t len, uint32_t sum)
{
        uint64_t s = fr_sum64(buf, len, sum);
        s = (s & 0xffffffffu) + (s >> 32);
        s = (s & 0xffffffffu) + (s >> 32);
        return (uint32_t)s;
}

uint16_t tr_csum_fold(uint32_t sum)
{
        return fr_fold64(sum);
}

static void drop(struct tr_frame *f, enum tr_drop why)
{
        f->kind = TR_FRAME_DROP;
        f->drop = why;
}

static void parse_arp(const uint8_t *a, size_t len, struct tr_frame *f)
{
        if (len < TR_ARP_LEN)
                return drop(f, TR_DROP_ARP_MALFORMED);
        if (fr_rd16(a) != 1 || fr_rd16(a + 2) != TR_ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
                return drop(f, TR_DROP_ARP_MALFORMED);
        uint16_t op = fr_rd16(a + 6);
        if (op != 1 && op != 2)
                return drop(f, TR_DROP_ARP_MALFORMED);
        f->arp_op = op;
        memcpy(f->arp_sha, a + 8, 6);
        f->arp_spa = fr_rd32_raw(a + 14);
        f->arp_tpa = fr_rd32_raw(a + 24);
        if (f->arp_sha[0] & 1) /* a multicast sender hardware address is a lie */
                return drop(f, TR_DROP_ARP_MALFORMED);
        f->kind = TR_FRAME_ARP;
}

void tr_frame_parse(const uint8_t *frame, size_t len, unsigned flags, struct tr_frame *f)
{
        f->kind = TR_FRAME_DROP;
        f->drop = TR_DROP_NONE;
        if (!frame || len < TR_ETH_HLEN)
                return drop(f, TR_DROP_RUNT);
        f->dst_mac = frame;
        f->src_mac = frame + 6;
        uint16_t et = fr_rd16(frame + 12);
        const uint8_t *ip = frame + TR_ETH_HLEN;
        size_t room = len - TR_ETH_HLEN;

        if (et != TR_ETHERTYPE_IPV4) {
                if (et == TR_ETHERTYPE_ARP)
                        return parse_arp(ip, room, f);
                return drop(f, TR_DROP_ETHERTYPE);
        }

        if (room < TR_IP_HLEN)
                return drop(f, TR_DROP_IP_TRUNCATED);
        size_t ihl = TR_IP_HLEN;
        if (ip[0] != 0x45) { /* not the usual version 4 without options: check each part */
                if ((ip[0] >> 4) != 4)
                        return drop(f, TR_DROP_IP_VERSION);
                ihl = (size_t)(ip[0] & 0xf) * 4;
                if (ihl < TR_IP_HLEN || ihl > room)
                        return drop(f, TR_DROP_IP_IHL);
        }
        size_t tot = fr_rd16(ip + 2);
        if (tot < ihl || tot > room)
                return drop(f, TR_DROP_IP_LENGTH);
        if (!(flags & TR_PARSE_IP_CSUM_DONE) &&
            !fr_csum_ok(ihl == TR_IP_HLEN ? fr_sum_ip20(ip) : fr_sum64(ip, ihl, 0)))
                return drop(f, TR_DROP_IP_CHECKSUM);
        if (fr_rd16(ip + 6) & 0x3fff) /* MF or a fragment offset */
                return drop(f, TR_DROP_IP_FRAGMENT);
        f->ip_src = fr_rd32_raw(ip + 12);
        f->ip_dst = fr_rd32_raw(ip + 16);
        if (fr_bad_source(f->ip_src))
                return drop(f, TR_DROP_IP_SRC);

        const uint8_t *l4 = ip + ihl;
        size_t l4len = tot - ihl;
        if (ip[9] == TR_IPPROTO_IGMP) {
                if (l4len < 8 || !fr_csum_ok(fr_sum64(l4, l4len, 0)))
                        return drop(f, TR_DROP_IGMP_MALFORMED);
                f->igmp_type = l4[0];
                f->igmp_code = l4[1];
                f->igmp_len = (uint16_t)l4len;
                f->igmp_group = fr_rd32_raw(l4 + 4);
                f->kind = TR_FRAME_IGMP;
                return;
        }
        if (ip[9] != TR_IPPROTO_UDP)
                return drop(f, TR_DROP_PROTO);
        if (ihl != TR_IP_HLEN)
                return drop(f, TR_DROP_IP_OPTIONS);
        if (l4len < TR_UDP_HLEN)
                return drop(f, TR_DROP_UDP_TRUNCATED);
        size_t ulen = fr_rd16(l4 + 4);
        if (ulen < TR_UDP_HLEN || ulen > l4len)
                return drop(f, TR_DROP_UDP_LENGTH);
        if (!(flags & TR_PARSE_L4_CSUM_DONE) && fr_rd16(l4 + 6) != 0) {
                if (!fr_csum_ok(fr_sum64(l4, ulen, fr_pseudo_sum(f->ip_src, f->ip_dst, (uint16_t)ulen))))
                        return drop(f, TR_DROP_UDP_CHECKSUM);
        }
        f->src_port = fr_rd16(l4);
        f->dst_port = fr_rd16(l4 + 2);
        f->payload_off = (uint16_t)(TR_UDP_HDRS);
        f->payload_len = (uint16_t)(ulen - TR_UDP_HLEN);
        f->kind = TR_FRAME_UDP;
}

static void write_ipv4(uint8_t *ip, size_t ihl, size_t tot, uint16_t id, uint8_t ttl,
                       uint8_t proto, uint32_t src, uint32_t dst, bool csum)
{
        ip[0] = (uint8_t)(0x40 | (ihl / 4));
        ip[1] = 0;
        fr_wr16(ip + 2, (uint16_t)tot);
        fr_wr16(ip + 4, id);
        fr_wr16(ip + 6, 0x4000); /* DF */
        ip[8] = ttl;
        ip[9] = proto;
        ip[10] = ip[11] = 0;
        memcpy(ip + 12, &src, 4);
        memcpy(ip + 16, &dst, 4);
        if (csum) {
                uint16_t c = fr_fold64(ihl == TR_IP_HLEN ? fr_sum_ip20(ip) : fr_sum64(ip, ihl, 0));
                memcpy(ip + 10, &c, 2);
        }
}

int tr_frame_build_udp(uint8_t *hdr, size_t payload_len, const struct tr_udp_hdr_args *a)
{
        if (payload_len > 65535 - TR_IP_HLEN - TR_UDP_HLEN)
                return -EMSGSIZE;
        uint16_t ulen = (uint16_t)(payload_len + TR_UDP_HLEN);

        memcpy(hdr, a->dst_mac, 6);
        memcpy(hdr + 6, a->src_mac, 6);
        fr_wr16(hdr + 12, TR_ETHERTYPE_IPV4);
        write_ipv4(hdr + TR_ETH_HLEN, TR_IP_HLEN, (size_t)ulen + TR_IP_HLEN, a->ip_id, a->ttl,
                   TR_IPPROTO_UDP, a->ip_src, a->ip_dst, a->ip_csum);
        uint8_t *u = hdr + TR_ETH_HLEN + TR_IP_HLEN;
        fr_wr16(u, a->src_port);
        fr_wr16(u + 2, a->dst_port);
        fr_wr16(u + 4, ulen);
        u[6] = u[7] = 0;
        if (a->udp_csum) {
                uint16_t c = fr_fold64(fr_sum64(u, ulen, fr_pseudo_sum(a->ip_src, a->ip_dst, ulen)));
                if (c == 0)
                        c = 0xffff; /* 0 means "no checksum" in UDP over IPv4 */
                memcpy(u + 6, &c, 2);
        }
        return 0;
}

void tr_udp_tmpl_init(struct tr_udp_tmpl *t, const struct tr_udp_hdr_args *a)
{
        struct tr_udp_hdr_args z = *a;
        memset(t, 0, sizeof(*t));
        z.ip_id = 0;
        z.ip_csum = z.udp_csum = false;
        (void)tr_frame_build_udp(t->hdr, 0, &z); /* lengths are each datagram's: zeroed below */
        uint8_t *ip = t->hdr + TR_ETH_HLEN, *u = ip + TR_IP_HLEN;
        ip[2] = ip[3] = 0;
        u[4] = u[5] = 0;
        t->ip_sum = fr_fold_hi16(fr_sum_ip20(ip)) >> 16;
        t->udp_sum = (uint64_t)a->ip_src + a->ip_dst + fr_be16(TR_IPPROTO_UDP) + fr_rd16_raw(u) + fr_rd16_raw(u + 2);
}

size_t tr_frame_build_arp(uint8_t out[TR_ETH_MIN_FRAME], uint16_t op, const uint8_t eth_dst[6],
                          const uint8_t sha[6], uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
        memset(out, 0, TR_ETH_MIN_FRAME);
        memcpy(out, eth_dst, 6);
        memcpy(out + 6, sha, 6);
        fr_wr16(out + 12, TR_ETHERTYPE_ARP);
        uint8_t *a = out + TR_ETH_HLEN;
        fr_wr16(a, 1);
        fr_wr16(a + 2, TR_ETHERTYPE_IPV4);
        a[4] = 6;
        a[5] = 4;
        fr_wr16(a + 6, op);
        memcpy(a + 8, sha, 6);
        memcpy(a + 14, &spa, 4);
        if (tha)
                memcpy(a + 18, tha, 6);
        memcpy(a + 24, &tpa, 4);
        return TR_ETH_MIN_FRAME;
}

unsigned tr_igmp_max_resp_ds(uint8_t code, uint16_t igmp_len)
{
        if (igmp_len < 12) /* v1 (code 0: 10 s) or v2 */
                return code ? code : 100;
        if (code < 128)
                return code;
        return (unsigned)((code & 0x0f) | 0x10) << (((code >> 4) & 0x07) + 3);
}

void tr_ipv4_mcast_mac(uint32_t group, uint8_t ret[6])
{
        const uint8_t *g = (const uint8_t *)&group;
        ret[0] = 0x01;
        ret[1] = 0x00;
        ret[2] = 0x5e;
        ret[3] = g[1] & 0x7f;
        ret[4] = g[2];
        ret[5] = g[3];
}

size_t tr_frame_build_igmp(uint8_t out[64], int version, bool leave, const uint8_t src_mac[6],
                           uint32_t ip_src, uint32_t group)
{
        static const uint8_t all_routers[4] = { 224, 0, 0, 2 };
        static const uint8_t igmpv3_routers[4] = { 224, 0, 0, 22 };
        uint32_t dst;
        size_t l4len;
        uint8_t *ip = out + TR_ETH_HLEN, *g;

        memset(out, 0, 64);
        if (version == 3) {
                memcpy(&dst, igmpv3_routers, 4);
                l4len = 16;
        } else if (leave) {
                memcpy(&dst, all_routers, 4);
                l4len = 8;
        } else {
                dst = group;
                l4len = 8;
        }
        tr_ipv4_mcast_mac(dst, out);
        memcpy(out + 6, src_mac, 6);
        fr_wr16(out + 12, TR_ETHERTYPE_IPV4);
        /* Router Alert option (RFC 2113), as RFC 2236/3376 require */
        ip[20] = 0x94;
        ip[21] = 0x04;
        ip[22] = ip[23] = 0;
        write_ipv4(ip, 24, 24 + l4len, 0, 1, TR_IPPROTO_IGMP, ip_src, dst, true);
        g = ip + 24;
        if (version == 3) {
                g[0] = 0x22;    /* v3 membership report */
                fr_wr16(g + 6, 1); /* one group record */
                g[8] = leave ? 3 : 2; /* CHANGE_TO_INCLUDE_MODE {} : MODE_IS_EXCLUDE {} */
                memcpy(g + 12, &group, 4);
        } else {
                g[0] = leave ? 0x17 : 0x16;
                memcpy(g + 4, &group, 4);
        }
        uint16_t c = tr_csum_fold(tr_csum_partial(g, l4len, 0));
        memcpy(g + 2, &c, 2);
        size_t n = TR_ETH_HLEN + 24 + l4len;
        return n < TR_ETH_MIN_FRAME ? TR_ETH_MIN_FRAME : n;
}
