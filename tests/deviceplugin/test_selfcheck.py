# SPDX-License-Identifier: Apache-2.0
"""The daemon's self-check of its gRPC servers (issue 31), against a kubelet stand-in
speaking the real device plugin API (Python grpcio): `spinlane-agent run` on the eks-x86
fixture node registers both device plugins and /healthz answers 200; then the agent runs
out of file descriptors for real (its RLIMIT_NOFILE lowered under the fds it holds, with
prlimit from outside: no accept, no socket, no eventfd can succeed any more; gRPC's
accept fails with EMFILE and says nothing to the agent): the self-check fails, a log line
names the socket and why, /healthz (asked on a connection opened before, kept alive)
answers 503 with why, and the rebuild runs; the limit given back, the device plugins
are built again, register with the kubelet, serve ListAndWatch, and /healthz is 200
again. The same for the DRA kubelet plugin (--dra-resources nic,core): its
registration server's GetInfo fails, /healthz 503, the plugin restarted, then 200.

usage: test_selfcheck.py --agent PATH --proto-dir DIR [--wrapper "valgrind ..."]
Exit 0 all passed, 1 a check failed, 77 skipped (grpcio/grpc_tools or prlimit missing)."""
import argparse
import http.client
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

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
NIC_SOCK = "spinlane-dpdk-nic.sock"
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from testcheck import check, failures  # noqa: E402


def healthy(d):
    return sorted(k for k, (h, _) in d.items() if h == "Healthy")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_text(path):
    with open(path) as f:
        return f.read()


class Prober:
    """/healthz on one kept-alive connection (opened while the agent still has fds), asked
    often enough that the probe listener's idle deadlines never close it."""

    def __init__(self, port):
        self.port = port
        self.c = None

    def get(self):
        if self.c is None:
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10 * kubelet_standin.SCALE)
        try:
            self.c.request("GET", "/healthz")
            r = self.c.getresponse()
            return r.status, r.read().decode()
        except (OSError, http.client.HTTPException) as e:
            self.c.close()
            self.c = None
            return None, str(e)

    def wait(self, status, timeout):
        """Poll (every 0.2 s) until /healthz answers status; the answers seen."""
        seen = []
        deadline = time.monotonic() + timeout * kubelet_standin.SCALE
        while time.monotonic() < deadline:
            got = self.get()
            if not seen or seen[-1] != got:
                seen.append(got)
            if got[0] == status:
                return got, seen
            time.sleep(0.2)
        return None, seen


def limit_fds(prlimit, pid):
    """RLIMIT_NOFILE of pid lowered to its lowest free fd: no new fd at all. The old
    (soft, hard) limits."""
    before = subprocess.run([prlimit, "--pid", str(pid), "--nofile", "--raw", "--noheadings",
                             "--output=SOFT,HARD"], capture_output=True, text=True).stdout.split()
    fds = sorted(int(x) for x in os.listdir("/proc/%d/fd" % pid))
    low = next(i for i in range(len(fds) + 1) if i >= len(fds) or fds[i] != i)
    subprocess.run([prlimit, "--pid", str(pid), "--nofile=%d:%d" % (low, int(before[1]))], check=True)
    return before


