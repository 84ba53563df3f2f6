/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the PCI resource file (prefetchable BAR) and the x86 PAT memtype list. */
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t a = 0, b = 0;
        char t[32];

        if (procparse_pci_prefetch_bar((const char *)data, size, &a, &b) > 0 && b <= a)
                abort();
        if (procparse_pat_lookup((const char *)data, size, a, b, t, sizeof(t)) > 0 &&
            strnlen(t, sizeof(t)) == sizeof(t))
                abort();
        return 0;
}
