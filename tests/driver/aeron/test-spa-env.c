/* SPDX-License-Identifier: Apache-2.0 */
/* The bypass driver's environment contract: good contracts (one shared port, two ports,
 * gateways, the adapter's knobs), every bad or missing value named in the error, the
 * output untouched on failure, and the strict address parsers. */
#include "spa-env.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "testutil.h"

#define EAL "SPINLANE_EAL_ARGS=--no-huge --no-pci -m 256 --vdev=net_af_packet0,iface=v0"
#define SHARED_OK EAL, "SPINLANE_SENDER_DEVICE=net_af_packet0", "SPINLANE_RECEIVER_DEVICE=net_af_packet0", \
        "SPINLANE_SENDER_IPV4=10.55.0.1/24", "SPINLANE_RECEIVER_IPV4=10.55.0.1/24"

static uint32_t ip(const char *s)
{
        struct in_addr a;
        if (inet_pton(AF_INET, s, &a) != 1)
                abort();
        return a.s_addr;
}

static void test_shared(void)
{
        const char *envp[] = { SHARED_OK, "SPINLANE_SENDER_GATEWAY=10.55.0.254", "SPINLANE_RECEIVER_GATEWAY=10.55.0.254",
                               NULL };
        struct spa_config c;
        char err[512];

        CHECK_INT(spa_env_parse(envp, &c, err, sizeof(err)), 0);
        CHECK_STR(err, "");
        CHECK(c.shared);
        CHECK_STR(c.sender.device, "net_af_packet0");
        CHECK_INT(c.sender.ipv4, ip("10.55.0.1"));
        CHECK_INT(c.sender.prefix_len, 24);
        CHECK_INT(c.sender.gateway, ip("10.55.0.254"));
        CHECK_INT(c.receiver.gateway, ip("10.55.0.254"));
        CHECK_STR(c.eal_args, "--no-huge --no-pci -m 256 --vdev=net_af_packet0,iface=v0");
        CHECK_INT(c.link_wait_ms, SPA_DEFAULT_LINK_WAIT_MS);
        CHECK_INT(c.handoff_slots, SPA_DEFAULT_HANDOFF_SLOTS);
        CHECK(c.host_local);
        CHECK_INT(c.probe_port, SPA_DEFAULT_PROBE_PORT);
}

static void test_two_ports(void)
{
        const char *envp[] = { EAL,
                               "SPINLANE_SENDER_DEVICE=0000:00:06.0",
                               "SPINLANE_RECEIVER_DEVICE=0000:00:07.0",
                               "SPINLANE_SENDER_IPV4=10.0.1.10/24",
                               "SPINLANE_RECEIVER_IPV4=10.0.2.10/28",
                               "SPINLANE_RECEIVER_GATEWAY=10.0.2.1",
                               "SPINLANE_SENDER_GATEWAY=",
                               "SPINLANE_LINK_WAIT_MS=0",
                               "SPINLANE_HANDOFF_SLOTS=64",
                               "SPINLANE_HOST_LOCAL=0",
                               "SPINLANE_PROBE_PORT=0",
                               NULL };
        struct spa_config c;
        char err[512];

        CHECK_INT(spa_env_parse(envp, &c, err, sizeof(err)), 0);
        CHECK(!c.shared);
        CHECK_STR(c.receiver.device, "0000:00:07.0");
        CHECK_INT(c.receiver.prefix_len, 28);
        CHECK_INT(c.sender.gateway, 0); /* empty: none */
        CHECK_INT(c.receiver.gateway, ip("10.0.2.1"));
        CHECK_INT(c.link_wait_ms, 0);
        CHECK_INT(c.handoff_slots, 64);
        CHECK(!c.host_local);
        CHECK_INT(c.probe_port, 0); /* off */
}

