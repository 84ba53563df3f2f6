/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: sysfs entry names (hugepages-<N>kB, cpuN, nodeN). */
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char name[256];
        uint64_t kb;
        unsigned idx;

        if (size >= sizeof(name))
                return 0;
        memcpy(name, data, size);
        name[size] = '\0';
        if (procparse_hugepage_dirname(name, &kb) == 0 && kb == 0)
                abort();
        if (procparse_indexed_name(name, "cpu", 4095, &idx) == 0 && idx > 4095)
                abort();
        (void)procparse_indexed_name(name, "node", 63, &idx);
        return 0;
}
