/* SPDX-License-Identifier: Apache-2.0 */
/* Pod-view fixture trees for the launcher tests: what a container sees under /proc,
 * /sys and /dev, built in a fresh temporary directory (never committed) and removed
 * at the end. Header-only test helper. */
#ifndef SPIN_TEST_LAUNCH_FIXTURE_H
#define SPIN_TEST_LAUNCH_FIXTURE_H

#include "hostfs.h"

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum fx_cgroup { FX_V1, FX_V2, FX_HYBRID } fx_cgroup;

typedef struct fx_pod {
        fx_cgroup cg;
        const char *cgroup_path;   /* this container's cgroup ("/" = cgroup namespace) */
        const char *quota;         /* v2 cpu.max text or v1 "quota period"; NULL = none */
        const char *parent_quota;  /* the same on the parent cgroup; NULL = none */
        const char *cpus_allowed;  /* Cpus_allowed_list */
        const char *online;        /* /sys/devices/system/cpu/online */
        const char *isolated;
        unsigned free_hugepages;
        const char *hugetlb_limit; /* bytes or "max"; NULL = no hugetlb controller file */
        bool no_hugetlbfs;
        const char *memlock;       /* soft limit field of /proc/self/limits */
        const char *capeff;        /* CapEff of /proc/self/status; NULL = a default container's set */
        bool no_capeff;            /* leave the CapEff line out */
        bool noiommu;              /* vfio in no-IOMMU mode, group 7 a vfio-noiommu group */
        bool no_vfio_group;        /* leave /dev/vfio/7 out */
        bool no_proc_cgroup;       /* leave /proc/self/cgroup out */
        bool no_cpu_max;           /* v2: leave cpu.max out of the container's cgroup */
        const char *mana_netdev;   /* "IF MAC": 0000:00:06.0's net/IF/address in sysfs and
                                    * /dev/infiniband/uverbs0 (a MANA VF as the host's netns
                                    * sees it); NULL = net/ absent, as in a pod's own netns */
} fx_pod;

static inline void fx_die(const char *what)
{
        perror(what);
        exit(1);
}

/* mkdir -p of an absolute path; the test stops when it cannot. */
static inline void fx_mkdirs(const char *path)
{
        hostfs real;
        int r = hostfs_init(&real, NULL);
        if (r >= 0)
                r = hostfs_mkdir_p(&real, path);
        if (r < 0) {
                errno = -r;
                fx_die(path);
        }
}

static inline void fx_write(const char *root, const char *rel, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void fx_write(const char *root, const char *rel, const char *fmt, ...)
{
        char path[4096], dir[4096];
        va_list ap;

        snprintf(path, sizeof(path), "%s%s", root, rel);
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        fx_mkdirs(dir);
        FILE *f = fopen(path, "w");
        if (!f)
                fx_die(path);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
}

static inline int fx_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(p);
}

