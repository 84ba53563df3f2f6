/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers of procfs/sysfs file contents (/proc/mounts, /proc/cmdline, uevent,
 * /proc/meminfo, PCI resource, the x86 PAT memtype list, sysfs entry names): the one
 * parser of each syntax, for the agent's inventory and node preparation and for the
 * launcher. Pure functions over (buffer, length): no I/O, no globals, never log; the
 * buffer need not be NUL-terminated; outputs are untouched on failure. */
#ifndef SPIN_PROCPARSE_H
#define SPIN_PROCPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCPARSE_PATH_LEN 256 /* mount points */

/* One flag of the kernel command line. */
typedef struct procparse_cmdline_flag {
        char name[32];
        char value[128];        /* "" for a bare flag ("nosmt"); has_value tells "x=" apart */
        bool has_value;
} procparse_cmdline_flag;

/* One /proc/mounts line. Fields longer than their buffer are cut and set truncated
 * (overlay option strings run to kilobytes); octal escapes (\040) are decoded. */
typedef struct procparse_mount {
        char source[128];
        char target[PROCPARSE_PATH_LEN];
        char fstype[32];
        char options[256];
        bool truncated;
} procparse_mount;

/* Iterate /proc/mounts: *pos starts at buf and advances past each line. Returns 1 with
 * *ret filled, 0 at the end, -EINVAL for a line with fewer than four fields (*pos still
 * advances past it, so the caller may skip it and go on). */
int procparse_mount_next(const char *buf, size_t len, size_t *pos, procparse_mount *ret);

/* The value of option key ("pagesize") in a comma-separated mount option string.
 * 1 found, 0 absent, -ENAMETOOLONG when it does not fit in size. */
int procparse_mount_option(const char *options, const char *key, char *buf, size_t size);

/* The pagesize= of a mount option in KiB ("2M", "1G", "2048k", or bytes): parse_size_kb()
 * (common/parse.h) with lower-case units and bare bytes. -EINVAL/-ERANGE. */
int procparse_size_kb(const char *s, uint64_t *ret);

/* Split a kernel command line into the flags named in keys (NULL-terminated), keeping
 * their order and repeats; double quotes group ("a=\"x y\""). At most max flags are
 * stored; *ret_n tells how many. A value longer than its field is cut; the return value
 * is the number of flags that were cut or dropped (>= 0). -EINVAL only for an
 * unterminated quote, with nothing stored. */
int procparse_cmdline(const char *buf, size_t len, const char *const *keys,
                      procparse_cmdline_flag *ret, size_t max, size_t *ret_n);

/* Value of KEY in a uevent-style file ("KEY=VALUE" lines). 1 found, 0 absent,
 * -ENAMETOOLONG when the value does not fit. */
int procparse_uevent_get(const char *buf, size_t len, const char *key, char *val, size_t size);
/* PCI_ID value "1D0F:EC20" -> vendor, device. */
int procparse_pci_id(const char *s, uint16_t *ret_vendor, uint16_t *ret_device);

/* "Key:   123 kB" line of /proc/meminfo -> 123 (the unit is not converted). 1 found,
 * 0 absent, -EINVAL bad number. */
int procparse_meminfo(const char *buf, size_t len, const char *key, uint64_t *ret);

/* The first prefetchable memory BAR in a PCI "resource" file (lines "start end flags",
 * hex). 1 found, 0 none, -EINVAL for a garbled line. */
int procparse_pci_prefetch_bar(const char *buf, size_t len, uint64_t *ret_start, uint64_t *ret_end);

/* Memory type of [start, end] in /sys/kernel/debug/x86/pat_memtype_list ("PAT: [mem
 * 0x...-0x...] write-combining"): the entry whose range contains start. 1 found (type
 * copied to buf: "write-combining", "uncached-minus", ...), 0 none. */
int procparse_pat_lookup(const char *buf, size_t len, uint64_t start, uint64_t end,
                         char *type, size_t size);

/* "hugepages-2048kB" -> 2048. -EINVAL otherwise. */
int procparse_hugepage_dirname(const char *name, uint64_t *ret_kb);
/* name == prefix followed by a decimal index <= max ("node3", "cpu17", "uverbs0").
 * -EINVAL otherwise. */
int procparse_indexed_name(const char *name, const char *prefix, unsigned max, unsigned *ret);

#endif
