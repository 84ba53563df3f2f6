/* SPDX-License-Identifier: Apache-2.0 */
/* dp-request: Allocate contents per NIC kind and for cores, refusals naming the ID,
 * preferred allocation cases, ListAndWatch encoding; requests built with protobuf-c. */
#include "api.pb-c.h"
#include "dp-fixture.h"
#include "dp-request.h"
#include "cleanup.h"
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>

static uint8_t *pack_alloc(char ***ids, const size_t *n, size_t ncont, size_t *ret_len)
{
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        V1beta1__ContainerAllocateRequest cr[8], *crp[8];
        for (size_t c = 0; c < ncont; c++) {
                v1beta1__container_allocate_request__init(&cr[c]);
                cr[c].n_devices_ids = n[c];
                cr[c].devices_ids = ids[c];
                crp[c] = &cr[c];
        }
        req.n_container_requests = ncont;
        req.container_requests = crp;
        size_t len = v1beta1__allocate_request__get_packed_size(&req);
        uint8_t *buf = malloc(len + 1);
        v1beta1__allocate_request__pack(&req, buf);
        *ret_len = len;
        return buf;
}

static const char *env(const V1beta1__ContainerAllocateResponse *r, const char *key)
{
        for (size_t i = 0; i < r->n_envs; i++)
                if (strcmp(r->envs[i]->key, key) == 0)
                        return r->envs[i]->value;
        return NULL;
}

static const char *spec_host(const V1beta1__ContainerAllocateResponse *r, const char *container)
{
        for (size_t i = 0; i < r->n_devices; i++)
                if (strcmp(r->devices[i]->container_path, container) == 0)
                        return r->devices[i]->host_path;
        return NULL;
}

/* Run Allocate with one container holding ids; returns the decoded response or NULL
 * (then st holds the refusal). */
static V1beta1__AllocateResponse *allocate(device_kind kind, const dp_alloc_config *cfg, const device_list *l,
                                           char **ids, size_t n, dp_status *st, int *ret_r)
{
        size_t len, out_len = 0;
        uint8_t *out = NULL;
        uint8_t *req = pack_alloc(&ids, &n, 1, &len);
        *ret_r = dp_handle_allocate(kind, cfg, l, req, len, st, &out, &out_len);
        free(req);
        if (*ret_r < 0) {
                CHECK(out == NULL);
                return NULL;
        }
        V1beta1__AllocateResponse *resp = v1beta1__allocate_response__unpack(NULL, out_len, out);
        free(out);
        return resp;
}

