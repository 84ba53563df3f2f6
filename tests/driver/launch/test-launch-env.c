/* SPDX-License-Identifier: Apache-2.0 */
/* The environment parser: a good allocation, defaults, and a table of bad or
 * contradictory values, each of which must produce an error naming its variable. */
#include "launch-env.h"
#include "testutil.h"

#include "cleanup.h"
#include "envp.h"

static const char *GOOD[] = {
        "SPINLANE_ISOLATED_CPUS=2-3,6-7",
        "SPINLANE_ISOLATED_CORES=2,3",
        "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:07.0",
        "SPINLANE_NIC_0_PCI=0000:00:06.0",
        "SPINLANE_NIC_0_KIND=ena",
        "SPINLANE_NIC_0_DRIVER=vfio-pci",
        "SPINLANE_NIC_0_NUMA=1",
        "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7",
        "SPINLANE_NIC_1_KIND=mana",
        "SPINLANE_NIC_1_DRIVER=mana",
        "SPINLANE_NIC_1_MAC=00:0D:3A:00:00:01",
        "SPINLANE_NIC_1_DEVICES=/dev/infiniband/uverbs0",
        "SPINLANE_HUGEPAGE_DIR=/hugepages",
        "SPINLANE_DPDK_MEMORY_MB=512",
        "HOSTNAME=driver-7f9c/x_y",
        "AERON_SENDER_CPU_AFFINITY=3",
        "AERON_RECEIVER_WILDCARD_PORT_RANGE=21000   21999",
        "AERON_MTU_LENGTH=1k",
        "SPINLANE_NIC_0_IPV4=10.0.1.10/24",
        "SPINLANE_NIC_0_GATEWAY=10.0.1.1",
        "SPINLANE_RECEIVER_IPV4=10.0.2.10/24",
        "AERON_DRIVER_DYNAMIC_LIBRARIES=/opt/spinlane/lib/libspinlane_aeron.so",
        "SPINLANE_NIC_1_IPV4=10.0.2.10/32", /* GOOD[22, 23] */
        "SPINLANE_NIC_1_GATEWAY=",
        NULL,
};

