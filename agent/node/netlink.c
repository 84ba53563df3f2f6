/* SPDX-License-Identifier: Apache-2.0 */
/* Collecting the link usage: rtnetlink dumps over one NETLINK_ROUTE socket (poll with a
 * deadline, datagrams sized with MSG_PEEK|MSG_TRUNC), or a recorded dump file streamed in
 * pieces; and netlink_recv, the one receive of a kernel datagram (the sender checked to
 * be the kernel, a truncated datagram refused) for the dumps and the event sockets. The
 * messages themselves are nlparse's. Never logs. */
#include "errbuf.h"
#include "netlink.h"

#include "array.h"
#include "cleanup.h"

#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#define FILE_CHUNK (64u * 1024)

static netlink_limits limits(const netlink_limits *lim)
{
        netlink_limits l = lim ? *lim : (netlink_limits){0};
        if (!l.timeout_ms)
                l.timeout_ms = NETLINK_TIMEOUT_MS;
        if (!l.max_bytes)
                l.max_bytes = NETLINK_MAX_BYTES;
        if (!l.attempts)
                l.attempts = NETLINK_ATTEMPTS;
        return l;
}

static uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The kernel refusing the nexthop dump means it has no nexthop objects. */
static bool nexthops_unsupported(int r) { return r == -EOPNOTSUPP || r == -EINVAL; }

/* ---- the socket ---- */

static int send_request(int fd, nlparse_dump d, uint32_t seq)
{
        struct {
                struct nlmsghdr nh;
                uint8_t body[16];
        } req;
        uint16_t type;
        uint8_t family;
        size_t body;

        nlparse_dump_request(d, &type, &family);
        switch (type) {
        case RTM_GETLINK: body = sizeof(struct ifinfomsg); break;
        case RTM_GETADDR: body = sizeof(struct ifaddrmsg); break;
        case RTM_GETNEXTHOP: body = sizeof(struct nhmsg); break;
        case RTM_GETRULE: body = sizeof(struct fib_rule_hdr); break;
        default: body = sizeof(struct rtmsg); break;
        }
        memset(&req, 0, sizeof(req));
        req.nh.nlmsg_len = (uint32_t)NLMSG_LENGTH(body);
        req.nh.nlmsg_type = type;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        req.nh.nlmsg_seq = seq;
        req.body[0] = family; /* the first byte of every one of these headers */
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
        ssize_t k;
        do
                k = sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa));
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        return (size_t)k == req.nh.nlmsg_len ? 0 : -EIO;
}

int netlink_recv(int fd, void *buf, size_t size, size_t *ret_len)
{
        for (;;) {
                struct sockaddr_nl from;
                struct iovec iov = {.iov_base = buf, .iov_len = size};
                struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
                ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
                if (mh.msg_namelen != sizeof(from) || from.nl_family != AF_NETLINK || from.nl_pid != 0)
                        continue; /* not the kernel: dropped */
                if (mh.msg_flags & MSG_TRUNC)
                        return -EMSGSIZE;
                *ret_len = (size_t)n;
                return 0;
        }
}

typedef struct collect {
        int fd;
        uint8_t *buf;
        size_t cap;
        uint64_t deadline, bytes;
        netlink_limits lim;
} collect;