static void test_allocate_nics(void)
{
        device_list l = { 0 };
        dp_alloc_config cfg;
        dp_status st;
        int r;

        fixture_nics(&l);
        dp_alloc_config_default(&cfg);
        /* request order reversed: the response is sorted by PCI address */
        char *ids[] = { "7870:00:00.0", "0000:00:07.0", "0000:00:06.0" };
        V1beta1__AllocateResponse *resp = allocate(DEVICE_NIC, &cfg, &l, ids, 3, &st, &r);
        CHECK_INT(r, 0);
        CHECK(resp && resp->n_container_responses == 1);
        if (resp && resp->n_container_responses == 1) {
                V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
                CHECK_STR(env(c, "SPINLANE_DPDK_NICS"), "0000:00:06.0,0000:00:07.0,7870:00:00.0");
                CHECK_STR(env(c, "SPINLANE_NIC_0_PCI"), "0000:00:06.0");
                CHECK_STR(env(c, "SPINLANE_NIC_0_KIND"), "ena");
                CHECK_STR(env(c, "SPINLANE_NIC_0_DRIVER"), "vfio-pci");
                CHECK_STR(env(c, "SPINLANE_NIC_0_DEVARGS"), "0000:00:06.0");
                CHECK_STR(env(c, "SPINLANE_NIC_0_DEVICES"), "/dev/vfio/vfio,/dev/vfio/7");
                CHECK_STR(env(c, "SPINLANE_NIC_0_MAC"), "0a:00:00:00:00:06");
                CHECK_STR(env(c, "SPINLANE_NIC_0_NUMA"), "0");
                CHECK_STR(env(c, "SPINLANE_NIC_0_IPV4"), "10.0.6.10/24");
                CHECK_STR(env(c, "SPINLANE_NIC_0_GATEWAY"), "10.0.6.1");
                CHECK_STR(env(c, "SPINLANE_NIC_1_IPV4"), "10.0.7.10/24");
                CHECK_STR(env(c, "SPINLANE_NIC_2_IPV4"), "10.0.0.10/24");
                CHECK_STR(env(c, "SPINLANE_NIC_2_GATEWAY"), ""); /* none: sent empty */
                CHECK_STR(env(c, "SPINLANE_NIC_1_DEVICES"), "/dev/vfio/vfio,/dev/vfio/3");
                CHECK_STR(env(c, "SPINLANE_NIC_2_KIND"), "mana");
                CHECK_STR(env(c, "SPINLANE_NIC_2_DRIVER"), "mana");
                CHECK_STR(env(c, "SPINLANE_NIC_2_NUMA"), "-1");
                CHECK_STR(env(c, "SPINLANE_NIC_2_DEVARGS"), "7870:00:00.0,mac=00:0d:3a:11:22:33");
                CHECK_STR(env(c, "SPINLANE_HUGEPAGE_DIR"), "/dev/hugepages");
                /* vfio container shared once; no-IOMMU group mapped; MANA uverbs */
                CHECK_INT(c->n_devices, 4);
                CHECK_STR(spec_host(c, "/dev/vfio/vfio"), "/dev/vfio/vfio");
                CHECK_STR(spec_host(c, "/dev/vfio/7"), "/dev/vfio/7");
                CHECK_STR(spec_host(c, "/dev/vfio/3"), "/dev/vfio/noiommu-3");
                CHECK_STR(spec_host(c, "/dev/infiniband/uverbs0"), "/dev/infiniband/uverbs0");
                for (size_t i = 0; i < c->n_devices; i++)
                        CHECK_STR(c->devices[i]->permissions, "rw");
                CHECK_INT(c->n_mounts, 1);
                if (c->n_mounts == 1) {
                        CHECK_STR(c->mounts[0]->host_path, "/dev/hugepages");
                        CHECK_STR(c->mounts[0]->container_path, "/dev/hugepages");
                        CHECK(!c->mounts[0]->read_only);
                }
                CHECK_INT(c->n_annotations, 1);
                if (c->n_annotations == 1) {
                        CHECK_STR(c->annotations[0]->key, "spinlane.io/dpdk-nics");
                        CHECK_STR(c->annotations[0]->value, "0000:00:06.0,0000:00:07.0,7870:00:00.0");
                }
                CHECK_INT(c->n_cdi_devices, 0);
        }
        v1beta1__allocate_response__free_unpacked(resp, NULL);

        /* igb_uio */
        char *uio[] = { "0000:00:08.0" };
        resp = allocate(DEVICE_NIC, &cfg, &l, uio, 1, &st, &r);
        CHECK_INT(r, 0);
        if (resp) {
                V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
                CHECK_STR(env(c, "SPINLANE_NIC_0_DRIVER"), "igb_uio");
                CHECK_STR(env(c, "SPINLANE_NIC_0_DEVICES"), "/dev/uio0");
                CHECK_STR(spec_host(c, "/dev/uio0"), "/dev/uio0");
                CHECK_INT(c->n_devices, 1);
        }
        v1beta1__allocate_response__free_unpacked(resp, NULL);

        /* CDI on: names instead of DeviceSpecs and Mounts */
        cfg.cdi = true;
        char *one[] = { "0000:00:06.0" };
        resp = allocate(DEVICE_NIC, &cfg, &l, one, 1, &st, &r);
        CHECK_INT(r, 0);
        if (resp) {
                V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
                CHECK_INT(c->n_devices, 0);
                CHECK_INT(c->n_mounts, 0);
                CHECK_INT(c->n_cdi_devices, 1);
                if (c->n_cdi_devices == 1)
                        CHECK_STR(c->cdi_devices[0]->name, "spinlane.io/dpdk-nic=0000:00:06.0");
                CHECK_STR(env(c, "SPINLANE_DPDK_NICS"), "0000:00:06.0");
        }
        v1beta1__allocate_response__free_unpacked(resp, NULL);
        device_list_free(&l);
}

static void test_allocate_cores(void)
{
        device_list l = { 0 };
        dp_alloc_config cfg;
        dp_status st;
        int r;

        fixture_cores(&l);
        dp_alloc_config_default(&cfg);
        char *ids[] = { "p1c4", "p0c1" };
        V1beta1__AllocateResponse *resp = allocate(DEVICE_CORE, &cfg, &l, ids, 2, &st, &r);
        CHECK_INT(r, 0);
        if (resp) {
                V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
                CHECK_STR(env(c, "SPINLANE_ISOLATED_CPUS"), "1,4,9,12");
                CHECK_STR(env(c, "SPINLANE_ISOLATED_CORES"), "p0c1,p1c4");
                CHECK_INT(c->n_devices, 0);
                CHECK_INT(c->n_mounts, 0);
        }
        v1beta1__allocate_response__free_unpacked(resp, NULL);
        device_list_free(&l);
}

