/* SPDX-License-Identifier: Apache-2.0 */
/* ARP table: miss -> request, retry interval, rate limit, expiry, bounded size, eviction,
 * and RFC 826 learning (overheard ARP updates but never creates). */
#include "arp_table.h"

#include <string.h>

#include "testutil.h"

#define MS 1000000ull

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t mac2[6] = { 2, 0, 0, 0, 0, 2 };

static void test_resolve_and_expire(void)
{
        static struct tr_arp_table t;
        uint8_t m[6] = { 0 };
        uint64_t now = 1000 * MS;
        tr_arp_table_init(&t, 1000 * MS, 100 * MS, 100, now);

        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now, m), TR_ARP_SEND_REQUEST);
        CHECK_INT(m[0], 0); /* untouched on a miss */
        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now + 10 * MS, m), TR_ARP_WAIT); /* retry interval */
        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now + 101 * MS, m), TR_ARP_SEND_REQUEST);
        CHECK(tr_arp_update(&t, 0x0a000002, mac1, false, now + 102 * MS)); /* pending: updates */
        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now + 103 * MS, m), TR_ARP_HIT);
        CHECK(memcmp(m, mac1, 6) == 0);
        CHECK_INT(tr_arp_count(&t, now + 103 * MS), 1);
        /* a hit is valid until the TTL after it was learnt, and not after */
        CHECK_INT(tr_arp_expires(&t, 0x0a000002, now + 103 * MS), now + 1102 * MS);
        CHECK_INT(tr_arp_expires(&t, 0x0a000002, now + 1102 * MS), 0);
        CHECK_INT(tr_arp_expires(&t, 0x0a000003, now + 103 * MS), 0); /* unknown */
        /* expiry */
        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now + 1200 * MS, m), TR_ARP_SEND_REQUEST);
        CHECK_INT(tr_arp_count(&t, now + 1200 * MS), 0);
        /* a new MAC replaces the old one */
        CHECK(tr_arp_update(&t, 0x0a000002, mac2, false, now + 1201 * MS));
        CHECK_INT(tr_arp_lookup(&t, 0x0a000002, now + 1202 * MS, m), TR_ARP_HIT);
        CHECK(memcmp(m, mac2, 6) == 0);
        /* overheard ARP for an unknown address is not learnt, unless create */
        CHECK(!tr_arp_update(&t, 0x0a000009, mac1, false, now));
        CHECK(tr_arp_update(&t, 0x0a000009, mac1, true, now));
}

static void test_rate_limit(void)
{
        static struct tr_arp_table t;
        uint8_t m[6];
        uint64_t now = 5 * MS;
        int sent = 0;
        tr_arp_table_init(&t, 60000 * MS, 100 * MS, 10, now);
        /* 100 distinct misses at one instant: only the burst (8) may go out */
        for (uint32_t i = 0; i < 100; i++)
                sent += tr_arp_lookup(&t, 0x0a000100 + i, now, m) == TR_ARP_SEND_REQUEST;
        CHECK_INT(sent, 8);
        /* one second later 10 more tokens (capped at the burst of 8) */
        sent = 0;
        for (uint32_t i = 0; i < 100; i++)
                sent += tr_arp_lookup(&t, 0x0a000100 + i, now + 1000 * MS, m) == TR_ARP_SEND_REQUEST;
        CHECK_INT(sent, 8);

        struct tr_rate r;
        tr_rate_init(&r, 1000, 4, 0);
        int ok = 0;
        for (int i = 0; i < 10; i++)
                ok += tr_rate_allow(&r, 0);
        CHECK_INT(ok, 4);
        CHECK(!tr_rate_allow(&r, 999999));  /* < 1 ms: no token yet */
        CHECK(tr_rate_allow(&r, 1000000));  /* 1 ms: one token */
        CHECK(!tr_rate_allow(&r, 1000001));
}

static void test_bounded(void)
{
        static struct tr_arp_table t;
        uint64_t now = 1;
        tr_arp_table_init(&t, 60000 * MS, 100 * MS, 1000000, now);
        /* a flood of 10 000 distinct learnt addresses never grows past the slots */
        for (uint32_t i = 0; i < 10000; i++)
                tr_arp_update(&t, 0x0a000000 + i, mac1, true, now + i);
        unsigned n = tr_arp_count(&t, now + 10000);
        CHECK(n <= TR_ARP_SLOTS);
        CHECK(n > TR_ARP_SLOTS / 2);
        CHECK(t.evictions > 0);
        /* the newest are still there */
        uint8_t m[6];
        CHECK_INT(tr_arp_lookup(&t, 0x0a000000 + 9999, now + 10001, m), TR_ARP_HIT);
}

