/* SPDX-License-Identifier: Apache-2.0 */
/* /metrics, /healthz, /readyz on libmicrohttpd driven by the daemon's loop (its epoll fd
 * is watched by the loop; MHD_run is called when it is readable and when our timer says:
 * MHD's own timeout, the earliest request deadline, and once more after connections went,
 * so that MHD puts its listening socket back in its epoll set). Tracks every connection
 * from accept to close (its deadline) and shuts down those past it. Never logs: the
 * library's own messages are off (no MHD_USE_ERROR_LOG). */
#include "run-metrics.h"
#include "httpd-reply.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One connection, from MHD_CONNECTION_NOTIFY_STARTED to _CLOSED (its socket context). */
typedef struct mconn {
        struct mconn *prev, *next;
        int fd;
        uint64_t start_ms;      /* accept, or the end of the previous request */
        bool in_request;        /* the headers of the current request are complete */
        bool cut;               /* shut down past its deadline; MHD closes it next */
} mconn;

struct run_metrics {
        loop *l;
        struct MHD_Daemon *d;
        int epoll_fd;
        int timer_fd;
        unsigned port;
        run_metrics_ops ops;
        mconn *conns;
        unsigned n_conns;
        unsigned n_cut;         /* of n_conns: shut down, MHD has not closed them yet */
        bool had_conns;         /* connections existed at the end of the last run */
        int listen_fd;          /* evict_idle: the listening socket, ours (else MHD's: -1) */
        uint64_t evicted;       /* connections shut down to make room */
};

static uint64_t deadline_of(const run_metrics *m, const mconn *k)
{
        return k->start_ms + (k->in_request ? RUN_METRICS_REQUEST_MS : m->ops.header_ms);
}

static void cut_conn(run_metrics *m, mconn *k)
{
        if (k->fd >= 0)
                (void)shutdown(k->fd, SHUT_RDWR);
        k->cut = true;
        m->n_cut++;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        run_metrics *m = cls;
        mconn *k = *socket_context;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
                k = calloc(1, sizeof(*k));
                if (!k)
                        return; /* untracked: MHD's inactivity timeout still closes it */
                k->fd = ci ? ci->connect_fd : -1;
                k->start_ms = loop_now_ms();
                k->next = m->conns;
                if (m->conns)
                        m->conns->prev = k;
                m->conns = k;
                m->n_conns++;
                *socket_context = k;
                return;
        }
        if (toe == MHD_CONNECTION_NOTIFY_CLOSED && k) {
                if (k->prev)
                        k->prev->next = k->next;
                else
                        m->conns = k->next;
                if (k->next)
                        k->next->prev = k->prev;
                m->n_conns--;
                if (k->cut)
                        m->n_cut--;
                free(k);
                *socket_context = NULL;
        }
}

static mconn *conn_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

/* A request ended (answered, or its connection went): the next one on a kept-alive
 * connection has its own deadlines from now. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
        mconn *k = conn_of(c);
        (void)cls, (void)req_cls, (void)toe;
        if (k) {
                k->in_request = false;
                k->start_ms = loop_now_ms();
        }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
        static char ok[] = "ok\n", not_allowed[] = "only GET and HEAD\n", failed[] = "metrics unavailable\n";
        run_metrics *m = cls;
        const char *text = "text/plain; charset=utf-8";
        mconn *k = conn_of(c);
        (void)version, (void)upload_data, (void)req_cls;

        if (k)
                k->in_request = true; /* the headers are in: now the whole answer's deadline */
        *upload_data_size = 0; /* any body is ignored: the answer goes now */
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return httpd_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, not_allowed, sizeof(not_allowed) - 1, false);
        bool healthz = m->ops.ready && strcmp(url, "/healthz") == 0;
        if (healthz && (!m->ops.healthy || m->ops.healthy(m->ops.userdata, NULL, 0)))
                return httpd_reply(c, MHD_HTTP_OK, text, ok, sizeof(ok) - 1, false); /* the loop is alive */
        if (healthz || (m->ops.ready && strcmp(url, "/readyz") == 0)) {
                char why[256] = "";
                bool ready = healthz ? m->ops.healthy(m->ops.userdata, why, sizeof(why))
                                     : m->ops.ready(m->ops.userdata, why, sizeof(why));
                if (ready && !why[0])
                        return httpd_reply(c, MHD_HTTP_OK, text, ok, sizeof(ok) - 1, false);
                size_t n = strlen(why);
                char *body = malloc(n + 2);
                if (!body)
                        return MHD_NO;
                memcpy(body, why, n);
                body[n] = '\n';
                body[n + 1] = '\0';
                return httpd_reply(c, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, text, body, n + 1, true);
        }
        if (m->ops.render && strcmp(url, "/metrics") == 0) {
                char *body = NULL;
                size_t len = 0;
                if (m->ops.render(m->ops.userdata, &body, &len) < 0)
                        return httpd_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, failed, sizeof(failed) - 1, false);
                return httpd_reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len, true);
        }
        return httpd_reply(c, MHD_HTTP_NOT_FOUND, text, (char *)m->ops.not_found, strlen(m->ops.not_found), false);
}

