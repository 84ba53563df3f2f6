/* SPDX-License-Identifier: Apache-2.0 */
/* Options every spinlane-agent subcommand shares, and the configuration hook. */
#include "cmd.h"

#include "inventory.h"
#include "log.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

int agent_parse_options(int argc, char **argv, const char *usage, agent_options *ret)
{
        static const struct option longopts[] = {
                {"root", required_argument, NULL, 'r'},
                {"config", required_argument, NULL, 'c'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        agent_options o = {0};
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                switch (c) {
                case 'r': o.root = optarg; break;
                case 'c': o.config = optarg; break;
                case 'j': o.json = true; break;
                case 'h':
                        fprintf(stdout, "usage: %s\n", usage);
                        return 1;
                default:
                        fprintf(stderr, "spinlane-agent %s: unknown or incomplete option '%s'\nusage: %s\n", argv[0],
                                argv[optind - 1], usage);
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "spinlane-agent %s: unexpected argument '%s'\nusage: %s\n", argv[0], argv[optind],
                        usage);
                return -EINVAL;
        }
        *ret = o;
        return 0;
}

int agent_load_config(const agent_options *o, json_t **ret)
{
        json_error_t err;

        /* HOOK(#4): replace this body with the real config parser (keys, values, errors
         * that name the key). Until then: a given file must be a readable JSON object. */
        if (!o->config) {
                *ret = NULL;
                return 0;
        }
        json_t *j = json_load_file(o->config, JSON_REJECT_DUPLICATES, &err);
        if (!j) {
                fprintf(stderr, "spinlane-agent: config %s: %s (line %d)\n", o->config, err.text, err.line);
                return -EINVAL;
        }
        if (!json_is_object(j)) {
                fprintf(stderr, "spinlane-agent: config %s: not a JSON object\n", o->config);
                json_decref(j);
                return -EINVAL;
        }
        *ret = j;
        return 0;
}

const char *agent_resource_prefix(const json_t *config)
{
        const json_t *p = config ? json_object_get(config, "resource_prefix") : NULL;
        return json_is_string(p) ? json_string_value(p) : INV_RESOURCE_PREFIX_DEFAULT;
}
