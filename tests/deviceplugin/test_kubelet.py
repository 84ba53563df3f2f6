# SPDX-License-Identifier: Apache-2.0
"""Integration test: `spinlane-agent run --root <fake node>` against a kubelet stand-in
speaking the real device plugin API (Python grpcio) over unix sockets.

usage: test_kubelet.py --agent PATH --proto-dir DIR [--quick] [--wrapper "valgrind ..."]
--quick: fewer kubelet restarts and streams. --wrapper: run the agent under this command
(e.g. valgrind); every timeout is then multiplied by --scale (default 20 with a wrapper).
The agent must still exit 0 on SIGTERM (valgrind: --error-exitcode makes a leak or memory
error a failure). Nothing here asserts a latency (bench/deviceplugin.py measures them):
each step waits for its event up to a generous bound (T, scaled), and where a safety-net
timer could stand in for the event under test it is set far away, so the event is what
made it happen. Latencies are printed.
Exit 0 all passed, 1 a check failed, 77 skipped (grpcio/grpc_tools missing)."""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
except ImportError as e:
    print("SKIP: python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent", "cloud"))
import kubelet_standin  # noqa: E402
from imds_standin import FakeImds  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, make_tree, rm_tree, wait_for, PLUGIN_DIR  # noqa: E402

NIC = "spinlane.io/dpdk-nic"
CORE = "spinlane.io/isolated-core"
NIC_SOCK = "spinlane-dpdk-nic.sock"
CORE_SOCK = "spinlane-isolated-core.sock"

T = 30.0       # generous bound (s, before scaling) for one expected event
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
WRAPPER = []   # command prefix for the agent (--wrapper)
S = 1.0        # time scale (--scale)


def status_of(fn):
    try:
        fn()
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def envs(resp, i=0):
    return dict(resp.container_responses[i].envs)


def specs(resp, i=0):
    return {d.container_path: (d.host_path, d.permissions) for d in resp.container_responses[i].devices}


class Agent:
    def __init__(self, binary, root, log, extra=(), env=None, umask=-1):
        self.log = open(log, "w")
        self.path = log
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(WRAPPER + [binary, "run", "--root", root] + list(extra), stdout=self.log,
                                  stderr=subprocess.STDOUT, env=e, umask=umask)

    def text(self):
        with open(self.path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=T):
        self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout * S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
            rc = "timeout"
        self.log.close()
        # gRPC's own teardown ended before the exit (else, under valgrind, its connections
        # would be reported as lost; natively nothing else would show it)
        check("has not finished closing" not in self.text(), "%s: gRPC's teardown finished before the exit" %
              os.path.basename(self.path))
        return rc


def tick_values(pid):
    """Time left (ns) on each of pid's timerfds with a 1 s period - the device plugin
    engine's safety tick (dp_register_on_tick) - by fd, from /proc/<pid>/fdinfo."""
    out = {}
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(r"it_value: \((\d+), (\d+)\)", text)
        if m and "it_interval: (1, 0)" in text:
            out[fd] = int(m.group(1)) * 10**9 + int(m.group(2))
    return out


def wait_ticks(agent, n, what):
    """Wait (bounded) until the agent's 1 s safety tick has fired n times from now: the
    time left on its periodic timerfd goes up at each expiry. A check, named by what."""
    last, fired = tick_values(agent.p.pid), {}
    deadline = time.monotonic() + (n + T) * S
    while time.monotonic() < deadline:
        now = tick_values(agent.p.pid)
        for fd, v in now.items():
            if fd in last and v > last[fd]:
                fired[fd] = fired.get(fd, 0) + 1
        last = now
        if any(k >= n for k in fired.values()):
            return True
        time.sleep(0.02)
    return check(False, "%s: the agent's 1 s tick fired %d times within %.0f s, want %d (1 s timerfds: %s)" %
                 (what, max(fired.values(), default=0), (n + T) * S, n, sorted(last)))


def check_exec(agent):
    """`spinlane-agent run` execs spinlane-agent-run in place: the PID we started now runs
    the daemon; under valgrind (--trace-children=yes) still valgrind's tool, so the
    daemon itself is what memcheck checks."""
    with open("/proc/%d/cmdline" % agent.p.pid, "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0") if a]
    exe = os.path.basename(os.readlink("/proc/%d/exe" % agent.p.pid))
    check(any(os.path.basename(a) == "spinlane-agent-run" for a in argv) and "run" not in argv,
          "the agent's PID runs spinlane-agent-run after the exec (argv %s)" % argv)
    if any("valgrind" in w for w in WRAPPER):
        check(exe != "spinlane-agent-run", "the daemon runs under valgrind, not natively (exe %s)" % exe)
    elif not WRAPPER:
        check(exe == "spinlane-agent-run", "exe %s after the exec" % exe)


