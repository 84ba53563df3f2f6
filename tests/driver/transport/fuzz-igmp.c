/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the IGMP timers driven by a stream of joins, leaves, queries, clock steps
 * and timer firings, checked against what the port may see: nothing fires early, what is
 * due fires, join reports only for joined groups, leave reports only for groups left. */
#include "igmp.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GROUPS 40 /* a few more than a port may join (TR_MAX_GROUPS 32) */
#define MAX_JOINED 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct tr_igmp g;
        bool joined[GROUPS] = { false };
        uint32_t list[GROUPS];
        unsigned n_joined = 0;
        uint64_t now = 1000000000ull;
        if (size < 3)
                return 0;
        uint8_t version = (data[0] & 1) ? 3 : 2, robustness = (uint8_t)(1 + data[1] % 7);
        tr_igmp_init(&g, version, robustness, (uint64_t)(1 + data[2]) * 1000000, size);
        for (size_t i = 3; i + 1 < size; i += 2) {
                uint8_t op = data[i] >> 5, arg = data[i + 1], gi = (uint8_t)(arg % GROUPS);
                uint32_t group = htonl(0xef010000u + gi);
                struct tr_igmp_report out[2 * TR_IGMP_SLOTS], now_rep;
                switch (op) {
                case 0: /* join, as tr_port_join: not twice, at most 32 */
                        if (joined[gi] || n_joined >= MAX_JOINED)
                                break;
                        joined[gi] = true;
                        n_joined++;
                        tr_igmp_change(&g, group, false, now, &now_rep);
                        if (now_rep.group != group || now_rep.leave || now_rep.version != version)
                                abort();
                        break;
                case 1: /* leave */
                        if (!joined[gi])
                                break;
                        joined[gi] = false;
                        n_joined--;
                        tr_igmp_change(&g, group, true, now, &now_rep);
                        if (now_rep.group != group || !now_rep.leave)
                                abort();
                        break;
                case 2: { /* a query: type, length and code from the byte */
                        unsigned n = 0;
                        for (unsigned k = 0; k < GROUPS; k++)
                                if (joined[k])
                                        list[n++] = htonl(0xef010000u + k);
                        struct tr_frame f = { .kind = TR_FRAME_IGMP, .igmp_type = (arg & 0x80) ? 0x16 : 0x11,
                                              .igmp_code = (uint8_t)(arg * 37), .igmp_len = (uint16_t)(8 + (arg & 7)),
                                              .igmp_group = (arg & 0x40) ? group : 0 };
                        if (tr_igmp_query(&g, &f, list, n, now) > n)
                                abort();
                        break;
                }
                case 3: case 4: /* the clock moves: up to ~65 s */
                        now += (uint64_t)arg * arg * 1000000;
                        break;
                default: { /* fire, with a short output array at times */
                        unsigned max = (arg & 0x80) ? 1 + arg % 8 : 2 * TR_IGMP_SLOTS;
                        uint64_t next = tr_igmp_next(&g);
                        unsigned n = tr_igmp_due(&g, now, out, max);
                        if (n > max || (now < next && n))
                                abort();
                        for (unsigned k = 0; k < n; k++) {
                                unsigned idx = ntohl(out[k].group) - 0xef010000u;
                                if (idx >= GROUPS || out[k].leave == joined[idx] ||
                                    (out[k].version != 2 && out[k].version != 3) ||
                                    (out[k].leave && out[k].version != version))
                                        abort();
                        }
                        /* with room for everything, nothing due is left behind */
                        if (max == 2 * TR_IGMP_SLOTS && tr_igmp_next(&g) <= now)
                                abort();
                        break;
                }
                }
        }
        return 0;
}
