/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers of procfs/sysfs file contents. Pure functions over (buffer, length): no I/O,
 * no globals, never log. Every loop is bounded by the buffer length. */
#include "procparse.h"

#include "parse.h"

#include <errno.h>
#include <string.h>

/* Copy at most size-1 bytes of [s, s+n) into buf; true when it was cut. */
static bool copy_field(char *buf, size_t size, const char *s, size_t n)
{
        bool cut = n >= size;
        if (cut)
                n = size - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        return cut;
}

/* The line starting at *pos: sets [*ret_start, *ret_end) (without '\n'), advances *pos. */
static bool next_line(const char *buf, size_t len, size_t *pos, size_t *ret_start, size_t *ret_end)
{
        if (*pos >= len)
                return false;
        const char *s = buf + *pos;
        const char *nl = memchr(s, '\n', len - *pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        *ret_start = *pos;
        *ret_end = end;
        *pos = nl ? end + 1 : len;
        return true;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Split [s, e) on blanks into at most max fields; returns the field count. */
static size_t split_fields(const char *s, const char *e, const char **f, size_t *fl, size_t max)
{
        size_t n = 0;
        while (s < e && n < max) {
                while (s < e && is_space(*s))
                        s++;
                if (s >= e)
                        break;
                const char *b = s;
                while (s < e && !is_space(*s))
                        s++;
                f[n] = b;
                fl[n] = (size_t)(s - b);
                n++;
        }
        return n;
}

/* Decode /proc/mounts octal escapes (\040 space, \011 tab, \012 newline, \134 '\'). */
static bool copy_unescape(char *buf, size_t size, const char *s, size_t n)
{
        size_t o = 0;
        bool cut = false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                /* a backslash and three octal digits */
                if (c == '\\' && i + 3 < n) {
                        const char *d = s + i + 1;
                        if (d[0] >= '0' && d[0] <= '3' && d[1] >= '0' && d[1] <= '7' && d[2] >= '0' &&
                            d[2] <= '7') {
                                c = (char)((d[0] - '0') * 64 + (d[1] - '0') * 8 + (d[2] - '0'));
                                i += 3;
                        }
                }
                if (o + 1 >= size) {
                        cut = true;
                        break;
                }
                buf[o++] = c;
        }
        buf[o] = '\0';
        return cut;
}

int procparse_mount_next(const char *buf, size_t len, size_t *pos, procparse_mount *ret)
{
        size_t s, e;
        const char *f[4];
        size_t fl[4];
        procparse_mount m = {0};

        if (!next_line(buf, len, pos, &s, &e))
                return 0;
        if (split_fields(buf + s, buf + e, f, fl, 4) < 4)
                return -EINVAL;
        m.truncated |= copy_unescape(m.source, sizeof(m.source), f[0], fl[0]);
        m.truncated |= copy_unescape(m.target, sizeof(m.target), f[1], fl[1]);
        m.truncated |= copy_field(m.fstype, sizeof(m.fstype), f[2], fl[2]);
        m.truncated |= copy_field(m.options, sizeof(m.options), f[3], fl[3]);
        *ret = m;
        return 1;
}

int procparse_mount_option(const char *options, const char *key, char *buf, size_t size)
{
        size_t kl = strlen(key);
        const char *p = options;

        while (p && *p) {
                const char *comma = strchr(p, ',');
                size_t n = comma ? (size_t)(comma - p) : strlen(p);
                if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
                        if (n - kl - 1 >= size)
                                return -ENAMETOOLONG;
                        memcpy(buf, p + kl + 1, n - kl - 1);
                        buf[n - kl - 1] = '\0';
                        return 1;
                }
                p = comma ? comma + 1 : NULL;
        }
        return 0;
}

int procparse_size_kb(const char *s, uint64_t *ret)
{
        return parse_size_kb(s, s ? strlen(s) : 0, PARSE_SIZE_LOWER | PARSE_SIZE_BYTES, ret);
}

static bool key_wanted(const char *const *keys, const char *s, size_t n)
{
        for (size_t i = 0; keys[i]; i++)
                if (strlen(keys[i]) == n && memcmp(keys[i], s, n) == 0)
                        return true;
        return false;
}

