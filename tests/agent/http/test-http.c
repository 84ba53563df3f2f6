/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP client against real peers on loopback (tests/agent/http/http_peer.py: Python
 * http.server and ssl with a CA and certificates made by openssl at test time): methods,
 * headers, bodies, status codes, the body and header bounds, timeouts, a peer closing
 * early, refused connections, TLS with the right CA (file and PEM), the wrong CA and the
 * wrong name, option validation, cancellation, freeing the client from a callback, and
 * that the loop keeps running while requests are in flight. */
#include "http.h"
#include "loop.h"

#include "peer.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static loop *L;
static http_client *C;
static peer P;
static char http_base[64], tls_base[64], badca_base[64], badname_base[64], ca_file[512];

typedef struct result {
        bool done;
        int calls;
        int error;
        long status;
        char body[8192];
        size_t body_len;
        char error_text[HTTP_ERR_LEN];
        char reply_hdr[64];
        int seq; /* completion order */
} result;

static int completions;

static void on_done(const http_response *r, void *userdata)
{
        result *res = userdata;
        const char *h = http_response_header(r, "x-reply");

        res->done = true;
        res->calls++;
        res->error = r->error;
        res->status = r->status;
        res->body_len = r->body_len;
        snprintf(res->body, sizeof(res->body), "%s", r->body);
        snprintf(res->error_text, sizeof(res->error_text), "%s", r->error_text);
        snprintf(res->reply_hdr, sizeof(res->reply_hdr), "%s", h ? h : "");
        res->seq = ++completions;
}

/* Run the loop until *flag, with a generous bound so a bug fails instead of hanging. */
static bool run_until(bool *flag)
{
        uint64_t deadline = loop_now_ms() + 120000;
        while (!*flag && loop_now_ms() < deadline)
                if (loop_run_once(L, 1000) < 0)
                        return false;
        return *flag;
}

static void url(char *buf, size_t len, const char *base, const char *path)
{
        snprintf(buf, len, "%s%s", base, path);
}

static result *request(const http_options *o)
{
        static result res;
        memset(&res, 0, sizeof(res));
        int k = http_submit(C, o, on_done, &res, NULL);
        CHECK_INT(k, 0);
        if (k == 0)
                CHECK(run_until(&res.done));
        return &res;
}

static void test_basic(void)
{
        char u[128];
        const char *hdrs[] = {"X-Test: one", "Accept: application/json"};
        url(u, sizeof(u), http_base, "/echo");

        result *r = request(&(http_options){.url = u, .headers = hdrs, .n_headers = 2});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 200);
        CHECK(strstr(r->body, "\"method\": \"GET\"") != NULL);
        CHECK(strstr(r->body, "\"x-test\": \"one\"") != NULL);
        CHECK(strstr(r->body, "\"accept\": \"application/json\"") != NULL);
        CHECK(strstr(r->body, "expect") == NULL);
        CHECK(strstr(r->body, "proxy") == NULL);
        CHECK_STR(r->reply_hdr, "abc");
        CHECK_STR(r->error_text, "");

        const char *ct[] = {"Content-Type: application/merge-patch+json"};
        r = request(&(http_options){.method = "PATCH", .url = u, .headers = ct, .n_headers = 1,
                                    .body = "{\"a\":1}", .body_len = 7});
        CHECK_INT(r->status, 200);
        CHECK(strstr(r->body, "\"method\": \"PATCH\"") != NULL);
        CHECK(strstr(r->body, "\"content-type\": \"application/merge-patch+json\"") != NULL);
        CHECK(strstr(r->body, "\"body\": \"{\\\"a\\\":1}\"") != NULL);
        CHECK(strstr(r->body, "expect") == NULL);

        /* a body without a Content-Type goes without one (no form default) */
        r = request(&(http_options){.method = "POST", .url = u, .body = "xyz", .body_len = 3});
        CHECK(strstr(r->body, "\"method\": \"POST\"") != NULL);
        CHECK(strstr(r->body, "content-type") == NULL);
        CHECK(strstr(r->body, "\"body\": \"xyz\"") != NULL);

        /* the IMDSv2 token call: PUT, no body, Content-Length 0 */
        const char *ttl[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600"};
        r = request(&(http_options){.method = "PUT", .url = u, .headers = ttl, .n_headers = 1});
        CHECK(strstr(r->body, "\"method\": \"PUT\"") != NULL);
        CHECK(strstr(r->body, "\"content-length\": \"0\"") != NULL);
        CHECK(strstr(r->body, "\"x-aws-ec2-metadata-token-ttl-seconds\": \"21600\"") != NULL);

        url(u, sizeof(u), http_base, "/status/404");
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 404);
        CHECK_STR(r->body, "status body");
        url(u, sizeof(u), http_base, "/status/503");
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 503);
}

