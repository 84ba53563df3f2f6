/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-agent: the table of subcommands and the dispatch to them. Each command lives
 * in its own cmd-<name>.c; add a row here to add one (run, restore, ...). */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

typedef struct agent_command {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary;
} agent_command;

static const agent_command commands[] = {
        {"preflight", cmd_preflight, "inventory of this node and the node verdicts"},
        {"inventory", cmd_inventory, "the node inventory as one JSON document"},
        {"run", cmd_run, "the daemon: node verdicts and the kubelet device plugins"},
        {"prepare", cmd_prepare, "prepare the node once (NICs, hugepages, hugetlbfs, tuning) and exit"},
        {"restore", cmd_restore, "give every NIC spinlane bound back to its original driver"},
};

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-agent <command> [--root DIR] [--config FILE] [--json] [--log-format human|json]\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return AGENT_EXIT_ERROR;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return AGENT_EXIT_OK;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        return commands[i].fn(argc - 1, argv + 1);
        fprintf(stderr, "spinlane-agent: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return AGENT_EXIT_ERROR;
}
