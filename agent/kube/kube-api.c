/* SPDX-License-Identifier: Apache-2.0 */
/* Request bodies and reply parsing for the Kubernetes API (Nodes, events.k8s.io/v1 Events,
 * Status). Pure; never logs. */
#include "errbuf.h"
#include "kube-api.h"

#include "cleanup.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* A label name or value: <= 63, [A-Za-z0-9._-], alphanumeric at both ends (or empty when
 * allowed). */
static bool name_part(const char *s, size_t n, bool empty_ok)
{
        if (n == 0)
                return empty_ok;
        if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
                        return false;
        return true;
}

/* A DNS subdomain (RFC 1123): lowercase labels of [a-z0-9-], dots between, <= 253. */
static bool dns_subdomain(const char *s, size_t n)
{
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0, start = 0; i <= n; i++) {
                if (i == n || s[i] == '.') {
                        size_t l = i - start;
                        if (l == 0 || l > 63 || s[start] == '-' || s[i - 1] == '-')
                                return false;
                        start = i + 1;
                        continue;
                }
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        }
        return true;
}

bool kube_label_key_valid(const char *key)
{
        const char *slash;
        if (!key)
                return false;
        slash = strchr(key, '/');
        if (!slash)
                return name_part(key, strlen(key), false);
        return dns_subdomain(key, (size_t)(slash - key)) && name_part(slash + 1, strlen(slash + 1), false);
}

bool kube_label_value_valid(const char *value) { return value && name_part(value, strlen(value), true); }

bool kube_name_ok(const char *n)
{
        size_t l = n ? strlen(n) : 0;
        if (l == 0 || l > KUBE_NAME_MAX)
                return false;
        for (size_t i = 0; i < l; i++)
                if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' || n[i] == '.'))
                        return false;
        return true;
}

static bool has_prefix(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

void kube_node_info_clear(kube_node_info *n)
{
        if (!n)
                return;
        json_decref(n->own_labels);
        memset(n, 0, sizeof(*n));
}

static bool copy_str(json_t *v, char *buf, size_t len)
{
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        if (!s || !*s || strlen(s) >= len)
                return false;
        for (const char *p = s; *p; p++)
                if (*p <= 0x20 || *p >= 0x7f)
                        return false;
        strcpy(buf, s);
        return true;
}

int kube_node_parse(const char *body, size_t len, const char *prefix, kube_node_info *ret, char *err,
                    size_t err_size)
{
        kube_node_info n = {0};
        json_error_t jerr;
        json_t *root, *meta, *labels, *v;
        const char *k;

        if (!body || len > KUBE_MAX_REPLY) {
                errbuf_printf(err, err_size, "Node: reply larger than %d bytes", KUBE_MAX_REPLY);
                return -E2BIG;
        }
        root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                errbuf_printf(err, err_size, "Node: not JSON (line %d: %s)", jerr.line, jerr.text);
                return -EBADMSG;
        }
        meta = json_object_get(root, "metadata");
        if (!json_is_object(meta) || !copy_str(json_object_get(meta, "uid"), n.uid, sizeof(n.uid)) ||
            !copy_str(json_object_get(meta, "resourceVersion"), n.resource_version, sizeof(n.resource_version))) {
                json_decref(root);
                errbuf_printf(err, err_size, "Node: metadata.uid and metadata.resourceVersion are required");
                return -EBADMSG;
        }
        labels = json_object_get(meta, "labels");
        if (labels && !json_is_object(labels) && !json_is_null(labels)) {
                json_decref(root);
                errbuf_printf(err, err_size, "Node: metadata.labels is not an object");
                return -EBADMSG;
        }
        n.own_labels = json_object();
        if (!n.own_labels) {
                json_decref(root);
                return -ENOMEM;
        }
        if (json_is_object(labels))
                json_object_foreach(labels, k, v) {
                        if (!has_prefix(k, prefix))
                                continue;
                        if (!json_is_string(v) || json_object_size(n.own_labels) >= KUBE_MAX_LABELS) {
                                errbuf_printf(err, err_size, "Node: label \"%.80s\" is not a string or there are too many of ours", k);
                                kube_node_info_clear(&n);
                                json_decref(root); /* k lives in root */
                                return -EBADMSG;
                        }
                        if (json_object_set(n.own_labels, k, v) < 0) {
                                kube_node_info_clear(&n);
                                json_decref(root);
                                return -ENOMEM;
                        }
                }
        json_decref(root);
        *ret = n;
        return 0;
}

