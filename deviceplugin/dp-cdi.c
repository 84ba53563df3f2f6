/* SPDX-License-Identifier: Apache-2.0 */
/* The CDI spec of the NIC resource (dp-cdi.h): its JSON (jansson), its file name, the
 * atomic write (common/hostfs's, the bind state's too) and the removal. No sockets, no
 * gRPC, no logging: the daemon decides when and reports what failed. */
#include "dp-cdi.h"

#include "cleanup.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* <dir>/<kind, '/' made '-'>.json: the spec's host path. */
static int spec_path(const char *dir, const char *kind, char *ret, size_t size)
{
        int n = snprintf(ret, size, "%s/%s.json", dir, kind);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        for (char *c = ret + strlen(dir) + 1; *c; c++)
                if (*c == '/')
                        *c = '-';
        return 0;
}

static json_t *spec_json(const char *kind, const char *hugetlbfs, const device_list *nics)
{
        json_t *devs = json_array();
        for (size_t i = 0; i < nics->n; i++) {
                const device_entry *d = &nics->items[i];
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

/* spec (taken; NULL: out of memory) as the file path in dir, the bind state's way
 * (hostfs_write_atomic): a fresh O_EXCL temporary file beside it (mkostemp: no planted
 * file or symlink is followed), 0644 whatever the umask, fsync'ed, renamed over (a
 * symlink at the spec's name is replaced, not followed). */
static int spec_write(const hostfs *h, const char *dir, const char *path, json_t *spec)
{
        int r;
        if (!spec)
                return -ENOMEM;
        _cleanup_free_ char *text = json_dumps(spec, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(spec);
        if (!text)
                return -ENOMEM;
        if ((r = hostfs_mkdir_p(h, dir)) < 0)
                return r;
        return hostfs_write_atomic(h, path, text, 0644);
}

int dp_cdi_write(const hostfs *h, const char *dir, const char *kind, const char *hugetlbfs,
                 const device_list *nics)
{
        char path[PATH_MAX];
        int r = spec_path(dir, kind, path, sizeof(path));
        if (r < 0)
                return r;
        return spec_write(h, dir, path, spec_json(kind, hugetlbfs, nics));
}

int dp_cdi_remove(const hostfs *h, const char *dir, const char *kind)
{
        char rel[PATH_MAX];
        int r = spec_path(dir, kind, rel, sizeof(rel));
        if (r < 0)
                return r;
        return hostfs_unlink(h, rel);
}

/* "<prefix>/claim-<uid>": the name spec_path makes "<prefix>-claim-<uid>.json" of. */
static int claim_name(const char *prefix, const char *uid, char *ret, size_t size)
{
        int n = snprintf(ret, size, "%s/claim-%s", prefix, uid);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int dp_cdi_write_claim(const hostfs *h, const char *dir, const char *prefix, const char *uid, const char *hugetlbfs,
                       const device_entry *const *nics, size_t n, char *const *env, size_t n_env)
{
        char name[256], kind[128], path[PATH_MAX];
        int r;

        if ((r = claim_name(prefix, uid, name, sizeof(name))) < 0 || (r = spec_path(dir, name, path, sizeof(path))) < 0)
                return r;
        snprintf(kind, sizeof(kind), "%s/claim", prefix);
        json_t *nodes = json_array(), *envs = json_array();
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < nics[i]->n_devnodes; k++) {
                        bool dup = false; /* a shared node (/dev/vfio/vfio) once */
                        for (size_t j = 0; j < json_array_size(nodes); j++)
                                dup |= strcmp(json_string_value(json_object_get(json_array_get(nodes, j), "path")),
                                              nics[i]->devnodes[k].container) == 0;
                        if (!dup)
                                json_array_append_new(nodes, json_pack("{s:s,s:s,s:s}", "path",
                                                                       nics[i]->devnodes[k].container, "hostPath",
                                                                       nics[i]->devnodes[k].host, "permissions", "rw"));
                }
        for (size_t i = 0; i < n_env; i++)
                json_array_append_new(envs, json_string(env[i]));
        json_t *edits = json_pack("{s:o,s:o}", "env", envs, "deviceNodes", nodes);
        if (edits && *hugetlbfs)
                json_object_set_new(edits, "mounts", json_pack("[{s:s,s:s,s:[s,s]}]", "hostPath", hugetlbfs,
                                                               "containerPath", hugetlbfs, "options", "rw", "bind"));
        json_t *spec = json_pack("{s:s,s:s,s:[{s:s,s:o}]}", "cdiVersion", "0.5.0", "kind", kind, "devices", "name", uid,
                                 "containerEdits", edits);
        return spec_write(h, dir, path, spec);
}

int dp_cdi_remove_claim(const hostfs *h, const char *dir, const char *prefix, const char *uid)
{
        char name[256];
        int r = claim_name(prefix, uid, name, sizeof(name));
        return r < 0 ? r : dp_cdi_remove(h, dir, name);
}
