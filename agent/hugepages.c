/* SPDX-License-Identifier: Apache-2.0 */
/* Hugepages per NUMA node (write nr_hugepages, read back) and the hugetlbfs mount, with
 * their verdicts. Never logs. */
#include "hugepages.h"

#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

static void size_str(uint64_t kb, char *buf, size_t size)
{
        if (kb % (1024 * 1024) == 0)
                snprintf(buf, size, "%" PRIu64 " GiB", kb / (1024 * 1024));
        else if (kb % 1024 == 0)
                snprintf(buf, size, "%" PRIu64 " MiB", kb / 1024);
        else
                snprintf(buf, size, "%" PRIu64 " kB", kb);
}

int huge_reserve(const hostfs *h, const bind_ops *ops, const config *c, verdict_list *v)
{
        char fails[1024] = "", oks[1024] = "";
        bool any = false;

        if (c->n_huge == 0)
                return 0;
        if (!ops)
                ops = &bind_ops_default;
        json_t *ev = json_array();
        if (!ev)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_huge; i++) {
                const config_huge *hc = &c->huge[i];
                char sz[32];
                size_str(hc->size_kb, sz, sizeof(sz));
                for (int node = 0; node < CONFIG_MAX_NUMA; node++) {
                        char dir[256], path[320];
                        uint64_t before = 0, got = 0;
                        const char *problem = NULL;
                        char problem_buf[160];
                        int r;

                        if (!hc->want[node])
                                continue;
                        any = true;
                        snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%d", node);
                        snprintf(path, sizeof(path), "%s/hugepages/hugepages-%" PRIu64 "kB/nr_hugepages", dir,
                                 hc->size_kb);
                        if (hostfs_exists(h, dir) != 1) {
                                problem = "no such NUMA node";
                        } else if ((r = hostfs_read_u64(h, path, UINT64_MAX / 2, &before)) < 0) {
                                snprintf(problem_buf, sizeof(problem_buf), r == -ENOENT ? "page size not supported by the kernel"
                                                                                       : "cannot read nr_hugepages: %s",
                                         strerror(-r));
                                problem = problem_buf;
                        } else if (before != hc->pages[node]) {
                                char num[32];
                                snprintf(num, sizeof(num), "%" PRIu64, hc->pages[node]);
                                r = ops->write(ops->userdata, h, path, num);
                                if (r < 0) {
                                        snprintf(problem_buf, sizeof(problem_buf), "writing nr_hugepages failed: %s",
                                                 strerror(-r));
                                        problem = problem_buf;
                                }
                        }
                        if (!problem) {
                                r = hostfs_read_u64(h, path, UINT64_MAX / 2, &got);
                                if (r < 0) {
                                        snprintf(problem_buf, sizeof(problem_buf), "cannot read nr_hugepages back: %s",
                                                 strerror(-r));
                                        problem = problem_buf;
                                }
                        }
                        json_t *o = json_pack("{s:i,s:I,s:I,s:I,s:I}", "node", node, "page_size_kb",
                                              (json_int_t)hc->size_kb, "asked", (json_int_t)hc->pages[node],
                                              "before", (json_int_t)before, "got", (json_int_t)got);
                        if (problem) {
                                (void)hostfs_fmt_append(fails, sizeof(fails),
                                                        "%snode %d, %s pages: %s", *fails ? "; " : "", node, sz,
                                       problem);
                                if (o)
                                        json_object_set_new(o, "error", json_string(problem));
                        } else if (got < hc->pages[node]) {
                                (void)hostfs_fmt_append(fails, sizeof(fails),
                                                        "%snode %d: asked for %" PRIu64 " pages of %s, the kernel gave %" PRIu64
                                                        " (short by %" PRIu64 ")",
                                                        *fails ? "; " : "", node, hc->pages[node], sz, got, hc->pages[node] - got);
                        } else {
                                (void)hostfs_fmt_append(oks, sizeof(oks),
                                                        "%snode %d: %" PRIu64 " x %s", *oks ? ", " : "", node, got, sz);
                        }
                        if (o)
                                json_array_append_new(ev, o);
                }
        }
        if (!any) {
                json_decref(ev);
                return 0;
        }
        json_t *evidence = json_pack("{s:o}", "nodes", ev);
        if (*fails)
                return verdict_add(v, PREP_CHECK_HUGEPAGES, VERDICT_FAIL, evidence,
                                   "free memory on that node (or reserve at boot with the kernel parameters "
                                   "hugepagesz= hugepages=), or lower hugepages.per_node in the config",
                                   "%s", fails);
        return verdict_add(v, PREP_CHECK_HUGEPAGES, VERDICT_PASS, evidence, NULL, "reserved %s", oks);
}

