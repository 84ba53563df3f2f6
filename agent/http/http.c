/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP client on libcurl's multi interface: curl tells us which sockets to watch
 * (CURLMOPT_SOCKETFUNCTION) and when to wake it (CURLMOPT_TIMERFUNCTION, one timerfd); the
 * loop reports readiness back through curl_multi_socket_action. Owns every easy handle,
 * its header list and its buffers; never logs, never blocks. */
#include "http.h"

#include "array.h"
#include "cleanup.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct http_sock {
        struct http_sock *next;
        int fd;
        uint32_t events;
} http_sock;

struct http_request {
        http_request *next, *prev;
        http_client *client;
        CURL *easy;
        struct curl_slist *headers;
        http_done_fn fn;
        void *userdata;
        char *body;
        size_t body_len, body_cap, max_body;
        char *hdr;
        size_t hdr_len, hdr_cap;
        bool body_too_big, hdr_too_big;
        bool done;      /* finished: in a completion batch, owned by process_done() */
        bool cancelled; /* cancelled while in a completion batch */
        CURLcode result;
        char errbuf[CURL_ERROR_SIZE];
};

struct http_client {
        loop *loop;
        CURLM *multi;
        int timer_fd;
        http_request *requests; /* in flight */
        size_t n_requests;
        http_sock *socks;
        unsigned processing; /* > 0 while completion callbacks run */
        bool doomed;         /* http_client_free() called during processing */
        bool curl_global;
};

static void client_destroy(http_client *c);

/* ---- buffers ---------------------------------------------------------------------- */

static int buf_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n, size_t limit)
{
        /* keeps room for one NUL after the data (two for the header list's end) */
        if (n > limit || *len > limit - n)
                return -EFBIG;
        int r = ARRAY_GROW(*buf, *cap, *len + n + 2, 1024);
        if (r < 0)
                return r;
        memcpy(*buf + *len, p, n);
        *len += n;
        return 0;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        http_request *r = userdata;
        size_t n = size * nmemb;
        int k = buf_append(&r->body, &r->body_len, &r->body_cap, ptr, n, r->max_body);

        if (k == -EFBIG)
                r->body_too_big = true;
        return k < 0 ? 0 : n; /* a short count aborts the transfer */
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        http_request *r = userdata;
        size_t n = size * nmemb, len = n;

        if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0)
                r->hdr_len = 0; /* a new response (after 100 Continue): keep only the last */
        while (len > 0 && (ptr[len - 1] == '\n' || ptr[len - 1] == '\r'))
                len--;
        if (len == 0)
                return n; /* the blank line ending the headers */
        if (buf_append(&r->hdr, &r->hdr_len, &r->hdr_cap, ptr, len, HTTP_MAX_HEADER_BYTES - 1) < 0 ||
            buf_append(&r->hdr, &r->hdr_len, &r->hdr_cap, "", 1, HTTP_MAX_HEADER_BYTES - 1) < 0) {
                r->hdr_too_big = true;
                return 0;
        }
        return n;
}

/* ---- requests --------------------------------------------------------------------- */

static void request_free(http_request *r)
{
        if (!r)
                return;
        if (r->easy)
                curl_easy_cleanup(r->easy);
        /* the header lines may carry a credential (Authorization: Bearer …): wiped */
        for (struct curl_slist *h = r->headers; h; h = h->next)
                if (h->data)
                        explicit_bzero(h->data, strlen(h->data));
        curl_slist_free_all(r->headers);
        free(r->body);
        free(r->hdr);
        free(r);
}

static void request_unlink(http_client *c, http_request *r)
{
        if (r->prev)
                r->prev->next = r->next;
        else
                c->requests = r->next;
        if (r->next)
                r->next->prev = r->prev;
        r->next = r->prev = NULL;
        c->n_requests--;
}

static int map_error(const http_request *r, char *text, size_t len)
{
        const char *detail = r->errbuf[0] ? r->errbuf : curl_easy_strerror(r->result);

        if (r->body_too_big || r->result == CURLE_FILESIZE_EXCEEDED) {
                snprintf(text, len, "response body larger than the limit of %zu bytes", r->max_body);
                return -EFBIG;
        }
        if (r->hdr_too_big) {
                snprintf(text, len, "response headers larger than the limit of %u bytes",
                         HTTP_MAX_HEADER_BYTES);
                return -EFBIG;
        }
        snprintf(text, len, "%s", detail);
        switch (r->result) {
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
                return -EHOSTUNREACH;
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
                return -ECONNRESET;
        case CURLE_PEER_FAILED_VERIFICATION:
                return -EKEYREJECTED;
        case CURLE_SSL_CACERT_BADFILE:
                return -ENOKEY;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_HTTP2:
        case CURLE_BAD_CONTENT_ENCODING:
                return -EPROTO;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL:
                return -EINVAL;
        default:
                return -EIO;
        }
}