/* Shut down every connection past its deadline (MHD sees the end of the stream and closes
 * it in the next run); how many were cut now, the earliest deadline left in ret_next (0:
 * no connection). */
static unsigned enforce_deadlines(run_metrics *m, uint64_t now, uint64_t *ret_next)
{
        uint64_t next = 0;
        unsigned cut = 0;

        for (mconn *k = m->conns; k; k = k->next) {
                uint64_t d = deadline_of(m, k);
                if (!k->cut && now >= d && k->fd >= 0) {
                        cut_conn(m, k);
                        cut++;
                }
                if (k->cut)
                        d = now + 1000; /* MHD closes it on the event; look again in a second */
                if (next == 0 || d < next)
                        next = d;
        }
        *ret_next = next;
        return cut;
}

/* After every run: wake again when MHD's timeout says (idle connections, pending data),
 * at the earliest request deadline, and once soon after the last connection went: MHD
 * adds its listening socket back to its epoll set (out of it while at the connection
 * limit) only at the start of a run, and with no connection left it gives no timeout,
 * so without that run the listener would never accept again. */
static void rearm(run_metrics *m, uint64_t next_deadline)
{
        MHD_UNSIGNED_LONG_LONG t = 0;
        uint64_t now = loop_now_ms(), wake = 0;

        if (MHD_get_timeout(m->d, &t) == MHD_YES)
                wake = t ? (uint64_t)t : 1;
        if (next_deadline) {
                uint64_t d = next_deadline > now ? next_deadline - now : 1;
                if (wake == 0 || d < wake)
                        wake = d;
        }
        if (m->n_conns == 0 && m->had_conns)
                wake = 1;
        m->had_conns = m->n_conns > 0;
        (void)loop_timer_set(m->l, m->timer_fd, wake, 0); /* 0: disarmed, nothing to wait for */
}

static void run_now(run_metrics *m)
{
        uint64_t next = 0;

        MHD_run(m->d);
        if (enforce_deadlines(m, loop_now_ms(), &next) > 0) {
                MHD_run(m->d); /* let MHD see the ends of the streams just shut down */
                (void)enforce_deadlines(m, loop_now_ms(), &next);
        }
        rearm(m, next);
}

static int on_epoll(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events;
        run_now(ud);
        return 0;
}

static int on_timer(loop *l, void *ud)
{
        (void)l;
        run_now(ud);
        return 0;
}

/* The oldest live connection whose request has not arrived, or NULL. The list is newest
 * first. */
static mconn *oldest_idle(run_metrics *m)
{
        mconn *found = NULL;
        for (mconn *k = m->conns; k; k = k->next)
                if (!k->cut && !k->in_request && k->fd >= 0)
                        found = k;
        return found;
}

/* evict_idle: accept what is waiting (a bounded batch per wake-up); at the budget the
 * oldest idle connection makes room, and with none idle (every slot answering a request)
 * the new connection is closed. MHD's own limit is twice the budget: room for the ones
 * shut down that it has not closed yet. */
