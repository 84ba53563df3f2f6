/* SPDX-License-Identifier: Apache-2.0 */
/* The datapath verdicts from measured results: PASS with the figures, FAIL naming the NIC,
 * the address and what did not answer (port, link, ARP, probes, p99 above the threshold),
 * WARN for lost probes or nothing asked; percentiles by nearest rank. */
#include <arpa/inet.h>
#include <string.h>

#include "dpath.h"
#include "testutil.h"

static uint32_t ip(const char *s)
{
        struct in_addr a;
        if (inet_pton(AF_INET, s, &a) != 1)
                abort();
        return a.s_addr;
}

static void base(struct dpath_result *r)
{
        memset(r, 0, sizeof(*r));
        r->n_ports = 1;
        struct dpath_port *p = &r->port[0];
        snprintf(p->role, sizeof(p->role), "sender");
        snprintf(p->device, sizeof(p->device), "0000:00:06.0");
        p->ip = ip("10.0.1.10");
        p->prefix_len = 24;
        p->gateway = ip("10.0.1.1");
        p->link_up = true;
        p->link_ms = 12.5;
        p->arp_target = p->gateway;
        p->arp_ms = 0.25;
        p->n_rtt = 1;
        struct dpath_rtt *t = &p->rtt[0];
        snprintf(t->to, sizeof(t->to), "peer 10.0.1.20:39990");
        t->peer = true;
        t->sent = t->answered = 32;
        t->p50_ns = 20000;
        t->p99_ns = 45000;
        t->max_ns = 50000;
}

static const verdict *judge(const struct dpath_result *r, const struct dpath_opts *o, verdict_list *vl)
{
        verdict_list_free(vl);
        CHECK_INT(dpath_judge(r, o, vl), 0);
        CHECK_INT(vl->n, 1);
        return vl->n ? &vl->items[0] : NULL;
}

int main(void)
{
        static struct dpath_result r;
        struct dpath_opts o = { .rounds = 32, .timeout_ms = 2000 };
        verdict_list vl = { 0 };
        const verdict *v;

        base(&r);
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_PASS);
        CHECK_STR(v->message, "sender 0000:00:06.0 (10.0.1.10/24): link up in 12.5 ms; gateway 10.0.1.1 answered ARP in 0.25 ms; "
                              "32 round trips to peer 10.0.1.20:39990: p50 20.0 us, p99 45.0 us, max 50.0 us");
        CHECK(json_real_value(json_object_get(json_array_get(json_object_get(v->evidence, "rtt"), 0), "p99_us")) == 45.0);

        /* the threshold: 45 us is above 44, not above 45 */
        o.max_p99_us = 44;
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK(strstr(v->message, "(above SPINLANE_DATAPATH_MAX_P99_US=44)") != NULL);
        CHECK(v->remedy && strstr(v->remedy, "SPINLANE_DATAPATH_MAX_P99_US"));
        o.max_p99_us = 45;
        CHECK_INT(judge(&r, &o, &vl)->level, VERDICT_PASS);
        o.max_p99_us = 0;

        /* some probes lost: WARN; none answered: FAIL naming the path */
        r.port[0].rtt[0].answered = 30;
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_WARN);
        CHECK(strstr(v->message, "(2 of 32 probes unanswered)") != NULL);
        r.port[0].rtt[0].answered = 0;
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK(strstr(v->message, "peer 10.0.1.20:39990: none of 32 UDP probes answered") != NULL);

        /* ARP unanswered: FAIL naming the gateway */
        base(&r);
        r.port[0].arp_ms = -1;
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK_STR(v->message, "sender 0000:00:06.0 (10.0.1.10/24): link up in 12.5 ms; gateway 10.0.1.1 did not answer ARP within 2000 ms");

        /* link down, a port that did not start */
        base(&r);
        r.port[0].link_up = false;
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK_STR(v->message, "sender 0000:00:06.0 (10.0.1.10/24): link still down 2000 ms after the port started");
        base(&r);
        r.port[0].open_err = -5;
        snprintf(r.port[0].open_msg, sizeof(r.port[0].open_msg), "device has 1 RX queue");
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK(strstr(v->message, "the port did not start: device has 1 RX queue") != NULL);

        /* nothing to ask: WARN; one NIC with a gateway and no peer: PASS with the reason */
        base(&r);
        r.port[0].n_rtt = 0;
        snprintf(r.port[0].note, sizeof(r.port[0].note), "one NIC and no SPINLANE_DATAPATH_PEER");
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_PASS);
        CHECK(strstr(v->message, "; no round trip: one NIC and no SPINLANE_DATAPATH_PEER") != NULL);
        r.port[0].arp_target = 0;
        CHECK_INT(judge(&r, &o, &vl)->level, VERDICT_WARN);

        /* the EAL did not start: one FAIL */
        base(&r);
        r.eal_err = -22;
        snprintf(r.eal_msg, sizeof(r.eal_msg), "Invalid argument");
        v = judge(&r, &o, &vl);
        CHECK_INT(v->level, VERDICT_FAIL);
        CHECK(strstr(v->message, "the DPDK EAL did not start") != NULL);
        verdict_list_free(&vl);

        /* nearest rank */
        uint64_t s[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
        CHECK_INT(dpath_percentile(s, 10, 50), 5);
        CHECK_INT(dpath_percentile(s, 10, 99), 10);
        CHECK_INT(dpath_percentile(s, 10, 100), 10);
        CHECK_INT(dpath_percentile(s, 1, 50), 1);
        CHECK_INT(dpath_percentile(s, 0, 50), 0);
        return test_done();
}
