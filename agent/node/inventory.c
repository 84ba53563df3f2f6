/* SPDX-License-Identifier: Apache-2.0 */
/* The node inventory scan: reads sysfs/procfs under --root (bounded, read-only) and fills
 * an inventory value; bad inputs become problems, never errors or guesses. Never logs.
 * Content parsing lives in procparse.c and cpuset.c; this file only walks and reads. */
#include "inventory.h"

#include "array.h"
#include "cleanup.h"
#include "parse.h"
#include "netlink.h"
#include "procparse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS_CPU "/sys/devices/system/cpu"
#define SYS_NODE "/sys/devices/system/node"
#define SYS_PCI "/sys/bus/pci/devices"
#define SYS_HUGE "/sys/kernel/mm/hugepages"
#define PAT_LIST "/sys/kernel/debug/x86/pat_memtype_list"

/* Limits for files read whole; sysfs attributes are one page at most. */
#define SMALL_FILE 4096
#define PROC_FILE (128 * 1024)

static const char *const cmdline_keys[] = {INV_CMDLINE_KEYS, NULL};

const char *inv_nic_kind_name(inv_nic_kind kind)
{
        switch (kind) {
        case INV_NIC_ENA: return "ena";
        case INV_NIC_MANA: return "mana";
        default: return "other";
        }
}

inv_nic_kind inv_nic_kind_from_ids(uint16_t vendor, uint16_t device)
{
        if (vendor == 0x1d0f &&
            (device == 0xec20 || device == 0xec21 || device == 0x0ec2 || device == 0x1ec2))
                return INV_NIC_ENA;
        if (vendor == 0x1414 && device == 0x00ba)
                return INV_NIC_MANA;
        return INV_NIC_OTHER;
}

const char *inv_cgroup_name(inv_cgroup v)
{
        static const char *const names[] = {"unknown", "v1", "hybrid", "v2"};
        return (unsigned)v < ELEMENTSOF(names) ? names[v] : "unknown";
}

const char *inv_addr_state_name(inv_addr_state s)
{
        static const char *const names[] = {"unresolved", "known", "pending", "agent-only", "failed"};
        return (unsigned)s < ELEMENTSOF(names) ? names[s] : "unresolved";
}

const char *inv_topic_name(inv_topic t)
{
        static const char *const names[] = {"cpu", "numa", "nic", "memory", "kernel"};
        return (unsigned)t < ELEMENTSOF(names) ? names[t] : "?";
}

