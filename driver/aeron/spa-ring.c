/* SPDX-License-Identifier: Apache-2.0 */
/* The SPSC hand-off ring. head and tail are free-running 32-bit counters; the producer
 * publishes a slot with a release store of head, the consumer frees it with a release
 * store of tail. Each side caches the other's counter to touch its line only when needed. */
#include "spa-ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int spa_ring_init(struct spa_ring *r, uint32_t slots, uint32_t max_len)
{
        if (slots < 2 || (slots & (slots - 1)) != 0 || slots > (1u << 20) || max_len == 0 || max_len > 65535)
                return -EINVAL;
        size_t slot_size = (sizeof(struct spa_ring_slot) + max_len + 63) & ~(size_t)63;
        uint8_t *mem = aligned_alloc(64, slot_size * slots);
        if (!mem)
                return -ENOMEM;
        /* every page faulted in now, not on the data path: the producer's first pass over
         * the ring took a page fault every few slots (20-40 us each in a VM whose faults
         * exit to the hypervisor: Aeron round trips' p99 on memif). The ring is resident
         * from the start, which a used ring is anyway after one pass. */
        memset(mem, 0, slot_size * slots);
        memset(r, 0, sizeof(*r));
        r->mask = slots - 1;
        r->slot_size = (uint32_t)slot_size;
        r->max_len = max_len;
        r->slots = mem;
        return 0;
}

void spa_ring_free(struct spa_ring *r)
{
        if (!r)
                return;
        free(r->slots);
        r->slots = NULL;
}

static inline struct spa_ring_slot *slot(const struct spa_ring *r, uint32_t i)
{
        return (struct spa_ring_slot *)(r->slots + (size_t)(i & r->mask) * r->slot_size);
}

bool spa_ring_push(struct spa_ring *r, void *tag, uint64_t id, const struct sockaddr_in *src, const void *data,
                   size_t len)
{
        uint32_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED); /* only this thread writes it */

        if (len > r->max_len)
                return false;
        if (head - r->tail_cache > r->mask) {
                r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
                if (head - r->tail_cache > r->mask)
                        return false;
        }
        struct spa_ring_slot *s = slot(r, head);
        s->tag = tag;
        s->id = id;
        s->src = *src;
        s->len = (uint32_t)len;
        memcpy(s->data, data, len);
        __atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
        return true;
}

const struct spa_ring_slot *spa_ring_peek(struct spa_ring *r)
{
        uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED); /* only this thread writes it */

        if (tail == r->head_cache) {
                r->head_cache = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
                if (tail == r->head_cache)
                        return NULL;
        }
        return slot(r, tail);
}

void spa_ring_pop(struct spa_ring *r)
{
        __atomic_store_n(&r->tail, __atomic_load_n(&r->tail, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}
