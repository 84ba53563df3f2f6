/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the ELF dynamic-section reader; whatever the bytes, it returns one of its
 * documented codes and every name it reports is terminated and within its limits. */
#include "launch-elf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static lelf_info e;
        int r = lelf_parse(data, size, &e);
        if (r != 0 && r != -ENOEXEC && r != -EBADMSG && r != -ENOMEM)
                abort();
        if (r == 0) {
                if (e.n_needed > LELF_MAX_NEEDED)
                        abort();
                for (unsigned i = 0; i < e.n_needed; i++)
                        if (!memchr(e.needed[i], '\0', sizeof(e.needed[i])))
                                abort();
                if (!memchr(e.runpath, '\0', sizeof(e.runpath)) || !memchr(e.rpath, '\0', sizeof(e.rpath)) ||
                    !memchr(e.soname, '\0', sizeof(e.soname)))
                        abort();
                (void)lelf_needs(&e, "libaeron_driver.so");
        }
        return 0;
}