static void problem(inventory *inv, inv_topic topic, const char *path, int err, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void problem(inventory *inv, inv_topic topic, const char *path, int err, const char *fmt, ...)
{
        va_list ap;

        if (inv->n_problems >= INV_MAX_PROBLEMS) {
                inv->n_problems_dropped++;
                return;
        }
        inv_problem *p = &inv->problems[inv->n_problems++];
        p->topic = topic;
        p->err = err < 0 ? err : -err;
        snprintf(p->path, sizeof(p->path), "%s", path);
        va_start(ap, fmt);
        vsnprintf(p->what, sizeof(p->what), fmt, ap);
        va_end(ap);
}

/* Read a CPU list file. 1 read, 0 absent (ENOENT, no problem when optional), <0 problem. */
static int read_cpulist(inventory *inv, const hostfs *h, const char *path, bool optional,
                        inv_topic topic, const char *what, cpuset *ret)
{
        char buf[SMALL_FILE];
        size_t len;
        int r;

        r = hostfs_read(h, path, buf, sizeof(buf), &len);
        if (r == -ENOENT && optional)
                return 0;
        if (r >= 0)
                r = cpuset_parse(buf, len, ret);
        if (r < 0) {
                problem(inv, topic, path, r, "%s", what);
                return r;
        }
        return 1;
}

/* ---- CPUs and cores ------------------------------------------------------------- */

typedef struct cpu_topo {
        int package, core_id;
} cpu_topo;

/* cpu<cpu>/topology/<file> (an id, -1..2^20); a problem "<what> of CPU <cpu>" when record. */
static int read_topo_id(inventory *inv, const hostfs *h, unsigned cpu, const char *file, bool record,
                        const char *what, int *ret)
{
        char p[PATH_MAX];
        int r;

        if (hostfs_fmt(p, sizeof(p), SYS_CPU "/cpu%u/topology/%s", cpu, file) < 0)
                return -ENAMETOOLONG;
        r = hostfs_read_int(h, p, -1, 1 << 20, ret);
        if (r < 0 && record)
                problem(inv, INV_TOPIC_CPU, p, r, "%s of CPU %u", what, cpu);
        return r;
}

static int read_topo(inventory *inv, const hostfs *h, unsigned cpu, bool record, cpu_topo *ret)
{
        int pkg, core, r;

        r = read_topo_id(inv, h, cpu, "physical_package_id", record, "package", &pkg);
        if (r < 0)
                return r;
        r = read_topo_id(inv, h, cpu, "core_id", record, "core id", &core);
        if (r < 0)
                return r;
        ret->package = pkg;
        ret->core_id = core;
        return 0;
}

static int add_core(inventory *inv, size_t *cap, const cpuset *cpus, const cpu_topo *t)
{
        int r = ARRAY_GROW(inv->cores, *cap, inv->n_cores + 1, 32);
        if (r < 0)
                return r;
        inv_core *c = &inv->cores[inv->n_cores];
        memset(c, 0, sizeof(*c));
        c->cpus = *cpus;
        c->package = t ? t->package : -1;
        c->core_id = t ? t->core_id : -1;
        c->numa_node = -1;
        CPUSET_FOREACH(cpu, cpus)
                if ((size_t)cpu < inv->n_cpu_core && inv->cpu_core[cpu] < 0)
                        inv->cpu_core[cpu] = (int)inv->n_cores;
        inv->n_cores++;
        return 0;
}

static int scan_cpus(inventory *inv, const hostfs *h)
{
        cpuset present;
        size_t cap = 0;
        int r, maxcpu = -1;

        r = read_cpulist(inv, h, SYS_CPU "/online", false, INV_TOPIC_CPU, "online CPUs", &inv->online);
        inv->have_online = r > 0;
        r = read_cpulist(inv, h, SYS_CPU "/isolated", false, INV_TOPIC_CPU, "isolated CPUs", &inv->isolated);
        inv->have_isolated = r > 0;
        r = read_cpulist(inv, h, SYS_CPU "/nohz_full", true, INV_TOPIC_CPU, "nohz_full CPUs", &inv->nohz_full);
        inv->have_nohz_full = r > 0;

        /* the cpuN directories */
        cpuset_zero(&present);
        {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;
                r = hostfs_opendir(h, SYS_CPU, &d);
                if (r < 0) {
                        problem(inv, INV_TOPIC_CPU, SYS_CPU, r, "CPU directory");
                        return 0;
                }
                while ((de = readdir(d))) {
                        unsigned cpu;
                        if (procparse_indexed_name(de->d_name, "cpu", CPUSET_MAX - 1, &cpu) < 0)
                                continue;
                        cpuset_set(&present, cpu);
                        if ((int)cpu > maxcpu)
                                maxcpu = (int)cpu;
                }
        }
        if (maxcpu < 0)
                return 0;
        inv->n_cpu_core = (size_t)maxcpu + 1;
        inv->cpu_core = malloc(inv->n_cpu_core * sizeof(int));
        if (!inv->cpu_core)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_cpu_core; i++)
                inv->cpu_core[i] = -1;

        /* Online CPUs: one core per thread_siblings_list, read at its first CPU only. */
        CPUSET_FOREACH(cpu, &present) {
                char p[PATH_MAX];
                cpuset sib;
                cpu_topo t;
                bool online = !inv->have_online || cpuset_has(&inv->online, (unsigned)cpu);

                if (!online || inv->cpu_core[cpu] >= 0)
                        continue;
                if (hostfs_fmt(p, sizeof(p), SYS_CPU "/cpu%d/topology/thread_siblings_list", cpu) < 0)
                        continue;
                r = read_cpulist(inv, h, p, false, INV_TOPIC_CPU, "SMT siblings", &sib);
                if (r <= 0)
                        continue; /* no guess: this CPU belongs to no core */
                if (!cpuset_has(&sib, (unsigned)cpu)) {
                        problem(inv, INV_TOPIC_CPU, p, -EINVAL, "SMT siblings of CPU %d omit it", cpu);
                        continue;
                }
                /* a sibling another core already claimed: keep the first claim */
                cpuset claimed;
                cpuset_zero(&claimed);
                CPUSET_FOREACH(s, &sib)
                        if ((size_t)s < inv->n_cpu_core && inv->cpu_core[s] >= 0)
                                cpuset_set(&claimed, (unsigned)s);
                if (!cpuset_empty(&claimed)) {
                        problem(inv, INV_TOPIC_CPU, p, -EINVAL, "SMT siblings of CPU %d overlap another core", cpu);
                        cpuset_andnot(&sib, &sib, &claimed);
                }
                bool have_t = read_topo(inv, h, (unsigned)cpu, true, &t) == 0;
                r = add_core(inv, &cap, &sib, have_t ? &t : NULL);
                if (r < 0)
                        return r;
        }
        /* Offline CPUs: join the core with the same package and core id, if sysfs says. */
        CPUSET_FOREACH(cpu, &present) {
                cpu_topo t;
                if (inv->cpu_core[cpu] >= 0)
                        continue;
                if (inv->have_online && cpuset_has(&inv->online, (unsigned)cpu))
                        continue; /* online but unreadable: already a problem */
                if (read_topo(inv, h, (unsigned)cpu, false, &t) < 0)
                        continue;
                size_t i;
                for (i = 0; i < inv->n_cores; i++)
                        if (inv->cores[i].package == t.package && inv->cores[i].core_id == t.core_id &&
                            t.core_id >= 0)
                                break;
                if (i < inv->n_cores) {
                        cpuset_set(&inv->cores[i].cpus, (unsigned)cpu);
                        inv->cpu_core[cpu] = (int)i;
                } else {
                        cpuset one;
                        cpuset_zero(&one);
                        cpuset_set(&one, (unsigned)cpu);
                        r = add_core(inv, &cap, &one, &t);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int cmp_core(const void *a, const void *b)
{
        int x = cpuset_next(&((const inv_core *)a)->cpus, 0), y = cpuset_next(&((const inv_core *)b)->cpus, 0);
        return (x > y) - (x < y);
}

/* Sorting, ids, pool membership and NUMA nodes of the cores (after scan_numa). */
static void finish_cores(inventory *inv)
{
        qsort(inv->cores, inv->n_cores, sizeof(inv_core), cmp_core);
        for (size_t i = 0; i < inv->n_cpu_core; i++)
                inv->cpu_core[i] = -1;
        cpuset_zero(&inv->pool);
        inv->smt = false;
        for (size_t i = 0; i < inv->n_cores; i++) {
                inv_core *c = &inv->cores[i];
                int first = cpuset_next(&c->cpus, 0);
                cpuset iso, on;

                CPUSET_FOREACH(cpu, &c->cpus)
                        if ((size_t)cpu < inv->n_cpu_core)
                                inv->cpu_core[cpu] = (int)i;
                if (cpuset_count(&c->cpus) > 1)
                        inv->smt = true;
                if (c->package >= 0 && c->core_id >= 0)
                        snprintf(c->id, sizeof(c->id), "p%dc%d", c->package, c->core_id);
                else
                        snprintf(c->id, sizeof(c->id), "cpu%d", first);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(inv->cores[j].id, c->id) == 0) {
                                size_t n = strlen(c->id);
                                snprintf(c->id + n, sizeof(c->id) - n, "-cpu%d", first);
                                break;
                        }
                for (size_t n = 0; n < inv->n_numa; n++)
                        if (first >= 0 && cpuset_has(&inv->numa[n].cpus, (unsigned)first)) {
                                c->numa_node = inv->numa[n].id;
                                break;
                        }
                cpuset_and(&iso, &c->cpus, &inv->isolated);
                cpuset_and(&on, &c->cpus, &inv->online);
                c->isolated = inv->have_isolated && inv->have_online && !cpuset_empty(&c->cpus) &&
                              cpuset_equal(&iso, &c->cpus) && cpuset_equal(&on, &c->cpus);
                c->split = inv->have_isolated && !cpuset_empty(&iso) && !c->isolated;
                if (c->isolated)
                        cpuset_or(&inv->pool, &inv->pool, &c->cpus);
        }
}

/* ---- NUMA and memory ------------------------------------------------------------ */

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int cmp_huge(const void *a, const void *b)
{
        return cmp_u64(((const inv_hugepages *)a)->size_kb, ((const inv_hugepages *)b)->size_kb);
}

/* dir/sub/file (a count of pages of kb kB) into *ret, the path left in p; a problem
 * "[what]hugepages of <kb> kB" when it cannot be read. */
static int read_huge_count(inventory *inv, const hostfs *h, inv_topic topic, char *p, size_t size, const char *dir,
                           const char *sub, const char *file, const char *what, uint64_t kb, uint64_t *ret)
{
        int r;

        r = hostfs_fmt(p, size, "%s/%s/%s", dir, sub, file);
        if (r < 0)
                return r;
        r = hostfs_read_u64(h, p, UINT64_MAX, ret);
        if (r < 0)
                problem(inv, topic, p, r, "%shugepages of %" PRIu64 " kB", what, kb);
        return r;
}

/* A directory that may be absent (then it lists nothing): NULL when absent or, with a
 * problem recorded, unreadable. */
static DIR *open_dir_optional(inventory *inv, const hostfs *h, inv_topic topic, const char *dir, const char *what)
{
        DIR *d = NULL;
        int r = hostfs_opendir(h, dir, &d);
        if (r < 0) {
                if (r != -ENOENT)
                        problem(inv, topic, dir, r, "%s", what);
                return NULL;
        }
        return d;
}

/* Read hugepages-* under dir into arr; sorted by size. */
static void scan_hugepages(inventory *inv, const hostfs *h, const char *dir, inv_hugepages *arr,
                           size_t *n, inv_topic topic)
{
        *n = 0;
        _cleanup_closedir_ DIR *d = open_dir_optional(inv, h, topic, dir, "hugepage sizes");
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));) {
                char p[PATH_MAX];
                uint64_t kb, total, freep;
                if (procparse_hugepage_dirname(de->d_name, &kb) < 0)
                        continue;
                if (*n >= INV_MAX_HUGE_SIZES) {
                        problem(inv, topic, dir, -E2BIG, "more than %d hugepage sizes", INV_MAX_HUGE_SIZES);
                        break;
                }
                if (read_huge_count(inv, h, topic, p, sizeof(p), dir, de->d_name, "nr_hugepages", "", kb, &total) < 0 ||
                    read_huge_count(inv, h, topic, p, sizeof(p), dir, de->d_name, "free_hugepages", "free ", kb,
                                    &freep) < 0)
                        continue;
                if (freep > total) {
                        problem(inv, topic, p, -EINVAL, "more free than total hugepages");
                        continue;
                }
                arr[(*n)++] = (inv_hugepages){.size_kb = kb, .total = total, .free = freep};
        }
        qsort(arr, *n, sizeof(*arr), cmp_huge);
}

