/* SPDX-License-Identifier: Apache-2.0 */
/* The pod checks against pod-view fixture trees: cgroup v1, v2 and hybrid; quota and no
 * quota (own and parent cgroup); SMT siblings granted, shared and offline; hugepages,
 * devices and Aeron settings; bad environment; both pinning modes (spinlane-pinned: the
 * cpuset holds the grant; kubelet-pinned: the static CPU manager chose other whole
 * isolated cores) and the kubelet cpusets that cannot stand in for the grant. Exact
 * verdict levels for every check id, exact messages for the ones each case is about. */
#include "fixture.h"
#include "launch-checks.h"
#include "testutil.h"

#include "cleanup.h"

static const char *const IDS[8] = { "allocation-env", "cpu-quota", "smt-siblings", "cpuset",
                                    "isolated-cpus", "hugepages", "devices", "aeron-config" };

static const char *BASE_ENV[] = {
        "SPINLANE_ISOLATED_CPUS=2-3,6-7",
        "SPINLANE_ISOLATED_CORES=2,3",
        "SPINLANE_DPDK_NICS=0000:00:06.0",
        "SPINLANE_NIC_0_PCI=0000:00:06.0",
        "SPINLANE_NIC_0_MAC=02:00:00:00:00:01",
        "SPINLANE_NIC_0_NUMA=0",
        "SPINLANE_NIC_0_KIND=ena",
        "SPINLANE_NIC_0_DRIVER=vfio-pci",
        "SPINLANE_NIC_0_DEVARGS=0000:00:06.0",
        "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7", "SPINLANE_NIC_0_IPV4=10.0.0.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.0.1",
        "SPINLANE_POD_UID=pod-a",
};

static char level_char(verdict_level l)
{
        return "PWFS"[l];
}

/* Build the fixture, run the checks with BASE_ENV overridden by extra (earlier entries
 * win, as with getenv), compare the levels of the 8 checks with want ("PPPPPPPP"). */
static void run(const char *name, const fx_pod *pod, const char *const *extra, const char *want, verdict_list *ret,
                lplan *ret_plan)
{
        const char *envp[64];
        unsigned n = 0;
        static launch_env env;
        static lplan plan;
        bool have_plan = false;
        hostfs h;
        char got[9] = "--------";

        for (unsigned i = 0; extra && extra[i]; i++)
                envp[n++] = extra[i];
        for (unsigned i = 0; i < ELEMENTSOF(BASE_ENV); i++)
                envp[n++] = BASE_ENV[i];
        envp[n] = NULL;
        char *root = fx_new_root();
        fx_build(root, pod);
        CHECK_INT(hostfs_init(&h, root), 0);
        lenv_parse(envp, &env);
        *ret = (verdict_list){ 0 };
        CHECK_INT(launch_checks_run(&h, &env, ret, &plan, &have_plan), 0);
        for (unsigned i = 0; i < 8; i++) {
                const verdict *v = verdict_find(ret, IDS[i]);
                if (v)
                        got[i] = level_char(v->level);
        }
        CHECK_INT(ret->n, 8);
        if (strcmp(got, want) != 0) {
                fprintf(stderr, "case %s: levels %s, want %s\n", name, got, want);
                verdict_print(ret, stderr, false);
        }
        CHECK_STR(got, want);
        if (ret_plan && have_plan)
                *ret_plan = plan;
        fx_remove(root);
        free(root);
}

static const char *msg(const verdict_list *vl, const char *id)
{
        const verdict *v = verdict_find(vl, id);
        return v ? v->message : "(none)";
}

static fx_pod good(fx_cgroup cg)
{
        return (fx_pod){ .cg = cg, .cgroup_path = "/", .free_hugepages = 512 };
}

