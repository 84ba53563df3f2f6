/* SPDX-License-Identifier: Apache-2.0 */
/* The real spinlane-launch binary on pod-view fixtures: a passing pod execs a command
 * that prints the environment it received (env(1)), which must hold the computed EAL
 * arguments and AERON_* defaults and keep what the pod set; under the static CPU manager
 * with other cores than spinlane's grant (kubelet-pinned) the driver gets the kubelet's
 * cores; a failing pod exits 1 and starts nothing; --check-only, --warn-only, --json and
 * usage errors. */
#include "fixture.h"
#include "runner.h"
#include "testutil.h"

#include "cleanup.h"
#include "version.h"

#include <jansson.h>

static const char *launcher;
static const char *fakes;          /* the build's stand-ins: fake-aeron/bin/aeronmd, fake-bindings/ */
static char libenv[1200];          /* SPINLANE_AERON_LIBRARY=<the stand-in bindings library> */
static char fake_aeronmd[1024];    /* prints the environment it was started with */

#define BASE_ENV                                                                                   \
        "SPINLANE_ISOLATED_CPUS=1-3,5-7", "SPINLANE_ISOLATED_CORES=1,2,3",                         \
                "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0", "SPINLANE_NIC_0_KIND=ena",         \
                "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=0",                         \
                "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7", "SPINLANE_NIC_1_KIND=ena",    \
                "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_NUMA=0",                         \
                "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio,/dev/vfio/7", "HOSTNAME=aeron-md-0",        \
                "SPINLANE_NIC_0_IPV4=10.0.1.10/24", "SPINLANE_NIC_1_IPV4=10.0.2.10/24",             \
                "SPINLANE_NIC_0_GATEWAY=", "SPINLANE_NIC_1_GATEWAY=10.0.2.1", libenv,               \
                "SPINLANE_DATAPATH=off", /* a fake tree carries no DPDK: test-datapath-veth and test-aeron-launch run it */ \
                "PATH=/usr/bin:/bin"

static char *find_env(void)
{
        static const char *const cands[] = { "/usr/bin/env", "/bin/env" };
        for (unsigned i = 0; i < 2; i++)
                if (access(cands[i], X_OK) == 0)
                        return (char *)cands[i];
        TEST_SKIP("no env(1) to print the environment");
}

