/* SPDX-License-Identifier: Apache-2.0 */
/* kubeconfig and in-cluster configuration, and the token check. Pure: text and strings
 * in, value or message out (the two file reads are kube-config-load.c). Never logs. */
#include "errbuf.h"
#include "kube-config.h"

#include "cleanup.h"
#include "kube-yaml.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void kube_config_clear(kube_config *c)
{
        if (!c)
                return;
        if (c->token)
                explicit_bzero(c->token, strlen(c->token));
        free(c->server);
        free(c->ca_file);
        free(c->ca_pem);
        free(c->token);
        free(c->token_file);
        memset(c, 0, sizeof(*c));
}

static int dup_opt(const char *s, char **ret)
{
        if (!s) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int kube_config_copy(const kube_config *c, kube_config *ret)
{
        kube_config n = {0};

        if (dup_opt(c->server, &n.server) < 0 || dup_opt(c->ca_file, &n.ca_file) < 0 ||
            dup_opt(c->token, &n.token) < 0 || dup_opt(c->token_file, &n.token_file) < 0)
                goto oom;
        if (c->ca_pem) {
                n.ca_pem = malloc(c->ca_pem_len + 1);
                if (!n.ca_pem)
                        goto oom;
                memcpy(n.ca_pem, c->ca_pem, c->ca_pem_len);
                n.ca_pem[c->ca_pem_len] = '\0';
                n.ca_pem_len = c->ca_pem_len;
        }
        *ret = n;
        return 0;
oom:
        kube_config_clear(&n);
        return -ENOMEM;
}

int kube_token_check(const char *s, size_t len, char **ret)
{
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
                len--;
        if (len == 0)
                return -EBADMSG;
        if (len >= KUBE_TOKEN_MAX)
                return -E2BIG;
        for (size_t i = 0; i < len; i++)
                if (s[i] <= 0x20 || s[i] >= 0x7f)
                        return -EBADMSG;
        char *t = strndup(s, len);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

/* ---- kubeconfig ------------------------------------------------------------------- */

static const char *str_of(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The entry of list (clusters, users, contexts) named name: its field (cluster, user,
 * context) object. */
static json_t *named(json_t *root, const char *list, const char *field, const char *name)
{
        json_t *arr = json_object_get(root, list), *e;
        size_t i;

        if (!json_is_array(arr))
                return NULL;
        json_array_foreach(arr, i, e) {
                const char *n = str_of(e, "name");
                if (n && strcmp(n, name) == 0) {
                        json_t *f = json_object_get(e, field);
                        return json_is_object(f) ? f : NULL;
                }
        }
        return NULL;
}

/* insecure-skip-tls-verify may only be absent or false: JSON false or null, or a YAML
 * false ("false", "no", "off", "n" in any case, as YAML 1.1 and kubectl's parser read
 * them). true, yes, on, TRUE, and anything that is not a boolean at all, are refused:
 * failing closed, the agent never guesses what a value meant. */
static bool skip_verify_off(json_t *v)
{
        static const char *const off[] = {"false", "no", "off", "n"};

        if (!v || json_is_false(v) || json_is_null(v))
                return true;
        if (!json_is_string(v))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(off); i++)
                if (strcasecmp(json_string_value(v), off[i]) == 0)
                        return true;
        return false;
}

/* Wipe every string of a parsed kubeconfig (the token is one of them) before it is freed. */
static void wipe_strings(json_t *v, unsigned depth)
{
        const char *key;
        json_t *x;
        size_t i;

        if (!v || depth > 64)
                return;
        if (json_is_string(v))
                explicit_bzero((char *)json_string_value(v), json_string_length(v));
        else if (json_is_object(v))
                json_object_foreach(v, key, x)
                        wipe_strings(x, depth + 1);
        else if (json_is_array(v))
                json_array_foreach(v, i, x)
                        wipe_strings(x, depth + 1);
}

static int b64val(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

/* Standard base64 (padding optional, no whitespace). */
static int b64_decode(const char *s, char **ret, size_t *ret_len)
{
        size_t len = strlen(s), o = 0;
        unsigned acc = 0, bits = 0;
        char *out;

        while (len > 0 && s[len - 1] == '=')
                len--;
        if (len % 4 == 1)
                return -EINVAL;
        out = malloc(len * 3 / 4 + 2);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                int v = b64val(s[i]);
                if (v < 0) {
                        free(out);
                        return -EINVAL;
                }
                acc = acc << 6 | (unsigned)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[o++] = (char)((acc >> bits) & 0xff);
                }
        }
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        return 0;
}

static char *join_path(const char *base_dir, const char *p)
{
        char *r = NULL;
        if (p[0] == '/' || !base_dir || !*base_dir)
                return strdup(p);
        if (asprintf(&r, "%s/%s", base_dir, p) < 0)
                return NULL;
        return r;
}

static int server_check(const char *server, char *err, size_t err_size)
{
        size_t n = strlen(server);
        if (strncmp(server, "https://", 8) != 0 || n <= 8 || n > 2048) {
                errbuf_printf(err, err_size, "server \"%.80s\": only https:// URLs are supported (TLS is always verified)", server);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++)
                if (server[i] <= 0x20 || server[i] >= 0x7f) {
                        errbuf_printf(err, err_size, "server: not a URL");
                        return -EINVAL;
                }
        return 0;
}

static int from_json(json_t *root, const char *base_dir, kube_config *ret, char *err, size_t err_size)
{
        static const char *const user_unsupported[][2] = {
                {"exec", "credential plugins (exec) are not supported: use token or tokenFile"},
                {"auth-provider", "auth-provider plugins are not supported: use token or tokenFile"},
                {"client-certificate", "client certificates are not supported: use token or tokenFile"},
                {"client-certificate-data", "client certificates are not supported: use token or tokenFile"},
                {"client-key", "client certificates are not supported: use token or tokenFile"},
                {"client-key-data", "client certificates are not supported: use token or tokenFile"},
                {"username", "basic authentication is not supported: use token or tokenFile"},
                {"password", "basic authentication is not supported: use token or tokenFile"},
                {"as", "impersonation is not supported"},
        };
        static const char *const cluster_unsupported[][2] = {
                {"tls-server-name", "tls-server-name is not supported"},
                {"proxy-url", "proxy-url is not supported"},
        };
        kube_config c = {0};
        const char *cur, *cl, *us, *server, *ca, *cad, *tok, *tokf;
        json_t *ctx, *cluster, *user;
        int r = -EINVAL;

        if (!json_is_object(root)) {
                errbuf_printf(err, err_size, "kubeconfig: not a mapping");
                return -EINVAL;
        }
        cur = str_of(root, "current-context");
        if (!cur || !*cur) {
                errbuf_printf(err, err_size, "kubeconfig: no current-context");
                return -EINVAL;
        }
        ctx = named(root, "contexts", "context", cur);
        if (!ctx) {
                errbuf_printf(err, err_size, "kubeconfig: no context \"%.64s\" (current-context)", cur);
                return -EINVAL;
        }
        cl = str_of(ctx, "cluster");
        us = str_of(ctx, "user");
        if (!cl || !us) {
                errbuf_printf(err, err_size, "kubeconfig: context \"%.64s\" needs a cluster and a user", cur);
                return -EINVAL;
        }
        cluster = named(root, "clusters", "cluster", cl);
        if (!cluster) {
                errbuf_printf(err, err_size, "kubeconfig: no cluster \"%.64s\"", cl);
                return -EINVAL;
        }
        user = named(root, "users", "user", us);
        if (!user) {
                errbuf_printf(err, err_size, "kubeconfig: no user \"%.64s\"", us);
                return -EINVAL;
        }
        for (size_t i = 0; i < ELEMENTSOF(cluster_unsupported); i++)
                if (json_object_get(cluster, cluster_unsupported[i][0])) {
                        errbuf_printf(err, err_size, "kubeconfig: cluster \"%.64s\": %s", cl, cluster_unsupported[i][1]);
                        return -EINVAL;
                }
        if (!skip_verify_off(json_object_get(cluster, "insecure-skip-tls-verify"))) {
                errbuf_printf(err, err_size, "kubeconfig: cluster \"%.64s\": insecure-skip-tls-verify is refused (TLS is always verified)", cl);
                return -EINVAL;
        }
        for (size_t i = 0; i < ELEMENTSOF(user_unsupported); i++)
                if (json_object_get(user, user_unsupported[i][0])) {
                        errbuf_printf(err, err_size, "kubeconfig: user \"%.64s\": %s", us, user_unsupported[i][1]);
                        return -EINVAL;
                }
        server = str_of(cluster, "server");
        if (!server) {
                errbuf_printf(err, err_size, "kubeconfig: cluster \"%.64s\": no server", cl);
                return -EINVAL;
        }
        if (server_check(server, err, err_size) < 0)
                return -EINVAL;
        ca = str_of(cluster, "certificate-authority");
        cad = str_of(cluster, "certificate-authority-data");
        if (!(ca && *ca) && !(cad && *cad)) {
                errbuf_printf(err, err_size, "kubeconfig: cluster \"%.64s\": no certificate-authority or certificate-authority-data (TLS is always verified)", cl);
                return -EINVAL;
        }
        tok = str_of(user, "token");
        tokf = str_of(user, "tokenFile");
        if (!(tok && *tok) && !(tokf && *tokf)) {
                errbuf_printf(err, err_size, "kubeconfig: user \"%.64s\": no token or tokenFile", us);
                return -EINVAL;
        }
        c.server = strndup(server, strlen(server) - (server[strlen(server) - 1] == '/'));
        if (!c.server)
                goto oom;
        if (cad && *cad) { /* kubectl: the data wins over the file */
                r = b64_decode(cad, &c.ca_pem, &c.ca_pem_len);
                if (r == -ENOMEM)
                        goto oom;
                if (r < 0 || c.ca_pem_len == 0) {
                        errbuf_printf(err, err_size, "kubeconfig: cluster \"%.64s\": certificate-authority-data is not base64", cl);
                        kube_config_clear(&c);
                        return -EINVAL;
                }
        } else if (!(c.ca_file = join_path(base_dir, ca)))
                goto oom;
        if (tok && *tok) { /* kubectl: token wins over tokenFile */
                r = kube_token_check(tok, strlen(tok), &c.token);
                if (r == -ENOMEM)
                        goto oom;
                if (r < 0) {
                        errbuf_printf(err, err_size, "kubeconfig: user \"%.64s\": the token is not printable ASCII without spaces", us);
                        kube_config_clear(&c);
                        return -EINVAL;
                }
        } else if (!(c.token_file = join_path(base_dir, tokf)))
                goto oom;
        *ret = c;
        return 0;
oom:
        kube_config_clear(&c);
        errbuf_printf(err, err_size, "out of memory");
        return -ENOMEM;
}

int kube_config_parse(const char *text, size_t len, const char *base_dir, kube_config *ret, char *err,
                      size_t err_size)
{
        char yerr[256];
        json_t *root = NULL;
        size_t i = 0;
        int r;

        while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
                i++;
        if (i < len && text[i] == '{') { /* the JSON form */
                json_error_t jerr;
                if (len > KUBE_YAML_MAX_TEXT) {
                        errbuf_printf(err, err_size, "kubeconfig: larger than %d bytes", KUBE_YAML_MAX_TEXT);
                        return -E2BIG;
                }
                root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
                if (!root) {
                        errbuf_printf(err, err_size, "kubeconfig: bad JSON (line %d: %s)", jerr.line, jerr.text);
                        return -EINVAL;
                }
        } else {
                r = kube_yaml_parse(text, len, &root, yerr, sizeof(yerr));
                if (r < 0) {
                        errbuf_printf(err, err_size, "kubeconfig: %s", yerr);
                        return r;
                }
        }
        r = from_json(root, base_dir, ret, err, err_size);
        wipe_strings(root, 0);
        json_decref(root);
        return r;
}

int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir, kube_config *ret,
                           char *err, size_t err_size)
{
        kube_config c = {0};
        char *url = NULL;
        uint64_t p = 0;

        if (!host || !*host || !port || !*port) {
                errbuf_printf(err, err_size, "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
                return -EINVAL;
        }
        for (const char *s = host; *s; s++)
                if (!(*s == '.' || *s == ':' || *s == '-' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
                      (*s >= 'A' && *s <= 'Z')) || s - host > 253) {
                        errbuf_printf(err, err_size, "KUBERNETES_SERVICE_HOST \"%.64s\" is not a host name or address", host);
                        return -EINVAL;
                }
        if (strlen(port) > 6 || parse_u64(port, 65535, &p) < 0 || p < 1) {
                errbuf_printf(err, err_size, "KUBERNETES_SERVICE_PORT \"%.16s\" is not a port", port);
                return -EINVAL;
        }
        if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%" PRIu64 : "https://%s:%" PRIu64, host, p) < 0)
                return -ENOMEM;
        c.server = url;
        if (!sa_dir)
                sa_dir = KUBE_SA_DIR;
        if (asprintf(&c.ca_file, "%s/ca.crt", sa_dir) < 0)
                c.ca_file = NULL;
        if (asprintf(&c.token_file, "%s/token", sa_dir) < 0)
                c.token_file = NULL;
        if (!c.ca_file || !c.token_file) {
                kube_config_clear(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}
