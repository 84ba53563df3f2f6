/* SPDX-License-Identifier: Apache-2.0 */
/* The metadata lookups against a fake IMDS of both clouds on loopback
 * (tests/agent/cloud/fake_imds.py): IMDSv2 token use, reuse, expiry (an injected clock) and
 * renewal on 401; Azure's header and api-version; every bad reply (404, HTML, truncated
 * JSON, 10 MiB, a reply that never ends, a hang, 5xx, addresses outside their subnet);
 * retries with backoff; an unreachable IMDS; cancellation by imds_free. */
#include "imds.h"

#include "peer.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static loop *L;
static http_client *H;
static peer P;
static char base[64];
static uint64_t clock_offset;

static uint64_t test_now(void) { return loop_now_ms() + clock_offset; }

typedef struct res {
        bool done;
        int calls;
        int error;
        imds_addr addr;
        char msg[IMDS_MSG_LEN];
} res;

static void on_done(int error, const imds_addr *a, const char *msg, void *userdata)
{
        res *r = userdata;
        r->done = true;
        r->calls++;
        r->error = error;
        if (a)
                r->addr = *a;
        snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

static bool run_until(bool *flag)
{
        uint64_t deadline = loop_now_ms() + 120000;
        while (!*flag && loop_now_ms() < deadline)
                if (loop_run_once(L, 1000) < 0)
                        return false;
        return *flag;
}

/* A peer command, in force when this returns. */
static void cmd(const char *c)
{
        char line[256];
        CHECK_INT(peer_send(&P, c), 0);
        CHECK_INT(peer_read_line(&P, line, sizeof(line), 60000), 1);
        CHECK_STR(line, "ok");
}

static int stat_of(const char *key)
{
        char line[256], k[40];
        CHECK_INT(peer_send(&P, "stats"), 0);
        CHECK_INT(peer_read_line(&P, line, sizeof(line), 60000), 1);
        snprintf(k, sizeof(k), " %s=", key);
        const char *p = strstr(line, k);
        return p ? atoi(p + strlen(k)) : -1;
}

static imds *new_imds(const char *b, unsigned attempts, uint32_t timeout_ms)
{
        imds *m = NULL;
        CHECK_INT(imds_new(L, H,
                           &(imds_options){.base_url = b, .attempts = attempts, .timeout_ms = timeout_ms,
                                           .backoff_ms = 20, .now_ms = test_now},
                           &m),
                  0);
        return m;
}

static res *lookup(imds *m, imds_cloud cloud, const uint8_t mac[6])
{
        static res r;
        memset(&r, 0, sizeof(r));
        CHECK_INT(imds_lookup(m, cloud, mac, on_done, &r), 0);
        CHECK(!r.done); /* never from inside imds_lookup */
        CHECK(run_until(&r.done));
        CHECK_INT(r.calls, 1);
        return &r;
}

static const uint8_t A1[6] = {0x0a, 0, 0, 0, 0, 1}, A2[6] = {0x0a, 0, 0, 0, 0, 2}, A4[6] = {0x0a, 0, 0, 0, 0, 4},
                     A5[6] = {0x0a, 0, 0, 0, 0, 5}, A9[6] = {0x0a, 0, 0, 0, 0, 9};
#define IPV4S1 "/latest/meta-data/network/interfaces/macs/0a:00:00:00:00:01/local-ipv4s"
#define SUBNET1 "/latest/meta-data/network/interfaces/macs/0a:00:00:00:00:01/subnet-ipv4-cidr-block"

static void test_aws_token(void)
{
        imds *m = new_imds(base, 3, 30000);
        int puts0 = stat_of("puts"), unauth0 = stat_of("unauth");

        res *r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, 0);
        CHECK_INT(r->addr.ipv4, 0x0a000111); /* the first of local-ipv4s */
        CHECK_INT(r->addr.prefix_len, 24);
        CHECK_INT(r->addr.gateway, 0x0a000101);
        CHECK_INT(imds_tokens_fetched(m), 1);
        CHECK_INT(stat_of("puts"), puts0 + 1);
        CHECK_INT(stat_of("unauth"), unauth0);

        /* reused while it lives, also by lookups running side by side */
        res a = {0}, b = {0};
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, on_done, &a), 0);
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, on_done, &b), 0);
        CHECK(run_until(&a.done) && run_until(&b.done));
        CHECK_INT(a.error, 0);
        CHECK_INT(b.error, 0);
        CHECK_INT(imds_tokens_fetched(m), 1);

        /* expired by our clock (TTL 21600 s): a new one before the next GET, no 401 */
        clock_offset += 21600ull * 1000;
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, 0);
        CHECK_INT(imds_tokens_fetched(m), 2);
        CHECK_INT(stat_of("unauth"), unauth0);

        /* the service forgot it (expired on its side): 401, a fresh token, the GET again */
        cmd("revoke");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, 0);
        CHECK_INT(r->addr.ipv4, 0x0a000111);
        CHECK_INT(imds_tokens_fetched(m), 3);
        CHECK_INT(stat_of("unauth"), unauth0 + 1);

        /* 401 even with a fresh token: give up, say so */
        cmd("next " IPV4S1 " status:401 2");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EACCES);
        CHECK(strstr(r->msg, "HTTP 401 with a fresh token") != NULL);
        CHECK(strstr(r->msg, "AQAE") == NULL); /* never the token */
        imds_free(m);

        /* lookups started together before any token: one PUT */
        m = new_imds(base, 3, 30000);
        puts0 = stat_of("puts");
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, on_done, &a), 0);
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, on_done, &b), 0);
        CHECK(run_until(&a.done) && run_until(&b.done));
        CHECK_INT(a.error + b.error, 0);
        CHECK_INT(imds_tokens_fetched(m), 1);
        CHECK_INT(stat_of("puts"), puts0 + 1);
        imds_free(m);

        /* the token PUT itself keeps failing */
        m = new_imds(base, 2, 30000);
        cmd("next /latest/api/token status:500 2");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EIO);
        CHECK_STR(r->msg, "AWS IMDS PUT /latest/api/token: HTTP 500 (after 2 attempts)");
        cmd("next /latest/api/token text:not_a_token 1");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "not a token") != NULL);
        imds_free(m);
}

