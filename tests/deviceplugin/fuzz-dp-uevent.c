/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the kernel uevent parser on arbitrary datagrams (no NUL at the end
 * guaranteed); what it returns must be NUL-terminated within its fields. */
#include "dp-uevent.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dp_uevent ev;
        /* a private copy of exactly size bytes: ASan flags any read past the end */
        uint8_t *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        if (size)
                memcpy(copy, data, size);
        int r = dp_uevent_parse(copy, size, &ev);
        if (r == 0) {
                if (memchr(ev.action, '\0', sizeof(ev.action)) == NULL ||
                    memchr(ev.devpath, '\0', sizeof(ev.devpath)) == NULL ||
                    memchr(ev.subsystem, '\0', sizeof(ev.subsystem)) == NULL ||
                    memchr(ev.driver, '\0', sizeof(ev.driver)) == NULL || ev.action[0] == '\0' ||
                    ev.devpath[0] != '/')
                        abort();
                (void)dp_uevent_relevant(&ev);
        }
        free(copy);
        return 0;
}
