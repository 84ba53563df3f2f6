/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the config file (a path of the agent's own filesystem, e.g. a ConfigMap mount)
 * and handing its text to the pure parser; a named file that is missing is an error,
 * only an unnamed default may be absent. The only file I/O of the config; never logs. */
#include "config.h"

#include "cleanup.h"
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int config_load(const char *path, config *ret, bool *ret_from_file, char *err, size_t err_size)
{
        size_t n = 0;
        int r;

        if (err && err_size)
                err[0] = '\0';
        /* Only "no --config at all" may fall back to the defaults: a path that was named
         * (even the default one, as the DaemonSet names it) must exist. */
        bool named = path != NULL;
        if (!path)
                path = CONFIG_PATH_DEFAULT;
        /* readfile_open and readfile_fd (what readfile_alloc does) apart, so that the
         * message says whether the open or the read failed */
        _cleanup_close_ int fd = readfile_open(path);
        if (fd == -EINVAL) {
                if (err && err_size)
                        snprintf(err, err_size, "config: \"%s\" is not a regular file", path);
                return -EINVAL;
        }
        if (fd < 0) {
                if (fd == -ENOENT && !named) {
                        config_init(ret);
                        if (ret_from_file)
                                *ret_from_file = false;
                        return 0;
                }
                if (err && err_size)
                        snprintf(err, err_size, "config: cannot open \"%s\": %s", path, strerror(-fd));
                return fd;
        }
        _cleanup_free_ char *buf = malloc(CONFIG_MAX_TEXT + 1);
        if (!buf)
                return -ENOMEM;
        r = readfile_fd(fd, buf, CONFIG_MAX_TEXT + 1, &n);
        if (r == -EFBIG) {
                if (err && err_size)
                        snprintf(err, err_size, "config: \"%s\" is larger than %d bytes", path, CONFIG_MAX_TEXT);
                return -E2BIG;
        }
        if (r < 0) {
                if (err && err_size)
                        snprintf(err, err_size, "config: cannot read \"%s\": %s", path, strerror(-r));
                return r;
        }
        r = config_parse(buf, n, ret, err, err_size);
        if (r < 0)
                return r;
        if (ret_from_file)
                *ret_from_file = true;
        return 0;
}
