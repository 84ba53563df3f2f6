/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's configuration: one JSON file (default /etc/spinlane/config.json) parsed
 * into one plain value. config_parse() is pure (text in, struct or error message out:
 * no I/O, no globals, never logs); config_load() is the only function here that reads
 * a file. Every key, default and example is in docs/configuration.md. */
#ifndef SPIN_CONFIG_H
#define SPIN_CONFIG_H

#include "cpuset.h"
#include "nic-address.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_PATH_DEFAULT "/etc/spinlane/config.json"
#define CONFIG_PREFIX_DEFAULT "spinlane.io"
#define CONFIG_HUGETLBFS_DEFAULT "/dev/hugepages"
#define CONFIG_CDI_DIR_DEFAULT "/var/run/cdi"

/* Hard limits: a config beyond them is refused with an error naming the key. */
#define CONFIG_MAX_TEXT (64 * 1024)  /* bytes of JSON */
#define CONFIG_MAX_LIST 64           /* entries of each NIC selector list */
#define CONFIG_MAX_NUMA 64           /* NUMA node ids 0..63 */
#define CONFIG_MAX_HUGE_SIZES 4      /* distinct page sizes in "hugepages" */
#define CONFIG_MAX_PAGES (1u << 20)  /* pages asked per node and size */
#define CONFIG_PREFIX_LEN 64         /* resource prefix incl. NUL (a DNS subdomain) */
#define CONFIG_PATH_LEN 256          /* absolute paths incl. NUL */
#define CONFIG_IFNAME_LEN 16         /* IFNAMSIZ */
#define CONFIG_MAX_ADDRESSES 64      /* entries of "addresses.static" */
#define CONFIG_ERR_LEN 256           /* error message buffer callers should give */

/* NIC kinds, same order as inv_nic_kind (agent/node/inventory.h). */
typedef enum config_nic_kind {
        CONFIG_KIND_OTHER,
        CONFIG_KIND_ENA,
        CONFIG_KIND_MANA,
        _CONFIG_KIND_MAX,
} config_nic_kind;

/* The userspace driver an ENA NIC is bound to. MANA is never rebound. */
typedef enum config_driver {
        CONFIG_DRIVER_VFIO_PCI, /* "vfio-pci" (default) */
        CONFIG_DRIVER_IGB_UIO,  /* "igb_uio" */
        _CONFIG_DRIVER_MAX,
} config_driver;
const char *config_driver_name(config_driver d); /* kernel driver name */

/* Where a NIC's IPv4 address may come from (docs/addresses.md). */
typedef enum config_addr_source {
        CONFIG_ADDR_STATIC,   /* "static": an entry of addresses.static */
        CONFIG_ADDR_METADATA, /* "metadata": the cloud's instance metadata (ENA: AWS, MANA: Azure) */
        _CONFIG_ADDR_SOURCE_MAX,
} config_addr_source;
const char *config_addr_source_name(config_addr_source s); /* "static", "metadata" */

typedef struct config_pci_id {
        uint16_t vendor, device;
} config_pci_id;

/* One hugepage size and what to reserve of it per NUMA node. */
typedef struct config_huge {
        uint64_t size_kb;                 /* 2048, 1048576, ... */
        bool want[CONFIG_MAX_NUMA];       /* node listed in per_node */
        uint64_t pages[CONFIG_MAX_NUMA];  /* nr_hugepages to set on that node (absolute) */
} config_huge;

