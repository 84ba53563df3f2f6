/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-agent: the table of subcommands and the dispatch to them. Each command lives
 * in its own cmd-<name>.c; add a row here to add one (run, restore, ...). `run` (the
 * daemon) is a separate executable, spinlane-agent-run, installed next to this one: it
 * links the gRPC core and libstdc++, whose start-up cost every other command would pay
 * (issue #2: preflight < 5 ms, < 4 MiB). This binary links neither; its `run` execs the
 * sibling (exec, not fork: same PID, signals and PID 1 semantics). */
#include "cmd.h"
#include "version.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AGENT_RUN_BINARY "spinlane-agent-run"

/* `spinlane-agent run ARGS...` -> execv("<dir of /proc/self/exe>/spinlane-agent-run",
 * ARGS...). Returns only on failure: the path it tried is named, exit 2. */
static int cmd_run_exec(int argc, char **argv)
{
        char self[PATH_MAX], path[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char *slash;

        (void)argc;
        if (n < 0) {
                fprintf(stderr, "spinlane-agent run: /proc/self/exe: %s (cannot find %s)\n", strerror(errno),
                        AGENT_RUN_BINARY);
                return AGENT_EXIT_ERROR;
        }
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (!slash || (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self), self, AGENT_RUN_BINARY) >=
                              sizeof(path)) {
                fprintf(stderr, "spinlane-agent run: cannot place %s next to '%s'\n", AGENT_RUN_BINARY, self);
                return AGENT_EXIT_ERROR;
        }
        /* the daemon's argv: its own path, then everything after "run" */
        argv[0] = path;
        execv(path, argv);
        fprintf(stderr, "spinlane-agent run: cannot execute the daemon %s: %s (it is installed next to spinlane-agent)\n",
                path, strerror(errno));
        return AGENT_EXIT_ERROR;
}

typedef struct agent_command {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary;
} agent_command;

static const agent_command commands[] = {
        {"preflight", cmd_preflight, "inventory of this node and the node verdicts"},
        {"inventory", cmd_inventory, "the node inventory as one JSON document"},
        {"explain", cmd_explain, "each NIC and core: advertised to the kubelet, or why not"},
        {"run", cmd_run_exec, "the daemon: node verdicts and the kubelet device plugins"},
        {"prepare", cmd_prepare, "prepare the node once (NICs, hugepages, hugetlbfs, tuning) and exit"},
        {"restore", cmd_restore, "give every NIC spinlane bound back to its original driver"},
};

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-agent <command> [--root DIR] [--config FILE] [--json] [--log-format human|json]\n"
                   "       spinlane-agent --version\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
        /* nothing any command creates is writable by others, whatever umask came down
         * (`run` execs the daemon, which inherits it and sets it again) */
        umask(022);
        if (argc < 2) {
                usage(stderr);
                return AGENT_EXIT_ERROR;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return AGENT_EXIT_OK;
        }
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
                printf("spinlane-agent %s\n", SPINLANE_VERSION);
                return AGENT_EXIT_OK;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        return commands[i].fn(argc - 1, argv + 1);
        fprintf(stderr, "spinlane-agent: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return AGENT_EXIT_ERROR;
}