/* One datagram into c->buf: its length, or -errno (-ETIMEDOUT past the deadline). */
static int recv_one(collect *c, size_t *ret_len)
{
        for (;;) {
                uint64_t now = now_ms();
                if (now >= c->deadline)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = c->fd, .events = POLLIN};
                int k = poll(&p, 1, (int)(c->deadline - now));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -ETIMEDOUT;
                ssize_t want = recv(c->fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
                if (want < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (want < 0)
                        return -errno;
                if ((size_t)want > NETLINK_MAX_DATAGRAM)
                        return -EMSGSIZE;
                if ((size_t)want > c->cap) {
                        uint8_t *n = realloc(c->buf, (size_t)want);
                        if (!n)
                                return -ENOMEM;
                        c->buf = n;
                        c->cap = (size_t)want;
                }
                size_t n;
                int r = netlink_recv(c->fd, c->buf, c->cap, &n);
                if (r == -EAGAIN)
                        continue;
                if (r < 0)
                        return r;
                c->bytes += (uint64_t)n;
                if (c->bytes > c->lim.max_bytes)
                        return -E2BIG;
                *ret_len = n;
                return 0;
        }
}

/* One collection on a fresh socket. ret_failed: the dump that failed. */
static int dump_all(collect *c, nlparse_usage *u, nlparse_dump *ret_failed)
{
        int r;

        for (nlparse_dump d = 0; d < _NLPARSE_DUMP_MAX; d++) {
                uint32_t seq = (uint32_t)d + 1;
                *ret_failed = d;
                if ((r = send_request(c->fd, d, seq)) < 0)
                        return r;
                for (;;) {
                        size_t n = 0, used = 0;
                        if ((r = recv_one(c, &n)) < 0)
                                return r;
                        r = nlparse_feed(u, d, seq, c->buf, n, &used);
                        if (r < 0 && d == NLPARSE_DUMP_NEXTHOP && nexthops_unsupported(r) && used == 0) {
                                if ((r = nlparse_refused(u, d)) < 0)
                                        return r;
                                break;
                        }
                        if (r < 0)
                                return r;
                        if (used != n)
                                return -EBADMSG; /* a message cut, or something after NLMSG_DONE */
                        if (r == 1)
                                break;
                }
        }
        return 0;
}

static const char *reason(int r)
{
        switch (r) {
        case -EBADMSG: return "a malformed answer";
        case -EINTR: return "the dump changed while it was read (NLM_F_DUMP_INTR)";
        case -E2BIG: return "more than the table can hold";
        case -ENOBUFS: return "answers were lost (overrun)";
        case -EMSGSIZE: return "an answer larger than " "1 MiB";
        default: return NULL;
        }
}

int netlink_usage_dump(const netlink_limits *lim, nlparse_usage **ret, char *why, size_t size)
{
        collect c = {.lim = limits(lim)};
        nlparse_dump failed = NLPARSE_DUMP_LINK;
        int r = -EINTR;

        c.deadline = now_ms() + c.lim.timeout_ms;
        c.cap = 64u * 1024;
        _cleanup_free_ uint8_t *buf = c.buf = malloc(c.cap);
        if (!buf)
                return -ENOMEM;
        for (unsigned attempt = 0; attempt < c.lim.attempts && r == -EINTR; attempt++) {
                nlparse_usage *u = NULL;
                if ((r = nlparse_usage_new(&u)) < 0)
                        return r;
                _cleanup_close_ int fd = c.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
                if (fd < 0) {
                        r = -errno;
                        nlparse_usage_free(u);
                        errbuf_printf(why, size, "rtnetlink: cannot open a NETLINK_ROUTE socket: %s", strerror(-r));
                        return r;
                }
                r = dump_all(&c, u, &failed);
                buf = c.buf; /* recv_one may have grown it */
                if (r == 0) {
                        char w[NLPARSE_WHY_LEN];
                        r = nlparse_finish(u, w, sizeof(w));
                        if (r < 0) {
                                nlparse_usage_free(u);
                                errbuf_printf(why, size, "rtnetlink: %s", w);
                                return r;
                        }
                        *ret = u;
                        return 0;
                }
                nlparse_usage_free(u);
        }
        const char *what = nlparse_dump_name(failed);
        if (r == -ETIMEDOUT)
                errbuf_printf(why, size, "rtnetlink: no complete answer to the %s dump within %u ms", what, c.lim.timeout_ms);
        else if (r == -E2BIG && c.bytes > c.lim.max_bytes)
                errbuf_printf(why, size, "rtnetlink: the answers exceed %llu bytes (at the %s dump)",
                    (unsigned long long)c.lim.max_bytes, what);
        else if (r == -EINTR)
                errbuf_printf(why, size, "rtnetlink: the %s dump changed while it was read, %u times", what, c.lim.attempts);
        else if (reason(r))
                errbuf_printf(why, size, "rtnetlink: %s in the %s dump", reason(r), what);
        else
                errbuf_printf(why, size, "rtnetlink: the %s dump failed: %s", what, strerror(-r));
        return r;
}

/* ---- a recorded dump ---- */

int netlink_usage_read(const hostfs *h, const char *path, const netlink_limits *lim, nlparse_usage **ret,
                       char *why, size_t size)
{
        netlink_limits l = limits(lim);
        size_t cap = FILE_CHUNK, have = 0;
        uint64_t total = 0;
        nlparse_dump d = NLPARSE_DUMP_LINK;
        nlparse_usage *u = NULL;
        bool eof = false;
        int r;

        _cleanup_close_ int fd = hostfs_open(h, path);
        if (fd < 0) {
                errbuf_printf(why, size, "%s: %s", path, strerror(-fd));
                return fd;
        }
        _cleanup_free_ uint8_t *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        if ((r = nlparse_usage_new(&u)) < 0)
                return r;
        while (d < _NLPARSE_DUMP_MAX) {
                size_t used = 0;
                r = have ? nlparse_feed(u, d, (uint32_t)d + 1, buf, have, &used) : 0;
                if (r < 0 && d == NLPARSE_DUMP_NEXTHOP && nexthops_unsupported(r) && used == 0) {
                        /* skip the NLMSG_ERROR that recorded the refusal */
                        struct nlmsghdr nh;
                        memcpy(&nh, buf, sizeof(nh));
                        used = NLMSG_ALIGN(nh.nlmsg_len) < have ? NLMSG_ALIGN(nh.nlmsg_len) : have;
                        r = nlparse_refused(u, d);
                        if (r == 0)
                                r = 1;
                }
                if (r < 0) {
                        const char *rs = reason(r);
                        if (rs)
                                errbuf_printf(why, size, "%s: %s in the %s dump", path, rs, nlparse_dump_name(d));
                        else
                                errbuf_printf(why, size, "%s: the %s dump recorded an error: %s", path, nlparse_dump_name(d),
                                    strerror(-r));
                        goto fail;
                }
                memmove(buf, buf + used, have - used);
                have -= used;
                if (r == 1) {
                        d++;
                        continue;
                }
                if (eof) {
                        r = -ENODATA;
                        errbuf_printf(why, size, "%s: ends inside the %s dump", path, nlparse_dump_name(d));
                        goto fail;
                }
                if (have == cap) { /* one message larger than the buffer */
                        if (cap >= NETLINK_MAX_DATAGRAM) {
                                r = -EMSGSIZE;
                                errbuf_printf(why, size, "%s: a message larger than 1 MiB in the %s dump", path,
                                    nlparse_dump_name(d));
                                goto fail;
                        }
                        r = ARRAY_GROW(buf, cap, cap + 1, 0); /* doubles */
                        if (r < 0)
                                goto fail;
                }
                ssize_t k = read(fd, buf + have, cap - have);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        errbuf_printf(why, size, "%s: %s", path, strerror(-r));
                        goto fail;
                }
                if (k == 0)
                        eof = true;
                have += (size_t)k;
                total += (uint64_t)k;
                if (total > l.max_bytes) {
                        r = -E2BIG;
                        errbuf_printf(why, size, "%s: more than %llu bytes", path, (unsigned long long)l.max_bytes);
                        goto fail;
                }
        }
        char extra;
        ssize_t k;
        do
                k = read(fd, &extra, 1);
        while (k < 0 && errno == EINTR);
        if (have || k > 0) {
                r = -EBADMSG;
                errbuf_printf(why, size, "%s: data after the last dump", path);
                goto fail;
        }
        char w[NLPARSE_WHY_LEN];
        if ((r = nlparse_finish(u, w, sizeof(w))) < 0) {
                errbuf_printf(why, size, "%s: %s", path, w);
                goto fail;
        }
        *ret = u;
        return 0;
fail:
        nlparse_usage_free(u);
        return r;
}

