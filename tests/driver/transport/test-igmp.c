/* SPDX-License-Identifier: Apache-2.0 */
/* The IGMP timers without DPDK: join/leave repeats per version and robustness, spacing,
 * queries (general, group-specific, v2/v3, malformed) answered within Max Resp Time, a
 * leave cancelling an answer, the table full, a short output array. Time is the test's. */
#include <arpa/inet.h>

#include "igmp.h"
#include "testutil.h"

#define MS 1000000ull
#define T0 (1000 * MS) /* any start time */

static uint32_t grp(unsigned i)
{
        return htonl(0xef000000u + 0x10000u + i); /* 239.1.0.i */
}

/* Every report due up to `until`, stepping 1 ms: the count and the time of each. */
static unsigned drain(struct tr_igmp *g, uint64_t from, uint64_t until, struct tr_igmp_report *out,
                      uint64_t *when, unsigned max)
{
        unsigned n = 0;
        for (uint64_t t = from; t <= until; t += MS) {
                struct tr_igmp_report r[2 * TR_IGMP_SLOTS];
                unsigned k = tr_igmp_due(g, t, r, 2 * TR_IGMP_SLOTS);
                for (unsigned i = 0; i < k && n < max; i++) {
                        out[n] = r[i];
                        when[n++] = t;
                }
        }
        return n;
}

static void test_changes(void)
{
        static const struct {
                uint8_t version, robustness;
                bool leave;
                unsigned total;   /* reports in all, the first included */
                bool exact;       /* repeats exactly uri apart (v2) rather than within it */
        } t[] = {
                { 3, 2, false, 2, false }, { 3, 3, false, 3, false }, { 3, 1, false, 1, false },
                { 3, 7, false, 7, false }, { 3, 2, true, 2, false },  { 3, 3, true, 3, false },
                { 2, 2, false, 2, true },  { 2, 3, false, 3, true },  { 2, 2, true, 1, true },
                { 2, 7, true, 1, true },   { 2, 1, false, 1, true },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                struct tr_igmp g;
                struct tr_igmp_report now, out[16];
                uint64_t when[16], uri = 100 * MS;
                tr_igmp_init(&g, t[i].version, t[i].robustness, uri, 42 + i);
                CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
                tr_igmp_change(&g, grp(1), t[i].leave, T0, &now);
                CHECK(now.group == grp(1) && now.version == t[i].version && now.leave == t[i].leave);
                unsigned n = drain(&g, T0, T0 + 10 * uri, out, when, 16);
                if (n + 1 != t[i].total)
                        fprintf(stderr, "case %zu\n", i);
                CHECK_INT(n + 1, t[i].total);
                uint64_t prev = T0;
                for (unsigned k = 0; k < n; k++) {
                        CHECK(out[k].group == grp(1) && out[k].version == t[i].version &&
                              out[k].leave == t[i].leave);
                        /* drained in 1 ms steps: a report fires in the ms it is due */
                        if (t[i].exact)
                                CHECK(when[k] - prev >= uri && when[k] - prev < uri + MS);
                        else
                                CHECK(when[k] > prev && when[k] - prev < uri + MS);
                        prev = when[k];
                }
                CHECK(tr_igmp_next(&g) == TR_IGMP_NONE); /* all done, slot free */
        }
}

