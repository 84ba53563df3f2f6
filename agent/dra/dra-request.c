/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA kubelet plugin's parsing and encoding (dra-request.h): protobuf-c for the
 * kubelet's messages, jansson for the ResourceClaim and the checkpoint. Every input is
 * bounded and every name checked before it is copied; no I/O, never logs. */
#include "dra-request.h"
#include "dra-slice.h"

#include "cleanup.h"
#include "dra-v1.pb-c.h"
#include "pluginregistration.pb-c.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return r;
}

/* An untrusted string for a message: printable ASCII, the rest as '?', cut at 64 bytes. */
static const char *shown(const char *s, char *buf, size_t size)
{
        size_t i = 0;
        for (; s[i] && i + 4 < size && i < 64; i++)
                buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
        if (s[i] && i + 4 < size)
                buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
        buf[i] = '\0';
        return buf;
}

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A DNS label (max 63) or, with dots, a DNS subdomain (max 253). */
static bool dns_ok(const char *s, size_t max, bool dots)
{
        size_t n = strlen(s);
        if (n == 0 || n > max || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_lower_alnum(s[i]) && s[i] != '-' && !(dots && s[i] == '.'))
                        return false;
        return true;
}

static bool uid_ok(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n >= DRA_UID_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_lower_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

void dra_prepared_clear(dra_prepared *p)
{
        free(p->results);
        p->results = NULL;
        p->n_results = 0;
}

/* Checks and copies one claim reference; index i names it in err. */
static int claim_ref_set(const char *what, size_t i, const char *ns, const char *uid, const char *name,
                         dra_claim_ref *ret, char *err, size_t errlen)
{
        char b[80];
        if (!uid_ok(uid))
                return fail(err, errlen, -EINVAL, "%s: claim %zu: uid \"%s\" is not a UID (1 to 63 of [0-9a-z-])",
                            what, i, shown(uid, b, sizeof(b)));
        if (!dns_ok(ns, DRA_NS_LEN - 1, false))
                return fail(err, errlen, -EINVAL, "%s: claim %s: namespace \"%s\" is not a namespace name", what,
                            uid, shown(ns, b, sizeof(b)));
        if (!dns_ok(name, DRA_NAME_LEN - 1, true))
                return fail(err, errlen, -EINVAL, "%s: claim %s: name \"%s\" is not a ResourceClaim name", what, uid,
                            shown(name, b, sizeof(b)));
        snprintf(ret->ns, sizeof(ret->ns), "%s", ns);
        snprintf(ret->uid, sizeof(ret->uid), "%s", uid);
        snprintf(ret->name, sizeof(ret->name), "%s", name);
        return 0;
}

int dra_decode_claims(const char *what, const uint8_t *req, size_t len, dra_claim_ref **ret, size_t *ret_n,
                      char *err, size_t errlen)
{
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *msg;
        dra_claim_ref *refs = NULL;
        int r = 0;

        /* NodeUnprepareResourcesRequest has the same one field */
        if (len > DRA_MAX_REQUEST)
                return fail(err, errlen, -EMSGSIZE, "%s: request of %zu bytes exceeds %d", what, len, DRA_MAX_REQUEST);
        msg = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, req);
        if (!msg)
                return fail(err, errlen, -EINVAL, "%s: malformed request message", what);
        /* protobuf-c ends a string at a NUL it holds: the message packs shorter then */
        if (protobuf_c_message_get_packed_size(&msg->base) != len) {
                r = fail(err, errlen, -EINVAL, "%s: a string field holds a NUL byte (or the message is not canonical)",
                         what);
                goto out;
        }
        if (msg->n_claims == 0) {
                r = fail(err, errlen, -EINVAL, "%s: no claims", what);
                goto out;
        }
        if (msg->n_claims > DRA_MAX_CLAIMS) {
                r = fail(err, errlen, -EMSGSIZE, "%s: %zu claims in one request (at most %d)", what, msg->n_claims,
                         DRA_MAX_CLAIMS);
                goto out;
        }
        refs = calloc(msg->n_claims, sizeof(*refs));
        if (!refs) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < msg->n_claims && r >= 0; i++) {
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim *c = msg->claims[i];
                r = claim_ref_set(what, i, c->namespace_, c->uid, c->name, &refs[i], err, errlen);
                for (size_t k = 0; k < i && r >= 0; k++)
                        if (strcmp(refs[k].uid, refs[i].uid) == 0)
                                r = fail(err, errlen, -EINVAL, "%s: claim %s is listed more than once", what,
                                         refs[i].uid);
        }
        if (r >= 0) {
                *ret = TAKE_PTR(refs);
                *ret_n = msg->n_claims;
        }
