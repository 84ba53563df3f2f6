# SPDX-License-Identifier: Apache-2.0
"""Device plugin benchmark (on demand): `spinlane-agent run` on a fake node tree with the
kubelet stand-in. Measures Allocate p50/p99 at a fixed rate and the maximum rate (C
gRPC-core load client), re-registration time after kubelet restarts, health propagation
time, and the agent's idle CPU time and RSS. Prints one line per figure with its
parameters. Use a build without sanitizers for figures worth comparing.

usage: /usr/bin/python3 bench/deviceplugin.py --build BUILD_DIR [--idle-seconds 60]
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "deviceplugin"))
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, make_tree, rm_tree, PLUGIN_DIR  # noqa: E402


def proc_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick  # utime + stime


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def smaps_rollup(pid):
    """kB figures of /proc/PID/smaps_rollup: Rss, Pss, Shared_*, Private_*, Anonymous."""
    out = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--restarts", type=int, default=20)
    args = ap.parse_args()
    agent_bin = os.path.join(args.build, "agent", "spinlane-agent")
    loadgen = os.path.join(args.build, "deviceplugin", "deviceplugin-loadgen")
    api, gen = load_api(os.path.join(SRC, "proto"))
    root = tempfile.mkdtemp(prefix="sl-dp-bench-")
    make_tree(root)
    if not (os.access(agent_bin, os.X_OK) and os.access(loadgen, os.X_OK)):
        rm_tree(root)
        rm_tree(gen)
        sys.exit("build %s lacks agent/spinlane-agent or deviceplugin/deviceplugin-loadgen" % args.build)
    kubelet = Kubelet(api, root)
    kubelet.start()
    log = open(os.path.join(root, "agent.log"), "w")
    agent = subprocess.Popen([agent_bin, "run", "--root", root], stdout=log, stderr=subprocess.STDOUT)
    try:
        kubelet.wait_registrations(2, 10)
        sock = os.path.join(root, PLUGIN_DIR, "spinlane-dpdk-nic.sock")
        print("setup: fake node (3 NICs, 3 cores), agent %s, %d CPUs on this machine (shared with other "
              "work; client, agent and stand-in on the same CPUs)" % (agent_bin, os.cpu_count()), flush=True)

        for extra in (["--rate", str(args.rate), "--seconds", str(args.seconds), "--warmup", "2000"],
                      ["--rate", "0", "--inflight", "8", "--seconds", "5", "--warmup", "2000"],
                      ["--rate", "0", "--inflight", "1", "--seconds", "5", "--warmup", "2000"]):
            r = subprocess.run([loadgen, "--socket", sock, "--id", "0000:00:06.0"] + extra, capture_output=True,
                               text=True)
            print(r.stdout.strip() or r.stderr.strip(), flush=True)

        times = []
        for _ in range(args.restarts):
            kubelet.stop()
            kubelet = Kubelet(api, root)
            t0 = time.monotonic()
            kubelet.start(wipe=True)
            regs = kubelet.wait_registrations(2, 10)
            times.append(max(t for t, _ in regs.values()) - t0)
        print("re-registration after kubelet restart: n=%d median=%.1fms max=%.1fms (both resources)" %
              (len(times), statistics.median(times) * 1e3, max(times) * 1e3), flush=True)

        plugin = Plugin(api, root, "spinlane-dpdk-nic.sock")
        w = Watcher(plugin)
        w.wait(lambda d: True, 5)
        node = os.path.join(root, "dev/vfio/7")
        hl = []
        for i in range(10):
            n0 = len(w.lists)
            t0 = time.monotonic()
            os.unlink(node)
            got = w.wait(lambda d: d["0000:00:06.0"][0] == "Unhealthy", 5, since=n0)
            hl.append(got[0] - t0 if got else float("inf"))
            n0 = len(w.lists)
            open(node, "w").close()
            w.wait(lambda d: d["0000:00:06.0"][0] == "Healthy", 5, since=n0)
        print("health propagation (device node removed -> Unhealthy on ListAndWatch): n=%d median=%.1fms "
              "max=%.1fms" % (len(hl), statistics.median(hl) * 1e3, max(hl) * 1e3), flush=True)

        time.sleep(1)
        c0, t0 = proc_cpu_s(agent.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        c1, t1 = proc_cpu_s(agent.pid), time.monotonic()
        print("idle (one ListAndWatch stream open, kubelet up): %.1f s wall, %.3f s CPU = %.3f %% of one CPU; "
              "RSS %d KiB, peak RSS %d KiB" % (t1 - t0, c1 - c0, 100 * (c1 - c0) / (t1 - t0),
                                                proc_status(agent.pid, "VmRSS"), proc_status(agent.pid, "VmHWM")),
              flush=True)
        m = smaps_rollup(agent.pid)
        if m:
            uss = m.get("Private_Clean", 0) + m.get("Private_Dirty", 0)
            shared = m.get("Shared_Clean", 0) + m.get("Shared_Dirty", 0)
            print("memory (smaps_rollup): RSS %d KiB = private (USS) %d KiB + shared %d KiB; PSS %d KiB; "
                  "anonymous %d KiB" % (m.get("Rss", 0), uss, shared, m.get("Pss", 0), m.get("Anonymous", 0)),
                  flush=True)
        w.cancel()
        plugin.close()
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            rc = agent.wait(10)
        except subprocess.TimeoutExpired:
            agent.kill()
            rc = "killed"
        print("agent exit: %s" % rc)
        kubelet.stop()
        log.close()
        rm_tree(root)
        rm_tree(gen)


if __name__ == "__main__":
    main()
