/* SPDX-License-Identifier: Apache-2.0 */
/* A bounded parser of kubectl's YAML subset into jansson values: lines first (indent,
 * comments stripped), then recursive descent over block mappings and sequences. Pure;
 * never logs. */
#include "kube-yaml.h"

#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct yline {
        size_t indent;
        const char *s; /* content after the indent, comment and trailing spaces removed */
        size_t len;
        unsigned no;   /* 1-based line number */
} yline;

typedef struct yp {
        yline *lines;
        size_t n, i;
        unsigned depth;
        char *err;
        size_t err_size;
        int error;
} yp;

static void fail(yp *p, int error, unsigned no, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fail(yp *p, int error, unsigned no, const char *fmt, ...)
{
        va_list ap;
        if (p->error)
                return; /* keep the first */
        p->error = error;
        if (!p->err || !p->err_size)
                return;
        int k = snprintf(p->err, p->err_size, "line %u: ", no);
        if (k < 0 || (size_t)k >= p->err_size)
                return;
        va_start(ap, fmt);
        vsnprintf(p->err + k, p->err_size - (size_t)k, fmt, ap);
        va_end(ap);
}

/* Length of s without a comment (" #" or a leading "#" outside quotes) and trailing blanks. */
static size_t content_len(const char *s, size_t len)
{
        bool sq = false, dq = false;
        size_t end = len;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (dq) {
                        if (c == '\\')
                                i++;
                        else if (c == '"')
                                dq = false;
                } else if (sq) {
                        if (c == '\'')
                                sq = false;
                } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
                        end = i;
                        break;
                } else if (c == '"' && (i == 0 || strchr(" :-[{,", s[i - 1]))) {
                        dq = true;
                } else if (c == '\'' && (i == 0 || strchr(" :-[{,", s[i - 1]))) {
                        sq = true;
                }
        }
        while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t'))
                end--;
        return end;
}

static int split_lines(yp *p, const char *text, size_t len)
{
        size_t cap = 0;
        unsigned no = 0;
        bool started = false;

        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(text + pos, '\n', len - pos);
                size_t end = nl ? (size_t)(nl - text) : len, l = end - pos, ind = 0;
                const char *s = text + pos;
                pos = end + 1;
                no++;
                if (no > KUBE_YAML_MAX_LINES) {
                        fail(p, -E2BIG, no, "more than %d lines", KUBE_YAML_MAX_LINES);
                        return -E2BIG;
                }
                if (l > 0 && s[l - 1] == '\r')
                        l--;
                while (ind < l && s[ind] == ' ')
                        ind++;
                if (ind < l && s[ind] == '\t') {
                        fail(p, -EINVAL, no, "a tab in the indentation");
                        return -EINVAL;
                }
                size_t cl = content_len(s + ind, l - ind);
                if (cl == 0)
                        continue;
                const char *c = s + ind;
                if (ind == 0 && cl >= 3 && memcmp(c, "---", 3) == 0 && (cl == 3 || c[3] == ' ')) {
                        if (started || cl > 3) {
                                fail(p, -EINVAL, no, started ? "several documents are not supported"
                                                             : "content after \"---\" is not supported");
                                return -EINVAL;
                        }
                        continue;
                }
                if (ind == 0 && cl == 3 && memcmp(c, "...", 3) == 0)
                        break;
                if (ind == 0 && c[0] == '%') {
                        fail(p, -EINVAL, no, "directives (%%YAML, %%TAG) are not supported");
                        return -EINVAL;
                }
                started = true;
                if (p->n == cap) {
                        size_t nc = cap ? cap * 2 : 64;
                        yline *nl2 = realloc(p->lines, nc * sizeof(*nl2));
                        if (!nl2)
                                return -ENOMEM;
                        p->lines = nl2;
                        cap = nc;
                }
                p->lines[p->n++] = (yline){.indent = ind, .s = c, .len = cl, .no = no};
        }
        return 0;
}

static bool is_item(const yline *l) { return l->s[0] == '-' && (l->len == 1 || l->s[1] == ' '); }

/* Offset of the ':' that makes l a "key: value" line, or -1. */
static long map_colon(const char *s, size_t len)
{
        size_t i = 0;

        if (len > 0 && (s[0] == '"' || s[0] == '\'')) {
                char q = s[0];
                for (i = 1; i < len; i++) {
                        if (q == '"' && s[i] == '\\') {
                                i++;
                                continue;
                        }
                        if (s[i] == q) {
                                if (q == '\'' && i + 1 < len && s[i + 1] == '\'') {
                                        i++;
                                        continue;
                                }
                                break;
                        }
                }
                i++;
                if (i < len && s[i] == ':' && (i + 1 == len || s[i + 1] == ' '))
                        return (long)i;
                return -1;
        }
        for (; i < len; i++)
                if (s[i] == ':' && (i + 1 == len || s[i + 1] == ' '))
                        return (long)i;
        return -1;
}

