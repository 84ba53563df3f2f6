/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's environment as spinlane-launch reads it: the allocation the device plugin
 * made (SPINLANE_*), the launcher's own settings and the AERON_* variables it checks
 * or fills in. Pure: parses an envp array, no I/O, no globals, never logs. Every bad or
 * contradictory value becomes an entry in errs naming the variable. */
#ifndef SPIN_LAUNCH_ENV_H
#define SPIN_LAUNCH_ENV_H

#include "cpuset.h"

#include <stdbool.h>
#include <stdint.h>

#define LENV_MAX_NICS 16
#define LENV_MAX_DEVICES 8      /* device nodes per NIC */
#define LENV_MAX_ERRS 32
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
        char ipv4[20];    /* SPINLANE_NIC_<i>_IPV4, canonical "a.b.c.d/len" (required: a host of its subnet) */
        char gateway[16]; /* SPINLANE_NIC_<i>_GATEWAY, "a.b.c.d" in that subnet; "" = none (on-link only) */
} lenv_nic;

typedef struct lenv_err {
        const char *check; /* verdict id the error belongs to */
        char var[48];
        char msg[320];
        const char *remedy; /* NULL: fix the variable named; else what to do instead */
} lenv_err;

/* The remedy of an error that means "nothing was granted": request the resources. */
#define LENV_REMEDY_NO_GRANT \
        "Request spinlane.io/isolated-core and spinlane.io/dpdk-nic in the container's resources (requests == limits, e.g. spinlane.io/isolated-core: \"2\" and spinlane.io/dpdk-nic: \"1\"); the spinlane device plugin then sets the SPINLANE_* variables. On a node pool with resourceApi.mode dra or both, claim them instead through a ResourceClaim of the DeviceClasses dpdk-nic.spinlane.io and isolated-core.spinlane.io (docs/dra.md), whose CDI spec sets the same variables. Do not set them by hand."

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

/* The bypass driver's contract as the pod may set it by hand (each "" = unset: the
 * launcher fills it from the allocation), and Aeron's bindings variables. */
#define LENV_BINDINGS_SYMBOL "spinlane_udp_channel_transport_bindings"
#define LENV_BINDINGS_LIBRARY "libspinlane_aeron.so"
typedef struct lenv_bypass {
        char device[2][64];   /* SPINLANE_SENDER_DEVICE, SPINLANE_RECEIVER_DEVICE */
        char ipv4[2][20];     /* SPINLANE_SENDER_IPV4, SPINLANE_RECEIVER_IPV4 */
        char gateway[2][16];  /* SPINLANE_SENDER_GATEWAY, SPINLANE_RECEIVER_GATEWAY */
        bool gateway_set[2];  /* set, possibly empty (= no gateway) */
        char libraries[1024]; /* AERON_DRIVER_DYNAMIC_LIBRARIES */
        char bindings[128];   /* AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA */
        char library[1024];   /* SPINLANE_AERON_LIBRARY: where libspinlane_aeron.so is */
        bool sparse_set, per_send_set; /* the pod's own term-buffer / send settings */
} lenv_bypass;

/* The datapath check's settings (SPINLANE_DATAPATH*). */
#define LENV_DATAPATH_DEFAULT_ROUNDS 32
#define LENV_DATAPATH_MAX_ROUNDS 10000
#define LENV_DATAPATH_DEFAULT_TIMEOUT_MS 2000
#define LENV_DATAPATH_MIN_TIMEOUT_MS 10
#define LENV_DATAPATH_MAX_TIMEOUT_MS 60000
#define LENV_DATAPATH_MAX_P99_US 10000000
typedef struct lenv_datapath {
        bool on;              /* SPINLANE_DATAPATH: true unless "off" (or "0", "false") */
        char peer[24];        /* SPINLANE_DATAPATH_PEER, canonical "a.b.c.d:port"; "" none */
        unsigned max_p99_us;  /* 0 = no threshold */
        unsigned rounds, timeout_ms;
} lenv_datapath;

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
        lenv_bypass bypass;
        lenv_datapath datapath;
        lenv_err errs[LENV_MAX_ERRS];
        unsigned n_errs;
        unsigned n_errs_dropped;
} launch_env;


/* Parse everything. Always fills *ret (defaults where a value is absent or bad) and
 * records each bad value in ret->errs. Returns 0. */
int lenv_parse(const char *const *envp, launch_env *ret);

const char *lenv_kind_name(lenv_nic_kind k);
const char *lenv_driver_name(lenv_nic_driver d);

/* Copy s into buf with anything but printable ASCII replaced by '?', cut to size-1
 * (with "…" marked as "..."): for quoting outside values in messages. */
void lenv_quote(const char *s, char *buf, size_t size);

#endif
