/* SPDX-License-Identifier: Apache-2.0 */
/* ARP table and token bucket. Pure: no I/O, no globals, never logs; the caller locks. */
#include "arp_table.h"

#include <string.h>

void tr_rate_init(struct tr_rate *r, uint32_t per_sec, uint32_t burst, uint64_t now_ns)
{
        r->per_sec = per_sec;
        r->burst = burst ? burst : 1;
        r->tokens_x1000 = (uint64_t)r->burst * 1000;
        r->last_ns = now_ns;
}

bool tr_rate_allow(struct tr_rate *r, uint64_t now_ns)
{
        if (now_ns > r->last_ns) {
                uint64_t dt = now_ns - r->last_ns;
                uint64_t cap = (uint64_t)r->burst * 1000;
                /* per_sec tokens per 1e9 ns, in milli-tokens: dt * per_sec / 1e6 */
                uint64_t add = dt > 10000000000ull ? cap : dt * r->per_sec / 1000000;
                if (r->tokens_x1000 + add >= cap) {
                        r->tokens_x1000 = cap;
                        r->last_ns = now_ns;
                } else if (add) {
                        /* advance only by the time those milli-tokens took: no drift */
                        r->tokens_x1000 += add;
                        r->last_ns += add * 1000000 / r->per_sec;
                }
        }
        if (r->tokens_x1000 < 1000)
                return false;
        r->tokens_x1000 -= 1000;
        return true;
}

void tr_arp_table_init(struct tr_arp_table *t, uint64_t ttl_ns, uint64_t retry_ns,
                       uint32_t req_per_sec, uint64_t now_ns)
{
        memset(t, 0, sizeof(*t));
        t->ttl_ns = ttl_ns;
        t->retry_ns = retry_ns;
        tr_rate_init(&t->req_rate, req_per_sec, req_per_sec < 8 ? req_per_sec : 8, now_ns);
}

void tr_arp_table_set_reprobe(struct tr_arp_table *t, uint64_t reprobe_ns)
{
        t->reprobe_ns = reprobe_ns;
}

static inline unsigned slot_of(uint32_t ip)
{
        uint32_t h = ip * 0x9e3779b1u;
        return (h >> 24) & (TR_ARP_SLOTS - 1);
}

static struct tr_arp_entry *find(struct tr_arp_table *t, uint32_t ip)
{
        unsigned s = slot_of(ip);
        for (unsigned i = 0; i < TR_ARP_PROBE; i++) {
                struct tr_arp_entry *e = &t->e[(s + i) & (TR_ARP_SLOTS - 1)];
                if (e->state != TR_ARP_FREE && e->ip == ip)
                        return e;
        }
        return NULL;
}

uint64_t tr_arp_expires(const struct tr_arp_table *t, uint32_t ip, uint64_t now_ns)
{
        const struct tr_arp_entry *e = find((struct tr_arp_table *)t, ip);
        return e && e->state == TR_ARP_RESOLVED && e->expires_ns > now_ns ? e->expires_ns : 0;
}

/* When e (resolved) next wants a re-probe; UINT64_MAX never. */
static uint64_t reprobe_due(const struct tr_arp_table *t, const struct tr_arp_entry *e)
{
        if (!t->reprobe_ns)
                return UINT64_MAX;
        uint64_t due = e->confirmed_ns + t->reprobe_ns;
        if (e->probes && e->last_req_ns + t->retry_ns > due)
                due = e->last_req_ns + t->retry_ns; /* one is out: the next after the retry interval */
        return due;
}

uint64_t tr_arp_recheck(const struct tr_arp_table *t, uint32_t ip, uint64_t now_ns)
{
        const struct tr_arp_entry *e = find((struct tr_arp_table *)t, ip);
        if (!e || e->state != TR_ARP_RESOLVED || e->expires_ns <= now_ns)
                return 0;
        uint64_t due = reprobe_due(t, e);
        if (due <= now_ns) /* due, but the rate limit held it back: look again soon */
                due = now_ns + t->retry_ns;
        return due < e->expires_ns ? due : e->expires_ns;
}

/* A free or expired slot in ip's window, else the one that expires first. */
static struct tr_arp_entry *claim(struct tr_arp_table *t, uint32_t ip, uint64_t now_ns)
{
        unsigned s = slot_of(ip);
        struct tr_arp_entry *victim = NULL;
        for (unsigned i = 0; i < TR_ARP_PROBE; i++) {
                struct tr_arp_entry *e = &t->e[(s + i) & (TR_ARP_SLOTS - 1)];
                if (e->state == TR_ARP_FREE || e->expires_ns <= now_ns)
                        return e;
                if (!victim || e->expires_ns < victim->expires_ns)
                        victim = e;
        }
        t->evictions++;
        return victim;
}

enum tr_arp_result tr_arp_lookup(struct tr_arp_table *t, uint32_t ip, uint64_t now_ns,
                                 uint8_t ret_mac[6])
{
        struct tr_arp_entry *e = find(t, ip);

        if (e && e->state == TR_ARP_RESOLVED && e->expires_ns > now_ns) {
                memcpy(ret_mac, e->mac, 6);
                if (reprobe_due(t, e) > now_ns || !tr_rate_allow(&t->req_rate, now_ns))
                        return TR_ARP_HIT;
                e->last_req_ns = now_ns ? now_ns : 1;
                if (e->probes < UINT8_MAX)
                        e->probes++;
                return e->probes == 1 ? TR_ARP_HIT_PROBE : TR_ARP_HIT_PROBE_BCAST;
        }
        if (!e) {
                e = claim(t, ip, now_ns);
                memset(e, 0, sizeof(*e));
                e->ip = ip;
                e->state = TR_ARP_PENDING;
                e->expires_ns = now_ns + t->ttl_ns;
        } else if (e->state == TR_ARP_RESOLVED) {
                /* expired: keep it pending, ask again */
                e->state = TR_ARP_PENDING;
                e->expires_ns = now_ns + t->ttl_ns;
                e->last_req_ns = 0;
        }
        if (e->last_req_ns && now_ns - e->last_req_ns < t->retry_ns)
                return TR_ARP_WAIT;
        if (!tr_rate_allow(&t->req_rate, now_ns))
                return TR_ARP_WAIT;
        e->last_req_ns = now_ns ? now_ns : 1;
        return TR_ARP_SEND_REQUEST;
}

bool tr_arp_update(struct tr_arp_table *t, uint32_t ip, const uint8_t mac[6], bool create,
                   uint64_t now_ns)
{
        struct tr_arp_entry *e = find(t, ip);
        if (!e) {
                if (!create)
                        return false;
                e = claim(t, ip, now_ns);
                memset(e, 0, sizeof(*e));
                e->ip = ip;
        }
        memcpy(e->mac, mac, 6);
        e->state = TR_ARP_RESOLVED;
        e->expires_ns = now_ns + t->ttl_ns;
        e->confirmed_ns = now_ns;
        e->probes = 0;
        e->last_req_ns = 0;
        return true;
}

unsigned tr_arp_count(const struct tr_arp_table *t, uint64_t now_ns)
{
        unsigned n = 0;
        for (unsigned i = 0; i < TR_ARP_SLOTS; i++)
                n += t->e[i].state == TR_ARP_RESOLVED && t->e[i].expires_ns > now_ns;
        return n;
}