static void test_queries(void)
{
        static const struct {
                uint8_t type, code;
                uint16_t len;
                uint32_t group;     /* 0 = general */
                unsigned answers;   /* of the 3 joined groups */
                uint8_t version;    /* of the answers */
                uint64_t max_ns;    /* Max Resp Time */
        } t[] = {
                { 0x11, 100, 12, 0, 3, 3, 10000 * MS },        /* v3 general, 10 s */
                { 0x11, 10, 12, 0, 3, 3, 1000 * MS },          /* v3 general, 1 s */
                { 0x11, 0x8f, 12, 0, 3, 3, 24800 * MS },       /* v3 floating point: 248 ds */
                { 0x11, 10, 8, 0, 3, 2, 1000 * MS },           /* v2 querier: answered in v2 */
                { 0x11, 0, 8, 0, 3, 2, 10000 * MS },           /* v1 query: 10 s */
                { 0x11, 10, 12, 2, 1, 3, 1000 * MS },          /* group-specific, joined */
                { 0x11, 10, 8, 2, 1, 2, 1000 * MS },           /* v2 group-specific */
                { 0x11, 10, 12, 9, 0, 0, 0 },                  /* group we did not join */
                { 0x11, 10, 10, 0, 0, 0, 0 },                  /* 9-11 bytes: ignored */
                { 0x11, 10, 12, 0xff, 0, 0, 0 },               /* group not multicast */
                { 0x16, 10, 8, 0, 0, 0, 0 },                   /* a v2 report: not a query */
                { 0x22, 0, 16, 0, 0, 0, 0 },                   /* a v3 report */
        };
        uint32_t joined[3] = { grp(1), grp(2), grp(3) };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                struct tr_igmp g;
                tr_igmp_init(&g, 3, 1, 1000 * MS, 7 + i); /* robustness 1: no join repeats */
                for (unsigned k = 0; k < 3; k++) {
                        struct tr_igmp_report r;
                        tr_igmp_change(&g, joined[k], false, T0, &r);
                }
                CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
                struct tr_frame f = { .kind = TR_FRAME_IGMP, .igmp_type = t[i].type, .igmp_code = t[i].code,
                                      .igmp_len = t[i].len };
                if (t[i].group == 0xff)
                        f.igmp_group = htonl(0x0a000001u);
                else if (t[i].group)
                        f.igmp_group = grp(t[i].group);
                unsigned a = tr_igmp_query(&g, &f, joined, 3, T0);
                if (a != t[i].answers)
                        fprintf(stderr, "case %zu\n", i);
                CHECK_INT(a, t[i].answers);
                if (!a) {
                        CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
                        continue;
                }
                CHECK(tr_igmp_next(&g) >= T0 && tr_igmp_next(&g) <= T0 + t[i].max_ns);
                /* nothing before its time, everything by the Max Resp Time */
                struct tr_igmp_report r[2 * TR_IGMP_SLOTS];
                if (tr_igmp_next(&g) > T0)
                        CHECK_INT(tr_igmp_due(&g, tr_igmp_next(&g) - 1, r, 2 * TR_IGMP_SLOTS), 0);
                unsigned n = tr_igmp_due(&g, T0 + t[i].max_ns, r, 2 * TR_IGMP_SLOTS);
                CHECK_INT(n, t[i].answers);
                for (unsigned k = 0; k < n; k++) {
                        CHECK_INT(r[k].version, t[i].version);
                        CHECK(!r[k].leave);
                        if (t[i].group)
                                CHECK(r[k].group == grp(t[i].group));
                }
                CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
        }
}

/* A second query does not push an answer that is due sooner further out; one that would
 * be answered sooner moves it in; a leave cancels it. */
static void test_query_rules(void)
{
        struct tr_igmp g;
        struct tr_igmp_report r[2 * TR_IGMP_SLOTS];
        uint32_t joined[1] = { grp(1) };
        struct tr_frame f = { .kind = TR_FRAME_IGMP, .igmp_type = 0x11, .igmp_len = 12, .igmp_code = 10 };

        tr_igmp_init(&g, 3, 1, 1000 * MS, 99);
        tr_igmp_change(&g, grp(1), false, T0, &r[0]);
        CHECK_INT(tr_igmp_query(&g, &f, joined, 1, T0), 1); /* within 1 s */
        uint64_t due = tr_igmp_next(&g);
        f.igmp_code = 100;                                    /* 10 s: later, ignored */
        CHECK_INT(tr_igmp_query(&g, &f, joined, 1, T0), 0);
        CHECK(tr_igmp_next(&g) == due);
        f.igmp_code = 0; /* with len 12, code 0: Max Resp Time 0, answer at once */
        CHECK_INT(tr_igmp_query(&g, &f, joined, 1, T0 + 1), due > T0 + 1);
        /* a leave cancels the pending answer; robustness 1: only the leave's first report */
        tr_igmp_init(&g, 3, 1, 1000 * MS, 99);
        f.igmp_code = 100;
        tr_igmp_change(&g, grp(1), false, T0, &r[0]);
        CHECK_INT(tr_igmp_query(&g, &f, joined, 1, T0), 1);
        tr_igmp_change(&g, grp(1), true, T0 + MS, &r[0]);
        CHECK(r[0].leave);
        CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
        CHECK_INT(tr_igmp_due(&g, T0 + 20000 * MS, r, 2 * TR_IGMP_SLOTS), 0);
}