static void request_finish(http_request *r)
{
        char text[HTTP_ERR_LEN] = "";
        long status = 0;
        http_response resp = {0};

        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        resp.error = r->result == CURLE_OK && !r->body_too_big && !r->hdr_too_big ? 0 : map_error(r, text, sizeof(text));
        resp.error_text = text;
        resp.status = status;
        /* buf_append always leaves room for the terminators */
        if (r->body)
                r->body[r->body_len] = '\0';
        resp.body = r->body ? r->body : "";
        resp.body_len = r->body_len;
        if (r->hdr)
                r->hdr[r->hdr_len] = '\0'; /* the empty string ending the list */
        resp.headers = r->hdr ? r->hdr : "\0";
        r->fn(&resp, r->userdata);
}

/* Hand every finished transfer to its callback. First take them all out of curl (a
 * callback may cancel another finished request or free the client), then call. */
static void process_done(http_client *c)
{
        http_request *batch = NULL, **tail = &batch;
        CURLMsg *msg;
        int left;

        while ((msg = curl_multi_info_read(c->multi, &left))) {
                http_request *r = NULL;
                if (msg->msg != CURLMSG_DONE)
                        continue;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
                r->result = msg->data.result;
                curl_multi_remove_handle(c->multi, r->easy);
                request_unlink(c, r);
                r->done = true;
                *tail = r;
                tail = &r->next;
        }
        c->processing++;
        while (batch) {
                http_request *r = batch;
                batch = r->next;
                r->next = NULL;
                if (!r->cancelled && !c->doomed)
                        request_finish(r);
                request_free(r);
        }
        c->processing--;
        if (c->doomed && c->processing == 0)
                client_destroy(c);
}

/* ---- loop glue -------------------------------------------------------------------- */

static int on_sock_ready(loop *l, int fd, uint32_t events, void *userdata)
{
        http_client *c = userdata;
        int flags = 0, running;

        (void)l;
        if (events & (EPOLLIN | EPOLLHUP))
                flags |= CURL_CSELECT_IN;
        if (events & EPOLLOUT)
                flags |= CURL_CSELECT_OUT;
        if (events & EPOLLERR)
                flags |= CURL_CSELECT_ERR;
        curl_multi_socket_action(c->multi, fd, flags, &running);
        process_done(c);
        return 0;
}

static int on_timer(loop *l, void *userdata)
{
        http_client *c = userdata;
        int running;

        (void)l;
        curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        process_done(c);
        return 0;
}

static http_sock *sock_find(http_client *c, int fd, http_sock ***ret_link)
{
        for (http_sock **p = &c->socks; *p; p = &(*p)->next)
                if ((*p)->fd == fd) {
                        if (ret_link)
                                *ret_link = p;
                        return *p;
                }
        return NULL;
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
        http_client *c = userp;
        http_sock **link = NULL, *s = sock_find(c, fd, &link);
        uint32_t events = 0;

        (void)easy;
        (void)socketp;
        if (what == CURL_POLL_REMOVE) {
                if (s) {
                        loop_remove_fd(c->loop, fd);
                        *link = s->next;
                        free(s);
                }
                return 0;
        }
        if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
                events |= EPOLLIN;
        if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
                events |= EPOLLOUT;
        if (s && s->events == events)
                return 0;
        if (!s) {
                s = calloc(1, sizeof(*s));
                if (!s)
                        return -1;
                s->fd = fd;
                s->next = c->socks;
                c->socks = s;
        } else {
                loop_remove_fd(c->loop, fd); /* the loop has no "modify": re-add */
        }
        s->events = events;
        if (loop_add_fd(c->loop, fd, events, on_sock_ready, c) < 0) {
                s->events = 0;
                return -1;
        }
        return 0;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
        http_client *c = userp;

        (void)multi;
        if (timeout_ms < 0)
                return loop_timer_set(c->loop, c->timer_fd, 0, 0) < 0 ? -1 : 0;
        /* 0 means "now": the timerfd cannot fire at 0, 1 ms is the soonest it can */
        return loop_timer_set(c->loop, c->timer_fd, timeout_ms > 0 ? (uint64_t)timeout_ms : 1, 0) < 0 ? -1 : 0;
}

/* ---- client ----------------------------------------------------------------------- */

