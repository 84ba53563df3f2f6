/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: uevent KEY=VALUE lookup and the PCI_ID parser. */
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const keys[] = {"DRIVER", "PCI_CLASS", "PCI_ID", "PCI_SLOT_NAME", "MODALIAS"};
        char v[64];

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                if (procparse_uevent_get((const char *)data, size, keys[i], v, sizeof(v)) > 0) {
                        uint16_t a, b;
                        if (strnlen(v, sizeof(v)) == sizeof(v))
                                abort();
                        (void)procparse_pci_id(v, &a, &b);
                }
        }
        return 0;
}
