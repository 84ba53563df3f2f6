/* SPDX-License-Identifier: Apache-2.0 */
/* Ring fitting against device limits (MANA's 256, aligned rings), pool sizing, and the
 * checks tr_port_open makes before it touches a device (tr_port_plan, tr_port_plan_fit):
 * defaults, every refusal with its reason, ret untouched on failure. No DPDK. */
#include <arpa/inet.h>
#include <errno.h>

#include "sizing.h"

#include "testutil.h"

static uint32_t ip4(const char *s)
{
        struct in_addr a;
        if (inet_pton(AF_INET, s, &a) != 1)
                abort();
        return a.s_addr;
}

static void test_ring_fit(void)
{
        static const struct {
                uint16_t want, min, max, align, fit;
        } t[] = {
                { 1024, 0, 0, 0, 1024 },    /* no limits */
                { 1024, 64, 256, 1, 256 },  /* MANA: at most 256 descriptors */
                { 256, 64, 256, 1, 256 },
                { 16, 64, 4096, 1, 64 },    /* below the minimum */
                { 1000, 32, 4096, 32, 992 }, /* aligned down */
                { 40, 64, 4096, 32, 64 },   /* up to the minimum, still aligned */
                { 70, 65, 4096, 32, 96 },   /* aligned down would break the minimum: up */
                { 4095, 0, 4095, 64, 4032 }, /* max not itself aligned */
                { 0, 0, 0, 8, 0 },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                uint16_t v = tr_ring_fit(t[i].want, t[i].min, t[i].max, t[i].align);
                if (v != t[i].fit)
                        fprintf(stderr, "case %zu\n", i);
                CHECK_INT(v, t[i].fit);
        }
        /* one thread, 1024/1024, burst 32, cache 256 on 2 lcores */
        CHECK_INT(tr_pool_size(1, 1024, 1024, 32, 256, 2), 1024 + 1024 + 64 + 1024 + 512 + 768);
        CHECK_INT(tr_pool_size(2, 256, 256, 32, 0, 1), 2 * (512 + 64) + 256 + 512);
}

static struct tr_port_config base(void)
{
        return (struct tr_port_config){ .ipv4 = ip4("10.0.0.1"), .prefix_len = 24 };
}

/* Refusals of the config alone: each gets -EINVAL and a reason naming what is wrong. */
static void test_plan_refusals(void)
{
        static const struct {
                const char *what;
                struct tr_port_config d; /* fields set over base() when non-zero */
                bool zero_ip, prefix0;
                const char *reason;
        } t[] = {
                { "queues", { .n_queues = TR_MAX_QUEUES + 1 }, false, false, "queues 9" },
                { "burst", { .burst = TR_MAX_BURST + 1 }, false, false, "burst 257" },
                { "prefix 0", { 0 }, false, true, "prefix /0" },
                { "prefix 33", { .prefix_len = 33 }, false, false, "prefix /33" },
                { "no address", { 0 }, true, false, "bad configuration" },
                { "igmp v1", { .igmp_version = 1 }, false, false, "igmp v1" },
                { "igmp v4", { .igmp_version = 4 }, false, false, "igmp v4" },
                { "robustness 8", { .igmp_robustness = 8 }, false, false, "robustness 8" },
                { "gateway", { .gateway = 0x0101000a /* 10.0.1.1 */ }, false, false,
                  "gateway outside the /24 subnet" },
                { "mtu", { .mtu = 2007 }, false, false, "MTU 2007 does not fit one 2048-byte packet buffer" },
                { "mtu 4000", { .mtu = 4000 }, false, false, "MTU 4000" },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                struct tr_port_config c = base();
                if (t[i].d.n_queues)
                        c.n_queues = t[i].d.n_queues;
                if (t[i].d.burst)
                        c.burst = t[i].d.burst;
                if (t[i].d.prefix_len)
                        c.prefix_len = t[i].d.prefix_len;
                if (t[i].d.igmp_version)
                        c.igmp_version = t[i].d.igmp_version;
                if (t[i].d.igmp_robustness)
                        c.igmp_robustness = t[i].d.igmp_robustness;
                if (t[i].d.gateway)
                        c.gateway = t[i].d.gateway;
                if (t[i].d.mtu)
                        c.mtu = t[i].d.mtu;
                if (t[i].zero_ip)
                        c.ipv4 = 0;
                if (t[i].prefix0)
                        c.prefix_len = 0;
                struct tr_port_plan p, untouched;
                memset(&p, 0xa5, sizeof(p));
                untouched = p;
                char err[256] = "";
                int r = tr_port_plan(&c, &p, err, sizeof(err));
                if (r != -EINVAL || !strstr(err, t[i].reason))
                        fprintf(stderr, "case %s: %d \"%s\"\n", t[i].what, r, err);
                CHECK_INT(r, -EINVAL);
                CHECK(strstr(err, t[i].reason) != NULL);
                CHECK(memcmp(&p, &untouched, sizeof(p)) == 0);
                CHECK_INT(tr_port_plan(&c, &p, NULL, 0), -EINVAL); /* no buffer: still refused */
        }
}