out:
        free(refs);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(msg, NULL);
        return r;
}

static const char *jstr(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

/* One result {request, pool, device} checked into ret; where names it. */
static int result_set(const char *where, const char *request, const char *pool, const char *device, dra_result *ret,
                      char *err, size_t errlen)
{
        char b[80];
        if (!request || !dns_ok(request, DRA_DEV_LEN - 1, false))
                return fail(err, errlen, -EINVAL, "%s: request \"%s\" is not a request name", where,
                            request ? shown(request, b, sizeof(b)) : "(none)");
        if (!pool || strlen(pool) >= DRA_NAME_LEN)
                return fail(err, errlen, -EINVAL, "%s: pool missing or too long", where);
        if (!device || !dns_ok(device, DRA_DEV_LEN - 1, false))
                return fail(err, errlen, -EINVAL, "%s: device \"%s\" is not a device name", where,
                            device ? shown(device, b, sizeof(b)) : "(none)");
        snprintf(ret->request, sizeof(ret->request), "%s", request);
        snprintf(ret->pool, sizeof(ret->pool), "%s", pool);
        snprintf(ret->device, sizeof(ret->device), "%s", device);
        return 0;
}

int dra_claim_parse(const char *body, size_t len, const dra_claim_ref *ref, const char *pool, dra_result **ret,
                    size_t *ret_n, char *err, size_t errlen)
{
        json_error_t je;
        json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
        dra_result *res = NULL;
        size_t n = 0, other = 0;
        char b[80], where[DRA_NAME_LEN + DRA_NS_LEN + 64];
        int r = 0;

        if (!root)
                return fail(err, errlen, -EINVAL, "ResourceClaim %s/%s: not JSON (%s)", ref->ns, ref->name, je.text);
        const char *uid = jstr(json_object_get(root, "metadata"), "uid");
        if (!uid || strcmp(uid, ref->uid) != 0) {
                r = fail(err, errlen, -EINVAL, "ResourceClaim %s/%s has uid \"%s\", not %s (deleted and created again?)",
                         ref->ns, ref->name, uid ? shown(uid, b, sizeof(b)) : "(none)", ref->uid);
                goto out;
        }
        json_t *results = json_object_get(
                json_object_get(json_object_get(json_object_get(root, "status"), "allocation"), "devices"), "results");
        if (!json_is_array(results)) {
                r = fail(err, errlen, -ENOENT, "ResourceClaim %s/%s is not allocated (no status.allocation.devices.results)",
                         ref->ns, ref->name);
                goto out;
        }
        res = calloc(DRA_MAX_DEVICES, sizeof(*res));
        if (!res) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < json_array_size(results); i++) {
                json_t *e = json_array_get(results, i);
                const char *driver = jstr(e, "driver"), *p = jstr(e, "pool");
                if (!driver || strcmp(driver, DRA_DRIVER) != 0 || !p || strcmp(p, pool) != 0) {
                        other++;
                        continue;
                }
                if (n == DRA_MAX_DEVICES) {
                        r = fail(err, errlen, -EINVAL, "ResourceClaim %s/%s: more than %d devices of %s", ref->ns,
                                 ref->name, DRA_MAX_DEVICES, DRA_DRIVER);
                        goto out;
                }
                snprintf(where, sizeof(where), "ResourceClaim %s/%s: result %zu", ref->ns, ref->name, i);
                r = result_set(where, jstr(e, "request"), p, jstr(e, "device"), &res[n], err, errlen);
                if (r < 0)
                        goto out;
                n++;
        }
        if (n == 0) {
                r = fail(err, errlen, -ENOENT, "ResourceClaim %s/%s has no devices of driver %s in pool %s (%zu of others)",
                         ref->ns, ref->name, DRA_DRIVER, pool, other);
                goto out;
        }
        *ret = TAKE_PTR(res);
        *ret_n = n;
out:
        free(res);
        json_decref(root);
        return r;
}

