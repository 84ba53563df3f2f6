/* SPDX-License-Identifier: Apache-2.0 */
/* dra-request: the kubelet's claims decoded and refused (tables of good and bad inputs),
 * the ResourceClaim's results of this driver and pool, the checkpoint round trip and its
 * refusals, device names, --dra-resources, and the encoded answers decoded again. */
#include "cleanup.h"
#include "dra-request.h"
#include "dra-v1.pb-c.h"
#include "pluginregistration.pb-c.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim Claim;

static uint8_t *pack_claims(const char *const (*c)[3], size_t n, size_t *ret_len)
{
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest req =
                K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
        Claim *cl = calloc(n + 1, sizeof(*cl));
        Claim **cp = calloc(n + 1, sizeof(*cp));
        for (size_t i = 0; i < n; i++) {
                k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&cl[i]);
                cl[i].namespace_ = (char *)c[i][0];
                cl[i].uid = (char *)c[i][1];
                cl[i].name = (char *)c[i][2];
                cp[i] = &cl[i];
        }
        req.claims = cp;
        req.n_claims = n;
        size_t len = protobuf_c_message_get_packed_size(&req.base);
        uint8_t *buf = malloc(len + 1);
        protobuf_c_message_pack(&req.base, buf);
        free(cl);
        free(cp);
        *ret_len = len;
        return buf;
}

#define UID1 "11111111-2222-4333-8444-555555555555"
#define UID2 "22222222-2222-4333-8444-555555555555"