static size_t put_utf8(char *o, unsigned cp)
{
        if (cp < 0x80) {
                o[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                o[0] = (char)(0xc0 | cp >> 6);
                o[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
}

/* A scratch buffer wiped before it is freed: a scalar may be the token. */
typedef struct wbuf {
        char *p;
        size_t n;
} wbuf;

static void wbuf_wipe(wbuf *b)
{
        if (b->p) {
                explicit_bzero(b->p, b->n);
                free(b->p);
        }
}

/* A scalar (the whole of s) as a new JSON string (or null). */
static json_t *scalar(yp *p, unsigned no, const char *s, size_t len, bool key)
{
        __attribute__((cleanup(wbuf_wipe))) wbuf w = {0};
        char *buf;
        size_t o = 0;

        if (len == 0)
                return key ? NULL : json_null();
        if (s[0] == '&' || s[0] == '*') {
                fail(p, -EINVAL, no, "anchors and aliases are not supported");
                return NULL;
        }
        if (s[0] == '!') {
                fail(p, -EINVAL, no, "tags are not supported");
                return NULL;
        }
        if (!key && (s[0] == '|' || s[0] == '>')) {
                fail(p, -EINVAL, no, "block scalars (| and >) are not supported");
                return NULL;
        }
        if (s[0] == '{' || s[0] == '[') {
                if (!key && len == 2 && s[1] == (s[0] == '{' ? '}' : ']'))
                        return s[0] == '{' ? json_object() : json_array();
                fail(p, -EINVAL, no, "flow collections are not supported (only {} and [])");
                return NULL;
        }
        if (s[0] == '@' || s[0] == '`' || s[0] == '%') {
                fail(p, -EINVAL, no, "a plain scalar cannot start with '%c'", s[0]);
                return NULL;
        }
        buf = w.p = malloc(len + 1);
        w.n = len + 1;
        if (!buf) {
                fail(p, -ENOMEM, no, "out of memory");
                return NULL;
        }
        if (s[0] == '\'') {
                size_t i;
                for (i = 1; i < len; i++) {
                        if (s[i] == '\'') {
                                if (i + 1 < len && s[i + 1] == '\'') {
                                        buf[o++] = '\'';
                                        i++;
                                        continue;
                                }
                                break;
                        }
                        buf[o++] = s[i];
                }
                if (i != len - 1) {
                        fail(p, -EINVAL, no, "a single-quoted scalar must end the value (multi-line quotes are not supported)");
                        return NULL;
                }
        } else if (s[0] == '"') {
                size_t i;
                for (i = 1; i < len && s[i] != '"'; i++) {
                        if (s[i] != '\\') {
                                buf[o++] = s[i];
                                continue;
                        }
                        if (++i >= len)
                                break;
                        switch (s[i]) {
                        case '"': buf[o++] = '"'; break;
                        case '\\': buf[o++] = '\\'; break;
                        case '/': buf[o++] = '/'; break;
                        case 'n': buf[o++] = '\n'; break;
                        case 't': buf[o++] = '\t'; break;
                        case 'r': buf[o++] = '\r'; break;
                        case 'x':
                        case 'u': {
                                size_t nd = s[i] == 'x' ? 2 : 4;
                                unsigned cp = 0;
                                if (i + nd >= len) {
                                        fail(p, -EINVAL, no, "a short \\%c escape", s[i]);
                                        return NULL;
                                }
                                for (size_t k = 1; k <= nd; k++) {
                                        int h = parse_hex_digit(s[i + k]);
                                        if (h < 0) {
                                                fail(p, -EINVAL, no, "a bad \\%c escape", s[i]);
                                                return NULL;
                                        }
                                        cp = cp << 4 | (unsigned)h;
                                }
                                if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff)) {
                                        fail(p, -EINVAL, no, "escape \\%c%.*s is not allowed", s[i], (int)nd, s + i + 1);
                                        return NULL;
                                }
                                i += nd;
                                if (o + 3 > len) { /* an escape is never shorter than its UTF-8 */
                                        fail(p, -EINVAL, no, "a bad escape");
                                        return NULL;
                                }
                                o += put_utf8(buf + o, cp);
                                break;
                        }
                        default:
                                fail(p, -EINVAL, no, "escape \\%c is not supported", s[i]);
                                return NULL;
                        }
                }
                if (i != len - 1) {
                        fail(p, -EINVAL, no, "a double-quoted scalar must end the value (multi-line quotes are not supported)");
                        return NULL;
                }
        } else {
                if (!key && ((len == 1 && s[0] == '~') || (len == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) ||
                                                                       !memcmp(s, "NULL", 4)))))
                        return json_null();
                memcpy(buf, s, len);
                o = len;
        }
        json_t *v = json_stringn(buf, o);
        if (!v)
                fail(p, -EINVAL, no, "not valid UTF-8 (or a NUL byte)");
        return v;
}

static json_t *node(yp *p, size_t indent);

