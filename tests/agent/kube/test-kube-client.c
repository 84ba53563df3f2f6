/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes API client against a TLS server that behaves like the API server
 * (tests/agent/kube/fake_apiserver.py): the exact label merge patch and its content type,
 * nothing but our keys touched, the resourceVersion precondition and 409 retries, Events
 * created and their series patched under the API server's schema checks, token rotation
 * through a kubelet-style ..data symlink swap (at once on a 401, and within a minute
 * without one), 401/403/404/409/422/429/500 Status replies, Retry-After, a wrong CA, a
 * hanging server, a reset mid-body, a 3 MiB error body, garbage JSON. */
#include "kube-client.h"

#include "peer.h"
#include "testutil.h"

#include <jansson.h>
#include <sys/stat.h>

static loop *L;
static http_client *H;
static peer P;
static char dir[256], ca[512], otherca[512], server[64], tokdir[512];
static uint64_t clock_offset;
static uint64_t test_now(void) { return loop_now_ms() + clock_offset; }

typedef struct res {
        bool done;
        int calls;
        int error;
        long status;
        bool retry, changed;
        uint32_t retry_after;
        char msg[512];
        char reason[64];
} res;

static void on_done(const kube_result *r, void *userdata)
{
        res *x = userdata;
        x->done = true;
        x->calls++;
        x->error = r->error;
        x->status = r->status;
        x->retry = r->retry;
        x->changed = r->changed;
        x->retry_after = r->retry_after_s;
        snprintf(x->msg, sizeof(x->msg), "%s", r->message);
        snprintf(x->reason, sizeof(x->reason), "%s", r->api ? r->api->reason : "");
}

static bool run_until(bool *flag)
{
        uint64_t deadline = loop_now_ms() + 120000;
        while (!*flag && loop_now_ms() < deadline)
                if (loop_run_once(L, 1000) < 0)
                        return false;
        return *flag;
}

static void cmd(const char *c)
{
        char line[256];
        CHECK_INT(peer_send(&P, c), 0);
        CHECK_INT(peer_read_line(&P, line, sizeof(line), 60000), 1);
        CHECK_STR(line, "ok");
}

/* A query command answered by one JSON line (new reference). */
static json_t *query(const char *c)
{
        static char line[8192];
        json_error_t e;
        CHECK_INT(peer_send(&P, c), 0);
        CHECK_INT(peer_read_line(&P, line, sizeof(line), 60000), 1);
        json_t *j = json_loads(line, JSON_DECODE_ANY, &e);
        CHECK(j != NULL);
        return j;
}

static long long count_of(const char *key)
{
        json_t *j = query("count");
        long long v = json_integer_value(json_object_get(j, key));
        json_decref(j);
        return v;
}

/* The kubelet's way: write the new token into a fresh timestamped dir, point a temporary
 * ..data symlink at it, rename it over ..data (atomic); "token" -> "..data/token". */
static void rotate_token(const char *token)
{
        static int gen;
        char d[600], link[600], tmp[600], target[64], file[700];
        snprintf(target, sizeof(target), "..2026_%d", ++gen);
        snprintf(d, sizeof(d), "%s/%s", tokdir, target);
        CHECK_INT(mkdir(d, 0700), 0);
        snprintf(file, sizeof(file), "%s/token", d);
        FILE *f = fopen(file, "w");
        CHECK(f != NULL);
        fprintf(f, "%s\n", token);
        fclose(f);
        snprintf(tmp, sizeof(tmp), "%s/..data_tmp", tokdir);
        snprintf(link, sizeof(link), "%s/..data", tokdir);
        unlink(tmp);
        CHECK_INT(symlink(target, tmp), 0);
        CHECK_INT(rename(tmp, link), 0);
}

