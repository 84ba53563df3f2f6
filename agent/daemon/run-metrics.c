/* SPDX-License-Identifier: Apache-2.0 */
/* /metrics, /healthz, /readyz on libmicrohttpd driven by the daemon's loop (its epoll fd
 * is watched by the loop; MHD_run is called when it is readable and when MHD's own timeout
 * says, so idle and half-sent connections time out). Never logs: the library's own
 * messages are off (no MHD_USE_ERROR_LOG). */
#include "run-metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct run_metrics {
        loop *l;
        struct MHD_Daemon *d;
        int epoll_fd;
        int timer_fd;
        unsigned port;
        run_metrics_ops ops;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype, char *body, size_t len,
                             bool owned)
{
        struct MHD_Response *r = owned ? MHD_create_response_from_buffer_with_free_callback(len, body, free)
                                       : MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
        if (!r) {
                if (owned)
                        free(body);
                return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result q = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return q;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
        static char ok[] = "ok\n", not_found[] = "not found: try /metrics, /healthz or /readyz\n",
                    not_allowed[] = "only GET and HEAD\n", failed[] = "metrics unavailable\n";
        run_metrics *m = cls;
        const char *text = "text/plain; charset=utf-8";
        (void)version, (void)upload_data, (void)req_cls;

        *upload_data_size = 0; /* any body is ignored: the answer goes now */
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, not_allowed, sizeof(not_allowed) - 1, false);
        if (strcmp(url, "/healthz") == 0) /* answered from the loop: the loop is alive */
                return reply(c, MHD_HTTP_OK, text, ok, sizeof(ok) - 1, false);
        if (strcmp(url, "/readyz") == 0) {
                char why[256];
                if (m->ops.ready(m->ops.userdata, why, sizeof(why)))
                        return reply(c, MHD_HTTP_OK, text, ok, sizeof(ok) - 1, false);
                size_t n = strlen(why);
                char *body = malloc(n + 2);
                if (!body)
                        return MHD_NO;
                memcpy(body, why, n);
                body[n] = '\n';
                body[n + 1] = '\0';
                return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, body, n + 1, true);
        }
        if (strcmp(url, "/metrics") == 0) {
                char *body = NULL;
                size_t len = 0;
                if (m->ops.render(m->ops.userdata, &body, &len) < 0)
                        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, failed, sizeof(failed) - 1, false);
                return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len, true);
        }
        return reply(c, MHD_HTTP_NOT_FOUND, text, not_found, sizeof(not_found) - 1, false);
}

/* After every run: wake again when MHD's timeout says (idle connections, pending data). */
static void rearm(run_metrics *m)
{
        MHD_UNSIGNED_LONG_LONG t = 0;
        if (MHD_get_timeout(m->d, &t) == MHD_YES)
                (void)loop_timer_set(m->l, m->timer_fd, t ? (uint64_t)t : 1, 0);
        else
                (void)loop_timer_set(m->l, m->timer_fd, 0, 0);
}

static int on_epoll(loop *l, int fd, uint32_t events, void *ud)
{
        run_metrics *m = ud;
        (void)l, (void)fd, (void)events;
        MHD_run(m->d);
        rearm(m);
        return 0;
}

static int on_timer(loop *l, void *ud)
{
        run_metrics *m = ud;
        (void)l;
        MHD_run(m->d);
        rearm(m);
        return 0;
}

