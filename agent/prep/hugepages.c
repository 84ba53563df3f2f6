/* SPDX-License-Identifier: Apache-2.0 */
/* Hugepages per NUMA node (write nr_hugepages, read back) and the hugetlbfs mount, with
 * their verdicts. Never logs. */
#include "hugepages.h"

#include "cleanup.h"
#include "parse.h"
#include "procparse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

static void size_str(uint64_t kb, char *buf, size_t size)
{
        format_size_kb(kb, SIZE_UNITS_HUMAN, buf, size);
}

int huge_reserve(const hostfs *h, const bind_ops *ops, const config *c, verdict_list *v)
{
        char fails[1024] = "", oks[1024] = "", raised[512] = "";
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
                                if (got > before)
                                        (void)hostfs_fmt_append(raised, sizeof(raised),
                                                                "%snode %d from %" PRIu64 " to %" PRIu64 " x %s",
                                                                *raised ? ", " : "", node, before, got, sz);
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
        /* the kubelet reads hugepage capacity once, at its start (kubernetes#111757):
         * pages this run added are not allocatable to pods until it restarts */
        if (*raised)
                return verdict_add(v, PREP_CHECK_HUGEPAGES, VERDICT_WARN, evidence,
                                   "reserve the pages at boot (kernel parameters hugepagesz= hugepages=, or the "
                                   "node's user data before the kubelet starts), or restart the kubelet once "
                                   "(systemctl restart kubelet) so it reads the new capacity",
                                   "reserved %s; raised at run time (%s): the kubelet reads hugepage capacity "
                                   "only when it starts (kubernetes#111757), so pods cannot request the new pages "
                                   "until it restarts", oks, raised);
        return verdict_add(v, PREP_CHECK_HUGEPAGES, VERDICT_PASS, evidence, NULL, "reserved %s", oks);
}

/* Looking for the mount at one mount point, line by line. */
typedef struct mount_scan {
        const char *mp;
        int found;   /* 1 hugetlbfs, -EEXIST another filesystem, 0 none (the last line wins) */
        uint64_t ps; /* pagesize= in kB of that hugetlbfs, 0 absent */
        int err;     /* -EINVAL: that hugetlbfs line is garbled or cut */
} mount_scan;

static int scan_line(void *userdata, const char *line, size_t len)
{
        mount_scan *s = userdata;
        procparse_mount m;
        size_t pos = 0;
        char ps[32];

        if (procparse_mount_next(line, len, &pos, &m) <= 0)
                return 0; /* fewer than four fields: no mount */
        /* A cut target is longer than any mount point the config can name. */
        if (strcmp(m.target, s->mp) != 0)
                return 0;
        /* The last mount at a path is the visible one. */
        s->ps = 0;
        s->err = 0;
        if (strcmp(m.fstype, "hugetlbfs") != 0) {
                s->found = -EEXIST;
                return 0;
        }
        s->found = 1;
        int r = procparse_mount_option(m.options, "pagesize", ps, sizeof(ps));
        if (m.truncated || r < 0 || (r > 0 && procparse_size_kb(ps, &s->ps) < 0))
                s->err = -EINVAL;
        return 0;
}

static int scan_result(const mount_scan *s, uint64_t *ret_pagesize_kb)
{
        if (s->found == 1 && s->err)
                return s->err;
        if (s->found == 1 && ret_pagesize_kb)
                *ret_pagesize_kb = s->ps;
        return s->found;
}

int huge_find_mount(const char *mounts, const char *mount_point, uint64_t *ret_pagesize_kb)
{
        mount_scan s = {.mp = mount_point};
        const char *line = mounts;

        while (line && *line) {
                const char *nl = strchr(line, '\n');
                size_t n = nl ? (size_t)(nl - line) : strlen(line);
                scan_line(&s, line, n);
                line = nl ? nl + 1 : NULL;
        }
        return scan_result(&s, ret_pagesize_kb);
}

/* The same over a mount table file, streamed: however many mounts, each line at most
 * HOSTFS_MOUNT_LINE_MAX bytes. When the file cannot be read whole, *ret_read_err is that
 * error (-EMSGSIZE: a longer line, -EBADMSG: a NUL byte) and the return is it too. */
static int find_mount_in_table(const hostfs *h, const char *path, const char *mount_point, uint64_t *ret_pagesize_kb,
                               int *ret_read_err)
{
        mount_scan s = {.mp = mount_point};
        int r = hostfs_read_lines(h, path, HOSTFS_MOUNT_LINE_MAX, scan_line, &s);
        *ret_read_err = r < 0 ? r : 0;
        if (r < 0)
                return r;
        return scan_result(&s, ret_pagesize_kb);
}