int main(void)
{
        verdict_list vl;
        lplan plan;

        /* v2 in a cgroup namespace, no quota, whole cores granted: everything passes */
        fx_pod p = good(FX_V2);
        memset(&plan, 0, sizeof(plan));
        run("v2-ok", &p, NULL, "PPPPPPPP", &vl, &plan);
        CHECK_STR(msg(&vl, "cpu-quota"), "no CFS quota on cgroup /sys/fs/cgroup or its ancestors (v2)");
        CHECK_STR(msg(&vl, "smt-siblings"), "every SMT sibling of CPUs 2-3,6-7 is granted to this pod or offline");
        CHECK_STR(msg(&vl, "aeron-config"),
                  "DEDICATED; sender CPU 2, receiver CPU 3, conductor unpinned, on separate physical cores; sender/receiver idle noop/noop");
        CHECK_STR(plan.eal_args,
                  "-l 2-3,6-7 --main-lcore 2 --file-prefix spinlane-pod-a --huge-dir /dev/hugepages --socket-mem 256 -a 0000:00:06.0");
        /* the cpuset evidence holds what was read (it used to be dropped), the cgroup file
         * named by its path inside the container (it used to be cut by the length of
         * --root, reading past the end of the path) */
        {
                json_t *ev = verdict_find(&vl, "cpuset")->evidence;
                CHECK_STR(json_string_value(json_object_get(ev, "cpus_allowed_list")), "2-3,6-7");
                CHECK_STR(json_string_value(json_object_get(ev, "cgroup_cpuset")), "2-3,6-7");
                CHECK_STR(json_string_value(json_object_get(ev, "cgroup_cpuset_file")),
                          "/sys/fs/cgroup/cpuset.cpus.effective");
        }
        verdict_list_free(&vl);

        /* v2 quota on the container: fail with the numbers and the throttling */
        p = good(FX_V2);
        p.quota = "200000 100000";
        run("v2-quota", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"),
                  "container has a CFS quota of 2.0 CPUs (cpu.max \"200000 100000\"); throttled in 12 of 100 periods (12.0%, 3456 us)");
        CHECK(strstr(verdict_find(&vl, "cpu-quota")->remedy, "DisableCPUQuotaWithExclusiveCPUs") != NULL);
        CHECK(strstr(verdict_find(&vl, "cpu-quota")->remedy, "cpuCFSQuota: false") != NULL);
        CHECK_INT(json_integer_value(json_object_get(verdict_find(&vl, "cpu-quota")->evidence, "nr_throttled")), 12);
        CHECK(strstr(verdict_find(&vl, "cpu-quota")->remedy, "shared CPU pool") == NULL);
        verdict_list_free(&vl);
        /* the same quota on the node's shared pool (the CPU manager off): the remedy is
         * cpuCFSQuota: false, not the exclusive-CPU feature gate */
        p.cpus_allowed = "0-7";
        run("v2-quota-shared-pool", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK(strncmp(verdict_find(&vl, "cpu-quota")->remedy, "This container runs on the node's shared CPU pool", 49) == 0);
        CHECK(strstr(verdict_find(&vl, "cpu-quota")->remedy, "with the CPU manager off, set the kubelet's cpuCFSQuota: false") != NULL);
        verdict_list_free(&vl);

        /* no grant at all: the remedy is to request the resources, not to fix a variable */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=", NULL };
                run("no-cpu-grant", &p, extra, "FPSSSPPS", &vl, NULL);
                CHECK(strncmp(verdict_find(&vl, "allocation-env")->remedy,
                              "Request spinlane.io/isolated-core and spinlane.io/dpdk-nic in the container's resources", 87) == 0);
                CHECK(strstr(verdict_find(&vl, "allocation-env")->remedy, "Fix the variable") == NULL);
                verdict_list_free(&vl);
        }

        /* v2 nested path (no cgroup namespace): a quota on the pod-level parent */
        p = good(FX_V2);
        p.cgroup_path = "/kubepods.slice/pod1.slice/cri-ctr.scope";
        p.parent_quota = "150000 100000";
        run("v2-parent-quota", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"),
                  "parent cgroup /sys/fs/cgroup/kubepods.slice/pod1.slice has a CFS quota of 1.5 CPUs (cpu.max \"150000 100000\"); throttled in 12 of 100 periods (12.0%, 3456 us)");
        verdict_list_free(&vl);

        /* v2 nested, cpu.max missing although the cpu controller is enabled: fail naming it */
        p = good(FX_V2);
        p.cgroup_path = "/kubepods.slice/pod1.slice/cri-ctr.scope";
        p.no_cpu_max = true;
        run("v2-no-cpu-max", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"),
                  "cannot read /sys/fs/cgroup/kubepods.slice/pod1.slice/cri-ctr.scope/cpu.max: No such file or directory");
        verdict_list_free(&vl);

        /* v1, nested path, no quota anywhere */
        p = good(FX_V1);
        p.cgroup_path = "/kubepods/pod1/ctr";
        run("v1-ok", &p, NULL, "PPPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"), "no CFS quota on cgroup /sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/ctr or its ancestors (v1)");
        verdict_list_free(&vl);

        /* v1 quota of one CPU */
        p = good(FX_V1);
        p.cgroup_path = "/kubepods/pod1/ctr";
        p.quota = "100000 100000";
        run("v1-quota", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"),
                  "container has a CFS quota of 1.0 CPUs (cpu.cfs_quota_us 100000, cpu.cfs_period_us 100000); throttled in 12 of 100 periods (12.0%, 3456 us)");
        verdict_list_free(&vl);

        /* hybrid: v1 cpu controller beside a v2 tree; quota seen through v1 */
        p = good(FX_HYBRID);
        run("hybrid-ok", &p, NULL, "PPPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"), "no CFS quota on cgroup /sys/fs/cgroup/cpu or its ancestors (v1)");
        verdict_list_free(&vl);
        p.quota = "50000 100000";
        run("hybrid-quota", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK(strncmp(msg(&vl, "cpu-quota"), "container has a CFS quota of 0.5 CPUs (cpu.cfs_quota_us 50000", 60) == 0);
        verdict_list_free(&vl);

        /* siblings shared: only one thread of each core granted, the others on the shared pool */
        p = good(FX_V2);
        p.cpus_allowed = "2-3";
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-3", "SPINLANE_ISOLATED_CORES=2,3", NULL };
                run("siblings-shared", &p, extra, "PPFPPPPP", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "smt-siblings"),
                  "CPU 2's SMT sibling 6 is not granted to this pod and runs on the node's shared pool (other pods' work); "
                  "CPU 3's SMT sibling 7 is not granted to this pod and runs on the node's shared pool (other pods' work)");
        verdict_list_free(&vl);

        /* siblings in the container's own cpuset but not granted */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-3", "SPINLANE_ISOLATED_CORES=2,3", NULL };
                run("siblings-in-cpuset", &p, extra, "PPFPPPPP", &vl, NULL);
        }
        CHECK(strstr(msg(&vl, "smt-siblings"), "CPU 2's SMT sibling 6 is not granted to this pod but is in this container's cpuset") != NULL);
        verdict_list_free(&vl);

        /* siblings offline: fine */
        p = good(FX_V2);
        p.online = "0-3";
        p.cpus_allowed = "2-3";
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-3", "SPINLANE_ISOLATED_CORES=2,3", NULL };
                run("siblings-offline", &p, extra, "PPPPPPPP", &vl, NULL);
        }
        verdict_list_free(&vl);

        /* a CPU that does not exist */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-3,6-7,99", NULL };
                run("cpu-missing", &p, extra, "PPFFWPPP", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "smt-siblings"), "CPU 99 (from SPINLANE_ISOLATED_CPUS) does not exist on this node");
        CHECK_STR(msg(&vl, "cpuset"),
                  "the granted CPUs 2-3,6-7,99 are not inside this container's cpuset 2-3,6-7 (outside: 99), and the cpuset "
                  "cannot stand in for them: it spans 2 physical cores, fewer than the 3 granted");
        verdict_list_free(&vl);

        /* bad allocation values name the variable; nothing is guessed */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-", NULL };
                run("cpus-bad", &p, extra, "FPSSSPPS", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "allocation-env"), "SPINLANE_ISOLATED_CPUS=\"2-\" is not a CPU list (like \"2-3,6-7\")");
        verdict_list_free(&vl);
        {
                const char *extra[] = { "SPINLANE_NIC_0_PCI=0000:00:07.0", NULL };
                run("nic-contradiction", &p, extra, "FPPPPPSP", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "allocation-env"),
                  "SPINLANE_NIC_0_PCI=\"0000:00:07.0\" contradicts entry 0 of SPINLANE_DPDK_NICS (\"0000:00:06.0\")");
        verdict_list_free(&vl);

        /* EAL extra arguments the transport would refuse (too many words): a failed
         * allocation-env naming the variable, not a silent "no plan" (it used to be an
         * aeron-config skip and a launcher that would not say why it did not start) */
        {
                static char words[256];
                size_t n = (size_t)snprintf(words, sizeof(words), "SPINLANE_EAL_EXTRA_ARGS=");
                for (unsigned i = 0; i < 60; i++)
                        n += (size_t)snprintf(words + n, sizeof(words) - n, "%s-v", i ? " " : "");
                const char *extra[] = { words, NULL };
                run("eal-too-many-words", &p, extra, "FPPPPPPS", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "allocation-env"),
                  "SPINLANE_EAL_ARGS would hold more than 64 words, more than the transport accepts (shorten SPINLANE_EAL_EXTRA_ARGS)");
        verdict_list_free(&vl);

        /* an affinity outside the granted CPUs and the cpuset */
        {
                const char *extra[] = { "AERON_SENDER_CPU_AFFINITY=0", NULL };
                run("affinity-outside", &p, extra, "PPFFWPPF", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "cpuset"), "CPU 0 (from AERON_SENDER_CPU_AFFINITY) is outside this container's cpuset 2-3,6-7");
        CHECK(strstr(msg(&vl, "aeron-config"), "the sender is pinned to CPU 0, which is not in SPINLANE_ISOLATED_CPUS") != NULL);
        CHECK(strstr(msg(&vl, "smt-siblings"), "CPU 0's SMT sibling 4 is not granted") != NULL);
        verdict_list_free(&vl);

        /* Aeron settings that defeat busy-spinning */
        {
                const char *extra[] = { "AERON_THREADING_MODE=SHARED", "AERON_SENDER_IDLE_STRATEGY=backoff",
                                        "AERON_RECEIVER_IDLE_STRATEGY=spin", "AERON_MTU_LENGTH=9000",
                                        "AERON_SENDER_WILDCARD_PORT_RANGE=20000 20100",
                                        "AERON_RECEIVER_WILDCARD_PORT_RANGE=20050 20200", NULL };
                run("aeron-bad", &p, extra, "PPPPPPPF", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "aeron-config"),
                  "AERON_THREADING_MODE=SHARED: the sender and receiver must each spin on a thread of their own; "
                  "AERON_SENDER_IDLE_STRATEGY=backoff parks or yields the thread (latency clusters of ~150 us); "
                  "AERON_RECEIVER_IDLE_STRATEGY=spin is not a strategy Aeron's C driver knows (it would look up a symbol \"spin\" and refuse to start); "
                  "AERON_MTU_LENGTH=9000 does not fit one DPDK packet buffer of the transport (at most 1408, a multiple of 32); "
                  "AERON_SENDER_WILDCARD_PORT_RANGE (20000-20100) and AERON_RECEIVER_WILDCARD_PORT_RANGE (20050-20200) overlap");
        verdict_list_free(&vl);
        {
                const char *extra[] = { "AERON_SENDER_CPU_AFFINITY=2", "AERON_RECEIVER_CPU_AFFINITY=6", NULL };
                run("aeron-same-core", &p, extra, "PPPPPPPF", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "aeron-config"), "the sender (CPU 2) and the receiver (CPU 6) share one physical core");
        verdict_list_free(&vl);
        {
                const char *extra[] = { "AERON_SENDER_WILDCARD_PORT_RANGE=20000-20100", NULL };
                run("aeron-port-syntax", &p, extra, "PPPPPPPF", &vl, NULL);
        }
        CHECK(strstr(msg(&vl, "aeron-config"), "is not \"<low> <high>\"") != NULL);
        verdict_list_free(&vl);

        /* three cores: the conductor gets one of its own and spins */
        p = good(FX_V2);
        p.cpus_allowed = "1-3,5-7";
        memset(&plan, 0, sizeof(plan));
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=1-3,5-7", "SPINLANE_ISOLATED_CORES=1,2,3", NULL };
                run("three-cores", &p, extra, "PPPPPPPP", &vl, &plan);
        }
        CHECK_INT(plan.aeron.aff_conductor, 1);
        CHECK_INT(plan.aeron.aff_sender, 2);
        CHECK_INT(plan.aeron.aff_receiver, 3);
        CHECK_STR(plan.aeron.idle_conductor, "spinning");
        verdict_list_free(&vl);

        /* spinlane-pinned (cpuManagerPolicy none): the cpuset is the whole shared set */
        p = good(FX_V2);
        p.cpus_allowed = "0-7";
        memset(&plan, 0, sizeof(plan));
        run("spinlane-pinned", &p, NULL, "PPPPPPPP", &vl, &plan);
        CHECK_STR(msg(&vl, "cpuset"), "spinlane-pinned: the granted CPUs 2-3,6-7 are inside this container's cpuset 0-7");
        CHECK_STR(json_string_value(json_object_get(verdict_find(&vl, "cpuset")->evidence, "mode")), "spinlane-pinned");
        CHECK_INT(plan.mode, LPLAN_PIN_SPINLANE);
        CHECK(strncmp(plan.eal_args, "-l 2-3,6-7 --main-lcore 2 ", 26) == 0);
        verdict_list_free(&vl);

        /* kubelet-pinned (static CPU manager): it chose cores 1 and 2, spinlane granted 2
         * and 3; every check runs on the kubelet's CPUs */
        p = good(FX_V2);
        p.cpus_allowed = "1-2,5-6";
        memset(&plan, 0, sizeof(plan));
        run("kubelet-pinned", &p, NULL, "PPPPPPPP", &vl, &plan);
        CHECK_STR(msg(&vl, "cpuset"),
                  "kubelet-pinned: the kubelet's static CPU manager chose cores {1,5},{2,6} (CPUs 1-2,5-6); spinlane's grant "
                  "{2,6},{3,7} (CPUs 2-3,6-7) differs: pinning to the kubelet's exclusive CPUs");
        CHECK_STR(msg(&vl, "smt-siblings"), "every SMT sibling of CPUs 1-2,5-6 is granted to this pod or offline");
        CHECK_STR(msg(&vl, "isolated-cpus"), "pinned CPUs are isolated on the host (isolated: 1-3,5-7)");
        CHECK_STR(msg(&vl, "aeron-config"),
                  "DEDICATED; sender CPU 1, receiver CPU 2, conductor unpinned, on separate physical cores; sender/receiver idle noop/noop");
        {
                json_t *ev = verdict_find(&vl, "cpuset")->evidence;
                CHECK_STR(json_string_value(json_object_get(ev, "mode")), "kubelet-pinned");
                CHECK_STR(json_string_value(json_object_get(ev, "granted")), "2-3,6-7");
                CHECK_STR(json_string_value(json_object_get(ev, "pinned")), "1-2,5-6");
                CHECK_STR(json_string_value(json_object_get(ev, "cgroup_cpuset")), "1-2,5-6");
        }
        CHECK_INT(plan.mode, LPLAN_PIN_KUBELET);
        CHECK_STR(plan.eal_args,
                  "-l 1-2,5-6 --main-lcore 1 --file-prefix spinlane-pod-a --huge-dir /dev/hugepages --socket-mem 256 -a 0000:00:06.0");
        verdict_list_free(&vl);

        /* kubelet-pinned, but the pod pins the sender to a granted CPU the kubelet did not give it */
        {
                const char *extra[] = { "AERON_SENDER_CPU_AFFINITY=3", NULL };
                run("kubelet-pinned-affinity-outside", &p, extra, "PPFFPPPF", &vl, NULL);
        }
        CHECK_STR(msg(&vl, "cpuset"), "CPU 3 (from AERON_SENDER_CPU_AFFINITY) is outside this container's cpuset 1-2,5-6");
        CHECK(strstr(msg(&vl, "smt-siblings"), "CPU 3's SMT sibling 7 is not granted") != NULL);
        CHECK(strstr(msg(&vl, "aeron-config"),
                     "the sender is pinned to CPU 3, which is not among the kubelet's exclusive CPUs 1-2,5-6 the driver runs on") != NULL);
        verdict_list_free(&vl);

        /* a kubelet cpuset that splits a core (no full-pcpus-only) cannot stand in */
        p = good(FX_V2);
        p.cpus_allowed = "1-2,5";
        run("kubelet-split-core", &p, NULL, "PPPFPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpuset"),
                  "the granted CPUs 2-3,6-7 are not inside this container's cpuset 1-2,5 (outside: 3,6-7), and the cpuset cannot "
                  "stand in for them: it splits a physical core: CPU 2 is in it but its SMT sibling 6 is not (the kubelet without full-pcpus-only)");
        CHECK_STR(json_string_value(json_object_get(verdict_find(&vl, "cpuset")->evidence, "mode")), "mismatch");
        CHECK(strstr(verdict_find(&vl, "cpuset")->remedy, "cpuManagerPolicy: none and cpuCFSQuota: false") != NULL);
        verdict_list_free(&vl);

        /* a kubelet cpuset on CPUs that are not isolated (core 1 left out of isolcpus) */
        p = good(FX_V2);
        p.cpus_allowed = "1-2,5-6";
        p.isolated = "2-3,6-7";
        run("kubelet-not-isolated", &p, NULL, "PPPFPPPP", &vl, NULL);
        CHECK(strstr(msg(&vl, "cpuset"), "CPUs 1,5 of it are not isolated on the host") != NULL);
        verdict_list_free(&vl);

        /* a kubelet cpuset with fewer whole cores than granted */
        p = good(FX_V2);
        p.cpus_allowed = "1,5";
        run("kubelet-too-few", &p, NULL, "PPPFPPPP", &vl, NULL);
        CHECK(strstr(msg(&vl, "cpuset"), "it spans 1 physical core, fewer than the 2 granted") != NULL);
        /* which CPU request would fit: the 4 CPUs of the 2 granted cores */
        CHECK(strncmp(verdict_find(&vl, "cpuset")->remedy,
                      "Set the container's requests.cpu and limits.cpu to \"4\": the 4 CPUs of the 2 granted cores", 89) == 0);
        verdict_list_free(&vl);

        /* kubelet-pinned on a v1 node, siblings offline: the cpuset holds one thread per core */
        p = good(FX_V1);
        p.cgroup_path = "/kubepods/pod1/ctr";
        p.online = "0-3";
        p.cpus_allowed = "1-2";
        memset(&plan, 0, sizeof(plan));
        {
                const char *extra[] = { "SPINLANE_ISOLATED_CPUS=2-3", "SPINLANE_ISOLATED_CORES=p0c2,p0c3", NULL };
                run("kubelet-pinned-offline-siblings", &p, extra, "PPPPPPPP", &vl, &plan);
        }
        CHECK(strncmp(msg(&vl, "cpuset"), "kubelet-pinned: the kubelet's static CPU manager chose cores {1},{2} (CPUs 1-2);", 80) == 0);
        CHECK(strncmp(plan.eal_args, "-l 1-2 --main-lcore 1 ", 22) == 0);
        verdict_list_free(&vl);

        /* isolation missing is a warning, not a fail */
        p = good(FX_V2);
        p.isolated = "";
        run("not-isolated", &p, NULL, "PPPPWPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "isolated-cpus"), "CPUs 2-3,6-7 are not isolated on the host (isolated: \"\"): kernel threads and IRQs may run there");
        verdict_list_free(&vl);

        /* hugepages: too few on the node; a hugetlb cgroup limit; no hugetlbfs mount */
        p = good(FX_V2);
        p.free_hugepages = 64;
        run("huge-node", &p, NULL, "PPPPPFPP", &vl, NULL);
        CHECK_STR(msg(&vl, "hugepages"), "the node has 64 free 2MB pages, DPDK needs 128 (SPINLANE_DPDK_MEMORY_MB=256)");
        verdict_list_free(&vl);
        p = good(FX_V1);
        p.hugetlb_limit = "134217728"; /* 128 MiB = 64 pages */
        run("huge-cgroup-v1", &p, NULL, "PPPPPFPP", &vl, NULL);
        CHECK_STR(msg(&vl, "hugepages"),
                  "the container's hugetlb cgroup leaves 64 free 2MB pages, DPDK needs 128 (SPINLANE_DPDK_MEMORY_MB=256)");
        verdict_list_free(&vl);
        p = good(FX_V2);
        p.hugetlb_limit = "max";
        {
                const char *extra[] = { "SPINLANE_DPDK_MEMORY_MB=512", NULL };
                run("huge-v2-max", &p, extra, "PPPPPPPP", &vl, &plan);
        }
        verdict_list_free(&vl);
        p.no_hugetlbfs = true;
        run("huge-no-mount", &p, NULL, "PPPPPFPP", &vl, NULL);
        CHECK_STR(msg(&vl, "hugepages"), "no hugetlbfs is mounted at /dev/hugepages (SPINLANE_HUGEPAGE_DIR) in this container");
        verdict_list_free(&vl);

        /* devices: a missing VFIO group; memlock too low for VFIO */
        p = good(FX_V2);
        p.no_vfio_group = true;
        run("dev-missing", &p, NULL, "PPPPPPFP", &vl, NULL);
        CHECK_STR(msg(&vl, "devices"),
                  "NIC 0000:00:06.0: device node /dev/vfio/7 (SPINLANE_NIC_0_DEVICES) does not exist in this container");
        verdict_list_free(&vl);
        p = good(FX_V2);
        p.memlock = "65536";
        run("dev-memlock", &p, NULL, "PPPPPPFP", &vl, NULL);
        CHECK_STR(msg(&vl, "devices"),
                  "RLIMIT_MEMLOCK is 65536 bytes and the container lacks CAP_IPC_LOCK; VFIO must lock the 256 MiB of DPDK memory");
        CHECK(strstr(verdict_find(&vl, "devices")->remedy, "LimitMEMLOCK=infinity") != NULL);
        CHECK(strstr(verdict_find(&vl, "devices")->remedy, "default_ulimits") == NULL);
        verdict_list_free(&vl);
        /* CAP_IPC_LOCK stands in for the limit: vfio type1 does not count its pages */
        p.capeff = "00000000a80465fb";
        run("dev-memlock-ipc-lock", &p, NULL, "PPPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "devices"), "2 device nodes of 1 NIC exist and open; CAP_IPC_LOCK lets VFIO lock the DPDK memory");
        verdict_list_free(&vl);

        /* vfio no-IOMMU: physical addresses need CAP_SYS_ADMIN, the group CAP_SYS_RAWIO;
         * nothing is pinned, so a low memlock limit does not matter */
        p = good(FX_V2);
        p.noiommu = true;
        p.memlock = "65536";
        p.capeff = "00000000a80625fb"; /* default + SYS_RAWIO */
        run("noiommu-no-sys-admin", &p, NULL, "PPPPPPFP", &vl, NULL);
        CHECK_STR(msg(&vl, "devices"),
                  "NIC 0000:00:06.0 uses vfio in no-IOMMU mode, so DPDK runs with physical addresses (IOVA as PA) and must read /proc/self/pagemap, which needs CAP_SYS_ADMIN; this container lacks CAP_SYS_ADMIN");
        CHECK(strstr(verdict_find(&vl, "devices")->remedy, "SYS_ADMIN") != NULL);
        verdict_list_free(&vl);
        p.capeff = "00000000a80425fb"; /* neither */
        run("noiommu-no-caps", &p, NULL, "PPPPPPFP", &vl, NULL);
        CHECK(strstr(msg(&vl, "devices"), "lacks CAP_SYS_ADMIN") != NULL);
        CHECK(strstr(msg(&vl, "devices"), "lacks CAP_SYS_RAWIO") != NULL);
        verdict_list_free(&vl);
        p.capeff = "00000000a82625fb"; /* default + SYS_RAWIO + SYS_ADMIN */
        run("noiommu-ok", &p, NULL, "PPPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "devices"), "2 device nodes of 1 NIC exist and open; CAP_SYS_ADMIN for physical addresses");
        verdict_list_free(&vl);
        p.no_capeff = true;
        run("noiommu-caps-unknown", &p, NULL, "PPPPPPWP", &vl, NULL);
        verdict_list_free(&vl);
        /* igb_uio: physical addresses too */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_NIC_0_DRIVER=igb_uio", "SPINLANE_NIC_0_DEVICES=/dev/uio0", NULL };
                run("igb-uio-no-sys-admin", &p, extra, "PPPPPPFP", &vl, NULL);
                CHECK(strstr(msg(&vl, "devices"), "uses igb_uio, so DPDK runs with physical addresses") != NULL);
                verdict_list_free(&vl);
                p.capeff = "00000000a82425fb";
                run("igb-uio-ok", &p, extra, "PPPPPPPP", &vl, NULL);
                verdict_list_free(&vl);
        }

        /* unreadable cgroup view: fail naming the file */
        p = good(FX_V2);
        p.no_proc_cgroup = true;
        run("no-proc-cgroup", &p, NULL, "PFPPPPPP", &vl, NULL);
        CHECK_STR(msg(&vl, "cpu-quota"), "cannot read /proc/self/cgroup: No such file or directory");
        verdict_list_free(&vl);

        /* MANA: devargs default to bdf,mac=; uverbs device required */
        p = good(FX_V2);
        {
                const char *extra[] = { "SPINLANE_NIC_0_KIND=mana", "SPINLANE_NIC_0_DRIVER=mana", "SPINLANE_NIC_0_DEVARGS=",
                                        "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio", "SPINLANE_NIC_0_IPV4=10.0.0.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.0.1", NULL };
                run("mana-empty-devargs", &p, extra, "FPPPPPSP", &vl, NULL);
        }
        CHECK(strstr(msg(&vl, "allocation-env"), "SPINLANE_NIC_0_DEVARGS=\"\" must be the NIC's PCI address") != NULL);
        verdict_list_free(&vl);

        /* MANA: net_mana reads the PCI device's net/<if>/address; in a pod's own netns sysfs
         * lists no netdev there: FAIL naming the path; the host's view (hostNetwork or the
         * host's /sys/devices) with the granted MAC passes; another MAC fails */
        {
                const char *extra[] = { "SPINLANE_NIC_0_KIND=mana", "SPINLANE_NIC_0_DRIVER=mana",
                                        "SPINLANE_NIC_0_DEVARGS=0000:00:06.0,mac=02:00:00:00:00:01",
                                        "SPINLANE_NIC_0_DEVICES=/dev/infiniband/uverbs0", NULL };
                p = good(FX_V2);
                run("mana-own-netns", &p, extra, "PPPPPPFP", &vl, NULL);
                CHECK(strstr(msg(&vl, "devices"), "NIC 0000:00:06.0 is MANA but no /sys/bus/pci/devices/0000:00:06.0/net/<if>/address "
                                                  "is visible in this container (/sys/bus/pci/devices/0000:00:06.0/net: No such file "
                                                  "or directory)") != NULL);
                CHECK(strstr(verdict_find(&vl, "devices")->remedy, "mount the host's /sys/devices read-only at /sys/devices") != NULL);
                verdict_list_free(&vl);
                p.mana_netdev = "enP1s1 02:00:00:00:00:01";
                run("mana-host-sysfs", &p, extra, "PPPPPPPP", &vl, NULL);
                verdict_list_free(&vl);
                p.mana_netdev = "enP1s1 02:00:00:00:00:99";
                run("mana-other-mac", &p, extra, "PPPPPPFP", &vl, NULL);
                CHECK(strstr(msg(&vl, "devices"), "no /sys/bus/pci/devices/0000:00:06.0/net/<if>/address equals its MAC "
                                                  "02:00:00:00:00:01 (seen: enP1s1 02:00:00:00:00:99)") != NULL);
                verdict_list_free(&vl);
        }
        return test_done();
}
