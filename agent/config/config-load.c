/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the config file (a path of the agent's own filesystem, e.g. a ConfigMap mount)
 * and handing its text to the pure parser; a named file that is missing is an error,
 * only an unnamed default may be absent. The only file I/O of the config; never logs. */
#include "config.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int config_load(const char *path, config *ret, bool *ret_from_file, char *err, size_t err_size)
{
        struct stat st;
        size_t n = 0;
        int r;

        if (err && err_size)
                err[0] = '\0';
        /* Only "no --config at all" may fall back to the defaults: a path that was named
         * (even the default one, as the DaemonSet names it) must exist. */
        bool named = path != NULL;
        if (!path)
                path = CONFIG_PATH_DEFAULT;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT && !named) {
                        config_init(ret);
                        if (ret_from_file)
                                *ret_from_file = false;
                        return 0;
                }
                if (err && err_size)
                        snprintf(err, err_size, "config: cannot open \"%s\": %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                if (err && err_size)
                        snprintf(err, err_size, "config: \"%s\" is not a regular file", path);
                return -EINVAL;
        }
        _cleanup_free_ char *buf = malloc(CONFIG_MAX_TEXT + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + n, CONFIG_MAX_TEXT + 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        if (err && err_size)
                                snprintf(err, err_size, "config: cannot read \"%s\": %s", path, strerror(-r));
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
                if (n > CONFIG_MAX_TEXT) {
                        if (err && err_size)
                                snprintf(err, err_size, "config: \"%s\" is larger than %d bytes", path,
                                         CONFIG_MAX_TEXT);
                        return -E2BIG;
                }
        }
        r = config_parse(buf, n, ret, err, err_size);
        if (r < 0)
                return r;
        if (ret_from_file)
                *ret_from_file = true;
        return 0;
}