static void test_plan_defaults(void)
{
        struct tr_port_config c = base();
        struct tr_port_plan p;
        char err[64] = "";
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK_STR(err, "");
        CHECK_INT(p.n_queues, 1);
        CHECK_INT(p.rx_ring, 1024);
        CHECK_INT(p.tx_ring, 1024);
        CHECK_INT(p.burst, 32);
        CHECK_INT(p.mtu, TR_DEFAULT_MTU);
        CHECK_INT(p.ttl, 64);
        CHECK_INT(p.igmp_version, 3);
        CHECK_INT(p.igmp_robustness, 2);
        CHECK_INT(p.igmp_uri_ns, 1000000000ull);
        CHECK_INT(p.arp_rate, 100);
        CHECK_INT(p.arp_ttl_ns, 60000000000ull);
        CHECK_INT(p.arp_retry_ns, 100000000ull);
        CHECK(p.mask == ip4("255.255.255.0"));

        /* explicit values, IGMPv2's 10 s default interval, /32, a gateway in the subnet */
        c = (struct tr_port_config){ .ipv4 = ip4("192.168.7.9"), .prefix_len = 32, .n_queues = 8, .burst = 256,
                                     .mtu = 2006, .ttl = 3, .igmp_version = 2, .igmp_robustness = 7,
                                     .arp_rate = 5, .arp_ttl_ms = 10, .arp_retry_ms = 2, .gateway = ip4("192.168.7.9") };
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK_INT(p.n_queues, 8);
        CHECK_INT(p.burst, 256);
        CHECK_INT(p.mtu, 2006); /* 2006 + 42 = 2048: fits exactly */
        CHECK_INT(p.ttl, 3);
        CHECK_INT(p.igmp_uri_ns, 10000000000ull);
        CHECK_INT(p.igmp_robustness, 7);
        CHECK_INT(p.arp_rate, 5);
        CHECK_INT(p.arp_ttl_ns, 10000000ull);
        CHECK_INT(p.arp_retry_ns, 2000000ull);
        CHECK(p.mask == 0xffffffffu);
        c.igmp_unsolicited_ms = 150;
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK_INT(p.igmp_uri_ns, 150000000ull);
        c = base();
        c.prefix_len = 1;
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK(p.mask == ip4("128.0.0.0"));
}

/* Against a device: queue counts, descriptor limits (defaults fitted silently, explicit
 * sizes refused unless clamping), the spare RX queue. */