static int cmp_numa(const void *a, const void *b)
{
        int x = ((const inv_numa *)a)->id, y = ((const inv_numa *)b)->id;
        return (x > y) - (x < y);
}

static void scan_numa(inventory *inv, const hostfs *h)
{
        /* kernels without CONFIG_NUMA have no node directory: one node, unknown */
        _cleanup_closedir_ DIR *d = open_dir_optional(inv, h, INV_TOPIC_NUMA, SYS_NODE, "NUMA nodes");
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));) {
                char p[PATH_MAX];
                unsigned id;
                if (procparse_indexed_name(de->d_name, "node", INV_MAX_NUMA - 1, &id) < 0)
                        continue;
                if (inv->n_numa >= INV_MAX_NUMA)
                        break;
                inv_numa *n = &inv->numa[inv->n_numa];
                memset(n, 0, sizeof(*n));
                n->id = (int)id;
                if (hostfs_fmt(p, sizeof(p), SYS_NODE "/node%u/cpulist", id) < 0)
                        continue;
                if (read_cpulist(inv, h, p, false, INV_TOPIC_NUMA, "CPUs of a NUMA node", &n->cpus) <= 0)
                        cpuset_zero(&n->cpus);
                if (hostfs_fmt(p, sizeof(p), SYS_NODE "/node%u/hugepages", id) < 0)
                        continue;
                scan_hugepages(inv, h, p, n->huge, &n->n_huge, INV_TOPIC_MEMORY);
                inv->n_numa++;
        }
        qsort(inv->numa, inv->n_numa, sizeof(inv_numa), cmp_numa);
}

/* One line of the host's mount table (hostfs_mounts_path), streamed. */
typedef struct mount_state {
        inventory *inv;
        const char *path;
        bool v1, v2_root, v2_other;
} mount_state;

static int mount_line(void *userdata, const char *line, size_t len)
{
        mount_state *st = userdata;
        inventory *inv = st->inv;
        procparse_mount m;
        size_t pos = 0;

        if (procparse_mount_next(line, len, &pos, &m) <= 0)
                return 0; /* a line with too few fields: skip it */
        if (strcmp(m.fstype, "cgroup2") == 0) {
                if (strcmp(m.target, "/sys/fs/cgroup") == 0)
                        st->v2_root = true;
                else
                        st->v2_other = true;
        } else if (strcmp(m.fstype, "cgroup") == 0) {
                st->v1 = true;
        } else if (strcmp(m.fstype, "hugetlbfs") == 0) {
                char ps[32];
                uint64_t kb = 0;
                if (m.truncated) {
                        problem(inv, INV_TOPIC_MEMORY, st->path, -ENAMETOOLONG, "hugetlbfs mount line too long");
                        return 0;
                }
                int r = procparse_mount_option(m.options, "pagesize", ps, sizeof(ps));
                if (r > 0 && procparse_size_kb(ps, &kb) < 0) {
                        problem(inv, INV_TOPIC_MEMORY, st->path, -EINVAL, "bad pagesize= of hugetlbfs at %.60s",
                                m.target);
                        return 0;
                }
                if (inv->n_mounts >= INV_MAX_MOUNTS) {
                        problem(inv, INV_TOPIC_MEMORY, st->path, -E2BIG, "too many hugetlbfs mounts");
                        return 0;
                }
                inv_mount *im = &inv->mounts[inv->n_mounts++];
                snprintf(im->path, sizeof(im->path), "%s", m.target);
                im->pagesize_kb = kb;
        }
        return 0;
}

