/* SPDX-License-Identifier: Apache-2.0 */
/* The bind state file (which NICs spinlane bound, their original drivers, netdevs and
 * MACs): its pure parser and printer, and its atomic load and save. The selection and the
 * addresses read it; the binding engine (agent/prep/bind.c) writes it. Never logs. */
#include "bind-state.h"

#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

bool bind_driver_name_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n >= BIND_DRIVER_LEN || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '_' || *p == '-' || *p == '.'))
                        return false;
        return true;
}

/* ---- state file ---- */

int state_json_open(const char *text, size_t len, size_t max_len, json_t **ret, char *err, size_t err_size)
{
        json_error_t jerr;
        json_t *root;

        if (len > max_len) {
                if (err && err_size)
                        snprintf(err, err_size, "state file is %zu bytes, more than %zu", len, max_len);
                return -EBADMSG;
        }
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                if (err && err_size)
                        snprintf(err, err_size, "state file is truncated or garbled: %s (line %d, column %d)", jerr.text,
                                 jerr.line, jerr.column);
                return -EBADMSG;
        }
        if (!json_is_object(root) || json_integer_value(json_object_get(root, "version")) != 1) {
                if (err && err_size)
                        snprintf(err, err_size, "state file has no \"version\": 1");
                json_decref(root);
                return -EBADMSG;
        }
        *ret = root;
        return 0;
}

int bind_state_parse(const char *text, size_t len, bind_state *ret, char *err, size_t err_size)
{
        json_t *nics, *e;
        size_t i;

#define BAD(...) STATE_JSON_BAD(root, err, err_size, __VA_ARGS__)

        json_t *root;
        int r = state_json_open(text, len, BIND_STATE_MAX_TEXT, &root, err, err_size);
        if (r < 0)
                return r;
        nics = json_object_get(root, "nics");
        if (!json_is_array(nics) || json_array_size(nics) > BIND_STATE_MAX)
                BAD("state file has no \"nics\" array of at most %d entries", BIND_STATE_MAX);
        /* "count" guards against a cut that still parses (it never should: the file is
         * written whole and renamed) and against hand edits. */
        if (!json_is_integer(json_object_get(root, "count")) ||
            json_integer_value(json_object_get(root, "count")) != (json_int_t)json_array_size(nics))
                BAD("state file's \"count\" does not match its %zu entries", json_array_size(nics));
        bind_state *s = calloc(1, sizeof(*s));
        if (!s) {
                json_decref(root);
                return -ENOMEM;
        }
        json_array_foreach(nics, i, e) {
                const char *pci = json_string_value(json_object_get(e, "pci"));
                const char *orig = json_string_value(json_object_get(e, "original_driver"));
                const char *tgt = json_string_value(json_object_get(e, "driver"));
                json_t *jnd = json_object_get(e, "netdev"), *jmac = json_object_get(e, "mac");
                const char *nd = jnd ? json_string_value(jnd) : "";
                const char *mac = jmac ? json_string_value(jmac) : ""; /* absent: an older file */
                uint8_t macb[6];
                if (!pci || !parse_is_pci_addr(pci) || !orig || (*orig && !bind_driver_name_valid(orig)) ||
                    !tgt || !bind_driver_name_valid(tgt) || !nd || strlen(nd) >= sizeof(s->e[0].netdev) ||
                    strchr(nd, '/') || !mac || (*mac && parse_mac(mac, macb) < 0) ||
                    json_object_size(e) != 3u + (jnd != NULL) + (jmac != NULL)) {
                        free(s);
                        BAD("state file entry %zu is garbled", i);
                }
                for (size_t j = 0; j < s->n; j++)
                        if (strcmp(s->e[j].pci, pci) == 0) {
                                free(s);
                                BAD("state file lists %s twice", pci);
                        }
                bind_state_entry *d = &s->e[s->n++];
                snprintf(d->pci, sizeof(d->pci), "%s", pci);
                snprintf(d->original, sizeof(d->original), "%s", orig);
                snprintf(d->target, sizeof(d->target), "%s", tgt);
                snprintf(d->netdev, sizeof(d->netdev), "%s", nd);
                if (*mac)
                        snprintf(d->mac, sizeof(d->mac), "%02x:%02x:%02x:%02x:%02x:%02x", macb[0], macb[1], macb[2],
                                 macb[3], macb[4], macb[5]);
        }
#undef BAD
        json_decref(root);
        memcpy(ret, s, sizeof(*s));
        free(s);
        return 0;
}

char *bind_state_format(const bind_state *s)
{
        json_t *nics = json_array();
        for (size_t i = 0; nics && i < s->n; i++)
                json_array_append_new(nics, json_pack("{s:s,s:s,s:s,s:s,s:s}", "pci", s->e[i].pci, "original_driver",
                                                      s->e[i].original, "driver", s->e[i].target, "netdev",
                                                      s->e[i].netdev, "mac", s->e[i].mac));
        json_t *root = json_pack("{s:i,s:i,s:o}", "version", 1, "count", (int)s->n, "nics", nics);
        if (!root)
                return NULL;
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        return text;
}

int bind_state_load(const hostfs *h, bind_state *ret, char *err, size_t err_size)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (err && err_size)
                err[0] = '\0';
        r = hostfs_read_alloc(h, BIND_STATE_PATH, BIND_STATE_MAX_TEXT, &text, &len);
        if (r == -ENOENT) {
                ret->n = 0;
                return 0;
        }
        if (r == -EFBIG) {
                if (err && err_size)
                        snprintf(err, err_size, "state file is larger than %d bytes", BIND_STATE_MAX_TEXT);
                return -EBADMSG;
        }
        if (r < 0) {
                if (err && err_size)
                        snprintf(err, err_size, "cannot read state file: %s", strerror(-r));
                return r;
        }
        r = bind_state_parse(text, len, ret, err, err_size);
        return r < 0 ? r : 1;
}

int bind_state_save(const hostfs *h, const bind_state *s)
{
        int r;

        if (s->n == 0) {
                return hostfs_unlink(h, BIND_STATE_PATH);
        }
        if ((r = hostfs_mkdir_p(h, BIND_STATE_DIR)) < 0)
                return r;
        _cleanup_free_ char *text = bind_state_format(s);
        if (!text)
                return -ENOMEM;
        return hostfs_write_atomic(h, BIND_STATE_PATH, text, 0644);
}

const bind_state_entry *bind_state_find(const bind_state *s, const char *pci)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->e[i].pci, pci) == 0)
                        return &s->e[i];
        return NULL;
}
