/* SPDX-License-Identifier: Apache-2.0 */
/* Numeric environment knobs: bounds, default, the message for a bad value. Never logs. */
#include "envknob.h"

#include "errbuf.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

int envknob_parse_u64(const char *name, const char *value, uint64_t min, uint64_t max, uint64_t def,
                      uint64_t *ret, char *why, size_t why_size)
{
        uint64_t v;
        int r;

        if (!value || !*value) {
                *ret = def;
                return 0;
        }
        r = parse_u64(value, max, &v);
        if (r == 0 && v < min)
                r = -ERANGE;
        if (r < 0) {
                errbuf_printf(why, why_size, "%s=%.80s: not %" PRIu64 "..%" PRIu64, name, value, min, max);
                *ret = def;
                return r;
        }
        *ret = v;
        return 0;
}

int envknob_u64(const char *name, uint64_t min, uint64_t max, uint64_t def, uint64_t *ret, char *why,
                size_t why_size)
{
        return envknob_parse_u64(name, getenv(name), min, max, def, ret, why, why_size);
}
