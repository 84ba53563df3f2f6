/* SPDX-License-Identifier: Apache-2.0 */
/* Endpoints: (address, UDP port) binds in the port's demux table under bind_lock, with
 * an ephemeral port when asked, and the host-local kernel socket of each unicast
 * endpoint, watched by one sleeping control thread per port (epoll) that only flags
 * which sockets have data: the polling thread reads them. Control calls only: never
 * from inside a receive callback. Never logs. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "port_internal.h"

#define TR_HL_STOP UINT64_MAX /* epoll data of the eventfd */

/* The watcher: blocked in epoll_wait (edge-triggered: one wake per arrival burst), it
 * sets the endpoint's bit and goes back to sleep. It touches nothing else of the port,
 * so an endpoint closed meanwhile costs at most one recvfrom that finds nothing. */
static void hl_watch_loop(struct tr_port *p)
{
        for (;;) {
                struct epoll_event ev[16];
                int n = epoll_wait(p->hl_epfd, ev, 16, -1);
                if (n < 0 && errno != EINTR)
                        return;
                for (int i = 0; i < n; i++) {
                        if (ev[i].data.u64 == TR_HL_STOP)
                                return;
                        __atomic_fetch_or(&p->hl_ready, 1ull << (ev[i].data.u64 % TR_HL_MAX), __ATOMIC_RELEASE);
                }
        }
}

/* A DPDK control thread (on the EAL's control CPUs, away from the lcores): DPDK 23.11
 * replaced rte_ctrl_thread_create (pthread_t, removed in 24.11) with
 * rte_thread_create_control (rte_thread_t). Both return 0 or a positive errno. */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
static uint32_t hl_watch(void *arg)
{
        hl_watch_loop(arg);
        return 0;
}

static int hl_thread_start(struct tr_port *p)
{
        return rte_thread_create_control(&p->hl_thread, "sl-host-local", hl_watch, p);
}

static void hl_thread_join(struct tr_port *p, bool cancel)
{
        /* EAL's rte_thread_t is the pthread_t on Linux (lib/eal/unix/rte_thread.c) */
        if (cancel)
                pthread_cancel((pthread_t)p->hl_thread.opaque_id);
        rte_thread_join(p->hl_thread, NULL);
}
#else
static void *hl_watch(void *arg)
{
        hl_watch_loop(arg);
        return NULL;
}

static int hl_thread_start(struct tr_port *p)
{
        return rte_ctrl_thread_create(&p->hl_thread, "sl-host-local", NULL, hl_watch, p);
}

static void hl_thread_join(struct tr_port *p, bool cancel)
{
        if (cancel)
                pthread_cancel(p->hl_thread);
        pthread_join(p->hl_thread, NULL);
}
#endif

int tr_hl_start(struct tr_port *p)
{
        p->hl_epfd = epoll_create1(EPOLL_CLOEXEC);
        p->hl_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TR_HL_STOP };
        int r = 0;
        if (p->hl_epfd < 0 || p->hl_evfd < 0 || epoll_ctl(p->hl_epfd, EPOLL_CTL_ADD, p->hl_evfd, &ev) < 0)
                r = -errno;
        if (r == 0)
                r = hl_thread_start(p);
        if (r != 0) {
                r = r < 0 ? r : -r; /* the thread's positive errno */
                if (p->hl_epfd >= 0)
                        close(p->hl_epfd);
                if (p->hl_evfd >= 0)
                        close(p->hl_evfd);
                p->hl_epfd = p->hl_evfd = -1;
                return r;
        }
        p->hl_running = true;
        return 0;
}

void tr_hl_stop(struct tr_port *p)
{
        if (!p->hl_running)
                return;
        uint64_t one = 1;
        hl_thread_join(p, write(p->hl_evfd, &one, sizeof(one)) != sizeof(one));
        close(p->hl_epfd);
        close(p->hl_evfd);
        p->hl_running = false;
}

/* A kernel UDP socket on 127.0.0.1:lport (0 = let the kernel pick); the port it got. */
static int host_local_socket(uint16_t lport, uint16_t *ret_lport, int *ret_fd)
{
        struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(lport),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t sl = sizeof(lo);
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&lo, sizeof(lo)) < 0 ||
            getsockname(fd, (struct sockaddr *)&lo, &sl) < 0) {
                int r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        *ret_lport = ntohs(lo.sin_port);
        *ret_fd = fd;
        return 0;
}