int kube_label_patch(const kube_label *want, size_t n, const json_t *current, const char *resource_version,
                     const char *prefix, char **ret_body, char *err, size_t err_size)
{
        json_t *labels, *patch, *meta;
        bool change = false;

        if (n > KUBE_MAX_LABELS) {
                errbuf_printf(err, err_size, "more than %d labels", KUBE_MAX_LABELS);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                if (!want[i].key || !has_prefix(want[i].key, prefix) || !kube_label_key_valid(want[i].key)) {
                        errbuf_printf(err, err_size, "label key \"%.80s\" is not a valid key under \"%s\"",
                                want[i].key ? want[i].key : "(null)", prefix);
                        return -EINVAL;
                }
                if (want[i].value && !kube_label_value_valid(want[i].value)) {
                        errbuf_printf(err, err_size, "label %s: value \"%.80s\" is not a valid label value", want[i].key,
                                want[i].value ? want[i].value : "(null)");
                        return -EINVAL;
                }
                for (size_t j = 0; j < i; j++)
                        if (strcmp(want[i].key, want[j].key) == 0) {
                                errbuf_printf(err, err_size, "label %s given twice", want[i].key);
                                return -EINVAL;
                        }
        }
        labels = json_object();
        if (!labels)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_t *cur = current ? json_object_get(current, want[i].key) : NULL;
                if (!want[i].value) { /* one of ours that must not be there */
                        if (!cur)
                                continue;
                        change = true;
                        if (json_object_set_new(labels, want[i].key, json_null()) < 0)
                                goto oom;
                        continue;
                }
                if (json_is_string(cur) && strcmp(json_string_value(cur), want[i].value) == 0)
                        continue;
                change = true;
                if (json_object_set_new(labels, want[i].key, json_string(want[i].value)) < 0)
                        goto oom;
        }
        if (!change) {
                json_decref(labels);
                return 0;
        }
        meta = resource_version ? json_pack("{s:o, s:s}", "labels", labels, "resourceVersion", resource_version)
                                : json_pack("{s:o}", "labels", labels);
        if (!meta)
                return -ENOMEM;
        patch = json_pack("{s:o}", "metadata", meta);
        if (!patch)
                return -ENOMEM;
        char *s = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(patch);
        if (!s)
                return -ENOMEM;
        *ret_body = s;
        return 1;
oom:
        json_decref(labels);
        return -ENOMEM;
}

int kube_reason_from_check(const char *check_id, const char *suffix, char *buf, size_t len)
{
        size_t o = 0;
        bool up = true;
        char tmp[KUBE_REASON_MAX + 1];

        if (!check_id || !*check_id)
                return -EINVAL;
        for (const char *p = check_id; *p; p++) {
                char c = *p;
                if (c == '-' || c == '_' || c == '.') {
                        up = true;
                        continue;
                }
                if (!alnum(c))
                        return -EINVAL;
                if (o >= KUBE_REASON_MAX)
                        return -ENAMETOOLONG;
                tmp[o++] = up && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
                up = false;
        }
        if (o == 0)
                return -EINVAL;
        for (const char *p = suffix ? suffix : ""; *p; p++) {
                if (!alnum(*p))
                        return -EINVAL;
                if (o >= KUBE_REASON_MAX)
                        return -ENAMETOOLONG;
                tmp[o++] = *p;
        }
        if (o + 1 > len)
                return -ENAMETOOLONG;
        memcpy(buf, tmp, o);
        buf[o] = '\0';
        return 0;
}

char *kube_microtime(int64_t us, char *buf, size_t len)
{
        time_t s = (time_t)(us / 1000000);
        struct tm tm;
        char d[32];

        if (us < 0)
                s = 0, us = 0;
        gmtime_r(&s, &tm);
        strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, len, "%s.%06" PRId64 "Z", d, us % 1000000);
        return buf;
}

int kube_event_name(const char *node, int64_t us, unsigned seq, char *buf, size_t len)
{
        char tail[32];
        int t = snprintf(tail, sizeof(tail), ".%" PRIx64 "%02x", (uint64_t)us, seq & 0xff);
        size_t nl = node ? strlen(node) : 0;

        if (nl == 0 || t < 0)
                return -EINVAL;
        if (nl + (size_t)t > KUBE_NAME_MAX)
                nl = KUBE_NAME_MAX - (size_t)t;
        while (nl > 0 && (node[nl - 1] == '.' || node[nl - 1] == '-'))
                nl--; /* keep it a DNS subdomain after the cut */
        if (nl == 0 || nl + (size_t)t + 1 > len)
                return -ENAMETOOLONG;
        memcpy(buf, node, nl);
        memcpy(buf + nl, tail, (size_t)t + 1);
        return 0;
}

/* At most max bytes of s, cut at a UTF-8 boundary. */
static size_t utf8_cut(const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n <= max)
                return n;
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
                n--;
        return n;
}

static bool short_field(const char *s, size_t max) { return s && *s && strlen(s) <= max; }