static void test_good(void)
{
        launch_env env;

        CHECK_INT(lenv_parse(GOOD, &env), 0);
        CHECK_INT(env.n_errs, 0);
        for (unsigned i = 0; i < env.n_errs; i++)
                fprintf(stderr, "unexpected: %s\n", env.errs[i].msg);
        CHECK(env.have_cpus && env.have_nics && env.have_cores);
        CHECK_INT(cpuset_count(&env.cpus), 4);
        /* the NICs' addresses and the pod's own bypass values */
        CHECK_STR(env.nics[0].ipv4, "10.0.1.10/24");
        CHECK_STR(env.nics[0].gateway, "10.0.1.1");
        CHECK_STR(env.nics[1].ipv4, "10.0.2.10/32");
        CHECK_STR(env.nics[1].gateway, ""); /* empty: none, on-link peers only */
        CHECK_STR(env.bypass.ipv4[1], "10.0.2.10/24");
        CHECK_STR(env.bypass.ipv4[0], "");
        CHECK(!env.bypass.gateway_set[0]);
        CHECK_STR(env.bypass.libraries, "/opt/spinlane/lib/libspinlane_aeron.so");
        CHECK_STR(env.bypass.bindings, "");
        CHECK_INT(env.n_cores, 2);
        CHECK_INT(env.n_nics, 2);
        CHECK_STR(env.nics[0].devargs, "0000:00:06.0");
        CHECK_INT(env.nics[0].numa, 1);
        CHECK_INT(env.nics[0].n_devices, 2);
        CHECK_STR(env.nics[1].devargs, "0000:00:07.0,mac=00:0d:3a:00:00:01");
        CHECK_INT(env.nics[1].driver, LENV_DRV_MANA);
        CHECK_STR(env.huge_dir, "/hugepages");
        CHECK_INT(env.memory_mb, 512);
        CHECK_STR(env.pod_id, "driver-7f9cxy");
        CHECK_INT(env.aeron.aff_sender, 3);
        CHECK(env.aeron.aff_sender_set && !env.aeron.aff_receiver_set);
        CHECK_INT(env.aeron.aff_receiver, -1);
        CHECK(env.aeron.receiver_ports_set);
        CHECK_INT(env.aeron.receiver_lo, 21000);
        CHECK_INT(env.aeron.receiver_hi, 21999);
        CHECK_INT(env.aeron.mtu, 1024);

        /* every NIC's address variables are required (the device plugin always sends
         * them): each one missing is named */
        static const unsigned addr_vars[] = { 18, 19, 22, 23 };
        for (unsigned a = 0; a < ELEMENTSOF(addr_vars); a++) {
                unsigned k = addr_vars[a];
                const char *envp[ELEMENTSOF(GOOD)];
                unsigned n = 0;
                for (unsigned j = 0; GOOD[j]; j++)
                        if (j != k)
                                envp[n++] = GOOD[j];
                envp[n] = NULL;
                char want[48];
                snprintf(want, sizeof(want), "%.*s", (int)(strchr(GOOD[k], '=') - GOOD[k]), GOOD[k]);
                CHECK_INT(lenv_parse(envp, &env), 0);
                CHECK_INT(env.n_errs, 1);
                CHECK(!env.have_nics);
                if (env.n_errs == 1) {
                        CHECK_STR(env.errs[0].var, want);
                        CHECK(strstr(env.errs[0].msg, "is not set") != NULL);
                }
        }

        /* the device plugin's own core ids ("p<package>c<core>") */
        const char *plugin[] = { "SPINLANE_ISOLATED_CORES=p0c2,p0c3", GOOD[0], NULL };
        lenv_parse(plugin, &env);
        CHECK(env.have_cores);
        CHECK_INT(env.n_cores, 2);

        /* an empty MAC is "unknown" (the plugin's value for a NIC bound to vfio) */
        const char *nomac[] = { "SPINLANE_NIC_0_MAC=", GOOD[0], GOOD[2], GOOD[4], GOOD[5], GOOD[7],
                                "SPINLANE_NIC_1_KIND=ena", "SPINLANE_NIC_1_DRIVER=vfio-pci",
                                "SPINLANE_NIC_1_MAC=", "SPINLANE_NIC_1_DEVICES=/dev/vfio/vfio,/dev/vfio/8",
                                GOOD[18], GOOD[19], GOOD[22], GOOD[23], NULL };
        CHECK_INT(lenv_parse(nomac, &env), 0);
        CHECK_INT(env.n_errs, 0);
        CHECK_STR(env.nics[0].mac, "");
        CHECK_STR(env.nics[1].devargs, "0000:00:07.0");
        /* but a MANA port is chosen by its MAC: empty is an error there */
        const char *manamac[] = { "SPINLANE_NIC_1_MAC=", "SPINLANE_NIC_0_MAC=", GOOD[0], GOOD[2], GOOD[4], GOOD[5],
                                  GOOD[7], GOOD[8], GOOD[9], GOOD[11], GOOD[18], GOOD[19], GOOD[22], GOOD[23], NULL };
        CHECK_INT(lenv_parse(manamac, &env), 0);
        CHECK_INT(env.n_errs, 1);
        if (env.n_errs == 1)
                CHECK_STR(env.errs[0].var, "SPINLANE_NIC_1_MAC");

        const char *none[] = { NULL };
        CHECK_INT(lenv_parse(none, &env), 0);
        CHECK_INT(env.n_errs, 2); /* no CPUs, no NICs */
        CHECK_STR(env.errs[0].var, "SPINLANE_ISOLATED_CPUS");
        CHECK_STR(env.errs[1].var, "SPINLANE_DPDK_NICS");
        CHECK_STR(env.huge_dir, "/dev/hugepages");
        CHECK_INT(env.memory_mb, 256);
        CHECK_STR(env.pod_id, "local");
}

/* Each bad value, put in front of GOOD (first match wins), must give exactly one error
 * naming var. */