static void test_exec(const char *root)
{
        char *out, buf[1024];
        char *envp[] = { BASE_ENV, "AERON_RECEIVER_IDLE_STRATEGY=spinning", "AERON_DIR=/dev/shm/aeron", NULL };
        /* the shared-library aeronmd stand-in: aeron-bindings passes too */
        char *argv[] = { (char *)launcher, "--root", (char *)root, "--", fake_aeronmd, NULL };

        int rc = run_capture(argv, envp, NULL, &out);
        CHECK_INT(rc, 0);
        if (rc != 0)
                fprintf(stderr, "%s\n", out);
        CHECK_STR(env_line(out, "SPINLANE_EAL_ARGS", buf, sizeof(buf)),
                  "-l 1-3,5-7 --main-lcore 1 --file-prefix spinlane-aeron-md-0 --huge-dir /dev/hugepages --socket-mem 256 -a 0000:00:06.0 -a 0000:00:07.0");
        CHECK_STR(env_line(out, "AERON_THREADING_MODE", buf, sizeof(buf)), "DEDICATED");
        CHECK_STR(env_line(out, "AERON_CONDUCTOR_CPU_AFFINITY", buf, sizeof(buf)), "1");
        CHECK_STR(env_line(out, "AERON_SENDER_CPU_AFFINITY", buf, sizeof(buf)), "2");
        CHECK_STR(env_line(out, "AERON_RECEIVER_CPU_AFFINITY", buf, sizeof(buf)), "3");
        CHECK_STR(env_line(out, "AERON_SENDER_IDLE_STRATEGY", buf, sizeof(buf)), "noop");
        CHECK_STR(env_line(out, "AERON_RECEIVER_IDLE_STRATEGY", buf, sizeof(buf)), "spinning"); /* the pod's own */
        CHECK_STR(env_line(out, "AERON_CONDUCTOR_IDLE_STRATEGY", buf, sizeof(buf)), "spinning");
        CHECK_STR(env_line(out, "AERON_DIR", buf, sizeof(buf)), "/dev/shm/aeron");
        CHECK_STR(env_line(out, "SPINLANE_PIN_MODE", buf, sizeof(buf)), "spinlane-pinned");
        CHECK_STR(env_line(out, "SPINLANE_PINNED_CPUS", buf, sizeof(buf)), "1-3,5-7");
        /* the bypass: two NICs, sender on the first, receiver on the second, addresses
         * from the allocation; the bindings; the rest of the low-latency profile */
        CHECK_STR(env_line(out, "SPINLANE_SENDER_DEVICE", buf, sizeof(buf)), "0000:00:06.0");
        CHECK_STR(env_line(out, "SPINLANE_RECEIVER_DEVICE", buf, sizeof(buf)), "0000:00:07.0");
        CHECK_STR(env_line(out, "SPINLANE_SENDER_IPV4", buf, sizeof(buf)), "10.0.1.10/24");
        CHECK_STR(env_line(out, "SPINLANE_RECEIVER_IPV4", buf, sizeof(buf)), "10.0.2.10/24");
        CHECK(env_line(out, "SPINLANE_SENDER_GATEWAY", buf, sizeof(buf)) == NULL);
        CHECK_STR(env_line(out, "SPINLANE_RECEIVER_GATEWAY", buf, sizeof(buf)), "10.0.2.1");
        CHECK_STR(env_line(out, "AERON_DRIVER_DYNAMIC_LIBRARIES", buf, sizeof(buf)), libenv + strlen("SPINLANE_AERON_LIBRARY="));
        CHECK_STR(env_line(out, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA", buf, sizeof(buf)),
                  "spinlane_udp_channel_transport_bindings");
        CHECK_STR(env_line(out, "AERON_TERM_BUFFER_SPARSE_FILE", buf, sizeof(buf)), "false");
        CHECK(env_line(out, "AERON_PRE_TOUCH_MAPPED_MEMORY", buf, sizeof(buf)) == NULL); /* no such setting in Aeron */
        CHECK_STR(env_line(out, "AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND", buf, sizeof(buf)), "2");
        CHECK(strstr(out, "PASS aeron-bindings: ") != NULL);
        CHECK(strstr(out, "summary: 9 pass, 0 warn, 0 fail, 1 skip\n") != NULL);
        free(out);

        /* the pod's own contract values win; one NIC takes both roles */
        char *envp1[] = { "SPINLANE_DPDK_NICS=0000:00:06.0", "SPINLANE_SENDER_IPV4=192.168.7.7/16",
                          "SPINLANE_RECEIVER_IPV4=192.168.7.7/16", "SPINLANE_SENDER_DEVICE=net_af_packet0",
                          "SPINLANE_RECEIVER_DEVICE=net_af_packet0", "AERON_TERM_BUFFER_SPARSE_FILE=true", BASE_ENV, NULL };
        rc = run_capture(argv, envp1, NULL, &out);
        CHECK_INT(rc, 0);
        CHECK_STR(env_line(out, "SPINLANE_SENDER_IPV4", buf, sizeof(buf)), "192.168.7.7/16");
        CHECK_STR(env_line(out, "SPINLANE_SENDER_DEVICE", buf, sizeof(buf)), "net_af_packet0");
        CHECK_STR(env_line(out, "SPINLANE_RECEIVER_DEVICE", buf, sizeof(buf)), "net_af_packet0");
        CHECK_STR(env_line(out, "AERON_TERM_BUFFER_SPARSE_FILE", buf, sizeof(buf)), "true");
        CHECK(strstr(out, "PASS aeron-bindings: ") != NULL && strstr(out, "sender and receiver on net_af_packet0 192.168.7.7/16"));
        free(out);

        /* an allocation whose NIC has no address: allocation-env fails naming the variable
         * (the device plugin always sends one), nothing starts */
        char *envp2[] = { "SPINLANE_NIC_1_IPV4=", BASE_ENV, NULL };
        rc = run_capture(argv, envp2, NULL, &out);
        CHECK_INT(rc, 1);
        CHECK(strstr(out, "FAIL allocation-env: SPINLANE_NIC_1_IPV4=\"\" is not an IPv4 address with its prefix (a.b.c.d/len)") != NULL);
        CHECK(strstr(out, "not starting") != NULL);
        free(out);

        /* a bindings library that is not there: fails before anything starts */
        char *envp3[] = { "SPINLANE_AERON_LIBRARY=/nonexistent/libspinlane_aeron.so", BASE_ENV, NULL };
        rc = run_capture(argv, envp3, NULL, &out);
        CHECK_INT(rc, 1);
        CHECK(strstr(out, "FAIL aeron-bindings: /nonexistent/libspinlane_aeron.so (AERON_DRIVER_DYNAMIC_LIBRARIES) does not exist") != NULL);
        free(out);
}

/* kubelet-pinned: spinlane granted cores 2 and 3 (CPUs 2-3,6-7), the static CPU manager
 * gave the container cores 1 and 2 (CPUs 1-2,5-6): the driver runs on the kubelet's. */
static void test_exec_kubelet(void)
{
        char *out, buf[1024];
        char *envp[] = { "SPINLANE_ISOLATED_CPUS=2-3,6-7", "SPINLANE_ISOLATED_CORES=p0c2,p0c3", BASE_ENV, NULL };
        char *root = fx_new_root();
        fx_pod p = { .cg = FX_V2, .cgroup_path = "/", .free_hugepages = 512, .cpus_allowed = "1-2,5-6" };
        fx_build(root, &p);
        char *argv[] = { (char *)launcher, "--root", root, "--", find_env(), NULL };

        int rc = run_capture(argv, envp, NULL, &out);
        CHECK_INT(rc, 0);
        if (rc != 0)
                fprintf(stderr, "%s\n", out);
        CHECK_STR(env_line(out, "SPINLANE_EAL_ARGS", buf, sizeof(buf)),
                  "-l 1-2,5-6 --main-lcore 1 --file-prefix spinlane-aeron-md-0 --huge-dir /dev/hugepages --socket-mem 256 -a 0000:00:06.0 -a 0000:00:07.0");
        CHECK_STR(env_line(out, "SPINLANE_PIN_MODE", buf, sizeof(buf)), "kubelet-pinned");
        CHECK_STR(env_line(out, "SPINLANE_PINNED_CPUS", buf, sizeof(buf)), "1-2,5-6");
        CHECK_STR(env_line(out, "SPINLANE_ISOLATED_CPUS", buf, sizeof(buf)), "2-3,6-7"); /* the grant, kept as evidence */
        CHECK_STR(env_line(out, "AERON_SENDER_CPU_AFFINITY", buf, sizeof(buf)), "1");
        CHECK_STR(env_line(out, "AERON_RECEIVER_CPU_AFFINITY", buf, sizeof(buf)), "2");
        CHECK(env_line(out, "AERON_CONDUCTOR_CPU_AFFINITY", buf, sizeof(buf)) == NULL); /* two cores: it floats */
        CHECK(strstr(out, "PASS cpuset: kubelet-pinned: the kubelet's static CPU manager chose cores {1,5},{2,6} (CPUs 1-2,5-6); "
                          "spinlane's grant {2,6},{3,7} (CPUs 2-3,6-7) differs: pinning to the kubelet's exclusive CPUs\n") != NULL);
        CHECK(strstr(out, "summary: 8 pass, 1 warn, 0 fail, 1 skip\n") != NULL); /* env(1) is no aeronmd */
        free(out);

        /* the same cgroup with half a core (no full-pcpus-only): nothing starts */
        fx_remove(root);
        p.cpus_allowed = "1-2,5";
        fx_build(root, &p);
        char marker[512];
        snprintf(marker, sizeof(marker), "%s/started", root);
        char *argv2[] = { (char *)launcher, "--root", root, "--", "/usr/bin/touch", marker, NULL };
        CHECK_INT(run_capture(argv2, envp, NULL, &out), 1);
        CHECK(access(marker, F_OK) != 0);
        CHECK(strstr(out, "FAIL cpuset: the granted CPUs 2-3,6-7 are not inside this container's cpuset 1-2,5") != NULL);
        free(out);
        fx_remove(root);
        free(root);
}

static void test_refuse(const char *root)
{
        char marker[512], *out;
        snprintf(marker, sizeof(marker), "%s/started", root);
        char *envp[] = { "AERON_THREADING_MODE=SHARED", BASE_ENV, NULL };
        char *argv[] = { (char *)launcher, "--root", (char *)root, "--", "/usr/bin/touch", marker, NULL };

        CHECK_INT(run_capture(argv, envp, NULL, &out), 1);
        CHECK(access(marker, F_OK) != 0); /* nothing started */
        CHECK(strstr(out, "FAIL aeron-config: AERON_THREADING_MODE=SHARED") != NULL);
        CHECK(strstr(out, "not starting /usr/bin/touch: 1 check(s) failed") != NULL);
        free(out);

        /* --warn-only starts it anyway, loudly */
        char *argv2[] = { (char *)launcher, "--warn-only", "--root", (char *)root, "--", "/usr/bin/touch", marker, NULL };
        CHECK_INT(run_capture(argv2, envp, NULL, &out), 0);
        CHECK(access(marker, F_OK) == 0);
        CHECK(strstr(out, "WARNING --warn-only: starting despite 1 failed check(s)") != NULL);
        unlink(marker);
        free(out);

        /* --check-only never starts anything */
        char *envp_ok[] = { BASE_ENV, NULL };
        char *argv3[] = { (char *)launcher, "--check-only", "--root", (char *)root, "--", "/usr/bin/touch", marker, NULL };
        CHECK_INT(run_capture(argv3, envp_ok, NULL, &out), 0);
        CHECK(access(marker, F_OK) != 0);
        free(out);
        CHECK_INT(run_capture(argv3, envp, NULL, &out), 1);
        free(out);
}

static void test_json(const char *root)
{
        char *out;
        char *envp[] = { "SPINLANE_ISOLATED_CPUS=2-", BASE_ENV, NULL };
        char *argv[] = { (char *)launcher, "--json", "--check-only", "--root", (char *)root, NULL };
        unsigned lines = 0, fails = 0;

        CHECK_INT(run_capture(argv, envp, NULL, &out), 1);
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
                json_error_t err;
                json_t *o = json_loads(line, 0, &err);
                CHECK(o != NULL);
                if (!o)
                        continue;
                lines++;
                const char *v = json_string_value(json_object_get(o, "verdict"));
                if (v && strcmp(v, "fail") == 0) {
                        fails++;
                        CHECK_STR(json_string_value(json_object_get(o, "check")), "allocation-env");
                        CHECK(strstr(json_string_value(json_object_get(o, "message")), "SPINLANE_ISOLATED_CPUS") != NULL);
                }
                json_t *s = json_object_get(o, "summary");
                if (s)
                        CHECK_INT(json_integer_value(json_object_get(s, "fail")), 1);
                json_decref(o);
        }
        CHECK_INT(lines, 11);
        CHECK_INT(fails, 1);
        free(out);
}

