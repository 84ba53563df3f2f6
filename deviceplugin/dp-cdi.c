/* SPDX-License-Identifier: Apache-2.0 */
/* The CDI spec of the NIC resource (dp-cdi.h): its JSON (jansson), its file name, the
 * atomic write (a .tmp file renamed over) and the removal. No sockets, no gRPC, no
 * logging: the daemon decides when and reports what failed. */
#include "dp-cdi.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* <dir>/<kind, '/' made '-'>.json under the host tree. */
static int spec_path(const hostfs *h, const char *dir, const char *kind, char *ret, size_t size)
{
        char rel[PATH_MAX];
        int n = snprintf(rel, sizeof(rel), "%s/%s.json", dir, kind);
        if (n < 0 || (size_t)n >= sizeof(rel))
                return -ENAMETOOLONG;
        for (char *c = rel + strlen(dir) + 1; *c; c++)
                if (*c == '/')
                        *c = '-';
        return hostfs_path(h, rel, ret, size);
}

static json_t *spec_json(const char *kind, const char *hugetlbfs, const dp_device_list *nics)
{
        json_t *devs = json_array();
        for (size_t i = 0; i < nics->n; i++) {
                const dp_device *d = &nics->items[i];
                json_t *nodes = json_array();
                for (size_t k = 0; k < d->n_devnodes; k++)
                        json_array_append_new(nodes, json_pack("{s:s,s:s,s:s}", "path", d->devnodes[k].container,
                                                               "hostPath", d->devnodes[k].host, "permissions", "rw"));
                json_array_append_new(devs, json_pack("{s:s,s:{s:o}}", "name", d->id, "containerEdits",
                                                      "deviceNodes", nodes));
        }
        if (*hugetlbfs)
                return json_pack("{s:s,s:s,s:o,s:{s:[{s:s,s:s,s:[s,s]}]}}", "cdiVersion", "0.5.0", "kind", kind,
                                 "devices", devs, "containerEdits", "mounts", "hostPath", hugetlbfs,
                                 "containerPath", hugetlbfs, "options", "rw", "bind");
        /* hugetlbfs.pod_mount false: the pod mounts its own hugepages */
        return json_pack("{s:s,s:s,s:o}", "cdiVersion", "0.5.0", "kind", kind, "devices", devs);
}

int dp_cdi_write(const hostfs *h, const char *dir, const char *kind, const char *hugetlbfs,
                 const dp_device_list *nics)
{
        char path[PATH_MAX], tmp[PATH_MAX + 8];
        int r = spec_path(h, dir, kind, path, sizeof(path));
        if (r < 0)
                return r;
        json_t *spec = spec_json(kind, hugetlbfs, nics);
        if (!spec)
                return -ENOMEM;
        /* mkdir -p of the spec dir */
        snprintf(tmp, sizeof(tmp), "%s", path);
        for (char *c = tmp + 1; (c = strchr(c, '/')); c++) {
                *c = '\0';
                if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                        break;
                *c = '/';
        }
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        r = json_dump_file(spec, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ? -EIO : 0;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        json_decref(spec);
        return r;
}

int dp_cdi_remove(const hostfs *h, const char *dir, const char *kind)
{
        char path[PATH_MAX];
        int r = spec_path(h, dir, kind, path, sizeof(path));
        if (r < 0)
                return r;
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}
