/* SPDX-License-Identifier: Apache-2.0 */
/* Event aggregation and rate limiting with a clock the test drives: one create, then
 * series patches; a new Event after the series window or for another note; a flapping
 * check held to the bucket, its count kept and sent when tokens return; the results of
 * the calls (gone → create again, exists → patch, failure → again later). */
#include "kube-events.h"

#include "testutil.h"

#include <errno.h>

#define MIN (60 * 1000ull)

static void test_series(void)
{
        kev k;
        kev_action a;
        kev_init(&k, NULL, "node-a", 1000);

        CHECK_INT(kev_observe(&k, 1000, 1767323045000000, "nic-address", "Warning", "NicAddressFailed", "FAIL x", &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        CHECK_INT(a.count, 1);
        CHECK_STR(a.reason, "NicAddressFailed");
        CHECK(strncmp(a.name, "node-a.", 7) == 0);
        char name[KUBE_NAME_MAX + 1];
        snprintf(name, sizeof(name), "%s", a.name);
        kev_result(&k, name, 0);
        /* again within the window: the same Event, a series */
        CHECK_INT(kev_observe(&k, 1000 + MIN, 1767323105000000, "nic-address", "Warning", "NicAddressFailed", "FAIL x", &a), 1);
        CHECK_INT(a.kind, KEV_PATCH);
        CHECK_STR(a.name, name);
        CHECK_INT(a.count, 2);
        CHECK(a.first_us == 1767323045000000 && a.last_us == 1767323105000000);
        kev_result(&k, name, 0);
        /* another note: another Event */
        CHECK_INT(kev_observe(&k, 1000 + 2 * MIN, 1, "nic-address", "Warning", "NicAddressFailed", "FAIL y", &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        CHECK(strcmp(a.name, name) != 0);
        /* after the window: a new Event */
        CHECK_INT(kev_observe(&k, 1000 + 8 * MIN, 2, "nic-address", "Warning", "NicAddressFailed", "FAIL x", &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        CHECK(strcmp(a.name, name) != 0);
        /* the patch found the Event gone (expired): created again, with the count */
        snprintf(name, sizeof(name), "%s", a.name);
        kev_result(&k, name, 0);
        CHECK_INT(kev_observe(&k, 1000 + 9 * MIN, 3, "nic-address", "Warning", "NicAddressFailed", "FAIL x", &a), 1);
        CHECK_INT(a.kind, KEV_PATCH);
        kev_result(&k, name, -ENOENT);
        CHECK_INT(kev_next(&k, 1000 + 9 * MIN, &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        CHECK_INT(a.count, 2);
        CHECK_STR(a.name, name);
        kev_result(&k, name, -EEXIST); /* it existed after all: patch */
        CHECK_INT(kev_next(&k, 1000 + 9 * MIN, &a), 1);
        CHECK_INT(a.kind, KEV_PATCH);
        kev_result(&k, name, 0);
        CHECK_INT(kev_next(&k, 1000 + 9 * MIN, &a), 0);
        CHECK(kev_wakeup_ms(&k, 5) == UINT64_MAX);
        CHECK_INT(kev_observe(&k, 1, 1, "", "Warning", "R", "", &a), -EINVAL);
        CHECK_INT(kev_observe(&k, 1, 1, "c", "Error", "R", "", &a), -EINVAL);
        CHECK_INT(kev_observe(&k, 1, 1, "c", "Normal", "", "", &a), -EINVAL);
}

static void test_flapping(void)
{
        kev k;
        kev_action a;
        kev_params p = {.burst = 5, .refill_ms = MIN};
        unsigned calls = 0;
        uint64_t t = 0;

        kev_init(&k, &p, "node-a", 0);
        /* a device flapping every 100 ms for 10 minutes: 6000 changes */
        for (int i = 0; i < 6000; i++, t += 100) {
                bool fail = i % 2 == 0;
                int r = kev_observe(&k, t, (int64_t)t * 1000, "nic-binding", fail ? "Warning" : "Normal",
                                    fail ? "NicBindingFailed" : "NicBindingPassed", fail ? "FAIL" : "PASS", &a);
                CHECK(r >= 0);
                if (r == 1) {
                        calls++;
                        kev_result(&k, a.name, 0);
                }
                while (kev_next(&k, t, &a) == 1) {
                        calls++;
                        kev_result(&k, a.name, 0);
                }
        }
        /* the burst, then one a minute: 5 + 10 */
        CHECK(calls <= 5 + 10);
        CHECK(calls >= 5);
        CHECK(k.suppressed > 5900);
        /* quiet now: what was held back goes out as tokens return, with the full counts */
        CHECK(kev_wakeup_ms(&k, t) != UINT64_MAX);
        int32_t warn = 0, normal = 0;
        for (int m = 0; m < 10; m++) {
                t += MIN;
                while (kev_next(&k, t, &a) == 1) {
                        if (strcmp(a.type, "Warning") == 0)
                                warn = a.count;
                        else
                                normal = a.count;
                        CHECK_INT(a.kind, KEV_PATCH);
                        kev_result(&k, a.name, 0);
                }
        }
        CHECK_INT(warn, 3000);
        CHECK_INT(normal, 3000);
        CHECK(kev_wakeup_ms(&k, t) == UINT64_MAX);

        /* a failed call is held back and tried again */
        kev_init(&k, &p, "node-a", 0);
        CHECK_INT(kev_observe(&k, 0, 0, "hugepages", "Warning", "HugepagesFailed", "FAIL", &a), 1);
        kev_result(&k, a.name, -ETIMEDOUT);
        CHECK_INT(kev_wakeup_ms(&k, 0), 0);
        CHECK_INT(kev_next(&k, 0, &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
}

static void test_eviction(void)
{
        kev k;
        kev_action a;
        char check[32];
        kev_init(&k, &(kev_params){.burst = 1000}, "n", 0);
        for (int i = 0; i < KEV_MAX_ENTRIES + 10; i++) {
                snprintf(check, sizeof(check), "check-%d", i);
                CHECK_INT(kev_observe(&k, (uint64_t)i, i, check, "Warning", "R", "", &a), 1);
                kev_result(&k, a.name, 0);
        }
        /* the oldest are gone: check-0 starts a new Event */
        CHECK_INT(kev_observe(&k, 100, 100, "check-0", "Warning", "R", "", &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        /* a recent one is still a series */
        CHECK_INT(kev_observe(&k, 101, 101, "check-70", "Warning", "R", "", &a), 1);
        CHECK_INT(a.kind, KEV_PATCH);
}

/* Calls that never reached the API server give their token back: an outage of any length
 * costs the bucket nothing, and a deferred create is a create again. */
static void test_defer(void)
{
        kev k;
        kev_action a;
        char name[KUBE_NAME_MAX + 1];
        kev_init(&k, &(kev_params){.burst = 2, .refill_ms = 10 * MIN}, "n", 0);
        CHECK_INT(kev_observe(&k, 0, 1, "hugepages", "Warning", "HugepagesFailed", "FAIL h", &a), 1);
        CHECK_INT(a.kind, KEV_CREATE);
        snprintf(name, sizeof(name), "%s", a.name);
        for (int i = 0; i < 100; i++) { /* a long outage: the same action again and again */
                kev_defer(&k, name);
                CHECK_INT(kev_next(&k, (uint64_t)i, &a), 1);
                CHECK_INT(a.kind, KEV_CREATE);
                CHECK_STR(a.name, name);
        }
        kev_result(&k, name, 0);
        CHECK(k.tokens >= 0.99 && k.tokens <= 1.01); /* one spent, by the call that got through */
        CHECK_INT(kev_observe(&k, 200, 2, "hugepages", "Warning", "HugepagesFailed", "FAIL h", &a), 1);
        CHECK_INT(a.kind, KEV_PATCH);
        kev_defer(&k, name);
        CHECK_INT(kev_next(&k, 201, &a), 1);
        CHECK_INT(a.kind, KEV_PATCH); /* created before: still a patch */
        CHECK_INT(a.count, 2);
        kev_result(&k, name, 0);
        kev_defer(&k, name); /* nothing in flight: no effect */
        CHECK_INT(kev_next(&k, 202, &a), 0);
        CHECK(k.tokens < 0.01);
}

int main(void)
{
        test_series();
        test_flapping();
        test_eviction();
        test_defer();
        return test_done();
}