static void test_usage(const char *root)
{
        char *out;
        char *envp[] = { BASE_ENV, NULL };
        char *a1[] = { (char *)launcher, "--bogus", NULL };
        char *a2[] = { (char *)launcher, "--root", "/nonexistent/sl-launch", NULL };
        char *a3[] = { (char *)launcher, "--root", (char *)root, "stray", NULL };
        char *a4[] = { (char *)launcher, "--check-only", "--warn-only", NULL };
        char *a5[] = { (char *)launcher, "--root", (char *)root, "--", "/nonexistent/sl-launch-cmd", NULL };

        CHECK_INT(run_capture(a1, envp, NULL, &out), 2);
        free(out);
        CHECK_INT(run_capture(a2, envp, NULL, &out), 2);
        free(out);
        CHECK_INT(run_capture(a3, envp, NULL, &out), 2);
        free(out);
        CHECK_INT(run_capture(a4, envp, NULL, &out), 2);
        free(out);
        /* --version: the release, exit 0, nothing checked */
        char *aver[] = { (char *)launcher, "--version", NULL };
        CHECK_INT(run_capture(aver, envp, NULL, &out), 0);
        CHECK_STR(out, "spinlane-launch " SPINLANE_VERSION "\n");
        free(out);
        /* a driver that is not there fails aeron-bindings before anything starts */
        CHECK_INT(run_capture(a5, envp, NULL, &out), 1);
        CHECK(strstr(out, "FAIL aeron-bindings: the driver \"/nonexistent/sl-launch-cmd\" is not an executable file") != NULL);
        free(out);
        /* "--" with nothing after it runs the default aeronmd (found on PATH), as a pod
         * with command: ["spinlane-launch", "--"] and no args expects */
        {
                char dir[512], path[600], pathenv[600], marker[600];
                snprintf(dir, sizeof(dir), "%s/fakebin", root);
                snprintf(path, sizeof(path), "%s/aeronmd", dir);
                snprintf(marker, sizeof(marker), "%s/aeronmd-ran", root);
                snprintf(pathenv, sizeof(pathenv), "PATH=%s:/usr/bin:/bin", dir);
                CHECK_INT(mkdir(dir, 0755), 0);
                FILE *f = fopen(path, "w");
                CHECK(f != NULL);
                if (f) {
                        fprintf(f, "#!/bin/sh\ntouch '%s'\n", marker);
                        fclose(f);
                }
                CHECK_INT(chmod(path, 0755), 0);
                char *envp6[] = { BASE_ENV, NULL };
                envp6[ELEMENTSOF(envp6) - 2] = pathenv; /* BASE_ENV's last entry is PATH */
                char *a6[] = { (char *)launcher, "--root", (char *)root, "--", NULL };
                CHECK_INT(run_capture(a6, envp6, NULL, &out), 0);
                CHECK(strstr(out, "exec: aeronmd\n") != NULL);
                CHECK(access(marker, F_OK) == 0);
                free(out);
                unlink(marker);
                unlink(path);
                rmdir(dir);
        }
}