static const struct {
        const char *assign;
        const char *var;
        const char *check;
} BAD[] = {
        { "SPINLANE_ISOLATED_CPUS=2-", "SPINLANE_ISOLATED_CPUS", "allocation-env" },
        { "SPINLANE_ISOLATED_CPUS=", "SPINLANE_ISOLATED_CPUS", "allocation-env" },
        { "SPINLANE_ISOLATED_CPUS=5000", "SPINLANE_ISOLATED_CPUS", "allocation-env" },
        { "SPINLANE_ISOLATED_CORES=1,2,3,4,5", "SPINLANE_ISOLATED_CORES", "allocation-env" },
        { "SPINLANE_ISOLATED_CORES=p0c2,,p0c3", "SPINLANE_ISOLATED_CORES", "allocation-env" },
        { "SPINLANE_ISOLATED_CORES=p0c2,", "SPINLANE_ISOLATED_CORES", "allocation-env" },
        { "SPINLANE_ISOLATED_CORES=p0c2 p0c3", "SPINLANE_ISOLATED_CORES", "allocation-env" },
        { "SPINLANE_DPDK_NICS=0000:00:06.0,,x", "SPINLANE_DPDK_NICS", "allocation-env" },
        { "SPINLANE_DPDK_NICS=0000:00:06.0,0000:00:06.0", "SPINLANE_DPDK_NICS", "allocation-env" },
        { "SPINLANE_DPDK_NICS=00:06.0", "SPINLANE_DPDK_NICS", "allocation-env" },
        { "SPINLANE_NIC_0_PCI=0000:00:08.0", "SPINLANE_NIC_0_PCI", "allocation-env" },
        { "SPINLANE_NIC_0_KIND=virtio", "SPINLANE_NIC_0_KIND", "allocation-env" },
        { "SPINLANE_NIC_0_DRIVER=mana", "SPINLANE_NIC_0_DRIVER", "allocation-env" },
        { "SPINLANE_NIC_0_NUMA=-2", "SPINLANE_NIC_0_NUMA", "allocation-env" },
        { "SPINLANE_NIC_0_MAC=zz:00:00:00:00:00", "SPINLANE_NIC_0_MAC", "allocation-env" },
        { "SPINLANE_NIC_0_DEVARGS=0000:00:07.0", "SPINLANE_NIC_0_DEVARGS", "allocation-env" },
        { "SPINLANE_NIC_0_DEVARGS=0000:00:06.0 --vdev x", "SPINLANE_NIC_0_DEVARGS", "allocation-env" },
        { "SPINLANE_NIC_0_DEVICES=/etc/passwd", "SPINLANE_NIC_0_DEVICES", "allocation-env" },
        { "SPINLANE_NIC_0_DEVICES=/dev/../etc/shadow", "SPINLANE_NIC_0_DEVICES", "allocation-env" },
        { "SPINLANE_NIC_0_DEVICES=/dev/a,,/dev/b", "SPINLANE_NIC_0_DEVICES", "allocation-env" },
        { "SPINLANE_HUGEPAGE_DIR=relative", "SPINLANE_HUGEPAGE_DIR", "hugepages" },
        { "SPINLANE_HUGEPAGE_DIR=/huge pages", "SPINLANE_HUGEPAGE_DIR", "hugepages" },
        { "SPINLANE_DPDK_MEMORY_MB=0", "SPINLANE_DPDK_MEMORY_MB", "hugepages" },
        { "SPINLANE_DPDK_MEMORY_MB=12x", "SPINLANE_DPDK_MEMORY_MB", "hugepages" },
        { "SPINLANE_EAL_EXTRA_ARGS=--vdev=x;rm", "SPINLANE_EAL_EXTRA_ARGS", "allocation-env" },
        { "AERON_SENDER_CPU_AFFINITY=two", "AERON_SENDER_CPU_AFFINITY", "aeron-config" },
        { "AERON_CONDUCTOR_CPU_AFFINITY=-5", "AERON_CONDUCTOR_CPU_AFFINITY", "aeron-config" },
        { "AERON_MTU_LENGTH=big", "AERON_MTU_LENGTH", "aeron-config" },
        { "AERON_SENDER_WILDCARD_PORT_RANGE=20000-20999", "AERON_SENDER_WILDCARD_PORT_RANGE", "aeron-config" },
        { "AERON_SENDER_WILDCARD_PORT_RANGE=2 1", "AERON_SENDER_WILDCARD_PORT_RANGE", "aeron-config" },
        { "AERON_SENDER_WILDCARD_PORT_RANGE=1 65536", "AERON_SENDER_WILDCARD_PORT_RANGE", "aeron-config" },
        { "AERON_THREADING_MODE=", "AERON_THREADING_MODE", "aeron-config" },
        { "AERON_SENDER_IDLE_STRATEGY=a b", "AERON_SENDER_IDLE_STRATEGY", "aeron-config" },
        { "SPINLANE_NIC_0_IPV4=10.0.1.10", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=127.0.0.1/8", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_1_IPV4=10.0.2.300/24", "SPINLANE_NIC_1_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_GATEWAY=10.0.1.1/24", "SPINLANE_NIC_0_GATEWAY", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=10.0.1.10/33", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=10.0.1.10/0", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=10.0.1.0/24", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=010.0.1.10/24", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=224.0.1.10/24", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_IPV4=", "SPINLANE_NIC_0_IPV4", "allocation-env" },
        { "SPINLANE_NIC_0_GATEWAY=10.0.7.1", "SPINLANE_NIC_0_GATEWAY", "allocation-env" },
        { "SPINLANE_NIC_0_GATEWAY=10.0.1.10", "SPINLANE_NIC_0_GATEWAY", "allocation-env" },
        { "SPINLANE_NIC_0_GATEWAY=10.0.1.255", "SPINLANE_NIC_0_GATEWAY", "allocation-env" },
        { "SPINLANE_NIC_0_GATEWAY=gw", "SPINLANE_NIC_0_GATEWAY", "allocation-env" },
        { "SPINLANE_NIC_1_GATEWAY=10.0.2.1", "SPINLANE_NIC_1_GATEWAY", "allocation-env" }, /* a /32 has no other host */
        { "SPINLANE_SENDER_IPV4=10.0.1.10/24;x", "SPINLANE_SENDER_IPV4", "aeron-bindings" },
        { "SPINLANE_RECEIVER_DEVICE=net af", "SPINLANE_RECEIVER_DEVICE", "aeron-bindings" },
        { "AERON_DRIVER_DYNAMIC_LIBRARIES=/lib/a.so;rm", "AERON_DRIVER_DYNAMIC_LIBRARIES", "aeron-bindings" },
};

