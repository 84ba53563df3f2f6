/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-launch: the media driver container's entrypoint. Proves the pod fit for
 * busy-spinning (pod checks), prints the verdicts for `kubectl logs`, fills in the
 * driver's environment and execs it. The only place in the launcher that logs or exits. */
#include "cleanup.h"
#include "hostfs.h"
#include "launch-checks.h"
#include "launch-env.h"
#include "launch-plan.h"
#include "verdict.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_COMMAND "aeronmd"

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-launch [--root DIR] [--json] [--check-only] [--warn-only] [-- COMMAND ARGS...]\n"
                   "  Checks that this pod is fit for a busy-spinning DPDK media driver, prints one verdict\n"
                   "  per check, then execs COMMAND (default: " DEFAULT_COMMAND ") with SPINLANE_EAL_ARGS and\n"
                   "  the AERON_* defaults set. Exit 1 without starting anything when a check fails.\n"
                   "  --root DIR     read /proc, /sys and /dev under DIR (tests)\n"
                   "  --json         one JSON object per line\n"
                   "  --check-only   print the verdicts and exit (0 ok, 1 a check failed)\n"
                   "  --warn-only    start even when checks fail (loudly; for debugging only)\n");
}

static void print_exec(bool json, const lplan *plan, char **argv)
{
        if (json) {
                json_t *o = json_object(), *env = json_object(), *args = json_array();
                for (unsigned i = 0; i < plan->n_set; i++)
                        json_object_set_new(env, plan->set[i].name, json_string(plan->set[i].value));
                for (char **a = argv; *a; a++)
                        json_array_append_new(args, json_string(*a));
                json_object_set_new(o, "exec", args);
                json_object_set_new(o, "env", env);
                char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
                printf("%s\n", s ? s : "{}");
                free(s);
                json_decref(o);
                return;
        }
        printf("exec:");
        for (char **a = argv; *a; a++)
                printf(" %s", *a);
        printf("\n");
        for (unsigned i = 0; i < plan->n_set; i++)
                printf("  env %s=%s\n", plan->set[i].name, plan->set[i].value);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },     { "json", no_argument, NULL, 'j' },
                { "check-only", no_argument, NULL, 'c' },     { "warn-only", no_argument, NULL, 'w' },
                { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
        };
        const char *root = NULL;
        bool json = false, check_only = false, warn_only = false, have_plan = false;
        static char *default_argv[] = { DEFAULT_COMMAND, NULL };
        char **cmd = default_argv;
        verdict_list vl = { 0 };
        hostfs h;
        int o, r;

        while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
                switch (o) {
                case 'r': root = optarg; break;
                case 'j': json = true; break;
                case 'c': check_only = true; break;
                case 'w': warn_only = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        /* getopt consumed "--" if it was there (and not as --root's argument). "--" with
         * nothing after it runs the default command: a pod's `command: [spinlane-launch,
         * "--"]` drops the image's CMD, and docs/device-plugin.md shows exactly that. */
        bool dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0 && argv[optind - 1] != root;
        if (optind < argc) {
                /* anything left is the command */
                if (!dashdash) {
                        fprintf(stderr, "spinlane-launch: unexpected argument \"%s\" (put the command after --)\n", argv[optind]);
                        usage(stderr);
                        return 2;
                }
                cmd = argv + optind;
        }
        if (check_only && warn_only) {
                fprintf(stderr, "spinlane-launch: --check-only and --warn-only exclude each other\n");
                return 2;
        }
        r = hostfs_init(&h, root);
        if (r < 0) {
                fprintf(stderr, "spinlane-launch: --root \"%s\": %s\n", root, strerror(-r));
                return 2;
        }

        _cleanup_free_ launch_env *env = malloc(sizeof(*env));
        _cleanup_free_ lplan *plan = malloc(sizeof(*plan));
        if (!env || !plan) {
                fprintf(stderr, "spinlane-launch: out of memory\n");
                return 2;
        }
        lenv_parse((const char *const *)environ, env);
        r = launch_checks_run(&h, env, &vl, plan, &have_plan);
        if (r < 0) {
                fprintf(stderr, "spinlane-launch: running the checks: %s\n", strerror(-r));
                verdict_list_free(&vl);
                return 2;
        }
        verdict_print(&vl, stdout, json);
        int failed = verdict_exit_code(&vl);
        unsigned counts[_VERDICT_MAX];
        verdict_count(&vl, counts);
        verdict_list_free(&vl);
        if (check_only) {
                fflush(stdout);
                return failed;
        }
        if (failed && !warn_only) {
                if (json)
                        printf("{\"start\":false,\"reason\":\"%u check(s) failed\"}\n", counts[VERDICT_FAIL]);
                else
                        printf("not starting %s: %u check(s) failed\n", cmd[0], counts[VERDICT_FAIL]);
                fflush(stdout);
                return 1;
        }
        if (failed) {
                fprintf(stderr, "spinlane-launch: WARNING: --warn-only: starting %s DESPITE %u FAILED CHECK(S); this driver is not fit for busy-spinning and its latency numbers mean nothing\n",
                        cmd[0], counts[VERDICT_FAIL]);
                if (json)
                        printf("{\"warn_only\":true,\"failed\":%u}\n", counts[VERDICT_FAIL]);
                else
                        printf("WARNING --warn-only: starting despite %u failed check(s)\n", counts[VERDICT_FAIL]);
        }
        if (!have_plan) {
                if (json)
                        printf("{\"start\":false,\"reason\":\"no granted CPUs to compute the driver's environment from\"}\n");
                else
                        printf("not starting %s: no granted CPUs to compute the driver's environment from\n", cmd[0]);
                fflush(stdout);
                return 1;
        }
        for (unsigned i = 0; i < plan->n_set; i++)
                if (setenv(plan->set[i].name, plan->set[i].value, 1) < 0) {
                        fprintf(stderr, "spinlane-launch: setenv %s: %s\n", plan->set[i].name, strerror(errno));
                        return 2;
                }
        print_exec(json, plan, cmd);
        fflush(stdout);
        fflush(stderr);
        execvp(cmd[0], cmd);
        fprintf(stderr, "spinlane-launch: exec %s: %s\n", cmd[0], strerror(errno));
        return 127;
}