/* Every stdout line of --json is one JSON object, on every path: exec, and the refusal
 * of --warn-only without a grant to plan from. Returns the last object (caller frees). */
static json_t *json_lines(char *out, unsigned *ret_lines)
{
        json_t *last = NULL;
        unsigned n = 0;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
                json_error_t err;
                json_t *o = json_loads(line, 0, &err);
                if (!o)
                        fprintf(stderr, "not JSON: %s\n", line);
                CHECK(o != NULL);
                CHECK(!o || json_is_object(o));
                n++;
                json_decref(last);
                last = o;
        }
        *ret_lines = n;
        return last;
}

static void test_json_paths(const char *root)
{
        char *out;
        unsigned n;
        char *envp[] = { BASE_ENV, NULL };
        char *argv[] = { (char *)launcher, "--json", "--root", (char *)root, "--", "/bin/true", NULL };

        CHECK_INT(run_capture(argv, envp, NULL, &out), 0);
        json_t *last = json_lines(out, &n);
        CHECK_INT(n, 12); /* 10 verdicts (datapath: skip), summary, exec */
        CHECK(last && json_is_array(json_object_get(last, "exec")));
        CHECK(last && json_is_object(json_object_get(last, "env")));
        json_decref(last);
        free(out);

        /* no SPINLANE_ISOLATED_CPUS: allocation-env fails; --warn-only still cannot plan */
        char *envp2[] = { "SPINLANE_DPDK_NICS=0000:00:06.0", "SPINLANE_NIC_0_KIND=ena", "SPINLANE_NIC_0_DRIVER=vfio-pci",
                          "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7", "PATH=/usr/bin:/bin", NULL };
        char *argv2[] = { (char *)launcher, "--json", "--warn-only", "--root", (char *)root, "--", "/bin/true", NULL };
        CHECK_INT(run_capture(argv2, envp2, NULL, &out), 1);
        last = json_lines(out, &n);
        CHECK(last && json_is_false(json_object_get(last, "start")));
        json_decref(last);
        free(out);

        /* one format on stdout and stderr: with --json, the --warn-only warning on stderr
         * is a JSON object too (stderr joined to stdout by the shell) */
        if (access("/bin/sh", X_OK) == 0) {
                char *envp3[] = { "AERON_SENDER_IDLE_STRATEGY=backoff", BASE_ENV, NULL };
                char *argv3[] = { "/bin/sh", "-c", "exec \"$0\" --json --warn-only --root \"$1\" -- /bin/true 2>&1",
                                  (char *)launcher, (char *)root, NULL };
                CHECK_INT(run_capture(argv3, envp3, NULL, &out), 0);
                CHECK(strstr(out, "{\"level\":\"warn\",\"msg\":\"WARNING: --warn-only: starting /bin/true DESPITE 1 FAILED") != NULL);
                last = json_lines(out, &n);
                CHECK_INT(n, 14); /* 10 verdicts, summary, warn_only, the warning, exec */
                json_decref(last);
                free(out);
        }
}

