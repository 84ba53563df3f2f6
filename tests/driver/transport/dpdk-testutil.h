/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the DPDK transport tests: EAL start with a private file prefix and no
 * hugepages; what the machine lacks (root, a PMD plugin) is a SKIP decided before the EAL
 * starts, and an EAL that does not start after that is a failure. */
#ifndef SPIN_DPDK_TESTUTIL_H
#define SPIN_DPDK_TESTUTIL_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_config.h> /* RTE_EAL_PMD_PATH */

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

/* Whether the PMD plugin librte_<name>.so (e.g. "net_memif", its own Debian package) is
 * installed where the EAL loads plugins from. A DPDK without a plugin dir links its PMDs
 * in: then yes. */
static inline bool t_pmd_installed(const char *name)
{
#ifdef RTE_EAL_PMD_PATH
        char path[512];
        if (!RTE_EAL_PMD_PATH[0])
                return true;
        snprintf(path, sizeof(path), "%s/librte_%s.so", RTE_EAL_PMD_PATH, name);
        return access(path, R_OK) == 0;
#else
        (void)name;
        return true;
#endif
}

/* Before anything acts: root, and the PMD plugin a test needs (NULL: none). */
static inline void t_skip_unless_dpdk(const char *pmd)
{
        if (geteuid() != 0)
                TEST_SKIP("DPDK vdev tests need root");
        if (pmd && !t_pmd_installed(pmd))
                TEST_SKIP("the DPDK %s PMD is not installed (librte_%s.so)", pmd, pmd);
}

/* EAL with extra space-separated args. The caller has called t_skip_unless_dpdk(). */
static inline void t_eal_start(const char *tag, const char *extra)
{
        char s[1024];
        static struct tr_eal_args a;
        const char *lvl = getenv("SPINLANE_TEST_DPDK_LOG"); /* e.g. "*memif*:debug" */
        snprintf(s, sizeof(s), "--no-huge --no-pci -m 256 --file-prefix sl-tr-%s-%d --log-level=%s %s",
                 tag, (int)getpid(), lvl ? lvl : "error", extra ? extra : "");
        if (tr_eal_args_split(s, strlen(s), "test", &a) != 0)
                abort();
        int r = tr_eal_init(&a);
        if (r < 0)
                TEST_FATAL("rte_eal_init failed: %s (args: %s)", strerror(-r), s);
}

#endif