static int on_listen(loop *l, int fd, uint32_t events, void *ud)
{
        run_metrics *m = ud;
        (void)l, (void)events;

        for (int i = 0; i < 64; i++) {
                struct sockaddr_storage ss;
                socklen_t sl = sizeof(ss);
                int c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (c < 0)
                        break; /* EAGAIN; or EMFILE and the like: the next wake-up tries again */
                if (m->n_conns - m->n_cut >= m->ops.max_connections) {
                        mconn *k = oldest_idle(m);
                        if (!k) {
                                close(c);
                                continue;
                        }
                        cut_conn(m, k);
                        m->evicted++;
                }
                if (m->n_conns >= 2 * m->ops.max_connections)
                        MHD_run(m->d); /* let MHD close the ones shut down */
                /* MHD closes the socket itself when it refuses it. A run at once: a
                 * request already there (a probe's) is read and answered before the
                 * next accept could count its connection idle. */
                if (MHD_add_connection(m->d, c, (const struct sockaddr *)&ss, sl) == MHD_YES)
                        MHD_run(m->d);
        }
        run_now(m);
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

        if (!l || !b || b->off || !ops || (!ops->render && !ops->ready) || !ret)
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
        if (!m->ops.max_connections)
                m->ops.max_connections = RUN_METRICS_MAX_CONNECTIONS;
        if (!m->ops.per_ip)
                m->ops.per_ip = RUN_METRICS_PER_IP;
        if (m->ops.per_ip > m->ops.max_connections)
                m->ops.per_ip = m->ops.max_connections;
        if (!m->ops.header_ms)
                m->ops.header_ms = RUN_METRICS_HEADER_MS;
        if (!m->ops.not_found)
                m->ops.not_found = m->ops.render ? "not found: try /metrics\n" : "not found: try /healthz or /readyz\n";
        m->port = port;
        m->timer_fd = -1;
        m->epoll_fd = -1;
        m->listen_fd = -1;
        unsigned limit = m->ops.max_connections, per_ip = m->ops.per_ip;
        if (m->ops.evict_idle) {
                /* the listener is ours, in the loop; MHD gets each accepted connection */
                m->listen_fd = fd;
                limit *= 2;
                per_ip = limit;
                m->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, m,
                                        MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
                                        MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
                                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
                                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)RUN_METRICS_TIMEOUT_S,
                                        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)RUN_METRICS_REQUEST_BYTES,
                                        MHD_OPTION_END);
        } else
        /* MHD_USE_EPOLL without a thread: external polling through one epoll fd. The listen
         * socket is ours (MHD closes it when it stops). */
        m->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, on_request, m, MHD_OPTION_LISTEN_SOCKET, fd,
                                MHD_OPTION_CONNECTION_LIMIT, limit,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
                                MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
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
            (r = loop_add_timer(l, 0, 0, on_timer, m, &m->timer_fd)) < 0 ||
            (m->listen_fd >= 0 && (r = loop_add_fd(l, m->listen_fd, EPOLLIN, on_listen, m)) < 0)) {
                if (m->epoll_fd >= 0)
                        (void)loop_remove_fd(l, m->epoll_fd);
                if (m->timer_fd >= 0)
                        (void)loop_remove_timer(l, m->timer_fd);
                MHD_stop_daemon(m->d);
                if (m->listen_fd >= 0)
                        close(m->listen_fd);
                free(m);
                snprintf(err, err_size, "the HTTP server cannot join the event loop");
                return -EIO;
        }
        rearm(m, 0);
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
        if (m->listen_fd >= 0) {
                (void)loop_remove_fd(m->l, m->listen_fd);
                close(m->listen_fd);
        }
        MHD_stop_daemon(m->d); /* closes every connection (each notified closed) */
        while (m->conns) { /* none left; should one be, it goes too */
                mconn *k = m->conns;
                m->conns = k->next;
                free(k);
        }
        free(m);
}

unsigned run_metrics_connections(const run_metrics *m)
{
        return m ? m->n_conns : 0;
}

unsigned run_metrics_port(const run_metrics *m)
{
        return m ? m->port : 0;
}