/* The launcher execs: the command keeps the launcher's PID, so the kubelet's signals
 * (SIGTERM on pod deletion) reach the driver itself. The command's parent must be the
 * process that started the launcher, not a launcher that forked. */
static void test_exec_keeps_pid(const char *root)
{
        char *out, want[32], buf[64];
        char *envp[] = { BASE_ENV, NULL };
        char *argv[] = { (char *)launcher, "--root", (char *)root, "--", "/bin/sh", "-c", "echo SHPPID=$PPID", NULL };

        if (access("/bin/sh", X_OK) != 0)
                TEST_SKIP("no /bin/sh");
        CHECK_INT(run_capture(argv, envp, NULL, &out), 0);
        snprintf(want, sizeof(want), "%d", (int)getpid());
        CHECK_STR(env_line(out, "SHPPID", buf, sizeof(buf)), want);
        free(out);
}

/* The datapath check as the launcher runs it: on (the default), spinlane-datapath runs
 * with the driver's environment; in a fake tree its EAL cannot start on the granted CPUs
 * (this machine lacks them, or the NICs), and the FAIL it reports comes back through the
 * launcher's list and keeps the driver from starting. A bad SPINLANE_DATAPATH_* value
 * is a FAIL naming it, without running anything. */
static void test_datapath(const char *root)
{
        char *out;
        char *envp[] = { BASE_ENV, NULL };
        envp[ELEMENTSOF(envp) - 3] = (char *)"SPINLANE_DATAPATH=on"; /* BASE_ENV: ..., SPINLANE_DATAPATH=off, PATH */
        char *a[] = { (char *)launcher, "--root", (char *)root, "--", fake_aeronmd, NULL };
        CHECK_INT(run_capture(a, envp, NULL, &out), 1);
        CHECK(strstr(out, "FAIL datapath: the DPDK EAL did not start with the driver's arguments") != NULL);
        CHECK(strstr(out, "summary: 9 pass, 0 warn, 1 fail, 0 skip\n") != NULL);
        CHECK(strstr(out, "not starting ") != NULL);
        CHECK(strstr(out, "exec:") == NULL);
        free(out);

        envp[ELEMENTSOF(envp) - 3] = (char *)"SPINLANE_DATAPATH_PEER=10.0.1.300:39990";
        CHECK_INT(run_capture(a, envp, NULL, &out), 1);
        CHECK(strstr(out, "FAIL datapath: SPINLANE_DATAPATH_PEER=\"10.0.1.300:39990\" is not a unicast IPv4 address and a UDP port") != NULL);
        free(out);
}

int main(int argc, char **argv)
{
        if (argc < 2)
                TEST_SKIP("usage: test-launch-run PATH-TO-spinlane-launch");
        launcher = argv[1];
        fakes = argc > 2 ? argv[2] : ".";
        snprintf(libenv, sizeof(libenv), "SPINLANE_AERON_LIBRARY=%s/fake-bindings/libfake-bindings-ok.so", fakes);
        snprintf(fake_aeronmd, sizeof(fake_aeronmd), "%s/fake-aeron/bin/aeronmd", fakes);
        char *root = fx_new_root();
        fx_pod p = { .cg = FX_V2, .cgroup_path = "/", .free_hugepages = 512, .cpus_allowed = "1-3,5-7" };
        fx_build(root, &p);
        test_exec(root);
        test_exec_kubelet();
        test_refuse(root);
        test_json(root);
        test_usage(root);
        test_json_paths(root);
        test_exec_keeps_pid(root);
        test_datapath(root);
        fx_remove(root);
        free(root);
        return test_done();
}
