/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: /proc/mounts iteration, mount options and page sizes. */
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t pos = 0, lines = 0;
        procparse_mount m;
        int r;

        while ((r = procparse_mount_next((const char *)data, size, &pos, &m)) != 0) {
                char v[32];
                uint64_t kb;
                if (pos > size || ++lines > size + 1)
                        abort(); /* must advance and stay in bounds */
                if (r < 0)
                        continue;
                if (procparse_mount_option(m.options, "pagesize", v, sizeof(v)) > 0)
                        (void)procparse_size_kb(v, &kb);
        }
        return 0;
}
