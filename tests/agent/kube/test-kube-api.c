/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes request bodies and reply parsing: label syntax, the Node reply, the label
 * merge patch (only our keys, nulls for ours no longer wanted, nothing when nothing
 * changes), reasons from check ids, MicroTime, Event bodies and series patches, Status
 * errors of every shape, Retry-After. */
#include "kube-api.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>

static void test_labels(void)
{
        CHECK(kube_label_key_valid("spinlane.io/ready"));
        CHECK(kube_label_key_valid("ready"));
        CHECK(!kube_label_key_valid("Spinlane.io/ready"));
        CHECK(!kube_label_key_valid("spinlane.io/"));
        CHECK(!kube_label_key_valid("/ready"));
        CHECK(!kube_label_key_valid("spinlane.io/-x"));
        CHECK(!kube_label_key_valid("a/b/c"));
        CHECK(kube_label_value_valid(""));
        CHECK(kube_label_value_valid("true"));
        CHECK(kube_label_value_valid("ena-1.x_y"));
        CHECK(!kube_label_value_valid("-x"));
        CHECK(!kube_label_value_valid("a b"));
        CHECK(!kube_label_value_valid("0123456789012345678901234567890123456789012345678901234567890123"));
}

static const char *NODE = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u-1\",\"resourceVersion\":\"42\","
                          "\"labels\":{\"kubernetes.io/hostname\":\"n\",\"spinlane.io/ready\":\"false\",\"spinlane.io/old\":\"1\","
                          "\"spinlane.io/node-pool\":\"true\"}}}";

static void test_node_and_patch(void)
{
        kube_node_info n = {0};
        char err[256], *body = NULL;

        CHECK_INT(kube_node_parse(NODE, strlen(NODE), KUBE_LABEL_PREFIX, &n, err, sizeof(err)), 0);
        CHECK_STR(n.uid, "u-1");
        CHECK_STR(n.resource_version, "42");
        CHECK_INT(json_object_size(n.own_labels), 3);

        /* old: ours, to go; node-pool: under the prefix but not named, never touched */
        const kube_label want[] = {{"spinlane.io/ready", "true"}, {"spinlane.io/nics", "2"}, {"spinlane.io/old", NULL}};
        CHECK_INT(kube_label_patch(want, 3, n.own_labels, n.resource_version, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), 1);
        CHECK_STR(body, "{\"metadata\":{\"labels\":{\"spinlane.io/nics\":\"2\",\"spinlane.io/old\":null,\"spinlane.io/ready\":\"true\"},"
                        "\"resourceVersion\":\"42\"}}");
        free(body);
        body = NULL;
        const kube_label same[] = {{"spinlane.io/ready", "false"}, {"spinlane.io/old", "1"}, {"spinlane.io/gone", NULL}};
        CHECK_INT(kube_label_patch(same, 3, n.own_labels, "42", KUBE_LABEL_PREFIX, &body, err, sizeof(err)), 0);
        CHECK(body == NULL);
        const kube_label drop[] = {{"spinlane.io/old", NULL}};
        CHECK_INT(kube_label_patch(drop, 1, n.own_labels, "42", KUBE_LABEL_PREFIX, &body, err, sizeof(err)), 1);
        CHECK_STR(body, "{\"metadata\":{\"labels\":{\"spinlane.io/old\":null},\"resourceVersion\":\"42\"}}");
        free(body);
        body = NULL;
        CHECK_INT(kube_label_patch(NULL, 0, NULL, NULL, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), 0);
        CHECK_INT(kube_label_patch(want, 1, NULL, NULL, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), 1);
        CHECK_STR(body, "{\"metadata\":{\"labels\":{\"spinlane.io/ready\":\"true\"}}}");
        free(body);
        body = NULL;
        const kube_label foreign[] = {{"kubernetes.io/hostname", "x"}}, dup[] = {{"spinlane.io/a", "1"}, {"spinlane.io/a", "2"}},
                         badv[] = {{"spinlane.io/a", "a b"}};
        CHECK_INT(kube_label_patch(foreign, 1, NULL, NULL, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "kubernetes.io/hostname") != NULL);
        CHECK_INT(kube_label_patch(dup, 2, NULL, NULL, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), -EINVAL);
        CHECK_INT(kube_label_patch(badv, 1, NULL, NULL, KUBE_LABEL_PREFIX, &body, err, sizeof(err)), -EINVAL);
        CHECK(body == NULL);
        kube_node_info_clear(&n);

        static const char *bad[] = {"<html>", "{\"metadata\":{}}", "{\"metadata\":{\"uid\":\"u\"}}",
                                    "{\"metadata\":{\"uid\":\"u\",\"resourceVersion\":\"1\",\"labels\":[]}}",
                                    "{\"metadata\":{\"uid\":\"u\",\"resourceVersion\":\"1\",\"labels\":{\"spinlane.io/x\":1}}}",
                                    "{\"metadata\":{\"uid\":\"u u\",\"resourceVersion\":\"1\"}}", "[1,2"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                kube_node_info u = {.uid = "untouched"};
                CHECK_INT(kube_node_parse(bad[i], strlen(bad[i]), KUBE_LABEL_PREFIX, &u, err, sizeof(err)), -EBADMSG);
                CHECK_STR(u.uid, "untouched");
        }
        CHECK_INT(kube_node_parse(NODE, KUBE_MAX_REPLY + 1, KUBE_LABEL_PREFIX, &n, err, sizeof(err)), -E2BIG);
}

