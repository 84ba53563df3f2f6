/* SPDX-License-Identifier: Apache-2.0 */
/* ELF64 (little-endian) dynamic-section reader. Pure: no I/O, no globals, never logs.
 * Program headers give PT_DYNAMIC and the PT_LOAD segments that map DT_STRTAB's
 * address to a file offset; every read is bounds-checked against the image. */
#include "launch-elf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PT_LOAD_ 1
#define PT_DYNAMIC_ 2
#define PT_INTERP_ 3
#define DT_NULL_ 0
#define DT_NEEDED_ 1
#define DT_STRTAB_ 5
#define DT_STRSZ_ 10
#define DT_SONAME_ 14
#define DT_RPATH_ 15
#define DT_RUNPATH_ 29

static uint16_t rd16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
        return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* [off, off+n) inside [0, len) without overflow */
static bool inside(size_t len, uint64_t off, uint64_t n)
{
        return off <= len && n <= len - off;
}

struct load {
        uint64_t vaddr, off, filesz;
};

/* The file offset of virtual address va, from the PT_LOAD segment holding it. */
static int va_to_off(const struct load *l, unsigned n, uint64_t va, uint64_t *ret)
{
        for (unsigned i = 0; i < n; i++)
                if (va >= l[i].vaddr && va - l[i].vaddr < l[i].filesz) {
                        *ret = l[i].off + (va - l[i].vaddr);
                        return 0;
                }
        return -EBADMSG;
}

/* Copy the string at strtab offset o (bounded by strsz and the image) into buf. */
static int str_at(const uint8_t *data, size_t len, uint64_t strtab, uint64_t strsz, uint64_t o, char *buf,
                  size_t size)
{
        if (o >= strsz || !inside(len, strtab, strsz))
                return -EBADMSG;
        const uint8_t *s = data + strtab + o;
        size_t max = (size_t)(strsz - o);
        const uint8_t *nul = memchr(s, '\0', max);
        if (!nul)
                return -EBADMSG;
        size_t n = (size_t)(nul - s);
        if (n >= size)
                return -EBADMSG;
        memcpy(buf, s, n);
        buf[n] = '\0';
        return 0;
}

int lelf_parse(const uint8_t *data, size_t len, lelf_info *ret)
{
        struct load loads[LELF_MAX_PHDRS];
        unsigned n_loads = 0;
        uint64_t dyn_off = 0, dyn_size = 0;
        bool have_dyn = false, have_interp = false;

        if (!data || len < 64 || memcmp(data, "\177ELF", 4) != 0)
                return -ENOEXEC;
        if (data[4] != 2 || data[5] != 1) /* ELFCLASS64, ELFDATA2LSB */
                return -ENOEXEC;
        uint16_t type = rd16(data + 16);
        uint64_t phoff = rd64(data + 32);
        uint16_t phentsize = rd16(data + 54), phnum = rd16(data + 56);
        if (phnum > LELF_MAX_PHDRS || (phnum && phentsize < 56) || !inside(len, phoff, (uint64_t)phnum * phentsize))
                return -EBADMSG;
        for (unsigned i = 0; i < phnum; i++) {
                const uint8_t *ph = data + phoff + (uint64_t)i * phentsize;
                uint32_t pt = rd32(ph);
                uint64_t off = rd64(ph + 8), vaddr = rd64(ph + 16), filesz = rd64(ph + 32);
                if (pt == PT_LOAD_)
                        loads[n_loads++] = (struct load){ .vaddr = vaddr, .off = off, .filesz = filesz };
                else if (pt == PT_DYNAMIC_) {
                        if (have_dyn || !inside(len, off, filesz))
                                return -EBADMSG;
                        have_dyn = true;
                        dyn_off = off;
                        dyn_size = filesz;
                } else if (pt == PT_INTERP_)
                        have_interp = true;
        }
        lelf_info *info = calloc(1, sizeof(*info));
        if (!info)
                return -ENOMEM;
        info->type = type;
        info->interp = have_interp;
        info->dynamic = have_dyn;
        if (have_dyn) {
                uint64_t strtab_va = 0, strsz = 0, strtab = 0;
                bool have_strtab = false;
                uint64_t n = dyn_size / 16;
                if (n > LELF_MAX_DYN)
                        n = LELF_MAX_DYN;
                /* first pass: where the strings are */
                for (uint64_t i = 0; i < n; i++) {
                        const uint8_t *d = data + dyn_off + i * 16;
                        int64_t tag = (int64_t)rd64(d);
                        uint64_t val = rd64(d + 8);
                        if (tag == DT_NULL_)
                                break;
                        if (tag == DT_STRTAB_) {
                                strtab_va = val;
                                have_strtab = true;
                        } else if (tag == DT_STRSZ_)
                                strsz = val;
                }
                if (have_strtab && (va_to_off(loads, n_loads, strtab_va, &strtab) < 0 || !inside(len, strtab, strsz))) {
                        free(info);
                        return -EBADMSG;
                }
                for (uint64_t i = 0; i < n; i++) {
                        const uint8_t *d = data + dyn_off + i * 16;
                        int64_t tag = (int64_t)rd64(d);
                        uint64_t val = rd64(d + 8);
                        int r = 0;
                        if (tag == DT_NULL_)
                                break;
                        if (tag != DT_NEEDED_ && tag != DT_SONAME_ && tag != DT_RPATH_ && tag != DT_RUNPATH_)
                                continue;
                        if (!have_strtab) {
                                free(info);
                                return -EBADMSG;
                        }
                        if (tag == DT_NEEDED_) {
                                if (info->n_needed >= LELF_MAX_NEEDED) {
                                        free(info);
                                        return -EBADMSG;
                                }
                                r = str_at(data, len, strtab, strsz, val, info->needed[info->n_needed],
                                           sizeof(info->needed[0]));
                                if (r == 0)
                                        info->n_needed++;
                        } else if (tag == DT_SONAME_)
                                r = str_at(data, len, strtab, strsz, val, info->soname, sizeof(info->soname));
                        else if (tag == DT_RPATH_)
                                r = str_at(data, len, strtab, strsz, val, info->rpath, sizeof(info->rpath));
                        else
                                r = str_at(data, len, strtab, strsz, val, info->runpath, sizeof(info->runpath));
                        if (r < 0) {
                                free(info);
                                return r;
                        }
                }
        }
        *ret = *info;
        free(info);
        return 0;
}

bool lelf_needs(const lelf_info *info, const char *name)
{
        for (unsigned i = 0; i < info->n_needed; i++)
                if (strcmp(info->needed[i], name) == 0)
                        return true;
        return false;
}
