/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-launch: the media driver container's entrypoint. Proves the pod fit for
 * busy-spinning (pod checks), prints the verdicts for `kubectl logs`, fills in the
 * driver's environment and execs it. The only place in the launcher that logs or exits. */
#include "alloc-env.h"
#include "cleanup.h"
#include "hostfs.h"
#include "launch-bindings.h"
#include "launch-checks.h"
#include "launch-datapath.h"
#include "launch-env.h"
#include "log.h"
#include "launch-plan.h"
#include "launch-report.h"
#include "verdict.h"
#include "version.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_COMMAND "aeronmd"

/* Where libspinlane_aeron.so is when SPINLANE_AERON_LIBRARY does not say: beside the
 * launcher's own directory as installed (bin/../lib), or in the build tree
 * (driver/launch/../aeron); else its bare name, for the loader's search. */
static void default_library(char *buf, size_t size)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        static const char *const rel[] = { "../lib/" LENV_BINDINGS_LIBRARY, "../aeron/" LENV_BINDINGS_LIBRARY };

        snprintf(buf, size, "%s", LENV_BINDINGS_LIBRARY);
        if (n <= 0)
                return;
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (!slash)
                return;
        *slash = '\0';
        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                char cand[PATH_MAX + 64], real[PATH_MAX];
                snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
                if (realpath(cand, real) && access(real, R_OK) == 0 && strlen(real) < size) {
                        memcpy(buf, real, strlen(real) + 1);
                        return;
                }
        }
}

/* spinlane-datapath: beside the launcher (bin/), or in the build tree
 * (driver/launch/../datapath); else the first on PATH. "" when none is found. */
static void find_helper(char *buf, size_t size)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        buf[0] = '\0';
        if (n > 0) {
                exe[n] = '\0';
                char *slash = strrchr(exe, '/');
                if (slash) {
                        *slash = '\0';
                        static const char *const rel[] = { LDP_HELPER, "../datapath/" LDP_HELPER };
                        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                                char cand[PATH_MAX + 64];
                                snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
                                if (access(cand, X_OK) == 0 && strlen(cand) < size) {
                                        memcpy(buf, cand, strlen(cand) + 1);
                                        return;
                                }
                        }
                }
        }
        const char *path = getenv("PATH");
        while (path && *path) {
                const char *c = strchr(path, ':');
                size_t l = c ? (size_t)(c - path) : strlen(path);
                char cand[PATH_MAX + 64];
                if (l && l < PATH_MAX) {
                        snprintf(cand, sizeof(cand), "%.*s/%s", (int)l, path, LDP_HELPER);
                        if (access(cand, X_OK) == 0 && strlen(cand) < size) {
                                memcpy(buf, cand, strlen(cand) + 1);
                                return;
                        }
                }
                path = c ? c + 1 : NULL;
        }
}

/* The datapath verdict: spinlane-datapath with the driver's environment, when the
 * driver would start the bypass (spinlane's bindings, a complete contract) and every
 * other check passed (the EAL would trip over what they found); else why not. */
static int check_datapath(const launch_env *env, const lplan *plan, bool have_plan, char **denv, verdict_list *vl)
{
        unsigned counts[_VERDICT_MAX];
        char helper[PATH_MAX];
        lreport rep;

        lreport_init(&rep);
        lreport_env(&rep, env, "datapath");
        if (rep.n)
                return lreport_emit(&rep, vl, "datapath", NULL, "");
        if (!env->datapath.on)
                return verdict_add(vl, "datapath", VERDICT_SKIP, NULL, NULL, LAUNCH_ENV_DATAPATH "=off: the data path is not checked");
        if (!have_plan || !plan->bypass || plan->bypass_problem[0])
                return verdict_add(vl, "datapath", VERDICT_SKIP, NULL, NULL,
                                   "the driver does not start spinlane's DPDK bypass with a complete contract (see aeron-bindings): nothing to check");
        verdict_count(vl, counts);
        if (counts[VERDICT_FAIL])
                return verdict_add(vl, "datapath", VERDICT_SKIP, NULL, NULL,
                                   "not run: %u other check(s) failed, and the DPDK EAL would meet the same problems", counts[VERDICT_FAIL]);
        find_helper(helper, sizeof(helper));
        if (!helper[0])
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL,
                                   "spinlane-datapath comes with spinlane-launch in spinlane's driver image; with another image set SPINLANE_DATAPATH=off to start without the check (docs/launch.md).",
                                   "cannot find " LDP_HELPER " beside spinlane-launch or on PATH");
        return ldp_run(helper, env, denv, vl);
}