def test_dra(args, wrapper, prlimit, tmp):
    """The DRA kubelet plugin (--dra-resources nic,core: no device plugin): its
    registration socket's GetInfo fails out of fds, /healthz 503, the plugin is stopped
    and started again; the fds back, it serves again and /healthz is 200."""
    root = make_fixture(os.path.join(tmp, "dra"), "eks-x86")
    cfg = os.path.join(tmp, "dra.json")
    with open(cfg, "w") as f:
        json.dump({"addresses": ADDR}, f)
    logpath = os.path.join(tmp, "dra.log")
    pport = free_port()
    env = dict(os.environ, SPINLANE_RESCAN_MS="600000", SPINLANE_IMDS_URL="http://127.0.0.1:9/",
               SPINLANE_SELFCHECK_MS="1000")
    with open(logpath, "w") as log:
        agent = subprocess.Popen(wrapper + [args.agent, "run", "--root", root, "--config", cfg, "--dra-resources",
                                            "nic,core", "--health-probe-bind-address", "127.0.0.1:%d" % pport],
                                 stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        probe = Prober(pport)
        got, seen = probe.wait(200, T)
        check(got is not None, "DRA: /healthz 200 while the plugin answers (seen %s)" % seen)
        check(wait_for(lambda: "DRA: serving" in log_text(logpath), T), "DRA: the plugin serves")
        before = limit_fds(prlimit, agent.pid)
        got, seen = probe.wait(503, T)
        check(got is not None and "DRA socket" in got[1], "DRA out of fds: /healthz 503 naming the socket (seen %s)"
              % seen)
        check(wait_for(lambda: "DRA: restarting the kubelet plugin" in log_text(logpath), T),
              "DRA out of fds: the plugin is restarted")
        subprocess.run([prlimit, "--pid", str(agent.pid), "--nofile=%s:%s" % (before[0], before[1])], check=True)
        got, seen = probe.wait(200, T)
        check(got is not None, "DRA fds back: /healthz 200 again (seen %s)" % seen)
        check(log_text(logpath).count("DRA: serving") >= 2, "DRA fds back: the plugin serves again")
        agent.send_signal(signal.SIGTERM)
        check(agent.wait(T * kubelet_standin.SCALE) == 0, "DRA: agent exit 0")
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        if (failures or os.environ.get("SHOW_LOG")) and os.path.exists(logpath):
            print("---- agent log (DRA) ----\n" + "".join(open(logpath).readlines()[-60 if failures else 0:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--wrapper", default="", help="command prefix for the agent, e.g. valgrind ...")
    args = ap.parse_args()
    prlimit = shutil.which("prlimit")
    if not prlimit:
        print("SKIP: prlimit (util-linux) missing")
        return 77
    wrapper = shlex.split(args.wrapper)
    kubelet_standin.SCALE = 20.0 if wrapper else 1.0
    api, gen = load_api(args.proto_dir)
    tmp = tempfile.mkdtemp(prefix="sl-selfcheck-")
    agent = kubelet = None
    logpath = os.path.join(tmp, "agent.log")
    try:
        root = make_fixture(tmp, "eks-x86")
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump({"addresses": ADDR}, f)
        kubelet = Kubelet(api, root)
        kubelet.start(wipe=True)
        pport = free_port()
        log = open(logpath, "w")
        env = dict(os.environ, SPINLANE_RESCAN_MS="600000", SPINLANE_IMDS_URL="http://127.0.0.1:9/",
                   SPINLANE_SELFCHECK_MS="1000")
        agent = subprocess.Popen(wrapper + [args.agent, "run", "--root", root, "--config", cfg,
                                            "--health-probe-bind-address", "127.0.0.1:%d" % pport],
                                 stdout=log, stderr=subprocess.STDOUT, env=env)
        regs = kubelet.wait_registrations(2, T)
        check(sorted(regs) == ["spinlane.io/dpdk-nic", "spinlane.io/isolated-core"], "first registrations %s" %
              sorted(regs))
        probe = Prober(pport)
        got, seen = probe.wait(200, T)
        check(got is not None, "/healthz 200 while the servers answer (seen %s)" % seen)
        # a few rounds of the check pass: nothing said
        time.sleep(3)
        check("self-check" not in log_text(logpath), "passing checks log nothing")

        # out of file descriptors: the soft and hard limit below the lowest fd free, so no
        # new fd at all (the kept-alive probe connection is already there)
        before = limit_fds(prlimit, agent.pid)
        got, seen = probe.wait(503, T)
        check(got is not None and "not healthy" in got[1], "out of fds: /healthz 503 with why (seen %s)" % seen)
        check(wait_for(lambda: "self-check: device plugin socket " in log_text(logpath), T),
              "out of fds: the log names the socket that failed")
        check(wait_for(lambda: "rebuild (self-check failed)" in log_text(logpath), T),
              "out of fds: the rebuild runs")
        # a kubelet's new connection gets no answer while it lasts
        stuck = Plugin(api, root, NIC_SOCK)
        try:
            stuck.alloc([NIC6], timeout=2.0)
            answered = True
        except Exception:
            answered = False
        stuck.close()
        check(not answered, "out of fds: a new kubelet connection is not served")

        # the limit given back: rebuilt, registered, served, healthy
        subprocess.run([prlimit, "--pid", str(agent.pid), "--nofile=%s:%s" % (before[0], before[1])], check=True)
        regs = set()
        try:
            while len(regs) < 2:  # whatever registered before the limit bit comes first
                regs |= set(kubelet.wait_registrations(1, T))
        except Exception as e:
            print("registrations: %s" % e)
        check(sorted(regs) == ["spinlane.io/dpdk-nic", "spinlane.io/isolated-core"],
              "fds back: the rebuilt plugins register (%s)" % sorted(regs))
        got, seen = probe.wait(200, T)
        check(got is not None, "fds back: /healthz 200 again (seen %s)" % seen)
        check("every gRPC server answers again" in log_text(logpath), "fds back: the recovery is logged")
        nic = Plugin(api, root, NIC_SOCK)
        wn = Watcher(nic)
        check(wn.wait(lambda d: healthy(d) == [NIC6, NIC7], T) is not None, "fds back: ListAndWatch serves the NICs")
        wn.cancel()
        nic.close()

        agent.send_signal(signal.SIGTERM)
        check(agent.wait(T * kubelet_standin.SCALE) == 0, "agent exit 0")
        log.close()
        test_dra(args, wrapper, prlimit, tmp)
    finally:
        if agent and agent.poll() is None:
            agent.kill()
            agent.wait()
        if kubelet:
            kubelet.stop()
        if (failures or os.environ.get("SHOW_LOG")) and os.path.exists(logpath):
            with open(logpath) as f:
                print("---- agent log ----\n" + "".join(f.readlines()[-60 if failures else 0:]))
        rm_tree(tmp)
        rm_tree(gen)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
