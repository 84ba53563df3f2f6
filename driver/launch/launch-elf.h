/* SPDX-License-Identifier: Apache-2.0 */
/* Reads what the dynamic loader would read from an ELF file's dynamic section: the
 * libraries it needs (DT_NEEDED), its DT_RUNPATH / DT_RPATH and DT_SONAME. The launcher
 * uses it to tell the shared-library aeronmd (which links libaeron_driver.so and loads
 * AERON_DRIVER_DYNAMIC_LIBRARIES) from aeronmd_s, and where its Aeron libraries are.
 * Pure: bytes in, no I/O, no globals, never logs; every offset is checked. */
#ifndef SPIN_LAUNCH_ELF_H
#define SPIN_LAUNCH_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LELF_MAX_NEEDED 64
#define LELF_NAME_MAX 256
#define LELF_PATH_MAX 1024
#define LELF_MAX_PHDRS 128
#define LELF_MAX_DYN 4096

typedef struct lelf_info {
        bool dynamic;                       /* has a PT_DYNAMIC segment */
        bool interp;                        /* has PT_INTERP: a dynamically linked program */
        uint16_t type;                      /* e_type: 2 ET_EXEC, 3 ET_DYN */
        unsigned n_needed;
        char needed[LELF_MAX_NEEDED][LELF_NAME_MAX];
        char runpath[LELF_PATH_MAX];        /* DT_RUNPATH, "" if none */
        char rpath[LELF_PATH_MAX];          /* DT_RPATH, "" if none */
        char soname[LELF_NAME_MAX];
} lelf_info;

/* Parse an ELF64 little-endian file image (len bytes). -ENOEXEC when it is not such a
 * file (a script, a 32-bit or big-endian binary), -EBADMSG when it is malformed or a
 * name does not fit; *ret untouched on failure. A file without PT_DYNAMIC (a static
 * program) parses with dynamic = false and nothing needed. */
int lelf_parse(const uint8_t *data, size_t len, lelf_info *ret);

/* Whether info needs a library named name (exact DT_NEEDED match). */
bool lelf_needs(const lelf_info *info, const char *name);

#endif