static void test_allocate_refused(void)
{
        static const struct {
                char *ids[3];
                size_t n;
                const char *needle;
        } cases[] = {
                { { "0000:00:99.0" }, 1, "\"0000:00:99.0\" is not a device" },
                { { "0000:00:09.0" }, 1, "\"0000:00:09.0\" is unhealthy" },
                { { "0000:00:06.0", "0000:00:06.0" }, 2, "\"0000:00:06.0\" is listed more than once" },
                { { "0000:00:06.0", "bad\x01id" }, 2, "\"bad\\x01id\" is not a device" },
                { { "" }, 1, "empty device ID" },
                { { NULL }, 0, "asks for no devices" },
                { { "0123456789012345678901234567890123456789012345678901234567890123456789" }, 1,
                  "longer than 63" },
        };
        device_list l = { 0 };
        dp_alloc_config cfg;

        fixture_nics(&l);
        dp_alloc_config_default(&cfg);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                dp_status st = { 0 };
                int r;
                char *ids[3];
                memcpy(ids, cases[i].ids, sizeof(ids));
                V1beta1__AllocateResponse *resp = allocate(DEVICE_NIC, &cfg, &l, ids, cases[i].n, &st, &r);
                CHECK(resp == NULL);
                CHECK_INT(r, -EINVAL);
                CHECK_INT(st.code, DP_STATUS_INVALID_ARGUMENT);
                if (!strstr(st.message, cases[i].needle)) {
                        fprintf(stderr, "case %zu: message \"%s\" lacks \"%s\"\n", i, st.message, cases[i].needle);
                        CHECK(false);
                }
        }
        /* duplicate across two containers; empty request; garbage bytes */
        char *a[] = { "0000:00:06.0" }, *b[] = { "0000:00:07.0", "0000:00:06.0" };
        char **two[] = { a, b };
        size_t n2[] = { 1, 2 }, len, out_len;
        uint8_t *out = NULL, *req = pack_alloc(two, n2, 2, &len);
        dp_status st;
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, req, len, &st, &out, &out_len), -EINVAL);
        CHECK(strstr(st.message, "\"0000:00:06.0\" is listed more than once") != NULL);
        free(req);
        req = pack_alloc(NULL, NULL, 0, &len);
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, req, len, &st, &out, &out_len), -EINVAL);
        CHECK(strstr(st.message, "no container requests") != NULL);
        free(req);
        static const uint8_t garbage[] = { 0x0a, 0x05, 0x0a, 0x7f, 0x41 };
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, garbage, sizeof(garbage), &st, &out, &out_len), -EINVAL);
        CHECK(strstr(st.message, "malformed") != NULL);
        CHECK(out == NULL);
        device_list_free(&l);
}

/* Preferred allocation: one container; returns the chosen IDs joined by ',' or the refusal. */
static void preferred(device_kind kind, const dp_alloc_config *cfg, const device_list *l, char **avail, size_t na,
                      char **must, size_t nm, int size, char *ret, size_t retsize)
{
        V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
        V1beta1__ContainerPreferredAllocationRequest cr = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
        V1beta1__ContainerPreferredAllocationRequest *crp = &cr;
        cr.n_available_deviceids = na;
        cr.available_deviceids = avail;
        cr.n_must_include_deviceids = nm;
        cr.must_include_deviceids = must;
        cr.allocation_size = size;
        req.n_container_requests = 1;
        req.container_requests = &crp;
        size_t len = v1beta1__preferred_allocation_request__get_packed_size(&req), out_len;
        uint8_t *buf = malloc(len + 1), *out = NULL;
        v1beta1__preferred_allocation_request__pack(&req, buf);
        dp_status st;
        int r = dp_handle_preferred(kind, cfg, l, buf, len, &st, &out, &out_len);
        free(buf);
        if (r < 0) {
                snprintf(ret, retsize, "ERR %s", st.message);
                return;
        }
        V1beta1__PreferredAllocationResponse *resp = v1beta1__preferred_allocation_response__unpack(NULL, out_len, out);
        free(out);
        ret[0] = '\0';
        for (size_t i = 0; resp && i < resp->container_responses[0]->n_deviceids; i++) {
                if (i)
                        strncat(ret, ",", retsize - strlen(ret) - 1);
                strncat(ret, resp->container_responses[0]->deviceids[i], retsize - strlen(ret) - 1);
        }
        v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
}

