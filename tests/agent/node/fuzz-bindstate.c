/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the binding state file parser: a parsed state must format and parse
 * back to the same entries. */
#include "bind-state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static bind_state s, back;
        char err[256];

        if (bind_state_parse((const char *)data, size, &s, err, sizeof(err)) < 0)
                return 0;
        char *text = bind_state_format(&s);
        if (!text)
                return 0;
        if (bind_state_parse(text, strlen(text), &back, err, sizeof(err)) < 0 || back.n != s.n ||
            memcmp(back.e, s.e, s.n * sizeof(s.e[0])) != 0)
                abort();
        free(text);
        return 0;
}
