/* SPDX-License-Identifier: Apache-2.0 */
/* The one parser of the daemon's numeric environment knobs (SPINLANE_RESCAN_MS,
 * SPINLANE_KUBE_RESYNC_MS, SPINLANE_PODRES_MS, ...): a name, bounds and a default. Never
 * logs: a bad value comes back as a message for the caller to log. */
#ifndef SPIN_ENVKNOB_H
#define SPIN_ENVKNOB_H

#include <stddef.h>
#include <stdint.h>

/* value (of the knob called name; NULL or "" when unset) as a decimal number in [min, max]
 * (parse_u64: digits only, no sign, no spaces). 0 with *ret the number, or def when unset;
 * on a bad value -EINVAL (not a number) or -ERANGE (outside min..max), *ret = def (a knob
 * always has a value to go on with) and why = "NAME=VALUE: not MIN..MAX" (VALUE cut at 80
 * bytes), to be logged with ", ignored". Pure. */
int envknob_parse_u64(const char *name, const char *value, uint64_t min, uint64_t max, uint64_t def,
                      uint64_t *ret, char *why, size_t why_size);

/* The same for getenv(name). */
int envknob_u64(const char *name, uint64_t min, uint64_t max, uint64_t def, uint64_t *ret, char *why,
                size_t why_size);

#endif
