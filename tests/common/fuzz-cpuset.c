/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the CPU list and CPU mask parsers, and format/parse round trips. */
#include "cpuset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        cpuset a, b;
        static char buf[CPUSET_MAX * 6];

        if (cpuset_parse((const char *)data, size, &a) == 0) {
                size_t n = cpuset_format(&a, buf, sizeof(buf));
                if (n >= sizeof(buf) || cpuset_parse(buf, n, &b) != 0 || !cpuset_equal(&a, &b))
                        abort();
        }
        (void)cpuset_parse_mask((const char *)data, size, &a);
        return 0;
}
