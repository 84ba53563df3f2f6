/* SPDX-License-Identifier: Apache-2.0 */
/* The allocation contract: every environment variable and annotation the device plugin
 * puts into a container's AllocateResponse and spinlane-launch reads back, named once
 * here for both sides (docs/device-plugin.md lists them with their values). Names only:
 * no I/O, no state. */
#ifndef SPIN_ALLOC_ENV_H
#define SPIN_ALLOC_ENV_H

#include <stddef.h>
#include <stdio.h>

/* spinlane.io/dpdk-nic */
#define ALLOC_ENV_DPDK_NICS "SPINLANE_DPDK_NICS"       /* "<bdf>,<bdf>": the granted NICs, PCI order */
#define ALLOC_ENV_HUGEPAGE_DIR "SPINLANE_HUGEPAGE_DIR" /* the hugetlbfs mount (hugetlbfs.pod_mount) */
#define ALLOC_ANNOTATION_NICS "dpdk-nics"              /* "<prefix>/dpdk-nics": the same list */

/* Per NIC: SPINLANE_NIC_<i>_<FIELD>, i = its place in SPINLANE_DPDK_NICS (0, 1, ...). */
#define ALLOC_NIC_PCI "PCI"         /* its PCI address */
#define ALLOC_NIC_MAC "MAC"         /* "0a:1b:2c:3d:4e:5f"; "" unknown */
#define ALLOC_NIC_NUMA "NUMA"       /* NUMA node, -1 unknown */
#define ALLOC_NIC_KIND "KIND"       /* "ena", "mana", "other" */
#define ALLOC_NIC_DRIVER "DRIVER"   /* "vfio-pci", "igb_uio", "mana" */
#define ALLOC_NIC_DEVARGS "DEVARGS" /* the EAL -a argument ("<bdf>[,key=value...]") */
#define ALLOC_NIC_DEVICES "DEVICES" /* its device nodes in the container, comma-separated */
#define ALLOC_NIC_IPV4 "IPV4"       /* its IPv4 address and prefix, "a.b.c.d/len" */
#define ALLOC_NIC_GATEWAY "GATEWAY" /* its gateway "a.b.c.d"; "" none (on-link peers only) */

/* spinlane.io/isolated-core */
#define ALLOC_ENV_ISOLATED_CPUS "SPINLANE_ISOLATED_CPUS"   /* CPU list of the granted cores, all siblings */
#define ALLOC_ENV_ISOLATED_CORES "SPINLANE_ISOLATED_CORES" /* their core ids ("p0c2,p0c3") */
#define ALLOC_ANNOTATION_CORES "isolated-cores"             /* "<prefix>/isolated-cores": the same ids */

#define ALLOC_ENV_NAME_MAX 48 /* room for any name above, with i < 10^6 */

/* "SPINLANE_NIC_<i>_<field>" into buf; returns buf. */
static inline char *alloc_env_nic(char *buf, size_t size, unsigned i, const char *field)
{
        snprintf(buf, size, "SPINLANE_NIC_%u_%s", i, field);
        return buf;
}

#endif