static void test_preferred(void)
{
        static const struct {
                char *avail[6];
                size_t na;
                char *must[3];
                size_t nm;
                int size;
                uint64_t hint;
                const char *want;
        } cases[] = {
                /* 2 fit on node 0 (2 free) and on node 1 (3 free): best fit = node 0 */
                { { "p0c1", "p0c2", "p1c4", "p1c5", "p1c6" }, 5, { 0 }, 0, 2, 0, "p0c1,p0c2" },
                /* 3 only fit on node 1 */
                { { "p0c1", "p0c2", "p1c4", "p1c5", "p1c6" }, 5, { 0 }, 0, 3, 0, "p1c4,p1c5,p1c6" },
                /* must_include pulls the rest onto its node */
                { { "p0c1", "p0c2", "p1c4", "p1c5", "p1c6" }, 5, { "p1c6" }, 1, 2, 0, "p1c4,p1c6" },
                /* the NICs' node wins a tie */
                { { "p0c1", "p0c2", "p1c4", "p1c5" }, 4, { 0 }, 0, 2, 1u << 1, "p1c4,p1c5" },
                { { "p0c1", "p0c2", "p1c4", "p1c5" }, 4, { 0 }, 0, 2, 0, "p0c1,p0c2" },
                /* more than any node: the biggest node first, then the rest */
                { { "p0c1", "p0c2", "p1c4", "p1c5", "p1c6" }, 5, { 0 }, 0, 4, 0, "p0c1,p1c4,p1c5,p1c6" },
                /* refusals */
                { { "p0c1" }, 1, { "p0c2" }, 1, 1, 0, "ERR GetPreferredAllocation: device ID \"p0c2\" is in must_include but not available" },
                { { "p0c1", "zz" }, 2, { 0 }, 0, 1, 0, "ERR GetPreferredAllocation: device ID \"zz\" is not a device of this resource" },
                { { "p0c1" }, 1, { 0 }, 0, 2, 0, "ERR GetPreferredAllocation: allocation_size 2 exceeds the 1 available devices" },
                { { "p0c1" }, 1, { 0 }, 0, 0, 0, "ERR GetPreferredAllocation: allocation_size 0 must be positive" },
        };
        device_list l = { 0 };
        dp_alloc_config cfg;
        char got[600];

        fixture_cores(&l);
        dp_alloc_config_default(&cfg);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *avail[6], *must[3];
                memcpy(avail, cases[i].avail, sizeof(avail));
                memcpy(must, cases[i].must, sizeof(must));
                cfg.numa_with_nics = cases[i].hint;
                preferred(DEVICE_CORE, &cfg, &l, avail, cases[i].na, must, cases[i].nm, cases[i].size, got,
                          sizeof(got));
                if (strcmp(got, cases[i].want) != 0)
                        fprintf(stderr, "preferred case %zu:\n", i);
                CHECK_STR(got, cases[i].want);
                /* deterministic: same answer again, and with the available list reversed */
                char again[600];
                char *rev[6];
                for (size_t k = 0; k < cases[i].na; k++)
                        rev[k] = avail[cases[i].na - 1 - k];
                preferred(DEVICE_CORE, &cfg, &l, rev, cases[i].na, must, cases[i].nm, cases[i].size, again,
                          sizeof(again));
                if (strncmp(got, "ERR", 3) != 0)
                        CHECK_STR(again, got);
        }
        device_list_free(&l);
}

static void test_list_encoding(void)
{
        device_list l = { 0 };
        uint8_t *buf;
        size_t len;

        fixture_nics(&l);
        CHECK_INT(dp_encode_list(&l, &buf, &len), 0);
        V1beta1__ListAndWatchResponse *resp = v1beta1__list_and_watch_response__unpack(NULL, len, buf);
        CHECK(resp != NULL);
        if (resp) {
                CHECK_INT(resp->n_devices, 5);
                CHECK_STR(resp->devices[0]->id, "0000:00:06.0");
                CHECK_STR(resp->devices[0]->health, "Healthy");
                CHECK(resp->devices[0]->topology && resp->devices[0]->topology->n_nodes == 1 &&
                      resp->devices[0]->topology->nodes[0]->id == 0);
                CHECK_STR(resp->devices[3]->health, "Unhealthy");
                CHECK(resp->devices[4]->topology == NULL); /* NUMA unknown */
        }
        v1beta1__list_and_watch_response__free_unpacked(resp, NULL);
        free(buf);

        /* list ops: duplicate and over-long ids refused, list unchanged */
        device_entry d = l.items[0];
        CHECK_INT(device_list_add(&l, &d), -EEXIST);
        memset(d.id, 'x', sizeof(d.id));
        CHECK_INT(device_list_add(&l, &d), -EINVAL);
        CHECK_INT(l.n, 5);
        device_list c = { 0 };
        CHECK_INT(device_list_copy(&l, &c), 0);
        CHECK(device_list_equal(&l, &c));
        c.items[1].state = DEVICE_UNHEALTHY;
        CHECK(!device_list_equal(&l, &c));
        device_list_free(&c);
        device_list_free(&l);

        char shown[64];
        dp_format_id("a\nb\"", 4, shown, sizeof(shown));
        CHECK_STR(shown, "a\\x0ab\\x22");
}