static void test_limits(void)
{
        char u[128];

        url(u, sizeof(u), http_base, "/big?n=1000");
        result *r = request(&(http_options){.url = u, .max_body = 1000});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->body_len, 1000);

        url(u, sizeof(u), http_base, "/big?n=1001");
        r = request(&(http_options){.url = u, .max_body = 1000});
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->error_text, "limit of 1000 bytes") != NULL);

        /* no Content-Length: aborted while receiving */
        url(u, sizeof(u), http_base, "/chunked?n=200000");
        r = request(&(http_options){.url = u, .max_body = 65536});
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->error_text, "limit of 65536 bytes") != NULL);
        CHECK(r->body_len <= 65536);

        url(u, sizeof(u), http_base, "/chunked?n=5000");
        r = request(&(http_options){.url = u, .max_body = 65536});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->body_len, 5000);

        /* the default bound (1 MiB) holds for a 10 MiB body */
        url(u, sizeof(u), http_base, "/big?n=10485760");
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->error_text, "limit of 1048576 bytes") != NULL);

        url(u, sizeof(u), http_base, "/bigheaders");
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, -EFBIG);
        CHECK(strstr(r->error_text, "headers larger than the limit") != NULL);
}

static void test_errors(void)
{
        char u[128];

        /* a server that never answers: the total timeout ends it */
        url(u, sizeof(u), http_base, "/hang");
        result *r = request(&(http_options){.url = u, .timeout_ms = 300});
        CHECK_INT(r->error, -ETIMEDOUT);
        CHECK(r->error_text[0] != '\0');

        /* promises 1000 bytes, sends 10, closes */
        url(u, sizeof(u), http_base, "/close");
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, -ECONNRESET);

        /* nobody listens on a port we bound and closed */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof(a);
        bind(s, (struct sockaddr *)&a, sizeof(a));
        getsockname(s, (struct sockaddr *)&a, &al);
        close(s);
        snprintf(u, sizeof(u), "http://127.0.0.1:%u/", ntohs(a.sin_port));
        r = request(&(http_options){.url = u});
        CHECK_INT(r->error, -ECONNREFUSED);
        CHECK_INT(r->status, 0);
}

static void test_tls(void)
{
        char u[128], pem[8192];
        FILE *f = fopen(ca_file, "r");
        size_t pem_len = f ? fread(pem, 1, sizeof(pem), f) : 0;
        if (f)
                fclose(f);
        CHECK(pem_len > 0);

        url(u, sizeof(u), tls_base, "/echo");
        result *r = request(&(http_options){.url = u, .ca_file = ca_file});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 200);

        r = request(&(http_options){.url = u, .ca_pem = pem, .ca_pem_len = pem_len});
        CHECK_INT(r->error, 0);
        CHECK_INT(r->status, 200);

        /* signed by another CA */
        url(u, sizeof(u), badca_base, "/echo");
        r = request(&(http_options){.url = u, .ca_file = ca_file});
        CHECK_INT(r->error, -EKEYREJECTED);
        CHECK_INT(r->status, 0);
        r = request(&(http_options){.url = u, .ca_pem = pem, .ca_pem_len = pem_len});
        CHECK_INT(r->error, -EKEYREJECTED);

        /* right CA, wrong name */
        url(u, sizeof(u), badname_base, "/echo");
        r = request(&(http_options){.url = u, .ca_file = ca_file});
        CHECK_INT(r->error, -EKEYREJECTED);

        /* an unreadable CA file */
        url(u, sizeof(u), tls_base, "/echo");
        r = request(&(http_options){.url = u, .ca_file = "/nonexistent/ca.pem"});
        CHECK_INT(r->error, -ENOKEY);

        /* plain HTTP spoken to a TLS port */
        snprintf(u, sizeof(u), "http://%s/echo", tls_base + strlen("https://"));
        r = request(&(http_options){.url = u, .timeout_ms = 5000});
        CHECK(r->error < 0);
}