static json_t *sequence(yp *p, size_t indent)
{
        json_t *arr = json_array();

        if (!arr) {
                fail(p, -ENOMEM, 0, "out of memory");
                return NULL;
        }
        while (!p->error && p->i < p->n && p->lines[p->i].indent == indent && is_item(&p->lines[p->i])) {
                yline *l = &p->lines[p->i];
                json_t *item;
                if (json_array_size(arr) >= KUBE_YAML_MAX_LINES) {
                        fail(p, -E2BIG, l->no, "too many items");
                        break;
                }
                if (l->len == 1) {
                        p->i++;
                        item = p->i < p->n && p->lines[p->i].indent > indent ? node(p, p->lines[p->i].indent) : json_null();
                } else {
                        size_t skip = 1;
                        while (skip < l->len && l->s[skip] == ' ')
                                skip++;
                        /* "- rest": rest opens a node at its own column */
                        l->indent += skip;
                        l->s += skip;
                        l->len -= skip;
                        item = node(p, l->indent);
                }
                if (!item || json_array_append_new(arr, item) < 0) {
                        fail(p, -ENOMEM, 0, "out of memory");
                        break;
                }
        }
        if (p->error) {
                json_decref(arr);
                return NULL;
        }
        return arr;
}

static json_t *mapping(yp *p, size_t indent)
{
        json_t *obj = json_object();

        if (!obj) {
                fail(p, -ENOMEM, 0, "out of memory");
                return NULL;
        }
        while (!p->error && p->i < p->n && p->lines[p->i].indent == indent && !is_item(&p->lines[p->i])) {
                yline *l = &p->lines[p->i];
                long c = map_colon(l->s, l->len);
                json_t *k, *v;
                if (c < 0) {
                        fail(p, -EINVAL, l->no, "expected \"key: value\"");
                        break;
                }
                k = scalar(p, l->no, l->s, (size_t)c, true);
                if (!k) {
                        fail(p, -EINVAL, l->no, "a mapping key must be a non-empty scalar");
                        break;
                }
                if (!json_is_string(k) || json_object_get(obj, json_string_value(k))) {
                        fail(p, -EINVAL, l->no, "duplicate key \"%.64s\"", json_is_string(k) ? json_string_value(k) : "");
                        json_decref(k);
                        break;
                }
                const char *rest = l->s + c + 1;
                size_t rl = l->len - (size_t)c - 1;
                while (rl > 0 && *rest == ' ') {
                        rest++;
                        rl--;
                }
                unsigned no = l->no;
                p->i++;
                if (rl > 0)
                        v = scalar(p, no, rest, rl, false);
                else if (p->i < p->n && p->lines[p->i].indent > indent)
                        v = node(p, p->lines[p->i].indent);
                else if (p->i < p->n && p->lines[p->i].indent == indent && is_item(&p->lines[p->i]))
                        v = sequence(p, indent);
                else
                        v = json_null();
                if (!v || json_object_set_new(obj, json_string_value(k), v) < 0) {
                        json_decref(k);
                        fail(p, -ENOMEM, no, "out of memory");
                        break;
                }
                json_decref(k);
                if (p->i < p->n && p->lines[p->i].indent > indent) {
                        fail(p, -EINVAL, p->lines[p->i].no, "unexpected indentation");
                        break;
                }
        }
        if (p->error) {
                json_decref(obj);
                return NULL;
        }
        return obj;
}

static json_t *node(yp *p, size_t indent)
{
        yline *l = &p->lines[p->i];
        json_t *v;

        if (++p->depth > KUBE_YAML_MAX_DEPTH) {
                fail(p, -E2BIG, l->no, "nesting deeper than %d", KUBE_YAML_MAX_DEPTH);
                return NULL;
        }
        if (is_item(l))
                v = sequence(p, indent);
        else if (map_colon(l->s, l->len) >= 0)
                v = mapping(p, indent);
        else {
                p->i++;
                v = scalar(p, l->no, l->s, l->len, false);
        }
        p->depth--;
        return v;
}

int kube_yaml_parse(const char *text, size_t len, json_t **ret, char *err, size_t err_size)
{
        yp p = {.err = err, .err_size = err_size};
        json_t *v = NULL;
        int r;

        if (err && err_size)
                err[0] = '\0';
        if (!text || len > KUBE_YAML_MAX_TEXT) {
                if (err && err_size)
                        snprintf(err, err_size, "larger than %d bytes", KUBE_YAML_MAX_TEXT);
                return -E2BIG;
        }
        if (memchr(text, '\0', len)) {
                if (err && err_size)
                        snprintf(err, err_size, "a NUL byte");
                return -EINVAL;
        }
        r = split_lines(&p, text, len);
        if (r < 0) {
                free(p.lines);
                return p.error ? p.error : r;
        }
        if (p.n == 0) {
                free(p.lines);
                if (err && err_size)
                        snprintf(err, err_size, "empty document");
                return -EINVAL;
        }
        v = node(&p, p.lines[0].indent);
        if (!p.error && p.i < p.n)
                fail(&p, -EINVAL, p.lines[p.i].no, "unexpected content (bad indentation?)");
        r = p.error;
        free(p.lines);
        if (r < 0 || !v) {
                json_decref(v);
                return r < 0 ? r : -EINVAL;
        }
        *ret = v;
        return 0;
}
