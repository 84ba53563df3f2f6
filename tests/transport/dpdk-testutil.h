/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the DPDK transport tests: EAL start with a private file prefix and no
 * hugepages, and a skip when the machine or the sanitizer build cannot run DPDK. */
#ifndef SPIN_DPDK_TESTUTIL_H
#define SPIN_DPDK_TESTUTIL_H

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "transport.h"

static inline uint32_t t_ip4(const char *s)
{
        struct in_addr a;
        if (inet_pton(AF_INET, s, &a) != 1)
                abort();
        return a.s_addr;
}

static inline struct sockaddr_in t_sin(const char *ip, uint16_t port)
{
        struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };
        s.sin_addr.s_addr = ip ? t_ip4(ip) : 0;
        return s;
}

/* EAL with extra space-separated args; skips (77) when the EAL cannot start here. */
static inline void t_eal_start(const char *tag, const char *extra)
{
        char s[1024];
        static struct tr_eal_args a;
        if (geteuid() != 0)
                TEST_SKIP("DPDK vdev tests need root");
        const char *lvl = getenv("SPINLANE_TEST_DPDK_LOG"); /* e.g. "*memif*:debug" */
        snprintf(s, sizeof(s), "--no-huge --no-pci -m 256 --file-prefix sl-tr-%s-%d --log-level=%s %s",
                 tag, (int)getpid(), lvl ? lvl : "error", extra ? extra : "");
        if (tr_eal_args_split(s, strlen(s), "test", &a) != 0)
                abort();
        int r = tr_eal_init(&a);
        if (r < 0)
                TEST_SKIP("rte_eal_init failed (%s): DPDK cannot run on this machine/build", strerror(-r));
}

#endif
