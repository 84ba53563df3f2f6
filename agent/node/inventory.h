/* SPDX-License-Identifier: Apache-2.0 */
/* The node inventory: what this node has for kernel-bypass networking (NICs, physical
 * cores, hugepages, kernel facts), read once from sysfs/procfs under --root into one
 * plain value. The scan is read-only, bounded and never logs; unreadable or garbled
 * inputs become entries of inventory.problems instead of errors or guesses. */
#ifndef SPIN_INVENTORY_H
#define SPIN_INVENTORY_H

#include "cpuset.h"
#include "device.h"
#include "hostfs.h"
#include "procparse.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hard limits; what exceeds them is dropped and recorded as a problem (-E2BIG). */
#define INV_MAX_NICS 256
#define INV_MAX_NUMA 64           /* NUMA nodes with ids 0..INV_MAX_NUMA-1 */
#define INV_MAX_HUGE_SIZES 4      /* hugepage sizes (2 MiB, 1 GiB, 32 MiB, 64 KiB, ...) */
#define INV_MAX_MOUNTS 16         /* hugetlbfs mounts */
#define INV_MAX_DEVNODES 4        /* device nodes one NIC needs in a pod */
#define INV_MAX_PROBLEMS 64
#define INV_MAX_CMDLINE 32        /* kernel cmdline flags kept (see INV_CMDLINE_KEYS) */

#define INV_PCI_LEN 16            /* "0000:00:06.0" + NUL (13) */
#define INV_NAME_LEN 32           /* driver and netdev names */
#define INV_CORE_ID_LEN 64        /* kubelet device IDs are at most 63 chars */
#define INV_DEVPATH_LEN 64        /* "/dev/infiniband/uverbs12", "/dev/vfio/noiommu-7" */
#define INV_PATH_LEN PROCPARSE_PATH_LEN /* problem paths, mount points */

typedef enum inv_nic_kind {
        INV_NIC_OTHER, /* any other class 0x02xxxx device (virtio, mlx5, ...) */
        INV_NIC_ENA,   /* 1d0f:ec20/ec21/0ec2/1ec2 (DPDK net_ena) */
        INV_NIC_MANA,  /* 1414:00ba (DPDK net_mana; stays on the kernel driver) */
} inv_nic_kind;

/* "ena", "mana", "other". */
const char *inv_nic_kind_name(inv_nic_kind kind);
/* Kind from PCI ids. */
inv_nic_kind inv_nic_kind_from_ids(uint16_t vendor, uint16_t device);

/* One device node a pod needs for a NIC. host is the host's own path (never prefixed
 * with --root); container is where it must appear in the container. They differ only
 * for no-IOMMU vfio: host /dev/vfio/noiommu-N, container /dev/vfio/N. */
typedef struct inv_devnode {
        char host[INV_DEVPATH_LEN];
        char container[INV_DEVPATH_LEN];
} inv_devnode;

/* A NIC's IPv4 address. Not part of the scan (inventory_scan leaves it UNRESOLVED):
 * addresses_apply() (agent/node/addresses.h) fills it from the config's static entries, the
 * MAC recorded in the bind state and what the metadata service said. */
typedef enum inv_addr_state {
        INV_ADDR_UNRESOLVED, /* not looked at: not selected, or nobody resolved addresses */
        INV_ADDR_KNOWN,      /* ipv4, prefix_len, gateway and source hold it */
        INV_ADDR_PENDING,    /* the running agent is asking the metadata service */
        INV_ADDR_ELSEWHERE,  /* from the metadata, which only the running agent asks (the CLI) */
        INV_ADDR_FAILED,     /* none: problem and why say why */
} inv_addr_state;
const char *inv_addr_state_name(inv_addr_state s); /* "unresolved", "known", "pending", "agent-only", "failed" */

