/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel arguments spinlane manages (kernel_args.manage): the arguments the config needs
 * (isolcpus, nohz_full, rcu_nocbs, irqaffinity for the whole cores of cores.cpus; a
 * hugepagesz/hugepages pair per configured page size), how they compare with the running
 * kernel's command line, the state file that records what the agent wrote into the boot
 * loader (/var/lib/spinlane/kernel-args.json), and the `kernel-args` node verdict. All pure
 * but the state file's load and save (through hostfs); never logs. */
#ifndef SPIN_KARGS_H
#define SPIN_KARGS_H

#include "config.h"
#include "hostfs.h"
#include "inventory.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHECK_KERNEL_ARGS "kernel-args"
#define KARGS_STATE_PATH "/var/lib/spinlane/kernel-args.json"
#define KARGS_STATE_MAX_TEXT (16 * 1024)
#define KARGS_SENTINEL "/var/run/reboot-required" /* what kured watches by default */
#define KARGS_GRUB_DROPIN "/etc/default/grub.d/99-spinlane.cfg"
#define KARGS_MAX 16        /* arguments spinlane owns at once (4 CPU ones + 1 per page size) */
#define KARGS_VALUE_LEN 128 /* a value as /proc/cmdline is kept (procparse_cmdline_flag) */
#define KARGS_TEXT_LEN 160  /* one argument as written: "hugepagesz=1G hugepages=8" */
#define KARGS_LINE_LEN (KARGS_MAX * (KARGS_TEXT_LEN + 1))

/* The boot loaders the agent knows how to write. */
typedef enum kargs_loader {
        KARGS_LOADER_NONE,        /* none found: the agent writes nothing */
        KARGS_LOADER_GRUB_DROPIN, /* Debian/Ubuntu (AKS): /etc/default/grub.d drop-in + update-grub */
        KARGS_LOADER_GRUBBY,      /* Amazon Linux 2023 (EKS), Fedora/RHEL: grubby --update-kernel=ALL */
        _KARGS_LOADER_MAX,
} kargs_loader;
const char *kargs_loader_name(kargs_loader l); /* "none", "grub-dropin", "grubby" */

/* One argument spinlane owns. A page size's pair is one argument: the kernel reads
 * hugepages= for the hugepagesz= before it. */
typedef struct kargs_arg {
        char name[16];               /* "isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "hugepages" */
        uint64_t page_kb;            /* "hugepages": the hugepagesz= size */
        char value[KARGS_VALUE_LEN]; /* "managed_irq,domain,2-7,10-15", "1024" */
        char text[KARGS_TEXT_LEN];   /* as written: "isolcpus=...", "hugepagesz=2M hugepages=1024" */
} kargs_arg;

typedef struct kargs_list {
        kargs_arg a[KARGS_MAX];
        size_t n;
} kargs_list;

/* What the config needs of the kernel command line. */
typedef struct kargs_plan {
        kargs_list want;
        cpuset isolate;      /* the whole cores of cores.cpus (every SMT sibling listed) */
        cpuset housekeeping; /* online CPUs minus isolate: irqaffinity */
        char left_out[256];  /* cores.cpus CPUs of cores not listed whole ("" none) */
} kargs_plan;

/* Compute the plan from c (cores.cpus, hugepages) and the node's topology. -EINVAL with
 * why (a sentence) when no plan is safe: no online CPU list, no whole core in cores.cpus,
 * no housekeeping CPU left, a value too long; *ret untouched on failure. Pure. */
/* -EINVAL (the cores), -ERANGE (boot hugepages on a NUMA node the node lacks, or more
 * than its memory leaves room for: why names what was asked and what the node has). */
#define KARGS_HUGE_RESERVE_KB (2048ull * 1024) /* at least 2 GiB stay for the system */
int kargs_plan_compute(const config *c, const inventory *inv, kargs_plan *ret, char *why, size_t why_size);

/* The arguments spinlane owns on the running kernel's command line (inv->cmdline):
 * every isolcpus/nohz_full/rcu_nocbs/irqaffinity, and each hugepagesz= followed by
 * hugepages=. Pure. */
void kargs_from_cmdline(const inventory *inv, kargs_list *ret);

/* Same argument (name, and page size for hugepages) / same argument with an equal
 * value (CPU lists as sets; isolcpus flags ignored; page counts as numbers). */
bool kargs_same(const kargs_arg *a, const kargs_arg *b);
bool kargs_equal(const kargs_arg *a, const kargs_arg *b);
/* Index of an argument of l equal to a, or -1. */
int kargs_find_equal(const kargs_list *l, const kargs_arg *a);

/* Parse one argument as written ("isolcpus=2-7", "hugepagesz=2M hugepages=1024"):
 * -EINVAL for anything else. Pure. */
int kargs_arg_parse(const char *text, kargs_arg *ret);

/* What the agent wrote into the boot loader. */
typedef struct kargs_state {
        kargs_loader loader;
        kargs_list written;    /* the arguments in the boot loader now, spinlane's */
        bool sentinel_created; /* the agent created the reboot sentinel (it was absent) */
        bool complete;         /* the boot loader tool ran through after the last change
                                  (false: saved before writing, the write is retried) */
} kargs_state;

/* Pure: parse the state file's text; -EBADMSG with a message in err; *ret untouched. */
int kargs_state_parse(const char *text, size_t len, kargs_state *ret, char *err, size_t err_size);
char *kargs_state_format(const kargs_state *s); /* malloc'ed text, NULL on -ENOMEM */
/* 1 loaded, 0 no file (an empty state), negative on error (-EBADMSG, message in err). */
int kargs_state_load(const hostfs *h, kargs_state *ret, char *err, size_t err_size);
/* Atomic write (temp file, fsync, rename); an empty state (nothing written, no
 * sentinel of ours) removes the file. */
int kargs_state_save(const hostfs *h, const kargs_state *s);

/* The decision for the boot loader: which of the plan's arguments are spinlane's to keep
 * written (the wanted ones, but those the running kernel already has from someone else),
 * and whether a reboot is still needed for the running kernel to match. Pure. */
typedef struct kargs_diff {
        kargs_list keep;      /* to be in the boot loader as spinlane's */
        kargs_list add;       /* keep minus what the state has written */
        kargs_list remove;    /* what the state has written and keep has not */
        kargs_list conflicts; /* on the command line, not spinlane's, another value than wanted */
        bool reboot_pending;  /* an argument of keep is not running, or one removed still is */
} kargs_diff;
void kargs_diff_compute(const kargs_plan *p, const kargs_list *running, const kargs_state *st, kargs_diff *ret);

/* Join the texts of l with spaces into buf ("" when empty). */
void kargs_list_join(const kargs_list *l, char *buf, size_t size);

/* The `kernel-args` node verdict (docs/verdicts.md): SKIP when kernel_args.manage is off
 * (naming what it would add), PASS when the running kernel has every argument the
 * config needs, WARN "reboot pending" when the agent wrote them and the node has not
 * rebooted yet, WARN when they are missing and not written (yet), FAIL when another
 * value of one of them is not spinlane's or no plan is safe. st NULL: no state file.
 * 0 or -ENOMEM. */
int kargs_check(const config *c, const inventory *inv, const kargs_state *st, verdict_list *l);

#endif
