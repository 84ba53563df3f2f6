/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation inside the daemon's event loop: apply the config at start, re-apply
 * on SIGHUP (prep_daemon_reload) and when the config file changes (inotify on its
 * directory, so ConfigMap symlink swaps count), keep the last good config when a reload
 * brings a bad one, and re-apply kernel-path tuning after an ENA device reset (rtnetlink
 * link events, and an IRQ-affinity drift check on a timer). Also the one-shot path of
 * `run --once` / `prepare`. This is top-level code: it logs (common/log.h) one event a
 * line and prints the preparation verdicts whenever they change. */
#ifndef SPIN_PREP_DAEMON_H
#define SPIN_PREP_DAEMON_H

#include "config.h"
#include "hostfs.h"
#include "loop.h"
#include "prep.h"

#include <stdbool.h>
#include <stdio.h>

/* Fill ret (room for max) with the NICs of a fresh scan of the node. 0 or -errno. */
typedef int (*prep_scan_fn)(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n);

typedef struct prep_daemon_options {
        const char *config_path;   /* --config; NULL: CONFIG_PATH_DEFAULT, which only then may
                                      be absent at start (the defaults) */
        prep_scan_fn scan;         /* required */
        void *scan_userdata;
        const prep_ops *ops;       /* NULL: prep_ops_default() */
        bool json;                 /* verdicts as JSON lines */
        unsigned drift_check_ms;   /* IRQ affinity drift check period; 0: 10000 */
        unsigned debounce_ms;      /* config file change -> reload; 0: 200 */
        bool no_netlink;           /* tests: do not open the rtnetlink socket */
        /* Called after a config file change brought a new good config (not on SIGHUP:
         * prep_daemon_reload()'s caller knows then), so users of the config follow it. */
        void (*on_config_changed)(void *userdata);
        void *userdata;
        /* The config the caller loaded at start (prep_config_load, from config_path);
         * NULL: prep_daemon_new loads it. Copied. */
        const config *initial;
        bool initial_from_file;
} prep_daemon_options;

typedef struct prep_daemon prep_daemon;

/* Counters, for the log and the tests. */
typedef struct prep_daemon_stats {
        unsigned applies;          /* full preparations run */
        unsigned applies_failed;   /* of those, the ones in which a step failed */
        unsigned reloads;          /* config reloads that were accepted */
        unsigned reloads_rejected; /* reloads that brought a bad config (old one kept) */
        unsigned retunes;          /* tuning re-applied after a reset or drift */
        unsigned resets_seen;      /* resets detected from link events */
        int last_exit;             /* 0 nothing failed in the last apply, 1 something did */
} prep_daemon_stats;

/* Load the config at path (NULL: no --config, see config_load); a bad or unreadable one,
 * or a named one that is missing, is logged (the message names the file or the key) and
 * returned negative. *ret_from_file may be NULL. */
int prep_config_load(const char *path, config *ret, bool *ret_from_file);

/* Load the config unless o->initial gives it (a bad or unreadable one, or a named one that is missing, is an
 * error: logged, -EINVAL and nothing done - the agent must not start), apply it, and
 * hook the config watch, the link events and the drift timer into l. */
int prep_daemon_new(loop *l, const hostfs *h, const prep_daemon_options *o, prep_daemon **ret);
void prep_daemon_free(prep_daemon *d);

/* Re-read the config (SIGHUP). A bad one is logged and the last good one kept (returns
 * -EINVAL); a file that is gone keeps the config in force too and says so (-ENOENT:
 * never the defaults at runtime); a good one is applied. force: re-apply even when the
 * config is unchanged. */
int prep_daemon_reload(prep_daemon *d, bool force);
/* Feed one link event (what the rtnetlink handler does with each message). */
void prep_daemon_link_event(prep_daemon *d, const tune_link_event *ev);

const config *prep_daemon_config(const prep_daemon *d);
prep_daemon_stats prep_daemon_get_stats(const prep_daemon *d);

/* Log one preparation report: a line per NIC and per step, then the verdicts. */
void prep_log_report(const prep_report *r, bool json, FILE *out);

/* `run --once` / `prepare`: load the config (config_path NULL: no --config, see
 * config_load), prepare the node once, log, print the verdicts. Returns the exit code: 0
 * nothing failed, 1 a step failed, 2 bad or missing config or internal error. */
int prep_once(const hostfs *h, const char *config_path, prep_scan_fn scan, void *scan_userdata, bool json);

#endif
