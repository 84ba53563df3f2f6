/* SPDX-License-Identifier: Apache-2.0 */
/* IGMP host-side timers in a fixed table. Pure: no I/O, no globals, never logs; the
 * caller passes the time, sends the reports and locks. */
#include "igmp.h"

#include <string.h>

void tr_igmp_init(struct tr_igmp *g, uint8_t version, uint8_t robustness, uint64_t uri_ns,
                  uint64_t seed)
{
        memset(g, 0, sizeof(*g));
        g->version = version;
        g->robustness = robustness;
        g->uri_ns = uri_ns ? uri_ns : 1;
        g->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
        g->next = TR_IGMP_NONE;
}

/* A random number of ns in [0, max] (xorshift64; delays only, not security). */
static uint64_t random_ns(struct tr_igmp *g, uint64_t max)
{
        uint64_t x = g->rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        g->rng = x;
        return max ? x % (max + 1) : 0;
}

/* Spacing of repeated state-change reports: the interval itself for IGMPv2 (RFC 2236 3),
 * a random time within it for IGMPv3 (RFC 3376 5.1). */
static uint64_t retx_delay(struct tr_igmp *g)
{
        if (g->version == 2)
                return g->uri_ns;
        return 1 + random_ns(g, g->uri_ns - 1);
}

static void update_next(struct tr_igmp *g)
{
        uint64_t next = TR_IGMP_NONE;
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                const struct tr_igmp_slot *s = &g->s[i];
                if (!s->group)
                        continue;
                if (s->retx_left && s->retx_due < next)
                        next = s->retx_due;
                if (s->answer_due && s->answer_due < next)
                        next = s->answer_due;
        }
        g->next = next;
}

/* The slot of group; with create, a free one, else one that only repeats a leave (those
 * repeats are best effort). NULL when none. */
static struct tr_igmp_slot *slot_of(struct tr_igmp *g, uint32_t group, bool create)
{
        struct tr_igmp_slot *free_slot = NULL, *leaving = NULL;
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                struct tr_igmp_slot *s = &g->s[i];
                if (s->group == group)
                        return s;
                if (!s->group && !free_slot)
                        free_slot = s;
                if (s->group && s->retx_leave && !leaving)
                        leaving = s;
        }
        if (!create)
                return NULL;
        struct tr_igmp_slot *s = free_slot ? free_slot : leaving;
        if (s)
                *s = (struct tr_igmp_slot){ .group = group };
        return s;
}

void tr_igmp_change(struct tr_igmp *g, uint32_t group, bool leave, uint64_t now_ns,
                    struct tr_igmp_report *ret_now)
{
        *ret_now = (struct tr_igmp_report){ .group = group, .version = g->version, .leave = leave };
        /* an IGMPv2 leave goes once; everything else is repeated */
        bool repeat = g->robustness > 1 && !(leave && g->version == 2);
        struct tr_igmp_slot *s = slot_of(g, group, repeat);
        if (s) {
                s->retx_leave = leave;
                s->retx_left = repeat ? (uint8_t)(g->robustness - 1) : 0;
                s->retx_due = now_ns + retx_delay(g);
                if (leave)
                        s->answer_due = 0;
                if (!s->retx_left && !s->answer_due)
                        s->group = 0;
        }
        update_next(g);
}

unsigned tr_igmp_query(struct tr_igmp *g, const struct tr_frame *f, const uint32_t *groups,
                       unsigned n_groups, uint64_t now_ns)
{
        if (f->kind != TR_FRAME_IGMP || f->igmp_type != 0x11) /* only queries need an answer */
                return 0;
        if (f->igmp_len > 8 && f->igmp_len < 12) /* neither v1/v2 nor v3: ignored (RFC 3376 7.1) */
                return 0;
        if (f->igmp_group != 0 && !tr_ipv4_is_multicast(f->igmp_group))
                return 0;
        /* answer an older querier in its version (IGMPv2 is the oldest we speak) */
        uint8_t version = f->igmp_len >= 12 ? g->version : 2;
        uint64_t max = (uint64_t)tr_igmp_max_resp_ds(f->igmp_code, f->igmp_len) * 100000000;
        unsigned any = 0;
        for (unsigned i = 0; i < n_groups; i++) {
                if (f->igmp_group != 0 && f->igmp_group != groups[i])
                        continue;
                struct tr_igmp_slot *s = slot_of(g, groups[i], true);
                if (!s)
                        continue;
                if (!s->answer_due || s->answer_due > now_ns + max) {
                        s->answer_due = now_ns + random_ns(g, max);
                        s->answer_version = version;
                        any++;
                }
        }
        if (any)
                update_next(g);
        return any;
}

unsigned tr_igmp_due(struct tr_igmp *g, uint64_t now_ns, struct tr_igmp_report *out,
                     unsigned max)
{
        unsigned n = 0;
        if (now_ns < g->next)
                return 0;
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++) {
                struct tr_igmp_slot *s = &g->s[i];
                if (!s->group)
                        continue;
                if (s->retx_left && s->retx_due <= now_ns && n < max) {
                        out[n++] = (struct tr_igmp_report){ .group = s->group, .version = g->version,
                                                            .leave = s->retx_leave };
                        s->retx_left--;
                        s->retx_due = now_ns + retx_delay(g);
                }
                if (s->answer_due && s->answer_due <= now_ns && n < max) {
                        out[n++] = (struct tr_igmp_report){ .group = s->group,
                                                            .version = s->answer_version };
                        s->answer_due = 0;
                }
                if (!s->retx_left && !s->answer_due)
                        s->group = 0;
        }
        update_next(g);
        return n;
}