static kube_client *client_from_kubeconfig(const char *ca_path, uint32_t timeout_ms)
{
        char path[600], err[KUBE_ERR_LEN];
        kube_config cfg = {0};
        kube_client *c = NULL;

        snprintf(path, sizeof(path), "%s/kubeconfig", dir);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        /* what kubectl writes, with a relative tokenFile (relative to the kubeconfig) */
        fprintf(f, "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority: %s\n    server: %s\n"
                   "  name: test\ncontexts:\n- context:\n    cluster: test\n    user: agent\n  name: test\n"
                   "current-context: test\nkind: Config\npreferences: {}\nusers:\n- name: agent\n  user:\n"
                   "    tokenFile: sa/token\n",
                ca_path, server);
        fclose(f);
        int r = kube_config_load(path, &cfg, err, sizeof(err));
        CHECK_INT(r, 0);
        if (r < 0) {
                fprintf(stderr, "%s\n", err);
                return NULL;
        }
        CHECK_INT(kube_client_new(L, H, &cfg, &(kube_client_options){.timeout_ms = timeout_ms, .now_ms = test_now}, &c), 0);
        kube_config_clear(&cfg);
        return c;
}

static res *sync_labels(kube_client *c, const kube_label *l, size_t n)
{
        static res x;
        memset(&x, 0, sizeof(x));
        CHECK_INT(kube_node_sync_labels(c, "node-a", l, n, on_done, &x), 0);
        CHECK(!x.done);
        CHECK(run_until(&x.done));
        CHECK_INT(x.calls, 1);
        return &x;
}

static void test_labels(kube_client *c)
{
        /* stale: a key of ours to drop; spinlane.io/node-pool (the user's, the DaemonSet's
         * node selector) is not named and must stay */
        const kube_label want[] = {{"spinlane.io/ready", "true"}, {"spinlane.io/dpdk-nics", "2"},
                                   {"spinlane.io/stale", NULL}};
        res *r = sync_labels(c, want, 3);
        CHECK_INT(r->error, 0);
        CHECK(r->changed);
        json_t *last = query("last");
        CHECK_STR(json_string_value(json_object_get(last, "method")), "PATCH");
        CHECK_STR(json_string_value(json_object_get(last, "path")), "/api/v1/nodes/node-a");
        CHECK_STR(json_string_value(json_object_get(last, "ctype")), "application/merge-patch+json");
        CHECK_STR(json_string_value(json_object_get(last, "body")),
                  "{\"metadata\":{\"labels\":{\"spinlane.io/dpdk-nics\":\"2\",\"spinlane.io/ready\":\"true\","
                  "\"spinlane.io/stale\":null},\"resourceVersion\":\"1\"}}");
        CHECK_STR(json_string_value(json_object_get(last, "auth")), "tok-1");
        json_decref(last);
        json_t *node = query("node");
        json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
        CHECK_STR(json_string_value(json_object_get(labels, "kubernetes.io/hostname")), "node-a");
        CHECK_STR(json_string_value(json_object_get(labels, "spinlane.io/ready")), "true");
        CHECK(json_object_get(labels, "spinlane.io/stale") == NULL);
        CHECK_STR(json_string_value(json_object_get(labels, "spinlane.io/node-pool")), "true");
        CHECK_INT(json_object_size(labels), 4);
        json_decref(node);

        /* the same again: a GET, no PATCH */
        long long patches = count_of("patches");
        r = sync_labels(c, want, 3);
        CHECK_INT(r->error, 0);
        CHECK(!r->changed);
        CHECK_INT(count_of("patches"), patches);

        /* someone else's label stays; our change races another writer once: 409, again */
        cmd("label example.com/team blue");
        cmd("conflict 1");
        const kube_label next[] = {{"spinlane.io/ready", "false"}, {"spinlane.io/dpdk-nics", "2"}};
        long long gets = count_of("gets");
        r = sync_labels(c, next, 2);
        CHECK_INT(r->error, 0);
        CHECK(r->changed);
        CHECK_INT(count_of("gets"), gets + 2);
        node = query("node");
        labels = json_object_get(json_object_get(node, "metadata"), "labels");
        CHECK_STR(json_string_value(json_object_get(labels, "example.com/team")), "blue");
        CHECK_STR(json_string_value(json_object_get(labels, "spinlane.io/ready")), "false");
        json_decref(node);

        /* a race lost every time: give up with 409 */
        cmd("conflict 10");
        r = sync_labels(c, want, 2);
        CHECK_INT(r->error, -EBUSY);
        CHECK_INT(r->status, 409);
        CHECK(strstr(r->msg, "HTTP 409 Conflict") != NULL);
        cmd("conflict 0");

        /* 422 from the server, its Status message kept */
        cmd("fail PATCH /api/v1/nodes 422");
        r = sync_labels(c, want, 3);
        CHECK_INT(r->error, -EINVAL);
        CHECK_STR(r->reason, "Invalid");

        /* bad labels never leave the process */
        const kube_label foreign[] = {{"kubernetes.io/hostname", "x"}}, badval[] = {{"spinlane.io/x", "not ok!"}};
        res x = {0};
        CHECK_INT(kube_node_sync_labels(c, "node-a", foreign, 1, on_done, &x), -EINVAL);
        CHECK_INT(kube_node_sync_labels(c, "node-a", badval, 1, on_done, &x), -EINVAL);
        CHECK_INT(kube_node_sync_labels(c, "node-a/../x", want, 1, on_done, &x), -EINVAL);
        CHECK_INT(x.calls, 0);
        /* a Node that is not there */
        memset(&x, 0, sizeof(x));
        CHECK_INT(kube_node_sync_labels(c, "node-b", want, 1, on_done, &x), 0);
        CHECK(run_until(&x.done));
        CHECK_INT(x.error, -ENOENT);
        CHECK(strstr(x.msg, "nodes \"node-b\" not found") != NULL);
}