int http_client_new(loop *l, http_client **ret)
{
        http_client *c;
        int r;

        if (!l || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->loop = l;
        c->timer_fd = -1;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                free(c);
                return -ENOMEM;
        }
        c->curl_global = true;
        c->multi = curl_multi_init();
        if (!c->multi) {
                client_destroy(c);
                return -ENOMEM;
        }
        r = loop_add_timer(l, 0, 0, on_timer, c, &c->timer_fd);
        if (r < 0) {
                client_destroy(c);
                return r;
        }
        r = loop_timer_set(l, c->timer_fd, 0, 0);
        if (r < 0) {
                client_destroy(c);
                return r;
        }
        curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
        curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
        curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
        curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
        /* a burst of requests (DRA prepares: one claim read each) must not cost a
         * connection, an fd and a TLS session apiece, nor leave hundreds idle after */
        curl_multi_setopt(c->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)HTTP_MAX_CONNECTIONS);
        curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)HTTP_MAX_HOST_CONNECTIONS);
        curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)HTTP_MAX_IDLE_CONNECTIONS);
        *ret = c;
        return 0;
}

static void client_destroy(http_client *c)
{
        while (c->requests) {
                http_request *r = c->requests;
                curl_multi_remove_handle(c->multi, r->easy);
                request_unlink(c, r);
                request_free(r);
        }
        if (c->multi)
                curl_multi_cleanup(c->multi);
        while (c->socks) {
                http_sock *s = c->socks;
                c->socks = s->next;
                loop_remove_fd(c->loop, s->fd);
                free(s);
        }
        if (c->timer_fd >= 0)
                loop_remove_timer(c->loop, c->timer_fd);
        if (c->curl_global)
                curl_global_cleanup();
        free(c);
}

void http_client_free(http_client *c)
{
        if (!c)
                return;
        if (c->processing > 0) {
                c->doomed = true; /* process_done() finishes the job */
                return;
        }
        client_destroy(c);
}

size_t http_pending(const http_client *c) { return c ? c->n_requests : 0; }

static bool header_ok(const char *h)
{
        const char *colon = strchr(h, ':');

        if (!colon || colon == h)
                return false;
        for (const char *p = h; *p; p++)
                if (*p == '\r' || *p == '\n')
                        return false;
        return true;
}

static bool has_header(const http_options *o, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < o->n_headers; i++)
                if (strncasecmp(o->headers[i], name, n) == 0 && o->headers[i][n] == ':')
                        return true;
        return false;
}

static int validate(const http_options *o, const char **ret_method)
{
        static const char *const methods[] = {"GET", "PUT", "POST", "PATCH", "DELETE"};
        const char *m = o->method ? o->method : "GET";
        bool known = false, https;

        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                known = known || strcmp(m, methods[i]) == 0;
        if (!known || !o->url)
                return -EINVAL;
        https = strncmp(o->url, "https://", 8) == 0;
        if (!https && strncmp(o->url, "http://", 7) != 0)
                return -EINVAL;
        if (https && !o->ca_file && !(o->ca_pem && o->ca_pem_len > 0))
                return -EINVAL;
        if (o->n_headers > HTTP_MAX_HEADERS || (o->n_headers && !o->headers))
                return -EINVAL;
        for (size_t i = 0; i < o->n_headers; i++)
                if (!o->headers[i] || !header_ok(o->headers[i]))
                        return -EINVAL;
        if (o->max_body > HTTP_MAX_BODY_LIMIT || o->timeout_ms > HTTP_MAX_TIMEOUT_MS ||
            o->connect_timeout_ms > HTTP_MAX_TIMEOUT_MS)
                return -EINVAL;
        if (o->body_len && !o->body)
                return -EINVAL;
        *ret_method = m;
        return 0;
}

static int slist_add(struct curl_slist **l, const char *s)
{
        struct curl_slist *n = curl_slist_append(*l, s);
        if (!n)
                return -ENOMEM;
        *l = n;
        return 0;
}

#define SETOPT(e, opt, val)                                                                \
        do {                                                                               \
                if (curl_easy_setopt((e), (opt), (val)) != CURLE_OK)                       \
                        return -EINVAL;                                                    \
        } while (0)

