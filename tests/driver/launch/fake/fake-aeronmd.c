/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for aeronmd in the launcher's tests: it prints the environment it was
 * started with (one NAME=value a line, as env(1) does) and exits 0. Built twice: linked
 * against libaeron_driver.so (the shared-library aeronmd) and without (aeronmd_s). */
#include <stdio.h>

extern char **environ;
#ifdef FAKE_SHARED
int fake_aeron_lib_marker(void);
#endif

int main(void)
{
#ifdef FAKE_SHARED
        if (fake_aeron_lib_marker() != 1)
                return 2;
#endif
        for (char **e = environ; *e; e++)
                puts(*e);
        return 0;
}
