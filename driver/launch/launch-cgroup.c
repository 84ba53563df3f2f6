/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers for /proc/self/cgroup, mountinfo and cgroup control files. Pure: no I/O, no
 * globals, never logs; every field is length-checked against the limits in the header. */
#include "launch-cgroup.h"

#include "parse.h"

#include <errno.h>
#include <string.h>

typedef struct span {
        const char *p, *end;
} span;

/* Next line of t (without its '\n'); false at the end. */
static bool next_line(span *t, span *ret)
{
        if (t->p >= t->end)
                return false;
        const char *nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
        ret->p = t->p;
        ret->end = nl ? nl : t->end;
        t->p = nl ? nl + 1 : t->end;
        return true;
}

/* Next field separated by sep; false when none is left. */
static bool next_field(span *t, char sep, span *ret)
{
        if (t->p > t->end)
                return false;
        const char *s = memchr(t->p, sep, (size_t)(t->end - t->p));
        ret->p = t->p;
        ret->end = s ? s : t->end;
        t->p = s ? s + 1 : t->end + 1;
        return true;
}

static bool span_has_nul(span s) { return memchr(s.p, '\0', (size_t)(s.end - s.p)) != NULL; }

static int span_copy(span s, char *buf, size_t size)
{
        size_t n = (size_t)(s.end - s.p);
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, s.p, n);
        buf[n] = '\0';
        return 0;
}

static bool span_eq(span s, const char *lit)
{
        size_t n = strlen(lit);
        return (size_t)(s.end - s.p) == n && memcmp(s.p, lit, n) == 0;
}

int lcg_parse_self(const char *text, size_t len, lcg_self *ret)
{
        span t = { text, text + len }, line;
        lcg_self tmp; /* parsed here first so that *ret stays untouched on failure */
        int r;

        tmp.n = 0;
        if (span_has_nul(t))
                return -EINVAL;
        while (next_line(&t, &line)) {
                span id, ctl, path;
                char idbuf[16];
                uint64_t v;

                if (line.p == line.end)
                        continue;
                if (!next_field(&line, ':', &id) || !next_field(&line, ':', &ctl))
                        return -EINVAL;
                /* the path is the rest of the line: it may itself hold ':' */
                path.p = line.p;
                path.end = line.end;
                if (path.p > path.end || path.p == path.end || *path.p != '/')
                        return -EINVAL;
                if (tmp.n >= LCG_MAX_ENTRIES)
                        return -E2BIG;
                if (span_copy(id, idbuf, sizeof(idbuf)) < 0)
                        return -EINVAL;
                r = parse_u64(idbuf, 65535, &v);
                if (r < 0)
                        return -EINVAL;
                lcg_entry *e = &tmp.e[tmp.n];
                e->id = (unsigned)v;
                r = span_copy(ctl, e->controllers, sizeof(e->controllers));
                if (r < 0)
                        return -EINVAL;
                r = span_copy(path, e->path, sizeof(e->path));
                if (r < 0)
                        return r;
                tmp.n++;
        }
        *ret = tmp;
        return 0;
}

/* Decode mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 '\'). */
static int unescape_copy(span s, char *buf, size_t size)
{
        size_t n = 0;

        for (const char *p = s.p; p < s.end; p++) {
                char c = *p;
                if (c == '\\' && s.end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
                    p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
                        c = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                }
                if (c == '\0')
                        return -EINVAL;
                if (n + 1 >= size)
                        return -ENAMETOOLONG;
                buf[n++] = c;
        }
        buf[n] = '\0';
        return 0;
}

int lcg_parse_mountinfo(const char *text, size_t len, lcg_mounts *ret)
{
        span t = { text, text + len }, line;
        lcg_mounts tmp;
        int r;

        tmp.n = 0;
        while (next_line(&t, &line)) {
                span f[6], fstype, source, super, sep;
                unsigned i;

                if (line.p == line.end)
                        continue;
                /* id parent maj:min root point options [optional...] - fstype source super */
                for (i = 0; i < 6; i++)
                        if (!next_field(&line, ' ', &f[i]))
                                return -EINVAL;
                sep = f[5];
                while (!span_eq(sep, "-")) {
                        if (!next_field(&line, ' ', &sep))
                                return -EINVAL;
                }
                if (!next_field(&line, ' ', &fstype) || !next_field(&line, ' ', &source))
                        return -EINVAL;
                super.p = line.p;
                super.end = line.end;
                if (super.p > super.end)
                        super.p = super.end;
                lcg_fstype type;
                if (span_eq(fstype, "cgroup"))
                        type = LCG_FS_CGROUP1;
                else if (span_eq(fstype, "cgroup2"))
                        type = LCG_FS_CGROUP2;
                else if (span_eq(fstype, "hugetlbfs"))
                        type = LCG_FS_HUGETLBFS;
                else
                        continue;
                if (tmp.n >= LCG_MAX_MOUNTS)
                        continue;
                lcg_mount *m = &tmp.m[tmp.n];
                m->type = type;
                r = unescape_copy(f[3], m->root, sizeof(m->root));
                if (r == -ENAMETOOLONG)
                        continue; /* a mount we could not use anyway */
                if (r < 0)
                        return r;
                r = unescape_copy(f[4], m->point, sizeof(m->point));
                if (r == -ENAMETOOLONG)
                        continue;
                if (r < 0)
                        return r;
                if (m->root[0] != '/' || m->point[0] != '/')
                        return -EINVAL;
                if (unescape_copy(super, m->super, sizeof(m->super)) < 0)
                        continue;
                tmp.n++;
        }
        *ret = tmp;
        return 0;
}

