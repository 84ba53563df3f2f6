/* SPDX-License-Identifier: Apache-2.0 */
/* Options every spinlane-agent subcommand shares (--root, --config, --json, --once), the
 * --root and config set-up, and the configuration hook. Command level: usage and config
 * errors go to stderr once, here; never exits (the commands return the exit code). */
#include "cmd.h"

#include "addresses.h"
#include "bind-state.h"
#include "cleanup.h"
#include "config.h"
#include "hostfs.h"
#include "inventory.h"
#include "log.h"
#include "select.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_parse_options(int argc, char **argv, const char *usage, agent_options *ret)
{
        static const struct option longopts[] = {
                {"root", required_argument, NULL, 'r'},
                {"config", required_argument, NULL, 'c'},
                {"json", no_argument, NULL, 'j'},
                {"once", no_argument, NULL, 'o'},
                {"log-format", required_argument, NULL, 'l'},
                {"kubeconfig", required_argument, NULL, 'k'},
                {"metrics-bind-address", required_argument, NULL, 'm'},
                {"health-probe-bind-address", required_argument, NULL, 'p'},
                {"dra-resources", required_argument, NULL, 'd'},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {0},
        };
        agent_options o = {0};
        log_format log_fmt = LOG_FORMAT_HUMAN;
        bool log_fmt_given = false;
        int c;

        optind = 1;
        opterr = 0;
        bool explain = strcmp(argv[0], "explain") == 0;
again:
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                switch (c) {
                case 'r': o.root = optarg; break;
                case 'c': o.config = optarg; break;
                case 'j': o.json = true; break;
                case 'l': {
                        log_format f;
                        if (log_format_from_string(optarg, &f) < 0) {
                                fprintf(stderr, "spinlane-agent %s: --log-format: expected \"human\" or \"json\", got \"%s\"\n",
                                        argv[0], optarg);
                                return -EINVAL;
                        }
                        log_fmt = f;
                        log_fmt_given = true;
                        break;
                }
                case 'o':
                        if (strcmp(argv[0], "run") != 0) {
                                fprintf(stderr, "spinlane-agent %s: --once belongs to `run`\nusage: %s\n", argv[0],
                                        usage);
                                return -EINVAL;
                        }
                        o.once = true;
                        break;
                case 'k':
                case 'm':
                case 'p':
                case 'd':
                        if (strcmp(argv[0], "run") != 0) {
                                fprintf(stderr, "spinlane-agent %s: %s belongs to `run`\nusage: %s\n", argv[0],
                                        c == 'k' ? "--kubeconfig" : c == 'm' ? "--metrics-bind-address"
                                                                : c == 'd' ? "--dra-resources"
                                                                             : "--health-probe-bind-address",
                                        usage);
                                return -EINVAL;
                        }
                        if (c == 'd')
                                o.dra_resources = optarg;
                        else if (c == 'k')
                                o.kubeconfig = optarg;
                        else if (c == 'm')
                                o.metrics_bind = optarg;
                        else
                                o.probe_bind = optarg;
                        break;
                case 'h':
                        fprintf(stdout, "usage: %s\n", usage);
                        return 1;
                case 'V':
                        fprintf(stdout, "spinlane-agent %s\n", SPINLANE_VERSION);
                        return 1;
                default:
                        fprintf(stderr, "spinlane-agent %s: unknown or incomplete option '%s'\nusage: %s\n", argv[0],
                                argv[optind - 1], usage);
                        return -EINVAL;
                }
        }
        /* explain takes one device: a NIC's PCI address or a core's id, before or after the options */
        if (optind < argc && explain && !o.device) {
                o.device = argv[optind++];
                goto again;
        }
        if (optind < argc) {
                fprintf(stderr, "spinlane-agent %s: unexpected argument '%s'\nusage: %s\n", argv[0], argv[optind],
                        usage);
                return -EINVAL;
        }
        /* one format for stdout (verdicts) and stderr (logs): --json and --log-format json
         * each give JSON on both; asking for both formats at once is a usage error */
        if (log_fmt_given && o.json && log_fmt != LOG_FORMAT_JSON) {
                fprintf(stderr, "spinlane-agent %s: --json and --log-format human ask for two formats; give one "
                        "(--json or --log-format json: JSON verdicts and logs)\nusage: %s\n", argv[0], usage);
                return -EINVAL;
        }
        if (log_fmt_given)
                o.json = log_fmt == LOG_FORMAT_JSON;
        o.log_json = o.json;
        *ret = o;
        return 0;
}

