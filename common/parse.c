/* SPDX-License-Identifier: Apache-2.0 */
/* Checked parsing of numbers and small tokens from untrusted text. No I/O, never logs. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_int(const char *s, int min, int max, int *ret)
{
        bool neg = false;
        uint64_t v;
        int r;

        if (!s)
                return -EINVAL;
        if (*s == '-') {
                neg = true;
                s++;
        }
        r = parse_u64(s, (uint64_t)INT64_MAX, &v);
        if (r < 0)
                return r;
        int64_t sv = neg ? -(int64_t)v : (int64_t)v;
        if (sv < min || sv > max)
                return -ERANGE;
        *ret = (int)sv;
        return 0;
}

int parse_hex_u64(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (!s)
                return -EINVAL;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        if (!*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                unsigned d;
                if (*p >= '0' && *p <= '9')
                        d = (unsigned)(*p - '0');
                else if (*p >= 'a' && *p <= 'f')
                        d = (unsigned)(*p - 'a' + 10);
                else if (*p >= 'A' && *p <= 'F')
                        d = (unsigned)(*p - 'A' + 10);
                else
                        return -EINVAL;
                if (v > (UINT64_MAX >> 4))
                        return -ERANGE;
                v = (v << 4) | d;
        }
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

char *parse_strip(char *s)
{
        size_t n = strlen(s);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                s[--n] = '\0';
        return s;
}

static bool is_lhex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool parse_is_pci_addr(const char *s)
{
        /* DDDD:BB:DD.F */
        static const char shape[] = "xxxx:xx:xx.x";

        if (!s || strlen(s) != sizeof(shape) - 1)
                return false;
        for (size_t i = 0; i < sizeof(shape) - 1; i++) {
                if (shape[i] == 'x' ? !is_lhex(s[i]) : s[i] != shape[i])
                        return false;
        }
        return s[11] <= '7';
}

int parse_hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int parse_mac(const char *s, uint8_t ret[6])
{
        uint8_t mac[6];

        if (!s || strlen(s) != 17)
                return -EINVAL;
        for (int i = 0; i < 6; i++) {
                const char *p = s + i * 3;
                if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
                        return -EINVAL;
                if (i < 5 && p[2] != ':')
                        return -EINVAL;
                char hex[3] = {p[0], p[1], 0};
                uint64_t v;
                if (parse_hex_u64(hex, 0xff, &v) < 0)
                        return -EINVAL;
                mac[i] = (uint8_t)v;
        }
        memcpy(ret, mac, 6);
        return 0;
}

int parse_size_kb(const char *s, size_t len, unsigned flags, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                uint64_t mul;
                bool lower; /* only with PARSE_SIZE_LOWER */
        } units[] = {
                { "k", 1, false },       { "K", 1, false },       { "kB", 1, false },      { "KB", 1, false },
                { "Ki", 1, false },      { "M", 1024, false },    { "MB", 1024, false },   { "Mi", 1024, false },
                { "G", 1 << 20, false }, { "GB", 1 << 20, false }, { "Gi", 1 << 20, false }, { "m", 1024, true },
                { "g", 1 << 20, true },
        };
        char num[24];
        size_t n = 0;
        uint64_t v, mul = 0;

        if (!s)
                return -EINVAL;
        while (n < len && s[n] >= '0' && s[n] <= '9')
                n++;
        if (n == 0 || n >= sizeof(num) || memchr(s, '\0', len))
                return -EINVAL;
        if (n == len) {
                if (!(flags & PARSE_SIZE_BYTES))
                        return -EINVAL;
        } else {
                for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && !mul; i++)
                        if ((!units[i].lower || (flags & PARSE_SIZE_LOWER)) && strlen(units[i].suffix) == len - n &&
                            memcmp(units[i].suffix, s + n, len - n) == 0)
                                mul = units[i].mul;
                if (!mul)
                        return -EINVAL;
        }
        memcpy(num, s, n);
        num[n] = '\0';
        int r = parse_u64(num, UINT64_MAX, &v);
        if (r < 0)
                return r;
        if (!mul) { /* bytes */
                if (v % 1024)
                        return -EINVAL;
                v /= 1024;
                mul = 1;
        }
        if (v > UINT64_MAX / mul)
                return -ERANGE;
        *ret = v * mul;
        return 0;
}

int format_size_kb(uint64_t kb, size_units u, char *buf, size_t size)
{
        if (kb && kb % (1024 * 1024) == 0)
                return snprintf(buf, size, "%" PRIu64 "%s", kb / (1024 * 1024), u.g);
        if (kb && kb % 1024 == 0)
                return snprintf(buf, size, "%" PRIu64 "%s", kb / 1024, u.m);
        return snprintf(buf, size, "%" PRIu64 "%s", kb, u.k);
}