static void test_validation(void)
{
        result res = {0};
        char u[128];
        const char *crlf[] = {"X-Evil: a\r\nX-Injected: b"};
        const char *nocolon[] = {"NoColon"};

        url(u, sizeof(u), tls_base, "/echo");
        CHECK_INT(http_submit(C, &(http_options){.url = u}, on_done, &res, NULL), -EINVAL); /* https without CA */
        url(u, sizeof(u), http_base, "/echo");
        CHECK_INT(http_submit(C, &(http_options){.url = u, .headers = crlf, .n_headers = 1}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = u, .headers = nocolon, .n_headers = 1}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = u, .method = "TRACE"}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = "ftp://127.0.0.1/x"}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = "file:///etc/passwd"}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = NULL}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = u, .max_body = HTTP_MAX_BODY_LIMIT + 1}, on_done, &res, NULL), -EINVAL);
        CHECK_INT(http_submit(C, &(http_options){.url = u}, NULL, &res, NULL), -EINVAL);
        CHECK_INT(http_pending(C), 0);
        CHECK(!res.done);
}

/* ---- concurrency: the loop runs while requests wait ---------------------------------- */

typedef struct ctl {
        int got[8];
        int n_got;
        bool release_on_got; /* release each wait as soon as the peer reports it */
        http_request *cancel_me;
        int cancel_id;
} ctl;

static int on_peer_line(loop *l, int fd, uint32_t events, void *userdata)
{
        ctl *c = userdata;
        char line[256];
        (void)l;
        (void)fd;
        (void)events;
        while (peer_read_line(&P, line, sizeof(line), 0) == 1) {
                int id;
                if (sscanf(line, "got %d", &id) != 1)
                        continue;
                if (c->n_got < 8)
                        c->got[c->n_got++] = id;
                if (c->cancel_me && id == c->cancel_id) {
                        http_cancel(C, c->cancel_me);
                        c->cancel_me = NULL;
                        char cmd[32];
                        snprintf(cmd, sizeof(cmd), "release %d", id);
                        peer_send(&P, cmd);
                }
        }
        return 0;
}

static void test_concurrent(void)
{
        ctl c = {0};
        result r1 = {0}, r2 = {0}, r3 = {0};
        char u1[128], u2[128], u3[128];
        bool both_got = false;

        CHECK_INT(loop_add_fd(L, P.out_fd, EPOLLIN, on_peer_line, &c), 0);
        url(u1, sizeof(u1), http_base, "/wait/1");
        url(u2, sizeof(u2), http_base, "/wait/2");
        CHECK_INT(http_submit(C, &(http_options){.url = u1, .timeout_ms = 120000}, on_done, &r1, NULL), 0);
        CHECK_INT(http_submit(C, &(http_options){.url = u2, .timeout_ms = 120000}, on_done, &r2, NULL), 0);
        CHECK_INT(http_pending(C), 2);
        /* both requests reach the peer while the loop keeps dispatching (here: the peer's
         * own "got" lines, read by a loop callback) */
        uint64_t deadline = loop_now_ms() + 120000;
        while (c.n_got < 2 && loop_now_ms() < deadline)
                loop_run_once(L, 1000);
        both_got = c.n_got == 2;
        CHECK(both_got);
        CHECK(!r1.done && !r2.done);
        /* release in reverse order: they complete in release order */
        peer_send(&P, "release 2");
        CHECK(run_until(&r2.done));
        CHECK(!r1.done);
        peer_send(&P, "release 1");
        CHECK(run_until(&r1.done));
        CHECK_STR(r1.body, "released 1");
        CHECK_STR(r2.body, "released 2");
        CHECK(r2.seq < r1.seq);

        /* cancel a request while the peer holds it: its callback never runs */
        http_request *h = NULL;
        url(u3, sizeof(u3), http_base, "/wait/3");
        CHECK_INT(http_submit(C, &(http_options){.url = u3, .timeout_ms = 120000}, on_done, &r3, &h), 0);
        c.cancel_me = h;
        c.cancel_id = 3;
        deadline = loop_now_ms() + 120000;
        while (c.cancel_me && loop_now_ms() < deadline)
                loop_run_once(L, 1000);
        CHECK(c.cancel_me == NULL);
        CHECK_INT(http_pending(C), 0);
        /* one more round trip so a stray completion would have been seen */
        char u[128];
        url(u, sizeof(u), http_base, "/echo");
        result *r = request(&(http_options){.url = u});
        CHECK_INT(r->status, 200);
        CHECK_INT(r3.calls, 0);
        loop_remove_fd(L, P.out_fd);
}

