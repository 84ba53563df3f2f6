/* SPDX-License-Identifier: Apache-2.0 */
/* Table tests for the checked number and token parsers. */
#include "parse.h"
#include "testutil.h"

#include <errno.h>

static void test_u64(void)
{
        static const struct {
                const char *in;
                uint64_t max;
                int ret;
                uint64_t val;
        } t[] = {
                {"0", 10, 0, 0},           {"10", 10, 0, 10},
                {"11", 10, -ERANGE, 0},    {"", 10, -EINVAL, 0},
                {"abc", 10, -EINVAL, 0},   {"-1", 10, -EINVAL, 0},
                {"1 ", 10, -EINVAL, 0},    {"18446744073709551615", UINT64_MAX, 0, UINT64_MAX},
                {"18446744073709551616", UINT64_MAX, -ERANGE, 0},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                uint64_t v = 12345;
                int r = parse_u64(t[i].in, t[i].max, &v);
                CHECK_INT(r, t[i].ret);
                CHECK(v == (r == 0 ? t[i].val : 12345));
        }
}

static void test_int(void)
{
        int v = 7;
        CHECK_INT(parse_int("-1", -1, 10, &v), 0);
        CHECK_INT(v, -1);
        CHECK_INT(parse_int("-2", -1, 10, &v), -ERANGE);
        CHECK_INT(v, -1);
        CHECK_INT(parse_int("abc", -1, 10, &v), -EINVAL);
        CHECK_INT(parse_int("-", -1, 10, &v), -EINVAL);
}

static void test_hex(void)
{
        uint64_t v;
        CHECK_INT(parse_hex_u64("0x020000", 0xffffff, &v), 0);
        CHECK_INT(v, 0x20000);
        CHECK_INT(parse_hex_u64("1d0f", 0xffff, &v), 0);
        CHECK_INT(v, 0x1d0f);
        CHECK_INT(parse_hex_u64("0x", 0xffff, &v), -EINVAL);
        CHECK_INT(parse_hex_u64("10000", 0xffff, &v), -ERANGE);
}

static void test_tokens(void)
{
        uint8_t mac[6] = {0};
        char s[] = "abc \n";
        CHECK_STR(parse_strip(s), "abc");
        CHECK(parse_is_pci_addr("0000:00:05.0"));
        CHECK(!parse_is_pci_addr("0000:00:05.8"));
        CHECK(!parse_is_pci_addr("0000:00:05"));
        CHECK(!parse_is_pci_addr("0000:0G:05.0"));
        CHECK_INT(parse_mac("02:aB:03:04:05:06", mac), 0);
        CHECK_INT(mac[1], 0xab);
        CHECK_INT(parse_mac("02:ab:03:04:05", mac), -EINVAL);
        CHECK_INT(parse_mac("02-ab-03-04-05-06", mac), -EINVAL);
}

int main(void)
{
        test_u64();
        test_int();
        test_hex();
        test_tokens();
        return test_done();
}
