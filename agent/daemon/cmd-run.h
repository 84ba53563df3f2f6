/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's entry point (cmd-run.c), called by spinlane-agent-run's main()
 * (run-main.c). spinlane-agent's `run` does not call it: it execs spinlane-agent-run
 * (agent/cmd/main.c), so the cmd room never names the daemon. */
#ifndef SPIN_CMD_RUN_H
#define SPIN_CMD_RUN_H

/* `run ARGS...` (argv[0] is the subcommand, "run", as messages name it): the options of
 * agent_parse_options() (agent/cmd/cmd.h) with --once, --kubeconfig,
 * --metrics-bind-address and --health-probe-bind-address. Verdicts at start and on
 * change, node preparation, the kubelet device plugins, the report; returns the exit code
 * (AGENT_EXIT_*) on SIGTERM/SIGINT, after --once, or on a start-up error. */
int cmd_run(int argc, char **argv);

#endif
