/* SPDX-License-Identifier: Apache-2.0 */
/* The spinlane-agent subcommands (one file each: cmd-<name>.c) and the options they
 * share (--root, --config, --json). Commands return the process exit code: 0 ok,
 * 1 a check failed, 2 usage or internal error; they log/print, main() only dispatches. */
#ifndef SPIN_AGENT_CMD_H
#define SPIN_AGENT_CMD_H

#include "config.h"
#include "hostfs.h"
#include "device-map.h"
#include "select.h"

#include <jansson.h>
#include <stdbool.h>

#define AGENT_EXIT_OK 0
#define AGENT_EXIT_FAIL 1
#define AGENT_EXIT_ERROR 2

#define AGENT_CONFIG_DEFAULT "/etc/spinlane/config.json"

typedef struct agent_options {
        const char *root;   /* --root DIR; NULL = the real root */
        const char *config; /* --config FILE; NULL = not given */
        bool json;          /* --json or --log-format json: verdicts as JSON lines */
        bool once;          /* --once (run only): prepare the node and exit */
        bool log_json;      /* the same: one format for stdout and stderr */
        const char *kubeconfig;   /* --kubeconfig FILE (run only); NULL = in-cluster */
        const char *metrics_bind; /* --metrics-bind-address HOST:PORT (run only); NULL = default */
        const char *probe_bind;   /* --health-probe-bind-address HOST:PORT (run only); NULL = default */
        const char *dra_resources; /* --dra-resources LIST (run only): "nic", "core" served through DRA */
        const char *device;       /* explain only: the one NIC (PCI address) or core (id) asked about */
} agent_options;

/* Parse argv after the subcommand name (argv[0] is the subcommand). Accepts --root DIR,
 * --config FILE, --json, --log-format human|json, -h/--help, and --once, --kubeconfig
 * FILE, --metrics-bind-address HOST:PORT, --health-probe-bind-address HOST:PORT and
 * --dra-resources LIST for `run` (their values are checked there), and one device argument for `explain`.
 * --json and --log-format json both select JSON for verdicts and logs; --json with
 * --log-format human is refused. On a bad option or a stray argument prints usage to
 * stderr and returns -EINVAL; returns 1 after printing usage for --help or the version
 * for --version; 0 otherwise. */
int agent_parse_options(int argc, char **argv, const char *usage, agent_options *ret);

/* agent_parse_options(), then --root opened as *ret_h (hostfs_init). Same returns; a
 * bad --root is named on stderr and gives its negative errno. */
struct hostfs;
int agent_setup(int argc, char **argv, const char *usage, agent_options *ret_o, struct hostfs *ret_h);

/* Load and check the config (--config FILE, which must exist; without --config
 * /etc/spinlane/config.json, whose absence means the defaults). A bad or missing config
 * prints the message, which names the file or the key and the value, to stderr and
 * returns it negative. */
struct config;
int agent_config(const agent_options *o, struct config *ret);

/* One error line on stderr in the format the options chose: "spinlane-agent: MSG", or
 * {"level":"error","msg":MSG} with --json / --log-format json. */
void agent_error(const agent_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Which NICs and cores spinlane takes (agent/node/select.h: the config over inv and the bind
 * state), and each selected NIC's address resolved into inv (agent/node/addresses.h) as a
 * one-shot command can: the config's static entries and the MACs in the bind state; what
 * only the metadata knows is left to the running agent (INV_ADDR_ELSEWHERE). An
 * unreadable bind state is named on stderr and counts as empty. -ENOMEM leaves *ret
 * untouched; free with selection_free. */
struct inventory;
struct selection;
int agent_select(const struct hostfs *h, const struct config *c, struct inventory *inv, struct selection *ret);

/* The node as a one-shot command sees it: inventory_scan, then agent_select. A failure is
 * named on stderr ("spinlane-agent CMD: scan failed: ..." or "... out of memory") and
 * returned negative, the outputs untouched; free with inventory_free and selection_free. */
int agent_scan(const char *cmd, const struct hostfs *h, const struct config *c, struct inventory **ret_inv,
               struct selection *ret_sel);

/* What a read-only command (preflight, inventory, explain) starts from. */
typedef struct agent_cmd {
        agent_options o;
        hostfs h;
        config cfg;
        struct inventory *inv;
        selection sel;
        device_map map; /* the device map of inv under sel (device-map.h): built once */
} agent_cmd;

/* agent_setup, agent_config, agent_scan into *ret, each failure named on stderr.
 * Returns -1 when the command goes on (free with agent_end), else the exit code to
 * return now (0 after --help or --version, AGENT_EXIT_ERROR); *ret then needs no end. */
int agent_begin(int argc, char **argv, const char *usage, agent_cmd *ret);
void agent_end(agent_cmd *c);

int cmd_preflight(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_restore(int argc, char **argv);

#endif
