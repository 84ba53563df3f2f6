/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the ResourceSlice reply parser (dra_slice_parse: what the API server
 * answers a GET of the node's slice) and of the --dra-resources list: a parsed slice has
 * a resourceVersion and a device list, and the list compares equal to itself. */
#include "dra-slice.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dra_slice_seen s = { 0 };
        dra_resources res;
        char why[256], list[64];

        if (dra_slice_parse((const char *)data, size, "node-a", &s, why, sizeof(why)) == 0) {
                if (!s.resource_version[0] || !json_is_array(s.devices) || dra_devices_differ(s.devices, s.devices) ||
                    s.generation < 0)
                        abort();
                dra_slice_seen_clear(&s);
        }
        size_t n = size < sizeof(list) - 1 ? size : sizeof(list) - 1;
        memcpy(list, data, n);
        list[n] = '\0';
        if (dra_resources_parse(list, &res, why, sizeof(why)) == 0 && strlen(list) > strlen("nic,core"))
                abort();
        return 0;
}
