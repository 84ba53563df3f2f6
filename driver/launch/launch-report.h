/* SPDX-License-Identifier: Apache-2.0 */
/* Builds one verdict per check out of the problems found along the way: the worst
 * level wins, messages are joined with "; ", remedies are collected once each. Pure
 * string handling, no I/O, never logs. */
#ifndef SPIN_LAUNCH_REPORT_H
#define SPIN_LAUNCH_REPORT_H

#include "launch-env.h"
#include "verdict.h"

typedef struct lreport {
        verdict_level level; /* VERDICT_PASS until a problem is added */
        unsigned n;          /* problems added */
        char msg[2048];
        char remedy[1536];
} lreport;

void lreport_init(lreport *r);
/* Add a problem at level (WARN or FAIL; SKIP is allowed only while nothing worse). */
void lreport_add(lreport *r, verdict_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Add a remedy sentence unless the same text is already there. */
void lreport_remedy(lreport *r, const char *text);
/* Every parse error of the environment that belongs to check, as a FAIL. */
void lreport_env(lreport *r, const launch_env *env, const char *check);
/* Emit: with no problems a PASS with pass_msg, else the worst level with the joined
 * messages. evidence is stolen. -ENOMEM only. */
int lreport_emit(lreport *r, verdict_list *vl, const char *check, json_t *evidence, const char *pass_msg);

#endif
