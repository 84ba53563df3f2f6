/* SPDX-License-Identifier: Apache-2.0 */
/* The agents' hand-off ring: order, full and oversize refusals, wrap-around of the
 * free-running counters, and one producer thread against one consumer thread moving
 * 200000 datagrams that must arrive complete and in order. */
#include "spa-ring.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "testutil.h"

static struct sockaddr_in src_of(uint32_t i)
{
        struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons((uint16_t)i) };
        s.sin_addr.s_addr = htonl(0x0a000000u | (i & 0xffffff));
        return s;
}

static void test_basic(void)
{
        struct spa_ring r;
        uint8_t buf[100];
        int tag;

        CHECK_INT(spa_ring_init(&r, 3, 100), -EINVAL);
        CHECK_INT(spa_ring_init(&r, 1, 100), -EINVAL);
        CHECK_INT(spa_ring_init(&r, 4, 0), -EINVAL);
        CHECK_INT(spa_ring_init(&r, 4, 100), 0);
        CHECK(spa_ring_peek(&r) == NULL);
        for (uint32_t i = 0; i < 4; i++) {
                struct sockaddr_in s = src_of(i);
                memset(buf, (int)i, sizeof(buf));
                CHECK(spa_ring_push(&r, &tag, i, &s, buf, 10 + i));
        }
        struct sockaddr_in s = src_of(9);
        CHECK(!spa_ring_push(&r, &tag, 9, &s, buf, 1)); /* full */
        CHECK(!spa_ring_push(&r, &tag, 9, &s, buf, 101)); /* too long */
        for (uint32_t i = 0; i < 4; i++) {
                const struct spa_ring_slot *sl = spa_ring_peek(&r);
                CHECK(sl != NULL);
                if (!sl)
                        break;
                CHECK(sl->tag == &tag);
                CHECK_INT(sl->id, i);
                CHECK_INT(sl->len, 10 + i);
                CHECK_INT(ntohs(sl->src.sin_port), i);
                CHECK_INT(sl->data[0], i);
                CHECK_INT(sl->data[sl->len - 1], i);
                spa_ring_pop(&r);
        }
        CHECK(spa_ring_peek(&r) == NULL);
        CHECK(spa_ring_push(&r, &tag, 5, &s, buf, 100)); /* exactly max_len */
        spa_ring_free(&r);
        spa_ring_free(&r); /* twice is fine */
}

static void test_wrap(void)
{
        struct spa_ring r;
        uint8_t b = 0;
        CHECK_INT(spa_ring_init(&r, 2, 8), 0);
        /* start the counters just below 2^32 */
        r.head = r.tail = r.head_cache = r.tail_cache = UINT32_MAX - 2;
        for (uint32_t i = 0; i < 10; i++) {
                struct sockaddr_in s = src_of(i);
                b = (uint8_t)i;
                CHECK(spa_ring_push(&r, NULL, i, &s, &b, 1));
                CHECK(spa_ring_push(&r, NULL, i + 100, &s, &b, 1));
                CHECK(!spa_ring_push(&r, NULL, 0, &s, &b, 1));
                const struct spa_ring_slot *sl = spa_ring_peek(&r);
                CHECK(sl && sl->id == i);
                spa_ring_pop(&r);
                sl = spa_ring_peek(&r);
                CHECK(sl && sl->id == i + 100);
                spa_ring_pop(&r);
                CHECK(spa_ring_peek(&r) == NULL);
        }
        spa_ring_free(&r);
}

#define N_ITEMS 200000u

static void *producer(void *arg)
{
        struct spa_ring *r = arg;
        uint8_t buf[256];
        for (uint32_t i = 0; i < N_ITEMS;) {
                size_t len = 1 + (i * 7) % sizeof(buf);
                for (size_t k = 0; k < len; k++)
                        buf[k] = (uint8_t)(i + k);
                struct sockaddr_in s = src_of(i);
                if (spa_ring_push(r, NULL, i, &s, buf, len))
                        i++;
        }
        return NULL;
}

static void test_threads(void)
{
        struct spa_ring r;
        pthread_t t;
        uint32_t next = 0, bad = 0;

        CHECK_INT(spa_ring_init(&r, 64, 256), 0);
        CHECK_INT(pthread_create(&t, NULL, producer, &r), 0);
        while (next < N_ITEMS) {
                const struct spa_ring_slot *sl = spa_ring_peek(&r);
                if (!sl)
                        continue;
                size_t len = 1 + (next * 7) % 256;
                if (sl->id != next || sl->len != len || sl->src.sin_port != htons((uint16_t)next))
                        bad++;
                for (size_t k = 0; k < sl->len && k < len; k++)
                        if (sl->data[k] != (uint8_t)(next + k))
                                bad++;
                spa_ring_pop(&r);
                next++;
        }
        pthread_join(t, NULL);
        CHECK_INT(bad, 0);
        CHECK(spa_ring_peek(&r) == NULL);
        spa_ring_free(&r);
}

int main(void)
{
        test_basic();
        test_wrap();
        test_threads();
        return test_done();
}