/* An entry in use that its peer has not confirmed for reprobe_ns is re-probed (unicast to
 * the MAC it has, then broadcast every retry interval) while lookups still hit; the
 * answer, with a new MAC, replaces it: a peer that changed its MAC and never sent ARP is
 * reached again reprobe + retry after the change, not at the 60 s expiry. */
static void test_reprobe(void)
{
        static struct tr_arp_table t;
        uint8_t m[6] = { 0 };
        uint64_t now = 1000 * MS;
        const uint32_t ip = 0x0a000002;
        tr_arp_table_init(&t, 60000 * MS, 100 * MS, 100, now);
        tr_arp_table_set_reprobe(&t, 2000 * MS);

        CHECK(tr_arp_update(&t, ip, mac1, true, now));
        CHECK_INT(tr_arp_lookup(&t, ip, now + 1999 * MS, m), TR_ARP_HIT);
        /* the caller may keep the hit until the re-probe is due, not the 60 s expiry */
        CHECK_INT(tr_arp_recheck(&t, ip, now + 1 * MS), now + 2000 * MS);
        CHECK_INT(tr_arp_expires(&t, ip, now + 1 * MS), now + 60000 * MS);
        /* due: a hit, and a unicast probe to the MAC we have */
        memset(m, 0, sizeof(m));
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2000 * MS, m), TR_ARP_HIT_PROBE);
        CHECK(memcmp(m, mac1, 6) == 0);
        /* unanswered: plain hits within the retry interval, then broadcasts */
        CHECK_INT(tr_arp_recheck(&t, ip, now + 2001 * MS), now + 2100 * MS);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2050 * MS, m), TR_ARP_HIT);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2100 * MS, m), TR_ARP_HIT_PROBE_BCAST);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2150 * MS, m), TR_ARP_HIT);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2200 * MS, m), TR_ARP_HIT_PROBE_BCAST);
        CHECK(memcmp(m, mac1, 6) == 0); /* still the old MAC until someone answers */
        /* the peer answers with its new MAC (the broadcast reached it) */
        CHECK(tr_arp_update(&t, ip, mac2, false, now + 2210 * MS));
        CHECK_INT(tr_arp_lookup(&t, ip, now + 2211 * MS, m), TR_ARP_HIT);
        CHECK(memcmp(m, mac2, 6) == 0);
        /* confirmed again: the next re-probe is reprobe_ns after the answer, unicast first */
        CHECK_INT(tr_arp_recheck(&t, ip, now + 2211 * MS), now + 4210 * MS);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 4210 * MS, m), TR_ARP_HIT_PROBE);
        /* never beyond the expiry */
        tr_arp_table_set_reprobe(&t, 120000 * MS);
        CHECK_INT(tr_arp_recheck(&t, ip, now + 2211 * MS), now + 62210 * MS);
        /* off: the old behaviour, a hit until expiry */
        tr_arp_table_set_reprobe(&t, 0);
        CHECK_INT(tr_arp_lookup(&t, ip, now + 9000 * MS, m), TR_ARP_HIT);
        CHECK_INT(tr_arp_recheck(&t, ip, now + 9000 * MS), now + 62210 * MS);
        CHECK_INT(tr_arp_recheck(&t, 0x0a000003, now), 0); /* unknown */
}

/* Re-probes share the request rate limit: a table of peers all due at once sends no more
 * than the bucket allows, and the rest still hit. */
static void test_reprobe_rate(void)
{
        static struct tr_arp_table t;
        uint8_t m[6];
        uint64_t now = 1000 * MS;
        tr_arp_table_init(&t, 60000 * MS, 100 * MS, 10, now);
        tr_arp_table_set_reprobe(&t, 1000 * MS);
        for (uint32_t i = 0; i < 50; i++)
                tr_arp_update(&t, 0x0a000100 + i, mac1, true, now);
        int probes = 0, hits = 0;
        for (uint32_t i = 0; i < 50; i++) {
                enum tr_arp_result r = tr_arp_lookup(&t, 0x0a000100 + i, now + 1000 * MS, m);
                probes += r == TR_ARP_HIT_PROBE;
                hits += r == TR_ARP_HIT;
        }
        CHECK(probes <= 10);
        CHECK_INT(probes + hits, 50);
        /* one held back by the bucket is looked at again within a retry interval */
        CHECK_INT(tr_arp_recheck(&t, 0x0a000100 + 49, now + 1000 * MS) <= now + 1100 * MS, 1);
}

int main(void)
{
        test_reprobe();
        test_reprobe_rate();
        test_resolve_and_expire();
        test_rate_limit();
        test_bounded();
        return test_done();
}