static int listen_socket(const report_bind *b, unsigned *ret_port, char *err, size_t err_size)
{
        struct sockaddr_storage ss;
        socklen_t sl;
        int fam = b->any ? AF_INET6 : b->family, one = 1, zero = 0, fd, r;
        char where[INET6_ADDRSTRLEN + 16];

        for (;;) {
                memset(&ss, 0, sizeof(ss));
                if (fam == AF_INET6) {
                        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                        a->sin6_family = AF_INET6;
                        a->sin6_port = htons(b->port);
                        if (!b->any)
                                memcpy(&a->sin6_addr, b->addr, 16);
                        sl = sizeof(*a);
                } else {
                        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                        a->sin_family = AF_INET;
                        a->sin_port = htons(b->port);
                        if (!b->any)
                                memcpy(&a->sin_addr, b->addr, 4);
                        sl = sizeof(*a);
                }
                fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0 && b->any && fam == AF_INET6 && errno == EAFNOSUPPORT) {
                        fam = AF_INET; /* no IPv6 in this kernel: every IPv4 address */
                        continue;
                }
                break;
        }
        if (b->any)
                snprintf(where, sizeof(where), ":%u", b->port);
        else if (fam == AF_INET6) {
                char a[INET6_ADDRSTRLEN];
                inet_ntop(AF_INET6, b->addr, a, sizeof(a));
                snprintf(where, sizeof(where), "[%s]:%u", a, b->port);
        } else {
                char a[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, b->addr, a, sizeof(a));
                snprintf(where, sizeof(where), "%s:%u", a, b->port);
        }
        if (fd < 0) {
                r = -errno;
                snprintf(err, err_size, "socket for %s: %s", where, strerror(-r));
                return r;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fam == AF_INET6 && b->any)
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)); /* IPv4 too */
        if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 64) < 0) {
                r = -errno;
                close(fd);
                snprintf(err, err_size, "cannot listen on %s: %s", where, strerror(-r));
                return r;
        }
        sl = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
                *ret_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                           : ((struct sockaddr_in *)&ss)->sin_port);
        return fd;
}

int run_metrics_new(loop *l, const report_bind *b, const run_metrics_ops *ops, run_metrics **ret, char *err,
                    size_t err_size)
{
        run_metrics *m;
        unsigned port = b->port;
        int fd, r;

        if (!l || !b || b->off || !ops || !ops->render || !ops->ready || !ret)
                return -EINVAL;
        fd = listen_socket(b, &port, err, err_size);
        if (fd < 0)
                return fd;
        m = calloc(1, sizeof(*m));
        if (!m) {
                close(fd);
                return -ENOMEM;
        }
        m->l = l;
        m->ops = *ops;
        m->port = port;
        m->timer_fd = -1;
        m->epoll_fd = -1;
        /* MHD_USE_EPOLL without a thread: external polling through one epoll fd. The listen
         * socket is ours (MHD closes it when it stops). */
        m->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, on_request, m, MHD_OPTION_LISTEN_SOCKET, fd,
                                MHD_OPTION_CONNECTION_LIMIT, (unsigned)RUN_METRICS_MAX_CONNECTIONS,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)RUN_METRICS_PER_IP,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)RUN_METRICS_TIMEOUT_S,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)RUN_METRICS_REQUEST_BYTES,
                                MHD_OPTION_END);
        if (!m->d) {
                close(fd);
                free(m);
                snprintf(err, err_size, "the HTTP server (libmicrohttpd) did not start");
                return -EIO;
        }
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD);
        m->epoll_fd = di ? di->epoll_fd : -1;
        if (m->epoll_fd < 0 || (r = loop_add_fd(l, m->epoll_fd, EPOLLIN, on_epoll, m)) < 0 ||
            (r = loop_add_timer(l, 0, 0, on_timer, m, &m->timer_fd)) < 0) {
                if (m->epoll_fd >= 0)
                        (void)loop_remove_fd(l, m->epoll_fd);
                MHD_stop_daemon(m->d);
                free(m);
                snprintf(err, err_size, "the HTTP server cannot join the event loop");
                return -EIO;
        }
        rearm(m);
        *ret = m;
        return 0;
}

void run_metrics_free(run_metrics *m)
{
        if (!m)
                return;
        if (m->epoll_fd >= 0)
                (void)loop_remove_fd(m->l, m->epoll_fd);
        if (m->timer_fd >= 0)
                (void)loop_remove_timer(m->l, m->timer_fd);
        MHD_stop_daemon(m->d);
        free(m);
}

unsigned run_metrics_port(const run_metrics *m)
{
        return m ? m->port : 0;
}
