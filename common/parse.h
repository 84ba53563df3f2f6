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

/* Strip one trailing newline (and any trailing spaces/tabs) in place; returns s. */
char *parse_strip(char *s);

/* True when s is a PCI address of the form DDDD:BB:DD.F (lowercase hex). */
bool parse_is_pci_addr(const char *s);
/* Parse "aa:bb:cc:dd:ee:ff" into 6 bytes. */
int parse_mac(const char *s, uint8_t ret[6]);

#endif
