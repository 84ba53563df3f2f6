/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the device plugin's request handling (Allocate, GetPreferredAllocation,
 * PreStartContainer decode + validate + build response) against a fixed device list.
 * The first byte picks the handler and resource; the rest is the protobuf request. */
#include "dp-fixture.h"
#include "dp-request.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static device_list nics, cores;
        static dp_alloc_config cfg;
        static int init;
        uint8_t *out = NULL;
        size_t out_len = 0;
        dp_status st;

        if (!init) {
                fixture_nics(&nics);
                fixture_cores(&cores);
                dp_alloc_config_default(&cfg);
                cfg.numa_with_nics = 1;
                init = 1;
        }
        if (size < 1)
                return 0;
        uint8_t sel = data[0];
        const device_list *l = (sel & 1) ? &cores : &nics;
        device_kind kind = (sel & 1) ? DEVICE_CORE : DEVICE_NIC;
        cfg.cdi = (sel & 8) != 0;
        int r;
        switch ((sel >> 1) & 3) {
        case 0:
                r = dp_handle_allocate(kind, &cfg, l, data + 1, size - 1, &st, &out, &out_len);
                break;
        case 1:
                r = dp_handle_preferred(kind, &cfg, l, data + 1, size - 1, &st, &out, &out_len);
                break;
        case 2:
                r = dp_handle_prestart(l, data + 1, size - 1, &st, &out, &out_len);
                break;
        default:
                r = dp_check_empty(data + 1, size - 1, &st);
                break;
        }
        if (r < 0 && out)
                abort(); /* outputs untouched on failure */
        if (r < 0 && st.message[0] == '\0' && r != -ENOMEM)
                abort(); /* every refusal says why */
        free(out);
        return 0;
}
