/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon's services share (spindaemon only): the daemon (options, root, loop, the
 * config at start), the node of one scan as every service sees it, the service row of the
 * table in cmd-run.c, and the few calls a service makes on the loop (a re-scan, the
 * rebuild, the stop). Each service keeps its own state in its own file (run-<name>.c)
 * behind the pointer here; the loop (cmd-run.c) never reaches into it. Top-level code:
 * logs. */
#ifndef SPIN_RUN_DAEMON_H
#define SPIN_RUN_DAEMON_H

#include "cmd.h"
#include "config.h"
#include "device-map.h"
#include "dp-request.h"
#include "dra-slice.h"
#include "hostfs.h"
#include "inventory.h"
#include "loop.h"
#include "select.h"

#include <stdbool.h>
#include <stdint.h>

/* One scan as every service sees it: the inventory (NIC addresses resolved), the live
 * config's selection over it (agent/node/select.h) and the device map built from them
 * (agent/node/device-map.h: the one device value of every NIC and core, with the
 * history). Built by run-scan.c; inv and sel owned, map borrowed from the scan service
 * (valid until the next scan). */
typedef struct run_node {
        inventory *inv;
        selection sel;
        const device_map *map;
} run_node;

typedef struct run_daemon run_daemon;

/* A row of the services table (cmd-run.c). start after the first scan (in table order,
 * after the rows named in `after`, which the table checks at start), rescan after every
 * scan, stop on exit (reverse order). A rebuild (SIGHUP, config change, kubelet restart,
 * self-check) calls reload before its scan: 0 the service follows the live config in
 * place (its rescan comes), 1 it tore itself down (start comes, with the scan). */
#define RUN_SERVICE_AFTER_MAX 4
typedef struct run_service {
        const char *name;
        const char *after[RUN_SERVICE_AFTER_MAX]; /* the services it needs started first */
        int (*start)(run_daemon *d, const run_node *node);
        void (*rescan)(run_daemon *d, const run_node *node);
        int (*reload)(run_daemon *d);
        void (*stop)(run_daemon *d);
} run_service;

/* Each service's state, owned by its file. */
typedef struct run_scan run_scan;             /* run-scan.c: the device map and its history */
typedef struct run_verdicts run_verdicts;     /* run-verdicts.c: the node verdicts printed */
typedef struct run_dp run_dp;                 /* run-dp.c: the device plugins */
typedef struct run_dra run_dra;               /* run-dra.c: the DRA kubelet plugin, the ResourceSlice */
typedef struct run_selfcheck run_selfcheck;   /* run-selfcheck.c: the gRPC servers' self-check */
struct run_report;                            /* run-report.c: labels, Events, metrics, probes */
struct run_address;                           /* run-address.c: NIC addresses */
struct prep_daemon;                           /* agent/prep: node preparation, the live config */

struct run_daemon {
        agent_options opt;
        hostfs h;
        loop *l;
        config cfg;              /* the config at start; node preparation keeps the live one */
        bool cfg_from_file;
        bool stopping;
        dra_resources dra;       /* --dra-resources: served through DRA, no device plugin */
        /* the services (NULL: not started, or down) */
        struct prep_daemon *prep;
        struct run_address *addr;
        run_scan *scan;
        run_verdicts *verdicts;
        run_dp *dp;
        struct run_report *report;
        run_dra *dra_svc;
        run_selfcheck *selfcheck;
        /* the loop's own (cmd-run.c) */
        struct run_loop *loop_state;
};

