/* SPDX-License-Identifier: Apache-2.0 */
/* IPv4 and CIDR parsing, subnet arithmetic, printing: tables of good and bad inputs;
 * outputs untouched on failure. */
#include "ipv4.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>

static void test_parse(void)
{
        static const struct {
                const char *s;
                int r;
                uint32_t a;
        } t[] = {
                {"10.0.1.17", 0, 0x0a000111},
                {"0.0.0.0", 0, 0},
                {"255.255.255.255", 0, 0xffffffff},
                {"192.168.0.1", 0, 0xc0a80001},
                {"256.0.0.1", -EINVAL, 0},
                {"01.2.3.4", -EINVAL, 0},
                {"1.2.3", -EINVAL, 0},
                {"1.2.3.4.5", -EINVAL, 0},
                {"1.2.3.4 ", -EINVAL, 0},
                {" 1.2.3.4", -EINVAL, 0},
                {"1..3.4", -EINVAL, 0},
                {"1.2.3.", -EINVAL, 0},
                {"1.2.3.1000", -EINVAL, 0},
                {"a.b.c.d", -EINVAL, 0},
                {"", -EINVAL, 0},
                {"1.2.3.-4", -EINVAL, 0},
                {"+1.2.3.4", -EINVAL, 0},
                {"0x1.2.3.4", -EINVAL, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                uint32_t a = 0xdeadbeef;
                CHECK_INT(ipv4_parse(t[i].s, strlen(t[i].s), &a), t[i].r);
                CHECK_INT(a, t[i].r == 0 ? t[i].a : 0xdeadbeef);
        }
        /* the length bounds the parse: no NUL needed, nothing read past it */
        uint32_t a;
        CHECK_INT(ipv4_parse("10.0.0.1xyz", 8, &a), 0);
        CHECK_INT(a, 0x0a000001);
        CHECK_INT(ipv4_parse("10.0.0.12", 8, &a), 0);
        CHECK_INT(a, 0x0a000001);
}

static void test_cidr(void)
{
        static const struct {
                const char *s;
                int r;
                uint32_t a;
                uint8_t len;
        } t[] = {
                {"10.0.1.0/24", 0, 0x0a000100, 24},
                {"10.0.1.17/24", 0, 0x0a000111, 24},
                {"0.0.0.0/0", 0, 0, 0},
                {"1.2.3.4/32", 0, 0x01020304, 32},
                {"1.2.3.4/33", -EINVAL, 0, 0},
                {"1.2.3.4/", -EINVAL, 0, 0},
                {"1.2.3.4/08", -EINVAL, 0, 0},
                {"1.2.3.4/-1", -EINVAL, 0, 0},
                {"1.2.3.4/100", -EINVAL, 0, 0},
                {"1.2.3.4", -EINVAL, 0, 0},
                {"1.2.3.4/24/8", -EINVAL, 0, 0},
                {"/24", -EINVAL, 0, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                ipv4_cidr c = {.addr = 7, .prefix_len = 7};
                CHECK_INT(ipv4_cidr_parse(t[i].s, strlen(t[i].s), &c), t[i].r);
                CHECK_INT(c.addr, t[i].r == 0 ? t[i].a : 7);
                CHECK_INT(c.prefix_len, t[i].r == 0 ? t[i].len : 7);
        }
}

static void test_math(void)
{
        ipv4_cidr s24 = {0x0a000100, 24}, s31 = {0x0a000100, 31}, s32 = {0x0a000101, 32}, s0 = {0, 0};
        uint32_t gw = 42;
        char b[IPV4_CIDR_STR_MAX];

        CHECK_INT(ipv4_netmask(0), 0);
        CHECK_INT(ipv4_netmask(24), 0xffffff00);
        CHECK_INT(ipv4_netmask(32), 0xffffffff);
        CHECK_INT(ipv4_network((ipv4_cidr){0x0a000111, 24}), 0x0a000100);
        CHECK(ipv4_in_subnet(0x0a0001ff, s24));
        CHECK(!ipv4_in_subnet(0x0a000200, s24));
        CHECK(ipv4_in_subnet(0x01020304, s0));
        CHECK_INT(ipv4_check_host(0x0a000111, s24), 0);
        CHECK_INT(ipv4_check_host(0x0a000100, s24), -EDOM); /* network */
        CHECK_INT(ipv4_check_host(0x0a0001ff, s24), -EDOM); /* broadcast */
        CHECK_INT(ipv4_check_host(0x0a000200, s24), -EDOM); /* outside */
        CHECK_INT(ipv4_check_host(0x0a000100, s31), 0);     /* RFC 3021: both usable */
        CHECK_INT(ipv4_check_host(0x0a000101, s32), 0);
        CHECK_INT(ipv4_gateway_of(s24, &gw), 0);
        CHECK_INT(gw, 0x0a000101);
        gw = 42;
        CHECK_INT(ipv4_gateway_of(s31, &gw), -EDOM);
        CHECK_INT(ipv4_gateway_of(s32, &gw), -EDOM);
        CHECK_INT(gw, 42);
        CHECK_INT(ipv4_gateway_of((ipv4_cidr){0x0a000111, 24}, &gw), 0); /* host bits ignored */
        CHECK_INT(gw, 0x0a000101);
        CHECK_STR(ipv4_format(0xc0a80001, b), "192.168.0.1");
        CHECK_STR(ipv4_format(0xffffffff, b), "255.255.255.255");
        CHECK_STR(ipv4_cidr_format((ipv4_cidr){0x0a000111, 24}, b), "10.0.1.17/24");
        CHECK_STR(ipv4_cidr_format((ipv4_cidr){0xffffffff, 32}, b), "255.255.255.255/32");
        /* link-local: 169.254.0.0/16 exactly */
        CHECK(ipv4_is_link_local(0xa9fea9fe));
        CHECK(ipv4_is_link_local(0xa9fe0000) && ipv4_is_link_local(0xa9feffff));
        CHECK(!ipv4_is_link_local(0xa9fdffff) && !ipv4_is_link_local(0xa9ff0000) && !ipv4_is_link_local(0x0a000001));
}

int main(void)
{
        test_parse();
        test_cidr();
        test_math();
        return test_done();
}
