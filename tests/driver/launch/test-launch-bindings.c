/* SPDX-License-Identifier: Apache-2.0 */
/* The aeron-bindings check on stand-ins built for it: the shared-library aeronmd and a
 * static one, bindings libraries right and wrong (missing, not a library, no object, a
 * read-only object, a function, built against another Aeron, a custom name), the pod's
 * opt-out to kernel UDP, and the contract: no address anywhere (both variables named)
 * and an address pair the driver itself would refuse. */
#include "launch-bindings.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static const char *dir;
static char aeronmd[1024], aeronmd_static[1024], lib_ok[1024];

#define CONTRACT "SPINLANE_EAL_ARGS=-l 1-3 -a 0000:00:06.0", "SPINLANE_SENDER_DEVICE=0000:00:06.0", \
        "SPINLANE_RECEIVER_DEVICE=0000:00:06.0", "SPINLANE_SENDER_IPV4=10.0.1.10/24", "SPINLANE_RECEIVER_IPV4=10.0.1.10/24"

struct result {
        verdict_level level;
        char msg[4096];
        json_t *ev;
};

static void run(const char *command, const char *const *envp, const char *problem, struct result *ret)
{
        verdict_list vl = { 0 };
        lplan *plan = calloc(1, sizeof(*plan));
        if (!plan)
                abort();
        plan->bypass = true;
        snprintf(plan->bypass_problem, sizeof(plan->bypass_problem), "%s", problem ? problem : "");
        lbind_in in = { .command = command, .envp = envp, .plan = plan };
        CHECK_INT(lbind_check(&in, &vl), 0);
        CHECK_INT(vl.n, 1);
        CHECK_STR(vl.items[0].check, "aeron-bindings");
        ret->level = vl.items[0].level;
        snprintf(ret->msg, sizeof(ret->msg), "%s", vl.items[0].message ? vl.items[0].message : "");
        ret->ev = vl.items[0].evidence ? json_incref(vl.items[0].evidence) : NULL;
        verdict_list_free(&vl);
        free(plan);
}

static void expect(const char *command, const char *const *envp, const char *problem, verdict_level level,
                   const char *want, int line)
{
        struct result r;
        run(command, envp, problem, &r);
        if (r.level != level || !strstr(r.msg, want)) {
                fprintf(stderr, "line %d: verdict %d \"%s\", want %d with \"%s\"\n", line, r.level, r.msg, level, want);
                CHECK(false);
        } else
                CHECK(true);
        json_decref(r.ev);
}
#define EXPECT(cmd, envp, problem, level, want) expect(cmd, envp, problem, level, want, __LINE__)

static const char *lib(const char *which, char *buf, size_t size)
{
        snprintf(buf, size, "AERON_DRIVER_DYNAMIC_LIBRARIES=%s/fake-bindings/libfake-bindings-%s.so", dir, which);
        return buf;
}

static void test_pass(void)
{
        char l[1200];
        const char *envp[] = { lib("ok", l, sizeof(l)), "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=spinlane_udp_channel_transport_bindings",
                               CONTRACT, "PATH=/usr/bin:/bin", NULL };
        struct result r;
        run(aeronmd, envp, NULL, &r);
        CHECK_INT(r.level, VERDICT_PASS);
        CHECK(strstr(r.msg, "(shared-library build) loads") != NULL);
        CHECK(strstr(r.msg, "spinlane_udp_channel_transport_bindings resolves, built against Aeron 1.52.2") != NULL);
        CHECK(strstr(r.msg, "sender and receiver on 0000:00:06.0 10.0.1.10/24") != NULL);
        CHECK(r.ev && json_is_true(json_object_get(r.ev, "shared_library_driver")));
        /* the driver's own libaeron_driver.so was found through its RUNPATH */
        const char *where = r.ev ? json_string_value(json_object_get(r.ev, "aeron_driver_library")) : NULL;
        CHECK(where && strstr(where, "fake-aeron/lib/libaeron_driver.so"));
        json_decref(r.ev);

        /* found through PATH, two NICs */
        char path[1200];
        snprintf(path, sizeof(path), "PATH=/nonexistent:%s/fake-aeron/bin:/usr/bin", dir);
        const char *envp2[] = { lib("ok", l, sizeof(l)), path, "SPINLANE_EAL_ARGS=-l 1-3", "SPINLANE_SENDER_DEVICE=0000:00:06.0",
                                "SPINLANE_RECEIVER_DEVICE=0000:00:07.0", "SPINLANE_SENDER_IPV4=10.0.1.10/24",
                                "SPINLANE_RECEIVER_IPV4=10.0.2.10/24", "SPINLANE_RECEIVER_GATEWAY=10.0.2.1", NULL };
        EXPECT("aeronmd", envp2, NULL, VERDICT_PASS,
               "sender on 0000:00:06.0 10.0.1.10/24, receiver on 0000:00:07.0 10.0.2.10/24");
}

static void test_driver(void)
{
        char l[1200];
        const char *envp[] = { lib("ok", l, sizeof(l)), CONTRACT, NULL };

        EXPECT(aeronmd_static, envp, NULL, VERDICT_FAIL,
               "is not the shared-library aeronmd: it does not link libaeron_driver.so");
        EXPECT("/bin/true", envp, NULL, VERDICT_WARN, "the command /bin/true is not Aeron's shared-library aeronmd");
        EXPECT("/nonexistent/aeronmd", envp, NULL, VERDICT_FAIL, "the driver \"/nonexistent/aeronmd\" is not an executable file");
        const char *envp2[] = { lib("ok", l, sizeof(l)), CONTRACT, "PATH=/nonexistent", NULL };
        EXPECT("aeronmd", envp2, NULL, VERDICT_FAIL, "the driver \"aeronmd\" is not an executable file in PATH");
}