static void test_decode(void)
{
        static const struct {
                const char *c[2][3];
                size_t n;
                int r;
                const char *needle;
        } cases[] = {
                { { { "team-a", UID1, "claim-a" } }, 1, 0, NULL },
                { { { "team-a", UID1, "claim.a.b" }, { "b", UID2, "x" } }, 2, 0, NULL },
                { { { "team-a", "", "c" } }, 1, -EINVAL, "is not a UID" },
                { { { "team-a", "UPPER", "c" } }, 1, -EINVAL, "is not a UID" },
                { { { "team-a", "0123456789012345678901234567890123456789012345678901234567890123", "c" } }, 1,
                  -EINVAL, "is not a UID" },
                { { { "Team", UID1, "c" } }, 1, -EINVAL, "is not a namespace name" },
                { { { "team.a", UID1, "c" } }, 1, -EINVAL, "is not a namespace name" },
                { { { "", UID1, "c" } }, 1, -EINVAL, "is not a namespace name" },
                { { { "team-a", UID1, "-c" } }, 1, -EINVAL, "is not a ResourceClaim name" },
                { { { "team-a", UID1, "" } }, 1, -EINVAL, "is not a ResourceClaim name" },
                { { { "team-a", UID1, "c" }, { "b", UID1, "d" } }, 2, -EINVAL, "listed more than once" },
                { { { 0 } }, 0, -EINVAL, "no claims" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                size_t len, n = 99;
                _cleanup_free_ uint8_t *req = pack_claims(cases[i].c, cases[i].n, &len);
                dra_claim_ref *refs = (dra_claim_ref *)0x1;
                char err[DRA_ERR_LEN] = "";
                int r = dra_decode_claims("Prep", req, len, &refs, &n, err, sizeof(err));
                CHECK_INT(r, cases[i].r);
                if (r == 0) {
                        CHECK_INT(n, cases[i].n);
                        CHECK_STR(refs[0].uid, cases[i].c[0][1]);
                        CHECK_STR(refs[0].ns, cases[i].c[0][0]);
                        CHECK_STR(refs[0].name, cases[i].c[0][2]);
                        free(refs);
                } else {
                        CHECK(refs == (dra_claim_ref *)0x1 && n == 99); /* untouched */
                        CHECK(strstr(err, cases[i].needle) != NULL);
                        CHECK(strncmp(err, "Prep: ", 6) == 0);
                        if (!strstr(err, cases[i].needle))
                                fprintf(stderr, "case %zu: %s\n", i, err);
                }
        }
        /* too many claims, too many bytes, malformed, a NUL inside a string */
        const char *(*many)[3] = calloc(DRA_MAX_CLAIMS + 1, sizeof(*many));
        char uids[DRA_MAX_CLAIMS + 1][16];
        for (size_t i = 0; i <= DRA_MAX_CLAIMS; i++) {
                snprintf(uids[i], sizeof(uids[i]), "u%zu", i);
                many[i][0] = "ns";
                many[i][1] = uids[i];
                many[i][2] = "c";
        }
        size_t len, n;
        dra_claim_ref *refs;
        char err[DRA_ERR_LEN];
        uint8_t *req = pack_claims((const char *const(*)[3])many, DRA_MAX_CLAIMS, &len);
        CHECK_INT(dra_decode_claims("P", req, len, &refs, &n, err, sizeof(err)), 0);
        CHECK_INT(n, DRA_MAX_CLAIMS);
        free(refs);
        free(req);
        req = pack_claims((const char *const(*)[3])many, DRA_MAX_CLAIMS + 1, &len);
        CHECK_INT(dra_decode_claims("P", req, len, &refs, &n, err, sizeof(err)), -EMSGSIZE);
        CHECK(strstr(err, "65 claims in one request (at most 64)") != NULL);
        free(req);
        free(many);
        CHECK_INT(dra_decode_claims("P", (const uint8_t *)"", DRA_MAX_REQUEST + 1, &refs, &n, err, sizeof(err)),
                  -EMSGSIZE);
        static const uint8_t bad[] = { 0x0a, 0xff, 0xff };
        CHECK_INT(dra_decode_claims("P", bad, sizeof(bad), &refs, &n, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "malformed") != NULL);
        static const uint8_t nul[] = { 0x0a, 0x06, 0x12, 0x04, 'a', 0, 'b', 'c' };
        CHECK_INT(dra_decode_claims("P", nul, sizeof(nul), &refs, &n, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "NUL") != NULL);
}

static void test_claim(void)
{
        dra_claim_ref ref = { .ns = "team-a", .uid = UID1, .name = "c" };
        static const struct {
                const char *json;
                int r;
                size_t n;
                const char *needle;
        } cases[] = {
                { "{\"metadata\":{\"uid\":\"" UID1 "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
                  "{\"request\":\"nic\",\"driver\":\"spinlane.io\",\"pool\":\"node-a\",\"device\":\"nic-0000-00-06-0\"},"
                  "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"node-a\",\"device\":\"gpu-0\"},"
                  "{\"request\":\"x\",\"driver\":\"spinlane.io\",\"pool\":\"node-b\",\"device\":\"core-p0c1\"},"
                  "{\"request\":\"cores\",\"driver\":\"spinlane.io\",\"pool\":\"node-a\",\"device\":\"core-p0c2\"}]}}}}",
                  0, 2, NULL },
                { "{\"metadata\":{\"uid\":\"other\"}}", -EINVAL, 0, "has uid \"other\", not " UID1 },
                { "{\"metadata\":{}}", -EINVAL, 0, "has uid \"(none)\"" },
                { "{\"metadata\":{\"uid\":\"" UID1 "\"}}", -ENOENT, 0, "is not allocated" },
                { "{\"metadata\":{\"uid\":\"" UID1 "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
                  "{\"request\":\"g\",\"driver\":\"gpu.example.com\",\"pool\":\"node-a\",\"device\":\"gpu-0\"}]}}}}",
                  -ENOENT, 0, "no devices of driver spinlane.io in pool node-a (1 of others)" },
                { "{\"metadata\":{\"uid\":\"" UID1 "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
                  "{\"request\":\"n\",\"driver\":\"spinlane.io\",\"pool\":\"node-a\",\"device\":\"Bad_Name\"}]}}}}",
                  -EINVAL, 0, "device \"Bad_Name\" is not a device name" },
                { "{\"metadata\":{\"uid\":\"" UID1 "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
                  "{\"driver\":\"spinlane.io\",\"pool\":\"node-a\",\"device\":\"core-1\"}]}}}}",
                  -EINVAL, 0, "request \"(none)\"" },
                { "not json", -EINVAL, 0, "not JSON" },
                { "{\"a\":1,\"a\":2}", -EINVAL, 0, "not JSON" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                dra_result *res = (dra_result *)0x1;
                size_t n = 99;
                char err[DRA_ERR_LEN] = "";
                int r = dra_claim_parse(cases[i].json, strlen(cases[i].json), &ref, "node-a", &res, &n, err,
                                        sizeof(err));
                CHECK_INT(r, cases[i].r);
                if (r == 0) {
                        CHECK_INT(n, cases[i].n);
                        CHECK_STR(res[0].device, "nic-0000-00-06-0");
                        CHECK_STR(res[0].request, "nic");
                        CHECK_STR(res[1].device, "core-p0c2");
                        CHECK_STR(res[1].pool, "node-a");
                        free(res);
                } else {
                        CHECK(res == (dra_result *)0x1 && n == 99);
                        CHECK(strstr(err, cases[i].needle) != NULL);
                        if (!strstr(err, cases[i].needle))
                                fprintf(stderr, "case %zu: %s\n", i, err);
                }
        }
        /* more than DRA_MAX_DEVICES of ours */
        size_t cap = 200 * (DRA_MAX_DEVICES + 1) + 256, off = 0;
        _cleanup_free_ char *big = malloc(cap);
        off += (size_t)snprintf(big + off, cap - off, "{\"metadata\":{\"uid\":\"%s\"},\"status\":{\"allocation\":"
                                "{\"devices\":{\"results\":[", UID1);
        for (int i = 0; i <= DRA_MAX_DEVICES; i++)
                off += (size_t)snprintf(big + off, cap - off, "%s{\"request\":\"r\",\"driver\":\"spinlane.io\","
                                        "\"pool\":\"node-a\",\"device\":\"core-%d\"}", i ? "," : "", i);
        snprintf(big + off, cap - off, "]}}}}");
        dra_result *res;
        size_t n;
        char err[DRA_ERR_LEN];
        CHECK_INT(dra_claim_parse(big, strlen(big), &ref, "node-a", &res, &n, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "more than 64 devices") != NULL);
}

static void test_checkpoint(void)
{
        dra_result r1[2] = { { "nic", "node-a", "nic-0000-00-06-0" }, { "cores", "node-a", "core-p0c2" } };
        dra_prepared in[2] = { { { "team-a", UID1, "c1" }, r1, 2 }, { { "team-b", UID2, "c2" }, r1 + 1, 1 } };
        _cleanup_free_ char *text = dra_checkpoint_format(in, 2);
        dra_prepared *out;
        size_t n;
        char err[DRA_ERR_LEN];
        CHECK(text != NULL);
        CHECK_INT(dra_checkpoint_parse(text, strlen(text), &out, &n, err, sizeof(err)), 0);
        CHECK_INT(n, 2);
        CHECK_STR(out[0].ref.uid, UID1);
        CHECK_STR(out[0].ref.ns, "team-a");
        CHECK_STR(out[1].ref.name, "c2");
        CHECK_INT(out[0].n_results, 2);
        CHECK_STR(out[0].results[1].device, "core-p0c2");
        CHECK_STR(out[1].results[0].request, "cores");
        for (size_t i = 0; i < n; i++)
                dra_prepared_clear(&out[i]);
        free(out);
        _cleanup_free_ char *empty = dra_checkpoint_format(NULL, 0);
        CHECK_INT(dra_checkpoint_parse(empty, strlen(empty), &out, &n, err, sizeof(err)), 0);
        CHECK_INT(n, 0);
        free(out);
        static const struct {
                const char *text;
                const char *needle;
        } bad[] = {
                { "", "not JSON" },
                { "{\"version\": 1, \"claims\": [{\"uid\": \"x\"", "not JSON" },
                { "{\"version\": 2, \"claims\": []}", "not a version 1 checkpoint" },
                { "{\"version\": 1}", "not a version 1 checkpoint" },
                { "{\"version\": 1, \"claims\": [{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"c\",\"devices\":[]}]}",
                  "claim 0: needs namespace, uid, name and 1 to 64 devices" },
                { "{\"version\": 1, \"claims\": [{\"uid\":\"U\",\"namespace\":\"n\",\"name\":\"c\",\"devices\":"
                  "[{\"request\":\"r\",\"pool\":\"p\",\"device\":\"d\"}]}]}", "is not a UID" },
                { "{\"version\": 1, \"claims\": [{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"c\",\"devices\":"
                  "[{\"request\":\"r\",\"pool\":\"p\",\"device\":\"d\"}]},{\"uid\":\"u\",\"namespace\":\"n\","
                  "\"name\":\"c\",\"devices\":[{\"request\":\"r\",\"pool\":\"p\",\"device\":\"d\"}]}]}",
                  "listed more than once" },
                { "{\"version\": 1, \"claims\": [{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"c\",\"devices\":"
                  "[{\"request\":\"r\",\"pool\":\"p\",\"device\":\"D D\"}]}]}", "is not a device name" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                out = (dra_prepared *)0x1;
                err[0] = '\0';
                CHECK_INT(dra_checkpoint_parse(bad[i].text, strlen(bad[i].text), &out, &n, err, sizeof(err)), -EINVAL);
                CHECK(out == (dra_prepared *)0x1);
                CHECK(strstr(err, bad[i].needle) != NULL);
                if (!strstr(err, bad[i].needle))
                        fprintf(stderr, "checkpoint case %zu: %s\n", i, err);
        }
}

static void test_names_and_options(void)
{
        device_entry d = { .id = "p0c3", .pci = "0000:00:06.0" };
        char b[64];
        CHECK_INT(dra_device_name(DEVICE_NIC, &d, b, sizeof(b)), 0);
        CHECK_STR(b, "nic-0000-00-06-0");
        CHECK_INT(dra_device_name(DEVICE_CORE, &d, b, sizeof(b)), 0);
        CHECK_STR(b, "core-p0c3");
        CHECK_INT(dra_device_name(DEVICE_NIC, &d, b, 8), -ENAMETOOLONG);
        /* --dra-resources is parsed by dra-slice.h's dra_resources_parse (test-dra-slice) */
}

static void test_encode(void)
{
        dra_result r1[2] = { { "nic", "node-a", "nic-0000-00-06-0" }, { "cores", "node-a", "core-p0c2" } };
        dra_answer ans[2] = { { UID1, "", r1, 2 }, { UID2, "device x is unhealthy", NULL, 0 } };
        uint8_t *buf;
        size_t len;
        CHECK_INT(dra_encode_prepare(ans, 2, &buf, &len), 0);
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *m =
                k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, len, buf);
        CHECK(m != NULL && m->n_claims == 2);
        if (m && m->n_claims == 2) {
                CHECK_STR(m->claims[0]->key, UID1);
                CHECK_STR(m->claims[0]->value->error, "");
                CHECK_INT(m->claims[0]->value->n_devices, 2);
                CHECK_STR(m->claims[0]->value->devices[1]->device_name, "core-p0c2");
                CHECK_STR(m->claims[0]->value->devices[0]->request_names[0], "nic");
                CHECK_STR(m->claims[0]->value->devices[0]->cdi_device_ids[0], "spinlane.io/claim=" UID1);
                CHECK_STR(m->claims[1]->value->error, "device x is unhealthy");
                CHECK_INT(m->claims[1]->value->n_devices, 0);
        }
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(m, NULL);
        free(buf);
        CHECK_INT(dra_encode_unprepare(ans, 2, &buf, &len), 0);
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse *u =
                k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(NULL, len, buf);
        CHECK(u != NULL && u->n_claims == 2);
        if (u && u->n_claims == 2)
                CHECK_STR(u->claims[1]->value->error, "device x is unhealthy");
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(u, NULL);
        free(buf);
        CHECK_INT(dra_encode_plugin_info("/var/lib/kubelet/plugins/spinlane.io/dra.sock", &buf, &len), 0);
        Pluginregistration__PluginInfo *pi = pluginregistration__plugin_info__unpack(NULL, len, buf);
        CHECK(pi != NULL);
        if (pi) {
                CHECK_STR(pi->type, "DRAPlugin");
                CHECK_STR(pi->name, "spinlane.io");
                CHECK_INT(pi->n_supported_versions, 2);
                CHECK_STR(pi->supported_versions[0], "v1.DRAPlugin");
                CHECK_STR(pi->supported_versions[1], "v1beta1.DRAPlugin");
        }
        pluginregistration__plugin_info__free_unpacked(pi, NULL);
        free(buf);
        bool reg = true;
        char err[128];
        static const uint8_t st[] = { 0x08, 0x00, 0x12, 0x03, 'b', 'a', 'd' };
        CHECK_INT(dra_decode_registration_status(st, sizeof(st), &reg, err, sizeof(err)), 0);
        CHECK(!reg);
        CHECK_STR(err, "bad");
        CHECK_INT(dra_decode_empty((const uint8_t *)"", 0), 0);
        CHECK_INT(dra_decode_empty((const uint8_t *)"\x0a\xff", 2), -EINVAL);
}

int main(void)
{
        test_decode();
        test_claim();
        test_checkpoint();
        test_names_and_options();
        test_encode();
        return test_done();
}
