/* SPDX-License-Identifier: Apache-2.0 */
/* The spinlane-agent command line: subcommand table, options, exit codes 0/1/2, the
 * JSON forms, and the --config hook, run as a person runs them on fixture nodes. */
#include "fixture.h"
#include "version.h"


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

        /* --version on the agent, any subcommand and the daemon binary */
        CHECK_INT(run("--version", out, sizeof(out)), 0);
        CHECK_STR(out, "spinlane-agent " SPINLANE_VERSION "\n");
        CHECK_INT(run("preflight --version", out, sizeof(out)), 0);
        CHECK_STR(out, "spinlane-agent " SPINLANE_VERSION "\n");
        {
                char cmd[1200];
                const char *bd = getenv("SPINLANE_BINARY_DIR");
                if (bd) {
                        snprintf(cmd, sizeof(cmd), "'%s/agent/spinlane-agent-run'", bd);
                        CHECK_INT(fixture_run(cmd, "--version", "2>&1", out, sizeof(out)), 0);
                        CHECK_STR(out, "spinlane-agent " SPINLANE_VERSION "\n");
                }
        }

        /* --log-format json: one format on stdout and stderr: every line, logs and
         * verdicts alike, is a JSON object (verdicts used to stay text without --json) */
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --log-format json", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strncmp(out, "{\"ts\":\"", 7) == 0);
        CHECK(strstr(out, "\"level\":\"info\"") != NULL);
        CHECK(strstr(out, "\"check\":\"prep-nic-binding\"") != NULL);
        {
                char copy[sizeof(out)];
                int lines = 0, objects = 0;
                snprintf(copy, sizeof(copy), "%s", out);
                for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
                        json_t *j = json_loads(l, 0, NULL);
                        lines++;
                        objects += json_is_object(j);
                        if (!json_is_object(j))
                                fprintf(stderr, "not JSON: %s\n", l);
                        json_decref(j);
                }
                CHECK(lines >= 4);
                CHECK_INT(objects, lines);
        }
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --log-format json", dir);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "{\"check\":\"isolated-cpus\",\"verdict\":\"pass\"") != NULL);
        CHECK(strstr(out, "PASS isolated-cpus") == NULL);
        /* a config error on stderr in the same format */
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --log-format json --config '%s/none.json'", dir, dir);
        CHECK_INT(fixture_run(bin, args, "2>&1", out, sizeof(out)), 2);
        CHECK(strncmp(out, "{\"level\":\"error\",\"msg\":\"config: cannot open ", 44) == 0);
        /* two formats at once: a usage error */
        CHECK_INT(fixture_run(bin, "preflight --json --log-format human", "2>&1", out, sizeof(out)), 2);
        CHECK(strstr(out, "--json and --log-format human ask for two formats") != NULL);
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --log-format human", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(out[0] != '{' && strstr(out, " info  ") != NULL);

        /* a good node whose NICs have addresses: 0; without addresses, or a broken node: 1.
         * eks-x86's two ENAs are on vfio-pci with no MAC on record: only static entries by
         * PCI address can give them one, and the verdict says exactly that. */
        char addr_cfg[1024], state[1024];
        snprintf(addr_cfg, sizeof(addr_cfg), "%s/addr-config.json", dir);
        fixture_write(addr_cfg, "{\"addresses\": {\"static\": ["
                                "{\"pci\": \"0000:00:06.0\", \"ipv4\": \"10.0.6.10/24\", \"gateway\": \"10.0.6.1\"},"
                                "{\"pci\": \"0000:00:07.0\", \"ipv4\": \"10.0.7.10/24\"}]}}");
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s'", dir, addr_cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS isolated-cpus: 6 isolated physical cores (CPUs 2-7,10-15)\n") != NULL);
        CHECK(strstr(out, "PASS nic-address: every advertised NIC has an address: 0000:00:06.0 10.0.6.10/24 gateway "
                          "10.0.6.1 (static), 0000:00:07.0 10.0.7.10/24, no gateway (static)\n") != NULL);
        CHECK(strstr(out, "nic: 0000:00:06.0 1d0f:ec20 ena driver=vfio-pci numa=0 ipv4=10.0.6.10/24 gateway=10.0.6.1 "
                          "(static): ") != NULL);
        CHECK(strstr(out, "summary: 10 pass, 1 warn, 0 fail, 1 skip\n") != NULL);
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL nic-address: 2 of 2 DPDK NICs without an address (listed Unhealthy to the kubelet): "
                          "0000:00:06.0: on vfio-pci and its MAC is not recorded (bound outside spinlane, or before it "
                          "recorded MACs), so AWS IMDS cannot be asked for its address; 0000:00:07.0: ") != NULL);
        CHECK(strstr(out, "; remedy: 0000:00:06.0, 0000:00:07.0: only a static entry by PCI address can give them an "
                          "address: \"addresses\": {\"static\": [{\"pci\": \"0000:00:06.0\", ") != NULL);
        CHECK(strstr(out, "summary: 9 pass, 1 warn, 1 fail, 1 skip\n") != NULL);
        /* their MACs recorded in the bind state (as spinlane records them when it binds):
         * the metadata could tell, and only the running agent asks it */
        snprintf(state, sizeof(state), "mkdir -p '%s/eks-x86/var/lib/spinlane'", dir);
        CHECK_INT(system(state), 0);
        snprintf(state, sizeof(state), "%s/eks-x86/var/lib/spinlane/bind-state.json", dir);
        fixture_write(state, "{\"version\": 1, \"count\": 2, \"nics\": ["
                             "{\"pci\": \"0000:00:06.0\", \"original_driver\": \"ena\", \"driver\": \"vfio-pci\","
                             " \"netdev\": \"eth1\", \"mac\": \"0a:1b:2c:3d:4e:06\"},"
                             "{\"pci\": \"0000:00:07.0\", \"original_driver\": \"ena\", \"driver\": \"vfio-pci\","
                             " \"netdev\": \"eth2\", \"mac\": \"0a:1b:2c:3d:4e:07\"}]}");
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "SKIP nic-address: 0000:00:06.0: address from AWS IMDS: known only to the running agent "
                          "(spinlane-agent run); this command does not ask the metadata service; 0000:00:07.0: ") != NULL);
        CHECK(strstr(out, "summary: 9 pass, 1 warn, 0 fail, 2 skip\n") != NULL);
        /* a static entry by that MAC overrides the metadata */
        fixture_write(addr_cfg, "{\"addresses\": {\"static\": [{\"mac\": \"0a:1b:2c:3d:4e:07\", \"ipv4\": \"10.0.7.10/24\"}]}}");
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s'", dir, addr_cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "SKIP nic-address: 0000:00:06.0: address from AWS IMDS: known only to the running agent "
                          "(spinlane-agent run); this command does not ask the metadata service; known: 0000:00:07.0 "
                          "10.0.7.10/24, no gateway (static)\n") != NULL);
        snprintf(args, sizeof(args), "inventory --json --root '%s/eks-x86' --config '%s'", dir, addr_cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        {
                json_t *j = json_loads(out, 0, NULL);
                json_t *r = json_object_get(json_object_get(j, "resources"), "spinlane.io/dpdk-nic");
                json_t *n0 = json_array_get(r, 0), *n1 = json_array_get(r, 1);
                CHECK_STR(json_string_value(json_object_get(n0, "mac")), "0a:1b:2c:3d:4e:06");
                CHECK(json_is_null(json_object_get(n0, "ipv4")));
                CHECK_STR(json_string_value(json_object_get(n0, "address_state")), "agent-only");
                CHECK_STR(json_string_value(json_object_get(n1, "ipv4")), "10.0.7.10/24");
                CHECK(json_is_null(json_object_get(n1, "gateway")));
                CHECK_STR(json_string_value(json_object_get(n1, "address_source")), "static");
                CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "nics"), 1), "mac_source")),
                          "bind-state");
                json_decref(j);
        }
        /* a garbled state file: named on stderr, its MACs not used, the command goes on */
        fixture_write(state, "{\"version\": 1, \"count\": 3");
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86'", dir);
        CHECK_INT(fixture_run(bin, args, "2>&1", out, sizeof(out)), 1);
        CHECK(strstr(out, "spinlane-agent: /var/lib/spinlane/bind-state.json: state file is truncated or garbled: ") != NULL);
        CHECK(strstr(out, "FAIL nic-address: 2 of 2 DPDK NICs without an address") != NULL);
        CHECK_INT(unlink(state), 0);
        fixture_write(addr_cfg, "{\"addresses\": {\"static\": ["
                                "{\"pci\": \"0000:00:06.0\", \"ipv4\": \"10.0.6.10/24\", \"gateway\": \"10.0.6.1\"},"
                                "{\"pci\": \"0000:00:07.0\", \"ipv4\": \"10.0.7.10/24\"}]}}");

        snprintf(args, sizeof(args), "preflight --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL hugetlbfs: no hugetlbfs mount in /proc/mounts; remedy: mount -t hugetlbfs") != NULL);
        CHECK(strstr(out, "SKIP nic-address: no DPDK NIC is advertised\n") != NULL);
        CHECK(strstr(out, "summary: 2 pass, 3 warn, 3 fail, 4 skip\n") != NULL);

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
                CHECK_INT(verdicts, 12);
                CHECK_INT(lines, 14); /* node, 12 verdicts (kernel-args: skip), summary */
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
        fputs("{\"resource_prefix\": \"example.com\", \"addresses\": {\"static\": [{\"pci\": \"0000:00:06.0\", "
              "\"ipv4\": \"10.0.6.10/24\"}, {\"pci\": \"0000:00:07.0\", \"ipv4\": \"10.0.7.10/24\"}]}}\n", f);
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
