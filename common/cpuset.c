/* SPDX-License-Identifier: Apache-2.0 */
/* CPU sets and the kernel's CPU list syntax. Pure value type, no I/O, never logs. */
#include "cpuset.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void cpuset_zero(cpuset *set) { memset(set, 0, sizeof(*set)); }

void cpuset_set(cpuset *set, unsigned cpu)
{
        if (cpu < CPUSET_MAX)
                set->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

void cpuset_clear(cpuset *set, unsigned cpu)
{
        if (cpu < CPUSET_MAX)
                set->bits[cpu / 64] &= ~(1ULL << (cpu % 64));
}

bool cpuset_has(const cpuset *set, unsigned cpu)
{
        return cpu < CPUSET_MAX && (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned cpuset_count(const cpuset *set)
{
        unsigned n = 0;
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                n += (unsigned)__builtin_popcountll(set->bits[i]);
        return n;
}

bool cpuset_empty(const cpuset *set)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                if (set->bits[i])
                        return false;
        return true;
}

bool cpuset_equal(const cpuset *a, const cpuset *b) { return memcmp(a, b, sizeof(*a)) == 0; }

bool cpuset_subset(const cpuset *a, const cpuset *b)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                if (a->bits[i] & ~b->bits[i])
                        return false;
        return true;
}

bool cpuset_intersects(const cpuset *a, const cpuset *b)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                if (a->bits[i] & b->bits[i])
                        return true;
        return false;
}

void cpuset_and(cpuset *ret, const cpuset *a, const cpuset *b)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] & b->bits[i];
}

void cpuset_or(cpuset *ret, const cpuset *a, const cpuset *b)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] | b->bits[i];
}

void cpuset_andnot(cpuset *ret, const cpuset *a, const cpuset *b)
{
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] & ~b->bits[i];
}

int cpuset_next(const cpuset *set, unsigned from)
{
        for (unsigned i = from / 64; i < CPUSET_MAX / 64 && from < CPUSET_MAX; i++) {
                unsigned long long w = set->bits[i];
                if (i == from / 64)
                        w &= ~0ULL << (from % 64);
                if (w)
                        return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
        }
        return -1;
}

/* Reads a decimal CPU id at *p (bounded by end); advances *p. */
static int read_cpu(const char **p, const char *end, unsigned *ret)
{
        unsigned v = 0;
        const char *q = *p;

        if (q >= end || *q < '0' || *q > '9')
                return -EINVAL;
        for (; q < end && *q >= '0' && *q <= '9'; q++) {
                v = v * 10 + (unsigned)(*q - '0');
                if (v >= CPUSET_MAX)
                        return -ERANGE;
        }
        *p = q;
        *ret = v;
        return 0;
}

int cpuset_parse(const char *s, size_t len, cpuset *ret)
{
        cpuset set;
        const char *p = s, *end = s + len;
        int r;

        /* one trailing newline is how sysfs ends every file */
        if (len > 0 && end[-1] == '\n')
                end--;
        cpuset_zero(&set);
        if (p == end) {
                *ret = set;
                return 0;
        }
        for (;;) {
                unsigned lo, hi;

                r = read_cpu(&p, end, &lo);
                if (r < 0)
                        return r;
                hi = lo;
                if (p < end && *p == '-') {
                        p++;
                        r = read_cpu(&p, end, &hi);
                        if (r < 0)
                                return r;
                        if (hi < lo)
                                return -EINVAL;
                }
                for (unsigned c = lo; c <= hi; c++)
                        cpuset_set(&set, c);
                if (p == end)
                        break;
                if (*p != ',')
                        return -EINVAL;
                p++;
        }
        *ret = set;
        return 0;
}

int cpuset_parse_mask(const char *s, size_t len, cpuset *ret)
{
        cpuset set;
        const char *end = s + len;
        unsigned bit = 0;

        if (len > 0 && end[-1] == '\n')
                end--;
        if (end == s)
                return -EINVAL;
        cpuset_zero(&set);
        /* from the least significant (rightmost) digit */
        for (const char *p = end; p > s;) {
                char c = *--p;
                unsigned d;

                if (c == ',')
                        continue;
                if (c >= '0' && c <= '9')
                        d = (unsigned)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (unsigned)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        d = (unsigned)(c - 'A' + 10);
                else
                        return -EINVAL;
                for (unsigned i = 0; i < 4; i++, bit++) {
                        if (!(d >> i & 1))
                                continue;
                        if (bit >= CPUSET_MAX)
                                return -ERANGE;
                        cpuset_set(&set, bit);
                }
        }
        *ret = set;
        return 0;
}

size_t cpuset_format(const cpuset *set, char *buf, size_t size)
{
        size_t n = 0;
        bool first = true;

        if (size > 0)
                buf[0] = '\0';
        for (int c = cpuset_next(set, 0); c >= 0;) {
                int hi = c;
                while (hi + 1 < CPUSET_MAX && cpuset_has(set, (unsigned)hi + 1))
                        hi++;
                char tmp[32];
                int k = hi == c ? snprintf(tmp, sizeof(tmp), "%s%d", first ? "" : ",", c)
                                : snprintf(tmp, sizeof(tmp), "%s%d-%d", first ? "" : ",", c, hi);
                if (n + (size_t)k < size)
                        memcpy(buf + n, tmp, (size_t)k + 1);
                else if (size > 0)
                        buf[n < size ? n : size - 1] = '\0';
                n += (size_t)k;
                first = false;
                c = cpuset_next(set, (unsigned)hi + 1);
        }
        return n;
}