/* The host's mount table: the host init's under --root (/proc/1/mounts; /proc/mounts is
 * the agent container's own there, never read instead), streamed line by line so no
 * number of mounts is too many. A table not read whole leaves no hugetlbfs mount known
 * and says why. */
static void scan_mounts(inventory *inv, const hostfs *h)
{
        mount_state st = {.inv = inv, .path = hostfs_mounts_path(h)};
        int r = hostfs_read_lines(h, st.path, HOSTFS_MOUNT_LINE_MAX, mount_line, &st);
        if (r < 0) {
                inv->n_mounts = 0;
                problem(inv, INV_TOPIC_MEMORY, st.path, r, "mount table%s",
                        r == -EMSGSIZE ? ": a line longer than 64 KiB" : "");
                return;
        }
        if (st.v2_root && !st.v1)
                inv->cgroup = INV_CGROUP_V2;
        else if (st.v1 && (st.v2_other || st.v2_root))
                inv->cgroup = INV_CGROUP_HYBRID;
        else if (st.v1)
                inv->cgroup = INV_CGROUP_V1;
}

static void scan_memory(inventory *inv, const hostfs *h)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        uint64_t kb;
        int r;

        scan_hugepages(inv, h, SYS_HUGE, inv->huge, &inv->n_huge, INV_TOPIC_MEMORY);
        r = hostfs_read_alloc(h, "/proc/meminfo", PROC_FILE, &buf, &len);
        if (r >= 0) {
                r = procparse_meminfo(buf, len, "Hugepagesize", &kb);
                if (r > 0)
                        inv->default_huge_kb = kb;
                else if (r < 0)
                        problem(inv, INV_TOPIC_MEMORY, "/proc/meminfo", r, "Hugepagesize");
                r = procparse_meminfo(buf, len, "MemTotal", &kb);
                if (r > 0)
                        inv->mem_total_kb = kb;
                else if (r < 0)
                        problem(inv, INV_TOPIC_MEMORY, "/proc/meminfo", r, "MemTotal");
        } else if (r != -ENOENT) {
                problem(inv, INV_TOPIC_MEMORY, "/proc/meminfo", r, "memory info");
        }
        scan_mounts(inv, h);
}

/* ---- kernel --------------------------------------------------------------------- */

static void scan_kernel(inventory *inv, const hostfs *h)
{
        char buf[SMALL_FILE];
        size_t len;
        int r;

        r = hostfs_read(h, "/proc/cmdline", buf, sizeof(buf), &len);
        if (r >= 0)
                r = procparse_cmdline(buf, len, cmdline_keys, inv->cmdline, INV_MAX_CMDLINE, &inv->n_cmdline);
        if (r < 0)
                problem(inv, INV_TOPIC_KERNEL, "/proc/cmdline", r, "kernel command line");
        else
                inv->have_cmdline = true;

        inv->vfio_noiommu = -1;
        r = hostfs_read_str(h, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", buf, sizeof(buf));
        if (r >= 0) {
                if (strcmp(buf, "Y") == 0 || strcmp(buf, "1") == 0)
                        inv->vfio_noiommu = 1;
                else if (strcmp(buf, "N") == 0 || strcmp(buf, "0") == 0)
                        inv->vfio_noiommu = 0;
                else
                        problem(inv, INV_TOPIC_KERNEL, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode",
                                -EINVAL, "vfio no-IOMMU mode");
        } else if (r != -ENOENT) {
                problem(inv, INV_TOPIC_KERNEL, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", r,
                        "vfio no-IOMMU mode");
        }

        {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;
                if (hostfs_opendir(h, "/sys/class/iommu", &d) >= 0)
                        while ((de = readdir(d)))
                                if (de->d_name[0] != '.') {
                                        inv->iommu_present = true;
                                        break;
                                }
        }

        r = hostfs_read(h, SYS_CPU "/modalias", buf, sizeof(buf), &len);
        if (r == -EFBIG)
                r = 0; /* long feature lists: the prefix is all we need, and it was read */
        if (r >= 0)
                inv->arch_x86 = strncmp(buf, "cpu:type:x86", 12) == 0;
        else
                problem(inv, INV_TOPIC_KERNEL, SYS_CPU "/modalias", r, "CPU architecture");
}

/* ---- NICs ----------------------------------------------------------------------- */

/* The first entry of dir named prefix<N> (prefix NULL: any name not starting with '.'):
 * N into *ret_index, the name into buf (each if not NULL); -ENOENT when none. */
static int first_entry(const hostfs *h, const char *dir, const char *prefix, unsigned *ret_index, char *buf,
                       size_t size)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        unsigned idx = 0;
        int r = hostfs_opendir(h, dir, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d)))
                if (prefix ? procparse_indexed_name(de->d_name, prefix, 1u << 20, &idx) == 0 : de->d_name[0] != '.') {
                        if (ret_index)
                                *ret_index = idx;
                        return buf ? hostfs_fmt(buf, size, "%s", de->d_name) : 0;
                }
        return -ENOENT;
}

static void add_devnode(inv_nic *nic, const char *host, const char *container)
{
        if (nic->n_devnodes >= INV_MAX_DEVNODES)
                return;
        inv_devnode *d = &nic->devnodes[nic->n_devnodes++];
        snprintf(d->host, sizeof(d->host), "%s", host);
        snprintf(d->container, sizeof(d->container), "%s", container);
}

