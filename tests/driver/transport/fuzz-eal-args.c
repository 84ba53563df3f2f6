/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: EAL argument splitting; every word must be printable and non-empty. */
#include "eal_args.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct tr_eal_args a;
        if (tr_eal_args_split((const char *)data, size, "fuzz", &a) != 0)
                return 0;
        if (a.argc < 1 || a.argc > TR_EAL_ARGS_MAX + 1 || a.argv[a.argc] != NULL)
                abort();
        for (int i = 1; i < a.argc; i++) {
                size_t n = strlen(a.argv[i]);
                if (n == 0 || n > size)
                        abort();
                for (size_t k = 0; k < n; k++)
                        if (a.argv[i][k] <= ' ' || a.argv[i][k] > '~')
                                abort();
        }
        return 0;
}