/* A device ID with a NUL inside ("0000:00:06.0\0junk"): protobuf-c would decode it as
 * the first part, a real device. Refused by every handler that takes IDs, naming it. The
 * requests are written as wire bytes: protobuf-c cannot encode such a string. */
static void test_nul_in_id(void)
{
        /* AllocateRequest { container_requests (1) { devices_ids (1): 17 bytes } } */
        static const uint8_t alloc_req[] = { 0x0a, 0x13, 0x0a, 0x11, '0', '0', '0', '0', ':', '0', '0', ':', '0',
                                             '6',  '.',  '0',  0,    'j', 'u', 'n', 'k' };
        /* the same ID second, after a good one */
        static const uint8_t alloc_req2[] = { 0x0a, 0x21, 0x0a, 0x0c, '0', '0', '0', '0', ':', '0', '0', ':', '0',
                                              '7',  '.',  '0',  0x0a, 0x11, '0', '0', '0', '0', ':', '0', '0', ':',
                                              '0',  '6',  '.',  '0',  0,    'j', 'u', 'n', 'k' };
        /* PreferredAllocationRequest { container_requests (1) { must_include_deviceIDs (2):
         * "0000:00:06.0\0", available (1): "0000:00:06.0", allocation_size (3): 1 } } */
        static const uint8_t pref_req[] = { 0x0a, 0x1e, 0x0a, 0x0c, '0', '0', '0', '0', ':', '0', '0', ':', '0',
                                            '6',  '.',  '0',  0x12, 0x0d, '0', '0', '0', '0', ':', '0', '0', ':',
                                            '0',  '6',  '.',  '0',  0,    0x18, 0x01 };
        /* PreStartContainerRequest { devices_ids (1): "0000:00:06.0\0" } */
        static const uint8_t prestart_req[] = { 0x0a, 0x0d, '0', '0', '0', '0', ':', '0', '0',
                                                ':',  '0',  '6', '.', '0', 0 };
        device_list l = { 0 };
        dp_alloc_config cfg;
        uint8_t *out = NULL;
        size_t out_len = 0;
        dp_status st;

        fixture_nics(&l);
        dp_alloc_config_default(&cfg);
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, alloc_req, sizeof(alloc_req), &st, &out, &out_len),
                  -EINVAL);
        CHECK_INT(st.code, DP_STATUS_INVALID_ARGUMENT);
        CHECK(strstr(st.message, "\"0000:00:06.0\\x00junk\"") != NULL);
        CHECK(strstr(st.message, "NUL") != NULL);
        CHECK(out == NULL);
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, alloc_req2, sizeof(alloc_req2), &st, &out, &out_len),
                  -EINVAL);
        CHECK(strstr(st.message, "\"0000:00:06.0\\x00junk\"") != NULL);
        CHECK(out == NULL);
        CHECK_INT(dp_handle_preferred(DEVICE_NIC, &cfg, &l, pref_req, sizeof(pref_req), &st, &out, &out_len),
                  -EINVAL);
        CHECK(strstr(st.message, "\"0000:00:06.0\\x00\"") != NULL);
        CHECK(out == NULL);
        CHECK_INT(dp_handle_prestart(&l, prestart_req, sizeof(prestart_req), &st, &out, &out_len), -EINVAL);
        CHECK(strstr(st.message, "NUL") != NULL);
        CHECK(out == NULL);
        /* the same bytes without the NUL part are granted: the walk refuses only the NUL */
        static const uint8_t ok_req[] = { 0x0a, 0x0e, 0x0a, 0x0c, '0', '0', '0', '0', ':', '0', '0', ':', '0',
                                          '6',  '.',  '0' };
        CHECK_INT(dp_handle_allocate(DEVICE_NIC, &cfg, &l, ok_req, sizeof(ok_req), &st, &out, &out_len), 0);
        free(out);
        device_list_free(&l);
}

int main(void)
{
        test_allocate_nics();
        test_allocate_cores();
        test_allocate_refused();
        test_nul_in_id();
        test_preferred();
        test_list_encoding();
        return test_done();
}