/* 64 joins fill the table; a 65th still gets its first report, not its repeat; a group
 * being left gives its slot up to a new join first. */
static void test_full(void)
{
        struct tr_igmp g;
        struct tr_igmp_report r[2 * TR_IGMP_SLOTS], now;
        uint64_t uri = 100 * MS;

        tr_igmp_init(&g, 3, 2, uri, 5);
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++)
                tr_igmp_change(&g, grp(i), false, T0, &now);
        tr_igmp_change(&g, grp(200), false, T0, &now);
        CHECK(now.group == grp(200));
        unsigned n = tr_igmp_due(&g, T0 + uri, r, 2 * TR_IGMP_SLOTS);
        CHECK_INT(n, TR_IGMP_SLOTS);
        for (unsigned i = 0; i < n; i++)
                CHECK(r[i].group != grp(200));
        CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);

        /* 63 joins and one leave in progress: a new join takes the leave's slot */
        tr_igmp_init(&g, 3, 2, uri, 5);
        for (unsigned i = 0; i < TR_IGMP_SLOTS; i++)
                tr_igmp_change(&g, grp(i), false, T0, &now);
        tr_igmp_change(&g, grp(5), true, T0, &now); /* group 5's slot now repeats a leave */
        tr_igmp_change(&g, grp(200), false, T0, &now);
        n = tr_igmp_due(&g, T0 + uri, r, 2 * TR_IGMP_SLOTS);
        CHECK_INT(n, TR_IGMP_SLOTS);
        bool saw_new = false, saw_leave = false;
        for (unsigned i = 0; i < n; i++) {
                saw_new |= r[i].group == grp(200) && !r[i].leave;
                saw_leave |= r[i].group == grp(5);
        }
        CHECK(saw_new);
        CHECK(!saw_leave);
}

/* An output array too short: what does not fit stays due and goes on the next call. */
static void test_short_output(void)
{
        struct tr_igmp g;
        struct tr_igmp_report r[4], now;
        tr_igmp_init(&g, 2, 2, 100 * MS, 1);
        for (unsigned i = 0; i < 10; i++)
                tr_igmp_change(&g, grp(i), false, T0, &now);
        uint64_t t = T0 + 100 * MS; /* v2: all ten repeats due exactly then */
        unsigned total = 0, calls = 0, n;
        while ((n = tr_igmp_due(&g, t, r, 4)) > 0) {
                CHECK(n <= 4);
                total += n;
                calls++;
        }
        CHECK_INT(total, 10);
        CHECK_INT(calls, 3);
        CHECK(tr_igmp_next(&g) == TR_IGMP_NONE);
}

/* The same seed gives the same delays: the module keeps no hidden state. */
static void test_deterministic(void)
{
        struct tr_igmp a, b;
        struct tr_igmp_report r;
        tr_igmp_init(&a, 3, 2, 1000 * MS, 12345);
        tr_igmp_init(&b, 3, 2, 1000 * MS, 12345);
        tr_igmp_change(&a, grp(1), false, T0, &r);
        tr_igmp_change(&b, grp(1), false, T0, &r);
        CHECK(tr_igmp_next(&a) == tr_igmp_next(&b));
        tr_igmp_init(&a, 3, 2, 1000 * MS, 0); /* seed 0 still moves */
        tr_igmp_change(&a, grp(1), false, T0, &r);
        CHECK(tr_igmp_next(&a) > T0 && tr_igmp_next(&a) <= T0 + 1000 * MS);
}

int main(void)
{
        test_changes();
        test_queries();
        test_query_rules();
        test_full();
        test_short_output();
        test_deterministic();
        return test_done();
}
