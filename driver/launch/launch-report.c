/* SPDX-License-Identifier: Apache-2.0 */
/* One verdict per check from a list of problems. Pure string handling, never logs. */
#include "launch-report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lreport_init(lreport *r)
{
        r->level = VERDICT_PASS;
        r->n = 0;
        r->msg[0] = '\0';
        r->remedy[0] = '\0';
}

static int rank(verdict_level l)
{
        return l == VERDICT_FAIL ? 3 : l == VERDICT_WARN ? 2 : l == VERDICT_SKIP ? 1 : 0;
}

static void append(char *buf, size_t size, const char *sep, const char *text)
{
        size_t n = strlen(buf);
        if (n + 4 >= size)
                return;
        snprintf(buf + n, size - n, "%s%s", n ? sep : "", text);
        if (strlen(buf) == size - 1)
                memcpy(buf + size - 4, "...", 4);
}

void lreport_add(lreport *r, verdict_level level, const char *fmt, ...)
{
        char text[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        if (rank(level) > rank(r->level))
                r->level = level;
        r->n++;
        append(r->msg, sizeof(r->msg), "; ", text);
}

void lreport_remedy(lreport *r, const char *text)
{
        if (strstr(r->remedy, text))
                return;
        append(r->remedy, sizeof(r->remedy), " ", text);
}

void lreport_env(lreport *r, const launch_env *env, const char *check)
{
        for (unsigned i = 0; i < env->n_errs; i++)
                if (strcmp(env->errs[i].check, check) == 0) {
                        lreport_add(r, VERDICT_FAIL, "%s", env->errs[i].msg);
                        lreport_remedy(r, env->errs[i].remedy ? env->errs[i].remedy
                                                              : "Fix the variable named in the pod spec (or, for SPINLANE_* allocation values, the spinlane device plugin that set it).");
                }
}

int lreport_emit(lreport *r, verdict_list *vl, const char *check, json_t *evidence, const char *pass_msg)
{
        if (r->n == 0)
                return verdict_add(vl, check, VERDICT_PASS, evidence, NULL, "%s", pass_msg);
        return verdict_add(vl, check, r->level, evidence, r->remedy[0] ? r->remedy : NULL, "%s", r->msg);
}
