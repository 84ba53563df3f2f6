/* SPDX-License-Identifier: Apache-2.0 */
/* The frame module's data-path half, inline so that the poller and the sender compile it
 * into their loops: the one's complement sum helpers, the common-case UDP parse (which
 * must agree with tr_frame_parse wherever it accepts a frame: test-frame and fuzz-frame
 * check it) and the per-flow header template. Pure: no I/O, no DPDK, never logs. Private
 * to driver/transport (frame.c and datapath.c). */
#ifndef TR_FRAME_FAST_H
#define TR_FRAME_FAST_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "frame.h"

static inline uint16_t fr_rd16(const uint8_t *p)
{
        return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint16_t fr_rd16_raw(const uint8_t *p)
{
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
}

/* The host-order load of v stored in network order (a byte swap on little-endian). */
static inline uint16_t fr_be16(uint16_t v)
{
        return htons(v);
}

static inline void fr_wr16(uint8_t *p, uint16_t v)
{
        uint16_t be = fr_be16(v); /* one swap and one store, not two byte stores */
        memcpy(p, &be, 2);
}

static inline uint32_t fr_rd32_raw(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}

static inline uint64_t fr_rd64_raw(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}

/* Four bytes in memory order as a host-order load sees them (a constant once folded). */
static inline uint32_t fr_bytes4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
        const uint8_t x[4] = { a, b, c, d };
        uint32_t v;
        memcpy(&v, x, 4);
        return v;
}

/* s + v with the end-around carry of one's complement addition. Written with the
 * overflow builtin, which gcc and clang turn into add, adc (the "s + (s < v)" form turns
 * into cmp/setb/adc chains once several are in a row). */
static inline uint64_t fr_add_c(uint64_t s, uint64_t v)
{
        uint64_t t;
        unsigned carry = __builtin_add_overflow(s, v, &t);
        return t + carry;
}

/* One's complement sum of len bytes into a 64-bit accumulator with end-around carry;
 * words are loaded in host order, which folding makes position-independent (RFC 1071).
 * 32 bytes per loop turn, then the remainder by its binary digits: no per-word loop
 * bookkeeping (this is most of the software-checksum cost of a small datagram). */
static inline uint64_t fr_sum64(const uint8_t *p, size_t len, uint64_t s)
{
        if (len >= 32) {
                /* two carry chains, not one: they run side by side */
                uint64_t t = 0;
                do {
                        s = fr_add_c(s, fr_rd64_raw(p));
                        t = fr_add_c(t, fr_rd64_raw(p + 8));
                        s = fr_add_c(s, fr_rd64_raw(p + 16));
                        t = fr_add_c(t, fr_rd64_raw(p + 24));
                        p += 32;
                        len -= 32;
                } while (len >= 32);
                s = fr_add_c(s, t);
        }
        if (len & 16) {
                s = fr_add_c(s, fr_rd64_raw(p));
                s = fr_add_c(s, fr_rd64_raw(p + 8));
                p += 16;
        }
        if (len & 8) {
                s = fr_add_c(s, fr_rd64_raw(p));
                p += 8;
        }
        /* a multiple of 8 bytes skips the rest with one test: every Aeron datagram is one
         * (frames are 32-byte aligned, so a UDP length is 8 + 32k) */
        if (__builtin_expect((len & 7) != 0, 0)) {
                if (len & 4) {
                        s = fr_add_c(s, fr_rd32_raw(p));
                        p += 4;
                }
                if (len & 2) {
                        s = fr_add_c(s, fr_rd16_raw(p));
                        p += 2;
                }
                if (len & 1) {
                        uint16_t v = 0;
                        memcpy(&v, p, 1); /* the odd byte is the first (network-high) byte of a word */
                        s = fr_add_c(s, v);
                }
        }
        return s;
}

/* Copy len bytes from src to dst and add them to s as fr_sum64 does, in one pass: the
 * payload of a datagram being built is read once. */
static inline uint64_t fr_copy_sum64(uint8_t *dst, const uint8_t *src, size_t len, uint64_t s)
{
        if (len >= 32) {
                uint64_t t = 0;
                do {
                        uint64_t a = fr_rd64_raw(src), b = fr_rd64_raw(src + 8), c = fr_rd64_raw(src + 16),
                                 d = fr_rd64_raw(src + 24);
                        memcpy(dst, &a, 8);
                        memcpy(dst + 8, &b, 8);
                        memcpy(dst + 16, &c, 8);
                        memcpy(dst + 24, &d, 8);
                        s = fr_add_c(fr_add_c(s, a), c);
                        t = fr_add_c(fr_add_c(t, b), d);
                        src += 32;
                        dst += 32;
                        len -= 32;
                } while (len >= 32);
                s = fr_add_c(s, t);
        }
        if (len) {
                memcpy(dst, src, len);
                s = fr_sum64(dst, len, s);
        }
        return s;
}

