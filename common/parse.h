/* SPDX-License-Identifier: Apache-2.0 */
/* Checked parsing of numbers and small tokens from untrusted text (sysfs, procfs, env,
 * config). No I/O, no globals, never logs. Outputs are untouched on failure. */
#ifndef SPIN_PARSE_H
#define SPIN_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal unsigned integer, the whole string, no sign, no spaces, at most max.
 * -EINVAL for garbage or empty, -ERANGE above max. */
int parse_u64(const char *s, uint64_t max, uint64_t *ret);
/* Same, for an int in [min, max] with an optional leading '-'. */
int parse_int(const char *s, int min, int max, int *ret);
/* Hexadecimal with an optional 0x prefix, at most max. */
int parse_hex_u64(const char *s, uint64_t max, uint64_t *ret);

/* A size in kB from "<n><unit>" (len bytes of s, no NUL among them): unit k, K, kB, KB or
 * Ki (kB); M, MB or Mi (MiB); G, GB or Gi (GiB). PARSE_SIZE_LOWER also takes m and g;
 * PARSE_SIZE_BYTES takes a bare <n> as bytes (a whole number of kB). The one parser of
 * size suffixes: the config's page sizes, the kernel's pagesize= mount option (the agent
 * and the launcher). -EINVAL for garbage or empty, -ERANGE on overflow. */
#define PARSE_SIZE_LOWER 1u
#define PARSE_SIZE_BYTES 2u
int parse_size_kb(const char *s, size_t len, unsigned flags, uint64_t *ret);

/* The suffixes format_size_kb() writes for kB, MiB and GiB. */
typedef struct size_units {
        const char *k, *m, *g;
} size_units;
#define SIZE_UNITS_KERNEL ((size_units){ "K", "M", "G" })           /* memparse: mount options */
#define SIZE_UNITS_CONFIG ((size_units){ "kB", "M", "G" })          /* the config's page sizes */
#define SIZE_UNITS_HUMAN ((size_units){ " kB", " MiB", " GiB" })    /* messages */
/* kb in the largest of kB, MiB and GiB that divides it ("2M", "1 GiB", "64kB"), into buf
 * as snprintf does (the return is the length it needed). The one printer of sizes. */
int format_size_kb(uint64_t kb, size_units u, char *buf, size_t size);

/* Strip one trailing newline (and any trailing spaces/tabs) in place; returns s. */
char *parse_strip(char *s);

/* True when s is a PCI address of the form DDDD:BB:DD.F (lowercase hex). */
bool parse_is_pci_addr(const char *s);
/* One hex digit's value (0..15, either case), or -1. */
int parse_hex_digit(char c);
/* Parse "aa:bb:cc:dd:ee:ff" into 6 bytes. */
int parse_mac(const char *s, uint8_t ret[6]);

#endif
