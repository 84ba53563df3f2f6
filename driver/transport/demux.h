/* SPDX-License-Identifier: Apache-2.0 */
/* Demultiplexing of received datagrams: (destination address, UDP port) -> endpoint, with
 * INADDR_ANY binds as a fallback. A bounded array scanned in order (Aeron drivers have a
 * handful of endpoints per port). Pure: no I/O, never logs; the caller owns locking. */
#ifndef TR_DEMUX_H
#define TR_DEMUX_H

#include <stdint.h>

#define TR_DEMUX_MAX 64

struct tr_demux_entry {
        uint32_t ip;   /* network order; 0 = any */
        uint16_t port; /* host order */
        void *endpoint;
};

struct tr_demux {
        unsigned n;
        struct tr_demux_entry e[TR_DEMUX_MAX];
};

/* -EADDRINUSE when (ip, port) is bound already, -ENOSPC when full, -EINVAL for port 0. */
int tr_demux_add(struct tr_demux *d, uint32_t ip, uint16_t port, void *endpoint);
/* -ENOENT when (ip, port) is not bound. */
int tr_demux_remove(struct tr_demux *d, uint32_t ip, uint16_t port);
/* The endpoint for (ip, port): exact bind first, then (any, port); NULL when none. */
void *tr_demux_lookup(const struct tr_demux *d, uint32_t ip, uint16_t port);

#endif