/* Every device node of the NIC present? Fills missing with the first absent one. */
static bool devnodes_present(const hostfs *h, const inv_nic *nic, const char **missing)
{
        for (size_t i = 0; i < nic->n_devnodes; i++)
                if (hostfs_is_chardev(h, nic->devnodes[i].host) != 1) {
                        *missing = nic->devnodes[i].host;
                        return false;
                }
        return nic->n_devnodes > 0;
}

/* Entries of a PCI device dir that are never its RDMA children. */
static bool not_a_child(const char *name)
{
        static const char *const skip[] = { "driver", "subsystem", "iommu_group", "firmware_node", "physfn", "net" };
        if (name[0] == '.' || strncmp(name, "virtfn", 6) == 0)
                return true;
        for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
                if (strcmp(name, skip[i]) == 0)
                        return true;
        return false;
}

/* Whether path names the device pci or something below it. */
static bool path_has_device(const char *path, const char *pci)
{
        size_t n = strlen(pci);
        for (const char *p = strstr(path, pci); p; p = strstr(p + 1, pci))
                if (p > path && p[-1] == '/' && (p[n] == '/' || p[n] == '\0'))
                        return true;
        return false;
}

int inv_find_uverbs(const hostfs *h, const char *pci, unsigned *ret)
{
        char dev[PATH_MAX], p[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL, *c = NULL; /* before any goto */
        struct dirent *de;
        unsigned idx;

        if (hostfs_fmt(dev, sizeof(dev), SYS_PCI "/%s", pci) < 0)
                return -EINVAL;
        /* mana_ib registers the RDMA device on an auxiliary child of the PCI device
         * (<pci>/mana.rdma.N/infiniband_verbs/uverbsM): the device itself, then its
         * children */
        if (hostfs_fmt(p, sizeof(p), "%s/infiniband_verbs", dev) == 0 && first_entry(h, p, "uverbs", &idx, NULL, 0) == 0)
                goto found;
        if (hostfs_opendir(h, dev, &d) == 0)
                while ((de = readdir(d)))
                        if (!not_a_child(de->d_name) &&
                            hostfs_fmt(p, sizeof(p), "%s/%s/infiniband_verbs", dev, de->d_name) == 0 &&
                            first_entry(h, p, "uverbs", &idx, NULL, 0) == 0)
                                goto found;
        /* else the class: a uverbsN whose device is it or below it */
        if (hostfs_opendir(h, "/sys/class/infiniband_verbs", &c) < 0)
                return -ENOENT;
        while ((de = readdir(c))) {
                char full[PATH_MAX], real[PATH_MAX];
                if (procparse_indexed_name(de->d_name, "uverbs", 1u << 20, &idx) < 0 ||
                    hostfs_fmt(p, sizeof(p), "/sys/class/infiniband_verbs/%s/device", de->d_name) < 0)
                        continue;
                if (hostfs_path(h, p, full, sizeof(full)) == 0 && realpath(full, real) && path_has_device(real, pci))
                        goto found;
        }
        return -ENOENT;
found:
        *ret = idx;
        return 0;
}

typedef struct pat_cache {
        bool loaded;
        int err;
        char *buf;
        size_t len;
} pat_cache;

static void nic_write_combining(inventory *inv, const hostfs *h, const char *dev, inv_nic *nic, pat_cache *pat)
{
        char p[PATH_MAX], buf[SMALL_FILE], type[48];
        size_t len;
        int r;

        nic->write_combining = -1;
        if (hostfs_fmt(p, sizeof(p), "%s/resource", dev) < 0)
                return;
        r = hostfs_read(h, p, buf, sizeof(buf), &len);
        if (r >= 0)
                r = procparse_pci_prefetch_bar(buf, len, &nic->wc_bar_start, &nic->wc_bar_end);
        if (r < 0) {
                problem(inv, INV_TOPIC_NIC, p, r, "BARs of %s", nic->pci);
                return;
        }
        if (r == 0)
                return;
        if (!pat->loaded) {
                pat->loaded = true;
                pat->err = hostfs_read_alloc(h, PAT_LIST, HOSTFS_MAX_FILE, &pat->buf, &pat->len);
                if (pat->err < 0)
                        problem(inv, INV_TOPIC_NIC, PAT_LIST, pat->err, "x86 PAT memory types");
        }
        if (pat->err < 0)
                return;
        r = procparse_pat_lookup(pat->buf, pat->len, nic->wc_bar_start, nic->wc_bar_end, type, sizeof(type));
        if (r > 0)
                nic->write_combining = strcmp(type, "write-combining") == 0;
        /* r == 0: not mapped by anyone yet (DPDK not running): unknown */
}

static int cmp_nic(const void *a, const void *b)
{
        return strcmp(((const inv_nic *)a)->pci, ((const inv_nic *)b)->pci);
}

/* The PCI device's uevent (dir dev): 1 and its class and ids into nic for a network
 * controller, 0 for another device, <0 with a problem recorded when unreadable. */
static int nic_identity(inventory *inv, const hostfs *h, const char *dev, const char *pci, inv_nic *nic)
{
        char p[PATH_MAX], buf[SMALL_FILE], val[64];
        size_t len;
        uint64_t cls;
        int r;

        if (hostfs_fmt(p, sizeof(p), "%s/uevent", dev) < 0)
                return -ENAMETOOLONG;
        r = hostfs_read(h, p, buf, sizeof(buf), &len);
        if (r < 0) {
                problem(inv, INV_TOPIC_NIC, p, r, "PCI device");
                return r;
        }
        if (procparse_uevent_get(buf, len, "PCI_CLASS", val, sizeof(val)) <= 0 ||
            parse_hex_u64(val, 0xffffff, &cls) < 0) {
                problem(inv, INV_TOPIC_NIC, p, -EINVAL, "PCI_CLASS of %s", pci);
                return -EINVAL;
        }
        if ((cls >> 16) != 0x02)
                return 0; /* not a network controller */
        if (procparse_uevent_get(buf, len, "PCI_ID", val, sizeof(val)) <= 0 ||
            procparse_pci_id(val, &nic->vendor, &nic->device) < 0) {
                problem(inv, INV_TOPIC_NIC, p, -EINVAL, "PCI_ID of %s", pci);
                return -EINVAL;
        }
        nic->pci_class = (uint32_t)cls;
        return 1;
}

/* Its driver, IOMMU group (and whether it is a no-IOMMU one) and NUMA node. */
static void nic_links(inventory *inv, const hostfs *h, const char *dev, const char *pci, inv_nic *nic)
{
        char p[PATH_MAX], val[64], name[64];
        int r;

        /* driver: the link is the truth (uevent DRIVER= says the same when bound) */
        if (hostfs_fmt(p, sizeof(p), "%s/driver", dev) == 0) {
                r = hostfs_readlink_base(h, p, nic->driver, sizeof(nic->driver));
                if (r < 0 && r != -ENOENT) {
                        problem(inv, INV_TOPIC_NIC, p, r, "driver of %s", pci);
                        nic->driver[0] = '\0';
                }
        }
        if (hostfs_fmt(p, sizeof(p), "%s/iommu_group", dev) == 0 &&
            hostfs_readlink_base(h, p, name, sizeof(name)) == 0) {
                int g;
                if (parse_int(name, 0, 1 << 20, &g) == 0) {
                        nic->iommu_group = g;
                        if (hostfs_fmt(p, sizeof(p), "/sys/kernel/iommu_groups/%d/name", g) == 0 &&
                            hostfs_read_str(h, p, val, sizeof(val)) == 0 && strcmp(val, "vfio-noiommu") == 0)
                                nic->noiommu = true;
                } else {
                        problem(inv, INV_TOPIC_NIC, p, -EINVAL, "IOMMU group of %s", pci);
                }
        }
        if (hostfs_fmt(p, sizeof(p), "%s/numa_node", dev) == 0) {
                r = hostfs_read_int(h, p, -1, INV_MAX_NUMA - 1, &nic->numa_node);
                if (r < 0) {
                        nic->numa_node = -1;
                        if (r != -ENOENT)
                                problem(inv, INV_TOPIC_NIC, p, r, "NUMA node of %s", pci);
                }
        }
}

/* The PCI root (host bridge) it lives under: the "pciDDDD:BB" directory of its sysfs
 * device's real path (/sys/devices/pci0000:00/0000:00:06.0); "" when that cannot be told. */
static void nic_pcie_root(const hostfs *h, const char *dev, inv_nic *nic)
{
        char full[PATH_MAX], real[PATH_MAX];
        const char *s, *at = NULL;

        if (hostfs_path(h, dev, full, sizeof(full)) < 0 || !realpath(full, real))
                return;
        for (s = real; (s = strstr(s, "/sys/devices/pci")) != NULL; s++)
                at = s; /* the last one: the root's own path may hold the words */
        if (!at)
                return;
        at += strlen("/sys/devices/");
        size_t n = strcspn(at, "/");
        /* pciDDDD:BB, DDDD 4 or more hex digits (Hyper-V vPCI domains), BB 2 */
        bool ok = n >= 10 && n < sizeof(nic->pcie_root) && at[n - 3] == ':';
        for (size_t i = 3; ok && i < n; i++)
                ok = i == n - 3 || (at[i] >= '0' && at[i] <= '9') || (at[i] >= 'a' && at[i] <= 'f');
        if (ok) {
                memcpy(nic->pcie_root, at, n);
                nic->pcie_root[n] = '\0';
        }
}

/* Its netdev and the netdev's MAC. */
static void nic_netdev(inventory *inv, const hostfs *h, const char *dev, inv_nic *nic)
{
        char p[PATH_MAX], val[64];
        unsigned idx;
        int r;

        /* netdev: <dev>/net/<if>, or <dev>/virtioN/net/<if> */
        if (hostfs_fmt(p, sizeof(p), "%s/net", dev) < 0 ||
            first_entry(h, p, NULL, NULL, nic->netdev, sizeof(nic->netdev)) < 0) {
                nic->netdev[0] = '\0';
                if (first_entry(h, dev, "virtio", &idx, NULL, 0) == 0 &&
                    hostfs_fmt(p, sizeof(p), "%s/virtio%u/net", dev, idx) == 0 &&
                    first_entry(h, p, NULL, NULL, nic->netdev, sizeof(nic->netdev)) < 0)
                        nic->netdev[0] = '\0';
        }
        if (nic->netdev[0] && hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/address", nic->netdev) == 0) {
                uint8_t mac[6];
                r = hostfs_read_str(h, p, val, sizeof(val));
                if (r >= 0 && parse_mac(val, mac) == 0) {
                        snprintf(nic->mac, sizeof(nic->mac), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
                                 mac[2], mac[3], mac[4], mac[5]);
                        snprintf(nic->mac_source, sizeof(nic->mac_source), "netdev");
                } else
                        problem(inv, INV_TOPIC_NIC, p, r < 0 ? r : -EINVAL, "MAC of %s", nic->netdev);
        }
        if (nic->netdev[0] && hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/mtu", nic->netdev) == 0) {
                r = hostfs_read_int(h, p, 68, 65535, &nic->mtu);
                if (r < 0) {
                        nic->mtu = -1;
                        if (r != -ENOENT)
                                problem(inv, INV_TOPIC_NIC, p, r, "MTU of %s", nic->netdev);
                }
        }
}

/* What the node's networking does with its netdev (use: the link usage, NULL unknown). */
static void nic_usage(const inventory *inv, const nlparse_usage *use, inv_nic *nic)
{
        int r;

        if (!nic->netdev[0]) {
                nic->in_use = 0;
        } else if (!use) {
                nic->in_use = -1;
                snprintf(nic->in_use_reason, sizeof(nic->in_use_reason), "cannot tell whether the node uses %s: %s",
                         nic->netdev, inv->link_usage_error);
        } else {
                const nlparse_link *l = nlparse_find(use, nic->netdev);
                r = nlparse_in_use(use, nic->netdev, nic->in_use_reason, sizeof(nic->in_use_reason));
                nic->in_use = r == 1 ? 1 : r == 0 ? 0 : -1;
                if (r < 0)
                        snprintf(nic->in_use_reason, sizeof(nic->in_use_reason),
                                 "%s has no entry in %s (another network namespace, or renamed?)", nic->netdev,
                                 inv->link_usage_source);
                if (l) {
                        nic->has_ipv4 = l->has_ipv4;
                        nic->has_default = l->default4 || l->default6;
                        nic->default_metric = l->default4 ? l->default4_metric : l->default6_metric;
                }
        }
}

/* The device nodes a pod needs for it, by its driver. */
static void nic_devnodes(const hostfs *h, const char *dev, inv_nic *nic)
{
        char p[PATH_MAX];
        unsigned idx;

        if (strcmp(nic->driver, "vfio-pci") == 0) {
                add_devnode(nic, "/dev/vfio/vfio", "/dev/vfio/vfio");
                if (nic->iommu_group >= 0) {
                        char host[INV_DEVPATH_LEN], cont[INV_DEVPATH_LEN];
                        snprintf(cont, sizeof(cont), "/dev/vfio/%d", nic->iommu_group);
                        snprintf(host, sizeof(host), nic->noiommu ? "/dev/vfio/noiommu-%d" : "/dev/vfio/%d",
                                 nic->iommu_group);
                        add_devnode(nic, host, cont);
                }
        } else if (strcmp(nic->driver, "igb_uio") == 0 || strcmp(nic->driver, "uio_pci_generic") == 0) {
                if (hostfs_fmt(p, sizeof(p), "%s/uio", dev) == 0 && first_entry(h, p, "uio", &idx, NULL, 0) == 0) {
                        char node[INV_DEVPATH_LEN];
                        snprintf(node, sizeof(node), "/dev/uio%u", idx);
                        add_devnode(nic, node, node);
                }
        } else if (nic->kind == INV_NIC_MANA && strcmp(nic->driver, "mana") == 0) {
                if (inv_find_uverbs(h, nic->pci, &idx) == 0) {
                        char node[INV_DEVPATH_LEN];
                        snprintf(node, sizeof(node), "/dev/infiniband/uverbs%u", idx);
                        add_devnode(nic, node, node);
                }
        }
}

/* Whether DPDK can use it and why (and, for ENA on x86, whether its BAR is
 * write-combining). */
static void nic_readiness(inventory *inv, const hostfs *h, const char *dev, inv_nic *nic, pat_cache *pat)
{
        const char *missing = NULL;

        if (nic->kind == INV_NIC_OTHER) {
                snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "not an ENA or MANA device (%04x:%04x)",
                         nic->vendor, nic->device);
        } else if (nic->kind == INV_NIC_ENA) {
                if (!nic->driver[0])
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "no driver bound");
                else if (strcmp(nic->driver, "vfio-pci") == 0 && nic->iommu_group < 0)
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "bound to vfio-pci but has no IOMMU group");
                else if (inv_driver_userspace(nic->driver)) {
                        if (devnodes_present(h, nic, &missing)) {
                                nic->dpdk_ready = true;
                                snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "bound to %s, %s present",
                                         nic->driver, nic->devnodes[nic->n_devnodes - 1].host);
                        } else {
                                snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "bound to %s but %s is missing",
                                         nic->driver, missing ? missing : "its uio device");
                        }
                } else {
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "bound to the kernel driver %s%s%s",
                                 nic->driver, nic->netdev[0] ? " as " : "", nic->netdev);
                }
                if (nic->driver[0] && strcmp(nic->driver, "ena") != 0 && inv->arch_x86)
                        nic_write_combining(inv, h, dev, nic, pat);
        } else { /* MANA */
                int ib = hostfs_exists(h, "/sys/module/mana_ib");
                if (strcmp(nic->driver, "mana") != 0)
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "MANA needs the kernel driver mana, bound: %s",
                                 nic->driver[0] ? nic->driver : "none");
                else if (ib != 1)
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "kernel module mana_ib is not loaded");
                else if (nic->n_devnodes == 0)
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "no infiniband_verbs device (ib_uverbs loaded?)");
                else if (!devnodes_present(h, nic, &missing))
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "%s is missing", missing);
                else {
                        nic->dpdk_ready = true;
                        snprintf(nic->dpdk_reason, sizeof(nic->dpdk_reason), "mana with mana_ib, %s present",
                                 nic->devnodes[0].host);
                }
        }
}