bool lcg_has_token(const char *list, const char *token)
{
        size_t n = strlen(token);

        if (n == 0)
                return false;
        for (const char *p = list; p && *p;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                if (l == n && memcmp(p, token, n) == 0)
                        return true;
                p = c ? c + 1 : NULL;
        }
        return false;
}

/* Join a mount point and the cgroup path below the mount's root. */
static int join_below(const lcg_mount *m, const char *path, char *buf, size_t size)
{
        size_t rl = strlen(m->root);
        const char *rest;

        if (strcmp(m->root, "/") == 0)
                rest = path;
        else if (strncmp(path, m->root, rl) == 0 && (path[rl] == '\0' || path[rl] == '/'))
                rest = path + rl;
        else
                return -EXDEV;
        if (strstr(rest, "/..") || strstr(rest, "/./"))
                return -EXDEV;
        if (strcmp(rest, "/") == 0)
                rest = "";
        size_t pl = strlen(m->point);
        if (pl == 1) /* mounted at "/" */
                pl = 0;
        if (pl + strlen(rest) + 1 > size)
                return -ENAMETOOLONG;
        memcpy(buf, m->point, pl);
        strcpy(buf + pl, rest);
        if (buf[0] == '\0')
                strcpy(buf, "/");
        return 0;
}

/* The first mount of type (with controller among its options, when given) under which
 * path lies, and path's directory there. The last join error, or -ENOENT for no mount. */
static int find_mount(const lcg_mounts *mounts, lcg_fstype type, const char *controller, const char *path, char *dir,
                      size_t size, const lcg_mount **ret)
{
        int r = -ENOENT;

        for (unsigned i = 0; i < mounts->n; i++) {
                const lcg_mount *m = &mounts->m[i];
                if (m->type != type || (controller && !lcg_has_token(m->super, controller)))
                        continue;
                r = join_below(m, path, dir, size);
                if (r == 0) {
                        *ret = m;
                        return 0;
                }
        }
        return r;
}

int lcg_resolve(const lcg_self *self, const lcg_mounts *mounts, const char *controller,
                char *ret_dir, size_t dir_size, char *ret_mount_point, size_t mp_size,
                bool *ret_v2)
{
        char dir[LCG_PATH_MAX];
        const lcg_mount *found = NULL;
        const char *path = NULL;
        bool v2 = false;
        int r = -ENOENT;

        /* v1 first: a controller bound to a v1 hierarchy is not available in v2. */
        for (unsigned i = 0; i < self->n && !path; i++)
                if (self->e[i].id != 0 && lcg_has_token(self->e[i].controllers, controller))
                        path = self->e[i].path;
        if (path) {
                r = find_mount(mounts, LCG_FS_CGROUP1, controller, path, dir, sizeof(dir), &found);
                if (r < 0)
                        return r;
        } else {
                for (unsigned i = 0; i < self->n && !path; i++)
                        if (self->e[i].id == 0 && self->e[i].controllers[0] == '\0')
                                path = self->e[i].path;
                if (!path)
                        return -ENOENT;
                r = find_mount(mounts, LCG_FS_CGROUP2, NULL, path, dir, sizeof(dir), &found);
                if (r < 0)
                        return r;
                v2 = true;
        }
        if (strlen(dir) >= dir_size || (ret_mount_point && strlen(found->point) >= mp_size))
                return -ENAMETOOLONG;
        if (ret_dir)
                strcpy(ret_dir, dir);
        if (ret_mount_point)
                strcpy(ret_mount_point, found->point);
        if (ret_v2)
                *ret_v2 = v2;
        return 0;
}

/* Copy text, strip the trailing newline, reject embedded control characters. */
static int small_copy(const char *text, char *buf, size_t size)
{
        size_t n = strnlen(text, size);
        if (n >= size)
                return -EINVAL;
        memcpy(buf, text, n + 1);
        parse_strip(buf);
        return 0;
}

/* A number in [min, max], or the word meaning word_value. -EINVAL otherwise. */
static int num_or_word(const char *s, const char *word, uint64_t word_value, uint64_t min, uint64_t max,
                       uint64_t *ret)
{
        uint64_t v;

        if (strcmp(s, word) == 0)
                v = word_value;
        else if (parse_u64(s, max, &v) < 0 || v < min)
                return -EINVAL;
        *ret = v;
        return 0;
}