typedef enum inv_addr_problem {
        INV_ADDR_OK,
        INV_ADDR_NO_MAC,    /* off the kernel with no recorded MAC: only a static entry by PCI address helps */
        INV_ADDR_NO_SOURCE, /* no static entry matches and no metadata source applies */
        INV_ADDR_METADATA,  /* the metadata lookup failed (why holds its error) */
        INV_ADDR_DUPLICATE, /* another NIC claims the same address */
        INV_ADDR_CONFLICT,  /* two static entries match it and disagree */
} inv_addr_problem;

typedef struct inv_nic_addr {
        inv_addr_state state;
        inv_addr_problem problem;
        uint32_t ipv4;          /* host byte order; KNOWN (and a DUPLICATE's claimed address) */
        uint8_t prefix_len;
        uint32_t gateway;       /* 0 = none (on-link peers only) */
        char source[16];        /* "static", "aws-imds", "azure-imds"; "" */
        char why[512];          /* one line: why not KNOWN ("" when it is) */
} inv_nic_addr;

typedef struct inv_nic {
        char pci[INV_PCI_LEN];  /* "0000:00:06.0" (the kubelet device ID of dpdk-nic) */
        uint16_t vendor, device;
        uint32_t pci_class;     /* 0x020000 for Ethernet */
        inv_nic_kind kind;
        char driver[INV_NAME_LEN];  /* bound driver ("vfio-pci", "igb_uio", "ena", "mana"); "" if none */
        int iommu_group;        /* -1 when the device has none */
        bool noiommu;           /* its group is a vfio no-IOMMU group (/dev/vfio/noiommu-N) */
        int numa_node;          /* -1 unknown (sysfs says -1, or the file was bad: see problems) */
        char pcie_root[24];     /* "pci0000:00": the PCI root its sysfs device lives under; "" unknown */
        int mtu;                /* its netdev's MTU; -1 unknown (no netdev: off the kernel) */
        char netdev[INV_NAME_LEN];  /* kernel netdev ("eth1") while the kernel holds the NIC; else "" */
        char mac[18];           /* "0a:1b:..." of that netdev; "" when unknown */
        char mac_source[16];    /* "netdev" (the scan read it), "bind-state" (recorded before
                                   spinlane unbound it: addresses_apply), "" unknown */
        bool primary;           /* carries the lowest-metric default route of the main table (its
                                   netdev does, or it is the VF of the synthetic netdev that does:
                                   same MAC, Azure; ties: the lowest PCI address): never taken */
        bool has_ipv4;          /* its netdev has an IPv4 address */
        /* Whether the node's own networking uses its netdev (agent/node/nlparse.h): 1 yes, 0 no
         * (or it has no netdev), -1 cannot tell (the link usage is unreadable, or rtnetlink
         * does not know the netdev). Node preparation takes only a 0. */
        int in_use;
        char in_use_reason[512]; /* "ens6 has route \"default via ... metric 513\"", why -1 */
        bool has_default;       /* a default route of the main table goes through it */
        uint32_t default_metric; /* its lowest metric */
        bool dpdk_ready;        /* usable by a DPDK pod as it stands now (see dpdk_reason) */
        char dpdk_reason[160];  /* why (not) ready, e.g. "bound to vfio-pci, /dev/vfio/noiommu-7 present" */
        /* Device nodes a pod needs (host paths without --root), filled whenever the driver
         * implies them, even when a node is missing (then dpdk_ready is false):
         * vfio-pci: /dev/vfio/vfio + /dev/vfio/<group> (no-IOMMU: noiommu-<group> -> <group>);
         * igb_uio/uio_pci_generic: /dev/uioN; MANA: /dev/infiniband/uverbsN. */
        inv_devnode devnodes[INV_MAX_DEVNODES];
        size_t n_devnodes;
        /* Write-combining of the prefetchable memory BAR (ENA LLQ needs it on x86):
         * 1 yes, 0 no, -1 unknown (no prefetchable BAR found, or the PAT list unreadable). */
        int write_combining;
        uint64_t wc_bar_start, wc_bar_end;  /* the prefetchable BAR checked; 0,0 if none */
        inv_nic_addr addr;      /* its IPv4 address: see inv_nic_addr */
} inv_nic;