static void scan_nic(inventory *inv, const hostfs *h, const char *pci, const nlparse_usage *use, pat_cache *pat)
{
        char dev[PATH_MAX];
        inv_nic nic = {.iommu_group = -1, .numa_node = -1, .mtu = -1, .write_combining = -1};

        if (hostfs_fmt(dev, sizeof(dev), SYS_PCI "/%s", pci) < 0 || nic_identity(inv, h, dev, pci, &nic) <= 0)
                return;
        if (inv->n_nics >= INV_MAX_NICS) {
                problem(inv, INV_TOPIC_NIC, SYS_PCI, -E2BIG, "more than %d NICs", INV_MAX_NICS);
                return;
        }
        memcpy(nic.pci, pci, strlen(pci) + 1); /* parse_is_pci_addr(): 12 chars */
        nic.kind = inv_nic_kind_from_ids(nic.vendor, nic.device);
        nic_links(inv, h, dev, pci, &nic);
        nic_pcie_root(h, dev, &nic);
        nic_netdev(inv, h, dev, &nic);
        nic_usage(inv, use, &nic);
        nic_devnodes(h, dev, &nic);
        nic_readiness(inv, h, dev, &nic, pat);
        inv->nics[inv->n_nics++] = nic;
}

/* The NIC behind interface ifname: its netdev, the PCI device its sysfs device link
 * names, or (Azure: a synthetic hv_netvsc netdev whose VF is the PCI NIC) the same MAC.
 * The lowest index into inv->nics (PCI order), -1 none. */
