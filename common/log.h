/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide logging for the top level only (main loops and commands): one event a
 * line on stdout, human or JSON. Libraries return errors and never call this. */
#ifndef SPIN_LOG_H
#define SPIN_LOG_H

#include <stdbool.h>

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;
typedef enum log_format { LOG_FORMAT_HUMAN, LOG_FORMAT_JSON } log_format;

void log_setup(log_format format, log_level min_level);
/* "human" / "json"; -EINVAL otherwise. */
int log_format_from_string(const char *s, log_format *ret);

void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs fmt followed by ": strerror(-r)" and returns r (negative errno). */
int log_errno(log_level level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line on stderr for a command's own message (not the log stream): "PROG: MSG", or
 * with json {"level":LEVEL,"msg":MSG}. For the top level only, like the rest. */
void log_stderr_line(bool json, const char *prog, const char *level, const char *msg);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