int agent_setup(int argc, char **argv, const char *usage, agent_options *ret_o, hostfs *ret_h)
{
        agent_options o;
        hostfs h;
        int r;

        r = agent_parse_options(argc, argv, usage, &o);
        if (r != 0)
                return r;
        /* hostfs takes "" as the live host; on the command line it is an unset variable
         * (--root "$HOST_ROOT"), and prepare/restore would then write to the real sysfs. */
        if (o.root && !*o.root) {
                fprintf(stderr, "spinlane-agent %s: --root: empty path (the live host is --root / or no --root)\n",
                        argv[0]);
                return -EINVAL;
        }
        r = hostfs_init(&h, o.root);
        if (r < 0) {
                fprintf(stderr, "spinlane-agent %s: --root %s: %s\n", argv[0], o.root, strerror(-r));
                return r;
        }
        *ret_o = o;
        *ret_h = h;
        return 0;
}

void agent_error(const agent_options *o, const char *fmt, ...)
{
        char msg[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_stderr_line(o && o->log_json, "spinlane-agent", "error", msg);
}

int agent_config(const agent_options *o, config *ret)
{
        char err[CONFIG_ERR_LEN];
        int r = config_load(o->config, ret, NULL, err, sizeof(err));
        if (r < 0)
                agent_error(o, "%s", *err ? err : strerror(-r));
        return r;
}

int agent_select(const hostfs *h, const config *c, inventory *inv, selection *ret)
{
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        char err[256];
        selection sel;

        if (!st)
                return -ENOMEM;
        int r = bind_state_load(h, st, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "spinlane-agent: %s: %s; the NIC MACs and interface names recorded there are not used\n",
                        BIND_STATE_PATH, *err ? err : strerror(-r));
        const bind_state *have = r >= 0 ? st : NULL;
        r = selection_new(c, inv, have, &sel);
        if (r < 0)
                return r;
        addresses_apply(inv, &(addresses_options){ .cfg = c, .state = have, .sel = &sel });
        *ret = sel;
        return 0;
}

int agent_scan(const char *cmd, const hostfs *h, const config *c, inventory **ret_inv, selection *ret_sel)
{
        inventory *inv = NULL;
        int r = inventory_scan(h, &inv);
        if (r < 0) {
                fprintf(stderr, "spinlane-agent %s: scan failed: %s\n", cmd, strerror(-r));
                return r;
        }
        r = agent_select(h, c, inv, ret_sel);
        if (r < 0) {
                fprintf(stderr, "spinlane-agent %s: out of memory\n", cmd);
                inventory_free(inv);
                return r;
        }
        *ret_inv = inv;
        return 0;
}

int agent_begin(int argc, char **argv, const char *usage, agent_cmd *ret)
{
        *ret = (agent_cmd){ 0 };
        int r = agent_setup(argc, argv, usage, &ret->o, &ret->h);
        if (r != 0)
                return r > 0 ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
        if (agent_config(&ret->o, &ret->cfg) < 0)
                return AGENT_EXIT_ERROR;
        if (agent_scan(argv[0], &ret->h, &ret->cfg, &ret->inv, &ret->sel) < 0)
                return AGENT_EXIT_ERROR;
        if (device_map_build(&ret->sel, NULL, &ret->map) < 0) {
                fprintf(stderr, "spinlane-agent %s: out of memory\n", argv[0]);
                agent_end(ret);
                return AGENT_EXIT_ERROR;
        }
        return -1;
}

void agent_end(agent_cmd *c)
{
        device_map_free(&c->map);
        selection_free(&c->sel);
        inventory_free(c->inv);
        c->inv = NULL;
}