/* The driver's environment as it will be after exec: the plan's variables, then ours. */
static char **driver_envp(const lplan *plan)
{
        size_t n = 0;
        while (environ[n])
                n++;
        char **e = calloc(n + LPLAN_MAX_SET + 1, sizeof(char *));
        if (!e)
                return NULL;
        size_t k = 0;
        for (unsigned i = 0; plan && i < plan->n_set; i++)
                if (asprintf(&e[k], "%s=%s", plan->set[i].name, plan->set[i].value) >= 0)
                        k++;
        for (size_t i = 0; i < n; i++)
                e[k++] = strdup(environ[i]);
        e[k] = NULL;
        return e;
}

static void envp_free(char **e)
{
        for (size_t i = 0; e && e[i]; i++)
                free(e[i]);
        free(e);
}

/* A message on stderr in the chosen format: "spinlane-launch: MSG", or with --json
 * {"level":LEVEL,"msg":MSG} (one format on stdout and stderr). */
static void say(bool json, const char *level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(bool json, const char *level, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_stderr_line(json, "spinlane-launch", level, msg);
}

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-launch [--root DIR] [--json] [--check-only] [--warn-only] [-- COMMAND ARGS...]\n"
                   "  Checks that this pod is fit for a busy-spinning DPDK media driver, prints one verdict\n"
                   "  per check, then execs COMMAND (default: " DEFAULT_COMMAND " with spinlane's DPDK bindings) with\n"
                   "  " BYPASS_ENV_EAL_ARGS ", the bypass contract and the AERON_* defaults set. Exit 1 without\n"
                   "  starting anything when a check fails.\n"
                   "  --root DIR     read /proc, /sys and /dev under DIR (tests)\n"
                   "  --json         one JSON object per line, on stdout and stderr\n"
                   "  --check-only   print the verdicts and exit (0 ok, 1 a check failed)\n"
                   "  --warn-only    start even when checks fail (loudly; for debugging only)\n"
                   "  --version      print the version and exit\n");
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
                { "help", no_argument, NULL, 'h' },           { "version", no_argument, NULL, 'V' },
                { NULL, 0, NULL, 0 },
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
                case 'V': printf("spinlane-launch %s\n", SPINLANE_VERSION); return 0;
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
                say(json, "error", "out of memory");
                return 2;
        }
        lenv_parse((const char *const *)environ, env);
        if (!env->bypass.library[0])
                default_library(env->bypass.library, sizeof(env->bypass.library));
        r = launch_checks_run(&h, env, &vl, plan, &have_plan);
        if (r >= 0) {
                /* last: it loads the bindings library, so only when everything is known */
                char **denv = driver_envp(have_plan ? plan : NULL);
                lbind_in bi = { .command = cmd[0], .envp = (const char *const *)denv, .plan = have_plan ? plan : NULL };
                r = denv ? lbind_check(&bi, &vl) : -ENOMEM;
                /* after the bindings check: the driver's contract is proven complete by then */
                if (r >= 0)
                        r = check_datapath(env, plan, have_plan, denv, &vl);
                envp_free(denv);
        }
        if (r < 0) {
                say(json, "error", "running the checks: %s", strerror(-r));
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
                say(json, "warn", "WARNING: --warn-only: starting %s DESPITE %u FAILED CHECK(S); this driver is not fit for busy-spinning and its latency numbers mean nothing",
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
                        say(json, "error", "setenv %s: %s", plan->set[i].name, strerror(errno));
                        return 2;
                }
        print_exec(json, plan, cmd);
        fflush(stdout);
        fflush(stderr);
        execvp(cmd[0], cmd);
        say(json, "error", "exec %s: %s", cmd[0], strerror(errno));
        return 127;
}