static const struct {
        const char *set[4]; /* replace or add these */
        const char *unset;  /* remove this one */
        const char *want;   /* substring of the error */
} bad[] = {
        { { NULL }, "SPINLANE_EAL_ARGS", "SPINLANE_EAL_ARGS is not set" },
        { { "SPINLANE_EAL_ARGS=" }, NULL, "SPINLANE_EAL_ARGS is empty" },
        { { "SPINLANE_EAL_ARGS=-a\x01" }, NULL, "SPINLANE_EAL_ARGS=\"-a?\" holds a control" },
        { { NULL }, "SPINLANE_SENDER_DEVICE", "SPINLANE_SENDER_DEVICE is not set" },
        { { NULL }, "SPINLANE_RECEIVER_DEVICE", "SPINLANE_RECEIVER_DEVICE is not set" },
        { { "SPINLANE_SENDER_DEVICE=net af" }, NULL, "SPINLANE_SENDER_DEVICE=\"net af\" is not a DPDK device name" },
        { { "SPINLANE_RECEIVER_DEVICE=" }, NULL, "SPINLANE_RECEIVER_DEVICE=\"\" is not a DPDK device name" },
        { { NULL }, "SPINLANE_SENDER_IPV4", "SPINLANE_SENDER_IPV4 is not set" },
        { { NULL }, "SPINLANE_RECEIVER_IPV4", "SPINLANE_RECEIVER_IPV4 is not set" },
        { { "SPINLANE_SENDER_IPV4=10.55.0.1" }, NULL, "SPINLANE_SENDER_IPV4=\"10.55.0.1\" is not an IPv4 address with a prefix" },
        { { "SPINLANE_SENDER_IPV4=10.55.0.1/33" }, NULL, "SPINLANE_SENDER_IPV4=\"10.55.0.1/33\"" },
        { { "SPINLANE_SENDER_IPV4=10.55.0.01/24" }, NULL, "is not an IPv4 address" },
        { { "SPINLANE_SENDER_IPV4=10.55.0.256/24" }, NULL, "is not an IPv4 address" },
        { { "SPINLANE_SENDER_IPV4=10.55.0.1/24 " }, NULL, "is not an IPv4 address" },
        { { "SPINLANE_RECEIVER_IPV4=127.0.0.1/8" }, NULL, "SPINLANE_RECEIVER_IPV4=\"127.0.0.1/8\" cannot be a host's address" },
        { { "SPINLANE_RECEIVER_IPV4=239.1.1.1/24" }, NULL, "cannot be a host's address" },
        { { "SPINLANE_RECEIVER_IPV4=10.55.0.0/24" }, NULL, "cannot be a host's address" },
        { { "SPINLANE_RECEIVER_IPV4=10.55.0.255/24" }, NULL, "cannot be a host's address" },
        { { "SPINLANE_RECEIVER_IPV4=10.55.0.2/24" }, NULL,
          "name one port (net_af_packet0) but SPINLANE_SENDER_IPV4/_GATEWAY and SPINLANE_RECEIVER_IPV4/_GATEWAY differ" },
        { { "SPINLANE_SENDER_GATEWAY=10.55.1.1" }, NULL, "SPINLANE_SENDER_GATEWAY=\"10.55.1.1\" is not another host of the subnet" },
        { { "SPINLANE_SENDER_GATEWAY=10.55.0.1" }, NULL, "is not another host of the subnet of SPINLANE_SENDER_IPV4" },
        { { "SPINLANE_SENDER_GATEWAY=gw" }, NULL, "SPINLANE_SENDER_GATEWAY=\"gw\" is not an IPv4 address" },
        { { "SPINLANE_SENDER_GATEWAY=10.55.0.254" }, NULL, "differ" }, /* receiver has none */
        { { "SPINLANE_RECEIVER_DEVICE=net_af_packet1" }, NULL,
          "SPINLANE_SENDER_IPV4 and SPINLANE_RECEIVER_IPV4 are the same address on two ports" },
        { { "SPINLANE_LINK_WAIT_MS=-1" }, NULL, "SPINLANE_LINK_WAIT_MS=\"-1\" is not a number in 0..600000" },
        { { "SPINLANE_LINK_WAIT_MS=600001" }, NULL, "SPINLANE_LINK_WAIT_MS" },
        { { "SPINLANE_HANDOFF_SLOTS=8" }, NULL, "SPINLANE_HANDOFF_SLOTS=\"8\" is not a number in 16..65536" },
        { { "SPINLANE_HANDOFF_SLOTS=100" }, NULL, "SPINLANE_HANDOFF_SLOTS=100 is not a power of two" },
        { { "SPINLANE_PROBE_PORT=65536" }, NULL, "SPINLANE_PROBE_PORT=\"65536\" is not a number in 0..65535" },
        { { "SPINLANE_HOST_LOCAL=yes" }, NULL, "SPINLANE_HOST_LOCAL=\"yes\" is not 1, 0, true or false" },
};

