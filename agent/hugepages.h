/* SPDX-License-Identifier: Apache-2.0 */
/* Hugepage reservation per NUMA node and page size, and the hugetlbfs mount, under
 * --root. Reads back what the kernel really gave and turns the outcome into the
 * `prep-hugepages` and `prep-hugetlbfs` verdicts. sysfs writes go through a bind_ops table (tests
 * emulate a stingy kernel); mount(2) happens only when the root is the real root.
 * Never logs. */
#ifndef SPIN_HUGEPAGES_H
#define SPIN_HUGEPAGES_H

#include "bind.h"
#include "config.h"
#include "hostfs.h"
#include "verdict.h"

#include <stdbool.h>
#include <stdint.h>

/* Verdict ids of node preparation's results. They differ from the node checks' ids
 * (hugepages, nic-binding, ...: the state of the node) because they report what
 * preparation did and why it fell short. */
#define PREP_CHECK_NIC_BINDING "prep-nic-binding"
#define PREP_CHECK_MANA "prep-mana"
#define PREP_CHECK_HUGEPAGES "prep-hugepages"
#define PREP_CHECK_HUGETLBFS "prep-hugetlbfs"
#define PREP_CHECK_KERNEL_TUNING "prep-kernel-tuning"

/* Reserve what c->huge asks on every node listed. Adds one `prep-hugepages` verdict: pass
 * when every node got what was asked, fail naming each shortfall (asked, got) or each
 * node/size that does not exist or refused the write. Nodes not listed are untouched.
 * Returns 0 (outcome in the verdict) or -ENOMEM. With no "hugepages" in the config adds
 * nothing. */
int huge_reserve(const hostfs *h, const bind_ops *ops, const config *c, verdict_list *v);

/* Pure: find the hugetlbfs mount at mount_point in /proc/mounts text. Returns 1 and
 * the pagesize= value in kB (0 when the option is absent) when found, 0 when not,
 * -EINVAL when a hugetlbfs line is garbled. Other filesystems at the path give -EEXIST. */
int huge_find_mount(const char *mounts, const char *mount_point, uint64_t *ret_pagesize_kb);

/* The page size the hugetlbfs mount should have: hugetlbfs.page_size, else the first
 * PREP_CHECK_HUGEPAGES size, else the kernel default (/proc/meminfo Hugepagesize), else 2048. */
uint64_t huge_mount_page_size(const hostfs *h, const config *c);

/* True when the root holds a live host (the real root, or --root /host whose /proc is
 * a procfs): mounts are real there. A fake tree's /proc is a plain directory. */
bool huge_root_is_live(const hostfs *h);

/* Make sure hugetlbfs is mounted at c->hugetlbfs.mount_point with the right pagesize=.
 * Live root (huge_root_is_live): mkdir -p and mount(2) at <root><mount_point> when
 * absent (nosuid,nodev), then verify in the mount table (/proc/1/mounts, else
 * /proc/mounts). Fake root: create the directory under the root and report a `skip`
 * verdict saying what would be mounted. A mount with another page size is a fail
 * (never remounted under running pods). Adds one `prep-hugetlbfs` verdict; *ret_mounted
 * (optional) tells whether this call mounted it. Returns 0 or -ENOMEM. */
int huge_mount(const hostfs *h, const config *c, verdict_list *v, bool *ret_mounted);

#endif