def test_all(args, api, root):
    kdir = os.path.join(root, PLUGIN_DIR)
    # a stale regular file where the NIC socket goes: the agent must replace it
    with open(os.path.join(kdir, NIC_SOCK), "w") as f:
        f.write("stale")

    # the 10 s safety re-scan far away: health changes must come from inotify
    agent = Agent(args.agent, root, os.path.join(root, "agent.log"), env={"SPINLANE_RESCAN_MS": "600000"})
    kubelet = Kubelet(api, root)
    try:
        # serving before any kubelet; no registration attempt loops while kubelet.sock is absent
        check(wait_for(lambda: all(os.path.exists(os.path.join(kdir, s)) for s in (NIC_SOCK, CORE_SOCK)), T),
              "both plugin sockets served without a kubelet")
        check_exec(agent)
        nic = Plugin(api, root, NIC_SOCK)
        core = Plugin(api, root, CORE_SOCK)
        opts = nic.options(api.Empty(), timeout=T * S)
        check(opts.get_preferred_allocation_available and not opts.pre_start_required,
              "options: preferred allocation available, no PreStartContainer")
        c0 = cpu_seconds(agent.p.pid)
        wait_ticks(agent, 2, "no kubelet")  # a window with a few 1 s checks in it
        check("Register" not in agent.text(), "no Register attempts while kubelet.sock is absent")
        if not WRAPPER:  # the wrapper's own CPU time would count
            check(cpu_seconds(agent.p.pid) - c0 < 0.2, "waiting for the kubelet does not spin")
        n = agent.text().count("waiting for %s" % os.path.join(kdir, "kubelet.sock"))
        check(n == 1, "'waiting for kubelet.sock' logged once (%d times)" % n)

        # kubelet appears: both register (no attempt before, so kubelet.sock's creation
        # started them, or the 1 s check did)
        t0 = time.monotonic()
        kubelet.start(wipe=False)
        regs = kubelet.wait_registrations(2, T)
        for res, sock in ((NIC, NIC_SOCK), (CORE, CORE_SOCK)):
            t, req = regs[res]
            check(req.version == "v1beta1" and req.endpoint == sock, "%s Register fields %s" % (res, req))
            check(req.options.get_preferred_allocation_available, "%s Register options" % res)
            print("%s registered %.3f s after kubelet.sock appeared" % (res, t - t0), flush=True)

        # exact device lists with topology
        nw, cw = Watcher(nic), Watcher(core)
        want_nics = {"0000:00:06.0": ("Healthy", [0]), "0000:00:07.0": ("Healthy", [1]),
                     "7870:00:00.0": ("Healthy", None)}
        want_cores = {"p0c1": ("Healthy", [0]), "p0c2": ("Healthy", [1]), "p0c3": ("Healthy", [1])}
        # (the NICs turn Healthy once the metadata stand-in has given their addresses)
        got = nw.wait(lambda d: d == want_nics, T)
        check(got and got[1] == want_nics, "NIC list %s" % (nw.lists[-1][1] if nw.lists else None))
        got = cw.wait(lambda d: True, T)
        check(got and got[1] == want_cores, "core list %s" % (got and got[1]))

        # Allocate: ENA vfio (IOMMU), ENA vfio no-IOMMU, MANA in one container
        r = nic.alloc(["7870:00:00.0", "0000:00:07.0", "0000:00:06.0"])
        e = envs(r)
        check(e.get("SPINLANE_DPDK_NICS") == "0000:00:06.0,0000:00:07.0,7870:00:00.0", "SPINLANE_DPDK_NICS %s" % e)
        check(e.get("SPINLANE_NIC_0_KIND") == "ena" and e.get("SPINLANE_NIC_0_DRIVER") == "vfio-pci" and
              e.get("SPINLANE_NIC_0_DEVARGS") == "0000:00:06.0" and e.get("SPINLANE_NIC_0_NUMA") == "0" and
              e.get("SPINLANE_NIC_0_DEVICES") == "/dev/vfio/vfio,/dev/vfio/7", "ENA vfio env %s" % e)
        check(e.get("SPINLANE_NIC_1_DEVICES") == "/dev/vfio/vfio,/dev/vfio/3" and
              e.get("SPINLANE_NIC_1_NUMA") == "1", "ENA no-IOMMU env %s" % e)
        check(e.get("SPINLANE_NIC_2_KIND") == "mana" and e.get("SPINLANE_NIC_2_DRIVER") == "mana" and
              e.get("SPINLANE_NIC_2_MAC") == "00:0d:3a:11:22:33" and
              e.get("SPINLANE_NIC_2_DEVARGS") == "7870:00:00.0,mac=00:0d:3a:11:22:33" and
              e.get("SPINLANE_NIC_2_DEVICES") == "/dev/infiniband/uverbs0", "MANA env %s" % e)
        # hugetlbfs.pod_mount false (the default): the pod brings its own hugetlbfs
        check("SPINLANE_HUGEPAGE_DIR" not in e, "no hugepage dir env by default")
        check(e.get("SPINLANE_NIC_0_IPV4") == "10.0.6.10/24" and e.get("SPINLANE_NIC_0_GATEWAY") == "10.0.6.1" and
              e.get("SPINLANE_NIC_0_MAC") == "0a:00:00:00:00:06" and e.get("SPINLANE_NIC_2_IPV4") == "10.1.0.4/24",
              "NIC addresses (from the metadata stand-in) and the recorded MAC %s" % e)
        s = specs(r)
        check(s == {"/dev/vfio/vfio": ("/dev/vfio/vfio", "rw"), "/dev/vfio/7": ("/dev/vfio/7", "rw"),
                    "/dev/vfio/3": ("/dev/vfio/noiommu-3", "rw"),
                    "/dev/infiniband/uverbs0": ("/dev/infiniband/uverbs0", "rw")},
              "device specs (host paths without --root) %s" % s)
        m = r.container_responses[0].mounts
        check(len(m) == 0, "no hugetlbfs mount by default (the node's is not shared) %s" % m)
        check(dict(r.container_responses[0].annotations).get("spinlane.io/dpdk-nics") ==
              "0000:00:06.0,0000:00:07.0,7870:00:00.0", "annotation")
        check(all(root not in v for v in list(e.values()) + [h for h, _ in s.values()]), "no --root in answers")

        r = core.alloc(["p0c3", "p0c1"])
        e = envs(r)
        check(e.get("SPINLANE_ISOLATED_CPUS") == "1,3,5,7" and e.get("SPINLANE_ISOLATED_CORES") == "p0c1,p0c3",
              "core env %s" % e)

        # bad requests: INVALID_ARGUMENT naming the ID; nothing partly applied; agent stays up
        for ids, needle in ((["0000:00:99.0"], "0000:00:99.0"), (["0000:00:06.0", "0000:00:06.0"], "0000:00:06.0"),
                            ([], "no devices")):
            code, msg = status_of(lambda: nic.alloc(ids))
            check(code == grpc.StatusCode.INVALID_ARGUMENT and needle in msg, "Allocate %s -> %s %s" % (ids, code, msg))
        code, msg = status_of(lambda: nic.allocate(api.AllocateRequest(), timeout=T * S))
        check(code == grpc.StatusCode.INVALID_ARGUMENT, "empty AllocateRequest -> %s %s" % (code, msg))
        code, msg = status_of(lambda: nic.allocate_raw(b"\x0a\x05\x0a\x7f\x41", timeout=T * S))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "malformed" in msg, "garbage -> %s %s" % (code, msg))
        code, msg = status_of(lambda: nic.allocate_raw(b"\x0a" + b"\xff" * 9, timeout=T * S))
        check(code == grpc.StatusCode.INVALID_ARGUMENT, "bad varint -> %s %s" % (code, msg))
        code, msg = status_of(lambda: nic.allocate_raw(b"\x00" * (2 << 20), timeout=T * S))
        check(code == grpc.StatusCode.RESOURCE_EXHAUSTED, "2 MiB request -> %s %s" % (code, msg))
        # a device ID with a NUL inside: protobuf-c alone decodes it as the real device 0000:00:06.0
        code, msg = status_of(lambda: nic.allocate_raw(b"\x0a\x13\x0a\x11" + b"0000:00:06.0\x00junk", timeout=T * S))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "0000:00:06.0\\x00junk" in msg and "NUL" in msg,
              "Allocate \"0000:00:06.0\\0junk\" -> %s %s" % (code, msg))
        code, msg = status_of(lambda: nic.unknown(b"", timeout=T * S))
        check(code == grpc.StatusCode.UNIMPLEMENTED, "unknown method -> %s" % code)
        # refusals are answered on the gRPC thread, reported (logged) by the loop thread
        check(wait_for(lambda: "request refused (status 3): " in agent.text() and "0000:00:99.0" in agent.text(), T),
              "Allocate refusal logged")

        # preferred allocation
        allc = ["p0c1", "p0c2", "p0c3"]
        check(core.prefer(allc, [], 2) == ["p0c2", "p0c3"], "preferred 2 cores packs on node 1")
        check(core.prefer(allc, ["p0c1"], 1) == ["p0c1"], "preferred honours must_include")
        check(core.prefer(allc, [], 1) == core.prefer(list(reversed(allc)), [], 1), "preferred deterministic")
        check(nic.prefer(["0000:00:06.0", "0000:00:07.0", "7870:00:00.0"], ["0000:00:07.0"], 1) == ["0000:00:07.0"],
              "preferred NIC must_include")
        code, msg = status_of(lambda: core.prefer(allc, ["p9c9"], 1))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "p9c9" in msg, "preferred unknown must_include -> %s" % msg)

        # health: a device node disappears -> Unhealthy (inotify: the re-scan timer is at
        # 600 s); back -> Healthy
        node = os.path.join(root, "dev/vfio/7")
        t0 = time.monotonic()
        n0 = len(nw.lists)
        os.unlink(node)
        got = nw.wait(lambda d: d.get("0000:00:06.0", ("",))[0] == "Unhealthy", T, since=n0)
        check(got is not None, "NIC Unhealthy after its device node went")
        if got:
            print("NIC Unhealthy %.3f s after its device node went" % (got[0] - t0), flush=True)
        # the agent says why, in the line `spinlane-agent explain` prints
        line = "spinlane.io/dpdk-nic 0000:00:06.0: advertised, Unhealthy (not-ready): "
        check(wait_for(lambda: line in agent.text(), T), "the agent logs why the NIC is Unhealthy: %s" %
              [x for x in agent.text().splitlines() if "0000:00:06.0: " in x][-3:])
        code, msg = status_of(lambda: nic.alloc(["0000:00:06.0"]))
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "unhealthy" in msg, "Allocate unhealthy -> %s" % msg)
        n0 = len(nw.lists)
        open(node, "w").close()
        got = nw.wait(lambda d: d.get("0000:00:06.0", ("",))[0] == "Healthy", T, since=n0)
        check(got is not None, "NIC Healthy again")
        # a core stops being isolated
        t0 = time.monotonic()
        n0 = len(cw.lists)
        with open(os.path.join(root, "sys/devices/system/cpu/isolated"), "w") as f:
            f.write("1-3,6-7\n")
        got = cw.wait(lambda d: d.get("p0c1", ("",))[0] == "Unhealthy", T, since=n0)
        check(got is not None, "core Unhealthy after a sibling left the isolated set")
        if got:
            print("core Unhealthy %.3f s after the isolated set changed" % (got[0] - t0), flush=True)
        n0 = len(cw.lists)
        with open(os.path.join(root, "sys/devices/system/cpu/isolated"), "w") as f:
            f.write("1-3,5-7\n")
        check(cw.wait(lambda d: d.get("p0c1", ("",))[0] == "Healthy", T, since=n0) is not None,
              "core Healthy again")

        # 100 parallel Allocate calls
        with futures.ThreadPoolExecutor(max_workers=20) as ex:
            res = list(ex.map(lambda i: status_of(lambda: nic.alloc(["0000:00:06.0"]))[0], range(100)))
        check(all(c == grpc.StatusCode.OK for c in res), "100 parallel Allocate: %s" % set(res))

        # 100 ListAndWatch streams, then cancelled; cancelled mid-stream repeatedly
        ws = [Watcher(nic) for _ in range(args.streams)]
        check(all(w.wait(lambda d: len(d) == 3, T) for w in ws), "%d streams got the list" % args.streams)
        for w in ws:
            w.cancel()
        for _ in range(args.streams // 5):
            w = Watcher(core)
            w.cancel()
        check(nic.options(api.Empty(), timeout=T * S).get_preferred_allocation_available, "alive after cancels")

        # kubelet restarts: sockets wiped, kubelet.sock re-created -> serve again + register
        nw.cancel()
        cw.cancel()
        worst = 0.0
        for i in range(args.restarts):
            kubelet.stop()
            kubelet = Kubelet(api, root)
            t0 = time.monotonic()
            kubelet.start(wipe=True)
            try:
                regs = kubelet.wait_registrations(2, T)
            except TimeoutError as e:
                check(False, "restart %d: %s" % (i, e))
                continue
            dt = max(t for t, _ in regs.values()) - t0
            worst = max(worst, dt)
            p = Plugin(api, root, NIC_SOCK)
            w = Watcher(p)
            check(w.wait(lambda d: len(d) == 3, T) is not None, "restart %d: ListAndWatch on the new socket" % i)
            w.cancel()
            p.close()
        print("kubelet restarts: %d, worst re-registration %.3f s" % (args.restarts, worst), flush=True)

        # a kubelet that rejects Register: logged, retried with backoff
        kubelet.stop()
        kubelet = Kubelet(api, root, reject="plugin rejected for the test")
        kubelet.start(wipe=True)
        n = wait_for(lambda: kubelet.registrations.qsize() >= 4, T)
        check(n, "Register retried after rejection (%d attempts)" % kubelet.registrations.qsize())
        check("plugin rejected for the test" in agent.text(), "rejection message logged")
        kubelet.reject = None
        kubelet.registrations = __import__("queue").Queue()
        check(kubelet.wait_registrations(2, T), "registered once accepted")

        # clean shutdown: streams ended, sockets removed, exit 0 (ASan: no leaks)
        nic = Plugin(api, root, NIC_SOCK)
        w = Watcher(nic)
        w.wait(lambda d: True, T)
        rc = agent.stop()
        check(rc == 0, "agent exit code %s" % rc)
        w.t.join(T * S)
        check(w.ended is not None, "open stream ended on SIGTERM (%s)" % w.ended)
        check(not os.path.exists(os.path.join(kdir, NIC_SOCK)) and not os.path.exists(os.path.join(kdir, CORE_SOCK)),
              "plugin sockets removed on exit")
        left = [n for n in os.listdir(kdir) if n.startswith(".spinlane")]
        check(not left, "no bind path of a server left behind %s" % left)
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
    log = agent.text()
    if failures:
        print("---- agent log (tail) ----\n" + "\n".join(log.splitlines()[-60:]))
    check("PASS" in log or "FAIL" in log or "WARN" in log, "verdicts printed at start")


def test_cdi(args, api, root):
    """CDI on: Allocate names CDI devices; the spec under <root>/var/run/cdi lists them.
    Started under umask 000 with symlinks planted at the spec's name and at the old
    temporary name (<spec>.tmp) pointing at a root-only file: the file stays as it was,
    the spec is a regular file of mode 0644, the plugin sockets are 0660, and the spec is
    gone once the agent stops."""
    import json
    import stat
    cfg = os.path.join(root, "cdi-config.json")
    with open(cfg, "w") as f:
        json.dump({"cdi": {"enabled": True}}, f)
    spec_dir = os.path.join(root, "var/run/cdi")
    spec_path = os.path.join(spec_dir, "spinlane.io-dpdk-nic.json")
    victim = os.path.join(root, "root-only")
    with open(victim, "w") as f:
        f.write("secret\n")
    os.chmod(victim, 0o600)
    os.makedirs(spec_dir, exist_ok=True)
    for name in (spec_path, spec_path + ".tmp"):
        if os.path.lexists(name):
            os.unlink(name)
        os.symlink(victim, name)
    kubelet = Kubelet(api, root)
    kubelet.start(wipe=True)
    agent = Agent(args.agent, root, os.path.join(root, "agent-cdi.log"), ["--config", cfg], umask=0)
    try:
        kubelet.wait_registrations(2, T)
        nic = Plugin(api, root, NIC_SOCK)
        w = Watcher(nic)  # Healthy once its address is known
        check(w.wait(lambda d: d.get("0000:00:07.0", ("",))[0] == "Healthy", T) is not None, "CDI: NIC Healthy")
        w.cancel()
        r = nic.alloc(["0000:00:07.0"])
        c = r.container_responses[0]
        check([d.name for d in c.cdi_devices] == ["spinlane.io/dpdk-nic=0000:00:07.0"] and not c.devices and
              not c.mounts, "CDI Allocate answer %s" % c)
        check(dict(c.envs).get("SPINLANE_DPDK_NICS") == "0000:00:07.0", "CDI answer keeps the env")
        spec = json.load(open(spec_path)) if wait_for(lambda: not os.path.islink(spec_path), T) else {}
        devs = {d["name"]: d["containerEdits"]["deviceNodes"] for d in spec.get("devices", [])}
        check(spec.get("kind") == "spinlane.io/dpdk-nic" and set(devs) == {"0000:00:06.0", "0000:00:07.0",
                                                                              "7870:00:00.0"}, "CDI spec %s" % spec)
        check({"path": "/dev/vfio/3", "hostPath": "/dev/vfio/noiommu-3", "permissions": "rw"} in
              devs.get("0000:00:07.0", []), "CDI no-IOMMU node mapping")
        st = os.lstat(spec_path)
        check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644,
              "CDI spec: a regular file of mode 0644 under umask 000 (mode %o)" % st.st_mode)
        with open(victim) as f:
            check(f.read() == "secret\n" and stat.S_IMODE(os.stat(victim).st_mode) == 0o600,
                  "CDI: the file behind the planted symlinks is untouched")
        for sock in (NIC_SOCK, CORE_SOCK):
            m = stat.S_IMODE(os.lstat(os.path.join(root, PLUGIN_DIR, sock)).st_mode)
            check(m == 0o660, "plugin socket %s: mode 0660 under umask 000 (mode %o)" % (sock, m))
        nic.close()
        rc = agent.stop()
        check(rc == 0, "CDI agent exit %s" % rc)
        check(not os.path.lexists(spec_path), "CDI spec removed when the agent stops")
        # (a rewrite may be in flight while the agent runs; once it is gone nothing but
        # the planted symlink may be left)
        check(os.listdir(spec_dir) == ["spinlane.io-dpdk-nic.json.tmp"] and os.path.islink(spec_path + ".tmp"),
              "CDI: no temporary file left beside the spec (%s)" % os.listdir(spec_dir))
        os.unlink(spec_path + ".tmp")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
        if failures:
            print("---- CDI agent log ----\n" + "\n".join(agent.text().splitlines()[-60:]))


