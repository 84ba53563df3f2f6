/* SPDX-License-Identifier: Apache-2.0 */
/* IGMP host-side timers (RFC 3376 5, RFC 2236 3): the repeats of a join's or leave's
 * state-change report and the delayed answers to queries, in a fixed table. Pure: the
 * caller passes the time, sends the reports this module hands back and owns the locking;
 * no I/O, no globals, never logs. */
#ifndef TR_IGMP_H
#define TR_IGMP_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

#define TR_IGMP_SLOTS 64 /* joined groups + leaves still being repeated */
#define TR_IGMP_NONE UINT64_MAX

/* The timers of one group: state-change reports still to repeat (a join's, or a leave's
 * after the group is gone) and an answer to a query. */
struct tr_igmp_slot {
        uint32_t group;         /* network order; 0 = free slot */
        uint8_t retx_left;      /* state-change reports still to send */
        uint8_t answer_version; /* version of the query being answered */
        bool retx_leave;        /* the state change is a leave */
        uint64_t retx_due;      /* ns */
        uint64_t answer_due;    /* ns; 0 = no query to answer */
};

struct tr_igmp {
        struct tr_igmp_slot s[TR_IGMP_SLOTS];
        uint64_t next;   /* earliest timer (ns), TR_IGMP_NONE for none */
        uint64_t uri_ns; /* Unsolicited Report Interval */
        uint64_t rng;    /* xorshift64 state for the random delays */
        uint8_t version, robustness;
};

/* One report to send: a join/current-state report, or with leave a leave/CHANGE_TO_INCLUDE. */
struct tr_igmp_report {
        uint32_t group; /* network order */
        uint8_t version;
        bool leave;
};

/* version 2 or 3, robustness 1..7 (reports per state change), uri_ns > 0; seed any
 * value (0 is replaced: xorshift would stay at 0). */
void tr_igmp_init(struct tr_igmp *g, uint8_t version, uint8_t robustness, uint64_t uri_ns,
                  uint64_t seed);

/* A join (leave false) or a leave of group at now: ret_now is the report to send at once;
 * the rest of the Robustness Variable is scheduled, spaced by the Unsolicited Report
 * Interval (v2) or at random within it (v3). An IGMPv2 leave goes once. A leave cancels
 * a pending query answer. When the table is full a join's repeats are dropped (the first
 * report still goes), after a leave's repeats have been given up for it. */
void tr_igmp_change(struct tr_igmp *g, uint32_t group, bool leave, uint64_t now_ns,
                    struct tr_igmp_report *ret_now);

/* A received IGMP frame f (kind TR_FRAME_IGMP) at now, with the groups joined: a General
 * Query, or a Group-Specific one for a joined group, schedules a current-state report per
 * group it covers at a random time within its Max Resp Time, unless one is due sooner
 * already. A v1/v2 query (8 bytes) is answered in IGMPv2, a v3 one in our version; 9-11
 * byte queries and non-queries are ignored. Returns how many answers were scheduled. */
unsigned tr_igmp_query(struct tr_igmp *g, const struct tr_frame *f, const uint32_t *groups,
                       unsigned n_groups, uint64_t now_ns);

/* Fire the timers due at now: writes the reports to send into out (at most max; what
 * does not fit stays due) and returns their number. 2 * TR_IGMP_SLOTS always fits. */
unsigned tr_igmp_due(struct tr_igmp *g, uint64_t now_ns, struct tr_igmp_report *out,
                     unsigned max);

/* The earliest timer (ns), TR_IGMP_NONE when nothing is scheduled. */
static inline uint64_t tr_igmp_next(const struct tr_igmp *g)
{
        return g->next;
}

#endif