/* A callback that frees the client: the other finished request's callback is not called,
 * nothing leaks (ASan/valgrind). */
static http_client *C2;
static int free_calls;
static void on_done_free(const http_response *r, void *userdata)
{
        (void)r;
        (void)userdata;
        free_calls++;
        http_client_free(C2);
        C2 = NULL;
}

static void test_free_in_callback(void)
{
        char u[128];
        url(u, sizeof(u), http_base, "/echo");
        CHECK_INT(http_client_new(L, &C2), 0);
        CHECK_INT(http_submit(C2, &(http_options){.url = u}, on_done_free, NULL, NULL), 0);
        CHECK_INT(http_submit(C2, &(http_options){.url = u}, on_done_free, NULL, NULL), 0);
        uint64_t deadline = loop_now_ms() + 120000;
        while (C2 && loop_now_ms() < deadline)
                loop_run_once(L, 1000);
        CHECK(C2 == NULL);
        CHECK_INT(free_calls, 1);

        /* freeing with requests in flight cancels them */
        CHECK_INT(http_client_new(L, &C2), 0);
        CHECK_INT(http_submit(C2, &(http_options){.url = u}, on_done_free, NULL, NULL), 0);
        http_client_free(C2);
        C2 = NULL;
        for (int i = 0; i < 5; i++)
                loop_run_once(L, 10);
        CHECK_INT(free_calls, 1);
}

int main(void)
{
        char path[512], v[64];

        if (access(PEER_PYTHON, X_OK) != 0)
                TEST_SKIP("%s is missing (the HTTP peer)", PEER_PYTHON);
        if (!peer_have("openssl"))
                TEST_SKIP("the openssl command is missing (test certificates)");
        signal(SIGPIPE, SIG_IGN);
        const char *argv[] = {peer_source_path("tests/agent/http/http_peer.py", path, sizeof(path)), NULL};
        if (peer_start(&P, argv) < 0) {
                fprintf(stderr, "cannot start the HTTP peer\n");
                return 1;
        }
        snprintf(http_base, sizeof(http_base), "http://127.0.0.1:%s", peer_get(&P, "http", v, sizeof(v)));
        snprintf(tls_base, sizeof(tls_base), "https://127.0.0.1:%s", peer_get(&P, "tls", v, sizeof(v)));
        snprintf(badca_base, sizeof(badca_base), "https://127.0.0.1:%s", peer_get(&P, "badca", v, sizeof(v)));
        snprintf(badname_base, sizeof(badname_base), "https://127.0.0.1:%s", peer_get(&P, "badname", v, sizeof(v)));
        char dir[256];
        snprintf(ca_file, sizeof(ca_file), "%s/ca.pem", peer_get(&P, "dir", dir, sizeof(dir)));

        CHECK_INT(loop_new(&L), 0);
        CHECK_INT(http_client_new(L, &C), 0);
        test_basic();
        test_limits();
        test_errors();
        test_tls();
        test_validation();
        test_concurrent();
        test_free_in_callback();
        http_client_free(C);
        loop_free(L);
        CHECK_INT(peer_stop(&P), 0);
        return test_done();
}