def test_uevents(args, api, root):
    """Kernel uevents reach the loop and trigger a re-scan, with the safety timer far away
    (600 s: the re-scan can only come from the uevent). Needs root and a writable sysfs: writing "change" to a CPU's uevent file
    makes the kernel send a real (synthetic) uevent. Under a fake --root the agent does
    not listen by itself; SPINLANE_UEVENTS=1 makes it."""
    trigger = "/sys/devices/system/cpu/cpu0/uevent"
    # what the machine may lack, decided before anything runs
    can_trigger = os.geteuid() == 0 and os.access(trigger, os.W_OK)
    if not can_trigger:
        print("SKIP (uevent part): not root or %s not writable" % trigger, flush=True)
    # one agent per root at a time: they would take each other's sockets
    plain = Agent(args.agent, root, os.path.join(root, "agent-plain.log"), env={"SPINLANE_UEVENTS": ""})
    agent = None
    try:
        check(wait_for(lambda: "running (" in plain.text(), T), "plain agent running")
        check("re-scan on inotify, and every 10000 ms" in plain.text(),
              "fake root: no uevents, 10 s safety re-scan: %s" %
              [line for line in plain.text().splitlines() if "running" in line])
        check(plain.stop() == 0, "plain agent exit 0")
        agent = Agent(args.agent, root, os.path.join(root, "agent-uevent.log"),
                      env={"SPINLANE_UEVENTS": "1", "SPINLANE_DEBUG": "1", "SPINLANE_RESCAN_MS": "600000"})
        check(wait_for(lambda: "running (" in agent.text(), T), "uevent agent running")
        check("re-scan on kernel uevents and inotify, and every 600000 ms" in agent.text(),
              "uevents on when forced: %s" % [line for line in agent.text().splitlines() if "running" in line])
        if not can_trigger:
            check(agent.stop() == 0, "uevent agent exit 0")
            return
        def rescans(why):
            # one debounced re-scan answers every reason that armed it: "re-scan (a, b)"
            return sum(1 for m in re.finditer(r"re-scan \(([^)]*)\)", agent.text())
                       if why in m.group(1).split(", "))
        check(wait_for(lambda: rescans("after node preparation") > 0, T), "first re-scan")
        before = rescans("uevent")
        t0 = time.monotonic()
        with open(trigger, "w") as f:
            f.write("change")
        # other uevents on this machine may add re-scans of their own, never remove ours
        check(wait_for(lambda: "uevent change /devices/system/cpu/cpu0 (cpu)" in agent.text() and
                       rescans("uevent") > before, T), "re-scan after a kernel uevent")
        print("re-scan %.3f s after the kernel uevent" % (time.monotonic() - t0), flush=True)
        check("re-scan (every" not in agent.text(), "no periodic re-scan within 600 s")
        check(agent.stop() == 0, "uevent agent exit 0")
    finally:
        for a in (agent, plain):
            if a and a.p.poll() is None:
                a.p.kill()
                a.p.wait()
        if failures and agent:
            print("---- uevent agent log ----\n" + agent.text())


