/* SPDX-License-Identifier: Apache-2.0 */
/* The kubeconfig's and the token's file reads (bounded, one file each), handed to the pure
 * parsers of kube-config.c; in spinkube, not spinkube_pure. Never logs. */
#include "kube-config.h"

#include "cleanup.h"
#include "errbuf.h"
#include "kube-yaml.h"
#include "readfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kube_token_read(const char *path, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;
        int r = readfile_alloc(path, KUBE_TOKEN_MAX, &buf, &n);

        if (r == -EFBIG)
                r = -E2BIG;
        if (r == 0)
                r = kube_token_check(buf, n, ret);
        if (buf)
                explicit_bzero(buf, n);
        return r;
}

int kube_config_load(const char *path, kube_config *ret, char *err, size_t err_size)
{
        _cleanup_free_ char *text = NULL, *dir = NULL;
        size_t n = 0;
        int r = readfile_alloc(path, KUBE_YAML_MAX_TEXT, &text, &n);

        if (r < 0) {
                errbuf_printf(err, err_size, "kubeconfig %.200s: %s", path, r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return r;
        }
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (slash)
                *slash = '\0';
        else
                strcpy(dir, ".");
        if (slash == dir)
                strcpy(dir, "/");
        r = kube_config_parse(text, n, dir, ret, err, err_size);
        explicit_bzero(text, n);
        return r;
}