int procparse_cmdline(const char *buf, size_t len, const char *const *keys,
                      procparse_cmdline_flag *ret, size_t max, size_t *ret_n)
{
        size_t n = 0, cut = 0;
        bool inq = false;

        /* first pass: reject an unterminated quote before storing anything */
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '"')
                        inq = !inq;
        if (inq)
                return -EINVAL;

        size_t i = 0;
        while (i < len) {
                while (i < len && (is_space(buf[i]) || buf[i] == '\n' || buf[i] == '\0'))
                        i++;
                if (i >= len)
                        break;
                /* token [b, i): spaces inside quotes belong to it */
                size_t b = i;
                inq = false;
                while (i < len && buf[i] != '\0' && (inq || !(is_space(buf[i]) || buf[i] == '\n'))) {
                        if (buf[i] == '"')
                                inq = !inq;
                        i++;
                }
                const char *tok = buf + b;
                size_t tl = i - b;
                const char *eq = memchr(tok, '=', tl);
                size_t kl = eq ? (size_t)(eq - tok) : tl;
                /* a quoted key ("\"a b\"=c") is unusual; keys are compared unquoted */
                if (!key_wanted(keys, tok, kl))
                        continue;
                if (n >= max) {
                        cut++;
                        continue;
                }
                procparse_cmdline_flag fl = {0};
                bool c = copy_field(fl.name, sizeof(fl.name), tok, kl);
                if (eq) {
                        const char *v = eq + 1;
                        size_t vl = tl - kl - 1;
                        /* strip the quotes: "x y" -> x y */
                        char tmp[sizeof(fl.value)];
                        size_t o = 0;
                        for (size_t k = 0; k < vl; k++) {
                                if (v[k] == '"')
                                        continue;
                                if (o + 1 >= sizeof(tmp)) {
                                        c = true;
                                        break;
                                }
                                tmp[o++] = v[k];
                        }
                        tmp[o] = '\0';
                        memcpy(fl.value, tmp, o + 1);
                        fl.has_value = true;
                }
                if (c)
                        cut++;
                ret[n++] = fl;
        }
        *ret_n = n;
        return (int)(cut > INT32_MAX ? INT32_MAX : cut);
}

static int parse_dec_field(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
        char tmp[24];
        if (n == 0 || n >= sizeof(tmp))
                return -EINVAL;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        return parse_u64(tmp, max, ret);
}

int procparse_uevent_get(const char *buf, size_t len, const char *key, char *val, size_t size)
{
        size_t pos = 0, s, e, kl = strlen(key);

        while (next_line(buf, len, &pos, &s, &e)) {
                if (e - s > kl && memcmp(buf + s, key, kl) == 0 && buf[s + kl] == '=') {
                        size_t n = e - s - kl - 1;
                        if (n >= size)
                                return -ENAMETOOLONG;
                        if (memchr(buf + s + kl + 1, '\0', n))
                                return -EINVAL;
                        memcpy(val, buf + s + kl + 1, n);
                        val[n] = '\0';
                        return 1;
                }
        }
        return 0;
}

int procparse_pci_id(const char *s, uint16_t *ret_vendor, uint16_t *ret_device)
{
        uint64_t v, d;
        char a[8], b[8];
        const char *colon = s ? strchr(s, ':') : NULL;

        if (!colon || colon - s != 4 || strlen(colon + 1) != 4)
                return -EINVAL;
        memcpy(a, s, 4);
        a[4] = '\0';
        memcpy(b, colon + 1, 5);
        if (a[0] == '0' && (a[1] == 'x' || a[1] == 'X'))
                return -EINVAL;
        if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X'))
                return -EINVAL;
        if (parse_hex_u64(a, 0xffff, &v) < 0 || parse_hex_u64(b, 0xffff, &d) < 0)
                return -EINVAL;
        *ret_vendor = (uint16_t)v;
        *ret_device = (uint16_t)d;
        return 0;
}

