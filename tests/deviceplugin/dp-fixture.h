/* SPDX-License-Identifier: Apache-2.0 */
/* A small device list for the device plugin's unit tests and fuzz target: ENA on vfio
 * (IOMMU), ENA on vfio no-IOMMU, MANA, an unhealthy NIC (no address); four cores on two
 * NUMA nodes. */
#ifndef SPIN_TEST_DP_FIXTURE_H
#define SPIN_TEST_DP_FIXTURE_H

#include "dp-devices.h"

#include <stdio.h>
#include <string.h>

static inline void fixture_nic(device_list *l, const char *pci, const char *kind, const char *driver,
                               const char *mac, int numa, bool healthy, const char *host1,
                               const char *cont1)
{
        device_entry d;
        memset(&d, 0, sizeof(d));
        snprintf(d.id, sizeof(d.id), "%s", pci);
        snprintf(d.pci, sizeof(d.pci), "%s", pci);
        snprintf(d.nic_kind, sizeof(d.nic_kind), "%s", kind);
        snprintf(d.driver, sizeof(d.driver), "%s", driver);
        snprintf(d.mac, sizeof(d.mac), "%s", mac);
        d.numa_node = numa;
        d.state = healthy ? DEVICE_HEALTHY : DEVICE_UNHEALTHY;
        /* its address: 10.0.<slot>.10/24, the gateway .1 (the MANA VF: none) */
        unsigned slot = 0;
        if (sscanf(pci, "%*x:%*x:%x.", &slot) == 1 && healthy) {
                snprintf(d.ipv4, sizeof(d.ipv4), "10.0.%u.10/24", slot & 0xff);
                if (strcmp(kind, "mana") != 0)
                        snprintf(d.gateway, sizeof(d.gateway), "10.0.%u.1", slot & 0xff);
        }
        if (strcmp(driver, "vfio-pci") == 0) {
                snprintf(d.devnodes[0].host, DEVICE_DEVPATH_LEN, "/dev/vfio/vfio");
                snprintf(d.devnodes[0].container, DEVICE_DEVPATH_LEN, "/dev/vfio/vfio");
                d.n_devnodes = 1;
        }
        snprintf(d.devnodes[d.n_devnodes].host, DEVICE_DEVPATH_LEN, "%s", host1);
        snprintf(d.devnodes[d.n_devnodes].container, DEVICE_DEVPATH_LEN, "%s", cont1);
        d.n_devnodes++;
        device_list_add(l, &d);
}

static inline void fixture_core(device_list *l, const char *id, int numa, unsigned c1, unsigned c2,
                                bool healthy)
{
        device_entry d;
        memset(&d, 0, sizeof(d));
        snprintf(d.id, sizeof(d.id), "%s", id);
        d.numa_node = numa;
        d.state = healthy ? DEVICE_HEALTHY : DEVICE_UNHEALTHY;
        cpuset_set(&d.cpus, c1);
        cpuset_set(&d.cpus, c2);
        device_list_add(l, &d);
}

static inline void fixture_nics(device_list *l)
{
        fixture_nic(l, "0000:00:06.0", "ena", "vfio-pci", "0a:00:00:00:00:06", 0, true, "/dev/vfio/7", "/dev/vfio/7");
        fixture_nic(l, "0000:00:07.0", "ena", "vfio-pci", "0a:00:00:00:00:07", 0, true, "/dev/vfio/noiommu-3",
                    "/dev/vfio/3");
        fixture_nic(l, "0000:00:08.0", "other", "igb_uio", "", 1, true, "/dev/uio0", "/dev/uio0");
        fixture_nic(l, "0000:00:09.0", "ena", "vfio-pci", "0a:00:00:00:00:09", 1, false, "/dev/vfio/9", "/dev/vfio/9");
        fixture_nic(l, "7870:00:00.0", "mana", "mana", "00:0d:3a:11:22:33", -1, true, "/dev/infiniband/uverbs0",
                    "/dev/infiniband/uverbs0");
}

static inline void fixture_cores(device_list *l)
{
        fixture_core(l, "p0c1", 0, 1, 9, true);
        fixture_core(l, "p0c2", 0, 2, 10, true);
        fixture_core(l, "p0c3", 0, 3, 11, false);
        fixture_core(l, "p1c4", 1, 4, 12, true);
        fixture_core(l, "p1c5", 1, 5, 13, true);
        fixture_core(l, "p1c6", 1, 6, 14, true);
}

#endif