/* Decode the octal escapes of /proc/mounts (\040 space, \011 tab, \012, \134). */
static void unescape(char *s)
{
        char *w = s;
        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = '\0';
}

/* "2M", "1024M", "1G", "64K", "2048k" (kernel memparse) to kB. */
static int parse_pagesize_opt(const char *s, uint64_t *ret)
{
        char num[32];
        size_t i;
        uint64_t n, mult = 0;

        for (i = 0; s[i] >= '0' && s[i] <= '9' && i < sizeof(num) - 1; i++)
                num[i] = s[i];
        num[i] = '\0';
        if (i == 0 || parse_u64(num, 1ULL << 40, &n) < 0)
                return -EINVAL;
        if (strcmp(s + i, "K") == 0 || strcmp(s + i, "k") == 0)
                mult = 1;
        else if (strcmp(s + i, "M") == 0 || strcmp(s + i, "m") == 0)
                mult = 1024;
        else if (strcmp(s + i, "G") == 0 || strcmp(s + i, "g") == 0)
                mult = 1024 * 1024;
        else if (s[i] == '\0') {
                if (n % 1024)
                        return -EINVAL;
                *ret = n / 1024;
                return 0;
        } else
                return -EINVAL;
        *ret = n * mult;
        return 0;
}

int huge_find_mount(const char *mounts, const char *mount_point, uint64_t *ret_pagesize_kb)
{
        const char *line = mounts;
        int found = 0, r;
        uint64_t ps = 0;

        while (line && *line) {
                const char *nl = strchr(line, '\n');
                size_t n = nl ? (size_t)(nl - line) : strlen(line);
                char buf[1024], src[256], mp[512], type[64], opts[512];
                if (n < sizeof(buf)) {
                        memcpy(buf, line, n);
                        buf[n] = '\0';
                        if (sscanf(buf, "%255s %511s %63s %511s", src, mp, type, opts) == 4) {
                                unescape(mp);
                                if (strcmp(mp, mount_point) == 0) {
                                        /* The last mount at a path is the visible one. */
                                        if (strcmp(type, "hugetlbfs") != 0) {
                                                found = -EEXIST;
                                        } else {
                                                found = 1;
                                                ps = 0;
                                                char *save = NULL;
                                                for (char *o = strtok_r(opts, ",", &save); o;
                                                     o = strtok_r(NULL, ",", &save))
                                                        if (strncmp(o, "pagesize=", 9) == 0) {
                                                                r = parse_pagesize_opt(o + 9, &ps);
                                                                if (r < 0)
                                                                        return r;
                                                        }
                                        }
                                }
                        }
                }
                line = nl ? nl + 1 : NULL;
        }
        if (found == 1 && ret_pagesize_kb)
                *ret_pagesize_kb = ps;
        return found;
}

static uint64_t kernel_default_size(const hostfs *h)
{
        _cleanup_free_ char *meminfo = NULL;

        if (hostfs_read_alloc(h, "/proc/meminfo", 0, &meminfo, NULL) == 0) {
                const char *p = strstr(meminfo, "\nHugepagesize:");
                if (p) {
                        char num[32];
                        uint64_t kb;
                        if (sscanf(p + 14, " %31[0-9] kB", num) == 1 && parse_u64(num, 1ULL << 40, &kb) == 0 && kb)
                                return kb;
                }
        }
        return 2048;
}

uint64_t huge_mount_page_size(const hostfs *h, const config *c)
{
        if (c->hugetlbfs.page_size_kb)
                return c->hugetlbfs.page_size_kb;
        if (c->n_huge)
                return c->huge[0].size_kb;
        return kernel_default_size(h);
}

/* The host's mount table: /proc/1/mounts (host init, under --root /host with hostPID)
 * first, then /proc/mounts (fake trees have only that). */
static int read_mounts(const hostfs *h, char **ret)
{
        if (hostfs_read_alloc(h, "/proc/1/mounts", 0, ret, NULL) == 0)
                return 0;
        return hostfs_read_alloc(h, "/proc/mounts", 0, ret, NULL);
}

