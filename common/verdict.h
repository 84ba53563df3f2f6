/* SPDX-License-Identifier: Apache-2.0 */
/* Check verdicts, the `kubectl logs` contract: a list of (check id, pass/warn/fail/skip,
 * message, remedy, evidence) printed one line each, human or JSON, with a summary.
 * The list owns its strings and evidence; printing is the only I/O, to the FILE given. */
#ifndef SPIN_VERDICT_H
#define SPIN_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum verdict_level {
        VERDICT_PASS,
        VERDICT_WARN,
        VERDICT_FAIL,
        VERDICT_SKIP,
        _VERDICT_MAX,
} verdict_level;

typedef struct verdict {
        char *check;        /* stable id, e.g. "cpu-quota" */
        verdict_level level;
        char *message;
        char *remedy;       /* NULL when nothing is to be done */
        json_t *evidence;   /* a JSON object, never NULL */
} verdict;

typedef struct verdict_list {
        verdict *items;
        size_t n, cap;
} verdict_list;

const char *verdict_level_name(verdict_level level); /* "pass", … */

/* Append a verdict. evidence is stolen (NULL = empty object); remedy may be NULL.
 * -ENOMEM leaves the list as it was (and still frees evidence). */
int verdict_add(verdict_list *l, const char *check, verdict_level level, json_t *evidence,
                const char *remedy, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

void verdict_list_free(verdict_list *l);
/* Counts per level. */
void verdict_count(const verdict_list *l, unsigned ret_counts[_VERDICT_MAX]);
/* 1 when any verdict is a fail, else 0: the exit code of preflight and launch. */
int verdict_exit_code(const verdict_list *l);
/* Same checks, levels, messages and remedies in the same order (evidence ignored). */
bool verdict_list_equal(const verdict_list *a, const verdict_list *b);
const verdict *verdict_find(const verdict_list *l, const char *check);

/* One line per verdict then the summary line. Human: "FAIL id: message; remedy: …";
 * JSON: {"check","verdict","message","remedy","evidence"} per line and
 * {"summary":{"pass":N,"warn":N,"fail":N,"skip":N}}. */
void verdict_print(const verdict_list *l, FILE *f, bool json);
/* The verdict as a JSON object (new reference). */
json_t *verdict_to_json(const verdict *v);

#endif