/* One physical core: the set of CPUs that are SMT siblings of each other. */
typedef struct inv_core {
        char id[INV_CORE_ID_LEN]; /* "p<package>c<core_id>" (stable across restarts; a
                                     "-cpu<first>" suffix if two sibling groups collide) */
        int package;            /* physical_package_id, -1 unknown */
        int core_id;            /* topology/core_id, -1 unknown */
        int numa_node;          /* node of its first CPU, -1 unknown */
        cpuset cpus;            /* all its SMT siblings (online or not, as sysfs lists them) */
        bool isolated;          /* in the isolated-core pool: every sibling online and isolated */
        bool split;             /* some siblings isolated, some not (or an isolated one offline) */
} inv_core;

typedef struct inv_hugepages {
        uint64_t size_kb;       /* 2048, 1048576, ... */
        uint64_t total, free;   /* nr_hugepages / free_hugepages */
} inv_hugepages;

typedef struct inv_numa {
        int id;
        cpuset cpus;
        inv_hugepages huge[INV_MAX_HUGE_SIZES]; /* this node's pages, per size */
        size_t n_huge;
} inv_numa;

typedef struct inv_mount {
        char path[INV_PATH_LEN]; /* mount point as the host sees it */
        uint64_t pagesize_kb;    /* from pagesize=; 0 when the option is absent (= default size) */
} inv_mount;

typedef procparse_cmdline_flag inv_cmdline_flag; /* common/procparse.h */

/* Kernel cmdline keys kept in inventory.cmdline (others are ignored). */
#define INV_CMDLINE_KEYS                                                                   \
        "isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "iommu", "intel_iommu",      \
                "amd_iommu", "iommu.passthrough", "hugepages", "hugepagesz",              \
                "default_hugepagesz", "vfio.enable_unsafe_noiommu_mode", "nosmt",         \
                "processor.max_cstate", "intel_idle.max_cstate", "idle", "transparent_hugepage"

typedef enum inv_cgroup {
        INV_CGROUP_UNKNOWN,
        INV_CGROUP_V1,
        INV_CGROUP_HYBRID, /* v1 controllers plus a v2 tree (e.g. /sys/fs/cgroup/unified) */
        INV_CGROUP_V2,
} inv_cgroup;
const char *inv_cgroup_name(inv_cgroup v); /* "unknown", "v1", "hybrid", "v2" */

/* What the facts are about; checks use it to turn problems into skip/warn verdicts. */
typedef enum inv_topic {
        INV_TOPIC_CPU,
        INV_TOPIC_NUMA,
        INV_TOPIC_NIC,
        INV_TOPIC_MEMORY,
        INV_TOPIC_KERNEL,
        _INV_TOPIC_MAX,
} inv_topic;
const char *inv_topic_name(inv_topic t); /* "cpu", "numa", "nic", "memory", "kernel" */

/* An input the scan could not use: the host path (without --root), -errno, what it
 * was for. -EINVAL means garbled content, -EFBIG too large, -ELOOP a symlink loop. */
typedef struct inv_problem {
        inv_topic topic;
        char path[INV_PATH_LEN];
        int err;
        char what[192];
} inv_problem;

