/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the kernel-args state file parser (kargs_state_parse): a parsed state
 * formats and parses back to the same state, and every argument it records parses back
 * from its own text to the same argument. */
#include "kargs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_state(const kargs_state *a, const kargs_state *b)
{
        if (a->loader != b->loader || a->sentinel_created != b->sentinel_created || a->complete != b->complete ||
            a->written.n != b->written.n)
                abort();
        for (size_t i = 0; i < a->written.n; i++)
                if (memcmp(&a->written.a[i], &b->written.a[i], sizeof(a->written.a[i])) != 0)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static kargs_state s, back;
        char err[256];

        if (kargs_state_parse((const char *)data, size, &s, err, sizeof(err)) < 0) {
                if (strnlen(err, sizeof(err)) == sizeof(err) || !err[0])
                        abort();
                return 0;
        }
        if (s.written.n > KARGS_MAX || s.loader < 0 || s.loader >= _KARGS_LOADER_MAX)
                abort();
        for (size_t i = 0; i < s.written.n; i++) {
                kargs_arg a;
                if (kargs_arg_parse(s.written.a[i].text, &a) < 0 || memcmp(&a, &s.written.a[i], sizeof(a)) != 0 ||
                    !kargs_equal(&a, &s.written.a[i]) || kargs_find_equal(&s.written, &a) < 0)
                        abort();
        }
        char *text = kargs_state_format(&s);
        if (!text)
                return 0;
        if (kargs_state_parse(text, strlen(text), &back, err, sizeof(err)) < 0)
                abort();
        same_state(&s, &back);
        free(text);
        return 0;
}