static res *event_call(kube_client *c, const kube_event *e, int32_t patch_count, const char *patch_name)
{
        static res x;
        memset(&x, 0, sizeof(x));
        if (e)
                CHECK_INT(kube_event_create(c, e, on_done, &x), 0);
        else
                CHECK_INT(kube_event_patch_series(c, patch_name, patch_count, 1767323045123456, on_done, &x), 0);
        CHECK(run_until(&x.done));
        return &x;
}

static void test_events(kube_client *c)
{
        kube_event e = {.name = "node-a.18a1f2b3c4d5e6f701", .node = "node-a",
                        .node_uid = "5a7c0e1e-0000-4000-8000-000000000001", .type = "Warning",
                        .reason = "NicAddressFailed", .action = "Check",
                        .note = "FAIL nic-address: 0000:00:06.0 has no IPv4 address (AWS IMDS unreachable)",
                        .reporting_instance = "spinlane-agent-node-a", .event_time_us = 1767323040000001};
        res *r = event_call(c, &e, 0, NULL);
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 201);
        json_t *last = query("last");
        CHECK_STR(json_string_value(json_object_get(last, "ctype")), "application/json");
        CHECK_STR(json_string_value(json_object_get(last, "path")), "/apis/events.k8s.io/v1/namespaces/default/events");
        json_decref(last);
        json_t *ev = query("event node-a.18a1f2b3c4d5e6f701");
        CHECK_STR(json_string_value(json_object_get(ev, "eventTime")), "2026-01-02T03:04:00.000001Z");
        CHECK_STR(json_string_value(json_object_get(ev, "reportingController")), "spinlane.io/agent");
        CHECK_STR(json_string_value(json_object_get(json_object_get(ev, "regarding"), "uid")),
                  "5a7c0e1e-0000-4000-8000-000000000001");
        json_decref(ev);
        r = event_call(c, &e, 0, NULL); /* the same name again */
        CHECK_INT(r->error, -EEXIST);
        CHECK_STR(r->reason, "AlreadyExists");
        r = event_call(c, NULL, 2, "node-a.18a1f2b3c4d5e6f701");
        CHECK_INT(r->error, 0);
        ev = query("event node-a.18a1f2b3c4d5e6f701");
        json_t *series = json_object_get(ev, "series");
        CHECK_INT(json_integer_value(json_object_get(series, "count")), 2);
        CHECK_STR(json_string_value(json_object_get(series, "lastObservedTime")), "2026-01-02T03:04:05.123456Z");
        CHECK_STR(json_string_value(json_object_get(ev, "note")), e.note); /* immutable fields kept */
        json_decref(ev);
        r = event_call(c, NULL, 3, "node-a.gone");
        CHECK_INT(r->error, -ENOENT);
        /* the server's own schema check rejects what ours would never send (proves it checks) */
        res x = {0};
        CHECK_INT(kube_request(c, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json",
                               "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"x\"},"
                               "\"eventTime\":\"2026-01-02T03:04:05Z\",\"type\":\"Warning\",\"reason\":\"nic-address\"}",
                               on_done, &x),
                  0);
        CHECK(run_until(&x.done));
        CHECK_INT(x.error, -EINVAL);
        CHECK(strstr(x.msg, "eventTime") != NULL && strstr(x.msg, "UpperCamelCase") != NULL);
}

