/* SPDX-License-Identifier: Apache-2.0 */
/* Checked parsing of numbers and small tokens from untrusted text. No I/O, never logs. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
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
