/* SPDX-License-Identifier: Apache-2.0 */
/* The ARP table: a bounded, hashed IPv4 -> MAC map with expiry, per-entry request retry,
 * re-probing of entries in use (as Linux's neighbour code probes a STALE entry) and a
 * token bucket limiting how many ARP requests/replies leave per second. Pure: the
 * caller passes the time, sends the frames and owns the locking; no I/O, never logs. */
#ifndef TR_ARP_TABLE_H
#define TR_ARP_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#define TR_ARP_SLOTS 256 /* power of two */
#define TR_ARP_PROBE 8   /* slots examined per lookup */

struct tr_rate {
        uint64_t tokens_x1000; /* milli-tokens */
        uint64_t last_ns;
        uint32_t per_sec, burst;
};

/* A token bucket of burst tokens refilled at per_sec; allow() takes one if available. */
void tr_rate_init(struct tr_rate *r, uint32_t per_sec, uint32_t burst, uint64_t now_ns);
bool tr_rate_allow(struct tr_rate *r, uint64_t now_ns);

enum { TR_ARP_FREE = 0, TR_ARP_PENDING, TR_ARP_RESOLVED };

struct tr_arp_entry {
        uint32_t ip; /* network order */
        uint8_t mac[6];
        uint8_t state;
        uint64_t expires_ns;  /* RESOLVED: until; PENDING: entry reclaimable after */
        uint64_t last_req_ns; /* last request sent for it */
        uint64_t confirmed_ns; /* RESOLVED: when the peer last told us its MAC */
        uint8_t probes;        /* re-probes sent since then (the first unicast, then broadcast) */
};

struct tr_arp_table {
        struct tr_arp_entry e[TR_ARP_SLOTS];
        uint64_t ttl_ns, retry_ns;
        uint64_t reprobe_ns; /* re-probe an entry in use unconfirmed this long; 0 = never */
        struct tr_rate req_rate;
        uint64_t evictions;
};

void tr_arp_table_init(struct tr_arp_table *t, uint64_t ttl_ns, uint64_t retry_ns,
                       uint32_t req_per_sec, uint64_t now_ns);

/* Re-probe resolved entries that are in use (looked up) and that the peer has not
 * confirmed (an ARP request or reply from it) for reprobe_ns: the lookup still hits, and
 * tells the caller to send a request, unicast to the known MAC first, then broadcast
 * every retry interval until the peer answers. A peer that changed its MAC and never
 * sends ARP again is reachable again reprobe_ns + retry_ns after the change, not at
 * the entry's expiry. 0 (the default after init) turns it off. */
void tr_arp_table_set_reprobe(struct tr_arp_table *t, uint64_t reprobe_ns);

enum tr_arp_result {
        TR_ARP_HIT = 0,          /* ret_mac filled */
        TR_ARP_SEND_REQUEST = 1, /* caller should broadcast a request now */
        TR_ARP_WAIT = 2,         /* unresolved, a request is in flight or rate-limited */
        TR_ARP_HIT_PROBE = 3,    /* ret_mac filled; also send a request now, unicast to ret_mac */
        TR_ARP_HIT_PROBE_BCAST = 4, /* ret_mac filled; also broadcast a request now */
};

/* Look ip up at now. On a miss creates a PENDING entry (evicting the stalest in its
 * probe window if needed) and says whether a request may go out (retry interval and
 * rate limit). A hit on an entry due for a re-probe says so (TR_ARP_HIT_PROBE*, within
 * the same retry interval and rate limit). ret_mac is written only on the hits. */
enum tr_arp_result tr_arp_lookup(struct tr_arp_table *t, uint32_t ip, uint64_t now_ns,
                                 uint8_t ret_mac[6]);

/* Learn ip -> mac. With create false, only an existing entry (resolved or pending) is
 * updated, as RFC 826 asks for ARP we merely overhear. Returns true when stored. */
bool tr_arp_update(struct tr_arp_table *t, uint32_t ip, const uint8_t mac[6], bool create,
                   uint64_t now_ns);

/* Until when (ns) ip's resolved entry is valid at now; 0 when there is none. Lets a
 * caller cache a hit and know when to look again. */
uint64_t tr_arp_expires(const struct tr_arp_table *t, uint32_t ip, uint64_t now_ns);

/* Until when (ns) a caller may use ip's resolved entry at now without looking it up
 * again: its expiry, or earlier the moment a re-probe falls due (the next retry while
 * one is unanswered); 0 when there is none. */
uint64_t tr_arp_recheck(const struct tr_arp_table *t, uint32_t ip, uint64_t now_ns);

/* Number of RESOLVED, unexpired entries (for counters and tests). */
unsigned tr_arp_count(const struct tr_arp_table *t, uint64_t now_ns);

#endif