static void test_tokens(kube_client *c)
{
        const kube_label want[] = {{"spinlane.io/ready", "true"}};
        unsigned reads = kube_client_token_reads(c);
        long long unauth = count_of("unauth");

        /* rotated, and the server already refuses the old one: 401, read again, retried */
        rotate_token("tok-2");
        cmd("tokens tok-2");
        res *r = sync_labels(c, want, 1);
        CHECK_INT(r->error, 0);
        CHECK_INT(count_of("unauth"), unauth + 1);
        CHECK_INT(kube_client_token_reads(c), reads + 1);

        /* within the minute the file is not read again */
        r = sync_labels(c, want, 1);
        CHECK_INT(kube_client_token_reads(c), reads + 1);

        /* a minute on, it is: the new token goes out without a 401 first */
        rotate_token("tok-4");
        cmd("tokens tok-2,tok-4");
        clock_offset += KUBE_TOKEN_REREAD_MS;
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, 0);
        CHECK_INT(kube_client_token_reads(c), reads + 2);
        CHECK_INT(count_of("unauth"), unauth + 1);
        json_t *last = query("last");
        CHECK_STR(json_string_value(json_object_get(last, "auth")), "tok-4");
        json_decref(last);

        /* refused although freshly read: one clear error, no token in it */
        cmd("tokens tok-9");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EACCES);
        CHECK_INT(r->status, 401);
        CHECK(strstr(r->msg, "read again and is unchanged") != NULL);
        CHECK(strstr(r->msg, "tok-") == NULL);
        cmd("tokens tok-4");

        /* calls in flight together across a rotation: each 401 is retried with the new
         * token, also the ones whose re-read finds the file as another call just left it */
        rotate_token("tok-5");
        cmd("tokens tok-5");
        res x[3];
        memset(x, 0, sizeof(x));
        for (int i = 0; i < 3; i++)
                CHECK_INT(kube_request(c, "GET", "/api/v1/nodes/node-a", NULL, NULL, on_done, &x[i]), 0);
        for (int i = 0; i < 3; i++) {
                CHECK(run_until(&x[i].done));
                CHECK_INT(x[i].error, 0);
                CHECK_INT(x[i].status, 200);
        }
        cmd("tokens tok-4");
        rotate_token("tok-4");
}

static void test_errors(kube_client *c)
{
        const kube_label want[] = {{"spinlane.io/ready", "true"}};
        res *r;

        cmd("fail GET /api/v1/nodes 429 1 7");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EAGAIN);
        CHECK(r->retry);
        CHECK_INT(r->retry_after, 7);
        cmd("fail GET /api/v1/nodes 500");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EAGAIN);
        CHECK(r->retry);
        cmd("fail GET /api/v1/nodes 403");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EACCES);
        CHECK(!r->retry);
        CHECK(strstr(r->msg, "cannot patch resource \\\"nodes\\\"") != NULL || strstr(r->msg, "cannot patch resource \"nodes\"") != NULL);
        cmd("fail GET /api/v1/nodes garbage");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "not JSON") != NULL);
        cmd("fail GET /api/v1/nodes reset");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -ECONNRESET);
        CHECK(r->retry);
        cmd("fail GET /api/v1/nodes bigerror");
        r = sync_labels(c, want, 1);
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->msg, "limit of 2097152 bytes") != NULL);
        CHECK(!r->retry); /* the same reply would come again: not retried soon */
        r = sync_labels(c, want, 1); /* and all is well after */
        CHECK_INT(r->error, 0);
}