def test_config_change(args, api, root):
    """The config file changes under a running agent (no SIGHUP): a narrower NIC
    selection reaches the device plugin at once, not at the next safety re-scan."""
    import json
    cfg = os.path.join(root, "sel-config.json")
    with open(cfg, "w") as f:
        json.dump({}, f)
    kubelet = Kubelet(api, root)
    kubelet.start(wipe=True)
    agent = Agent(args.agent, root, os.path.join(root, "agent-sel.log"), ["--config", cfg],
                  env={"SPINLANE_RESCAN_MS": "600000"})
    try:
        kubelet.wait_registrations(2, T)
        nic = Plugin(api, root, NIC_SOCK)
        w = Watcher(nic)
        check(w.wait(lambda d: len(d) == 3 and all(h == "Healthy" for h, _ in d.values()), T) is not None,
              "config change: 3 healthy NICs first")
        n0 = len(w.lists)
        t0 = time.monotonic()
        with open(cfg + ".tmp", "w") as f:  # as an editor saves: a new file renamed over
            json.dump({"nics": {"pci": ["0000:00:06.0", "7870:00:00.0"]}}, f)
        os.rename(cfg + ".tmp", cfg)
        got = w.wait(lambda d: d.get("0000:00:07.0", ("",))[0] == "Unhealthy", T, since=n0)
        check(got is not None, "NIC left out by the changed config is Unhealthy (the re-scan timer is at 600 s)")
        line = ("spinlane.io/dpdk-nic 0000:00:07.0: advertised, Unhealthy (not-selected): nics.pci does not list "
                "0000:00:07.0; kept listed")
        check(wait_for(lambda: line in agent.text(), T), "the agent logs why 0000:00:07.0 is left out: %s" %
              [x for x in agent.text().splitlines() if "0000:00:07.0: " in x][-3:])
        if got:
            print("config change reached the device plugin in %.3f s" % (got[0] - t0), flush=True)
        with open(cfg + ".tmp", "w") as f:
            json.dump({"resource_prefix": "example.com"}, f)
        os.rename(cfg + ".tmp", cfg)
        # a new prefix: the device plugins are rebuilt and register under it, no restart
        # (tests/deviceplugin/test_rebuild.py follows the rebuild in detail)
        try:
            regs = sorted(kubelet.wait_registrations(2, T))
        except TimeoutError as e:
            regs = str(e)
        check(regs == ["example.com/dpdk-nic", "example.com/isolated-core"],
              "a changed resource_prefix registers at once: %s" % regs)
        w.cancel()
        nic.close()
        check(agent.stop() == 0, "config-change agent exit 0")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
        if failures:
            print("---- config-change agent log ----\n" + "\n".join(agent.text().splitlines()[-40:]))


