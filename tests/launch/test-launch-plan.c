/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's environment plan: EAL arguments for each NUMA layout, affinities chosen
 * from the granted cores (and the pod's own kept), idle defaults, and the aeron-config
 * verdict for one core, two and three. */
#include "launch-plan.h"
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

static void parse(launch_env *env, const char *const *envp)
{
        lenv_parse(envp, env); /* errors (no NICs) are the checks' business, not the plan's */
}

int main(void)
{
        static launch_env env;
        static lplan p;
        verdict_list vl = { 0 };

        topo_pairs();

        /* two NICs on NUMA node 1, three cores: conductor, sender, receiver in order */
        const char *e1[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
                             "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=1", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio",
                             "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_NUMA=1", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio",
                             "SPINLANE_NIC_1_DEVARGS=0000:00:07.0,llq_policy=1", "SPINLANE_DPDK_MEMORY_MB=512",
                             "SPINLANE_POD_UID=1234-abcd", "SPINLANE_EAL_EXTRA_ARGS=--log-level=pmd.net.ena:8", NULL };
        parse(&env, e1);
        CHECK_INT(env.n_errs, 0);
        CHECK_INT(lplan_build(&env, &topo, &p), 0);
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

        /* NICs on different nodes: -m; the pod's own affinities and modes are kept */
        const char *e2[] = { "SPINLANE_ISOLATED_CPUS=2-4,10-12", "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
                             "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=0", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio",
                             "SPINLANE_NIC_1_DRIVER=vfio-pci", "SPINLANE_NIC_1_NUMA=1", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio",
                             "AERON_SENDER_CPU_AFFINITY=4", "AERON_THREADING_MODE=DEDICATED",
                             "AERON_SENDER_IDLE_STRATEGY=spinning", NULL };
        parse(&env, e2);
        CHECK_INT(lplan_build(&env, &topo, &p), 0);
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
        CHECK_INT(lplan_build(&env, &topo, &p), 0);
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
        CHECK_INT(lplan_build(&env, &topo, &p), 0);
        CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
        CHECK_INT(vl.items[0].level, VERDICT_FAIL);
        CHECK_STR(vl.items[0].message, "the sender (CPU 7) and the receiver (CPU 15) share one physical core");
        verdict_list_free(&vl);

        /* one CPU: the receiver gets nothing */
        const char *e5[] = { "SPINLANE_ISOLATED_CPUS=7", NULL };
        parse(&env, e5);
        CHECK_INT(lplan_build(&env, &topo, &p), 0);
        CHECK_INT(lplan_check_aeron(&env, &p, &topo, &vl), 0);
        CHECK(strstr(vl.items[0].message, "the receiver thread is not pinned") != NULL);
        verdict_list_free(&vl);

        /* no granted CPUs: no plan, *ret untouched */
        const char *e6[] = { NULL };
        parse(&env, e6);
        p.eal_args[0] = 'X';
        CHECK_INT(lplan_build(&env, &topo, &p), -EINVAL);
        CHECK(p.eal_args[0] == 'X');

        /* idle strategy classes, by Aeron's names */
        CHECK_INT(lplan_idle_never_parks("noop"), 1);
        CHECK_INT(lplan_idle_never_parks("spinning"), 1);
        CHECK_INT(lplan_idle_never_parks("backoff"), 0);
        CHECK_INT(lplan_idle_never_parks("yielding"), 0);
        CHECK_INT(lplan_idle_never_parks("my_strategy"), -1);
        return test_done();
}