int lcg_parse_cpu_max(const char *text, uint64_t *ret_quota, uint64_t *ret_period)
{
        char buf[64], *sp;
        uint64_t q, p;

        if (small_copy(text, buf, sizeof(buf)) < 0)
                return -EINVAL;
        sp = strchr(buf, ' ');
        if (!sp)
                return -EINVAL;
        *sp = '\0';
        if (num_or_word(buf, "max", LCG_NO_QUOTA, 1, UINT64_MAX - 1, &q) < 0 ||
            parse_u64(sp + 1, UINT64_MAX - 1, &p) < 0 || p == 0)
                return -EINVAL;
        *ret_quota = q;
        *ret_period = p;
        return 0;
}

int lcg_parse_v1_quota(const char *text, uint64_t *ret_quota)
{
        char buf[64];

        if (small_copy(text, buf, sizeof(buf)) < 0)
                return -EINVAL;
        return num_or_word(buf, "-1", LCG_NO_QUOTA, 1, UINT64_MAX - 1, ret_quota);
}

int lcg_parse_cpu_stat(const char *text, size_t len, lcg_cpu_stat *ret)
{
        span t = { text, text + len }, line;
        lcg_cpu_stat s = { 0 };

        if (span_has_nul(t))
                return -EINVAL;
        while (next_line(&t, &line)) {
                span key, val;
                char k[32], v[32];
                uint64_t n;

                if (line.p == line.end)
                        continue;
                if (!next_field(&line, ' ', &key) || !next_field(&line, ' ', &val))
                        return -EINVAL;
                if (span_copy(key, k, sizeof(k)) < 0)
                        continue; /* a key we do not know; longer than any we do */
                if (span_copy(val, v, sizeof(v)) < 0 || parse_u64(v, UINT64_MAX, &n) < 0)
                        return -EINVAL;
                if (strcmp(k, "nr_periods") == 0)
                        s.nr_periods = n;
                else if (strcmp(k, "nr_throttled") == 0)
                        s.nr_throttled = n;
                else if (strcmp(k, "throttled_usec") == 0)
                        s.throttled_usec = n;
                else if (strcmp(k, "throttled_time") == 0)
                        s.throttled_usec = n / 1000;
        }
        *ret = s;
        return 0;
}

int lcg_parse_limit(const char *text, uint64_t *ret)
{
        char buf[64];

        if (small_copy(text, buf, sizeof(buf)) < 0)
                return -EINVAL;
        return num_or_word(buf, "max", UINT64_MAX, 0, UINT64_MAX, ret);
}

int lcg_hugetlbfs_pagesize_kb(const char *super, uint64_t *ret_kb)
{
        for (const char *p = super; p && *p;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                if (l > 9 && memcmp(p, "pagesize=", 9) == 0) {
                        uint64_t v;
                        if (parse_size_kb(p + 9, l - 9, PARSE_SIZE_LOWER, &v) < 0 || v == 0)
                                return -EINVAL;
                        *ret_kb = v;
                        return 0;
                }
                p = c ? c + 1 : NULL;
        }
        return -ENOENT;
}

int lcg_parse_memlock(const char *text, size_t len, uint64_t *ret)
{
        static const char key[] = "Max locked memory";
        span t = { text, text + len }, line;

        if (span_has_nul(t))
                return -EINVAL;
        while (next_line(&t, &line)) {
                size_t n = (size_t)(line.end - line.p);
                char buf[128], *p, *e;
                uint64_t v;

                if (n < sizeof(key) - 1 || memcmp(line.p, key, sizeof(key) - 1) != 0)
                        continue;
                if (n >= sizeof(buf))
                        return -EINVAL;
                memcpy(buf, line.p + sizeof(key) - 1, n - (sizeof(key) - 1));
                buf[n - (sizeof(key) - 1)] = '\0';
                p = buf + strspn(buf, " \t");
                e = p + strcspn(p, " \t");
                if (e == p)
                        return -EINVAL;
                *e = '\0';
                if (strcmp(p, "unlimited") == 0)
                        v = UINT64_MAX;
                else if (parse_u64(p, UINT64_MAX - 1, &v) < 0)
                        return -EINVAL;
                *ret = v;
                return 0;
        }
        return -ENOENT;
}

int lcg_parse_capeff(const char *text, size_t len, uint64_t *ret)
{
        static const char key[] = "CapEff:";
        span t = { text, text + len }, line;

        if (span_has_nul(t))
                return -EINVAL;
        while (next_line(&t, &line)) {
                size_t n = (size_t)(line.end - line.p);
                char buf[32], *p;
                uint64_t v;

                if (n < sizeof(key) - 1 || memcmp(line.p, key, sizeof(key) - 1) != 0)
                        continue;
                n -= sizeof(key) - 1;
                if (n >= sizeof(buf))
                        return -EINVAL;
                memcpy(buf, line.p + sizeof(key) - 1, n);
                buf[n] = '\0';
                p = buf + strspn(buf, " \t");
                p[strcspn(p, " \t\r")] = '\0';
                if (*p == '\0' || strlen(p) > 16 || strspn(p, "0123456789abcdefABCDEF") != strlen(p) ||
                    parse_hex_u64(p, UINT64_MAX, &v) < 0)
                        return -EINVAL;
                *ret = v;
                return 0;
        }
        return -ENOENT;
}