bool huge_root_is_live(const hostfs *h)
{
        char full[PATH_MAX];
        struct statfs sfs;

        if (hostfs_is_real_root(h))
                return true;
        return hostfs_path(h, "/proc", full, sizeof(full)) == 0 && statfs(full, &sfs) == 0 &&
               sfs.f_type == PROC_SUPER_MAGIC;
}

int huge_mount(const hostfs *h, const config *c, verdict_list *v, bool *ret_mounted)
{
        _cleanup_free_ char *mounts = NULL;
        const char *mp = c->hugetlbfs.mount_point;
        uint64_t want = huge_mount_page_size(h, c), have = 0;
        char full[PATH_MAX], opt[64], sz[32];
        int r;

        if (ret_mounted)
                *ret_mounted = false;
        size_str(want, sz, sizeof(sz));
        json_t *ev = json_pack("{s:s,s:I}", "mount_point", mp, "page_size_kb", (json_int_t)want);
        r = read_mounts(h, &mounts);
        if (r < 0)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, "check that /proc is mounted under the root",
                                   "cannot read /proc/mounts: %s", strerror(-r));
        r = huge_find_mount(mounts, mp, &have);
        if (r == 1) {
                if (have == 0)
                        have = kernel_default_size(h); /* no pagesize= means the default size */
                if (have == want)
                        return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_PASS, ev, NULL,
                                           "hugetlbfs is mounted at %s (pagesize %s)", mp, sz);
                char hs[32];
                size_str(have, hs, sizeof(hs));
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "unmount it when no pod uses it, or set hugetlbfs.page_size to match",
                                   "hugetlbfs at %s has pagesize %s, the config wants %s", mp, hs, sz);
        }
        if (r == -EEXIST)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, "choose another hugetlbfs.mount_point",
                                   "%s is already a mount point of another filesystem", mp);
        if (r < 0)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, NULL,
                                   "/proc/mounts has a garbled hugetlbfs line for %s", mp);
        if (!c->hugetlbfs.mount)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "mount it (mount -t hugetlbfs -o pagesize=... nodev <path>) or set hugetlbfs.mount",
                                   "no hugetlbfs at %s and hugetlbfs.mount is false", mp);
        if ((r = hostfs_path(h, mp, full, sizeof(full))) < 0 || (r = hostfs_mkdir_p(h, mp)) < 0)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, NULL, "cannot create %s: %s", mp,
                                   strerror(-r));
        snprintf(opt, sizeof(opt), "pagesize=%" PRIu64 "K", want);
        if (!huge_root_is_live(h))
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_SKIP, ev, NULL,
                                   "would mount hugetlbfs at %s with %s (not the real root: directory created, nothing mounted)",
                                   mp, opt);
        if (mount("nodev", full, PREP_CHECK_HUGETLBFS, MS_NOSUID | MS_NODEV, opt) < 0) {
                r = -errno;
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   r == -EPERM ? "the agent needs CAP_SYS_ADMIN (privileged) to mount" : NULL,
                                   "mounting hugetlbfs at %s with %s failed: %s", mp, opt, strerror(-r));
        }
        free(mounts);
        mounts = NULL;
        if (read_mounts(h, &mounts) < 0 || huge_find_mount(mounts, mp, &have) != 1) {
                /* Under --root /host the host sees the mount only through mount
                 * propagation; our own namespace shows it at the joined path. */
                free(mounts);
                mounts = NULL;
                if (!hostfs_is_real_root(h) && hostfs_read_alloc(h, "/proc/self/mounts", 0, &mounts, NULL) == 0 &&
                    huge_find_mount(mounts, full, &have) == 1) {
                        if (ret_mounted)
                                *ret_mounted = true;
                        return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_WARN, ev,
                                           "give the agent's host mount mountPropagation: Bidirectional",
                                           "mounted hugetlbfs at %s in the agent's mount namespace only; the host does "
                                           "not see it", full);
                }
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, NULL,
                                   "mounted hugetlbfs at %s but the mount table does not show it", mp);
        }
        if (ret_mounted)
                *ret_mounted = true;
        return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_PASS, ev, NULL, "mounted hugetlbfs at %s (pagesize %s)", mp, sz);
}
