/* SPDX-License-Identifier: Apache-2.0 */
/* A bounded single-producer/single-consumer ring of datagram copies: how one Aeron agent
 * hands a datagram that arrived on its queue to the agent that owns the transport it is
 * for. Lock-free (C11 acquire/release), fixed size, allocated once; push and pop never
 * allocate, block or log. Exactly one thread pushes and one thread pops. */
#ifndef SPA_RING_H
#define SPA_RING_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spa_ring_slot {
        void *tag;               /* the transport the datagram is for (compared, never trusted) */
        uint64_t id;             /* that transport's unique id */
        struct sockaddr_in src;
        uint32_t len;
        uint8_t data[];          /* max_len bytes */
};

struct spa_ring {
        uint32_t mask, slot_size, max_len;
        uint8_t *slots;
        _Alignas(64) uint32_t head;  /* written by the producer */
        uint32_t tail_cache;         /* producer's last view of tail */
        _Alignas(64) uint32_t tail;  /* written by the consumer */
        uint32_t head_cache;         /* consumer's last view of head */
        _Alignas(64) char pad;
};

/* slots: a power of two >= 2; max_len: the largest datagram (the MTU). -EINVAL, -ENOMEM. */
int spa_ring_init(struct spa_ring *r, uint32_t slots, uint32_t max_len);
/* Frees the slots; accepts a ring that was never initialised (zeroed). */
void spa_ring_free(struct spa_ring *r);

/* Producer: copy one datagram in. false when the ring is full or len > max_len. */
bool spa_ring_push(struct spa_ring *r, void *tag, uint64_t id, const struct sockaddr_in *src, const void *data,
                   size_t len);
/* Consumer: the oldest datagram, or NULL when empty; valid until spa_ring_pop. */
const struct spa_ring_slot *spa_ring_peek(struct spa_ring *r);
void spa_ring_pop(struct spa_ring *r);

#endif