/* The config in force: node preparation's (it follows reloads), else the one at start. */
const config *run_live_config(const run_daemon *d);
/* An event that calls for a re-scan (why: a static string, for the debug log): debounced. */
void run_debounce(run_daemon *d, const char *why);
/* The one rebuild path, soon (why: a static string, logged). */
void run_rebuild_soon(run_daemon *d, const char *why);
/* Whether a rebuild is pending (its reason not yet logged). */
bool run_rebuild_pending(const run_daemon *d);
/* The device plugins saw the kubelet restart: a rebuild that tears them down, paced. */
void run_kubelet_restarted(run_daemon *d);
/* The stop waits for one more thing (the plugins' end, the slice's DELETE)... */
void run_stop_wait(run_daemon *d);
/* ...and this one is done; the last ends the loop. */
void run_stop_done(run_daemon *d);

/* A numeric SPINLANE_*_MS knob (common/envknob): its value, or the default with the
 * message logged ", ignored". */
unsigned run_knob_ms(const char *name, uint64_t min, uint64_t max, uint64_t def);

/* The scan (run-scan.c): a fresh inventory, the live config's selection over it and the
 * bind state (read once: a garbled or unreadable state file counts as empty here,
 * preparation reports it), each selected NIC's address resolved, the device map built
 * with the last one as its history (its lines logged for every device that changed).
 * Negative errno (logged by the caller). */
int run_scan_node(run_daemon *d, run_node *ret);
void run_node_free(run_node *n);
/* The next map is built without history: the device plugins were torn down, the kubelet
 * forgot what they listed. */
void run_scan_forget(run_daemon *d);

/* Each service's state, made before the first scan and freed after the last stop (so
 * that what the report points into stays put across rebuilds). -ENOMEM. Free accepts
 * NULL. */
int run_scan_new(run_scan **ret);
void run_scan_free(run_scan *s);
int run_verdicts_new(run_verdicts **ret);
void run_verdicts_free(run_verdicts *v);
int run_dp_new(const config *c, run_dp **ret);
void run_dp_free(run_dp *p);
int run_dra_new(run_dra **ret);
void run_dra_free(run_dra *r);
int run_selfcheck_new(run_selfcheck **ret);
void run_selfcheck_free(run_selfcheck *s);

/* The services' rows, each defined in its file. */
extern const run_service run_service_prep, run_service_addresses, run_service_verdicts, run_service_dp,
        run_service_report, run_service_dra, run_service_slices, run_service_selfcheck;

/* What other services read of the device plugins (run-dp.c). */
typedef struct dp_plugin dp_plugin;
const char *run_dp_prefix(const run_daemon *d);        /* the resource prefix they run with */
const char *run_dp_cdi_dir(const run_daemon *d);       /* the CDI spec dir they run with */
void run_dp_alloc_config(const run_daemon *d, dp_alloc_config *ret);
bool run_dp_running(const run_daemon *d);
bool run_dp_has_plugin(const run_daemon *d, device_kind k);
/* The pending rebuild tears the device plugins down even with the same settings. */
void run_dp_rebuild_next(run_daemon *d);
/* The exit: the engine stops (DP_EVENT_STOPPED ends the stop's wait for it). */
void run_dp_stop_engine(run_daemon *d);
/* Stable pointers for the report (valid while the daemon runs). */
const device_list *run_dp_list(const run_daemon *d, device_kind k);
dp_plugin *const *run_dp_plugin(const run_daemon *d, device_kind k);

/* What other services read of the verdicts (run-verdicts.c): stable pointers. */
struct verdict_list;
const struct verdict_list *run_verdicts_list(const run_daemon *d);
const bool *run_verdicts_have(const run_daemon *d);

/* What other services read of DRA (run-dra.c). */
struct dra_plugin;
struct dra_plugin *const *run_dra_plugin(const run_daemon *d);
/* The pending rebuild restarts the DRA kubelet plugin (its self-check failed). */
void run_dra_restart_next(run_daemon *d);
/* The stop: the ResourceSlice's DELETE is sent; true when the stop must wait for it
 * (run_stop_done follows). */
bool run_dra_stop_slices(run_daemon *d);

/* The self-check's verdict for /healthz (run-selfcheck.c): "" or why it fails; stable. */
const char *run_selfcheck_health(const run_daemon *d);

#endif