def test_silent_kubelet(args, api, root):
    """A kubelet that accepts connections and never answers (hung): each Register attempt
    runs to its timeout, is reported and retried; SIGTERM with an attempt in flight still
    exits 0, and only once gRPC has closed that connection (the agent's bound for gRPC's
    teardown outlasts an attempt)."""
    import socket
    kdir = os.path.join(root, PLUGIN_DIR)
    for name in os.listdir(kdir):
        os.unlink(os.path.join(kdir, name))
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(os.path.join(kdir, "kubelet.sock"))
    lsock.listen(64)
    lsock.settimeout(T * S)
    conns = []
    agent = Agent(args.agent, root, os.path.join(root, "agent-silent.log"))
    try:
        for _ in range(2):  # one attempt per plugin
            conns.append(lsock.accept()[0])
        check(wait_for(lambda: agent.text().count("Register with the kubelet failed") >= 2, T),
              "silent kubelet: both Register attempts reported failed")
        conns.append(lsock.accept()[0])  # a retry: an attempt in flight now
        rc = agent.stop()
        check(rc == 0, "silent kubelet: agent exit %s with a Register attempt in flight" % rc)
        check(not os.path.exists(os.path.join(kdir, NIC_SOCK)), "silent kubelet: plugin socket removed")
    except socket.timeout:
        check(False, "silent kubelet: the agent never connected to kubelet.sock")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        for c in conns:
            c.close()
        lsock.close()
        os.unlink(os.path.join(kdir, "kubelet.sock"))
        if failures:
            print("---- silent-kubelet agent log ----\n" + "\n".join(agent.text().splitlines()[-30:]))