static void test_bad(void)
{
        for (unsigned i = 0; i < ELEMENTSOF(BAD); i++) {
                const char *envp[ELEMENTSOF(GOOD) + 1];
                launch_env env;
                envp[0] = BAD[i].assign;
                memcpy(envp + 1, GOOD, sizeof(GOOD));
                CHECK_INT(lenv_parse(envp, &env), 0);
                CHECK_INT(env.n_errs, 1);
                if (env.n_errs != 1)
                        fprintf(stderr, "  for %s\n", BAD[i].assign);
                if (env.n_errs >= 1) {
                        CHECK_STR(env.errs[0].var, BAD[i].var);
                        CHECK_STR(env.errs[0].check, BAD[i].check);
                        CHECK(strstr(env.errs[0].msg, BAD[i].var) != NULL);
                }
        }
        /* nothing granted: the error says so and its remedy is to request the resources */
        {
                const char *none[] = { "HOSTNAME=x", NULL };
                launch_env e2;
                lenv_parse(none, &e2);
                CHECK_INT(e2.n_errs, 2);
                for (unsigned k = 0; k < e2.n_errs; k++)
                        CHECK(e2.errs[k].remedy && strstr(e2.errs[k].remedy, "Request spinlane.io/isolated-core and spinlane.io/dpdk-nic"));
                /* a malformed value keeps the default remedy (fix the variable) */
                const char *bad[] = { "SPINLANE_ISOLATED_CPUS=2-", NULL };
                lenv_parse(bad, &e2);
                CHECK(e2.n_errs >= 1 && e2.errs[0].remedy == NULL);
        }
        /* a value with control characters is quoted harmlessly */
        const char *envp[] = { "SPINLANE_ISOLATED_CPUS=1\033[2J", NULL };
        launch_env env;
        lenv_parse(envp, &env);
        CHECK(env.n_errs >= 1 && strstr(env.errs[0].msg, "\"1?[2J\"") != NULL);
}

/* Entries far past any fixed count are still read: padding before the allocation must
 * neither hide the SPINLANE_* variables nor let a bad AERON_MTU_LENGTH through. */
static void test_long_env(void)
{
        enum { PAD = 20000 };
        _cleanup_free_ const char **envp = calloc(PAD + ELEMENTSOF(GOOD) + 1, sizeof(*envp));
        static char pad[PAD][12];
        launch_env env;

        CHECK(envp != NULL);
        if (!envp)
                return;
        for (unsigned i = 0; i < PAD; i++) {
                snprintf(pad[i], sizeof(pad[i]), "PAD%u=x", i);
                envp[i] = pad[i];
        }
        memcpy(envp + PAD, GOOD, sizeof(GOOD));
        CHECK_INT(lenv_parse(envp, &env), 0);
        CHECK_INT(env.n_errs, 0);
        CHECK(env.have_cpus && env.have_nics);
        CHECK_INT(env.aeron.mtu, 1024);

        envp[PAD - 1] = "AERON_MTU_LENGTH=junk"; /* the first one counts, as with getenv */
        CHECK_INT(lenv_parse(envp, &env), 0);
        CHECK_INT(env.n_errs, 1);
        CHECK(env.n_errs == 1 && strcmp(env.errs[0].var, "AERON_MTU_LENGTH") == 0);
        CHECK_STR(envp_get(envp, "AERON_MTU_LENGTH"), "junk");
}