static void test_bad(void)
{
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const char *base[] = { SHARED_OK };
                const char *envp[16];
                size_t n = 0;
                for (size_t k = 0; k < sizeof(base) / sizeof(base[0]); k++) {
                        size_t l = strcspn(base[k], "=");
                        bool skip = bad[i].unset && strncmp(base[k], bad[i].unset, l) == 0 && bad[i].unset[l] == '\0';
                        for (size_t s = 0; s < 4 && bad[i].set[s]; s++)
                                if (strncmp(base[k], bad[i].set[s], l + 1) == 0)
                                        skip = true;
                        if (!skip)
                                envp[n++] = base[k];
                }
                for (size_t s = 0; s < 4 && bad[i].set[s]; s++)
                        envp[n++] = bad[i].set[s];
                envp[n] = NULL;
                struct spa_config c;
                memset(&c, 0x5a, sizeof(c));
                char err[1024];
                int r = spa_env_parse(envp, &c, err, sizeof(err));
                CHECK_INT(r, -EINVAL);
                if (!strstr(err, bad[i].want)) {
                        fprintf(stderr, "case %zu: error \"%s\" lacks \"%s\"\n", i, err, bad[i].want);
                        CHECK(false);
                }
                CHECK(((unsigned char *)&c)[0] == 0x5a && ((unsigned char *)&c)[sizeof(c) - 1] == 0x5a); /* untouched */
        }
}

static void test_all_missing(void)
{
        const char *envp[] = { "PATH=/bin", NULL };
        struct spa_config c;
        char err[1024], tiny[16];

        CHECK_INT(spa_env_parse(envp, &c, err, sizeof(err)), -EINVAL);
        /* every missing variable is named, not only the first */
        CHECK(strstr(err, "SPINLANE_EAL_ARGS is not set") != NULL);
        CHECK(strstr(err, "SPINLANE_SENDER_DEVICE is not set") != NULL);
        CHECK(strstr(err, "SPINLANE_RECEIVER_IPV4 is not set") != NULL);
        CHECK(strstr(err, "; ") != NULL);
        CHECK_INT(spa_env_parse(NULL, &c, tiny, sizeof(tiny)), -EINVAL);
        CHECK_INT((int)strlen(tiny), (int)sizeof(tiny) - 1); /* cut, terminated */
        CHECK_INT(spa_env_parse(envp, &c, NULL, 0), -EINVAL);
}

static void test_parsers(void)
{
        uint32_t a = 7;
        uint8_t l = 7;

        CHECK_INT(spa_parse_ipv4_prefix("192.168.1.20/31", &a, &l), 0);
        CHECK_INT(a, ip("192.168.1.20"));
        CHECK_INT(l, 31);
        CHECK_INT(spa_parse_ipv4("0.0.0.0", &a), 0);
        CHECK_INT(a, 0);
        a = 7;
        l = 7;
        static const char *const no[] = { "", "1.2.3", "1.2.3.4.5", "1.2.3.4/", "1.2.3.4/0", "1.2.3.4/024",
                                          "01.2.3.4/8", "1.2.3.4/8/8", " 1.2.3.4/8", "1.2.3.-4/8", "1111.2.3.4/8",
                                          "1.2.3.4/8x", "a.b.c.d/8" };
        for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
                CHECK_INT(spa_parse_ipv4_prefix(no[i], &a, &l), -EINVAL);
        CHECK_INT(spa_parse_ipv4("1.2.3.4/8", &a), -EINVAL);
        CHECK_INT(spa_parse_ipv4_prefix(NULL, &a, &l), -EINVAL);
        CHECK_INT(a, 7);
        CHECK_INT(l, 7);
        CHECK(spa_ipv4_host_ok(ip("10.0.0.1"), 24));
        CHECK(spa_ipv4_host_ok(ip("10.0.0.0"), 31));
        CHECK(spa_ipv4_host_ok(ip("10.0.0.255"), 32));
        CHECK(!spa_ipv4_host_ok(ip("0.1.2.3"), 8));
        CHECK(!spa_ipv4_host_ok(ip("240.0.0.1"), 8));
        CHECK(!spa_ipv4_host_ok(ip("10.0.0.1"), 0));
}

/* The contract is read wherever it sits in the environment, even behind 20 000 entries. */
static void test_long_env(void)
{
        enum { PAD = 20000 };
        static const char *ok[] = { SHARED_OK, NULL };
        static char pad[PAD][12];
        const char **envp = calloc(PAD + sizeof(ok) / sizeof(ok[0]), sizeof(*envp));
        struct spa_config c;
        char err[512];

        CHECK(envp != NULL);
        if (!envp)
                return;
        for (unsigned i = 0; i < PAD; i++) {
                snprintf(pad[i], sizeof(pad[i]), "PAD%u=x", i);
                envp[i] = pad[i];
        }
        memcpy(envp + PAD, ok, sizeof(ok));
        CHECK_INT(spa_env_parse(envp, &c, err, sizeof(err)), 0);
        CHECK_STR(err, "");
        CHECK_STR(c.sender.device, "net_af_packet0");
        free(envp);
}

int main(void)
{
        test_shared();
        test_long_env();
        test_two_ports();
        test_bad();
        test_all_missing();
        test_parsers();
        return test_done();
}
