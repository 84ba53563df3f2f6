/* SPDX-License-Identifier: Apache-2.0 */
/* A kubeconfig's YAML read with libyaml's event parser into a jansson value (kube-yaml.h
 * says what is taken and refused). Owns nothing past the call; the parser's copies of the
 * text and every scalar are wiped before they are freed (a scalar may be the token).
 * Pure: no I/O, no globals, never logs. */
#include "kube-yaml.h"

#include "cleanup.h"
#include "errbuf.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <yaml.h>

typedef struct frame {
        json_t *v;      /* borrowed: owned by its parent, or the root */
        char *key;      /* a mapping's key waiting for its value */
        size_t key_line;
} frame;

typedef struct builder {
        json_t *root;
        frame stack[KUBE_YAML_MAX_DEPTH];
        size_t depth, nodes;
        char *err;
        size_t err_size;
} builder;

static void wipe_free(char *s)
{
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}

static int fail(builder *b, int r, size_t line, const char *what)
{
        errbuf_printf(b->err, b->err_size, "line %zu: %s", line, what);
        return r;
}

/* Hands v (a new reference) to the root, a sequence, or the mapping's pending key. A
 * scalar string where a mapping waits for a key becomes that key (v is then freed). */
static int add(builder *b, json_t *v, size_t line)
{
        if (!b->depth) {
                b->root = v;
                return 0;
        }
        frame *f = &b->stack[b->depth - 1];
        if (json_is_array(f->v)) {
                if (json_array_append_new(f->v, v) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (!f->key) {
                if (!json_is_string(v) || json_string_length(v) == 0) {
                        json_decref(v);
                        return fail(b, -EINVAL, line, "a mapping key must be a non-empty scalar");
                }
                char *k = strdup(json_string_value(v));
                explicit_bzero((char *)json_string_value(v), json_string_length(v));
                json_decref(v);
                if (!k)
                        return -ENOMEM;
                if (json_object_get(f->v, k)) {
                        char what[128];
                        snprintf(what, sizeof(what), "duplicate key \"%.64s\"", k);
                        wipe_free(k);
                        return fail(b, -EINVAL, line, what);
                }
                f->key = k;
                f->key_line = line;
                return 0;
        }
        int r = json_object_set_new(f->v, f->key, v);
        wipe_free(f->key);
        f->key = NULL;
        return r < 0 ? -ENOMEM : 0;
}

/* A scalar: null for a plain "", "~" and null (any of YAML's spellings), else a string
 * (a NUL in it refused: the kubeconfig's values are C strings). */
static int scalar(builder *b, const yaml_event_t *e, size_t line, json_t **ret)
{
        const char *s = (const char *)e->data.scalar.value;
        size_t n = e->data.scalar.length;
        const char *tag = (const char *)e->data.scalar.tag;

        if (memchr(s, '\0', n))
                return fail(b, -EINVAL, line, "a NUL character (\\0) in a value is not allowed");
        if (tag && strcmp(tag, YAML_STR_TAG) != 0 && strcmp(tag, YAML_NULL_TAG) != 0)
                return fail(b, -EINVAL, line, "tags other than !!str and !!null are not supported");
        bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag;
        if ((tag && strcmp(tag, YAML_NULL_TAG) == 0) ||
            (plain && (n == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
                       strcmp(s, "NULL") == 0)))
                *ret = json_null();
        else
                *ret = json_stringn(s, n);
        if (!*ret)
                return fail(b, -EINVAL, line, "a value that is not valid UTF-8");
        return 0;
}

static int collection_tag(builder *b, const yaml_char_t *tag, const char *want, size_t line)
{
        if (tag && strcmp((const char *)tag, want) != 0)
                return fail(b, -EINVAL, line, "tags other than !!map and !!seq on collections are not supported");
        return 0;
}

/* One event into the tree: 1 at the stream's end, 0 for more, negative errno. */
static int event(builder *b, const yaml_event_t *e, bool *seen_doc)
{
        size_t line = e->start_mark.line + 1;
        json_t *v = NULL;
        int r;

        switch (e->type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
                return 0;
        case YAML_STREAM_END_EVENT:
                return 1;
        case YAML_DOCUMENT_START_EVENT:
                if (*seen_doc)
                        return fail(b, -EINVAL, line, "several documents (a kubeconfig is one)");
                *seen_doc = true;
                return 0;
        case YAML_ALIAS_EVENT:
                return fail(b, -EINVAL, line, "aliases (*name) are not supported");
        case YAML_SCALAR_EVENT:
                if (++b->nodes > KUBE_YAML_MAX_NODES)
                        return fail(b, -E2BIG, line, "more than 65536 values");
                if ((r = scalar(b, e, line, &v)) < 0)
                        return r;
                return add(b, v, line);
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
                bool seq = e->type == YAML_SEQUENCE_START_EVENT;
                if (++b->nodes > KUBE_YAML_MAX_NODES)
                        return fail(b, -E2BIG, line, "more than 65536 values");
                if (b->depth >= KUBE_YAML_MAX_DEPTH)
                        return fail(b, -E2BIG, line, "nesting deeper than 32");
                if ((r = collection_tag(b, seq ? e->data.sequence_start.tag : e->data.mapping_start.tag,
                                        seq ? YAML_SEQ_TAG : YAML_MAP_TAG, line)) < 0)
                        return r;
                frame *parent = b->depth ? &b->stack[b->depth - 1] : NULL;
                if (parent && json_is_object(parent->v) && !parent->key)
                        return fail(b, -EINVAL, line, "a mapping key must be a non-empty scalar");
                if (!(v = seq ? json_array() : json_object()))
                        return -ENOMEM;
                if ((r = add(b, v, line)) < 0)
                        return r;
                b->stack[b->depth++] = (frame){.v = v};
                return 0;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                if (!b->depth)
                        return fail(b, -EINVAL, line, "an end without a start"); /* libyaml never sends it */
                b->depth--;
                return 0;
        default:
                return 0;
        }
}

/* libyaml's failure as text: what it found, where, and in what. */
static int parser_error(const yaml_parser_t *p, char *err, size_t err_size)
{
        const char *what = p->problem ? p->problem : "not YAML";

        if (p->error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        if (p->error == YAML_READER_ERROR)
                errbuf_printf(err, err_size, "byte %zu: %s", p->problem_offset, what);
        else if (p->context)
                errbuf_printf(err, err_size, "line %zu: %s (%s, line %zu)", p->problem_mark.line + 1, what, p->context,
                              p->context_mark.line + 1);
        else
                errbuf_printf(err, err_size, "line %zu: %s", p->problem_mark.line + 1, what);
        return -EINVAL;
}

/* The parser's copies of the text (raw bytes, decoded characters) wiped, then freed. */
static void parser_wipe_delete(yaml_parser_t *p)
{
        if (p->raw_buffer.start)
                explicit_bzero(p->raw_buffer.start, (size_t)(p->raw_buffer.end - p->raw_buffer.start));
        if (p->buffer.start)
                explicit_bzero(p->buffer.start, (size_t)(p->buffer.end - p->buffer.start));
        yaml_parser_delete(p);
}

static void event_wipe_delete(yaml_event_t *e)
{
        if (e->type == YAML_SCALAR_EVENT && e->data.scalar.value)
                explicit_bzero(e->data.scalar.value, e->data.scalar.length);
        yaml_event_delete(e);
}

int kube_yaml_parse(const char *text, size_t len, json_t **ret, char *err, size_t err_size)
{
        builder b = {.err = err, .err_size = err_size};
        yaml_parser_t p;
        bool seen_doc = false;
        int r = 0;

        if (len > KUBE_YAML_MAX_TEXT) {
                errbuf_printf(err, err_size, "larger than %d bytes", KUBE_YAML_MAX_TEXT);
                return -E2BIG;
        }
        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
        while (r == 0) {
                yaml_event_t e;
                if (!yaml_parser_parse(&p, &e)) {
                        r = parser_error(&p, err, err_size);
                        break;
                }
                r = event(&b, &e, &seen_doc);
                event_wipe_delete(&e);
        }
        parser_wipe_delete(&p);
        for (size_t i = 0; i < KUBE_YAML_MAX_DEPTH; i++)
                wipe_free(b.stack[i].key);
        if (r >= 0 && (!b.root || json_is_null(b.root))) {
                errbuf_printf(err, err_size, "empty document");
                r = -EINVAL;
        }
        if (r < 0) {
                if (r == -ENOMEM)
                        errbuf_printf(err, err_size, "out of memory");
                json_decref(b.root);
                return r;
        }
        *ret = b.root;
        return 0;
}
