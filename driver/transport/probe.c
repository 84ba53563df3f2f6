/* SPDX-License-Identifier: Apache-2.0 */
/* The probe responder of a running port: a probe request (probe_msg.h) to our address on
 * the probe port is answered with the same bytes as a reply, back to the MAC, address
 * and port it came from, through the control TX queue under a token bucket. Runs on
 * queue 0's thread; never allocates but the reply's mbuf, never logs; counts instead. */
#include <string.h>

#include "port_internal.h"
#include "probe_msg.h"
#include "sizing.h"

void tr_probe_on_udp(struct tr_queue *q, const uint8_t *d, const struct tr_frame *f)
{
        struct tr_port *p = q->port;
        uint8_t out[TR_UDP_HDRS + TR_MBUF_DATAROOM];

        /* never larger than the request, and at most our MTU */
        if (f->payload_len > p->mtu ||
            tr_probe_answer(d + f->payload_off, f->payload_len, out + TR_UDP_HDRS, sizeof(out) - TR_UDP_HDRS) < 0) {
                TR_CNT_DROP(q, TR_DROP_PROBE_MALFORMED);
                return;
        }
        TR_CNT_INC(q, probe_rx);
        struct tr_udp_hdr_args a = {
                .dst_mac = f->src_mac, .src_mac = p->mac, .ip_src = p->ip, .ip_dst = f->ip_src,
                .src_port = p->probe_port, .dst_port = f->src_port, .ip_id = q->ip_id++, .ttl = p->ttl,
                .ip_csum = true, .udp_csum = true,
        };
        if (tr_frame_build_udp(out, f->payload_len, &a) < 0) {
                TR_CNT_DROP(q, TR_DROP_PROBE_MALFORMED);
                return;
        }
        size_t len = TR_UDP_HDRS + f->payload_len;
        if (len < TR_ETH_MIN_FRAME) {
                memset(out + len, 0, TR_ETH_MIN_FRAME - len);
                len = TR_ETH_MIN_FRAME;
        }
        rte_spinlock_lock(&p->arp_lock);
        if (!tr_rate_allow(&p->probe_rate, tr_now_ns(p)))
                TR_CNT_DROP(q, TR_DROP_PROBE_RATE);
        else if (tr_ctl_tx_locked(p, out, len) == 0)
                TR_CNT_INC(q, probe_tx);
        rte_spinlock_unlock(&p->arp_lock);
}