int kube_event_body(const kube_event *e, char **ret, char *err, size_t err_size)
{
        char t1[40], t2[40];
        json_t *regarding, *root;

        if (!e->name || !dns_subdomain(e->name, strlen(e->name))) {
                errbuf_printf(err, err_size, "Event: name \"%.80s\" is not a DNS subdomain", e->name ? e->name : "");
                return -EINVAL;
        }
        if (!short_field(e->node, KUBE_NAME_MAX)) {
                errbuf_printf(err, err_size, "Event: no Node");
                return -EINVAL;
        }
        if (!e->type || (strcmp(e->type, "Normal") != 0 && strcmp(e->type, "Warning") != 0)) {
                errbuf_printf(err, err_size, "Event: type must be Normal or Warning");
                return -EINVAL;
        }
        if (!short_field(e->reason, KUBE_REASON_MAX) || !short_field(e->action, 128) ||
            !short_field(e->reporting_instance, 128)) {
                errbuf_printf(err, err_size, "Event: reason, action and reportingInstance are required, at most 128 bytes");
                return -EINVAL;
        }
        if (e->series_count == 1 || e->series_count < 0) {
                errbuf_printf(err, err_size, "Event: a series counts at least 2");
                return -EINVAL;
        }
        const char *note = e->note ? e->note : "";
        regarding = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Node", "name", e->node);
        if (!regarding)
                return -ENOMEM;
        if (e->node_uid && *e->node_uid && json_object_set_new(regarding, "uid", json_string(e->node_uid)) < 0) {
                json_decref(regarding);
                return -ENOMEM;
        }
        root = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s#}",
                         "apiVersion", "events.k8s.io/v1", "kind", "Event",
                         "metadata", "name", e->name, "namespace", KUBE_EVENT_NAMESPACE,
                         "eventTime", kube_microtime(e->event_time_us, t1, sizeof(t1)),
                         "reportingController", KUBE_REPORTING_CONTROLLER,
                         "reportingInstance", e->reporting_instance,
                         "action", e->action, "reason", e->reason, "type", e->type,
                         "regarding", regarding,
                         "note", note, (int)utf8_cut(note, KUBE_NOTE_MAX));
        if (!root)
                return -ENOMEM;
        if (e->series_count >= 2) {
                json_t *series = json_pack("{s:i, s:s}", "count", (json_int_t)e->series_count, "lastObservedTime",
                                           kube_microtime(e->series_last_us, t2, sizeof(t2)));
                if (!series || json_object_set_new(root, "series", series) < 0) {
                        json_decref(root);
                        return -ENOMEM;
                }
        }
        char *s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(root);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int kube_event_series_patch(int32_t count, int64_t last_us, char **ret)
{
        char t[40];
        if (count < 2)
                return -EINVAL;
        json_t *p = json_pack("{s:{s:i, s:s}}", "series", "count", (json_int_t)count, "lastObservedTime",
                              kube_microtime(last_us, t, sizeof(t)));
        if (!p)
                return -ENOMEM;
        char *s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(p);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static void clean_copy(const char *s, char *buf, size_t len)
{
        size_t o = 0;
        for (; s && *s && o + 1 < len; s++)
                buf[o++] = (*s >= 0x20 && *s != 0x7f) ? *s : ' ';
        buf[o] = '\0';
}

void kube_status_parse(const char *body, size_t len, long http_status, kube_status *ret)
{
        kube_status st = {.code = http_status};
        json_t *root = NULL, *v;
        json_error_t jerr;

        if (body && len <= KUBE_MAX_REPLY)
                root = json_loadb(body, len, 0, &jerr);
        v = root ? json_object_get(root, "kind") : NULL;
        if (!json_is_string(v) || strcmp(json_string_value(v), "Status") != 0) {
                snprintf(st.message, sizeof(st.message), "%s reply of %zu bytes", root ? "a non-Status" : "a non-JSON", len);
                json_decref(root);
                *ret = st;
                return;
        }
        v = json_object_get(root, "code");
        if (json_is_integer(v) && json_integer_value(v) >= 100 && json_integer_value(v) <= 599)
                st.code = (long)json_integer_value(v);
        v = json_object_get(root, "reason");
        if (json_is_string(v))
                clean_copy(json_string_value(v), st.reason, sizeof(st.reason));
        v = json_object_get(root, "message");
        if (json_is_string(v))
                clean_copy(json_string_value(v), st.message, sizeof(st.message));
        json_decref(root);
        *ret = st;
}

int kube_retry_after_parse(const char *v, uint32_t max_s, uint32_t *ret)
{
        uint64_t n = 0;
        if (!v || !*v)
                return -EINVAL;
        for (const char *p = v; *p; p++) {
                if (*p < '0' || *p > '9' || p - v > 9)
                        return -EINVAL;
                n = n * 10 + (uint64_t)(*p - '0');
        }
        *ret = n > max_s ? max_s : (uint32_t)n;
        return 0;
}
