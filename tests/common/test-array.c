/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for array_grow()/ARRAY_GROW: growth by doubling from the minimum, nothing done when
 * there is room, the size overflow refused, and a failed realloc (the test links with
 * --wrap=realloc) leaving the old array and its capacity as they were. */
#include "array.h"
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static bool realloc_fails;
static unsigned reallocs;

void *__wrap_realloc(void *p, size_t size)
{
        reallocs++;
        if (realloc_fails)
                return NULL;
        return __real_realloc(p, size);
}

typedef struct {
        uint64_t a, b;
} item;

int main(void)
{
        item *items = NULL;
        size_t cap = 0;

        /* nothing needed: no allocation */
        CHECK_INT(ARRAY_GROW(items, cap, 0, 16), 0);
        CHECK(items == NULL);
        CHECK_INT(cap, 0);
        CHECK_INT(reallocs, 0);

        /* first growth: the minimum, then doubling */
        CHECK_INT(ARRAY_GROW(items, cap, 1, 16), 0);
        CHECK(items != NULL);
        CHECK_INT(cap, 16);
        for (size_t i = 0; i < cap; i++)
                items[i] = (item){ i, ~i };
        CHECK_INT(ARRAY_GROW(items, cap, 16, 16), 0); /* room already */
        CHECK_INT(cap, 16);
        CHECK_INT(reallocs, 1);
        CHECK_INT(ARRAY_GROW(items, cap, 17, 16), 0);
        CHECK_INT(cap, 32);
        CHECK_INT(ARRAY_GROW(items, cap, 100, 16), 0); /* 32 -> 64 -> 128 in one call */
        CHECK_INT(cap, 128);
        CHECK_INT(reallocs, 3);
        for (size_t i = 0; i < 16; i++)
                CHECK(items[i].a == i && items[i].b == ~i); /* kept across growths */

        /* a failed realloc: -ENOMEM, the array and cap untouched */
        item *before = items;
        realloc_fails = true;
        CHECK_INT(ARRAY_GROW(items, cap, 129, 16), -ENOMEM);
        realloc_fails = false;
        CHECK(items == before);
        CHECK_INT(cap, 128);
        for (size_t i = 0; i < 16; i++)
                CHECK(items[i].a == i && items[i].b == ~i);

        /* sizes that do not fit a size_t: -ENOMEM before any realloc, untouched */
        unsigned n = reallocs;
        CHECK_INT(ARRAY_GROW(items, cap, SIZE_MAX / sizeof(item) + 1, 16), -ENOMEM);
        CHECK_INT(ARRAY_GROW(items, cap, SIZE_MAX, 16), -ENOMEM);
        CHECK_INT(reallocs, n);
        CHECK(items == before);
        CHECK_INT(cap, 128);
        free(items);

        /* min_cap 0 starts at 1; byte buffers; a capacity near SIZE_MAX stops at need */
        char *buf = NULL;
        size_t bcap = 0;
        CHECK_INT(ARRAY_GROW(buf, bcap, 1, 0), 0);
        CHECK_INT(bcap, 1);
        CHECK_INT(ARRAY_GROW(buf, bcap, 3, 0), 0);
        CHECK_INT(bcap, 4);
        CHECK_INT(ARRAY_GROW(buf, bcap, 1000, 1024), 0);
        CHECK_INT(bcap, 1024);
        free(buf);
        size_t big = SIZE_MAX / 2 + 2, small = 0;
        void *none = NULL;
        realloc_fails = true; /* must not really allocate SIZE_MAX bytes */
        CHECK_INT(array_grow(&none, &small, big, 1, SIZE_MAX / 2 + 1), -ENOMEM);
        realloc_fails = false;
        CHECK_INT(small, 0);
        CHECK_INT(array_grow(&none, &small, 1, 0, 1), -EINVAL); /* item size 0 */
        return test_done();
}