int dra_checkpoint_parse(const char *text, size_t len, dra_prepared **ret, size_t *ret_n, char *err, size_t errlen)
{
        json_error_t je;
        json_t *root;
        dra_prepared *out = NULL;
        size_t n = 0;
        char where[DRA_UID_LEN + 64];
        int r = 0;

        if (len > DRA_MAX_CHECKPOINT)
                return fail(err, errlen, -EINVAL, "%zu bytes, more than %d", len, DRA_MAX_CHECKPOINT);
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        if (!root)
                return fail(err, errlen, -EINVAL, "not JSON: %s (line %d)", je.text, je.line);
        json_t *claims = json_object_get(root, "claims");
        json_t *ver = json_object_get(root, "version");
        if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_array(claims)) {
                r = fail(err, errlen, -EINVAL, "not a version 1 checkpoint (\"version\": 1, \"claims\": [...])");
                goto done;
        }
        if (json_array_size(claims) > DRA_MAX_PREPARED) {
                r = fail(err, errlen, -EINVAL, "%zu claims, more than %d", json_array_size(claims), DRA_MAX_PREPARED);
                goto done;
        }
        out = calloc(json_array_size(claims) + 1, sizeof(*out));
        if (!out) {
                r = -ENOMEM;
                goto done;
        }
        for (size_t i = 0; i < json_array_size(claims); i++) {
                json_t *c = json_array_get(claims, i);
                const char *ns = jstr(c, "namespace"), *uid = jstr(c, "uid"), *name = jstr(c, "name");
                json_t *devs = json_object_get(c, "devices");
                if (!ns || !uid || !name || !json_is_array(devs) || json_array_size(devs) == 0 ||
                    json_array_size(devs) > DRA_MAX_DEVICES) {
                        r = fail(err, errlen, -EINVAL, "claim %zu: needs namespace, uid, name and 1 to %d devices", i,
                                 DRA_MAX_DEVICES);
                        goto done;
                }
                r = claim_ref_set("checkpoint", i, ns, uid, name, &out[n].ref, err, errlen);
                if (r < 0)
                        goto done;
                for (size_t k = 0; k < n; k++)
                        if (strcmp(out[k].ref.uid, uid) == 0) {
                                r = fail(err, errlen, -EINVAL, "claim %s is listed more than once", uid);
                                goto done;
                        }
                out[n].results = calloc(json_array_size(devs), sizeof(dra_result));
                if (!out[n].results) {
                        r = -ENOMEM;
                        goto done;
                }
                n++;
                for (size_t k = 0; k < json_array_size(devs); k++) {
                        json_t *d = json_array_get(devs, k);
                        snprintf(where, sizeof(where), "claim %s: device %zu", uid, k);
                        r = result_set(where, jstr(d, "request"), jstr(d, "pool"), jstr(d, "device"),
                                       &out[n - 1].results[k], err, errlen);
                        if (r < 0)
                                goto done;
                        out[n - 1].n_results++;
                }
        }
        *ret = TAKE_PTR(out);
        *ret_n = n;
done:
        if (out)
                for (size_t i = 0; i < n; i++)
                        dra_prepared_clear(&out[i]);
        free(out);
        json_decref(root);
        return r;
}

char *dra_checkpoint_format(const dra_prepared *claims, size_t n)
{
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
                json_t *devs = json_array();
                for (size_t k = 0; k < claims[i].n_results; k++) {
                        const dra_result *d = &claims[i].results[k];
                        json_array_append_new(devs, json_pack("{s:s,s:s,s:s}", "request", d->request, "pool", d->pool,
                                                              "device", d->device));
                }
                json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o}", "namespace", claims[i].ref.ns, "name",
                                                     claims[i].ref.name, "uid", claims[i].ref.uid, "devices", devs));
        }
        json_t *root = json_pack("{s:i,s:o}", "version", 1, "claims", arr);
        if (!root)
                return NULL;
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        return text;
}

int dra_device_name(device_kind kind, const device_entry *d, char *buf, size_t size)
{
        return kind == DEVICE_NIC ? dra_nic_device_name(d->pci, buf, size) : dra_core_device_name(d->id, buf, size);
}

static int pack(const ProtobufCMessage *msg, uint8_t **ret_buf, size_t *ret_len)
{
        size_t n = protobuf_c_message_get_packed_size(msg);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
                return -ENOMEM;
        protobuf_c_message_pack(msg, buf);
        *ret_buf = buf;
        *ret_len = n;
        return 0;
}

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry PrepEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PrepOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device DraDev;