/* ---- which ---- */

const char *netlink_usage_source(const hostfs *h) { return hostfs_is_live(h) ? "rtnetlink" : NETLINK_RECORDED_DUMP; }

int netlink_usage_load(const hostfs *h, nlparse_usage **ret, char *why, size_t size)
{
        if (!hostfs_is_live(h))
                return netlink_usage_read(h, NETLINK_RECORDED_DUMP, NULL, ret, why, size);
        if (!hostfs_is_real_root(h)) {
                /* --root /host: netlink answers for the namespace this process is in, which
                 * is the host's only with hostNetwork. */
                char host[PATH_MAX];
                struct stat a, b;
                int r = hostfs_path(h, "/proc/1/ns/net", host, sizeof(host));
                if (r < 0)
                        return r;
                if (stat(host, &a) < 0 || stat("/proc/self/ns/net", &b) < 0) {
                        r = -errno;
                        errbuf_printf(why, size, "cannot tell whether the agent shares the host's network namespace: %s: %s",
                            host, strerror(-r));
                        return r;
                }
                if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
                        errbuf_printf(why, size, "the agent is not in the host's network namespace (%s differs from its "
                            "own): its rtnetlink answers are not the host's; run it with hostNetwork: true", host);
                        return -EXDEV;
                }
        }
        return netlink_usage_dump(NULL, ret, why, size);
}

int netlink_subscribe(int type, int protocol, unsigned groups)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
        int fd = socket(AF_NETLINK, type | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}