/* Copy len bytes, inline: 16-byte moves and a last one that overlaps the one before (16
 * to 32 bytes: two moves and one test; a datagram's payload is rarely under 16 bytes,
 * those take memcpy). Reads and writes only
 * [src, src + len) and [dst, dst + len). Where no checksum is summed (no_udp_csum), this
 * is what is left of a payload's cost: libc's memcpy call costs more than the moves. */
static inline void fr_copy(uint8_t *dst, const uint8_t *src, size_t len)
{
        if (__builtin_expect(len < 16, 0)) {
                memcpy(dst, src, len);
                return;
        }
        if (len > 32)
                for (size_t i = 16; i + 16 < len; i += 16)
                        memcpy(dst + i, src + i, 16);
        memcpy(dst, src, 16);
        memcpy(dst + len - 16, src + len - 16, 16);
}

static inline uint64_t fr_rol64(uint64_t x, unsigned k)
{
        return (x << k) | (x >> (64 - k));
}

static inline uint32_t fr_rol32(uint32_t x, unsigned k)
{
        return (x << k) | (x >> (32 - k));
}

/* The end-around-carry sum of s's 16-bit words in the top half of the result: adding a
 * value to itself rotated by half its width puts lo + hi + (carry out of lo + hi) in the
 * high half, which cannot carry out again. Two steps: 64 -> 32 -> 16 bits. */
static inline uint32_t fr_fold_hi16(uint64_t s)
{
        uint32_t x = (uint32_t)((s + fr_rol64(s, 32)) >> 32);
        return x + fr_rol32(x, 16);
}

/* The checksum to store (host-order store of the complemented fold). */
static inline uint16_t fr_fold64(uint64_t s)
{
        return (uint16_t)~(fr_fold_hi16(s) >> 16);
}

/* A received header or datagram verifies when its sum folds to 0xffff (fr_fold64(s) == 0). */
static inline bool fr_csum_ok(uint64_t s)
{
        return fr_fold_hi16(s) >= 0xffff0000u;
}

/* The common 20-byte IPv4 header: 8 + 8 + 4 bytes. */
static inline uint64_t fr_sum_ip20(const uint8_t *ip)
{
        return fr_add_c(fr_add_c(fr_rd64_raw(ip), fr_rd64_raw(ip + 8)), fr_rd32_raw(ip + 16));
}

/* Sum of the UDP pseudo header: the host-order loads of its network-order words. */
static inline uint64_t fr_pseudo_sum(uint32_t src, uint32_t dst, uint16_t udp_len)
{
        return (uint64_t)src + dst + fr_be16(TR_IPPROTO_UDP) + fr_be16(udp_len);
}

/* A received datagram's UDP checksum verifies. Out of line: inlined into the poller's
 * loop, fr_sum64's two chains spilled to the stack (343 instead of 351 a datagram on memif).
 * "unused": a file that includes this header without the parse does not call it. */
static __attribute__((noinline, unused)) bool fr_udp_sum_ok(const uint8_t *u, size_t ulen, uint64_t pseudo)
{
        return fr_csum_ok(fr_sum64(u, ulen, pseudo));
}

/* Zero, broadcast, multicast or loopback: not a source we accept. */
static inline bool fr_bad_source(uint32_t ip_be)
{
        const uint8_t *b = (const uint8_t *)&ip_be;
        return ip_be == 0 || ip_be == 0xffffffffu || (b[0] & 0xf0) == 0xe0 || b[0] == 127;
}

/* The common case of tr_frame_parse: Ethernet, a 20-byte IPv4 header, not a fragment,
 * UDP whose length is exactly the IP payload's. Returns true with f filled as
 * tr_frame_parse fills it for such a frame (kind TR_FRAME_UDP); false for anything else,
 * drops included, and then f is unspecified: the caller calls tr_frame_parse, which
 * decides. Never reads beyond len. */