static inline void fx_remove(const char *root)
{
        nftw(root, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *fx_new_root(void)
{
        char tmpl[] = "/tmp/sl-launch-fx-XXXXXX";
        if (!mkdtemp(tmpl))
                fx_die("mkdtemp");
        return strdup(tmpl);
}

/* The cgroup dir (host-relative) of the container for a controller mount point. */
static inline void fx_cgdir(const fx_pod *p, const char *mnt, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s", mnt, strcmp(p->cgroup_path, "/") == 0 ? "" : p->cgroup_path);
}

static inline void fx_parent(const char *dir, char *buf, size_t size)
{
        snprintf(buf, size, "%s", dir);
        *strrchr(buf, '/') = '\0';
}

/* 8 CPUs, SMT pairs (n, n+4), one NUMA node; the pod's cgroups per p. */
static inline void fx_build(const char *root, const fx_pod *p)
{
        char d[1024], par[1024];

        for (int c = 0; c < 8; c++) {
                char rel[128];
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
                fx_write(root, rel, "%d,%d\n", c % 4, c % 4 + 4);
        }
        fx_write(root, "/sys/devices/system/cpu/online", "%s\n", p->online ? p->online : "0-7");
        fx_write(root, "/sys/devices/system/cpu/isolated", "%s\n", p->isolated ? p->isolated : "1-3,5-7");
        fx_write(root, "/sys/devices/system/cpu/nohz_full", "%s\n", p->isolated ? p->isolated : "1-3,5-7");
        /* CapEff default: the container runtimes' default set (no IPC_LOCK, SYS_RAWIO or
         * SYS_ADMIN) */
        char capline[64] = "";
        if (!p->no_capeff)
                snprintf(capline, sizeof(capline), "CapEff:\t%s\n", p->capeff ? p->capeff : "00000000a80425fb");
        fx_write(root, "/proc/self/status", "Name:\tspinlane-launch\n%sCpus_allowed:\tcc\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0\n",
                 capline, p->cpus_allowed ? p->cpus_allowed : "2-3,6-7");
        fx_write(root, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", "%s\n", p->noiommu ? "Y" : "N");
        if (p->noiommu) /* the kernel names only no-IOMMU groups */
                fx_write(root, "/sys/kernel/iommu_groups/7/name", "vfio-noiommu\n");
        fx_write(root, "/dev/uio0", "%s", "");
        fx_write(root, "/proc/self/limits",
                 "Limit                     Soft Limit           Hard Limit           Units     \n"
                 "Max open files            1048576              1048576              files     \n"
                 "Max locked memory         %-20s unlimited            bytes     \n",
                 p->memlock ? p->memlock : "unlimited");
        fx_write(root, "/proc/meminfo", "MemTotal:       16000000 kB\nHugepagesize:       2048 kB\n");
        fx_write(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "%u\n", p->free_hugepages);
        fx_mkdirs((snprintf(d, sizeof(d), "%s/dev/hugepages", root), d));
        fx_write(root, "/dev/vfio/vfio", "%s", "");
        if (!p->no_vfio_group)
                fx_write(root, "/dev/vfio/7", "%s", "");
        fx_write(root, "/dev/infiniband/uverbs0", "%s", "");
        if (p->mana_netdev) {
                char ifn[32], mac[32], rel[128];
                if (sscanf(p->mana_netdev, "%31s %31s", ifn, mac) == 2) {
                        snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/0000:00:06.0/net/%s/address", ifn);
                        fx_write(root, rel, "%s\n", mac);
                }
        }

        char mi[4096];
        const char *huge = p->no_hugetlbfs ? "" : "90 80 0:50 / /dev/hugepages rw,relatime - hugetlbfs nodev rw,pagesize=2M\n";
        if (!p->no_proc_cgroup) {
                if (p->cg == FX_V2)
                        fx_write(root, "/proc/self/cgroup", "0::%s\n", p->cgroup_path);
                else if (p->cg == FX_V1)
                        fx_write(root, "/proc/self/cgroup", "12:hugetlb:%s\n5:cpuset:%s\n3:cpu,cpuacct:%s\n1:name=systemd:%s\n",
                                 p->cgroup_path, p->cgroup_path, p->cgroup_path, p->cgroup_path);
                else
                        fx_write(root, "/proc/self/cgroup", "5:cpuset:%s\n3:cpu:%s\n2:cpuacct:%s\n0::%s\n", p->cgroup_path,
                                 p->cgroup_path, p->cgroup_path, p->cgroup_path);
        }
        if (p->cg == FX_V2) {
                snprintf(mi, sizeof(mi),
                         "70 60 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n%s", huge);
                fx_write(root, "/proc/self/mountinfo", "%s", mi);
                fx_cgdir(p, "/sys/fs/cgroup", d, sizeof(d));
                char rel[1100];
                snprintf(rel, sizeof(rel), "%s/cgroup.controllers", d);
                fx_write(root, rel, "cpuset cpu io memory hugetlb pids\n");
                if (!p->no_cpu_max) {
                        snprintf(rel, sizeof(rel), "%s/cpu.max", d);
                        fx_write(root, rel, "%s\n", p->quota ? p->quota : "max 100000");
                }
                snprintf(rel, sizeof(rel), "%s/cpu.stat", d);
                fx_write(root, rel, "usage_usec 1000\nuser_usec 500\nsystem_usec 500\nnr_periods 100\nnr_throttled 12\nthrottled_usec 3456\n");
                snprintf(rel, sizeof(rel), "%s/cpuset.cpus.effective", d);
                fx_write(root, rel, "%s\n", p->cpus_allowed ? p->cpus_allowed : "2-3,6-7");
                if (p->hugetlb_limit) {
                        snprintf(rel, sizeof(rel), "%s/hugetlb.2MB.max", d);
                        fx_write(root, rel, "%s\n", p->hugetlb_limit);
                        snprintf(rel, sizeof(rel), "%s/hugetlb.2MB.current", d);
                        fx_write(root, rel, "0\n");
                }
                if (strcmp(p->cgroup_path, "/") != 0) {
                        fx_parent(d, par, sizeof(par));
                        snprintf(rel, sizeof(rel), "%s/cpu.max", par);
                        fx_write(root, rel, "%s\n", p->parent_quota ? p->parent_quota : "max 100000");
                }
                return;
        }
        /* v1 and hybrid: cpu (v1: with cpuacct) and cpuset as v1 controllers */
        const char *cpumnt = p->cg == FX_V1 ? "/sys/fs/cgroup/cpu,cpuacct" : "/sys/fs/cgroup/cpu";
        snprintf(mi, sizeof(mi),
                 "70 60 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755\n"
                 "71 70 0:31 / %s rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,%s\n"
                 "72 70 0:32 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuset\n"
                 "%s%s",
                 cpumnt, p->cg == FX_V1 ? "cpu,cpuacct" : "cpu",
                 p->cg == FX_V1 ? "73 70 0:33 / /sys/fs/cgroup/hugetlb rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,hugetlb\n"
                                : "74 70 0:34 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n",
                 huge);
        fx_write(root, "/proc/self/mountinfo", "%s", mi);
        char rel[1100];
        fx_cgdir(p, cpumnt, d, sizeof(d));
        unsigned long long q = 0, per = 100000;
        bool has_q = p->quota && sscanf(p->quota, "%llu %llu", &q, &per) == 2;
        snprintf(rel, sizeof(rel), "%s/cpu.cfs_quota_us", d);
        if (has_q)
                fx_write(root, rel, "%llu\n", q);
        else
                fx_write(root, rel, "-1\n");
        snprintf(rel, sizeof(rel), "%s/cpu.cfs_period_us", d);
        fx_write(root, rel, "%llu\n", per);
        snprintf(rel, sizeof(rel), "%s/cpu.stat", d);
        fx_write(root, rel, "nr_periods 100\nnr_throttled 12\nthrottled_time 3456000\n");
        if (strcmp(p->cgroup_path, "/") != 0) {
                fx_parent(d, par, sizeof(par));
                has_q = p->parent_quota && sscanf(p->parent_quota, "%llu %llu", &q, &per) == 2;
                snprintf(rel, sizeof(rel), "%s/cpu.cfs_quota_us", par);
                if (has_q)
                        fx_write(root, rel, "%llu\n", q);
                else
                        fx_write(root, rel, "-1\n");
                snprintf(rel, sizeof(rel), "%s/cpu.cfs_period_us", par);
                fx_write(root, rel, "%llu\n", per);
        }
        fx_cgdir(p, "/sys/fs/cgroup/cpuset", d, sizeof(d));
        snprintf(rel, sizeof(rel), "%s/cpuset.effective_cpus", d);
        fx_write(root, rel, "%s\n", p->cpus_allowed ? p->cpus_allowed : "2-3,6-7");
        if (p->cg == FX_V1 && p->hugetlb_limit) {
                fx_cgdir(p, "/sys/fs/cgroup/hugetlb", d, sizeof(d));
                snprintf(rel, sizeof(rel), "%s/hugetlb.2MB.limit_in_bytes", d);
                fx_write(root, rel, "%s\n", p->hugetlb_limit);
                snprintf(rel, sizeof(rel), "%s/hugetlb.2MB.usage_in_bytes", d);
                fx_write(root, rel, "0\n");
        }
}

#endif
