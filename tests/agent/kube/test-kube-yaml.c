/* SPDX-License-Identifier: Apache-2.0 */
/* A kubeconfig's YAML through libyaml: what `kubectl config view --raw` writes, and the
 * rest of YAML a person may write (flow, block scalars, anchors, tags !!str), parses to the
 * JSON it means; what a kubeconfig never needs is refused with the line named; limits
 * hold. */
#include "kube-yaml.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>

static char *parse_dump(const char *y, int *ret_r, char *err, size_t n)
{
        json_t *j = NULL;
        *ret_r = kube_yaml_parse(y, strlen(y), &j, err, n);
        if (*ret_r < 0)
                return NULL;
        char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
        json_decref(j);
        return s;
}

static void test_good(void)
{
        static const struct {
                const char *yaml, *json;
        } t[] = {
                {"apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0t\n    server: https://10.0.0.1:6443\n"
                 "  name: kind-kind\ncontexts:\n- context:\n    cluster: kind-kind\n    user: kind-kind\n  name: kind-kind\n"
                 "current-context: kind-kind\nkind: Config\npreferences: {}\nusers:\n- name: kind-kind\n  user:\n"
                 "    token: abc.def\n",
                 "{\"apiVersion\":\"v1\",\"clusters\":[{\"cluster\":{\"certificate-authority-data\":\"LS0t\",\"server\":"
                 "\"https://10.0.0.1:6443\"},\"name\":\"kind-kind\"}],\"contexts\":[{\"context\":{\"cluster\":\"kind-kind\","
                 "\"user\":\"kind-kind\"},\"name\":\"kind-kind\"}],\"current-context\":\"kind-kind\",\"kind\":\"Config\","
                 "\"preferences\":{},\"users\":[{\"name\":\"kind-kind\",\"user\":{\"token\":\"abc.def\"}}]}"},
                /* sequences indented under their key, comments, quotes, a leading --- */
                {"---\n# a comment\na:\n  - x   # trailing comment\n  - 'it''s'\n  - \"q\\\"\\u00e9\\n\"\n  -\n    k: v\nb: ~\nc:\nd: []\n"
                 "e: 'a # not a comment'\nf: http://h/p#frag\n\"g h\": 1\n",
                 "{\"a\":[\"x\",\"it's\",\"q\\\"\\u00E9\\n\",{\"k\":\"v\"}],\"b\":null,\"c\":null,\"d\":[],\"e\":\"a # not a comment\","
                 "\"f\":\"http://h/p#frag\",\"g h\":\"1\"}"},
                {"- - a\n  - b\n- c\n", "[[\"a\",\"b\"],\"c\"]"},
                {"k: v\r\nl: w\r\n", "{\"k\":\"v\",\"l\":\"w\"}"},
                {"just a scalar\n", "\"just a scalar\""},
                {"a:\n  b:\n    c: true\n  d: 'x'\n...\n", "{\"a\":{\"b\":{\"c\":\"true\"},\"d\":\"x\"}}"},
                /* valid YAML the hand-written subset refused */
                {"a: |\n  line 1\n  line 2\nb: >-\n  folded\n  text\n", "{\"a\":\"line 1\\nline 2\\n\",\"b\":\"folded text\"}"},
                {"a: {b: c, d: [1, 2]}\ne: []\n", "{\"a\":{\"b\":\"c\",\"d\":[\"1\",\"2\"]},\"e\":[]}"},
                {"%YAML 1.1\n---\na: !!str ~\nb: !!null x\nc: &anc v\nd: !!map {e: f}\n",
                 "{\"a\":\"~\",\"b\":null,\"c\":\"v\",\"d\":{\"e\":\"f\"}}"},
                {"a: ''\nb: null\nc: \"null\"\nd: NULL\n", "{\"a\":\"\",\"b\":null,\"c\":\"null\",\"d\":null}"},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                char err[256] = "";
                int r;
                _cleanup_free_ char *s = parse_dump(t[i].yaml, &r, err, sizeof(err));
                if (r < 0)
                        fprintf(stderr, "case %zu: %s\n", i, err);
                CHECK_INT(r, 0);
                CHECK_STR(s, t[i].json);
        }
}

