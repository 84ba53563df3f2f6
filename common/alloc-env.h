/* SPDX-License-Identifier: Apache-2.0 */
/* The allocation and launch contract: every environment variable and annotation the
 * device plugin puts into a container's AllocateResponse and spinlane-launch reads back,
 * what a pod spec may set for spinlane-launch, and what spinlane-launch sets for the bypass
 * media driver (libspinlane_aeron.so) — named once here for every side
 * (docs/device-plugin.md and docs/aeron.md list them with their values). Names only: no
 * I/O, no state. */
#ifndef SPIN_ALLOC_ENV_H
#define SPIN_ALLOC_ENV_H

#include <stddef.h>
#include <stdio.h>

/* spinlane.io/dpdk-nic */
#define ALLOC_ENV_DPDK_NICS "SPINLANE_DPDK_NICS"       /* "<bdf>,<bdf>": the granted NICs, PCI order */
#define ALLOC_ENV_HUGEPAGE_DIR "SPINLANE_HUGEPAGE_DIR" /* the hugetlbfs mount (hugetlbfs.pod_mount) */
#define ALLOC_ANNOTATION_NICS "dpdk-nics"              /* "<prefix>/dpdk-nics": the same list */

/* Per NIC: SPINLANE_NIC_<i>_<FIELD>, i = its place in SPINLANE_DPDK_NICS (0, 1, ...). */
#define ALLOC_ENV_NIC_FMT(field) "SPINLANE_NIC_%u_" field /* a format for i; field a literal */
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

/* What a pod spec may set for spinlane-launch (docs/aeron.md). */
#define LAUNCH_ENV_DPDK_MEMORY_MB "SPINLANE_DPDK_MEMORY_MB" /* EAL memory in MiB */
#define LAUNCH_ENV_EAL_EXTRA_ARGS "SPINLANE_EAL_EXTRA_ARGS" /* words appended to the EAL arguments */
#define LAUNCH_ENV_POD_UID "SPINLANE_POD_UID"               /* the pod's UID (else POD_UID, HOSTNAME) */
#define LAUNCH_ENV_AERON_LIBRARY "SPINLANE_AERON_LIBRARY"   /* the bindings library to load */
/* The datapath check (docs/verdicts.md, datapath) */
#define LAUNCH_ENV_DATAPATH "SPINLANE_DATAPATH"                       /* on (default) | off */
#define LAUNCH_ENV_DATAPATH_PEER "SPINLANE_DATAPATH_PEER"             /* a.b.c.d:port of a peer's probe responder */
#define LAUNCH_ENV_DATAPATH_MAX_P99_US "SPINLANE_DATAPATH_MAX_P99_US" /* FAIL above this round-trip p99 */
#define LAUNCH_ENV_DATAPATH_ROUNDS "SPINLANE_DATAPATH_ROUNDS"         /* round trips per path */
#define LAUNCH_ENV_DATAPATH_TIMEOUT_MS "SPINLANE_DATAPATH_TIMEOUT_MS" /* bound of each step */

/* What spinlane-launch sets for the media driver (where the pod left it unset) and the
 * bypass driver reads; a pod may set any of them itself. */
#define BYPASS_ENV_EAL_ARGS "SPINLANE_EAL_ARGS"       /* the DPDK EAL arguments */
#define BYPASS_ENV_PIN_MODE "SPINLANE_PIN_MODE"       /* why the driver runs on its CPUs */
#define BYPASS_ENV_PINNED_CPUS "SPINLANE_PINNED_CPUS" /* the CPUs it runs on */
#define BYPASS_ENV_LINK_WAIT_MS "SPINLANE_LINK_WAIT_MS"
#define BYPASS_ENV_HANDOFF_SLOTS "SPINLANE_HANDOFF_SLOTS"
#define BYPASS_ENV_HOST_LOCAL "SPINLANE_HOST_LOCAL"
#define BYPASS_ENV_PROBE_PORT "SPINLANE_PROBE_PORT" /* the probe responder's UDP port; 0 = off */

/* Per role: SPINLANE_<ROLE>_<FIELD>. */
#define BYPASS_ROLE_SENDER "SENDER"
#define BYPASS_ROLE_RECEIVER "RECEIVER"
#define BYPASS_DEVICE "DEVICE"   /* a DPDK device name (PCI address or vdev); the same = one port */
#define BYPASS_IPV4 "IPV4"       /* "a.b.c.d/len" */
#define BYPASS_GATEWAY "GATEWAY" /* "a.b.c.d"; "" or unset: none */
#define BYPASS_ENV_ROLE(role, field) "SPINLANE_" role "_" field /* literals only */
#define BYPASS_ENV_SENDER_DEVICE BYPASS_ENV_ROLE(BYPASS_ROLE_SENDER, BYPASS_DEVICE)
#define BYPASS_ENV_SENDER_IPV4 BYPASS_ENV_ROLE(BYPASS_ROLE_SENDER, BYPASS_IPV4)
#define BYPASS_ENV_SENDER_GATEWAY BYPASS_ENV_ROLE(BYPASS_ROLE_SENDER, BYPASS_GATEWAY)
#define BYPASS_ENV_RECEIVER_DEVICE BYPASS_ENV_ROLE(BYPASS_ROLE_RECEIVER, BYPASS_DEVICE)
#define BYPASS_ENV_RECEIVER_IPV4 BYPASS_ENV_ROLE(BYPASS_ROLE_RECEIVER, BYPASS_IPV4)
#define BYPASS_ENV_RECEIVER_GATEWAY BYPASS_ENV_ROLE(BYPASS_ROLE_RECEIVER, BYPASS_GATEWAY)

#define ALLOC_ENV_NAME_MAX 48 /* room for any name above, with i < 10^6 */

/* "SPINLANE_NIC_<i>_<field>" into buf; returns buf. */
static inline char *alloc_env_nic(char *buf, size_t size, unsigned i, const char *field)
{
        snprintf(buf, size, ALLOC_ENV_NIC_FMT("%s"), i, field);
        return buf;
}

/* "SPINLANE_<role>_<field>" into buf (role BYPASS_ROLE_*, field BYPASS_DEVICE, ...); returns buf. */
static inline char *bypass_env_role(char *buf, size_t size, const char *role, const char *field)
{
        snprintf(buf, size, BYPASS_ENV_ROLE("%s", "%s"), role, field);
        return buf;
}

#endif
