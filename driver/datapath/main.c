/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-datapath: the datapath check, run by spinlane-launch before it starts the
 * driver, with the driver's environment (the bypass contract: EAL arguments, devices,
 * addresses, gateways). Prints one `datapath` verdict per port and exits 0 (nothing
 * failed), 1 (a FAIL) or 2 (usage). The only place here that prints or exits. */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpath.h"
#include "ipv4.h"
#include "parse.h"
#include "spa-env.h"
#include "verdict.h"
#include "version.h"

extern char **environ;

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-datapath [--json] [--rounds N] [--timeout-ms MS] [--peer A.B.C.D:PORT] [--max-p99-us US]\n"
                   "  Opens the NICs of the driver's environment (SPINLANE_EAL_ARGS, SPINLANE_SENDER_*/_RECEIVER_*) as the\n"
                   "  driver will, measures link-up, ARP and UDP probe round trips, releases everything and prints one\n"
                   "  datapath verdict per NIC. spinlane-launch runs it before the driver (docs/verdicts.md, datapath).\n");
}

static int num(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *ret)
{
        uint64_t n;
        if (parse_u64(v, hi, &n) < 0 || n < lo) {
                fprintf(stderr, "spinlane-datapath: %s \"%s\" is not a number in %u..%u\n", opt, v, lo, hi);
                return -1;
        }
        *ret = (unsigned)n;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },          { "rounds", required_argument, NULL, 'n' },
                { "timeout-ms", required_argument, NULL, 't' }, { "peer", required_argument, NULL, 'p' },
                { "max-p99-us", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },       { NULL, 0, NULL, 0 },
        };
        struct dpath_opts o = { .rounds = DPATH_DEFAULT_ROUNDS, .timeout_ms = DPATH_DEFAULT_TIMEOUT_MS };
        bool json = false;
        unsigned v;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'j': json = true; break;
                case 'n':
                        if (num("--rounds", optarg, 1, DPATH_MAX_ROUNDS, &o.rounds) < 0)
                                return 2;
                        break;
                case 't':
                        if (num("--timeout-ms", optarg, 10, DPATH_MAX_TIMEOUT_MS, &o.timeout_ms) < 0)
                                return 2;
                        break;
                case 'm':
                        if (num("--max-p99-us", optarg, 1, 10000000, &o.max_p99_us) < 0)
                                return 2;
                        break;
                case 'p': {
                        const char *colon = strrchr(optarg, ':');
                        uint32_t ip;
                        if (!colon || ipv4_parse(optarg, (size_t)(colon - optarg), &ip) < 0 ||
                            num("--peer port", colon + 1, 1, 65535, &v) < 0) {
                                fprintf(stderr, "spinlane-datapath: --peer \"%s\" is not A.B.C.D:PORT\n", optarg);
                                return 2;
                        }
                        o.peer_ip = htonl(ip);
                        o.peer_port = (uint16_t)v;
                        break;
                }
                case 'h': usage(stdout); return 0;
                case 'V': printf("spinlane-datapath %s\n", SPINLANE_VERSION); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }

        verdict_list vl = { 0 };
        static struct spa_config cfg;
        char err[1024];
        int r;
        if (spa_env_parse((const char *const *)environ, &cfg, err, sizeof(err)) < 0) {
                r = verdict_add(&vl, "datapath", VERDICT_FAIL, NULL, NULL, "the driver's environment is not usable: %s", err);
        } else {
                static struct dpath_result res;
                o.probe_port = cfg.probe_port ? (uint16_t)cfg.probe_port : SPA_DEFAULT_PROBE_PORT;
                dpath_run(&cfg, &o, &res);
                r = dpath_judge(&res, &o, &vl);
        }
        if (r < 0) {
                fprintf(stderr, "spinlane-datapath: out of memory\n");
                return 2;
        }
        if (json) {
                for (size_t i = 0; i < vl.n; i++) {
                        json_t *j = verdict_to_json(&vl.items[i]);
                        char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                        printf("%s\n", s ? s : "{}");
                        free(s);
                        json_decref(j);
                }
        } else
                verdict_print(&vl, stdout, false);
        int failed = verdict_exit_code(&vl);
        verdict_list_free(&vl);
        fflush(stdout);
        return failed;
}