/* Bind (ip, *lport) in the demux; *lport 0 takes the next free ephemeral port. An endpoint
 * with a host-local socket also takes a watcher slot. */
static int demux_bind(struct tr_port *p, uint32_t ip, uint16_t *lport, struct tr_endpoint *ep)
{
        int r;
        rte_rwlock_write_lock(&p->bind_lock);
        if (ep->kfd >= 0) {
                ep->hl_slot = TR_HL_MAX;
                for (unsigned i = 0; i < TR_HL_MAX && ep->hl_slot == TR_HL_MAX; i++)
                        if (!p->hl_eps[i])
                                ep->hl_slot = i;
                if (ep->hl_slot == TR_HL_MAX) {
                        rte_rwlock_write_unlock(&p->bind_lock);
                        return -ENOSPC;
                }
        }
        if (*lport == 0) {
                r = -EADDRINUSE;
                for (unsigned tries = 0; tries < 16384 && r == -EADDRINUSE; tries++) {
                        *lport = p->next_ephemeral;
                        p->next_ephemeral = p->next_ephemeral == 65535 ? 49152 : p->next_ephemeral + 1;
                        r = tr_demux_add(&p->demux, ip, *lport, ep);
                }
        } else
                r = tr_demux_add(&p->demux, ip, *lport, ep);
        if (r == 0 && ep->kfd >= 0)
                p->hl_eps[ep->hl_slot] = ep;
        if (r == 0) {
                tr_flows_invalidate(p); /* a new endpoint may reuse a closed one's memory */
                p->demux_gen++;
        }
        rte_rwlock_write_unlock(&p->bind_lock);
        return r;
}

static void demux_unbind(struct tr_port *p, struct tr_endpoint *ep)
{
        rte_rwlock_write_lock(&p->bind_lock);
        (void)tr_demux_remove(&p->demux, ep->ip, ep->lport);
        if (ep->kfd >= 0)
                p->hl_eps[ep->hl_slot] = NULL;
        tr_flows_invalidate(p);
        p->demux_gen++;
        rte_rwlock_write_unlock(&p->bind_lock);
}

int tr_endpoint_open(struct tr_port *p, const struct sockaddr_in *bind_addr, void *clientd,
                     struct tr_endpoint **ret)
{
        uint32_t ip = bind_addr->sin_addr.s_addr;
        uint16_t lport = ntohs(bind_addr->sin_port);
        int fd = -1, r;

        if (bind_addr->sin_family != AF_INET)
                return -EAFNOSUPPORT;
        if (ip != 0 && ip != p->ip && !tr_ipv4_is_multicast(ip))
                return -EADDRNOTAVAIL;
        struct tr_endpoint *ep = calloc(1, sizeof(*ep));
        if (!ep)
                return -ENOMEM;
        if (p->host_local && !tr_ipv4_is_multicast(ip)) {
                r = host_local_socket(lport, &lport, &fd);
                if (r < 0)
                        goto fail;
        }
        ep->port = p;
        ep->ip = ip;
        ep->clientd = clientd;
        ep->kfd = fd;
        r = demux_bind(p, ip, &lport, ep);
        if (r < 0)
                goto fail;
        ep->lport = lport;
        if (fd >= 0) {
                /* edge-triggered; a datagram already queued is reported at once */
                struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = ep->hl_slot };
                if (epoll_ctl(p->hl_epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        r = -errno;
                        demux_unbind(p, ep);
                        goto fail;
                }
        }
        *ret = ep;
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        free(ep);
        return r;
}

void tr_endpoint_close(struct tr_endpoint *ep)
{
        if (!ep)
                return;
        demux_unbind(ep->port, ep);
        if (ep->kfd >= 0) {
                (void)epoll_ctl(ep->port->hl_epfd, EPOLL_CTL_DEL, ep->kfd, NULL);
                close(ep->kfd);
        }
        free(ep);
}

void tr_endpoint_local(const struct tr_endpoint *ep, struct sockaddr_in *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->sin_family = AF_INET;
        ret->sin_addr.s_addr = ep->ip;
        ret->sin_port = htons(ep->lport);
}
