/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: /proc/meminfo lookups. */
#include "procparse.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t v;
        (void)procparse_meminfo((const char *)data, size, "Hugepagesize", &v);
        (void)procparse_meminfo((const char *)data, size, "HugePages_Free", &v);
        return 0;
}