static void test_aws_replies(void)
{
        /* generous timeouts where a reply comes (a loaded machine, valgrind); a short one
         * only where none ever will */
        imds *m = new_imds(base, 2, 30000), *mt = new_imds(base, 2, 3000);
        res *r;

        r = lookup(m, IMDS_AWS, A9);
        CHECK_INT(r->error, -ENOENT);
        CHECK(strstr(r->msg, "macs/0a:00:00:00:00:09/local-ipv4s: HTTP 404") != NULL);
        r = lookup(m, IMDS_AWS, A4); /* IMDS answers 404 for an ENI without IPv4 */
        CHECK_INT(r->error, -ENOENT);
        cmd("next " IPV4S1 " text: 1");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -ENODATA);
        CHECK(strstr(r->msg, "no private IPv4 address") != NULL);
        r = lookup(m, IMDS_AWS, A2);
        CHECK_INT(r->error, -EDOM);
        CHECK(strstr(r->msg, "address 10.9.0.5 is not a usable host address of its subnet 10.0.2.0/24") != NULL);
        r = lookup(m, IMDS_AWS, A5);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "10.0.5.0/31") != NULL);
        cmd("next " IPV4S1 " html");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "line 1 is not an IPv4 address: \"<html>") != NULL);
        cmd("next " SUBNET1 " text:10.0.1.0/24_and_more");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "subnet-ipv4-cidr-block: not a CIDR block") != NULL);
        cmd("next " IPV4S1 " big");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->msg, "limit of 65536 bytes") != NULL);
        /* a reply that never ends, and one that never starts: the timeout, each attempt */
        cmd("next " IPV4S1 " trickle 2");
        r = lookup(mt, IMDS_AWS, A1);
        CHECK_INT(r->error, -ETIMEDOUT);
        CHECK(strstr(r->msg, "(after 2 attempts)") != NULL);
        cmd("next " SUBNET1 " hang 2");
        r = lookup(mt, IMDS_AWS, A1);
        CHECK_INT(r->error, -ETIMEDOUT);
        CHECK(strstr(r->msg, "subnet-ipv4-cidr-block") != NULL);
        /* a transient 5xx is retried; a lasting one is not forever */
        cmd("next " IPV4S1 " status:503 1");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, 0);
        CHECK_INT(r->addr.ipv4, 0x0a000111);
        cmd("next " IPV4S1 " status:503 2");
        r = lookup(m, IMDS_AWS, A1);
        CHECK_INT(r->error, -EIO);
        CHECK(strstr(r->msg, "HTTP 503 (after 2 attempts)") != NULL);
        imds_free(m);
        imds_free(mt);
}

