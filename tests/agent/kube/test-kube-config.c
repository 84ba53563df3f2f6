/* SPDX-License-Identifier: Apache-2.0 */
/* kubeconfig and in-cluster configuration: the current context's server, CA and token
 * source; relative paths; the JSON form; every unsupported or insecure setting refused
 * with the field named; tokens checked and read. */
#include "kube-config.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#define KC(user, cluster)                                                                  \
        "apiVersion: v1\nkind: Config\ncurrent-context: prod\ncontexts:\n- name: other\n  context:\n"       \
        "    cluster: nowhere\n    user: nobody\n- name: prod\n  context:\n    cluster: c1\n    user: u1\n" \
        "clusters:\n- name: c1\n  cluster:\n" cluster "users:\n- name: u1\n  user:\n" user

static int parse(const char *text, kube_config *c, char *err)
{
        return kube_config_parse(text, strlen(text), "/etc/kube", c, err, KUBE_ERR_LEN);
}

static void test_kubeconfig(void)
{
        kube_config c = {0};
        char err[KUBE_ERR_LEN];

        /* "LS0tLS1CRUdJTg==" is "-----BEGIN" */
        CHECK_INT(parse(KC("    token: abc.def-ghi\n", "    server: https://k8s.example:6443/\n"
                                                        "    certificate-authority-data: LS0tLS1CRUdJTg==\n"),
                        &c, err),
                  0);
        CHECK_STR(c.server, "https://k8s.example:6443");
        CHECK_INT(c.ca_pem_len, 10);
        CHECK(c.ca_pem && memcmp(c.ca_pem, "-----BEGIN", 10) == 0);
        CHECK(c.ca_file == NULL);
        CHECK_STR(c.token, "abc.def-ghi");
        CHECK(c.token_file == NULL);
        kube_config copy = {0};
        CHECK_INT(kube_config_copy(&c, &copy), 0);
        CHECK_STR(copy.token, "abc.def-ghi");
        kube_config_clear(&copy);
        kube_config_clear(&c);
        CHECK(c.server == NULL);

        CHECK_INT(parse(KC("    tokenFile: sa/token\n", "    server: https://10.0.0.1\n    certificate-authority: ca.crt\n"),
                        &c, err),
                  0);
        CHECK_STR(c.ca_file, "/etc/kube/ca.crt");
        CHECK_STR(c.token_file, "/etc/kube/sa/token");
        kube_config_clear(&c);
        CHECK_INT(parse(KC("    tokenFile: /run/t\n", "    server: https://10.0.0.1\n    certificate-authority: /pki/ca.crt\n"),
                        &c, err),
                  0);
        CHECK_STR(c.ca_file, "/pki/ca.crt");
        CHECK_STR(c.token_file, "/run/t");
        kube_config_clear(&c);

        /* YAML a person writes by hand: flow collections, a folded block scalar */
        CHECK_INT(parse("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                        "clusters:\n- {name: c, cluster: {server: 'https://h:1', certificate-authority: /ca}}\n"
                        "users:\n- name: u\n  user:\n    token: >-\n      abc.def\n",
                        &c, err),
                  0);
        CHECK_STR(c.server, "https://h:1");
        CHECK_STR(c.token, "abc.def");
        kube_config_clear(&c);

        const char *json = "{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}],"
                           "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://h:1\",\"certificate-authority\":\"/ca\","
                           "\"insecure-skip-tls-verify\":false}}],\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"t\"}}]}";
        CHECK_INT(parse(json, &c, err), 0);
        CHECK_STR(c.server, "https://h:1");
        kube_config_clear(&c);

        /* insecure-skip-tls-verify may be there when it is false, in any of YAML's spellings */
        static const char *const off[] = {"false", "False", "FALSE", "no", "NO", "off", "Off", "n", "\"false\"", "null", "~"};
        for (size_t i = 0; i < ELEMENTSOF(off); i++) {
                char text[512];
                snprintf(text, sizeof(text), KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n"
                                                               "    insecure-skip-tls-verify: %s\n"), off[i]);
                CHECK_INT(parse(text, &c, err), 0);
                kube_config_clear(&c);
        }

        static const struct {
                const char *text, *msg;
        } bad[] = {
                {KC("    exec:\n      command: aws\n", "    server: https://h\n    certificate-authority: /ca\n"),
                 "user \"u1\": credential plugins (exec) are not supported: use token or tokenFile"},
                {KC("    client-certificate-data: eA==\n    client-key-data: eA==\n", "    server: https://h\n    certificate-authority: /ca\n"),
                 "client certificates are not supported"},
                {KC("    auth-provider:\n      name: gcp\n", "    server: https://h\n    certificate-authority: /ca\n"), "auth-provider"},
                {KC("    username: a\n    password: b\n", "    server: https://h\n    certificate-authority: /ca\n"), "basic authentication"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: true\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: TRUE\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: yes\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: Yes\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: YES\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: on\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: y\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: \"true\"\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: maybe\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    insecure-skip-tls-verify: 1\n"),
                 "insecure-skip-tls-verify is refused"},
                {KC("    token: t\n", "    server: http://h\n    certificate-authority: /ca\n"), "only https:// URLs"},
                {KC("    token: t\n", "    server: https://h\n"), "no certificate-authority or certificate-authority-data"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority-data: '%%%'\n"), "not base64"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    proxy-url: http://p\n"), "proxy-url"},
                {KC("    token: t\n", "    server: https://h\n    certificate-authority: /ca\n    tls-server-name: x\n"), "tls-server-name"},
                {KC("    {}\n", "    server: https://h\n    certificate-authority: /ca\n"), "user \"u1\": no token or tokenFile"},
                {KC("    token: two words\n", "    server: https://h\n    certificate-authority: /ca\n"), "not printable ASCII"},
                {KC("    token: t\n", "    certificate-authority: /ca\n"), "cluster \"c1\": no server"},
                {"apiVersion: v1\nkind: Config\n", "no current-context"},
                {"current-context: x\ncontexts: []\n", "no context \"x\""},
                {"current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\nclusters: []\n", "no cluster \"c\""},
                {"a: &x 1\nb: *x\n", "kubeconfig: line 2: aliases (*name) are not supported"},
                {"{\"current-context\": ", "bad JSON"},
                {"- a\n", "not a mapping"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                kube_config u = {.server = (char *)"untouched"};
                err[0] = '\0';
                CHECK(parse(bad[i].text, &u, err) < 0);
                if (!strstr(err, bad[i].msg))
                        fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err, bad[i].msg);
                CHECK(strstr(err, bad[i].msg) != NULL);
                CHECK_STR(u.server, "untouched");
                CHECK(strstr(err, "abc") == NULL);
        }
}

