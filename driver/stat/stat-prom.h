/* SPDX-License-Identifier: Apache-2.0 */
/* The CnC file's counters as Prometheus text (exposition format 0.0.4): Aeron's system
 * counters by name, stream positions and the lags they make, channel status, spinlane's
 * port and agent counters with their NIC labels, everything else by type id; one TYPE and
 * HELP line per family, label values escaped, no duplicate series. Pure: no I/O, no
 * globals, never logs. */
#ifndef SPIN_STAT_PROM_H
#define SPIN_STAT_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the caller knows about the file and itself. */
typedef struct stat_prom_self {
        const char *version;            /* spinlane's, for spinlane_stat_info */
        uint64_t remaps;                /* times a new CnC file was mapped */
        uint64_t read_errors;           /* scrapes that found no readable CnC file */
} stat_prom_self;

/* Renders the counters of the len bytes at buf (a CnC file or a copy of one; NULL: no file)
 * into a new NUL-terminated string in *ret (its length in *ret_len). A file that cannot be
 * read (truncated, wrong version, still being created) renders spinlane_stat_up 0 and the
 * reason as a label; that is not an error. -ENOMEM only; outputs untouched then. */
int stat_prom_render(const uint8_t *buf, size_t len, const stat_prom_self *self, char **ret, size_t *ret_len);

/* Writes s (n bytes) as a Prometheus label value (backslash, double quote and newline
 * escaped; other control bytes and non-ASCII bytes as '?') into out (size bytes,
 * NUL-terminated, truncated to fit). Returns the length written. */
size_t stat_prom_escape(const char *s, size_t n, char *out, size_t size);
/* s (n bytes) as a metric name part: lower case, [a-z0-9] kept, runs of anything else one
 * '_', none at either end. Returns the length written (truncated to fit size). */
size_t stat_prom_name(const char *s, size_t n, char *out, size_t size);

#endif
