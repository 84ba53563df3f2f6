/* SPDX-License-Identifier: Apache-2.0 */
/* Endpoint demultiplexing table. Pure: no I/O, no globals, never logs. */
#include "demux.h"

#include <errno.h>
#include <stddef.h>

int tr_demux_add(struct tr_demux *d, uint32_t ip, uint16_t port, void *endpoint)
{
        if (port == 0 || !endpoint)
                return -EINVAL;
        for (unsigned i = 0; i < d->n; i++)
                if (d->e[i].ip == ip && d->e[i].port == port)
                        return -EADDRINUSE;
        if (d->n >= TR_DEMUX_MAX)
                return -ENOSPC;
        d->e[d->n++] = (struct tr_demux_entry){ .ip = ip, .port = port, .endpoint = endpoint };
        return 0;
}

int tr_demux_remove(struct tr_demux *d, uint32_t ip, uint16_t port)
{
        for (unsigned i = 0; i < d->n; i++)
                if (d->e[i].ip == ip && d->e[i].port == port) {
                        d->e[i] = d->e[--d->n];
                        return 0;
                }
        return -ENOENT;
}

void *tr_demux_lookup(const struct tr_demux *d, uint32_t ip, uint16_t port)
{
        void *any = NULL;
        for (unsigned i = 0; i < d->n; i++) {
                const struct tr_demux_entry *e = &d->e[i];
                if (e->port != port)
                        continue;
                if (e->ip == ip)
                        return e->endpoint;
                if (e->ip == 0)
                        any = e->endpoint;
        }
        return any;
}