typedef struct config {
        /* "resource_prefix": resources are <prefix>/dpdk-nic and <prefix>/isolated-core. */
        char resource_prefix[CONFIG_PREFIX_LEN];

        /* "nics": which NICs to prepare. A NIC is taken when its kind is in kinds AND it
         * matches every non-empty list (ids, pci, interfaces); at most max_count of them
         * (0 = no limit) in PCI address order. The primary NIC is always excluded. */
        struct {
                bool kinds[_CONFIG_KIND_MAX];  /* default: ena, mana */
                config_pci_id ids[CONFIG_MAX_LIST];
                size_t n_ids;
                char pci[CONFIG_MAX_LIST][16]; /* "0000:00:06.0" */
                size_t n_pci;
                char interfaces[CONFIG_MAX_LIST][CONFIG_IFNAME_LEN];
                size_t n_interfaces;
                unsigned max_count;
        } nics;

        /* "binding" */
        struct {
                config_driver ena;        /* default vfio-pci */
                bool mana_netdev_down;    /* set the MANA VF's kernel netdev down; default false */
        } binding;

        /* "hugepages": one entry per page size; nodes not listed are left alone. */
        config_huge huge[CONFIG_MAX_HUGE_SIZES];
        size_t n_huge;

        /* "hugetlbfs" */
        struct {
                bool mount;                      /* mount when absent; default true */
                bool pod_mount;                  /* the device plugin bind-mounts mount_point
                                                    into NIC pods and sets SPINLANE_HUGEPAGE_DIR
                                                    (one hugetlbfs shared by all of them).
                                                    Default false: pods bring their own
                                                    (emptyDir medium HugePages-2Mi) */
                char mount_point[CONFIG_PATH_LEN]; /* host path; default /dev/hugepages */
                uint64_t page_size_kb;           /* pagesize= of the mount; 0 = the first
                                                    "hugepages" size, else the kernel default */
        } hugetlbfs;

        /* "cores": the isolated-core pool is the isolated set, narrowed to cpus if set. */
        struct {
                bool have_cpus;
                cpuset cpus;
        } cores;

        /* "tuning": kernel-path tuning of the NICs the kernel keeps. */
        struct {
                bool interrupt_moderation_off; /* adaptive-rx off, rx-usecs 0; default false */
                int irq_core;                  /* housekeeping CPU for NIC IRQs; -1 = leave */
                bool reapply_on_reset;         /* re-apply after an ENA reset; default true */
        } tuning;

        /* "addresses": where each NIC's IPv4 address, subnet and gateway come from. The
         * sources are asked in order, the first that knows an address wins (default:
         * static, then metadata); a source left out is never asked. */
        struct {
                config_addr_source sources[_CONFIG_ADDR_SOURCE_MAX];
                size_t n_sources;
                nic_addr_static entries[CONFIG_MAX_ADDRESSES]; /* "static": by PCI address and/or MAC */
                size_t n_entries;
        } addresses;

        /* "kernel_args": the boot arguments the config needs (isolcpus, nohz_full,
         * rcu_nocbs, irqaffinity for the cores in cores.cpus; hugepagesz/hugepages for
         * "hugepages"), written into the host's boot loader by the agent (docs/configuration.md). */
        struct {
                bool manage; /* default false: the agent only reports what is missing */
        } kernel_args;

        /* "cdi": Container Device Interface specs beside the device plugin's answers. */
        struct {
                bool enabled;                    /* default false */
                char spec_dir[CONFIG_PATH_LEN];  /* host path; default /var/run/cdi */
        } cdi;
} config;

/* The defaults (what an empty object "{}" gives). */
void config_init(config *c);

/* Parse len bytes of JSON text. On success fills *ret (defaults for what is absent) and
 * returns 0. On failure returns -EINVAL (bad JSON, unknown key, bad value) or -E2BIG
 * (beyond a hard limit), writes a one-line message into err (if non-NULL) such as
 *   config: "hugepages.per_node.0": expected an integer >= 0, got "lots"
 * and leaves *ret untouched. Pure: no I/O, never logs. */
int config_parse(const char *text, size_t len, config *ret, char *err, size_t err_size);

/* Read path (a path of the agent's own filesystem, not under --root) and parse it.
 * path NULL means no --config was given: CONFIG_PATH_DEFAULT, and when that file is
 * absent the defaults (ret_from_file = false). A path given - even the default one - that
 * does not exist is -ENOENT with a message. Errors as config_parse(), plus -errno of the
 * read (message in err). */
int config_load(const char *path, config *ret, bool *ret_from_file, char *err, size_t err_size);

/* The effective config as JSON (new reference; NULL on -ENOMEM), the same schema the
 * parser reads: config_parse(config_to_json(c)) == c. */
json_t *config_to_json(const config *c);
bool config_equal(const config *a, const config *b);

#endif
