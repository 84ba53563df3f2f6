/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers for the process's view of its cgroups and mounts: /proc/self/cgroup,
 * /proc/self/mountinfo, cpu.max, cpu.cfs_quota_us, cpu.stat, hugetlb limits,
 * /proc/self/limits. Pure: no I/O, no globals, never logs; hard limits on every size;
 * outputs untouched on failure. Fuzzed by tests/driver/launch/fuzz-launch-cgroup.c. */
#ifndef SPIN_LAUNCH_CGROUP_H
#define SPIN_LAUNCH_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LCG_PATH_MAX 512     /* longest cgroup path or mount point we accept */
#define LCG_MAX_ENTRIES 64   /* lines of /proc/self/cgroup */
#define LCG_MAX_MOUNTS 32    /* cgroup and hugetlbfs mounts kept from mountinfo */
#define LCG_NO_QUOTA UINT64_MAX

/* One line of /proc/self/cgroup: "id:controllers:path" (v2: "0::path"). */
typedef struct lcg_entry {
        unsigned id;
        char controllers[128]; /* "cpu,cpuacct", "name=systemd", "" for v2 */
        char path[LCG_PATH_MAX];
} lcg_entry;

typedef struct lcg_self {
        lcg_entry e[LCG_MAX_ENTRIES];
        unsigned n;
} lcg_self;

typedef enum lcg_fstype { LCG_FS_CGROUP1, LCG_FS_CGROUP2, LCG_FS_HUGETLBFS } lcg_fstype;

/* A cgroup or hugetlbfs mount from mountinfo (octal escapes already decoded). */
typedef struct lcg_mount {
        lcg_fstype type;
        char root[LCG_PATH_MAX];  /* the path inside the hierarchy that is mounted */
        char point[LCG_PATH_MAX]; /* where it is mounted */
        char super[256];          /* super options: "rw,cpu,cpuacct" / "rw,pagesize=2M" */
} lcg_mount;

typedef struct lcg_mounts {
        lcg_mount m[LCG_MAX_MOUNTS];
        unsigned n;
} lcg_mounts;

/* /proc/self/cgroup. -EINVAL on a malformed line, -E2BIG beyond LCG_MAX_ENTRIES,
 * -ENAMETOOLONG for a path >= LCG_PATH_MAX. */
int lcg_parse_self(const char *text, size_t len, lcg_self *ret);
/* /proc/self/mountinfo: keeps cgroup, cgroup2 and hugetlbfs mounts (the first
 * LCG_MAX_MOUNTS of them), skips the rest. -EINVAL on a malformed line. */
int lcg_parse_mountinfo(const char *text, size_t len, lcg_mounts *ret);

/* True when the comma-separated list has the token (whole-word: "cpu" is not in
 * "cpuacct"). */
bool lcg_has_token(const char *list, const char *token);

/* Where this process's cgroup for a controller lives, as a path to read under --root:
 * the v1 mount carrying the controller if one exists (ret_v2 = false), else the v2
 * mount (ret_v2 = true). The cgroup path is made relative to the mount's root.
 * -ENOENT: no hierarchy carries it; -EXDEV: the cgroup lies outside the mounted
 * subtree (cannot be seen from here); -ENAMETOOLONG. ret_mount_point gets the mount
 * point (so callers can walk up to it); either may be NULL. */
int lcg_resolve(const lcg_self *self, const lcg_mounts *mounts, const char *controller,
                char *ret_dir, size_t dir_size, char *ret_mount_point, size_t mp_size,
                bool *ret_v2);

/* cgroup v2 cpu.max: "max 100000" (ret_quota = LCG_NO_QUOTA) or "<quota> <period>". */
int lcg_parse_cpu_max(const char *text, uint64_t *ret_quota, uint64_t *ret_period);
/* cgroup v1 cpu.cfs_quota_us: "-1" (LCG_NO_QUOTA) or a positive number of µs. */
int lcg_parse_v1_quota(const char *text, uint64_t *ret_quota);

/* cpu.stat, v1 or v2; absent keys stay 0. throttled_usec is v2's throttled_usec or
 * v1's throttled_time (ns) / 1000. */
typedef struct lcg_cpu_stat {
        uint64_t nr_periods, nr_throttled, throttled_usec;
} lcg_cpu_stat;
int lcg_parse_cpu_stat(const char *text, size_t len, lcg_cpu_stat *ret);

/* A limit file holding "max" (ret = UINT64_MAX) or a decimal number (hugetlb.*.max,
 * hugetlb.*.limit_in_bytes, which v1 caps at a huge number meaning "none"). */
int lcg_parse_limit(const char *text, uint64_t *ret);

/* "pagesize=2M"/"pagesize=1G"/"pagesize=2048k" from hugetlbfs super options, in kB.
 * -ENOENT when the option is absent (the mount uses the default page size). */
int lcg_hugetlbfs_pagesize_kb(const char *super, uint64_t *ret_kb);

/* /proc/self/limits: the soft "Max locked memory" in bytes (UINT64_MAX = unlimited). */
int lcg_parse_memlock(const char *text, size_t len, uint64_t *ret);

/* /proc/self/status: the effective capability set (the "CapEff:" line, 16 hex digits at
 * most) as a bit mask, bit n = capability n (CAP_IPC_LOCK 14, CAP_SYS_RAWIO 17,
 * CAP_SYS_ADMIN 21). -ENOENT without the line, -EINVAL on a bad one; *ret untouched on
 * failure. */
#define LCG_CAP_IPC_LOCK 14
#define LCG_CAP_SYS_RAWIO 17
#define LCG_CAP_SYS_ADMIN 21
int lcg_parse_capeff(const char *text, size_t len, uint64_t *ret);

#endif
