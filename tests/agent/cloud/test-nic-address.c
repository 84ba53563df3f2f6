/* SPDX-License-Identifier: Apache-2.0 */
/* Where a NIC's address comes from: static entries (by PCI address or MAC) override the
 * metadata; disagreeing static entries, no source at all, two NICs on one address. */
#include "nic-address.h"

#include "testutil.h"

#include <errno.h>

static nic_addr_static entry(const char *pci, const uint8_t *mac, const char *ipv4, const char *gw)
{
        nic_addr_static e = {0};
        char err[NIC_ADDR_ERR_LEN];
        if (pci)
                snprintf(e.pci, sizeof(e.pci), "%s", pci);
        if (mac) {
                e.has_mac = true;
                memcpy(e.mac, mac, 6);
        }
        CHECK_INT(nic_addr_static_parse(ipv4, gw, &e, err, sizeof(err)), 0);
        return e;
}

static void test_static_parse(void)
{
        nic_addr_static e = {.gateway = 7};
        char err[NIC_ADDR_ERR_LEN];
        static const struct {
                const char *ipv4, *gw, *msg;
        } bad[] = {
                {"10.0.0.5", NULL, "expected \"a.b.c.d/len\""},
                {"10.0.0.5/0", NULL, "len 1..32"},
                {"10.0.0.5/33", NULL, "expected"},
                {"10.0.0.0/24", NULL, "network or broadcast"},
                {"10.0.0.255/24", NULL, "network or broadcast"},
                {"10.0.0.5/24", "10.0.1.1", "not another host of the subnet"},
                {"10.0.0.5/24", "10.0.0.5", "not another host"},
                {"10.0.0.5/24", "10.0.0.256", "expected \"a.b.c.d\""},
                {"10.0.0.5/24", "", "expected \"a.b.c.d\""},
                {NULL, NULL, "expected"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                CHECK_INT(nic_addr_static_parse(bad[i].ipv4, bad[i].gw, &e, err, sizeof(err)), -EINVAL);
                CHECK(strstr(err, bad[i].msg) != NULL);
                CHECK_INT(e.gateway, 7);
        }
        CHECK_INT(nic_addr_static_parse("192.168.10.20/24", "192.168.10.254", &e, err, sizeof(err)), 0);
        CHECK_INT(e.ipv4.addr, 0xc0a80a14);
        CHECK_INT(e.ipv4.prefix_len, 24);
        CHECK_INT(e.gateway, 0xc0a80afe);
        CHECK_INT(nic_addr_static_parse("192.168.10.20/32", NULL, &e, err, sizeof(err)), 0);
        CHECK_INT(e.gateway, 0);
}

static void test_resolve(void)
{
        const uint8_t m1[6] = {0x0a, 0, 0, 0, 0, 1}, m2[6] = {0x0a, 0, 0, 0, 0, 2};
        nic_addr_static e[] = {
                entry("0000:00:06.0", NULL, "192.168.1.10/24", "192.168.1.1"),
                entry(NULL, m2, "192.168.2.10/24", NULL),
                entry("0000:00:08.0", m1, "192.168.3.10/24", NULL), /* both must hold */
        };
        nic_addr meta = {.ipv4 = 0x0a000111, .prefix_len = 24, .gateway = 0x0a000101, .source = NIC_ADDR_AWS};
        nic_addr r = {0};
        char err[NIC_ADDR_ERR_LEN];

        /* static by PCI overrides the metadata */
        CHECK_INT(nic_addr_resolve("0000:00:06.0", m1, e, 3, &meta, &r, err, sizeof(err)), 0);
        CHECK_INT(r.source, NIC_ADDR_STATIC);
        CHECK_INT(r.ipv4, 0xc0a8010a);
        CHECK_INT(r.gateway, 0xc0a80101);
        /* by MAC */
        CHECK_INT(nic_addr_resolve("0000:00:07.0", m2, e, 3, &meta, &r, err, sizeof(err)), 0);
        CHECK_INT(r.source, NIC_ADDR_STATIC);
        CHECK_INT(r.ipv4, 0xc0a8020a);
        CHECK_INT(r.gateway, 0);
        /* PCI and MAC entry: only when both match */
        CHECK_INT(nic_addr_resolve("0000:00:08.0", m1, e, 3, &meta, &r, err, sizeof(err)), 0);
        CHECK_INT(r.ipv4, 0xc0a8030a);
        CHECK_INT(nic_addr_resolve("0000:00:08.0", NULL, e, 3, &meta, &r, err, sizeof(err)), 0);
        CHECK_INT(r.source, NIC_ADDR_AWS); /* MAC unknown: the entry does not match */
        /* no static match: the metadata */
        CHECK_INT(nic_addr_resolve("0000:00:09.0", m1, e, 3, &meta, &r, err, sizeof(err)), 0);
        CHECK_INT(r.source, NIC_ADDR_AWS);
        CHECK_INT(r.ipv4, 0x0a000111);
        CHECK_STR(nic_addr_source_name(r.source), "aws-imds");
        /* nothing at all */
        nic_addr u = {.ipv4 = 7};
        CHECK_INT(nic_addr_resolve("0000:00:09.0", m1, e, 3, NULL, &u, err, sizeof(err)), -ENOENT);
        CHECK(strstr(err, "no static entry matches NIC 0000:00:09.0") != NULL);
        nic_addr none = {.source = NIC_ADDR_NONE};
        CHECK_INT(nic_addr_resolve("0000:00:09.0", m1, e, 3, &none, &u, err, sizeof(err)), -ENOENT);
        CHECK_INT(u.ipv4, 7);
        /* two entries for one NIC that disagree */
        nic_addr_static two[] = {entry("0000:00:06.0", NULL, "192.168.1.10/24", NULL),
                                 entry(NULL, m1, "192.168.1.11/24", NULL)};
        CHECK_INT(nic_addr_resolve("0000:00:06.0", m1, two, 2, &meta, &u, err, sizeof(err)), -ENOTUNIQ);
        CHECK(strstr(err, "static entries 0 and 1 both match NIC 0000:00:06.0") != NULL);
        CHECK_INT(u.ipv4, 7);
        /* ... and agreeing duplicates are fine */
        nic_addr_static same[] = {entry("0000:00:06.0", NULL, "192.168.1.10/24", NULL),
                                  entry(NULL, m1, "192.168.1.10/24", NULL)};
        CHECK_INT(nic_addr_resolve("0000:00:06.0", m1, same, 2, NULL, &r, err, sizeof(err)), 0);
        CHECK_STR(nic_addr_source_name(NIC_ADDR_STATIC), "static");
        CHECK_STR(nic_addr_source_name(NIC_ADDR_AZURE), "azure-imds");
        CHECK_STR(nic_addr_source_name((nic_addr_source)99), "none");
}

static void test_duplicates(void)
{
        nic_addr a[] = {{.ipv4 = 1, .source = NIC_ADDR_AWS}, {.ipv4 = 2, .source = NIC_ADDR_STATIC},
                        {.ipv4 = 1, .source = NIC_ADDR_STATIC}, {.ipv4 = 0, .source = NIC_ADDR_NONE},
                        {.ipv4 = 0, .source = NIC_ADDR_NONE}};
        size_t i = 9, j = 9;
        CHECK_INT(nic_addr_find_duplicate(a, 2, &i, &j), 0);
        CHECK_INT(i, 9);
        CHECK_INT(nic_addr_find_duplicate(a, 3, &i, &j), -EEXIST);
        CHECK_INT(i, 0);
        CHECK_INT(j, 2);
        i = j = 9;
        CHECK_INT(nic_addr_find_duplicate(a + 3, 2, &i, &j), 0); /* unknown is no claim */
}

/* The one rule (nic_addr_check) and metadata's stricter one (nic_addr_check_metadata). */
static void test_check(void)
{
        static const struct {
                const char *cidr;
                int any, meta; /* nic_addr_check, nic_addr_check_metadata */
        } t[] = {
                {"127.0.0.5/8", -EDOM, -EDOM},
                {"224.0.0.5/4", -EDOM, -EDOM},
                {"0.0.0.5/8", -EDOM, -EDOM},
                {"240.0.0.5/4", -EDOM, -EDOM},
                {"255.255.255.255/32", -EDOM, -EDOM},
                {"10.0.0.0/24", -EDOM, -EDOM},         /* network */
                {"10.0.0.255/24", -EDOM, -EDOM},       /* broadcast */
                {"10.0.0.5/0", -EDOM, -EDOM},
                {"169.254.169.254/16", 0, -EDOM},      /* static entries may name link-local peers */
                {"10.0.0.5/1", 0, -EDOM},
                {"10.0.0.5/30", 0, -EDOM},
                {"10.0.0.5/32", 0, -EDOM},
                {"10.0.0.5/8", 0, 0},
                {"10.0.1.17/24", 0, 0},
                {"192.168.7.10/29", 0, 0},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                ipv4_cidr c;
                char err[NIC_ADDR_ERR_LEN];
                CHECK_INT(ipv4_cidr_parse(t[i].cidr, strlen(t[i].cidr), &c), 0);
                err[0] = '\0';
                CHECK_INT(nic_addr_check(c, err, sizeof(err)), t[i].any);
                CHECK((t[i].any == 0) == (err[0] == '\0'));
                err[0] = '\0';
                CHECK_INT(nic_addr_check_metadata(c, err, sizeof(err)), t[i].meta);
                CHECK(t[i].meta == 0 || strstr(err, t[i].cidr) != NULL);
        }
}

int main(void)
{
        test_check();
        test_static_parse();
        test_resolve();
        test_duplicates();
        return test_done();
}
