/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: /proc/net/route iteration. */
#include "procparse.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t pos = 0, last = 0;
        procparse_route r;
        int k;

        while ((k = procparse_route_next((const char *)data, size, &pos, &r)) != 0) {
                if (k == -EBADMSG)
                        break;
                if (pos > size || (pos <= last && last != 0))
                        abort();
                last = pos;
                if (k > 0)
                        (void)procparse_route_is_default(&r);
        }
        return 0;
}