static void test_in_cluster(void)
{
        kube_config c = {0};
        char err[KUBE_ERR_LEN];

        CHECK_INT(kube_config_in_cluster("10.96.0.1", "443", NULL, &c, err, sizeof(err)), 0);
        CHECK_STR(c.server, "https://10.96.0.1:443");
        CHECK_STR(c.ca_file, KUBE_SA_DIR "/ca.crt");
        CHECK_STR(c.token_file, KUBE_SA_DIR "/token");
        CHECK(c.token == NULL);
        kube_config_clear(&c);
        CHECK_INT(kube_config_in_cluster("fd00::1", "6443", "/run/sa", &c, err, sizeof(err)), 0);
        CHECK_STR(c.server, "https://[fd00::1]:6443");
        CHECK_STR(c.token_file, "/run/sa/token");
        kube_config_clear(&c);
        CHECK_INT(kube_config_in_cluster(NULL, "443", NULL, &c, err, sizeof(err)), -EINVAL);
        CHECK(strstr(err, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set") != NULL);
        CHECK_INT(kube_config_in_cluster("10.0.0.1", "0", NULL, &c, err, sizeof(err)), -EINVAL);
        CHECK_INT(kube_config_in_cluster("10.0.0.1", "65536", NULL, &c, err, sizeof(err)), -EINVAL);
        CHECK_INT(kube_config_in_cluster("10.0.0.1", "44x", NULL, &c, err, sizeof(err)), -EINVAL);
        CHECK_INT(kube_config_in_cluster("h/evil", "443", NULL, &c, err, sizeof(err)), -EINVAL);
        CHECK(c.server == NULL);
}

static void test_tokens(void)
{
        char *t = NULL;
        CHECK_INT(kube_token_check("eyJhbGciOi.x-y_z\n", 17, &t), 0);
        CHECK_STR(t, "eyJhbGciOi.x-y_z");
        free(t);
        t = NULL;
        CHECK_INT(kube_token_check("", 0, &t), -EBADMSG);
        CHECK_INT(kube_token_check("\n\n", 2, &t), -EBADMSG);
        CHECK_INT(kube_token_check("a b", 3, &t), -EBADMSG);
        CHECK_INT(kube_token_check("a\nb", 3, &t), -EBADMSG);
        CHECK_INT(kube_token_check("a\rX-Evil: 1", 11, &t), -EBADMSG);
        static char big[KUBE_TOKEN_MAX + 1];
        memset(big, 'a', sizeof(big));
        CHECK_INT(kube_token_check(big, sizeof(big), &t), -E2BIG);
        CHECK(t == NULL);

        char dir[512], path[600];
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/spinlane-kube-config-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/token", dir);
        FILE *f = fopen(path, "w");
        fputs("tok-123\n", f);
        fclose(f);
        CHECK_INT(kube_token_read(path, &t), 0);
        CHECK_STR(t, "tok-123");
        free(t);
        t = NULL;
        CHECK_INT(kube_token_read(dir, &t), -EINVAL); /* a directory */
        unlink(path);
        CHECK_INT(kube_token_read(path, &t), -ENOENT);
        kube_config c = {0};
        char err[KUBE_ERR_LEN];
        CHECK_INT(kube_config_load(path, &c, err, sizeof(err)), -ENOENT);
        CHECK(strstr(err, "No such file") != NULL);
        rmdir(dir);
}

/* jansson's allocations through a counting allocator that looks for the token in every
 * block it frees: the parsed kubeconfig's strings are wiped before they go. */
static const char wipe_token[] = "sekret.tok-4242";
static unsigned unwiped;

static void *spy_malloc(size_t n)
{
        size_t *p = malloc(sizeof(size_t) + n);
        if (!p)
                return NULL;
        *p = n;
        return p + 1;
}

static void spy_free(void *q)
{
        if (!q)
                return;
        size_t *p = (size_t *)q - 1;
        if (memmem(q, *p, wipe_token, sizeof(wipe_token) - 1))
                unwiped++;
        free(p);
}

static void test_wiped(void)
{
        kube_config c = {0};
        char err[KUBE_ERR_LEN];
        static const char json[] =
                "{\"current-context\":\"c\",\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}],"
                "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://h:1\",\"certificate-authority\":\"/ca\"}}],"
                "\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"sekret.tok-4242\"}}]}";

        json_set_alloc_funcs(spy_malloc, spy_free);
        CHECK_INT(parse(KC("    token: sekret.tok-4242\n", "    server: https://h\n    certificate-authority: /ca\n"), &c, err), 0);
        CHECK_STR(c.token, wipe_token);
        kube_config_clear(&c);
        CHECK_INT(parse(json, &c, err), 0);
        kube_config_clear(&c);
        json_set_alloc_funcs(malloc, free);
        CHECK_INT(unwiped, 0);
}

int main(void)
{
        test_wiped();
        test_kubeconfig();
        test_in_cluster();
        test_tokens();
        return test_done();
}
