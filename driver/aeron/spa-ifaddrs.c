/* SPDX-License-Identifier: Apache-2.0 */
/* The interface lookup Aeron's channel parser calls (on the conductor thread). Each DPDK
 * port is an up, multicast-capable interface with a /32 netmask: an explicit
 * `interface=<NIC address>/len` finds it, and Aeron's default multicast interface (the
 * matching interface with the longest netmask, the first on a tie) is the DPDK port. */
#include "spa-ifaddrs.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/aeron_netutil.h"

#define SPA_IFA_MAGIC 0x5350494cu

struct spa_ifa {
        struct ifaddrs ifa;
        struct sockaddr_in addr, mask;
        char name[IF_NAMESIZE];
};

struct spa_ifa_block {
        struct spa_ifa e[2]; /* first: Aeron frees the list by its head */
        uint32_t magic;
        struct ifaddrs *kernel;
};

/* written once before the conductor runs, read by its lookups */
static struct {
        unsigned n;
        uint32_t ip[2];
} ports_seen;

/* Aeron's own lookup is getifaddrs(3): put that back on uninstall. */
static int libc_getifaddrs(struct ifaddrs **ret)
{
        return getifaddrs(ret);
}

static void libc_freeifaddrs(struct ifaddrs *ifa)
{
        freeifaddrs(ifa);
}

static int spa_getifaddrs(struct ifaddrs **ret)
{
        struct ifaddrs *kernel = NULL;

        if (getifaddrs(&kernel) < 0)
                kernel = NULL; /* the DPDK ports alone are still an answer */
        struct spa_ifa_block *b = calloc(1, sizeof(*b));
        if (!b) {
                if (kernel)
                        freeifaddrs(kernel);
                return -1;
        }
        b->magic = SPA_IFA_MAGIC;
        b->kernel = kernel;
        for (unsigned i = 0; i < ports_seen.n; i++) {
                struct spa_ifa *e = &b->e[i];
                snprintf(e->name, sizeof(e->name), "spinlane%c", i ? '1' : '0'); /* at most two ports */
                e->addr.sin_family = AF_INET;
                e->addr.sin_addr.s_addr = ports_seen.ip[i];
                e->mask.sin_family = AF_INET;
                e->mask.sin_addr.s_addr = 0xffffffffu;
                e->ifa.ifa_name = e->name;
                e->ifa.ifa_flags = IFF_UP | IFF_RUNNING | IFF_MULTICAST | IFF_BROADCAST;
                e->ifa.ifa_addr = (struct sockaddr *)&e->addr;
                e->ifa.ifa_netmask = (struct sockaddr *)&e->mask;
                e->ifa.ifa_next = i + 1 < ports_seen.n ? &b->e[i + 1].ifa : kernel;
        }
        *ret = &b->e[0].ifa;
        return 0;
}

static void spa_freeifaddrs(struct ifaddrs *ifa)
{
        if (!ifa)
                return;
        struct spa_ifa_block *b = (struct spa_ifa_block *)(void *)ifa; /* e[0].ifa is the first member */
        if (b->magic != SPA_IFA_MAGIC) {
                freeifaddrs(ifa); /* not ours (installed after a lookup began) */
                return;
        }
        if (b->kernel)
                freeifaddrs(b->kernel);
        free(b);
}

int spa_ifaddrs_install(const struct spa_port *ports, unsigned n_ports)
{
        ports_seen.n = 0;
        for (unsigned i = 0; i < n_ports && i < 2; i++)
                ports_seen.ip[ports_seen.n++] = ports[i].cfg->ipv4;
        aeron_set_getifaddrs(spa_getifaddrs, spa_freeifaddrs);
        return 0;
}

void spa_ifaddrs_uninstall(void)
{
        if (ports_seen.n)
                aeron_set_getifaddrs(libc_getifaddrs, libc_freeifaddrs);
        ports_seen.n = 0;
}