static int nic_of_interface(const inventory *inv, const hostfs *h, const char *ifname)
{
        char p[PATH_MAX], name[64], smac[18] = "";
        uint8_t mac[6];

        for (size_t n = 0; n < inv->n_nics; n++)
                if (strcmp(inv->nics[n].netdev, ifname) == 0)
                        return (int)n;
        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/device", ifname) == 0 &&
            hostfs_readlink_base(h, p, name, sizeof(name)) == 0)
                for (size_t n = 0; n < inv->n_nics; n++)
                        if (strcmp(inv->nics[n].pci, name) == 0)
                                return (int)n;
        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/address", ifname) == 0 &&
            hostfs_read_str(h, p, name, sizeof(name)) == 0 && parse_mac(name, mac) == 0)
                snprintf(smac, sizeof(smac), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                         mac[4], mac[5]);
        for (size_t n = 0; *smac && n < inv->n_nics; n++)
                if (strcmp(inv->nics[n].mac, smac) == 0)
                        return (int)n;
        return -1;
}

/* The primary NIC: the one behind the lowest-metric default route of the main table
 * (IPv4; IPv6 only when there is no IPv4 default route); when several interfaces share
 * that metric, the lowest PCI address. Other NICs with a default route are in use (their
 * reason says so), not primary. */