static int setup_easy(http_request *r, const http_options *o, const char *method)
{
        CURL *e = r->easy;
        bool https = strncmp(o->url, "https://", 8) == 0;
        bool with_body = o->body || strcmp(method, "GET") != 0;
        int k;

        for (size_t i = 0; i < o->n_headers; i++)
                if ((k = slist_add(&r->headers, o->headers[i])) < 0)
                        return k;
        /* no "Expect: 100-continue" round trip; no implicit form content type */
        if ((k = slist_add(&r->headers, "Expect:")) < 0)
                return k;
        if (with_body && !has_header(o, "Content-Type") && (k = slist_add(&r->headers, "Content-Type:")) < 0)
                return k;

        SETOPT(e, CURLOPT_URL, o->url);
        SETOPT(e, CURLOPT_PRIVATE, r);
        SETOPT(e, CURLOPT_NOSIGNAL, 1L);
        SETOPT(e, CURLOPT_PROTOCOLS_STR, "http,https");
        SETOPT(e, CURLOPT_FOLLOWLOCATION, 0L);
        SETOPT(e, CURLOPT_PROXY, "");
        SETOPT(e, CURLOPT_USERAGENT, "spinlane");
        SETOPT(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_ms ? o->connect_timeout_ms : HTTP_DEFAULT_CONNECT_MS));
        SETOPT(e, CURLOPT_TIMEOUT_MS, (long)(o->timeout_ms ? o->timeout_ms : HTTP_DEFAULT_TOTAL_MS));
        SETOPT(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_body);
        SETOPT(e, CURLOPT_WRITEFUNCTION, on_write);
        SETOPT(e, CURLOPT_WRITEDATA, r);
        SETOPT(e, CURLOPT_HEADERFUNCTION, on_header);
        SETOPT(e, CURLOPT_HEADERDATA, r);
        SETOPT(e, CURLOPT_ERRORBUFFER, r->errbuf);
        SETOPT(e, CURLOPT_HTTPHEADER, r->headers);
        SETOPT(e, CURLOPT_ACCEPT_ENCODING, NULL);
        if (strcmp(method, "GET") == 0 && !o->body) {
                SETOPT(e, CURLOPT_HTTPGET, 1L);
        } else {
                SETOPT(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
                SETOPT(e, CURLOPT_COPYPOSTFIELDS, o->body ? (const char *)o->body : "");
                if (strcmp(method, "POST") != 0)
                        SETOPT(e, CURLOPT_CUSTOMREQUEST, method);
        }
        if (https) {
                SETOPT(e, CURLOPT_SSL_VERIFYPEER, 1L);
                SETOPT(e, CURLOPT_SSL_VERIFYHOST, 2L);
                SETOPT(e, CURLOPT_CAPATH, NULL); /* never the system store */
                if (o->ca_pem && o->ca_pem_len > 0) {
                        struct curl_blob blob = {.data = (void *)o->ca_pem, .len = o->ca_pem_len,
                                                 .flags = CURL_BLOB_COPY};
                        SETOPT(e, CURLOPT_CAINFO, NULL);
                        SETOPT(e, CURLOPT_CAINFO_BLOB, &blob);
                } else {
                        SETOPT(e, CURLOPT_CAINFO, o->ca_file);
                }
        }
        return 0;
}

int http_submit(http_client *c, const http_options *o, http_done_fn fn, void *userdata,
                http_request **ret_req)
{
        const char *method = NULL;
        http_request *r;
        int k;

        if (!c || !o || !fn || c->doomed)
                return -EINVAL;
        k = validate(o, &method);
        if (k < 0)
                return k;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->client = c;
        r->fn = fn;
        r->userdata = userdata;
        r->max_body = o->max_body ? o->max_body : HTTP_DEFAULT_MAX_BODY;
        r->easy = curl_easy_init();
        if (!r->easy) {
                request_free(r);
                return -ENOMEM;
        }
        k = setup_easy(r, o, method);
        if (k < 0) {
                request_free(r);
                return k;
        }
        r->next = c->requests;
        if (c->requests)
                c->requests->prev = r;
        c->requests = r;
        c->n_requests++;
        if (curl_multi_add_handle(c->multi, r->easy) != CURLM_OK) {
                request_unlink(c, r);
                request_free(r);
                return -ENOMEM;
        }
        if (ret_req)
                *ret_req = r;
        return 0;
}

void http_cancel(http_client *c, http_request *r)
{
        if (!c || !r)
                return;
        if (r->done) { /* already out of curl, waiting in a completion batch */
                r->cancelled = true;
                return;
        }
        curl_multi_remove_handle(c->multi, r->easy);
        request_unlink(c, r);
        request_free(r);
}

const char *http_response_header(const http_response *r, const char *name)
{
        size_t n = strlen(name);

        for (const char *h = r->headers; h && *h; h += strlen(h) + 1)
                if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
                        const char *v = h + n + 1;
                        while (*v == ' ' || *v == '\t')
                                v++;
                        return v;
                }
        return NULL;
}
