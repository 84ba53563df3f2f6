/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's environment as spinlane-launch reads it: the allocation the device plugin
 * made (SPINLANE_*), the launcher's own settings and the AERON_* variables it checks
 * or fills in. Pure: parses an envp array, no I/O, no globals, never logs. Every bad or
 * contradictory value becomes an entry in errs naming the variable. */
#ifndef SPIN_LAUNCH_ENV_H
#define SPIN_LAUNCH_ENV_H

#include "cpuset.h"
#include "ipv4.h"

#include <stdbool.h>
#include <stdint.h>

#define LENV_MAX_NICS 16
#define LENV_MAX_DEVICES 8      /* device nodes per NIC */
#define LENV_MAX_ERRS 32
#define LENV_MAX_ENV 8192       /* envp entries looked at */
#define LENV_VALUE_MAX 4096     /* longest value accepted for any variable */
#define LENV_DEFAULT_MEMORY_MB 256
#define LENV_MAX_MEMORY_MB (1024 * 1024)
#define LENV_DEFAULT_HUGE_DIR "/dev/hugepages"

typedef enum lenv_nic_kind { LENV_KIND_OTHER, LENV_KIND_ENA, LENV_KIND_MANA } lenv_nic_kind;
typedef enum lenv_nic_driver { LENV_DRV_VFIO, LENV_DRV_IGB_UIO, LENV_DRV_MANA } lenv_nic_driver;

typedef struct lenv_nic {
        char pci[16];
        char mac[18];   /* "" when not given */
        int numa;       /* -1 unknown */
        lenv_nic_kind kind;
        lenv_nic_driver driver;
        char devargs[128];
        char devices[LENV_MAX_DEVICES][128];
        unsigned n_devices;
        ipv4_cidr ipv4;     /* SPINLANE_NIC_<i>_IPV4: the NIC's address and prefix (required) */
        uint32_t gateway;   /* SPINLANE_NIC_<i>_GATEWAY: host byte order; 0 = none (on-link only) */
} lenv_nic;

typedef struct lenv_err {
        const char *check; /* verdict id the error belongs to */
        char var[48];
        char msg[320];
} lenv_err;

/* An AERON_* value: set by the user or not. Values are kept verbatim (checked later). */
typedef struct lenv_aeron {
        char threading_mode[32];                 /* "" = unset */
        char idle_sender[128], idle_receiver[128], idle_conductor[128];
        int aff_sender, aff_receiver, aff_conductor; /* -1 = unpinned */
        bool aff_sender_set, aff_receiver_set, aff_conductor_set;
        uint64_t mtu;                            /* 0 = unset */
        bool sender_ports_set, receiver_ports_set;
        unsigned sender_lo, sender_hi, receiver_lo, receiver_hi;
} lenv_aeron;

typedef struct launch_env {
        bool have_cpus;         /* SPINLANE_ISOLATED_CPUS set and valid */
        cpuset cpus;
        bool have_cores;
        unsigned n_cores;       /* SPINLANE_ISOLATED_CORES: how many core ids ("p0c2,p0c3" or "2,3") */
        bool have_nics;         /* SPINLANE_DPDK_NICS set and every NIC valid */
        lenv_nic nics[LENV_MAX_NICS];
        unsigned n_nics;
        char huge_dir[256];
        uint64_t memory_mb;
        char pod_id[64];        /* sanitised SPINLANE_POD_UID / POD_UID / HOSTNAME */
        char eal_extra[1024];   /* SPINLANE_EAL_EXTRA_ARGS, appended verbatim */
        lenv_aeron aeron;
        lenv_err errs[LENV_MAX_ERRS];
        unsigned n_errs;
        unsigned n_errs_dropped;
} launch_env;

/* Look a variable up in envp ("NAME=value" strings, NULL-terminated; the first match
 * wins, as getenv does). NULL when absent. */
const char *lenv_get(const char *const *envp, const char *name);

/* Parse everything. Always fills *ret (defaults where a value is absent or bad) and
 * records each bad value in ret->errs. Returns 0. */
int lenv_parse(const char *const *envp, launch_env *ret);

const char *lenv_kind_name(lenv_nic_kind k);
const char *lenv_driver_name(lenv_nic_driver d);

/* Copy s into buf with anything but printable ASCII replaced by '?', cut to size-1
 * (with "…" marked as "..."): for quoting outside values in messages. */
void lenv_quote(const char *s, char *buf, size_t size);

#endif