static void mark_primary(inventory *inv, const hostfs *h, const nlparse_usage *use)
{
        bool v4 = false, any = false;
        uint32_t best = 0;
        int prim = -1;

        for (size_t i = 0; i < use->n_links; i++)
                v4 |= use->links[i].default4;
        for (size_t i = 0; i < use->n_links; i++) {
                const nlparse_link *l = &use->links[i];
                bool d = v4 ? l->default4 : l->default6;
                uint32_t m = v4 ? l->default4_metric : l->default6_metric;
                if (d && (!any || m < best)) {
                        best = m;
                        any = true;
                }
        }
        for (size_t i = 0; any && i < use->n_links; i++) {
                const nlparse_link *l = &use->links[i];
                if (!(v4 ? l->default4 : l->default6) || (v4 ? l->default4_metric : l->default6_metric) != best ||
                    !*l->name)
                        continue;
                int n = nic_of_interface(inv, h, l->name);
                if (n >= 0 && (prim < 0 || n < prim))
                        prim = n;
        }
        if (prim >= 0) {
                inv->nics[prim].primary = true;
                inv->nics[prim].has_default = true;
                inv->nics[prim].default_metric = best;
        }
}

static void scan_nics(inventory *inv, const hostfs *h)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        nlparse_usage *use = NULL;
        pat_cache pat = {0};
        int r;

        snprintf(inv->link_usage_source, sizeof(inv->link_usage_source), "%s", netlink_usage_source(h));
        r = netlink_usage_load(h, &use, inv->link_usage_error, sizeof(inv->link_usage_error));
        if (r < 0) {
                if (!*inv->link_usage_error)
                        snprintf(inv->link_usage_error, sizeof(inv->link_usage_error), "%s", strerror(-r));
                problem(inv, INV_TOPIC_NIC, inv->link_usage_source, r, "addresses, routes and rules: %s",
                        inv->link_usage_error);
        } else
                inv->have_link_usage = true;
        r = hostfs_opendir(h, SYS_PCI, &d);
        if (r < 0) {
                problem(inv, INV_TOPIC_NIC, SYS_PCI, r, "PCI devices");
        } else {
                while ((de = readdir(d)))
                        if (parse_is_pci_addr(de->d_name))
                                scan_nic(inv, h, de->d_name, use, &pat);
        }
        qsort(inv->nics, inv->n_nics, sizeof(inv_nic), cmp_nic);
        if (use)
                mark_primary(inv, h, use);
        nlparse_usage_free(use);
        free(pat.buf);
}

/* ---- entry points --------------------------------------------------------------- */

int inventory_scan(const hostfs *h, inventory **ret)
{
        int r;

        if (!h || !ret)
                return -EINVAL;
        inventory *inv = calloc(1, sizeof(*inv));
        if (!inv)
                return -ENOMEM;
        r = scan_cpus(inv, h);
        if (r < 0) {
                inventory_free(inv);
                return r;
        }
        scan_numa(inv, h);
        finish_cores(inv);
        scan_kernel(inv, h);
        scan_memory(inv, h);
        scan_nics(inv, h);
        *ret = inv;
        return 0;
}

void inventory_free(inventory *inv)
{
        if (!inv)
                return;
        free(inv->cores);
        free(inv->cpu_core);
        free(inv);
}

const inv_nic *inventory_find_nic(const inventory *inv, const char *pci)
{
        for (size_t i = 0; i < inv->n_nics; i++)
                if (strcmp(inv->nics[i].pci, pci) == 0)
                        return &inv->nics[i];
        return NULL;
}

const inv_core *inventory_find_core(const inventory *inv, const char *id)
{
        for (size_t i = 0; i < inv->n_cores; i++)
                if (strcmp(inv->cores[i].id, id) == 0)
                        return &inv->cores[i];
        return NULL;
}

const inv_numa *inventory_find_numa(const inventory *inv, int id)
{
        for (size_t i = 0; i < inv->n_numa; i++)
                if (inv->numa[i].id == id)
                        return &inv->numa[i];
        return NULL;
}

const char *inventory_cmdline(const inventory *inv, const char *name)
{
        for (size_t i = 0; i < inv->n_cmdline; i++)
                if (strcmp(inv->cmdline[i].name, name) == 0)
                        return inv->cmdline[i].value;
        return NULL;
}

uint64_t inventory_huge_free(const inventory *inv, int node, uint64_t size_kb)
{
        const inv_hugepages *arr = inv->huge;
        size_t n = inv->n_huge;

        if (node >= 0) {
                const inv_numa *nn = inventory_find_numa(inv, node);
                if (!nn)
                        return 0;
                arr = nn->huge;
                n = nn->n_huge;
        }
        for (size_t i = 0; i < n; i++)
                if (arr[i].size_kb == size_kb)
                        return arr[i].free;
        return 0;
}


bool inv_driver_userspace(const char *d)
{
        return strcmp(d, "vfio-pci") == 0 || strcmp(d, "igb_uio") == 0 || strcmp(d, "uio_pci_generic") == 0;
}
