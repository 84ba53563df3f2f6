/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for the environment-knob parser: a table of values (good, garbage, out of bounds),
 * the default when unset, the message naming the variable, the value and the bounds. */
#include "envknob.h"
#include "testutil.h"

#include <errno.h>

static const struct {
        const char *value;
        int r;
        uint64_t want;
        const char *why;
} cases[] = {
        { NULL, 0, 7, "" },
        { "", 0, 7, "" },
        { "50", 0, 50, "" },
        { "3600000", 0, 3600000, "" },
        { "0300", 0, 300, "" },
        { "49", -ERANGE, 7, "SPINLANE_T_MS=49: not 50..3600000" },
        { "3600001", -ERANGE, 7, "SPINLANE_T_MS=3600001: not 50..3600000" },
        { "99999999999999999999999", -ERANGE, 7, "SPINLANE_T_MS=99999999999999999999999: not 50..3600000" },
        { "abc", -EINVAL, 7, "SPINLANE_T_MS=abc: not 50..3600000" },
        { "100ms", -EINVAL, 7, "SPINLANE_T_MS=100ms: not 50..3600000" },
        { " 100", -EINVAL, 7, "SPINLANE_T_MS= 100: not 50..3600000" },
        { "-1", -EINVAL, 7, "SPINLANE_T_MS=-1: not 50..3600000" },
        { "+100", -EINVAL, 7, "SPINLANE_T_MS=+100: not 50..3600000" },
};

int main(void)
{
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char why[160] = "";
                uint64_t v = 12345;
                CHECK_INT(envknob_parse_u64("SPINLANE_T_MS", cases[i].value, 50, 3600000, 7, &v, why, sizeof(why)),
                          cases[i].r);
                CHECK_INT(v, cases[i].want);
                CHECK_STR(why, cases[i].why);
        }

        /* a long value is cut in the message; a short buffer is cut too, NUL-terminated */
        char lng[300], why[160], tiny[8];
        uint64_t v;
        memset(lng, 'x', sizeof(lng) - 1);
        lng[sizeof(lng) - 1] = '\0';
        CHECK_INT(envknob_parse_u64("K", lng, 1, 2, 1, &v, why, sizeof(why)), -EINVAL);
        CHECK_INT(strlen(why), strlen("K=") + 80 + strlen(": not 1..2"));
        CHECK_INT(envknob_parse_u64("K", "9", 1, 2, 1, &v, tiny, sizeof(tiny)), -ERANGE);
        CHECK_STR(tiny, "K=9: no");

        /* from the environment */
        CHECK_INT(unsetenv("SPINLANE_TEST_KNOB_MS"), 0);
        CHECK_INT(envknob_u64("SPINLANE_TEST_KNOB_MS", 100, 200, 150, &v, why, sizeof(why)), 0);
        CHECK_INT(v, 150);
        CHECK_INT(setenv("SPINLANE_TEST_KNOB_MS", "120", 1), 0);
        CHECK_INT(envknob_u64("SPINLANE_TEST_KNOB_MS", 100, 200, 150, &v, why, sizeof(why)), 0);
        CHECK_INT(v, 120);
        CHECK_INT(setenv("SPINLANE_TEST_KNOB_MS", "20", 1), 0);
        CHECK_INT(envknob_u64("SPINLANE_TEST_KNOB_MS", 100, 200, 150, &v, why, sizeof(why)), -ERANGE);
        CHECK_INT(v, 150);
        CHECK_STR(why, "SPINLANE_TEST_KNOB_MS=20: not 100..200");
        return test_done();
}
