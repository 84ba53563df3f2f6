/* SPDX-License-Identifier: Apache-2.0 */
/* The Container Device Interface spec of the NIC resource, beside the device plugin's
 * answers (which then name CDI devices instead of device nodes): written atomically and
 * removed under the host tree. Owns the spec's content and file name; does not decide
 * when (the daemon does: on a changed device list, on a rebuild). Never logs. */
#ifndef SPIN_DP_CDI_H
#define SPIN_DP_CDI_H

#include "dp-devices.h"
#include "hostfs.h"

/* The spec of kind (e.g. "spinlane.io/dpdk-nic") in dir (a host path, e.g.
 * /var/run/cdi), as <dir>/<kind with '/' as '-'>.json: one device per NIC (its device
 * nodes), and when hugetlbfs is not "" that host mount bind-mounted at the same path for
 * all. Creates dir; replaces the file atomically through hostfs_write_atomic (a fresh
 * temporary file, mode 0644 whatever the umask, fsync'ed, renamed over: a file or symlink
 * planted at either name is never written through). 0, or -ENOMEM, -ENAMETOOLONG, -errno. */
int dp_cdi_write(const hostfs *h, const char *dir, const char *kind, const char *hugetlbfs,
                 const device_list *nics);
/* Removes that spec; 0 also when there was none. */
int dp_cdi_remove(const hostfs *h, const char *dir, const char *kind);

/* The spec of one DRA claim: kind "<prefix>/claim" in <dir>/<prefix>-claim-<uid>.json,
 * one device named uid carrying the device nodes of nics[0..n), the environment env
 * ("KEY=VALUE" each) and, when hugetlbfs is not "", that mount. Written as dp_cdi_write
 * writes. 0, or -ENOMEM, -ENAMETOOLONG, -errno. */
int dp_cdi_write_claim(const hostfs *h, const char *dir, const char *prefix, const char *uid, const char *hugetlbfs,
                       const device_entry *const *nics, size_t n, char *const *env, size_t n_env);
/* Removes it; 0 also when there was none. */
int dp_cdi_remove_claim(const hostfs *h, const char *dir, const char *prefix, const char *uid);

#endif