int dra_encode_prepare(const dra_answer *answers, size_t n, uint8_t **ret_buf, size_t *ret_len)
{
        size_t ndev = 0;
        for (size_t i = 0; i < n; i++)
                ndev += answers[i].error[0] ? 0 : answers[i].n_results;
        _cleanup_free_ PrepEntry *entries = calloc(n ? n : 1, sizeof(*entries));
        _cleanup_free_ PrepEntry **eptrs = calloc(n ? n : 1, sizeof(*eptrs));
        _cleanup_free_ PrepOne *ones = calloc(n ? n : 1, sizeof(*ones));
        _cleanup_free_ DraDev *devs = calloc(ndev ? ndev : 1, sizeof(*devs));
        _cleanup_free_ DraDev **dptrs = calloc(ndev ? ndev : 1, sizeof(*dptrs));
        _cleanup_free_ char **names = calloc(ndev ? ndev : 1, sizeof(*names));
        _cleanup_free_ char **cdis = calloc(n ? n : 1, sizeof(*cdis));
        _cleanup_free_ char *cdibuf = calloc(n ? n : 1, DRA_UID_LEN + 32);
        PrepResp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
        size_t d = 0;

        if (!entries || !eptrs || !ones || !devs || !dptrs || !names || !cdis || !cdibuf)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&entries[i]);
                k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&ones[i]);
                entries[i].key = (char *)answers[i].uid;
                entries[i].value = &ones[i];
                eptrs[i] = &entries[i];
                if (answers[i].error[0]) {
                        ones[i].error = (char *)answers[i].error;
                        continue;
                }
                cdis[i] = cdibuf + i * (DRA_UID_LEN + 32);
                snprintf(cdis[i], DRA_UID_LEN + 32, "%s/claim=%s", DRA_DRIVER, answers[i].uid);
                ones[i].devices = &dptrs[d];
                ones[i].n_devices = answers[i].n_results;
                for (size_t k = 0; k < answers[i].n_results; k++, d++) {
                        const dra_result *rs = &answers[i].results[k];
                        k8s__io__kubelet__pkg__apis__dra__v1__device__init(&devs[d]);
                        names[d] = (char *)rs->request;
                        devs[d].request_names = &names[d];
                        devs[d].n_request_names = 1;
                        devs[d].pool_name = (char *)rs->pool;
                        devs[d].device_name = (char *)rs->device;
                        devs[d].cdi_device_ids = &cdis[i];
                        devs[d].n_cdi_device_ids = 1;
                        dptrs[d] = &devs[d];
                }
        }
        resp.claims = eptrs;
        resp.n_claims = n;
        return pack(&resp.base, ret_buf, ret_len);
}

int dra_encode_unprepare(const dra_answer *answers, size_t n, uint8_t **ret_buf, size_t *ret_len)
{
        typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry Entry;
        typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse One;
        _cleanup_free_ Entry *entries = calloc(n ? n : 1, sizeof(*entries));
        _cleanup_free_ Entry **eptrs = calloc(n ? n : 1, sizeof(*eptrs));
        _cleanup_free_ One *ones = calloc(n ? n : 1, sizeof(*ones));
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse resp =
                K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;

        if (!entries || !eptrs || !ones)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(&entries[i]);
                k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&ones[i]);
                entries[i].key = (char *)answers[i].uid;
                entries[i].value = &ones[i];
                ones[i].error = (char *)answers[i].error;
                eptrs[i] = &entries[i];
        }
        resp.claims = eptrs;
        resp.n_claims = n;
        return pack(&resp.base, ret_buf, ret_len);
}

int dra_encode_plugin_info(const char *endpoint, uint8_t **ret_buf, size_t *ret_len)
{
        static char *versions[] = { (char *)"v1.DRAPlugin", (char *)"v1beta1.DRAPlugin" };
        Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
        info.type = (char *)"DRAPlugin";
        info.name = (char *)DRA_DRIVER;
        info.endpoint = (char *)endpoint;
        info.supported_versions = versions;
        info.n_supported_versions = 2;
        return pack(&info.base, ret_buf, ret_len);
}

int dra_decode_empty(const uint8_t *req, size_t len)
{
        if (len > 4096)
                return -EMSGSIZE;
        Pluginregistration__InfoRequest *m = pluginregistration__info_request__unpack(NULL, len, req);
        if (!m)
                return -EINVAL;
        pluginregistration__info_request__free_unpacked(m, NULL);
        return 0;
}

int dra_decode_registration_status(const uint8_t *req, size_t len, bool *ret_registered, char *err, size_t errlen)
{
        if (len > 64 * 1024)
                return -EMSGSIZE;
        Pluginregistration__RegistrationStatus *m = pluginregistration__registration_status__unpack(NULL, len, req);
        if (!m)
                return -EINVAL;
        char b[80];
        snprintf(err, errlen, "%s", shown(m->error ? m->error : "", b, sizeof(b)));
        *ret_registered = m->plugin_registered;
        pluginregistration__registration_status__free_unpacked(m, NULL);
        return 0;
}
