/* SPDX-License-Identifier: Apache-2.0 */
/* Table tests for the CPU list parser and the set operations. */
#include "cpuset.h"
#include "testutil.h"

#include <errno.h>

static const struct {
        const char *in;
        int ret;
        const char *canon; /* format() of the result */
} cases[] = {
        {"", 0, ""},
        {"\n", 0, ""},
        {"0", 0, "0"},
        {"0-3,8,10-11\n", 0, "0-3,8,10-11"},
        {"3,2,1,0", 0, "0-3"},
        {"0-0", 0, "0"},
        {"1-2,2-3", 0, "1-3"},
        {"4095", 0, "4095"},
        {"4096", -ERANGE, NULL},
        {"0-999999", -ERANGE, NULL},
        {"99999999999999999999", -ERANGE, NULL},
        {"3-1", -EINVAL, NULL},
        {"1,,2", -EINVAL, NULL},
        {"2-", -EINVAL, NULL},
        {"-2", -EINVAL, NULL},
        {",1", -EINVAL, NULL},
        {"1,", -EINVAL, NULL},
        {"abc", -EINVAL, NULL},
        {" 1", -EINVAL, NULL},
        {"1\n\n", -EINVAL, NULL},
        {"1 ", -EINVAL, NULL},
        {"0x1", -EINVAL, NULL},
};

static void test_parse_table(void)
{
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset s;
                char buf[256];
                memset(&s, 0xa5, sizeof(s));
                cpuset before = s;
                int r = cpuset_parse(cases[i].in, strlen(cases[i].in), &s);
                if (r != cases[i].ret)
                        fprintf(stderr, "case \"%s\"\n", cases[i].in);
                CHECK_INT(r, cases[i].ret);
                if (r == 0) {
                        cpuset_format(&s, buf, sizeof(buf));
                        CHECK_STR(buf, cases[i].canon);
                } else {
                        /* output untouched on failure */
                        CHECK(memcmp(&s, &before, sizeof(s)) == 0);
                }
        }
}

static void test_not_nul_terminated(void)
{
        const char raw[] = {'1', '-', '3', '9', '9'};
        cpuset s;
        CHECK_INT(cpuset_parse(raw, 3, &s), 0);
        CHECK_INT(cpuset_count(&s), 3);
}

static void test_mask(void)
{
        cpuset s;
        char buf[64];
        CHECK_INT(cpuset_parse_mask("ff,00000001\n", 12, &s), 0);
        cpuset_format(&s, buf, sizeof(buf));
        CHECK_STR(buf, "0,32-39");
        CHECK_INT(cpuset_parse_mask("g", 1, &s), -EINVAL);
        CHECK_INT(cpuset_parse_mask("", 0, &s), -EINVAL);
}

static void test_ops(void)
{
        cpuset a, b, c;
        CHECK_INT(cpuset_parse("0-7", 3, &a), 0);
        CHECK_INT(cpuset_parse("4-11", 4, &b), 0);
        cpuset_and(&c, &a, &b);
        CHECK_INT(cpuset_count(&c), 4);
        CHECK(cpuset_subset(&c, &a));
        CHECK(!cpuset_subset(&a, &b));
        CHECK(cpuset_intersects(&a, &b));
        cpuset_andnot(&c, &a, &b);
        CHECK_INT(cpuset_next(&c, 0), 0);
        CHECK_INT(cpuset_next(&c, 4), -1);
        cpuset_or(&c, &a, &b);
        CHECK_INT(cpuset_count(&c), 12);
        cpuset_zero(&c);
        CHECK(cpuset_empty(&c));
        cpuset_set(&c, CPUSET_MAX - 1);
        CHECK_INT(cpuset_next(&c, 0), CPUSET_MAX - 1);
        int n = 0;
        CPUSET_FOREACH(cpu, &a) n += cpu;
        CHECK_INT(n, 28);
}

static void test_format_truncation(void)
{
        cpuset s;
        char buf[4];
        CHECK_INT(cpuset_parse("0,2,4,6", 7, &s), 0);
        CHECK_INT(cpuset_format(&s, buf, sizeof(buf)), 7);
        CHECK(strlen(buf) < sizeof(buf));
}

int main(void)
{
        test_parse_table();
        test_not_nul_terminated();
        test_mask();
        test_ops();
        test_format_truncation();
        return test_done();
}