static void test_plan_fit(void)
{
        static const struct tr_dev_caps ring = { .driver = "net_ring", .max_rx_queues = 1, .max_tx_queues = 2,
                                                 .rx = { 0, 0, 1 }, .tx = { 0, 0, 1 } };
        static const struct tr_dev_caps mana = { .driver = "net_mana", .max_rx_queues = 16, .max_tx_queues = 16,
                                                 .rx = { 64, 256, 1 }, .tx = { 64, 256, 1 } };
        static const struct tr_dev_caps memif = { .driver = "net_memif", .max_rx_queues = 255, .max_tx_queues = 255,
                                                  .rx = { 0, 0, 1 }, .tx = { 0, 0, 1 } };
        static const struct {
                const char *what;
                const struct tr_dev_caps *dev;
                uint16_t n_queues, rx_ring, tx_ring;
                bool clamp;
                int r;
                uint16_t rx, tx, n_rxq; /* on success */
                const char *reason;     /* on failure */
        } t[] = {
                { "ring, 1 queue", &ring, 1, 0, 0, false, 0, 1024, 1024, 1, NULL },
                { "ring, 2 queues", &ring, 2, 0, 0, false, -EINVAL, 0, 0, 0,
                  "device net_ring has 1 RX / 2 TX queues, 2+3 needed" },
                { "mana defaults fitted", &mana, 1, 0, 0, false, 0, 256, 256, 2, NULL },
                { "mana 1024 refused", &mana, 1, 1024, 0, false, -EINVAL, 0, 0, 0,
                  "rings 1024/1024 outside what net_mana accepts (RX 64..256, TX 64..256 descriptors)" },
                { "mana tx 16 refused", &mana, 1, 0, 16, false, -EINVAL, 0, 0, 0, "rings 1024/16 outside" },
                { "mana clamped", &mana, 1, 1024, 16, true, 0, 256, 64, 2, NULL },
                { "mana 256 fits", &mana, 4, 256, 128, false, 0, 256, 128, 5, NULL },
                { "mana 16 queues: no spare", &mana, 8, 0, 0, false, 0, 256, 256, 9, NULL },
                { "memif 8 queues", &memif, 8, 2048, 512, false, 0, 2048, 512, 9, NULL },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                struct tr_port_config c = base();
                c.n_queues = t[i].n_queues;
                c.rx_ring = t[i].rx_ring;
                c.tx_ring = t[i].tx_ring;
                c.clamp_rings = t[i].clamp;
                struct tr_port_plan plan, out;
                char err[256] = "";
                CHECK_INT(tr_port_plan(&c, &plan, err, sizeof(err)), 0);
                memset(&out, 0x5a, sizeof(out));
                struct tr_port_plan untouched = out;
                int r = tr_port_plan_fit(&plan, &c, t[i].dev, &out, err, sizeof(err));
                if (r != t[i].r)
                        fprintf(stderr, "case %s: %d \"%s\"\n", t[i].what, r, err);
                CHECK_INT(r, t[i].r);
                if (r < 0) {
                        CHECK(strstr(err, t[i].reason) != NULL);
                        CHECK(memcmp(&out, &untouched, sizeof(out)) == 0);
                        continue;
                }
                CHECK_INT(out.rx_ring, t[i].rx);
                CHECK_INT(out.tx_ring, t[i].tx);
                CHECK_INT(out.n_rxq, t[i].n_rxq);
                CHECK_INT(out.n_queues, t[i].n_queues);
                CHECK_INT(out.burst, plan.burst);
        }
        /* in place, and a driver without a name */
        struct tr_port_config c = base();
        c.n_queues = 3;
        struct tr_port_plan p;
        char err[256] = "";
        struct tr_dev_caps anon = ring;
        anon.driver = NULL;
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK_INT(tr_port_plan_fit(&p, &c, &anon, &p, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "device ? has") != NULL);
        CHECK_INT(p.n_queues, 3);
        c.n_queues = 1;
        CHECK_INT(tr_port_plan(&c, &p, err, sizeof(err)), 0);
        CHECK_INT(tr_port_plan_fit(&p, &c, &memif, &p, err, sizeof(err)), 0);
        CHECK_INT(p.n_rxq, 2);
}

int main(void)
{
        test_ring_fit();
        test_plan_refusals();
        test_plan_defaults();
        test_plan_fit();
        return test_done();
}
