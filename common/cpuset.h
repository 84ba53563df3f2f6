/* SPDX-License-Identifier: Apache-2.0 */
/* CPU sets and the kernel's CPU list syntax ("0-3,8,10-11"; empty = empty set).
 * Pure value type, no I/O, never logs. */
#ifndef SPIN_CPUSET_H
#define SPIN_CPUSET_H

#include <stdbool.h>
#include <stddef.h>

/* Highest CPU id + 1 that spinlane accepts anywhere (the kernel's NR_CPUS default is
 * 8192 on distro kernels, but no node that runs this has more than 4096). */
#define CPUSET_MAX 4096

typedef struct cpuset {
        unsigned long long bits[CPUSET_MAX / 64];
} cpuset;

/* Parse a CPU list of len bytes (need not be NUL-terminated; one trailing newline is
 * accepted). Errors: -EINVAL for bad syntax ("1,,2", "3-1", "2-", "a"), -ERANGE for a
 * CPU >= CPUSET_MAX. *ret is untouched on failure. */
int cpuset_parse(const char *s, size_t len, cpuset *ret);
/* Also accepts the hex mask form of Cpus_allowed ("ff,00000001"). */
int cpuset_parse_mask(const char *s, size_t len, cpuset *ret);

/* Format as a canonical list into buf (always NUL-terminated). Returns the length the
 * full list needs (like snprintf); a result >= size means it was cut short. */
size_t cpuset_format(const cpuset *set, char *buf, size_t size);

void cpuset_zero(cpuset *set);
void cpuset_set(cpuset *set, unsigned cpu);
void cpuset_clear(cpuset *set, unsigned cpu);
bool cpuset_has(const cpuset *set, unsigned cpu);
unsigned cpuset_count(const cpuset *set);
bool cpuset_empty(const cpuset *set);
bool cpuset_equal(const cpuset *a, const cpuset *b);
/* a ⊆ b */
bool cpuset_subset(const cpuset *a, const cpuset *b);
bool cpuset_intersects(const cpuset *a, const cpuset *b);
void cpuset_and(cpuset *ret, const cpuset *a, const cpuset *b);
void cpuset_or(cpuset *ret, const cpuset *a, const cpuset *b);
/* a \ b */
void cpuset_andnot(cpuset *ret, const cpuset *a, const cpuset *b);
/* Next CPU >= from in the set, or -1. Iterate: for (int c = cpuset_next(s, 0); c >= 0; c = cpuset_next(s, c + 1)) */
int cpuset_next(const cpuset *set, unsigned from);

#define CPUSET_FOREACH(cpu, set) for (int cpu = cpuset_next((set), 0); cpu >= 0; cpu = cpuset_next((set), (unsigned)cpu + 1))

#endif
