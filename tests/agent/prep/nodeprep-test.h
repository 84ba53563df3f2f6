/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the node-preparation tests: a config from JSON text (a bad test
 * config aborts the test); whether this machine can give a test a network namespace of
 * its own (decided before the test makes one). Header-only, test code. */
#ifndef SPIN_TEST_NODEPREP_H
#define SPIN_TEST_NODEPREP_H

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* NULL when a test can make a network namespace and veths here, else what is missing.
 * Asks without changing anything: after this, a failing `ip netns add` is a failure. */
static inline const char *test_netns_missing(void)
{
        if (geteuid() != 0)
                return "not root";
        if (access("/proc/self/ns/net", F_OK) != 0)
                return "no network namespaces in this kernel (/proc/self/ns/net)";
        if (system("ip netns list >/dev/null 2>&1") != 0)
                return "no iproute2 with netns support ('ip netns list' fails)";
        return NULL;
}

#endif