static const uint8_t Z1[6] = {0x00, 0x0d, 0x3a, 0xf8, 0x06, 0xec}, Z2[6] = {0x00, 0x0d, 0x3a, 0, 0, 2},
                     Z3[6] = {0x00, 0x0d, 0x3a, 0, 0, 3}, Z9[6] = {0x00, 0x0d, 0x3a, 0, 0, 9};

static void test_azure(void)
{
        imds *m = new_imds(base, 2, 30000);
        int rejected0 = stat_of("rejected");

        res *r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, 0);
        CHECK_INT(r->addr.ipv4, 0x0a010004);
        CHECK_INT(r->addr.prefix_len, 24);
        CHECK_INT(r->addr.gateway, 0x0a010001);
        CHECK_INT(stat_of("rejected"), rejected0); /* header and api-version accepted */
        r = lookup(m, IMDS_AZURE, Z2);
        CHECK_INT(r->error, -ENODATA);
        r = lookup(m, IMDS_AZURE, Z3);
        CHECK_INT(r->error, -EDOM);
        r = lookup(m, IMDS_AZURE, Z9);
        CHECK_INT(r->error, -ENOENT);
        CHECK(strstr(r->msg, "no interface with macAddress 000D3A000009 among 3") != NULL);
        cmd("next /metadata/instance/network html");
        r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, -EBADMSG);
        CHECK(strstr(r->msg, "not JSON") != NULL);
        cmd("next /metadata/instance/network truncated");
        r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, -EBADMSG);
        cmd("next /metadata/instance/network big");
        r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, -EFBIG);
        cmd("next /metadata/instance/network status:410 1"); /* "retry after some time" */
        r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, 0);
        cmd("next /metadata/instance/network status:429 2");
        r = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(r->error, -EIO);
        CHECK(strstr(r->msg, "Azure IMDS GET /metadata/instance/network?api-version=" IMDS_AZURE_API_VERSION
                             ": HTTP 429 (after 2 attempts)") != NULL);
        imds_free(m);
}

/* The fake really enforces what the clients must send (else the tests above prove little). */
typedef struct raw {
        bool done;
        long status;
} raw;
static void on_raw(const http_response *r, void *userdata)
{
        raw *w = userdata;
        w->done = true;
        w->status = r->status;
}

static long raw_get(const char *method, const char *path, const char *hdr)
{
        raw w = {0};
        char u[256];
        const char *h[1] = {hdr};
        snprintf(u, sizeof(u), "%s%s", base, path);
        CHECK_INT(http_submit(H, &(http_options){.method = method, .url = u, .headers = h, .n_headers = hdr ? 1 : 0},
                              on_raw, &w, NULL),
                  0);
        CHECK(run_until(&w.done));
        return w.status;
}

static void test_fake_rules(void)
{
        CHECK_INT(raw_get("GET", "/metadata/instance/network?api-version=" IMDS_AZURE_API_VERSION, NULL), 400);
        CHECK_INT(raw_get("GET", "/metadata/instance/network?api-version=" IMDS_AZURE_API_VERSION, "Metadata: false"), 400);
        CHECK_INT(raw_get("GET", "/metadata/instance/network", "Metadata: true"), 400);
        CHECK_INT(raw_get("GET", "/metadata/instance/network?api-version=" IMDS_AZURE_API_VERSION, "Metadata: true"), 200);
        CHECK_INT(raw_get("PUT", "/latest/api/token", NULL), 400);
        CHECK_INT(raw_get("PUT", "/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds: 21601"), 400);
        CHECK_INT(raw_get("PUT", "/latest/api/token", "X-Forwarded-For: 10.0.0.1"), 403);
        CHECK_INT(raw_get("PUT", "/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds: 60"), 200);
        CHECK_INT(raw_get("GET", IPV4S1, NULL), 401);
        CHECK_INT(raw_get("GET", IPV4S1, "X-aws-ec2-metadata-token: forged"), 401);
}

