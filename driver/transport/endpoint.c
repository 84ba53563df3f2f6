/* SPDX-License-Identifier: Apache-2.0 */
/* Endpoints: (address, UDP port) binds in the port's demux table under bind_lock, with
 * an ephemeral port when asked, and the host-local kernel socket of each unicast
 * endpoint. Control calls only: never from inside a receive callback. Never logs. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "port_internal.h"

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

/* Bind (ip, *lport) in the demux; *lport 0 takes the next free ephemeral port. */
static int demux_bind(struct tr_port *p, uint32_t ip, uint16_t *lport, struct tr_endpoint *ep)
{
        int r;
        rte_rwlock_write_lock(&p->bind_lock);
        if (*lport == 0) {
                r = -EADDRINUSE;
                for (unsigned tries = 0; tries < 16384 && r == -EADDRINUSE; tries++) {
                        *lport = p->next_ephemeral;
                        p->next_ephemeral = p->next_ephemeral == 65535 ? 49152 : p->next_ephemeral + 1;
                        r = tr_demux_add(&p->demux, ip, *lport, ep);
                }
        } else
                r = tr_demux_add(&p->demux, ip, *lport, ep);
        rte_rwlock_write_unlock(&p->bind_lock);
        return r;
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
        r = demux_bind(p, ip, &lport, ep);
        if (r < 0)
                goto fail;
        ep->port = p;
        ep->ip = ip;
        ep->lport = lport;
        ep->clientd = clientd;
        ep->kfd = fd;
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
        rte_rwlock_write_lock(&ep->port->bind_lock);
        (void)tr_demux_remove(&ep->port->demux, ep->ip, ep->lport);
        rte_rwlock_write_unlock(&ep->port->bind_lock);
        if (ep->kfd >= 0)
                close(ep->kfd);
        free(ep);
}

void tr_endpoint_local(const struct tr_endpoint *ep, struct sockaddr_in *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->sin_family = AF_INET;
        ret->sin_addr.s_addr = ep->ip;
        ret->sin_port = htons(ep->lport);
}