typedef struct inventory {
        /* CPUs */
        cpuset online, isolated, nohz_full;
        bool have_online, have_isolated, have_nohz_full; /* false: file missing or bad (see problems) */
        inv_core *cores;        /* sorted by first CPU */
        size_t n_cores;
        int *cpu_core;          /* CPU id -> index into cores, -1 for none; n_cpu_core entries */
        size_t n_cpu_core;      /* highest CPU id seen + 1 */
        cpuset pool;            /* union of the cpus of isolated cores */
        bool smt;               /* any core has more than one CPU */

        /* NUMA */
        inv_numa numa[INV_MAX_NUMA];
        size_t n_numa;          /* sorted by id */

        /* NICs: every PCI device of class 0x02xxxx, sorted by PCI address */
        inv_nic nics[INV_MAX_NICS];
        size_t n_nics;
        /* The link usage (addresses, routes of every table, rules, masters: rtnetlink, or
         * a fake tree's recorded dump) was read whole. When not, no NIC is primary or free
         * (in_use -1) and link_usage_error says why. */
        bool have_link_usage;
        char link_usage_source[64];  /* "rtnetlink" or the recorded dump's path */
        char link_usage_error[256];

        /* Memory */
        inv_hugepages huge[INV_MAX_HUGE_SIZES]; /* sorted by size */
        size_t n_huge;
        uint64_t default_huge_kb; /* Hugepagesize from /proc/meminfo; 0 unknown */
        uint64_t mem_total_kb;    /* MemTotal from /proc/meminfo; 0 unknown */
        inv_mount mounts[INV_MAX_MOUNTS];        /* hugetlbfs mounts, /proc/mounts order */
        size_t n_mounts;

        /* Kernel */
        inv_cmdline_flag cmdline[INV_MAX_CMDLINE]; /* kept keys, in cmdline order (repeats kept) */
        size_t n_cmdline;
        bool have_cmdline;
        int vfio_noiommu;       /* vfio enable_unsafe_noiommu_mode: 1 Y, 0 N, -1 vfio not loaded/unknown */
        bool iommu_present;     /* /sys/class/iommu has an entry (a real IOMMU is active) */
        inv_cgroup cgroup;
        bool arch_x86;          /* /sys/kernel/debug/x86 or x86 CPU flags: write-combining applies */

        /* Inputs that could not be used */
        inv_problem problems[INV_MAX_PROBLEMS];
        size_t n_problems;
        size_t n_problems_dropped; /* beyond INV_MAX_PROBLEMS */
} inventory;

/* Scan the node under h. Returns 0 and a new inventory in *ret (free with
 * inventory_free) even when inputs are missing or bad: those are in ->problems.
 * Fails only with -ENOMEM (or -EINVAL for a NULL argument); *ret untouched then. */
int inventory_scan(const hostfs *h, inventory **ret);
void inventory_free(inventory *inv);

/* The whole inventory as one JSON document (new reference; NULL on -ENOMEM):
 * {"resources": {"<prefix>/dpdk-nic": [{"id","pci","kind","driver","numa_node","netdev",
 *   "mac","ipv4","gateway","address_source","devices":[{"host_path","container_path","permissions"}]}],
 *   "<prefix>/isolated-core": [{"id","cpus":[2,10],"numa_node"}]},
 *  "cpus": {...}, "cores": [...], "numa": [...], "nics": [...], "memory": {...},
 *  "kernel": {...}, "problems": [...]}
 * "resources" holds what the daemon advertises: the devices map lists (agent/node/
 * device-map.h: selected, DPDK-ready, not the primary; the selected cores), required.
 * resource_prefix NULL means DEVICE_PREFIX_DEFAULT. */
struct device_map;
json_t *inventory_to_json(const inventory *inv, const struct device_map *map, const char *resource_prefix);

/* Lookups (NULL / -1 when absent). */
const inv_nic *inventory_find_nic(const inventory *inv, const char *pci);
const inv_core *inventory_find_core(const inventory *inv, const char *id);
const inv_numa *inventory_find_numa(const inventory *inv, int id);
/* First value of a kept cmdline flag; NULL when absent ("" for a bare flag). */
const char *inventory_cmdline(const inventory *inv, const char *name);
/* Free hugepages of size_kb on NUMA node (node < 0: whole node total). 0 if unknown. */
uint64_t inventory_huge_free(const inventory *inv, int node, uint64_t size_kb);
/* MANA: the index N of /dev/infiniband/uverbsN that belongs to the PCI device pci (the
 * one lookup: the device's infiniband_verbs, its children's - mana_ib registers on the
 * auxiliary mana.rdma.N - then /sys/class/infiniband_verbs/uverbs*\/device). 0, or
 * -ENOENT when none does. */
int inv_find_uverbs(const hostfs *h, const char *pci, unsigned *ret);
/* A userspace I/O driver DPDK runs on: vfio-pci, igb_uio, uio_pci_generic. */
bool inv_driver_userspace(const char *driver);

#endif
