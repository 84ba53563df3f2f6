/* SPDX-License-Identifier: Apache-2.0 */
/* The spinlane-agent command line: subcommand table, options, exit codes 0/1/2, the
 * JSON forms, and the --config hook, run as a person runs them on fixture nodes. */
#include "fixture.h"


static char dir[512];
static char bin[1024];

/* Run "spinlane-agent ARGS", capture stdout (up to size) and return the exit code. */
static int run(const char *args, char *out, size_t size) { return fixture_run(bin, args, "2>/dev/null", out, size); }

int main(void)
{
        static char out[1 << 20];
        char args[2048], cfg[1024];
        const char *b = getenv("SPINLANE_BINARY_DIR");

        if (!b)
                TEST_SKIP("SPINLANE_BINARY_DIR is not set (run under ctest)");
        snprintf(bin, sizeof(bin), "'%s/agent/spinlane-agent'", b);
        fixture_make(dir, sizeof(dir), "eks-x86 broken");

        /* usage errors: 2 */
        CHECK_INT(run("", out, sizeof(out)), 2);
        CHECK_INT(run("frobnicate", out, sizeof(out)), 2);
        CHECK_INT(run("preflight --bogus", out, sizeof(out)), 2);
        CHECK_INT(run("preflight extra", out, sizeof(out)), 2);
        CHECK_INT(run("preflight --root", out, sizeof(out)), 2);
        CHECK_INT(run("preflight --root /nonexistent-spinlane-root", out, sizeof(out)), 2);
        CHECK_INT(run("inventory --root /", out, sizeof(out)), 2); /* inventory needs --json */
        /* An empty --root (an unset "$HOST_ROOT") is refused, not taken as the live host:
         * prepare/restore would write to the real sysfs. */
        CHECK_INT(fixture_run(bin, "restore --root ''", "2>&1", out, sizeof(out)), 2);
        CHECK(strstr(out, "spinlane-agent restore: --root: empty path") != NULL);
        CHECK_INT(fixture_run(bin, "inventory --json --root=", "2>&1", out, sizeof(out)), 2);
        /* run takes its options and --root the same way (agent_setup) */
        CHECK_INT(fixture_run(bin, "run --root /nonexistent-spinlane-root", "2>&1", out, sizeof(out)), 2);
        CHECK(strstr(out, "spinlane-agent run: --root /nonexistent-spinlane-root: ") != NULL);
        CHECK_INT(run("run --bogus", out, sizeof(out)), 2);
        CHECK_INT(run("run --help", out, sizeof(out)), 0);
        CHECK(strstr(out, "[--once]") != NULL);
        CHECK_INT(run("--help", out, sizeof(out)), 0);
        CHECK(strstr(out, "preflight") && strstr(out, "inventory"));

        /* `run` execs spinlane-agent-run from the agent's directory, which also runs alone
         * with the same options and messages */
        {
                char daemon[1100], lone[1100], cmd[4096];

                snprintf(daemon, sizeof(daemon), "'%s/agent/spinlane-agent-run'", b);
                CHECK_INT(fixture_run(daemon, "--root /nonexistent-spinlane-root", "2>&1", out, sizeof(out)), 2);
                CHECK(strstr(out, "spinlane-agent run: --root /nonexistent-spinlane-root: ") != NULL);
                CHECK_INT(fixture_run(daemon, "--help", "2>/dev/null", out, sizeof(out)), 0);
                CHECK(strstr(out, "spinlane-agent run [") != NULL);
                /* the agent without its sibling: the missing path named, exit 2 */
                snprintf(lone, sizeof(lone), "%s/lone", dir);
                snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp %s '%s/spinlane-agent'", lone, bin, lone);
                CHECK_INT(system(cmd), 0);
                snprintf(cmd, sizeof(cmd), "'%s/spinlane-agent'", lone);
                CHECK_INT(fixture_run(cmd, "run --help", "2>&1", out, sizeof(out)), 2);
                snprintf(cmd, sizeof(cmd), "cannot execute the daemon %s/spinlane-agent-run: No such file or directory",
                         lone);
                CHECK(strstr(out, cmd) != NULL);
                /* the other commands do not need it */
                snprintf(cmd, sizeof(cmd), "'%s/spinlane-agent'", lone);
                CHECK_INT(fixture_run(cmd, "--help", "2>&1", out, sizeof(out)), 0);
        }
        CHECK_INT(run("preflight --help", out, sizeof(out)), 0);
        CHECK_INT(run("preflight --log-format xml", out, sizeof(out)), 2);

        /* --log-format json: every log line of a command that logs is a JSON object */
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --log-format json", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strncmp(out, "{\"ts\":\"", 7) == 0);
        CHECK(strstr(out, "\"level\":\"info\"") != NULL);
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --log-format human", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(out[0] != '{' && strstr(out, " info  ") != NULL);

        /* a good node: 0, a broken one: 1 */
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS isolated-cpus: 6 isolated physical cores (CPUs 2-7,10-15)\n") != NULL);
        CHECK(strstr(out, "summary: 9 pass, 1 warn, 0 fail, 0 skip\n") != NULL);
        snprintf(args, sizeof(args), "preflight --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL hugetlbfs: no hugetlbfs mount in /proc/mounts; remedy: mount -t hugetlbfs") != NULL);
        CHECK(strstr(out, "summary: 2 pass, 3 warn, 3 fail, 2 skip\n") != NULL);

        /* --json: one object per line, verdicts then the summary */
        snprintf(args, sizeof(args), "preflight --json --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        {
                size_t lines = 0, verdicts = 0;
                json_t *last = NULL;
                for (char *s = out, *nl; *s; s = nl + 1) {
                        nl = strchr(s, '\n');
                        if (!nl)
                                break;
                        *nl = '\0';
                        json_t *o = json_loads(s, 0, NULL);
                        CHECK(json_is_object(o));
                        if (json_object_get(o, "check")) {
                                verdicts++;
                                const char *v = json_string_value(json_object_get(o, "verdict"));
                                CHECK(v && (!strcmp(v, "pass") || !strcmp(v, "warn") || !strcmp(v, "fail") ||
                                            !strcmp(v, "skip")));
                                CHECK(json_is_object(json_object_get(o, "evidence")));
                                CHECK(json_is_string(json_object_get(o, "message")));
                        }
                        json_decref(last);
                        last = o;
                        lines++;
                }
                CHECK_INT(verdicts, 10);
                CHECK_INT(lines, 12); /* node, 10 verdicts, summary */
                json_t *sum = json_object_get(last, "summary");
                CHECK_INT(json_integer_value(json_object_get(sum, "fail")), 3);
                json_decref(last);
        }

        /* inventory --json is one document */
        snprintf(args, sizeof(args), "inventory --json --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        {
                json_t *j = json_loads(out, 0, NULL);
                CHECK(j != NULL);
                CHECK_INT(json_array_size(json_object_get(json_object_get(j, "resources"), "spinlane.io/dpdk-nic")), 2);
                json_decref(j);
        }

        /* --config: readable JSON object accepted (resource_prefix honoured), else 2 */
        snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
        FILE *f = fopen(cfg, "w");
        fputs("{\"resource_prefix\": \"example.com\"}\n", f);
        fclose(f);
        snprintf(args, sizeof(args), "inventory --json --root '%s/eks-x86' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "\"example.com/dpdk-nic\"") != NULL);
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        f = fopen(cfg, "w");
        fputs("{\"resource_prefix\": ", f);
        fclose(f);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        f = fopen(cfg, "w");
        fputs("[1, 2]", f);
        fclose(f);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s/missing.json'", dir, dir);
        CHECK_INT(run(args, out, sizeof(out)), 2);

        /* problems are named in the human output */
        snprintf(cfg, sizeof(cfg), "%s/broken/proc/cmdline", dir);
        f = fopen(cfg, "w");
        for (int i = 0; i < 300000; i++)
                fputs("x ", f);
        fclose(f);
        snprintf(args, sizeof(args), "preflight --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "problem: /proc/cmdline: File too large (kernel command line)") != NULL);

        fixture_remove(dir);
        return test_done();
}