static void test_reason_time_name(void)
{
        char b[KUBE_REASON_MAX + 1], t[40], n[KUBE_NAME_MAX + 1];
        CHECK_INT(kube_reason_from_check("nic-address", "Failed", b, sizeof(b)), 0);
        CHECK_STR(b, "NicAddressFailed");
        CHECK_INT(kube_reason_from_check("cpu-quota", NULL, b, sizeof(b)), 0);
        CHECK_STR(b, "CpuQuota");
        CHECK_INT(kube_reason_from_check("write-combining", "Passed", b, sizeof(b)), 0);
        CHECK_STR(b, "WriteCombiningPassed");
        CHECK_INT(kube_reason_from_check("iommu", "", b, sizeof(b)), 0);
        CHECK_STR(b, "Iommu");
        CHECK_INT(kube_reason_from_check("", "x", b, sizeof(b)), -EINVAL);
        CHECK_INT(kube_reason_from_check("---", "x", b, sizeof(b)), -EINVAL);
        CHECK_INT(kube_reason_from_check("a b", "x", b, sizeof(b)), -EINVAL);
        CHECK_INT(kube_reason_from_check("nic-address", "Fa iled", b, sizeof(b)), -EINVAL);
        CHECK_INT(kube_reason_from_check("nic-address", "Failed", b, 8), -ENAMETOOLONG);
        CHECK_STR(kube_microtime(1767323045123456, t, sizeof(t)), "2026-01-02T03:04:05.123456Z");
        CHECK_STR(kube_microtime(0, t, sizeof(t)), "1970-01-01T00:00:00.000000Z");
        CHECK_INT(kube_event_name("node-a", 0x18a1f2b3c4d5e6f7, 1, n, sizeof(n)), 0);
        CHECK_STR(n, "node-a.18a1f2b3c4d5e6f701");
        char longnode[300];
        memset(longnode, 'a', sizeof(longnode) - 1);
        longnode[sizeof(longnode) - 1] = '\0';
        CHECK_INT(kube_event_name(longnode, 1, 2, n, sizeof(n)), 0);
        CHECK_INT(strlen(n), KUBE_NAME_MAX);
        CHECK_INT(kube_event_name("", 1, 2, n, sizeof(n)), -EINVAL);
}