def test_dir_gone(args, api, root):
    """The device-plugins dir absent at start, then created; later removed and re-created
    (with a kubelet): the agent serves and registers each time, and a missing dir is one
    log line of its own, not a gRPC error every second."""
    kdir = os.path.join(root, PLUGIN_DIR)
    rm_tree(kdir)
    agent = Agent(args.agent, root, os.path.join(root, "agent-dir.log"))
    kubelet = None
    try:
        check(wait_for(lambda: "running (" in agent.text(), T), "agent running without the dir")
        wait_ticks(agent, 3, "a missing dir")  # a few 1 s checks: none may repeat the line
        log = agent.text()
        n = log.count("cannot serve on")
        check(n == 2, "a missing dir: 'cannot serve' once per plugin (%d times)" % n)
        check("chttp2" not in log and "No address added" not in log,
              "no gRPC error lines while the dir is missing")
        kubelet = Kubelet(api, root)
        kubelet.start(wipe=True)  # creates the dir
        check(kubelet.wait_registrations(2, T) is not None, "registered once the dir appeared")
        for i in range(2):
            kubelet.stop()
            rm_tree(kdir)
            wait_ticks(agent, 1, "dir removed %d" % i)  # the tick re-watches the dir: the agent saw it go
            kubelet = Kubelet(api, root)
            kubelet.start(wipe=True)
            try:
                kubelet.wait_registrations(2, T)
            except TimeoutError as e:
                check(False, "dir re-created %d: %s" % (i, e))
                continue
            p = Plugin(api, root, NIC_SOCK)
            w = Watcher(p)
            check(w.wait(lambda d: len(d) == 3, T) is not None, "dir re-created %d: ListAndWatch" % i)
            w.cancel()
            p.close()
        check("chttp2" not in agent.text(), "no gRPC error lines after the dir came and went")
        check(agent.stop() == 0, "dir agent exit 0")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        if kubelet:
            kubelet.stop()
        if failures:
            print("---- dir agent log ----\n" + "\n".join(agent.text().splitlines()[-60:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--restarts", type=int, default=None)
    ap.add_argument("--streams", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="3 kubelet restarts, 20 streams")
    ap.add_argument("--wrapper", default="", help="command prefix for the agent, e.g. valgrind ...")
    ap.add_argument("--scale", type=float, default=None, help="time scale (default 1, 20 with --wrapper)")
    args = ap.parse_args()
    global WRAPPER, S
    WRAPPER = shlex.split(args.wrapper)
    S = args.scale if args.scale else (20.0 if WRAPPER else 1.0)
    kubelet_standin.SCALE = S
    if args.restarts is None:
        args.restarts = 3 if args.quick else 20
    if args.streams is None:
        args.streams = 20 if args.quick else 100
    api, gen = load_api(args.proto_dir)
    root = tempfile.mkdtemp(prefix="sl-dp-root-")
    # the NICs' addresses: a metadata stand-in knows the tree's MACs (every agent here
    # inherits SPINLANE_IMDS_URL); without addresses the NICs would be Unhealthy
    imds = FakeImds()
    macs = kubelet_standin.TREE_MACS
    imds.aws(macs["0000:00:06.0"], ["10.0.6.10"], "10.0.6.0/24")
    imds.aws(macs["0000:00:07.0"], ["10.0.7.10"], "10.0.7.0/24")
    imds.azure(macs["7870:00:00.0"], "10.1.0.4", "10.1.0.0", "24")
    os.environ["SPINLANE_IMDS_URL"] = imds.url
    try:
        make_tree(root)
        for t in (test_all, test_cdi, test_uevents, test_silent_kubelet, test_dir_gone, test_config_change):
            t0 = time.monotonic()
            t(args, api, root)
            print("%s: %.1f s" % (t.__name__, time.monotonic() - t0), flush=True)
    finally:
        imds.close()
        rm_tree(root)
        rm_tree(gen)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
