/* SPDX-License-Identifier: Apache-2.0 */
/* agent/podres's List reply parser, table-driven over replies packed with protobuf-c: only
 * the devices of our resources, sorted, one holder per device (the first), bad names and
 * overflow skipped and counted, bytes that are not the message refused, the limits, and
 * ret untouched on failure. */
#include "podres-parse.h"

#include "podresources.pb-c.h"
#include "cleanup.h"
#include "testutil.h"

#include <errno.h>

typedef struct want {
        const char *pod, *ns, *ctr, *res;
        const char *ids[3];
} want;

/* Pack a reply: one pod per row (rows of the same pod and container merge in the order given). */
static uint8_t *pack(const want *rows, size_t n, size_t *ret_len)
{
        V1__ListPodResourcesResponse m = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
        V1__PodResources *pods = calloc(n, sizeof(*pods)), **pp = calloc(n, sizeof(*pp));
        V1__ContainerResources *ctrs = calloc(n, sizeof(*ctrs)), **cp = calloc(n, sizeof(*cp));
        V1__ContainerDevices *devs = calloc(n, sizeof(*devs)), **dp = calloc(n, sizeof(*dp));
        for (size_t i = 0; i < n; i++) {
                v1__pod_resources__init(&pods[i]);
                v1__container_resources__init(&ctrs[i]);
                v1__container_devices__init(&devs[i]);
                pods[i].name = (char *)rows[i].pod;
                pods[i].namespace_ = (char *)rows[i].ns;
                ctrs[i].name = (char *)rows[i].ctr;
                devs[i].resource_name = (char *)rows[i].res;
                for (size_t k = 0; k < 3 && rows[i].ids[k]; k++)
                        devs[i].n_device_ids++;
                devs[i].device_ids = (char **)rows[i].ids;
                dp[i] = &devs[i];
                ctrs[i].n_devices = 1;
                ctrs[i].devices = &dp[i];
                cp[i] = &ctrs[i];
                pods[i].n_containers = 1;
                pods[i].containers = &cp[i];
                pp[i] = &pods[i];
        }
        m.n_pod_resources = n;
        m.pod_resources = pp;
        size_t len = v1__list_pod_resources_response__get_packed_size(&m);
        uint8_t *buf = malloc(len ? len : 1);
        v1__list_pod_resources_response__pack(&m, buf);
        free(pods), free(pp), free(ctrs), free(cp), free(devs), free(dp);
        *ret_len = len;
        return buf;
}

static void test_table(void)
{
        static const want rows[] = {
                {"aeron-1", "trading", "driver", "spinlane.io/isolated-core", {"p0c3", "p0c2", NULL}},
                {"aeron-0", "trading", "driver", "spinlane.io/dpdk-nic", {"0000:00:06.0", NULL}},
                {"gpu", "ml", "train", "nvidia.com/gpu", {"GPU-0", NULL}},
                {"late", "trading", "x", "spinlane.io/dpdk-nic", {"0000:00:06.0", NULL}},  /* a second holder */
                {"bad pod", "trading", "x", "spinlane.io/dpdk-nic", {"0000:00:07.0", NULL}}, /* not a name */
                {"p", "ns", "c", "spinlane.iox/dpdk-nic", {"0000:00:08.0", NULL}},          /* another prefix */
        };
        podres_table t = {0};
        char err[128];
        size_t len;
        uint8_t *buf = pack(rows, ELEMENTSOF(rows), &len);

        CHECK_INT(podres_parse_list(buf, len, "spinlane.io", &t, err, sizeof(err)), 0);
        CHECK_INT(t.n, 3);
        CHECK_INT(t.skipped, 2);
        CHECK_STR(t.items[0].resource, "spinlane.io/dpdk-nic");
        CHECK_STR(t.items[0].device, "0000:00:06.0");
        CHECK_STR(t.items[0].pod, "aeron-0"); /* the first holder in reply order */
        CHECK_STR(t.items[1].device, "p0c2");
        CHECK_STR(t.items[2].device, "p0c3");
        const podres_assignment *a = podres_find(&t, "spinlane.io/isolated-core", "p0c3");
        CHECK(a && strcmp(a->pod, "aeron-1") == 0 && strcmp(a->ns, "trading") == 0 && strcmp(a->container, "driver") == 0);
        CHECK(podres_find(&t, "nvidia.com/gpu", "GPU-0") == NULL);
        CHECK(podres_find(&t, "spinlane.io/dpdk-nic", "0000:00:07.0") == NULL);
        podres_table_free(&t);
        free(buf);

        /* an empty reply is an empty table */
        CHECK_INT(podres_parse_list((const uint8_t *)"", 0, "spinlane.io", &t, err, sizeof(err)), 0);
        CHECK_INT(t.n, 0);
}

static void test_bad(void)
{
        podres_table t = {.n = 42};
        char err[128];
        static const uint8_t garbage[] = {0x0a, 0x05, 0x0a, 0x7f, 0x41}, trunc[] = {0x0a, 0x10, 0x0a};
        CHECK_INT(podres_parse_list(garbage, sizeof(garbage), "spinlane.io", &t, err, sizeof(err)), -EBADMSG);
        CHECK(strstr(err, "not a ListPodResourcesResponse") != NULL);
        CHECK_INT(podres_parse_list(trunc, sizeof(trunc), "spinlane.io", &t, err, sizeof(err)), -EBADMSG);
        CHECK_INT(podres_parse_list(garbage, PODRES_MAX_REPLY + 1, "spinlane.io", &t, err, sizeof(err)), -E2BIG);
        CHECK_INT(podres_parse_list(garbage, 0, "", &t, err, sizeof(err)), -EINVAL);
        CHECK_INT(t.n, 42); /* untouched */

        /* beyond PODRES_MAX_ASSIGN: kept up to the bound, the rest counted */
        size_t n = PODRES_MAX_ASSIGN + 5, len;
        want *rows = calloc(n, sizeof(*rows));
        char (*ids)[16] = calloc(n, 16);
        for (size_t i = 0; i < n; i++) {
                snprintf(ids[i], 16, "d%zu", i);
                rows[i] = (want){"p", "ns", "c", "spinlane.io/dpdk-nic", {ids[i], NULL}};
        }
        uint8_t *buf = pack(rows, n, &len);
        podres_table big = {0};
        CHECK_INT(podres_parse_list(buf, len, "spinlane.io", &big, err, sizeof(err)), 0);
        CHECK_INT(big.n, PODRES_MAX_ASSIGN);
        CHECK_INT(big.skipped, 5);
        podres_table_free(&big);
        free(buf);
        free(rows);
        free(ids);
}

int main(void)
{
        test_table();
        test_bad();
        return test_done();
}