static void test_event_body(void)
{
        char err[256], *s = NULL;
        char note[2000];
        memset(note, 'x', sizeof(note) - 4);
        memcpy(note + 1023, "\xc3\xa9", 2); /* an é across the cut at 1024 */
        note[sizeof(note) - 1] = '\0';
        kube_event e = {.name = "node-a.1", .node = "node-a", .type = "Warning", .reason = "NicAddressFailed",
                        .action = "Check", .note = "FAIL nic-address: x", .reporting_instance = "spinlane-agent-node-a",
                        .event_time_us = 1767323045123456};
        CHECK_INT(kube_event_body(&e, &s, err, sizeof(err)), 0);
        CHECK_STR(s, "{\"action\":\"Check\",\"apiVersion\":\"events.k8s.io/v1\",\"eventTime\":\"2026-01-02T03:04:05.123456Z\","
                     "\"kind\":\"Event\",\"metadata\":{\"name\":\"node-a.1\",\"namespace\":\"default\"},\"note\":\"FAIL nic-address: x\","
                     "\"reason\":\"NicAddressFailed\",\"regarding\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"},"
                     "\"reportingController\":\"spinlane.io/agent\",\"reportingInstance\":\"spinlane-agent-node-a\",\"type\":\"Warning\"}");
        free(s);
        s = NULL;
        e.note = note;
        e.series_count = 3;
        e.series_last_us = 1767323046000000;
        e.node_uid = "u-1";
        CHECK_INT(kube_event_body(&e, &s, err, sizeof(err)), 0);
        json_t *j = json_loads(s, 0, NULL);
        CHECK_INT(strlen(json_string_value(json_object_get(j, "note"))), 1023); /* cut before the é */
        CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "series"), "count")), 3);
        CHECK_STR(json_string_value(json_object_get(json_object_get(j, "regarding"), "uid")), "u-1");
        json_decref(j);
        free(s);
        s = NULL;
        kube_event bad = e;
        bad.type = "Error";
        CHECK_INT(kube_event_body(&bad, &s, err, sizeof(err)), -EINVAL);
        bad = e;
        bad.name = "Node_A";
        CHECK_INT(kube_event_body(&bad, &s, err, sizeof(err)), -EINVAL);
        bad = e;
        bad.series_count = 1;
        CHECK_INT(kube_event_body(&bad, &s, err, sizeof(err)), -EINVAL);
        bad = e;
        bad.reason = "";
        CHECK_INT(kube_event_body(&bad, &s, err, sizeof(err)), -EINVAL);
        CHECK(s == NULL);
        CHECK_INT(kube_event_series_patch(2, 1767323045123456, &s), 0);
        CHECK_STR(s, "{\"series\":{\"count\":2,\"lastObservedTime\":\"2026-01-02T03:04:05.123456Z\"}}");
        free(s);
        CHECK_INT(kube_event_series_patch(1, 0, &s), -EINVAL);
}

static void test_status(void)
{
        kube_status st;
        const char *conflict = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Operation cannot "
                               "be fulfilled\\non nodes\",\"reason\":\"Conflict\",\"code\":409}";
        kube_status_parse(conflict, strlen(conflict), 409, &st);
        CHECK_INT(st.code, 409);
        CHECK_STR(st.reason, "Conflict");
        CHECK_STR(st.message, "Operation cannot be fulfilled on nodes");
        kube_status_parse("<html>502</html>", 16, 502, &st);
        CHECK_INT(st.code, 502);
        CHECK_STR(st.reason, "");
        CHECK_STR(st.message, "a non-JSON reply of 16 bytes");
        kube_status_parse("{\"kind\":\"Node\"}", 15, 500, &st);
        CHECK_STR(st.message, "a non-Status reply of 15 bytes");
        kube_status_parse("{\"kind\":\"Status\",\"code\":99999,\"reason\":7}", 41, 422, &st);
        CHECK_INT(st.code, 422);
        CHECK_STR(st.reason, "");
        static char big[KUBE_MSG_MAX * 4];
        int n = snprintf(big, sizeof(big), "{\"kind\":\"Status\",\"message\":\"");
        memset(big + n, 'm', sizeof(big) - (size_t)n - 3);
        memcpy(big + sizeof(big) - 3, "\"}", 3);
        kube_status_parse(big, strlen(big), 500, &st);
        CHECK_INT(strlen(st.message), KUBE_MSG_MAX - 1);
        kube_status_parse(NULL, 0, 500, &st);
        CHECK_INT(st.code, 500);

        uint32_t r = 9;
        CHECK_INT(kube_retry_after_parse("7", 3600, &r), 0);
        CHECK_INT(r, 7);
        CHECK_INT(kube_retry_after_parse("99999", 3600, &r), 0);
        CHECK_INT(r, 3600);
        r = 9;
        CHECK_INT(kube_retry_after_parse("Wed, 21 Oct 2015 07:28:00 GMT", 3600, &r), -EINVAL);
        CHECK_INT(kube_retry_after_parse("-1", 3600, &r), -EINVAL);
        CHECK_INT(kube_retry_after_parse("", 3600, &r), -EINVAL);
        CHECK_INT(kube_retry_after_parse("123456789012", 3600, &r), -EINVAL);
        CHECK_INT(r, 9);
}

int main(void)
{
        test_labels();
        test_node_and_patch();
        test_reason_time_name();
        test_event_body();
        test_status();
        return test_done();
}