static void test_library(void)
{
        char l[1200], missing[1200], text[1200];
        const char *base[] = { NULL, CONTRACT, NULL };

        base[0] = lib("nosym", l, sizeof(l));
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL,
               "exports spinlane_udp_channel_transport_bindings: the stock aeronmd would crash (SIGSEGV)");
        base[0] = lib("const", l, sizeof(l));
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL, "is read-only");
        base[0] = lib("func", l, sizeof(l));
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL, "is a function, not the bindings object");
        base[0] = lib("old", l, sizeof(l));
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL, "built against Aeron 1.52.2 but the driver runs Aeron 1.47.3");
        snprintf(missing, sizeof(missing), "AERON_DRIVER_DYNAMIC_LIBRARIES=%s/nonexistent/libspinlane_aeron.so", dir);
        base[0] = missing;
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL, "libspinlane_aeron.so (AERON_DRIVER_DYNAMIC_LIBRARIES) does not exist");
        /* not a library at all: this test's own source directory entry */
        snprintf(text, sizeof(text), "AERON_DRIVER_DYNAMIC_LIBRARIES=%s/CMakeCache.txt", getenv("SPINLANE_BINARY_DIR")
                                                                                          ? getenv("SPINLANE_BINARY_DIR")
                                                                                          : ".");
        base[0] = text;
        EXPECT(aeronmd, base, NULL, VERDICT_FAIL, "cannot load");
        /* a list: the right one second */
        char two[2500];
        snprintf(two, sizeof(two), "AERON_DRIVER_DYNAMIC_LIBRARIES=%s/fake-bindings/libfake-bindings-custom.so,%s", dir, lib_ok);
        base[0] = two;
        EXPECT(aeronmd, base, NULL, VERDICT_PASS, "resolves");
        const char *empty[] = { "AERON_DRIVER_DYNAMIC_LIBRARIES=", CONTRACT, NULL };
        EXPECT(aeronmd, empty, NULL, VERDICT_FAIL, "AERON_DRIVER_DYNAMIC_LIBRARIES is empty");
}

static void test_pod_choice(void)
{
        char l[1200];
        const char *def[] = { "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=default", NULL };
        EXPECT(aeronmd, def, NULL, VERDICT_WARN, "the driver runs on kernel UDP without bypass");
        /* the opt-out needs no address */
        EXPECT(aeronmd, def, "no address for the sender NIC", VERDICT_WARN, "kernel UDP");

        const char *custom[] = { lib("custom", l, sizeof(l)), "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=my_udp_bindings",
                                 NULL };
        EXPECT(aeronmd, custom, NULL, VERDICT_WARN, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=my_udp_bindings (the pod's)");
        const char *typo[] = { lib("custom", l, sizeof(l)), "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=my_udp_bindingz",
                               NULL };
        EXPECT(aeronmd, typo, NULL, VERDICT_FAIL, "exports my_udp_bindingz: the stock aeronmd would crash");
}

static void test_contract(void)
{
        char l[1200];
        const char *envp[] = { lib("ok", l, sizeof(l)), CONTRACT, NULL };
        EXPECT(aeronmd, envp, "no address for the sender NIC 0000:00:06.0: neither SPINLANE_NIC_0_IPV4 (the allocation) nor SPINLANE_SENDER_IPV4 (the pod) is set",
               VERDICT_FAIL, "neither SPINLANE_NIC_0_IPV4 (the allocation) nor SPINLANE_SENDER_IPV4 (the pod) is set");
        /* the adapter's own parser: one port, two addresses */
        const char *two[] = { lib("ok", l, sizeof(l)), "SPINLANE_RECEIVER_IPV4=10.0.1.11/24", CONTRACT, NULL };
        EXPECT(aeronmd, two, NULL, VERDICT_FAIL,
               "the driver would refuse its environment: SPINLANE_SENDER_DEVICE and SPINLANE_RECEIVER_DEVICE name one port");
        const char *bad[] = { lib("ok", l, sizeof(l)), "SPINLANE_SENDER_GATEWAY=10.9.9.9", CONTRACT, NULL };
        EXPECT(aeronmd, bad, NULL, VERDICT_FAIL, "SPINLANE_SENDER_GATEWAY=\"10.9.9.9\" is not another host of the subnet");
}

int main(int argc, char **argv)
{
        if (argc < 2)
                TEST_SKIP("usage: test-launch-bindings FAKES-DIR");
        dir = argv[1];
        snprintf(aeronmd, sizeof(aeronmd), "%s/fake-aeron/bin/aeronmd", dir);
        snprintf(aeronmd_static, sizeof(aeronmd_static), "%s/fake-static/bin/aeronmd", dir);
        snprintf(lib_ok, sizeof(lib_ok), "%s/fake-bindings/libfake-bindings-ok.so", dir);
        verdict_list probe = { 0 };
        (void)probe;
        test_pass();
        test_driver();
        test_library();
        test_pod_choice();
        test_contract();
        return test_done();
}