static void test_setup(void)
{
        imds *m = NULL;
        res r = {0};

        unsetenv(IMDS_ENV_URL);
        CHECK_STR(imds_base_url(), IMDS_DEFAULT_BASE_URL);
        setenv(IMDS_ENV_URL, "http://127.0.0.1:1/", 1);
        CHECK_STR(imds_base_url(), "http://127.0.0.1:1/");
        setenv(IMDS_ENV_URL, "", 1);
        CHECK_STR(imds_base_url(), IMDS_DEFAULT_BASE_URL);
        unsetenv(IMDS_ENV_URL);
        CHECK_INT(imds_new(L, H, &(imds_options){.base_url = "https://169.254.169.254"}, &m), -EINVAL);
        CHECK_INT(imds_new(L, H, &(imds_options){.base_url = "http://"}, &m), -EINVAL);
        CHECK_INT(imds_new(L, H, &(imds_options){.base_url = base, .token_ttl_s = 21601}, &m), -EINVAL);
        CHECK(m == NULL);
        m = new_imds(base, 1, 30000);
        CHECK_INT(imds_lookup(m, (imds_cloud)7, A1, on_done, &r), -EINVAL);
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, NULL, &r), -EINVAL);
        imds_free(m);

        /* nothing listens: unreachable, after the retries */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof(a);
        bind(s, (struct sockaddr *)&a, sizeof(a));
        getsockname(s, (struct sockaddr *)&a, &al);
        close(s);
        char dead[64];
        snprintf(dead, sizeof(dead), "http://127.0.0.1:%u", ntohs(a.sin_port));
        m = new_imds(dead, 3, 30000);
        res *x = lookup(m, IMDS_AWS, A1);
        CHECK_INT(x->error, -ECONNREFUSED);
        CHECK(strstr(x->msg, "AWS IMDS PUT /latest/api/token: ") != NULL && strstr(x->msg, "(after 3 attempts)") != NULL);
        x = lookup(m, IMDS_AZURE, Z1);
        CHECK_INT(x->error, -ECONNREFUSED);
        imds_free(m);

        /* freed with lookups in flight: no callback, nothing leaks */
        m = new_imds(base, 1, 60000);
        cmd("next " IPV4S1 " hang 1");
        memset(&r, 0, sizeof(r));
        CHECK_INT(imds_lookup(m, IMDS_AWS, A1, on_done, &r), 0);
        for (int i = 0; i < 20; i++)
                loop_run_once(L, 20);
        imds_free(m);
        for (int i = 0; i < 5; i++)
                loop_run_once(L, 10);
        CHECK_INT(r.calls, 0);
}

int main(void)
{
        char path[512], v[32];

        if (access(PEER_PYTHON, X_OK) != 0)
                TEST_SKIP("%s is missing (the fake IMDS)", PEER_PYTHON);
        signal(SIGPIPE, SIG_IGN);
        const char *argv[] = {peer_source_path("tests/agent/cloud/fake_imds.py", path, sizeof(path)), NULL};
        if (peer_start(&P, argv) < 0)
                return 1;
        snprintf(base, sizeof(base), "http://127.0.0.1:%s", peer_get(&P, "port", v, sizeof(v)));
        CHECK_INT(loop_new(&L), 0);
        CHECK_INT(http_client_new(L, &H), 0);
        test_aws_token();
        test_aws_replies();
        test_azure();
        test_fake_rules();
        test_setup();
        http_client_free(H);
        loop_free(L);
        CHECK_INT(peer_stop(&P), 0);
        return test_done();
}
