/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the frame parser on arbitrary bytes (with and without offload flags). A
 * datagram it accepts must lie inside the frame, and must survive a rebuild + re-parse
 * (with tr_frame_build_udp and with the header template, which must agree). The inline
 * UDP parse may decline anything, but what it takes the full parser takes alike. */
#include "frame.h"
#include "frame_fast.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tr_frame f;
        /* a private copy, exactly size bytes, so ASan sees any overread */
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        for (unsigned flags = 0; flags < 4; flags++) {
                tr_frame_parse(buf, size, flags, &f);
                struct tr_frame fast;
                if (tr_frame_parse_udp_fast(buf, size, flags, &fast) &&
                    (f.kind != TR_FRAME_UDP || fast.kind != f.kind || fast.drop != f.drop || fast.dst_mac != f.dst_mac ||
                     fast.src_mac != f.src_mac || fast.ip_src != f.ip_src || fast.ip_dst != f.ip_dst ||
                     fast.src_port != f.src_port || fast.dst_port != f.dst_port ||
                     fast.payload_off != f.payload_off || fast.payload_len != f.payload_len))
                        abort();
                if (f.kind == TR_FRAME_DROP && (f.drop == TR_DROP_NONE || f.drop >= TR_DROP__MAX))
                        abort();
                if (f.kind == TR_FRAME_IGMP && (size_t)TR_ETH_HLEN + TR_IP_HLEN + f.igmp_len > size)
                        abort();
                if (f.kind == TR_FRAME_UDP) {
                        if ((size_t)f.payload_off + f.payload_len > size)
                                abort();
                        static uint8_t out[65536 + 64];
                        memcpy(out + TR_UDP_HDRS, buf + f.payload_off, f.payload_len);
                        struct tr_udp_hdr_args a = { .dst_mac = f.dst_mac, .src_mac = f.src_mac,
                                                     .ip_src = f.ip_src, .ip_dst = f.ip_dst,
                                                     .src_port = f.src_port, .dst_port = f.dst_port,
                                                     .ttl = 1, .ip_csum = true, .udp_csum = true };
                        struct tr_frame g;
                        if (tr_frame_build_udp(out, f.payload_len, &a) != 0)
                                abort();
                        tr_frame_parse(out, TR_UDP_HDRS + f.payload_len, 0, &g);
                        if (g.kind != TR_FRAME_UDP || g.payload_len != f.payload_len ||
                            g.dst_port != f.dst_port || memcmp(out + g.payload_off, buf + f.payload_off, f.payload_len))
                                abort();
                        static uint8_t out2[65536 + 64];
                        struct tr_udp_tmpl t;
                        tr_udp_tmpl_init(&t, &a);
                        tr_udp_tmpl_write(&t, out2, buf + f.payload_off, f.payload_len, 0, true, true);
                        if (memcmp(out, out2, TR_UDP_HDRS + f.payload_len) != 0)
                                abort();
                }
        }
        free(buf);
        return 0;
}
