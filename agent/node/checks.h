/* SPDX-License-Identifier: Apache-2.0 */
/* The node checks: verdicts (stable id, pass/warn/fail/skip, message, remedy, evidence)
 * computed from an inventory and its device map. Pure: no I/O, never logs; the ids and their meaning are
 * documented in docs/verdicts.md ("## Node checks"). */
#ifndef SPIN_AGENT_CHECKS_H
#define SPIN_AGENT_CHECKS_H

#include "config.h"
#include "device-map.h"
#include "inventory.h"
#include "kargs.h"
#include "verdict.h"

/* Check ids, in the order checks_node() emits them. */
#define CHECK_ISOLATED_CPUS "isolated-cpus"
#define CHECK_SMT_SIBLINGS "smt-siblings"
#define CHECK_NOHZ_FULL "nohz-full"
#define CHECK_HUGEPAGES "hugepages"
#define CHECK_HUGETLBFS "hugetlbfs"
#define CHECK_IOMMU "iommu"
#define CHECK_NIC_BINDING "nic-binding"
#define CHECK_PRIMARY_NIC "primary-nic"
#define CHECK_WRITE_COMBINING "write-combining"
#define CHECK_NUMA_ALIGNMENT "numa-alignment"
#define CHECK_NIC_ADDRESS "nic-address"
/* CHECK_KERNEL_ARGS "kernel-args" (kargs.h): last, only with checks_options.config */

typedef struct checks_options {
        /* The device map of this inventory (device-map.h): which NICs the node is meant to
         * hand to DPDK pods (device_map_nic_selected). NULL: the default config's map. */
        const device_map *map;
        /* The driver a selected ENA should be bound to (named in the remedy); NULL means
         * "vfio-pci". */
        const char *bind_driver;
        /* The config's hugetlbfs.pod_mount: the device plugin bind-mounts the node's
         * hugetlbfs (at hugetlbfs_mount_point, NULL = "/dev/hugepages") read-write into
         * every NIC pod. The hugetlbfs check then warns instead of passing: every such pod
         * can read and write every other one's hugepage files. */
        bool hugetlbfs_pod_mount;
        const char *hugetlbfs_mount_point;
        /* The config in force: adds the kernel-args verdict (kargs_check) with the state
         * file's record kargs_state (NULL: none). NULL: no kernel-args verdict. */
        const config *config;
        const kargs_state *kargs_state;
} checks_options;

/* Append every node check's verdict to *l (opt may be NULL for the defaults). Returns 0
 * or -ENOMEM (the list then holds the verdicts added so far). */
int checks_node(const inventory *inv, const checks_options *opt, verdict_list *l);

#endif