int procparse_meminfo(const char *buf, size_t len, const char *key, uint64_t *ret)
{
        size_t pos = 0, s, e, kl = strlen(key);
        const char *f[3];
        size_t fl[3];

        while (next_line(buf, len, &pos, &s, &e)) {
                if (e - s > kl && memcmp(buf + s, key, kl) == 0 && buf[s + kl] == ':') {
                        size_t nf = split_fields(buf + s + kl + 1, buf + e, f, fl, 3);
                        if (nf < 1 || nf > 2)
                                return -EINVAL;
                        return parse_dec_field(f[0], fl[0], UINT64_MAX, ret) < 0 ? -EINVAL : 1;
                }
        }
        return 0;
}

static int parse_hex64_field(const char *s, size_t n, uint64_t *ret)
{
        char tmp[24];
        if (n == 0 || n >= sizeof(tmp))
                return -EINVAL;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        return parse_hex_u64(tmp, UINT64_MAX, ret);
}

int procparse_pci_prefetch_bar(const char *buf, size_t len, uint64_t *ret_start, uint64_t *ret_end)
{
        size_t pos = 0, s, e;
        const char *f[3];
        size_t fl[3];
        unsigned line = 0;

        /* the first six lines are BARs 0-5, then the ROM and bridge windows */
        while (next_line(buf, len, &pos, &s, &e) && line < 6) {
                uint64_t a, b, flags;
                line++;
                if (split_fields(buf + s, buf + e, f, fl, 3) != 3)
                        return -EINVAL;
                if (parse_hex64_field(f[0], fl[0], &a) < 0 || parse_hex64_field(f[1], fl[1], &b) < 0 ||
                    parse_hex64_field(f[2], fl[2], &flags) < 0)
                        return -EINVAL;
                /* IORESOURCE_MEM 0x200, IORESOURCE_PREFETCH 0x2000 */
                if ((flags & 0x200) && (flags & 0x2000) && b > a) {
                        *ret_start = a;
                        *ret_end = b;
                        return 1;
                }
        }
        return 0;
}

int procparse_pat_lookup(const char *buf, size_t len, uint64_t start, uint64_t end,
                         char *type, size_t size)
{
        size_t pos = 0, s, e;

        (void)end;
        while (next_line(buf, len, &pos, &s, &e)) {
                const char *l = buf + s;
                size_t n = e - s;
                const char *m = n > 5 ? memchr(l, '[', n) : NULL;
                if (!m)
                        continue;
                const char *close = memchr(m, ']', (size_t)(l + n - m));
                if (!close || close - m < 6 || memcmp(m, "[mem ", 5) != 0)
                        continue;
                const char *dash = memchr(m + 5, '-', (size_t)(close - m - 5));
                uint64_t a, b;
                if (!dash || parse_hex64_field(m + 5, (size_t)(dash - m - 5), &a) < 0 ||
                    parse_hex64_field(dash + 1, (size_t)(close - dash - 1), &b) < 0)
                        continue;
                if (start < a || start >= b)
                        continue;
                const char *t = close + 1;
                while (t < l + n && is_space(*t))
                        t++;
                size_t tl = (size_t)(l + n - t);
                while (tl && is_space(t[tl - 1]))
                        tl--;
                if (tl == 0)
                        continue;
                copy_field(type, size, t, tl);
                return 1;
        }
        return 0;
}

int procparse_hugepage_dirname(const char *name, uint64_t *ret_kb)
{
        char num[24];
        size_t n;

        if (strncmp(name, "hugepages-", 10) != 0)
                return -EINVAL;
        name += 10;
        n = strlen(name);
        if (n < 3 || n - 2 >= sizeof(num) || strcmp(name + n - 2, "kB") != 0)
                return -EINVAL;
        memcpy(num, name, n - 2);
        num[n - 2] = '\0';
        uint64_t v;
        if (parse_u64(num, UINT64_MAX / 1024, &v) < 0 || v == 0)
                return -EINVAL;
        *ret_kb = v;
        return 0;
}

int procparse_indexed_name(const char *name, const char *prefix, unsigned max, unsigned *ret)
{
        size_t pl = strlen(prefix);
        uint64_t v;

        if (strncmp(name, prefix, pl) != 0)
                return -EINVAL;
        name += pl;
        if (!*name || (name[0] == '0' && name[1]))
                return -EINVAL; /* no leading zeros: "cpu01" is not a CPU */
        if (parse_u64(name, max, &v) < 0)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}
