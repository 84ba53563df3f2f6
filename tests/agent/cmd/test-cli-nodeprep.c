/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent prepare` and `spinlane-agent restore` as a person runs them on fixture
 * nodes: exit codes 0/1/2, a bad config named by key, JSON lines, and restore with no
 * state, a garbled state, a NIC back on its driver after a reboot, and a NIC the fake
 * tree cannot give back (no kernel behind it: it stays recorded). Failing closed: 2 100
 * routes, two default routes and a table-2-only pod ENI, no readable link usage, 2 500
 * host mounts, a named config file that is missing at start and one removed at run time. */
#include "fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static char dir[512];
static char bin[1024];

/* Run "spinlane-agent ARGS", capture stdout and stderr (up to size), return the exit code. */
static int run(const char *args, char *out, size_t size) { return fixture_run(bin, args, "2>&1", out, size); }

/* Wait until the file at path contains needle (at most ms; 0: look once, quietly);
 * returns whether it did. */
static bool wait_for_text(const char *path, const char *needle, int ms)
{
        static char buf[1 << 16];
        for (int waited = 0; waited <= ms; waited += 20) {
                FILE *f = fopen(path, "r");
                if (f) {
                        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
                        buf[n] = '\0';
                        fclose(f);
                        if (strstr(buf, needle))
                                return true;
                }
                usleep(20000);
        }
        if (ms > 0)
                fprintf(stderr, "no \"%s\" in %s after %d ms\n", needle, path, ms);
        return false;
}

/* The fixtures' two secondary ENAs are on vfio-pci with no MAC on record: only static
 * entries give them addresses (without, nic-address fails and they are Unhealthy). */
#define ADDRS "\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.6.10/24\"}," \
              "{\"pci\":\"0000:00:07.0\",\"ipv4\":\"10.0.7.10/24\"}]}"
#define ADDR_CFG "{" ADDRS "}"

/* The daemon: a config change applied, a bad one rejected, SIGHUP, SIGTERM -> 0. */
static void test_daemon(const char *b)
{
        char exe[1024], root[600], cfg[600], logp[600];
        snprintf(exe, sizeof(exe), "%s/agent/spinlane-agent", b);
        snprintf(root, sizeof(root), "%s/eks-x86", dir);
        snprintf(cfg, sizeof(cfg), "%s/run-config.json", dir);
        snprintf(logp, sizeof(logp), "%s/run.log", dir);
        fixture_write(cfg, "{\"cores\":{\"cpus\":\"2-4,10-12\"}," ADDRS "}");
        pid_t pid = fork();
        if (pid == 0) {
                FILE *f = freopen(logp, "w", stdout);
                (void)f;
                dup2(1, 2);
                execl(exe, exe, "run", "--root", root, "--config", cfg, (char *)NULL);
                _exit(127);
        }
        CHECK(pid > 0);
        CHECK(wait_for_text(logp, "node preparation: applying the config (start)", TEST_WAIT_MS));
        CHECK(wait_for_text(logp, "PASS prep-nic-binding: 0 NIC(s) bound to vfio-pci now, 2 already bound", TEST_WAIT_MS));
        /* cores.cpus narrows the 6 isolated cores (2-7 with siblings 10-15) to 3. */
        CHECK(wait_for_text(logp, "spinlane.io/isolated-core: 3 devices, 3 healthy", TEST_WAIT_MS));
        /* A bad config: rejected, the agent keeps running. */
        fixture_write(cfg, "{\"nics\":{\"max\":-1}}");
        CHECK(wait_for_text(logp, "config: \"nics.max\": expected an integer from 0 to 256, got -1", TEST_WAIT_MS));
        CHECK(wait_for_text(logp, "config reload rejected; keeping the last good config", TEST_WAIT_MS));
        /* A good change is applied. */
        fixture_write(cfg, "{\"cores\":{\"cpus\":\"2-4,10-12\"},\"hugepages\":{\"per_node\":{\"0\":1024}}," ADDRS "}");
        CHECK(wait_for_text(logp, "node preparation: applying the config (config changed)", TEST_WAIT_MS));
        CHECK(wait_for_text(logp, "PASS prep-hugepages: reserved node 0: 1024 x 2 MiB", TEST_WAIT_MS));
        /* SIGHUP re-applies. */
        kill(pid, SIGHUP);
        CHECK(wait_for_text(logp, "node preparation: applying the config (reload)", TEST_WAIT_MS));
        /* The file goes away: the config in force stays (never the defaults, which would
         * advertise the NIC the config excluded), and the log says so. */
        fixture_write(cfg, "{\"cores\":{\"cpus\":\"2-4,10-12\"},\"nics\":{\"pci\":[\"0000:00:06.0\"]}," ADDRS "}");
        CHECK(wait_for_text(logp, "spinlane.io/dpdk-nic: device 0000:00:07.0 is now Unhealthy", TEST_WAIT_MS));
        CHECK_INT(unlink(cfg), 0);
        CHECK(wait_for_text(logp, "is gone; keeping the config in force (the last one read from it)", TEST_WAIT_MS));
        CHECK(!wait_for_text(logp, "0000:00:07.0 is now Healthy", 0));
        /* Back: followed again. */
        fixture_write(cfg, "{\"cores\":{\"cpus\":\"2-4,10-12\"}," ADDRS "}");
        CHECK(wait_for_text(logp, "spinlane.io/dpdk-nic: device 0000:00:07.0 is now Healthy", TEST_WAIT_MS));
        CHECK(!wait_for_text(logp, "file absent: defaults", 0));
        kill(pid, SIGTERM);
        int st = 0;
        pid_t w = 0;
        for (int waited = 0; waited <= TEST_WAIT_MS && (w = waitpid(pid, &st, WNOHANG)) == 0; waited += 20)
                usleep(20000);
        if (w == 0) { /* still running after the bound */
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                st = -1;
        }
        CHECK(w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Never take a NIC the node uses, and take nothing when in doubt (issue 9, C). */
static void test_fail_closed(void)
{
        static char out[1 << 16];
        char args[2048], cfg[700];

        snprintf(cfg, sizeof(cfg), "%s/fc-config.json", dir);
        fixture_write(cfg, ADDR_CFG);

        /* 2 100 routes (a 269 KB /proc/net/route): the primary is still known and never
         * selected, nothing is written to it. */
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86-routes' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS prep-nic-binding: 0 NIC(s) bound to vfio-pci now, 2 already bound\n") != NULL);
        CHECK(strstr(out, "0000:00:05.0:") == NULL);
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86-routes' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS primary-nic: primary NIC 0000:00:05.0 (eth0) carries the default route") != NULL);

        /* Two default routes (metric 512 and 513), a pod ENI with routes only in table 2:
         * one primary; the others are refused by PCI address with the reason, also when
         * the config names them; only the untouched ENI is tried. */
        snprintf(args, sizeof(args), "prepare --root '%s/eks-al2023' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:05.0:") == NULL);
        CHECK(strstr(out, "0000:00:06.0: refused: the node uses it: ens6 has address 10.0.2.11/24, has route \"default "
                          "via 10.0.2.1 table main metric 513\" (+1 more); nothing changed") != NULL);
        CHECK(strstr(out, "0000:00:07.0: refused: the node uses it: ens7 has route \"default via 10.0.3.1 table 2 "
                          "metric 0\" (+1 more); nothing changed") != NULL);
        CHECK(strstr(out, "0000:00:08.0: kernel has no driver_override for it; nothing changed") != NULL);
        fixture_write(cfg, "{\"nics\":{\"pci\":[\"0000:00:07.0\"]}}");
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "WARN prep-nic-binding: 0 bound, 0 already bound; 0000:00:07.0: refused: the node uses it: "
                          "ens7 has route") != NULL);
        fixture_write(cfg, "{\"nics\":{\"interfaces\":[\"ens6\"]}}");
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:06.0: refused: the node uses it: ens6 has address") != NULL);
        fixture_write(cfg, ADDR_CFG);
        snprintf(args, sizeof(args), "inventory --json --root '%s/eks-al2023' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        json_t *inv = json_loads(out, 0, NULL), *nics = json_object_get(inv, "nics");
        CHECK_INT(json_array_size(nics), 4);
        for (size_t i = 0; i < json_array_size(nics); i++) {
                json_t *n = json_array_get(nics, i);
                CHECK(json_is_true(json_object_get(n, "primary")) == (i == 0));
                CHECK(json_is_true(json_object_get(n, "in_use")) == (i < 3));
        }
        json_decref(inv);

        /* No readable link usage: nothing is taken, and why. */
        char dump[700];
        snprintf(dump, sizeof(dump), "%s/eks-al2023/spinlane-fixture/rtnetlink.dump", dir);
        CHECK_INT(unlink(dump), 0);
        snprintf(args, sizeof(args), "prepare --root '%s/eks-al2023' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL prep-nic-binding: cannot tell which NICs the node uses (/spinlane-fixture/rtnetlink.dump: "
                          "No such file or directory); no NIC was touched") != NULL);
        CHECK(strstr(out, "0000:00:0") == NULL);

        /* 2 500 host mounts under --root (/proc/1/mounts, 400 KB; /proc/mounts is the
         * agent container's, without the host's hugetlbfs): found in the host's table. */
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86-mounts' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS prep-hugetlbfs: hugetlbfs is mounted at /dev/hugepages (pagesize 2 MiB)") != NULL);
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86-mounts' --config '%s'", dir, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS hugetlbfs: hugetlbfs at /dev/hugepages (pagesize 2048 kB)") != NULL);

        /* A --config that names a missing file is an error, whatever the path (the
         * DaemonSet names the default one). */
        static const char *const cmds[] = {"preflight", "inventory --json", "prepare", "run --once"};
        for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                snprintf(args, sizeof(args), "%s --root '%s/eks-x86' --config '%s/absent.json'", cmds[i], dir, dir);
                CHECK_INT(run(args, out, sizeof(out)), 2);
                /* inventory --json says it as JSON (one format on stdout and stderr) */
                CHECK(strstr(out, strstr(cmds[i], "--json") ? "absent.json\\\": No such file or directory"
                                                            : "absent.json\": No such file or directory") != NULL);
                if (!strstr(out, "No such file"))
                        fprintf(stderr, "  %s: %s\n", cmds[i], out);
        }
        if (access("/etc/spinlane/config.json", F_OK) != 0) {
                snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config /etc/spinlane/config.json", dir);
                CHECK_INT(run(args, out, sizeof(out)), 2);
                CHECK(strstr(out, "config: cannot open \"/etc/spinlane/config.json\": No such file or directory") != NULL);
                /* without --config that file may be absent: the defaults (which give the
                 * vfio-bound NICs, whose MACs are not on record, no address) */
                snprintf(args, sizeof(args), "preflight --root '%s/eks-x86'", dir);
                CHECK_INT(run(args, out, sizeof(out)), 1);
                CHECK(strstr(out, "FAIL nic-address: 2 of 2 DPDK NICs without an address") != NULL);
        } else
                printf("not checked: /etc/spinlane/config.json exists on this machine\n");
}

int main(void)
{
        static char out[1 << 16];
        char args[2048], path[1024];
        const char *b = getenv("SPINLANE_BINARY_DIR");

        if (!b)
                TEST_SKIP("SPINLANE_BINARY_DIR is not set (run under ctest)");
        snprintf(bin, sizeof(bin), "'%s/agent/spinlane-agent'", b);
        fixture_make(dir, sizeof(dir), "eks-x86 broken eks-al2023 eks-x86-routes eks-x86-mounts");

        CHECK_INT(run("--help", out, sizeof(out)), 0);
        CHECK(strstr(out, "prepare") && strstr(out, "restore"));
        CHECK_INT(run("prepare --bogus", out, sizeof(out)), 2);
        CHECK_INT(run("restore extra", out, sizeof(out)), 2);

        /* prepare on a ready node: 0. */
        snprintf(path, sizeof(path), "%s/config.json", dir);
        fixture_write(path, "{\"nics\":{\"kinds\":[\"ena\"]}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS prep-nic-binding: 0 NIC(s) bound to vfio-pci now, 2 already bound\n") != NULL);
        CHECK(strstr(out, "summary: 2 pass, 0 warn, 0 fail, 0 skip\n") != NULL);
        /* --json: every line is a JSON object. */
        snprintf(args, sizeof(args), "prepare --json --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        int lines = 0, good = 0;
        for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
                json_t *j = json_loads(l, 0, NULL);
                lines++;
                good += json_is_object(j);
                json_decref(j);
        }
        CHECK(lines >= 4);
        CHECK_INT(good, lines);

        /* Tuning asked under a fake root: the ioctl is impossible and the tree has no
         * IRQs, nothing is tuned: a skip that says why, not a pass. */
        fixture_write(path, "{\"nics\":{\"kinds\":[\"ena\"]},\"tuning\":{\"interrupt_moderation_off\":true,\"irq_core\":0}}");
        snprintf(args, sizeof(args), "prepare --root '%s/broken' --config '%s'", dir, path);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "SKIP prep-kernel-tuning: nothing tuned (not a live root): eth0: interrupt moderation: not "
                          "the real root, left as is; no IRQs found; eth1: interrupt moderation: not the real root, "
                          "left as is; no IRQs found\n") != NULL);
        CHECK(strstr(out, "PASS prep-kernel-tuning") == NULL);

        /* A bad config: 2, and the message names the key and the value. */
        fixture_write(path, "{\"hugepages\":{\"per_node\":{\"0\":\"lots\"}}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "config: \"hugepages.per_node.0\": expected an integer >= 0, got \"lots\"") != NULL);
        /* preflight and inventory take the same parser. */
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "\"hugepages.per_node.0\"") != NULL);

        /* A step fails: hugepages on a node that does not exist -> 1. */
        fixture_write(path, "{\"hugepages\":{\"per_node\":{\"3\":16}}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL prep-hugepages: node 3, 2 MiB pages: no such NUMA node") != NULL);

        /* broken: the secondary has a route: refused, a warning, exit 0. */
        fixture_write(path, "{}");
        snprintf(args, sizeof(args), "prepare --root '%s/broken' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:06.0: refused: the node uses it: eth1 has address 192.168.0.11/24, has route "
                          "\"192.168.0.0/24 table main metric 100\"; nothing changed") != NULL);

        /* restore: nothing recorded. */
        snprintf(args, sizeof(args), "restore --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "nothing to restore") != NULL);
        /* A garbled state file: 2, nothing touched, the file stays. */
        snprintf(path, sizeof(path), "%s/broken/var/lib/spinlane", dir);
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
        CHECK_INT(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/broken/var/lib/spinlane/bind-state.json", dir);
        fixture_write(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"origi");
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "state file is truncated or garbled") != NULL);
        CHECK(access(path, F_OK) == 0);
        /* After a reboot the NIC is on its original driver again: the record is dropped. */
        fixture_write(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"original_driver\":\"ena\","
                         "\"driver\":\"vfio-pci\",\"netdev\":\"eth1\"}]}");
        char ov[1024];
        snprintf(ov, sizeof(ov), "%s/broken/sys/bus/pci/devices/0000:00:06.0/driver_override", dir);
        fixture_write(ov, "(null)\n");
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:06.0: already on ena") != NULL);
        CHECK(strstr(out, "restore: 1 of 1 NIC(s) back on their original driver") != NULL);
        CHECK(access(path, F_OK) != 0);

        /* eks-x86: a recorded NIC on vfio-pci; the fake tree has no kernel to move it:
         * restore fails for it, says so, and keeps it recorded (exit 1). */
        snprintf(path, sizeof(path), "%s/eks-x86/var/lib/spinlane", dir);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
        CHECK_INT(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/eks-x86/var/lib/spinlane/bind-state.json", dir);
        fixture_write(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"original_driver\":\"ena\","
                         "\"driver\":\"vfio-pci\"}]}");
        snprintf(ov, sizeof(ov), "%s/eks-x86/sys/bus/pci/devices/0000:00:06.0/driver_override", dir);
        fixture_write(ov, "vfio-pci\n");
        snprintf(args, sizeof(args), "restore --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "0000:00:06.0: could not give it back to ena (unbinding from vfio-pci: No such file or directory)") != NULL);
        CHECK(strstr(out, "the others stay recorded") != NULL);
        CHECK(access(path, F_OK) == 0);

        /* run --once: the same path as prepare; --once belongs to run only. */
        snprintf(path, sizeof(path), "%s/config.json", dir);
        fixture_write(path, "{}");
        snprintf(args, sizeof(args), "run --once --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS prep-nic-binding") != NULL);
        CHECK(strstr(out, "isolated-cpus") == NULL); /* no daemon services */
        snprintf(args, sizeof(args), "prepare --once --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 2);

        test_fail_closed();
        test_daemon(b);
        fixture_remove(dir);
        return test_done();
}
