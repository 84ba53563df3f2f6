/* SPDX-License-Identifier: Apache-2.0 */
/* Table tests for the checked number and token parsers. */
#include "parse.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>

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

/* The one size-suffix parser and printer: every suffix, the two flags, bad input, the
 * output left untouched on failure, and the printer's largest dividing unit. */
static void test_size(void)
{
        static const struct {
                const char *in;
                unsigned flags;
                int r;
                uint64_t kb;
        } t[] = {
                { "2M", 0, 0, 2048 },          { "2MB", 0, 0, 2048 },         { "2Mi", 0, 0, 2048 },
                { "64k", 0, 0, 64 },           { "64K", 0, 0, 64 },           { "64kB", 0, 0, 64 },
                { "64KB", 0, 0, 64 },          { "64Ki", 0, 0, 64 },          { "1G", 0, 0, 1048576 },
                { "1GB", 0, 0, 1048576 },      { "1Gi", 0, 0, 1048576 },      { "2m", 0, -EINVAL, 0 },
                { "2m", PARSE_SIZE_LOWER, 0, 2048 }, { "1g", PARSE_SIZE_LOWER, 0, 1048576 },
                { "2097152", 0, -EINVAL, 0 },  { "2097152", PARSE_SIZE_BYTES, 0, 2048 },
                { "1000", PARSE_SIZE_BYTES, -EINVAL, 0 }, { "", 0, -EINVAL, 0 }, { "M", 0, -EINVAL, 0 },
                { "2X", 0, -EINVAL, 0 },       { "-2M", 0, -EINVAL, 0 },      { "2 M", 0, -EINVAL, 0 },
                { "2MiB", 0, -EINVAL, 0 },     { "99999999999999999999G", 0, -ERANGE, 0 },
                { "18014398509481984G", 0, -ERANGE, 0 },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                uint64_t kb = 7;
                CHECK_INT(parse_size_kb(t[i].in, strlen(t[i].in), t[i].flags, &kb), t[i].r);
                CHECK_INT(kb, t[i].r == 0 ? t[i].kb : 7);
        }
        uint64_t kb = 7;
        CHECK_INT(parse_size_kb("2M\0", 3, 0, &kb), -EINVAL); /* a NUL inside */
        CHECK_INT(parse_size_kb("2MB", 2, 0, &kb), 0);         /* len bounds it */
        CHECK_INT(kb, 2048);

        char buf[32];
        CHECK_INT(format_size_kb(2048, SIZE_UNITS_KERNEL, buf, sizeof(buf)), 2);
        CHECK_STR(buf, "2M");
        format_size_kb(1048576, SIZE_UNITS_HUMAN, buf, sizeof(buf));
        CHECK_STR(buf, "1 GiB");
        format_size_kb(64, SIZE_UNITS_CONFIG, buf, sizeof(buf));
        CHECK_STR(buf, "64kB");
        format_size_kb(3072, SIZE_UNITS_CONFIG, buf, sizeof(buf));
        CHECK_STR(buf, "3M");
        format_size_kb(0, SIZE_UNITS_KERNEL, buf, sizeof(buf));
        CHECK_STR(buf, "0K");
        /* what the printer writes, the parser reads back */
        for (uint64_t v = 4; v <= (16ULL << 20); v <<= 1) {
                format_size_kb(v, SIZE_UNITS_CONFIG, buf, sizeof(buf));
                CHECK_INT(parse_size_kb(buf, strlen(buf), 0, &kb), 0);
                CHECK_INT(kb, v);
        }
}

int main(void)
{
        test_u64();
        test_int();
        test_hex();
        test_tokens();
        test_size();
        return test_done();
}