int main(void)
{
        char path[1024], v[256], err[KUBE_ERR_LEN];

        if (access(PEER_PYTHON, X_OK) != 0)
                TEST_SKIP("%s is missing (the API server stand-in)", PEER_PYTHON);
        if (!peer_have("openssl"))
                TEST_SKIP("the openssl command is missing (test certificates)");
        signal(SIGPIPE, SIG_IGN);
        const char *argv[] = {peer_source_path("tests/agent/kube/fake_apiserver.py", path, sizeof(path)), NULL};
        if (peer_start(&P, argv) < 0)
                return 1;
        snprintf(server, sizeof(server), "https://127.0.0.1:%s", peer_get(&P, "port", v, sizeof(v)));
        snprintf(dir, sizeof(dir), "%s", peer_get(&P, "dir", v, sizeof(v)));
        snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
        snprintf(otherca, sizeof(otherca), "%s/otherca.pem", dir);
        snprintf(tokdir, sizeof(tokdir), "%s/sa", dir);
        CHECK_INT(mkdir(tokdir, 0700), 0);
        rotate_token("tok-1");
        snprintf(path, sizeof(path), "%s/token", tokdir);
        CHECK_INT(symlink("..data/token", path), 0);

        CHECK_INT(loop_new(&L), 0);
        CHECK_INT(http_client_new(L, &H), 0);
        kube_client *c = client_from_kubeconfig(ca, 30000);
        if (!c)
                return test_done();
        test_labels(c);
        test_events(c);
        test_tokens(c);
        test_errors(c);
        kube_client_free(c);

        /* the wrong CA: refused before a byte of the token is sent */
        long long requests = count_of("requests");
        c = client_from_kubeconfig(otherca, 30000);
        res *r = sync_labels(c, (kube_label[]){{"spinlane.io/ready", "true"}}, 1);
        CHECK_INT(r->error, -EKEYREJECTED);
        CHECK_INT(count_of("requests"), requests);
        kube_client_free(c);

        /* a server that hangs: the request timeout ends it */
        c = client_from_kubeconfig(ca, 1500);
        cmd("fail GET /api/v1/nodes hang");
        r = sync_labels(c, (kube_label[]){{"spinlane.io/ready", "true"}}, 1);
        CHECK_INT(r->error, -ETIMEDOUT);
        CHECK(r->retry);
        /* freed with a call in flight: no callback, no leak */
        res x = {0};
        cmd("fail GET /api/v1/nodes hang");
        CHECK_INT(kube_node_sync_labels(c, "node-a", (kube_label[]){{"spinlane.io/ready", "true"}}, 1, on_done, &x), 0);
        for (int i = 0; i < 10; i++)
                loop_run_once(L, 20);
        kube_client_free(c);
        CHECK_INT(x.calls, 0);

        /* kube_cancel: the calls of one userdata go (no callback), the others finish */
        c = client_from_kubeconfig(ca, 30000);
        res y = {0}, z = {0};
        cmd("hold GET /api/v1/nodes/node-a");
        CHECK_INT(kube_request(c, "GET", "/api/v1/nodes/node-a", NULL, NULL, on_done, &y), 0);
        CHECK_INT(kube_request(c, "GET", "/api/v1/nodes/node-a", NULL, NULL, on_done, &z), 0);
        kube_cancel(c, &y);
        kube_cancel(c, &y); /* none left: nothing happens */
        cmd("release");
        CHECK(run_until(&z.done));
        CHECK_INT(z.error, 0);
        for (int i = 0; i < 10; i++)
                loop_run_once(L, 20);
        CHECK_INT(y.calls, 0);
        CHECK_INT(z.calls, 1);
        kube_client_free(c);

        /* a token file that is not there: the call is refused at once, and says which file */
        kube_config cfg = {0};
        CHECK_INT(kube_config_in_cluster("127.0.0.1", "6443", "/nonexistent/sa", &cfg, err, sizeof(err)), 0);
        CHECK_INT(kube_client_new(L, H, &cfg, NULL, &c), 0);
        kube_config_clear(&cfg);
        CHECK_INT(kube_node_sync_labels(c, "node-a", NULL, 0, on_done, &x), -ENOENT);
        kube_client_free(c);

        http_client_free(H);
        loop_free(L);
        CHECK_INT(peer_stop(&P), 0);
        return test_done();
}