/* The errors of check "datapath" (an environment without a grant has others). */
static const lenv_err *datapath_errs(const launch_env *env, unsigned *ret_n)
{
        const lenv_err *first = NULL;
        *ret_n = 0;
        for (unsigned i = 0; i < env->n_errs; i++)
                if (strcmp(env->errs[i].check, "datapath") == 0) {
                        first = first ? first : &env->errs[i];
                        (*ret_n)++;
                }
        return first;
}

/* SPINLANE_DATAPATH*: defaults, good values, each bad one named (check "datapath"). */
static void test_datapath(void)
{
        unsigned n;
        static launch_env env;
        const char *none[] = { NULL };
        CHECK_INT(lenv_parse(none, &env), 0);
        CHECK(env.datapath.on);
        CHECK_STR(env.datapath.peer, "");
        CHECK_INT(env.datapath.max_p99_us, 0);
        CHECK_INT(env.datapath.rounds, LENV_DATAPATH_DEFAULT_ROUNDS);
        CHECK_INT(env.datapath.timeout_ms, LENV_DATAPATH_DEFAULT_TIMEOUT_MS);

        const char *good[] = { "SPINLANE_DATAPATH=off", "SPINLANE_DATAPATH_PEER=10.0.1.20:39990",
                               "SPINLANE_DATAPATH_MAX_P99_US=50", "SPINLANE_DATAPATH_ROUNDS=100",
                               "SPINLANE_DATAPATH_TIMEOUT_MS=500", NULL };
        CHECK_INT(lenv_parse(good, &env), 0);
        CHECK(datapath_errs(&env, &n) == NULL);
        CHECK_INT(n, 0);
        CHECK(!env.datapath.on);
        CHECK_STR(env.datapath.peer, "10.0.1.20:39990");
        CHECK_INT(env.datapath.max_p99_us, 50);
        CHECK_INT(env.datapath.rounds, 100);
        CHECK_INT(env.datapath.timeout_ms, 500);

        static const struct {
                const char *set, *var, *msg;
        } bad[] = {
                { "SPINLANE_DATAPATH=maybe", "SPINLANE_DATAPATH", "is not on or off" },
                { "SPINLANE_DATAPATH_PEER=10.0.1.20", "SPINLANE_DATAPATH_PEER", "(a.b.c.d:port)" },
                { "SPINLANE_DATAPATH_PEER=10.0.1.20:0", "SPINLANE_DATAPATH_PEER", "(a.b.c.d:port)" },
                { "SPINLANE_DATAPATH_PEER=224.0.0.1:9", "SPINLANE_DATAPATH_PEER", "not a unicast" },
                { "SPINLANE_DATAPATH_PEER=10.0.1.20:65536", "SPINLANE_DATAPATH_PEER", "(a.b.c.d:port)" },
                { "SPINLANE_DATAPATH_MAX_P99_US=0", "SPINLANE_DATAPATH_MAX_P99_US", "is not a number in 1..10000000" },
                { "SPINLANE_DATAPATH_ROUNDS=10001", "SPINLANE_DATAPATH_ROUNDS", "is not a number in 1..10000" },
                { "SPINLANE_DATAPATH_TIMEOUT_MS=9", "SPINLANE_DATAPATH_TIMEOUT_MS", "is not a number in 10..60000" },
                { "SPINLANE_DATAPATH_TIMEOUT_MS=1s", "SPINLANE_DATAPATH_TIMEOUT_MS", "is not a number in 10..60000" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const char *envp[] = { bad[i].set, NULL };
                CHECK_INT(lenv_parse(envp, &env), 0);
                const lenv_err *e = datapath_errs(&env, &n);
                CHECK_INT(n, 1);
                if (e) {
                        CHECK_STR(e->var, bad[i].var);
                        CHECK(strstr(e->msg, bad[i].msg) != NULL);
                }
        }
}

int main(void)
{
        test_datapath();
        test_good();
        test_bad();
        test_long_env();
        return test_done();
}
