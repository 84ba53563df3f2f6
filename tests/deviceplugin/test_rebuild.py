# SPDX-License-Identifier: Apache-2.0
"""The daemon's one rebuild path, against a kubelet stand-in speaking the real device
plugin API (Python grpcio): on the eks-x86 fixture node, a running `spinlane-agent run`
follows a changed config file without a restart - a new resource prefix makes the old
resources' streams end and their sockets go and the new resources register and list the
devices; turning CDI on writes the spec under the new prefix; a narrower core pool lists
the cores left out Unhealthy on the same registration; SIGHUP takes the same path (no
re-registration when nothing the plugins are built with changed); a kubelet restart,
once and in a loop, takes it too (logged "rebuild (kubelet restart)").

usage: test_rebuild.py --agent PATH --proto-dir DIR [--wrapper "valgrind ..."]
--wrapper: run the agent under this command (e.g. valgrind; every bound is then 20 times
longer, and valgrind's exit code makes a leak or memory error the agent's failed exit).
Exit 0 all passed, 1 a check failed, 77 skipped (grpcio/grpc_tools missing)."""
import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
except ImportError as e:
    print("SKIP: python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import kubelet_standin  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, rm_tree, wait_for  # noqa: E402
from fixture_node import EKS_ADDRESSES as ADDR, EKS_NIC6 as NIC6, EKS_NIC7 as NIC7, make_fixture  # noqa: E402

T = 60.0  # generous bound (s) for one expected event; nothing here is timed
NIC_SOCK, CORE_SOCK = "spinlane-dpdk-nic.sock", "spinlane-isolated-core.sock"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from testcheck import check, failures  # noqa: E402


def healthy(d):
    return sorted(k for k, (h, _) in d.items() if h == "Healthy")


def log_count(path, what):
    with open(path) as f:
        return f.read().count(what)


def count_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def write_config(path, conf):
    with open(path + ".tmp", "w") as f:  # as an editor or a ConfigMap swap: renamed over
        json.dump(dict(conf, addresses=ADDR), f)
    os.rename(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--wrapper", default="", help="command prefix for the agent, e.g. valgrind ...")
    args = ap.parse_args()
    wrapper = shlex.split(args.wrapper)
    kubelet_standin.SCALE = 20.0 if wrapper else 1.0
    api, gen = load_api(args.proto_dir)
    tmp = tempfile.mkdtemp(prefix="sl-rebuild-")
    agent = kubelet = None
    logpath = os.path.join(tmp, "agent.log")
    try:
        root = make_fixture(tmp, "eks-x86")
        cfg = os.path.join(tmp, "config.json")
        write_config(cfg, {})
        kubelet = Kubelet(api, root)
        kubelet.start(wipe=True)
        log = open(logpath, "w")
        # the safety re-scan far away: what happens is the config event's doing
        env = dict(os.environ, SPINLANE_RESCAN_MS="600000", SPINLANE_IMDS_URL="http://127.0.0.1:9/")
        agent = subprocess.Popen(wrapper + [args.agent, "run", "--root", root, "--config", cfg], stdout=log,
                                 stderr=subprocess.STDOUT, env=env)
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["spinlane.io/dpdk-nic", "spinlane.io/isolated-core"], "first registrations %s" %
              sorted(regs))
        nic, core = Plugin(api, root, NIC_SOCK), Plugin(api, root, CORE_SOCK)
        wn, wc = Watcher(nic), Watcher(core)
        check(wn.wait(lambda d: healthy(d) == [NIC6, NIC7], T) is not None, "two healthy NICs at start")
        check(wc.wait(lambda d: len(healthy(d)) == 6, T) is not None, "six healthy cores at start")

        # a narrower core pool: the same registration, the cores left out Unhealthy
        n0 = len(wc.lists)
        write_config(cfg, {"cores": {"cpus": "2-3,10-11"}})
        got = wc.wait(lambda d: healthy(d) == ["p0c2", "p0c3"] and len(d) == 6, T, since=n0)
        check(got is not None, "core pool 2-3,10-11: p0c2, p0c3 Healthy, the other four Unhealthy (lists %s)" %
              [healthy(d) for _, d in wc.lists[n0:]])
        check(kubelet.registrations.empty(), "a core pool change re-registers nothing")

        # SIGHUP: the same rebuild; nothing the plugins are built with changed
        agent.send_signal(signal.SIGHUP)
        check(wait_for(lambda: "rebuild (SIGHUP)" in open(logpath).read(), T), "SIGHUP: the rebuild is logged")
        check(kubelet.registrations.empty(), "SIGHUP with the same prefix re-registers nothing")
        check(wn.ended is None and wc.ended is None, "SIGHUP with the same prefix keeps the streams")

        # a new resource prefix and CDI on: torn down and built again, no restart
        write_config(cfg, {"resource_prefix": "example.com", "cores": {"cpus": "2-3,10-11"},
                           "cdi": {"enabled": True, "spec_dir": "/var/run/cdi"}})
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["example.com/dpdk-nic", "example.com/isolated-core"],
              "registrations under the new prefix: %s" % sorted(regs))
        check(wait_for(lambda: wn.ended is not None and wc.ended is not None, T),
              "the old resources' ListAndWatch streams ended")
        check("take effect at the next start" not in open(logpath).read(), "nothing waits for a restart")
        wn.cancel()
        wc.cancel()
        nic.close()
        core.close()
        nic, core = Plugin(api, root, NIC_SOCK), Plugin(api, root, CORE_SOCK)
        wn, wc = Watcher(nic), Watcher(core)
        check(wn.wait(lambda d: healthy(d) == [NIC6, NIC7], T) is not None, "new prefix: two healthy NICs")
        check(wc.wait(lambda d: healthy(d) == ["p0c2", "p0c3"], T) is not None,
              "new prefix: the narrowed pool, p0c2 and p0c3")
        spec = os.path.join(root, "var/run/cdi/example.com-dpdk-nic.json")
        check(wait_for(lambda: os.path.exists(spec), T), "CDI spec written under the new prefix")
        if os.path.exists(spec):
            with open(spec) as f:
                check(json.load(f).get("kind") == "example.com/dpdk-nic", "CDI spec kind example.com/dpdk-nic")
        # Allocate on the rebuilt plugin answers with the new prefix's CDI device names
        resp = nic.alloc([NIC6])
        names = [d.name for d in resp.container_responses[0].cdi_devices]
        check(names == ["example.com/dpdk-nic=" + NIC6], "Allocate: CDI device %s" % names)

        # CDI off again: the spec goes, the plugins are rebuilt once more
        write_config(cfg, {"resource_prefix": "example.com"})
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["example.com/dpdk-nic", "example.com/isolated-core"], "CDI off: re-registered")
        check(wait_for(lambda: not os.path.exists(spec), T), "CDI off: the spec is removed")
        wn.cancel()
        wc.cancel()
        nic.close()
        core.close()

        # a kubelet restart (every socket in the dir wiped, kubelet.sock re-created): the
        # same rebuild - the plugins torn down and built again, registered with the new
        # kubelet, ListAndWatch served with the devices of the live config
        n_rb = log_count(logpath, "rebuild (kubelet restart)")
        kubelet.stop()
        kubelet = Kubelet(api, root)
        kubelet.start(wipe=True)
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["example.com/dpdk-nic", "example.com/isolated-core"],
              "kubelet restart: registered with the new kubelet %s" % sorted(regs))
        check(wait_for(lambda: log_count(logpath, "rebuild (kubelet restart)") > n_rb, T),
              "kubelet restart: the rebuild is logged")
        nic, core = Plugin(api, root, NIC_SOCK), Plugin(api, root, CORE_SOCK)
        wn, wc = Watcher(nic), Watcher(core)
        check(wn.wait(lambda d: healthy(d) == [NIC6, NIC7], T) is not None, "kubelet restart: two healthy NICs")
        check(wc.wait(lambda d: len(healthy(d)) == 6, T) is not None, "kubelet restart: six healthy cores")
        wn.cancel()
        wc.cancel()
        nic.close()
        core.close()

        # a kubelet restarting in a loop: the events coalesce into rebuilds (never more
        # than one per restart), the agent ends up registered with the last kubelet and
        # serving, and gives back what the torn-down plugins held (file descriptors)
        fds0 = count_fds(agent.pid)
        n_rb = log_count(logpath, "rebuild (kubelet restart)")
        restarts = 8
        for _ in range(restarts):
            kubelet.stop()
            kubelet = Kubelet(api, root)
            kubelet.start(wipe=True)
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["example.com/dpdk-nic", "example.com/isolated-core"],
              "kubelet restart loop: registered with the last kubelet %s" % sorted(regs))
        nic = Plugin(api, root, NIC_SOCK)
        wn = Watcher(nic)
        check(wn.wait(lambda d: healthy(d) == [NIC6, NIC7], T) is not None, "kubelet restart loop: NICs served")
        wn.cancel()
        nic.close()
        rebuilds = log_count(logpath, "rebuild (kubelet restart)") - n_rb
        check(1 <= rebuilds <= restarts, "kubelet restart loop: %d rebuilds for %d restarts" % (rebuilds, restarts))
        check(wait_for(lambda: count_fds(agent.pid) <= fds0 + 4, T),
              "kubelet restart loop: file descriptors back to %d (now %d)" % (fds0, count_fds(agent.pid)))
        check(agent.poll() is None, "kubelet restart loop: the agent still runs")

        agent.send_signal(signal.SIGTERM)
        check(agent.wait(T * kubelet_standin.SCALE) == 0, "agent exit 0")
        log.close()
    finally:
        if agent and agent.poll() is None:
            agent.kill()
            agent.wait()
        if kubelet:
            kubelet.stop()
        if failures and os.path.exists(logpath):
            with open(logpath) as f:
                print("---- agent log ----\n" + "".join(f.readlines()[-60:]))
        rm_tree(tmp)
        rm_tree(gen)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
