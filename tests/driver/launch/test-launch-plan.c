/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's environment plan: the choice of the pinned CPUs (spinlane's grant or the
 * kubelet's exclusive cores, a table), EAL arguments for each NUMA layout, affinities
 * chosen from the pinned cores (and the pod's own kept), idle defaults, and the
 * aeron-config verdict for one core, two and three. */
#include "launch-plan.h"
#include "eal_args.h"
#include "testutil.h"

#include "cleanup.h"

#include <errno.h>

static lplan_topo topo;

/* SMT pairs (c, c + 8) on a 16-CPU machine */
static void topo_pairs(void)
{
        lplan_topo_init(&topo);
        for (int c = 0; c < 16; c++)
                topo.core_of[c] = c % 8;
}

static const char *get(const lplan *p, const char *name)
{
        for (unsigned i = 0; i < p->n_set; i++)
                if (strcmp(p->set[i].name, name) == 0)
                        return p->set[i].value;
        return NULL;
}

static cpuset set_of(const char *list)
{
        cpuset s;
        cpuset_zero(&s);
        if (cpuset_parse(list, strlen(list), &s) < 0) {
                fprintf(stderr, "bad list in the table: %s\n", list);
                exit(1);
        }
        return s;
}

/* The table of lplan_choose_cpus. Topology: SMT pairs (c, c + 8), or no SMT (each CPU a
 * core of its own). Node: CPUs 0-15 online unless said; isolcpus 2-7,10-15 (cores 0
 * and 1 are the housekeeping CPUs the kubelet reserves) unless said. */
static const struct {
        const char *name;
        bool no_smt;
        const char *granted, *allowed;
        const char *online;   /* NULL: 0-15 */
        const char *isolated; /* NULL: 2-7,10-15; "-": unreadable */
        lplan_pin_mode mode;
        const char *cpus;     /* the pinned set */
        const char *reason;   /* exact */
} CHOOSE[] = {
        { "grant-inside-shared-cpuset", false, "2-3,10-11", "0-15", NULL, NULL, LPLAN_PIN_SPINLANE, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are inside this container's cpuset 0-15" },
        { "grant-is-the-kubelet-cpuset", false, "2-3,10-11", "2-3,10-11", NULL, NULL, LPLAN_PIN_SPINLANE, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are inside this container's cpuset 2-3,10-11" },
        { "kubelet-other-cores-same-count", false, "2-3,10-11", "4-5,12-13", NULL, NULL, LPLAN_PIN_KUBELET, "4-5,12-13",
          "the kubelet's static CPU manager chose cores {4,12},{5,13} (CPUs 4-5,12-13); spinlane's grant {2,10},{3,11} "
          "(CPUs 2-3,10-11) differs: pinning to the kubelet's exclusive CPUs" },
        { "kubelet-more-cores-overlap-first", false, "2-3,10-11", "3-5,11-13", NULL, NULL, LPLAN_PIN_KUBELET, "3-4,11-12",
          "the kubelet's static CPU manager chose cores {3,11},{4,12} (CPUs 3-4,11-12); spinlane's grant {2,10},{3,11} "
          "(CPUs 2-3,10-11) differs: pinning to the kubelet's exclusive CPUs (2 of the cpuset's 3 whole isolated cores, as many as granted)" },
        { "kubelet-more-cores-disjoint", false, "2,10", "4-6,12-14", NULL, NULL, LPLAN_PIN_KUBELET, "4,12",
          "the kubelet's static CPU manager chose cores {4,12} (CPUs 4,12); spinlane's grant {2,10} (CPUs 2,10) differs: "
          "pinning to the kubelet's exclusive CPUs (1 of the cpuset's 3 whole isolated cores, as many as granted)" },
        { "kubelet-split-core", false, "2-3,10-11", "4-5,12", NULL, NULL, LPLAN_PIN_MISMATCH, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are not inside this container's cpuset 4-5,12 (outside: 2-3,10-11), and the cpuset cannot stand in for "
          "them: it splits a physical core: CPU 5 is in it but its SMT sibling 13 is not (the kubelet without full-pcpus-only)" },
        { "cpuset-not-isolated", false, "2-3,10-11", "0-1,4-5,8-9,12-13", NULL, NULL, LPLAN_PIN_MISMATCH, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are not inside this container's cpuset 0-1,4-5,8-9,12-13 (outside: 2-3,10-11), and the cpuset cannot stand "
          "in for them: CPUs 0-1,8-9 of it are not isolated on the host (a shared pool, not the static CPU manager's exclusive cores)" },
        { "too-few-cores", false, "2-4,10-12", "5-6,13-14", NULL, NULL, LPLAN_PIN_MISMATCH, "2-4,10-12",
          "the granted CPUs 2-4,10-12 are not inside this container's cpuset 5-6,13-14 (outside: 2-4,10-12), and the cpuset cannot stand in for "
          "them: it spans 2 physical cores, fewer than the 3 granted" },
        { "split-and-too-few", false, "2-4,10-12", "5-6,13", NULL, NULL, LPLAN_PIN_MISMATCH, "2-4,10-12",
          "the granted CPUs 2-4,10-12 are not inside this container's cpuset 5-6,13 (outside: 2-4,10-12), and the cpuset cannot stand in for "
          "them: it splits a physical core: CPU 6 is in it but its SMT sibling 14 is not (the kubelet without full-pcpus-only); "
          "it spans 2 physical cores, fewer than the 3 granted" },
        { "no-smt", true, "2-3", "4-5", NULL, NULL, LPLAN_PIN_KUBELET, "4-5",
          "the kubelet's static CPU manager chose cores {4},{5} (CPUs 4-5); spinlane's grant {2},{3} (CPUs 2-3) differs: "
          "pinning to the kubelet's exclusive CPUs" },
        { "no-smt-too-few", true, "2-4", "6-7", NULL, NULL, LPLAN_PIN_MISMATCH, "2-4",
          "the granted CPUs 2-4 are not inside this container's cpuset 6-7 (outside: 2-4), and the cpuset cannot stand in for them: it "
          "spans 2 physical cores, fewer than the 3 granted" },
        { "offline-siblings", false, "2-3", "4-5", "0-7", NULL, LPLAN_PIN_KUBELET, "4-5",
          "the kubelet's static CPU manager chose cores {4},{5} (CPUs 4-5); spinlane's grant {2},{3} (CPUs 2-3) differs: "
          "pinning to the kubelet's exclusive CPUs" },
        { "whole-online-set", false, "2,10,20", "0-15", NULL, NULL, LPLAN_PIN_MISMATCH, "2,10,20",
          "the granted CPUs 2,10,20 are not inside this container's cpuset 0-15 (outside: 20), and the cpuset cannot stand in for them: it "
          "is every online CPU of the node, not an exclusive set; CPUs 0-1,8-9 of it are not isolated on the host (a shared "
          "pool, not the static CPU manager's exclusive cores)" },
        { "isolated-unreadable", false, "2-3,10-11", "4-5,12-13", NULL, "-", LPLAN_PIN_MISMATCH, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are not inside this container's cpuset 4-5,12-13 (outside: 2-3,10-11), and the cpuset cannot stand in for "
          "them: /sys/devices/system/cpu/isolated is unreadable, so its CPUs cannot be shown to be isolated" },
        { "empty-cpuset", false, "2-3,10-11", "", NULL, NULL, LPLAN_PIN_MISMATCH, "2-3,10-11",
          "the granted CPUs 2-3,10-11 are not inside this container's cpuset  (outside: 2-3,10-11), and the cpuset cannot stand in for them: it "
          "is empty; it spans 0 physical cores, fewer than the 2 granted" },
};

static void test_choose(void)
{
        for (unsigned i = 0; i < ELEMENTSOF(CHOOSE); i++) {
                cpuset g = set_of(CHOOSE[i].granted), a = set_of(CHOOSE[i].allowed);
                cpuset on = set_of(CHOOSE[i].online ? CHOOSE[i].online : "0-15");
                cpuset iso = set_of(CHOOSE[i].isolated && strcmp(CHOOSE[i].isolated, "-") != 0 ? CHOOSE[i].isolated
                                                                                              : "2-7,10-15");
                bool no_iso = CHOOSE[i].isolated && strcmp(CHOOSE[i].isolated, "-") == 0;
                lplan_pin pin;
                char got[256];

                lplan_topo_init(&topo);
                for (int c = 0; c < 16; c++)
                        topo.core_of[c] = CHOOSE[i].no_smt ? c : c % 8;
                if (CHOOSE[i].no_smt || CHOOSE[i].online) /* only CPUs 0-7 exist or are online */
                        for (int c = 8; c < 16; c++)
                                topo.core_of[c] = CHOOSE[i].no_smt ? -1 : c % 8;
                if (CHOOSE[i].no_smt)
                        on = set_of("0-7");
                CHECK_INT(lplan_choose_cpus(&g, &a, &on, no_iso ? NULL : &iso, &topo, &pin), 0);
                cpuset_format(&pin.cpus, got, sizeof(got));
                if (pin.mode != CHOOSE[i].mode || strcmp(got, CHOOSE[i].cpus) != 0 || strcmp(pin.reason, CHOOSE[i].reason) != 0)
                        fprintf(stderr, "case %s: mode %s, CPUs %s, reason: %s\n", CHOOSE[i].name,
                                lplan_pin_mode_name(pin.mode), got, pin.reason);
                CHECK_INT(pin.mode, CHOOSE[i].mode);
                CHECK_STR(got, CHOOSE[i].cpus);
                CHECK_STR(pin.reason, CHOOSE[i].reason);
        }

        /* a CPU of the cpuset whose siblings are unknown: cannot prove whole cores */
        {
                cpuset g = set_of("2-3,10-11"), a = set_of("4-5,12-13"), iso = set_of("2-7,10-15");
                lplan_pin pin;
                lplan_topo_init(&topo);
                for (int c = 0; c < 16; c++)
                        topo.core_of[c] = c == 12 ? -1 : c % 8;
                CHECK_INT(lplan_choose_cpus(&g, &a, NULL, &iso, &topo, &pin), 0);
                CHECK_INT(pin.mode, LPLAN_PIN_MISMATCH);
                CHECK(strstr(pin.reason, "the SMT siblings of its CPU 12 are unknown") != NULL);
        }
        /* online unknown: a sibling outside the cpuset counts as online */
        {
                cpuset g = set_of("2-3"), a = set_of("4-5"), iso = set_of("2-7,10-15");
                lplan_pin pin;
                topo_pairs();
                CHECK_INT(lplan_choose_cpus(&g, &a, NULL, &iso, &topo, &pin), 0);
                CHECK_INT(pin.mode, LPLAN_PIN_MISMATCH);
                CHECK(strstr(pin.reason, "CPU 4 is in it but its SMT sibling 12 is not") != NULL);
        }
        /* no grant: -EINVAL, *ret untouched */
        {
                cpuset g, a = set_of("4-5");
                lplan_pin pin = { .mode = LPLAN_PIN_KUBELET };
                cpuset_zero(&g);
                snprintf(pin.reason, sizeof(pin.reason), "untouched");
                CHECK_INT(lplan_choose_cpus(&g, &a, NULL, NULL, &topo, &pin), -EINVAL);
                CHECK_INT(pin.mode, LPLAN_PIN_KUBELET);
                CHECK_STR(pin.reason, "untouched");
        }
}

static void parse(launch_env *env, const char *const *envp)
{
        lenv_parse(envp, env); /* errors (no NICs) are the checks' business, not the plan's */
}

int main(void)
{
        static launch_env env;
        static lplan p;
        verdict_list vl = { 0 };

        test_choose();
        topo_pairs();

        /* two NICs on NUMA node 1, three cores: conductor, sender, receiver in order */
        const char *e1[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
                             "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=1", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio", "SPINLANE_NIC_0_IPV4=10.0.0.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.0.1",
                             "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_NUMA=1", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio", "SPINLANE_NIC_1_IPV4=10.0.1.10/24", "SPINLANE_NIC_1_GATEWAY=10.0.1.1",
                             "SPINLANE_NIC_1_DEVARGS=0000:00:07.0,llq_policy=1", "SPINLANE_DPDK_MEMORY_MB=512",
                             "SPINLANE_POD_UID=1234-abcd", "SPINLANE_EAL_EXTRA_ARGS=--log-level=pmd.net.ena:8", NULL };
        parse(&env, e1);
        CHECK_INT(env.n_errs, 0);
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
        CHECK_STR(p.eal_args, "-l 2-4,10-12 --main-lcore 2 --file-prefix spinlane-1234-abcd --huge-dir /dev/hugepages "
                              "--socket-mem 0,512 -a 0000:00:06.0 -a 0000:00:07.0,llq_policy=1 --log-level=pmd.net.ena:8");
        CHECK_STR(get(&p, "AERON_CONDUCTOR_CPU_AFFINITY"), "2");
        CHECK_STR(get(&p, "AERON_SENDER_CPU_AFFINITY"), "3");
        CHECK_STR(get(&p, "AERON_RECEIVER_CPU_AFFINITY"), "4");
        CHECK_STR(get(&p, "AERON_THREADING_MODE"), "DEDICATED");
        CHECK_STR(get(&p, "AERON_SENDER_IDLE_STRATEGY"), "noop");
        CHECK_STR(get(&p, "AERON_CONDUCTOR_IDLE_STRATEGY"), "spinning");
        CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
        CHECK_INT(vl.items[0].level, VERDICT_PASS);
        verdict_list_free(&vl);

        /* SPINLANE_EAL_ARGS must stay within what the transport's splitter takes: the
         * launcher used to pass a string the driver then refused at EAL start */
        _Static_assert(LPLAN_EAL_MAX_WORDS == TR_EAL_ARGS_MAX, "launcher and transport disagree on EAL words");
        {
                static char extra[1024];
                const char *e3[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", extra, NULL };
                size_t n = (size_t)snprintf(extra, sizeof(extra), "SPINLANE_EAL_EXTRA_ARGS=");
                /* the base has 10 words; 54 more is exactly the limit, 55 one too many */
                for (unsigned i = 0; i < 54; i++)
                        n += (size_t)snprintf(extra + n, sizeof(extra) - n, "%s-v", i ? " " : "");
                parse(&env, e3);
                CHECK_INT(env.n_errs, 1); /* only SPINLANE_DPDK_NICS is missing: no NICs, "-m 256" */
                CHECK_STR(env.errs[0].var, "SPINLANE_DPDK_NICS");
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
                static struct tr_eal_args a;
                CHECK_INT(tr_eal_args_split(p.eal_args, strlen(p.eal_args), "aeronmd", &a), 0);
                CHECK_INT(a.argc, 1 + LPLAN_EAL_MAX_WORDS);
                snprintf(extra + n, sizeof(extra) - n, " -v");
                parse(&env, e3);
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), -E2BIG);
        }

        /* NICs on different nodes: -m; the pod's own affinities and modes are kept */
        const char *e2[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
                             "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=0", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio", "SPINLANE_NIC_0_IPV4=10.0.0.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.0.1",
                             "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_NUMA=1", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio", "SPINLANE_NIC_1_IPV4=10.0.1.10/24", "SPINLANE_NIC_1_GATEWAY=10.0.1.1",
                             "AERON_SENDER_CPU_AFFINITY=4", "AERON_THREADING_MODE=DEDICATED",
                             "AERON_SENDER_IDLE_STRATEGY=spinning", NULL };
        parse(&env, e2);
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
        CHECK(strstr(p.eal_args, " -m 256 -a ") != NULL);
        CHECK(get(&p, "AERON_SENDER_CPU_AFFINITY") == NULL);  /* the pod's, not re-set */
        CHECK(get(&p, "AERON_THREADING_MODE") == NULL);
        CHECK(get(&p, "AERON_SENDER_IDLE_STRATEGY") == NULL);
        CHECK_INT(p.aeron.aff_sender, 4);
        CHECK_STR(get(&p, "AERON_CONDUCTOR_CPU_AFFINITY"), "2"); /* core 4 is taken: 2 and 3 left */
        CHECK_STR(get(&p, "AERON_RECEIVER_CPU_AFFINITY"), "3");

        /* two cores: the conductor floats and keeps Aeron's default idle strategy */
        const char *e3[] = { "SPINLANE_ISOLATED_CPUS=5,13,6,14", NULL };
        parse(&env, e3);
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
        CHECK(get(&p, "AERON_CONDUCTOR_CPU_AFFINITY") == NULL);
        CHECK(get(&p, "AERON_CONDUCTOR_IDLE_STRATEGY") == NULL);
        CHECK_INT(p.aeron.aff_conductor, -1);
        CHECK_STR(get(&p, "AERON_SENDER_CPU_AFFINITY"), "5");
        CHECK_STR(get(&p, "AERON_RECEIVER_CPU_AFFINITY"), "6");
        CHECK(strstr(p.eal_args, "--main-lcore 5 ") != NULL);
        CHECK(strstr(p.eal_args, " -m 256") != NULL); /* no NICs: no NUMA node known */

        /* one core: sender and receiver land on its two threads and the check says so */
        const char *e4[] = { "SPINLANE_ISOLATED_CPUS=7,15", NULL };
        parse(&env, e4);
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
        CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
        CHECK_INT(vl.items[0].level, VERDICT_FAIL);
        CHECK_STR(vl.items[0].message, "the sender (CPU 7) and the receiver (CPU 15) share one physical core");
        verdict_list_free(&vl);

        /* one CPU: the receiver gets nothing */
        const char *e5[] = { "SPINLANE_ISOLATED_CPUS=7", NULL };
        parse(&env, e5);
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
        CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
        CHECK(strstr(vl.items[0].message, "the receiver thread is not pinned") != NULL);
        verdict_list_free(&vl);

        /* kubelet-pinned: lcores and affinities from the kubelet's cores, not the grant;
         * an affinity the pod set to a granted CPU outside them is refused */
        {
                const char *ek[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", NULL };
                cpuset g = set_of("2-4,10-12"), a = set_of("5-7,13-15"), iso = set_of("2-7,10-15"), on = set_of("0-15");
                lplan_pin pin;
                parse(&env, ek);
                CHECK_INT(lplan_choose_cpus(&g, &a, &on, &iso, &topo, &pin), 0);
                CHECK_INT(pin.mode, LPLAN_PIN_KUBELET);
                CHECK_INT(lplan_build(&env, &pin, &topo, &p), 0);
                CHECK_INT(p.mode, LPLAN_PIN_KUBELET);
                CHECK(strncmp(p.eal_args, "-l 5-7,13-15 --main-lcore 5 ", 28) == 0);
                CHECK_STR(get(&p, "AERON_CONDUCTOR_CPU_AFFINITY"), "5");
                CHECK_STR(get(&p, "AERON_SENDER_CPU_AFFINITY"), "6");
                CHECK_STR(get(&p, "AERON_RECEIVER_CPU_AFFINITY"), "7");
                CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
                CHECK_INT(vl.items[0].level, VERDICT_PASS);
                verdict_list_free(&vl);

                const char *ek2[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", "AERON_SENDER_CPU_AFFINITY=2", NULL };
                parse(&env, ek2);
                CHECK_INT(lplan_build(&env, &pin, &topo, &p), 0);
                CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
                CHECK_INT(vl.items[0].level, VERDICT_FAIL);
                CHECK_STR(vl.items[0].message,
                          "the sender is pinned to CPU 2, which is not among the kubelet's exclusive CPUs 5-7,13-15 the driver runs on");
                verdict_list_free(&vl);

                /* an empty pinned set is refused */
                lplan_pin none = { .mode = LPLAN_PIN_KUBELET };
                cpuset_zero(&none.cpus);
                CHECK_INT(lplan_build(&env, &none, &topo, &p), -EINVAL);
        }

        /* the bypass: two NICs, sender on the first and receiver on the second, addresses
         * from the allocation or the pod, the bindings, the low-latency profile */
        {
                const char *e[] = { "SPINLANE_ISOLATED_CPUS=2-4", "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
                                    "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio",
                                    "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio",
                                    "SPINLANE_NIC_0_IPV4=10.0.1.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.1.1",
                                    "SPINLANE_NIC_1_IPV4=10.0.2.10/24", "SPINLANE_NIC_1_GATEWAY=",
                                    "SPINLANE_RECEIVER_IPV4=10.0.2.99/24", "SPINLANE_AERON_LIBRARY=/x/libspinlane_aeron.so",
                                    "AERON_PRE_TOUCH_MAPPED_MEMORY=false", NULL };
                parse(&env, e);
                CHECK_INT(env.n_errs, 0);
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
                CHECK(p.bypass);
                CHECK_STR(p.bypass_problem, "");
                CHECK_STR(get(&p, "SPINLANE_SENDER_DEVICE"), "0000:00:06.0");
                CHECK_STR(get(&p, "SPINLANE_RECEIVER_DEVICE"), "0000:00:07.0");
                CHECK_STR(get(&p, "SPINLANE_SENDER_IPV4"), "10.0.1.10/24");
                CHECK(get(&p, "SPINLANE_RECEIVER_IPV4") == NULL); /* the pod's, left alone */
                CHECK_STR(get(&p, "SPINLANE_SENDER_GATEWAY"), "10.0.1.1");
                CHECK(get(&p, "SPINLANE_RECEIVER_GATEWAY") == NULL);
                CHECK_STR(get(&p, "AERON_DRIVER_DYNAMIC_LIBRARIES"), "/x/libspinlane_aeron.so");
                CHECK_STR(get(&p, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA"), "spinlane_udp_channel_transport_bindings");
                CHECK_STR(get(&p, "AERON_TERM_BUFFER_SPARSE_FILE"), "false");
                CHECK(get(&p, "AERON_PRE_TOUCH_MAPPED_MEMORY") == NULL);
                CHECK_STR(get(&p, "AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND"), "2");

                /* one NIC: both roles on it, with its address (no gateway: none set) */
                const char *e1n[] = { "SPINLANE_ISOLATED_CPUS=2-4", "SPINLANE_DPDK_NICS=0000:00:06.0",
                                      "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio",
                                      "SPINLANE_NIC_0_IPV4=10.0.1.10/24", "SPINLANE_NIC_0_GATEWAY=", NULL };
                parse(&env, e1n);
                CHECK_INT(env.n_errs, 0);
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
                CHECK_STR(get(&p, "SPINLANE_SENDER_DEVICE"), "0000:00:06.0");
                CHECK_STR(get(&p, "SPINLANE_RECEIVER_DEVICE"), "0000:00:06.0");
                CHECK_STR(get(&p, "SPINLANE_SENDER_IPV4"), "10.0.1.10/24");
                CHECK_STR(get(&p, "SPINLANE_RECEIVER_IPV4"), "10.0.1.10/24");
                CHECK(get(&p, "SPINLANE_SENDER_GATEWAY") == NULL);
                CHECK_STR(get(&p, "AERON_DRIVER_DYNAMIC_LIBRARIES"), "libspinlane_aeron.so"); /* the loader's search */
                CHECK_STR(p.bypass_problem, "");
                /* an allocation without the NIC's address is refused (allocation-env names the
                 * variable): the bypass gets no NIC from it */
                const char *e1x[] = { "SPINLANE_ISOLATED_CPUS=2-4", "SPINLANE_DPDK_NICS=0000:00:06.0",
                                      "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio", NULL };
                parse(&env, e1x);
                CHECK_INT(env.n_errs, 1);
                CHECK_STR(env.errs[0].var, "SPINLANE_NIC_0_IPV4");
                CHECK(!env.have_nics);
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
                CHECK(strstr(p.bypass_problem, "no NIC for the sender: the allocation has no valid SPINLANE_DPDK_NICS") != NULL);

                /* the pod opts out: Aeron's default bindings, no library */
                const char *eo[] = { "SPINLANE_ISOLATED_CPUS=2-4", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=default", NULL };
                parse(&env, eo);
                CHECK_INT(lplan_build(&env, NULL, &topo, &p), 0);
                CHECK(!p.bypass);
                CHECK(get(&p, "AERON_DRIVER_DYNAMIC_LIBRARIES") == NULL);
                CHECK(strstr(p.bypass_problem, "no NIC for the sender") != NULL);
        }

        /* no granted CPUs: no plan, *ret untouched */
        const char *e6[] = { NULL };
        parse(&env, e6);
        p.eal_args[0] = 'X';
        CHECK_INT(lplan_build(&env, NULL, &topo, &p), -EINVAL);
        CHECK(p.eal_args[0] == 'X');

        /* idle strategy classes, by Aeron's names */
        CHECK_INT(lplan_idle_never_parks("noop"), 1);
        CHECK_INT(lplan_idle_never_parks("spinning"), 1);
        CHECK_INT(lplan_idle_never_parks("backoff"), 0);
        CHECK_INT(lplan_idle_never_parks("yielding"), 0);
        CHECK_INT(lplan_idle_never_parks("my_strategy"), -1);
        return test_done();
}