static inline bool tr_frame_parse_udp_fast(const uint8_t *frame, size_t len, unsigned flags,
                                           struct tr_frame *f)
{
        if (len < TR_UDP_HDRS)
                return false;
        const uint8_t *ip = frame + TR_ETH_HLEN, *u = ip + TR_IP_HLEN;
        size_t tot = fr_rd16(ip + 2);
        /* ethertype IPv4 and version/IHL 0x45 in one compare; no MF, no offset; UDP */
        if ((fr_rd32_raw(frame + 12) & fr_bytes4(0xff, 0xff, 0xff, 0)) != fr_bytes4(0x08, 0x00, 0x45, 0))
                return false;
        /* no MF, no fragment offset (DF may be set), any TTL, UDP: bytes 6-9 in one compare */
        if ((fr_rd32_raw(ip + 6) & fr_bytes4(0x3f, 0xff, 0, 0xff)) != fr_bytes4(0, 0, 0, TR_IPPROTO_UDP))
                return false;
        if (tot > len - TR_ETH_HLEN || tot < TR_IP_HLEN + TR_UDP_HLEN || fr_rd16(u + 4) != tot - TR_IP_HLEN)
                return false;
        uint32_t src = fr_rd32_raw(ip + 12), dst = fr_rd32_raw(ip + 16);
        /* a source in 1-126 or 128-223: certainly not one fr_bad_source refuses (the rare
         * rest goes to tr_frame_parse) */
        uint8_t s0 = ip[12];
        if ((uint8_t)(s0 - 1) >= 126 && (uint8_t)(s0 - 128) >= 96)
                return false;
        if (!(flags & TR_PARSE_IP_CSUM_DONE) && !fr_csum_ok(fr_sum_ip20(ip)))
                return false;
        size_t ulen = tot - TR_IP_HLEN;
        if (!(flags & TR_PARSE_L4_CSUM_DONE) && fr_rd16_raw(u + 6) != 0 &&
            !fr_udp_sum_ok(u, ulen, fr_pseudo_sum(src, dst, (uint16_t)ulen)))
                return false;
        f->kind = TR_FRAME_UDP;
        f->drop = TR_DROP_NONE;
        f->dst_mac = frame;
        f->src_mac = frame + 6;
        f->ip_src = src;
        f->ip_dst = dst;
        f->src_port = fr_rd16(u);
        f->dst_port = fr_rd16(u + 2);
        f->payload_off = TR_UDP_HDRS;
        f->payload_len = (uint16_t)(ulen - TR_UDP_HLEN);
        return true;
}

/* A datagram's headers for one flow (destination MAC and address, our MAC, address and
 * port, the TTL), built once by tr_udp_tmpl_init; each datagram copies them and fills in
 * the lengths, the id and the checksums. tr_udp_tmpl_write's frame is byte for byte
 * tr_frame_build_udp's (test-frame checks it). */
struct tr_udp_tmpl {
        uint8_t hdr[48];  /* the 42 bytes of headers; 48 so that three 16-byte moves copy it */
        uint32_t ip_sum;  /* sum of the IPv4 header with length, id and checksum 0, folded
                             to 16 bits: a datagram adds its length and id and folds once */
        uint32_t pad;
        uint64_t udp_sum; /* pseudo header without the length, and the two ports */
};

void tr_udp_tmpl_init(struct tr_udp_tmpl *t, const struct tr_udp_hdr_args *a);

/* Headers into d and the payload after them; len no more than 65535 - 28 (the caller
 * checked it against the MTU). Checksums in software as asked, else left 0. */
static inline __attribute__((always_inline)) void tr_udp_tmpl_write(const struct tr_udp_tmpl *t, uint8_t *d,
                                                                   const void *payload,
                                     size_t len, uint16_t ip_id, bool ip_csum, bool udp_csum)
{
        uint16_t ulen = (uint16_t)(len + TR_UDP_HLEN), tot = (uint16_t)(ulen + TR_IP_HLEN);
        uint8_t *ip = d + TR_ETH_HLEN, *u = ip + TR_IP_HLEN;
        memcpy(d, t->hdr, 48); /* bytes 42..47 are the payload's, copied next */
        fr_wr16(ip + 2, tot);
        fr_wr16(ip + 4, ip_id);
        fr_wr16(u + 4, ulen);
        if (ip_csum) {
                /* three 16-bit values: no carry out of 32 bits, one fold (fr_fold_hi16's second step) */
                uint32_t x = t->ip_sum + fr_be16(tot) + fr_be16(ip_id);
                uint16_t c = (uint16_t)~((x + fr_rol32(x, 16)) >> 16);
                memcpy(ip + 10, &c, 2);
        }
        if (!udp_csum) {
                fr_copy(d + TR_UDP_HDRS, payload, len);
        } else {
                uint64_t s = fr_copy_sum64(d + TR_UDP_HDRS, payload, len, t->udp_sum + 2u * fr_be16(ulen));
                uint16_t c = fr_fold64(s);
                if (c == 0)
                        c = 0xffff; /* 0 means "no checksum" in UDP over IPv4 */
                memcpy(u + 6, &c, 2);
        }
}

#endif
