/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the bypass driver's environment contract. The input is split into
 * "NAME=value" lines; whatever it holds, the parser must return 0 with a consistent
 * configuration or -EINVAL with a terminated, non-empty message. */
#include "spa-env.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *copy = malloc(size + 1);
        const char *envp[65];
        size_t n = 0;
        struct spa_config c;
        char err[600];

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (char *line = copy, *next; line && n < 64; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                envp[n++] = line;
        }
        envp[n] = NULL;
        memset(err, 'x', sizeof(err));
        int r = spa_env_parse(envp, &c, err, sizeof(err));
        if (r == 0) {
                if (err[0] != '\0' || !c.sender.device[0] || !c.receiver.device[0] || !c.eal_args[0] ||
                    c.sender.prefix_len < 1 || c.sender.prefix_len > 32 || c.receiver.prefix_len < 1 ||
                    c.receiver.prefix_len > 32 || (c.handoff_slots & (c.handoff_slots - 1)) ||
                    c.shared != (strcmp(c.sender.device, c.receiver.device) == 0) ||
                    (c.shared && c.sender.ipv4 != c.receiver.ipv4))
                        abort();
        } else if (r != -EINVAL || err[0] == '\0' || !memchr(err, '\0', sizeof(err)))
                abort();
        free(copy);
        return 0;
}