static uint64_t kernel_default_size(const hostfs *h)
{
        _cleanup_free_ char *meminfo = NULL;

        size_t len = 0;
        uint64_t kb = 0;

        if (hostfs_read_alloc(h, "/proc/meminfo", 0, &meminfo, &len) == 0 &&
            procparse_meminfo(meminfo, len, "Hugepagesize", &kb) > 0 && kb > 0 && kb <= (1ULL << 40))
                return kb;
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

/* "pagesize=2M", as the kernel's memparse reads it. */
static void pagesize_opt(uint64_t kb, char *buf, size_t size)
{
        int k = snprintf(buf, size, "pagesize=");
        if (k > 0 && (size_t)k < size)
                format_size_kb(kb, SIZE_UNITS_KERNEL, buf + k, size - (size_t)k);
}

int huge_mount(const hostfs *h, const bind_ops *ops, const config *c, verdict_list *v, bool *ret_mounted)
{
        const char *mp = c->hugetlbfs.mount_point, *table = hostfs_mounts_path(h);
        uint64_t want = huge_mount_page_size(h, c), have = 0;
        char full[PATH_MAX], opt[64], sz[32];
        int r;

        if (ret_mounted)
                *ret_mounted = false;
        size_str(want, sz, sizeof(sz));
        json_t *ev = json_pack("{s:s,s:I,s:s}", "mount_point", mp, "page_size_kb", (json_int_t)want, "mount_table",
                               table);
        int rerr = 0;
        r = find_mount_in_table(h, table, mp, &have, &rerr);
        if (rerr)
                /* Not read whole: a mount may be there unseen, and another one would stack. */
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "check that the host's /proc is mounted under the root",
                                   "cannot read the host's mount table %s: %s; nothing mounted", table,
                                   rerr == -EMSGSIZE ? "a line longer than 64 KiB" : strerror(-rerr));
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
                                   "%s has a garbled hugetlbfs line for %s; nothing mounted", table, mp);
        if (!c->hugetlbfs.mount)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "mount it (mount -t hugetlbfs -o pagesize=... nodev <path>) or set hugetlbfs.mount",
                                   "no hugetlbfs at %s and hugetlbfs.mount is false", mp);
        if ((r = hostfs_path(h, mp, full, sizeof(full))) < 0 || (r = bind_ops_mkdir(ops, h, mp)) < 0)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, NULL, "cannot create %s: %s", mp,
                                   strerror(-r));
        pagesize_opt(want, opt, sizeof(opt));
        r = bind_ops_mount(ops, h, "nodev", mp, HUGE_FSTYPE, MS_NOSUID | MS_NODEV, opt);
        if (r == -ENOSYS)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_SKIP, ev, NULL,
                                   "would mount hugetlbfs at %s with %s (not a live root: directory created, nothing "
                                   "mounted)", mp, opt);
        if (r < 0)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   r == -EPERM ? "the agent needs CAP_SYS_ADMIN (privileged) to mount" : NULL,
                                   "mounting hugetlbfs at %s with %s failed: %s", mp, opt, strerror(-r));
        have = 0;
        r = find_mount_in_table(h, table, mp, &have, &rerr);
        if (r == 1 && (have ? have : kernel_default_size(h)) == want) {
                if (ret_mounted)
                        *ret_mounted = true;
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_PASS, ev, NULL,
                                   "mounted hugetlbfs at %s (pagesize %s)", mp, sz);
        }
        /* The host's table does not show what was just mounted (under --root /host: no
         * mount propagation). Left there, the next apply would not see it either and
         * stack another one: take it down again. */
        mount_scan own = {.mp = full};
        hostfs self;
        hostfs_init(&self, NULL); /* the agent's own /proc/self/mounts, whatever the root */
        bool ours = !hostfs_is_real_root(h) && hostfs_is_live(h) &&
                    hostfs_read_lines(&self, "/proc/self/mounts", HOSTFS_MOUNT_LINE_MAX, scan_line, &own) == 0 &&
                    own.found == 1;
        int u = bind_ops_umount(ops, h, mp);
        char undo[96];
        if (u < 0)
                snprintf(undo, sizeof(undo), "unmounting it again failed: %s", strerror(-u));
        else
                snprintf(undo, sizeof(undo), "unmounted it again");
        if (ours)
                return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev,
                                   "give the agent's host mount mountPropagation: Bidirectional",
                                   "mounted hugetlbfs at %s, but only the agent's mount namespace sees it (not %s); %s",
                                   full, table, undo);
        return verdict_add(v, PREP_CHECK_HUGETLBFS, VERDICT_FAIL, ev, NULL,
                           "mounted hugetlbfs at %s, but %s does not show it%s; %s", mp, table,
                           r == 1 ? " with that page size" : "", undo);
}
