/* SPDX-License-Identifier: Apache-2.0 */
/* Check verdicts: building the list and printing it in the human and JSON forms. The
 * list owns its strings and evidence; printing to the FILE given is the only I/O. */
#include "verdict.h"

#include "array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[_VERDICT_MAX] = {"pass", "warn", "fail", "skip"};
static const char *const level_tags[_VERDICT_MAX] = {"PASS", "WARN", "FAIL", "SKIP"};

const char *verdict_level_name(verdict_level level)
{
        return (unsigned)level < _VERDICT_MAX ? level_names[level] : "?";
}

int verdict_add(verdict_list *l, const char *check, verdict_level level, json_t *evidence,
                const char *remedy, const char *fmt, ...)
{
        verdict v = {.level = level};
        va_list ap;
        int n;

        if (!evidence)
                evidence = json_object();
        if (ARRAY_GROW(l->items, l->cap, l->n + 1, 16) < 0) {
                json_decref(evidence);
                return -ENOMEM;
        }
        va_start(ap, fmt);
        n = vasprintf(&v.message, fmt, ap);
        va_end(ap);
        v.check = strdup(check);
        v.remedy = remedy ? strdup(remedy) : NULL;
        v.evidence = evidence;
        if (n < 0 || !v.check || !evidence || (remedy && !v.remedy)) {
                if (n >= 0)
                        free(v.message);
                free(v.check);
                free(v.remedy);
                json_decref(evidence);
                return -ENOMEM;
        }
        l->items[l->n++] = v;
        return 0;
}

void verdict_list_free(verdict_list *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].check);
                free(l->items[i].message);
                free(l->items[i].remedy);
                json_decref(l->items[i].evidence);
        }
        free(l->items);
        *l = (verdict_list){0};
}

void verdict_count(const verdict_list *l, unsigned ret_counts[_VERDICT_MAX])
{
        unsigned c[_VERDICT_MAX] = {0};
        for (size_t i = 0; i < l->n; i++)
                if ((unsigned)l->items[i].level < _VERDICT_MAX)
                        c[l->items[i].level]++;
        memcpy(ret_counts, c, sizeof(c));
}

int verdict_exit_code(const verdict_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].level == VERDICT_FAIL)
                        return 1;
        return 0;
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

bool verdict_list_equal(const verdict_list *a, const verdict_list *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++) {
                const verdict *x = &a->items[i], *y = &b->items[i];
                if (x->level != y->level || !str_eq(x->check, y->check) ||
                    !str_eq(x->message, y->message) || !str_eq(x->remedy, y->remedy))
                        return false;
        }
        return true;
}

const verdict *verdict_find(const verdict_list *l, const char *check)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i].check, check) == 0)
                        return &l->items[i];
        return NULL;
}

json_t *verdict_to_json(const verdict *v)
{
        json_t *o = json_object();
        if (!o)
                return NULL;
        json_object_set_new(o, "check", json_string(v->check));
        json_object_set_new(o, "verdict", json_string(verdict_level_name(v->level)));
        json_object_set_new(o, "message", json_string(v->message));
        json_object_set_new(o, "remedy", v->remedy ? json_string(v->remedy) : json_null());
        json_object_set(o, "evidence", v->evidence);
        return o;
}

void verdict_print(const verdict_list *l, FILE *f, bool json)
{
        unsigned c[_VERDICT_MAX];

        for (size_t i = 0; i < l->n; i++) {
                const verdict *v = &l->items[i];
                if (json) {
                        json_t *o = verdict_to_json(v);
                        char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                        fprintf(f, "%s\n", s ? s : "{\"error\":\"out of memory\"}");
                        free(s);
                        json_decref(o);
                } else if (v->remedy && v->level != VERDICT_PASS) {
                        fprintf(f, "%s %s: %s; remedy: %s\n", level_tags[v->level], v->check,
                                v->message, v->remedy);
                } else {
                        fprintf(f, "%s %s: %s\n", level_tags[v->level], v->check, v->message);
                }
        }
        verdict_count(l, c);
        if (json)
                fprintf(f, "{\"summary\":{\"pass\":%u,\"warn\":%u,\"fail\":%u,\"skip\":%u}}\n",
                        c[VERDICT_PASS], c[VERDICT_WARN], c[VERDICT_FAIL], c[VERDICT_SKIP]);
        else
                fprintf(f, "summary: %u pass, %u warn, %u fail, %u skip\n", c[VERDICT_PASS],
                        c[VERDICT_WARN], c[VERDICT_FAIL], c[VERDICT_SKIP]);
        fflush(f);
}
