/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-agent-run: the daemon (`spinlane-agent run`) as its own executable, so that the
 * gRPC core and libstdc++ it links stay out of spinlane-agent. spinlane-agent's `run`
 * execs this with the arguments after "run"; it can also be run directly:
 * `spinlane-agent-run [--root DIR] [--config FILE] [--once] ...`. */
#include "cmd-run.h"

#include <sys/stat.h>

int main(int argc, char **argv)
{
        static char name[] = "run"; /* cmd_run's argv[0]: the subcommand, as in messages */

        /* whatever umask the container runtime handed down (000 is common), nothing the
         * daemon creates (dirs, sockets, state) is writable by others; the files that
         * matter also get their mode set explicitly (hostfs_write_atomic, the plugin
         * sockets' chmod) */
        umask(022);
        argv[0] = name;
        return cmd_run(argc, argv);
}
