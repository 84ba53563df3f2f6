/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the kernel-args argument parsers: the input as one argument
 * (kargs_arg_parse, what the state file holds) and as a kernel command line
 * (procparse_cmdline with the inventory's keys, then kargs_from_cmdline, as the agent
 * reads /proc/cmdline). An argument that parses is written back exactly as its input
 * and parses again to the same; the command line's arguments stay within their bounds. */
#include "inventory.h" /* INV_CMDLINE_KEYS, INV_MAX_CMDLINE */
#include "kargs.h"
#include "procparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bounded(const kargs_arg *a)
{
        if (strnlen(a->name, sizeof(a->name)) == sizeof(a->name) ||
            strnlen(a->value, sizeof(a->value)) == sizeof(a->value) ||
            strnlen(a->text, sizeof(a->text)) == sizeof(a->text))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const keys[] = {INV_CMDLINE_KEYS, NULL};
        static inventory inv;
        static kargs_list running;
        char text[KARGS_TEXT_LEN + 8];
        kargs_arg a, again;

        /* one argument: the input up to its first NUL, when it fits the buffer */
        size_t n = strnlen((const char *)data, size);
        if (n < sizeof(text)) {
                memcpy(text, data, n);
                text[n] = '\0';
                if (kargs_arg_parse(text, &a) == 0) {
                        bounded(&a);
                        if (strcmp(a.text, text) != 0 || kargs_arg_parse(a.text, &again) < 0 ||
                            memcmp(&a, &again, sizeof(a)) != 0 || !kargs_equal(&a, &again))
                                abort();
                }
        }

        /* the whole input as /proc/cmdline */
        memset(&inv, 0, sizeof(inv));
        if (procparse_cmdline((const char *)data, size, keys, inv.cmdline, INV_MAX_CMDLINE, &inv.n_cmdline) < 0)
                return 0;
        if (inv.n_cmdline > INV_MAX_CMDLINE)
                abort();
        inv.have_cmdline = true;
        kargs_from_cmdline(&inv, &running);
        if (running.n > KARGS_MAX)
                abort();
        for (size_t i = 0; i < running.n; i++) {
                bounded(&running.a[i]);
                if (kargs_find_equal(&running, &running.a[i]) < 0)
                        abort();
        }
        return 0;
}
