/* SPDX-License-Identifier: Apache-2.0 */
/* Ring fitting against device limits (MANA's 256, aligned rings) and pool sizing. */
#include "sizing.h"

#include "testutil.h"

int main(void)
{
        static const struct {
                uint16_t want, min, max, align, fit;
        } t[] = {
                { 1024, 0, 0, 0, 1024 },    /* no limits */
                { 1024, 64, 256, 1, 256 },  /* MANA: at most 256 descriptors */
                { 256, 64, 256, 1, 256 },
                { 16, 64, 4096, 1, 64 },    /* below the minimum */
                { 1000, 32, 4096, 32, 992 }, /* aligned down */
                { 40, 64, 4096, 32, 64 },   /* up to the minimum, still aligned */
                { 70, 65, 4096, 32, 96 },   /* aligned down would break the minimum: up */
                { 4095, 0, 4095, 64, 4032 }, /* max not itself aligned */
                { 0, 0, 0, 8, 0 },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                uint16_t v = tr_ring_fit(t[i].want, t[i].min, t[i].max, t[i].align);
                if (v != t[i].fit)
                        fprintf(stderr, "case %zu\n", i);
                CHECK_INT(v, t[i].fit);
        }
        /* one thread, 1024/1024, burst 32, cache 256 on 2 lcores */
        CHECK_INT(tr_pool_size(1, 1024, 1024, 32, 256, 2), 1024 + 1024 + 64 + 1024 + 512 + 768);
        CHECK_INT(tr_pool_size(2, 256, 256, 32, 0, 1), 2 * (512 + 64) + 256 + 512);
        return test_done();
}
