/* SPDX-License-Identifier: Apache-2.0 */
/* Top-level logging: one line per event on stdout, human or JSON. Only main() and the
 * command files call it; library code returns errors instead. Never exits. */
#include "log.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static log_format cur_format = LOG_FORMAT_HUMAN;
static log_level cur_min = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_setup(log_format format, log_level min_level)
{
        cur_format = format;
        cur_min = min_level;
}

int log_format_from_string(const char *s, log_format *ret)
{
        if (strcmp(s, "human") == 0)
                *ret = LOG_FORMAT_HUMAN;
        else if (strcmp(s, "json") == 0)
                *ret = LOG_FORMAT_JSON;
        else
                return -EINVAL;
        return 0;
}

static void log_v(log_level level, const char *suffix, const char *fmt, va_list ap)
{
        char msg[2048], ts[96];
        struct timespec now;
        struct tm tm;

        if (level < cur_min)
                return;
        vsnprintf(msg, sizeof(msg), fmt, ap);
        if (suffix) {
                size_t n = strlen(msg);
                size_t k = strlen(suffix);
                if (n + 2 + k < sizeof(msg)) {
                        memcpy(msg + n, ": ", 2);
                        memcpy(msg + n + 2, suffix, k + 1);
                }
        }
        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 now.tv_nsec / 1000000);
        if (cur_format == LOG_FORMAT_JSON) {
                json_t *o = json_pack("{s:s,s:s,s:s}", "ts", ts, "level", level_names[level], "msg", msg);
                char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                if (s)
                        printf("%s\n", s);
                free(s);
                json_decref(o);
        } else {
                printf("%s %-5s %s\n", ts, level_names[level], msg);
        }
        fflush(stdout);
}

void log_msg(log_level level, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_v(level, NULL, fmt, ap);
        va_end(ap);
}

int log_errno(log_level level, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_v(level, strerror(r < 0 ? -r : r), fmt, ap);
        va_end(ap);
        return r;
}

void log_stderr_line(bool json, const char *prog, const char *level, const char *msg)
{
        if (json) {
                json_t *j = json_pack("{s:s,s:s}", "level", level, "msg", msg);
                char *t = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                fprintf(stderr, "%s\n", t ? t : "{\"level\":\"error\",\"msg\":\"out of memory\"}");
                free(t);
                json_decref(j);
        } else {
                fprintf(stderr, "%s: %s\n", prog, msg);
        }
}
