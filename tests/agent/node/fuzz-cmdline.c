/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the kernel command line splitter. */
#include "inventory.h" /* INV_CMDLINE_KEYS: the flags the inventory keeps */
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const keys[] = {INV_CMDLINE_KEYS, NULL};
        inv_cmdline_flag f[INV_MAX_CMDLINE];
        size_t n = 0;

        if (procparse_cmdline((const char *)data, size, keys, f, INV_MAX_CMDLINE, &n) >= 0) {
                if (n > INV_MAX_CMDLINE)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if (strnlen(f[i].name, sizeof(f[i].name)) == sizeof(f[i].name) ||
                            strnlen(f[i].value, sizeof(f[i].value)) == sizeof(f[i].value))
                                abort();
        }
        return 0;
}
