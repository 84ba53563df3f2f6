/* SPDX-License-Identifier: Apache-2.0 */
/* array_grow(): the doubling, overflow-checked growth of a malloc'ed array. No I/O, never logs. */
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *pp, size_t *cap, size_t need, size_t item_size, size_t min_cap)
{
        void *old, *n;
        size_t c;

        if (*cap >= need)
                return 0;
        if (item_size == 0)
                return -EINVAL;
        c = *cap > min_cap ? *cap : min_cap;
        if (c == 0)
                c = 1;
        while (c < need) {
                if (c > SIZE_MAX / 2)
                        c = need; /* doubling would overflow: exactly need, checked below */
                else
                        c *= 2;
        }
        if (c > SIZE_MAX / item_size)
                return -ENOMEM;
        memcpy(&old, pp, sizeof(old));
        n = realloc(old, c * item_size);
        if (!n)
                return -ENOMEM;
        memcpy(pp, &n, sizeof(n));
        *cap = c;
        return 0;
}