static void test_bad(void)
{
        static const struct {
                const char *yaml;
                int r;
                const char *msg;
        } t[] = {
                {"a: &anchor x\nb: *anchor\n", -EINVAL, "line 2: aliases (*name) are not supported"},
                {"a: !foo x\n", -EINVAL, "line 1: tags other than !!str and !!null"},
                {"a: !!binary eA==\n", -EINVAL, "line 1: tags other than"},
                {"a: !!set {x}\n", -EINVAL, "line 1: tags other than !!map and !!seq"},
                {"a: 1\n---\nb: 2\n", -EINVAL, "line 2: several documents"},
                {"a: 1\n...\nb: 2\n", -EINVAL, "line 3: did not find expected <document start>"},
                {"a:\n\tb: 1\n", -EINVAL, "line 2: "},
                {"a: 1\na: 2\n", -EINVAL, "line 2: duplicate key \"a\""},
                {"a: {b: 1, b: 2}\n", -EINVAL, "line 1: duplicate key \"b\""},
                {"a: 1\n  b: 2\n", -EINVAL, "line 2: "},
                {"a:\n  b: 1\n c: 2\n", -EINVAL, "line 3: "},
                {"a: 'unterminated\n", -EINVAL, "quoted scalar"},
                {"a: \"bad \\q escape\"\n", -EINVAL, "escape"},
                {"a: \"nul \\0\"\n", -EINVAL, "line 1: a NUL character"},
                {"a: 1\n- b\n", -EINVAL, "line 2: "},
                {"", -EINVAL, "empty document"},
                {"# only a comment\n", -EINVAL, "empty document"},
                {"---\n", -EINVAL, "empty document"},
                {": v\n", -EINVAL, "line 1: did not find expected key"},
                {"? ''\n: v\n", -EINVAL, "line 1: a mapping key must be a non-empty scalar"},
                {"? [k]\n: v\n", -EINVAL, "line 1: a mapping key must be a non-empty scalar"},
                {"a: @x\n", -EINVAL, "line 1: "},
                {"a: \"\xff\"\n", -EINVAL, "UTF-8"},
                {"%YAML 2.0\na: 1\n", -EINVAL, "line 1: "},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                char err[256] = "";
                int r;
                _cleanup_free_ char *s = parse_dump(t[i].yaml, &r, err, sizeof(err));
                CHECK_INT(r, t[i].r);
                if (!strstr(err, t[i].msg))
                        fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err, t[i].msg);
                else
                        printf("refused: %s\n", err);
                CHECK(strstr(err, t[i].msg) != NULL);
                CHECK(s == NULL);
        }
        char err[128];
        json_t *j = NULL;
        CHECK_INT(kube_yaml_parse("a\0b", 3, &j, err, sizeof(err)), -EINVAL);
        CHECK_INT(kube_yaml_parse("a: b", KUBE_YAML_MAX_TEXT + 1, &j, err, sizeof(err)), -E2BIG);
        /* nesting: 40 levels */
        char deep[2048] = "";
        size_t n = 0;
        for (int i = 0; i < 40; i++)
                n += (size_t)snprintf(deep + n, sizeof(deep) - n, "%*sk:\n", i * 2, "");
        CHECK_INT(kube_yaml_parse(deep, n, &j, err, sizeof(err)), -E2BIG);
        CHECK(strstr(err, "nesting deeper than 32") != NULL);
        CHECK(j == NULL);
        /* values: 65537 of them in a flow sequence, within the size bound */
        _cleanup_free_ char *many = malloc(2 * 65537 + 2);
        CHECK(many != NULL);
        if (many) {
                n = 0;
                many[n++] = '[';
                for (int i = 0; i < 65537; i++) {
                        many[n++] = 'x';
                        many[n++] = ',';
                }
                many[n - 1] = ']';
                CHECK_INT(kube_yaml_parse(many, n, &j, err, sizeof(err)), -E2BIG);
                CHECK(strstr(err, "more than 65536 values") != NULL);
                CHECK(j == NULL);
        }
}

int main(void)
{
        test_good();
        test_bad();
        return test_done();
}
