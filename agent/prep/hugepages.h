/* SPDX-License-Identifier: Apache-2.0 */
/* Hugepage reservation per NUMA node and page size, and the hugetlbfs mount, under
 * --root. Reads back what the kernel really gave and turns the outcome into the
 * `prep-hugepages` and `prep-hugetlbfs` verdicts. Every host write - nr_hugepages, the
 * mount point's directory, mount(2), umount(2) - goes through a bind_ops table (tests
 * emulate a stingy kernel and assert the exact mount call). Never logs. */
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

/* The filesystem type mounted (mount -t hugetlbfs). */
#define HUGE_FSTYPE "hugetlbfs"

/* Pure: find the mount at mount_point in mount table text (/proc/mounts format; the last
 * mount at a path is the visible one). Returns 1 and the pagesize= value in kB (0 when
 * the option is absent) for hugetlbfs, 0 when nothing is mounted there, -EEXIST for
 * another filesystem, -EINVAL when that hugetlbfs line is garbled or cut. */
int huge_find_mount(const char *mounts, const char *mount_point, uint64_t *ret_pagesize_kb);

/* The page size the hugetlbfs mount should have: hugetlbfs.page_size, else the first
 * PREP_CHECK_HUGEPAGES size, else the kernel default (/proc/meminfo Hugepagesize), else 2048. */
uint64_t huge_mount_page_size(const hostfs *h, const config *c);

/* Make sure hugetlbfs is mounted at c->hugetlbfs.mount_point with the right pagesize=.
 * Looks in the host's mount table (hostfs_mounts_path: the host init's under --root,
 * streamed, never another namespace's); a table that cannot be read whole is a fail and
 * nothing is mounted (an unseen mount would be stacked on). When absent: mkdir -p and
 * mount("nodev", mount_point, "hugetlbfs", MS_NOSUID | MS_NODEV, "pagesize=2M"), both
 * through ops (bind_ops_mkdir / bind_ops_mount: the real ones mount only under a live
 * root, else a `skip` verdict says what would be mounted), then the table must show it;
 * when it does not (no mount propagation under --root /host) it is unmounted again
 * (bind_ops_umount) and the verdict fails. A mount with another page size is a fail
 * (never remounted under running pods). Adds one `prep-hugetlbfs` verdict; *ret_mounted
 * (optional) tells whether this call mounted it (and left it). Returns 0 or -ENOMEM. */
int huge_mount(const hostfs *h, const bind_ops *ops, const config *c, verdict_list *v, bool *ret_mounted);

#endif
