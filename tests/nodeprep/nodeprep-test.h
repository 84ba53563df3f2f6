/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the node-preparation tests: a config from JSON text (a bad test
 * config aborts the test). Header-only, test code. */
#ifndef SPIN_TEST_NODEPREP_H
#define SPIN_TEST_NODEPREP_H

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline config test_config(const char *json)
{
        config c;
        char err[CONFIG_ERR_LEN];
        if (config_parse(json, strlen(json), &c, err, sizeof(err)) < 0) {
                fprintf(stderr, "bad test config: %s\n", err);
                abort();
        }
        return c;
}

#endif
