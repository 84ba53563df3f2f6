# SPDX-License-Identifier: Apache-2.0
"""Test rig for stock Aeron against spinlane's bindings: network namespaces and veth
pairs named uniquely per run (deleted at exit, also on failure or a signal), media
drivers (stock aeronmd, with or without libspinlane_aeron.so) and clients started in
them, output captured to files, and every wait bounded and tied to an event (a line of
output, a counter, an exit), never a fixed sleep. Counters come from Aeron's own
AeronStat, errors from ErrorStat."""

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77


def skip(why):
    """A skip for what the machine lacks; in CI (CI=true) the bypass is never skipped:
    every reason to skip is then a failure."""
    if os.environ.get("CI", "").lower() == "true":
        print("FAIL: CI=true and an Aeron test may not skip: " + why, flush=True)
        sys.exit(1)
    print("SKIP: " + why, flush=True)
    sys.exit(SKIP)


class Fail(Exception):
    pass


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise Fail("command failed (%d): %s\n%s" % (r.returncode, cmd, r.stdout))
    return r


def wait_for(pred, timeout, what):
    """Poll pred() until it returns something true; generous bounds, no fixed sleeps."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise Fail("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.05)


class Env:
    """What the test needs from the build, or a skip saying what is missing."""

    def __init__(self):
        if os.geteuid() != 0:
            skip("needs root (network namespaces, DPDK vdevs)")
        self.bin = os.environ.get("SPINLANE_AERON_BIN", "")
        self.lib = os.environ.get("SPINLANE_AERON_LIB", "")
        self.lib_release = os.environ.get("SPINLANE_AERON_LIB_RELEASE", self.lib)
        self.msgs = os.environ.get("SPINLANE_AERON_MSGS", "")
        self.launch = os.environ.get("SPINLANE_LAUNCH", "")
        self.stat = os.environ.get("SPINLANE_STAT", "")
        for tool in ("aeronmd", "AeronStat", "ErrorStat", "cping", "cpong"):
            if not os.access(os.path.join(self.bin, tool), os.X_OK):
                skip("no %s in the Aeron build tree (%s): build Aeron's C samples and tools there" % (tool, self.bin))
        for f in (self.lib, self.msgs):
            if not os.access(f, os.R_OK):
                skip("%s is missing" % f)
        if shutil.which("ip") is None:
            skip("no ip(8) (iproute2)")
        if shutil.which("ethtool") is None:
            skip("no ethtool(8): veth TX checksum offload cannot be turned off (Debian package ethtool)")
        if sh("ip netns list", check=False).returncode != 0:
            skip("ip netns does not work here")
        self.preload = ""
        if os.environ.get("SPINLANE_SANITIZE", "").upper() in ("ON", "1", "TRUE", "YES"):
            # an instrumented libspinlane_aeron.so in an uninstrumented aeronmd: the
            # sanitizer runtimes must come first
            cc = os.environ.get("SPINLANE_CC", "cc")

            def runtime(name):
                p = subprocess.run([cc, "-print-file-name=" + name], stdout=subprocess.PIPE, text=True).stdout.strip()
                return p if os.path.isabs(p) and os.path.exists(p) else None
            clang_rt = runtime("libclang_rt.asan-x86_64.so")  # clang: one runtime for ASan and UBSan
            if clang_rt:
                libs = [clang_rt]
            else:
                libs = [runtime("libasan.so"), runtime("libubsan.so")]
                if None in libs:
                    skip("sanitized build but the sanitizer runtimes of %s are not found for LD_PRELOAD" % cc)
            self.preload = " ".join(libs)

    def tool(self, name):
        return os.path.join(self.bin, name)


class Rig:
    """Namespaces, veths and processes of one test run; cleaned up at exit."""

    def __init__(self, env, tag):
        self.env = env
        self.id = "sla%05d%s" % (os.getpid() % 100000, tag)
        self.tmp = tempfile.mkdtemp(prefix=self.id + "-")
        self.namespaces = []
        self.procs = []
        self.shm = []
        self.seq = 0
        atexit.register(self.cleanup)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig, frame):
        self.cleanup()
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    def name(self, suffix):
        return "%s%s" % (self.id, suffix)

    def netns(self, suffix):
        ns = self.name(suffix)
        sh("ip netns add %s" % ns)
        self.namespaces.append(ns)
        sh("ip -n %s link set lo up" % ns)
        return ns

    def veth(self, ns_a, ns_b, addr_b=None, addr_a=None):
        """A veth pair from ns_a to ns_b; the ns_a end (the DPDK one) has no kernel address
        unless asked. Returns the two interface names."""
        self.seq += 1
        a = "s%05d%da" % (os.getpid() % 100000, self.seq)
        b = "s%05d%db" % (os.getpid() % 100000, self.seq)
        sh("ip link add %s type veth peer name %s" % (a, b))
        sh("ip link set %s netns %s && ip link set %s netns %s" % (a, ns_a, b, ns_b))
        if addr_a:
            sh("ip -n %s addr add %s dev %s" % (ns_a, addr_a, a))
        if addr_b:
            sh("ip -n %s addr add %s dev %s" % (ns_b, addr_b, b))
        # no IPv6 chatter (router solicitations) on the DPDK end
        sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=1" % (ns_a, a), check=False)
        # veth hands af_packet frames with partial (offloaded) checksums unless the
        # kernel end computes them itself
        sh("ip netns exec %s ethtool -K %s tx off" % (ns_b, b))
        sh("ip -n %s link set %s up && ip -n %s link set %s up" % (ns_a, a, ns_b, b))
        return a, b

    def start(self, ns, argv, env, label):
        log = os.path.join(self.tmp, "%s-%d.log" % (label, len(self.procs)))
        f = open(log, "w")
        cmd = (["ip", "netns", "exec", ns] if ns else []) + argv
        p = subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        f.close()
        proc = Proc(p, log, label)
        self.procs.append(proc)
        return proc

    def cleanup(self):
        for p in self.procs:
            p.kill()
        self.procs = []
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.namespaces = []
        for d in self.shm:
            shutil.rmtree(d, ignore_errors=True)
        self.shm = []
        if os.environ.get("SPINLANE_TEST_KEEP") is None:
            shutil.rmtree(self.tmp, ignore_errors=True)


class Proc:
    def __init__(self, p, log, label):
        self.p = p
        self.log = log
        self.label = label

    def output(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_line(self, pattern, timeout):
        rx = re.compile(pattern, re.M)

        def seen():
            m = rx.search(self.output())
            if m:
                return m
            if self.p.poll() is not None:
                m = rx.search(self.output())
                if m:
                    return m
                raise Fail("%s exited (%s) before printing /%s/:\n%s" % (self.label, self.p.returncode, pattern,
                                                                         self.tail()))
            return None
        return wait_for(seen, timeout, "%s to print /%s/" % (self.label, pattern))

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Fail("%s did not exit within %.0f s:\n%s" % (self.label, timeout, self.tail()))

    def stop(self, timeout=30, sig=signal.SIGTERM):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
        return self.wait(timeout)

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def tail(self, n=40):
        return "\n".join(self.output().splitlines()[-n:])


SLEEPING = {
    # 2 CPUs: agents that spin measure the scheduler; these sleep 20 us when idle
    "AERON_SENDER_IDLE_STRATEGY": "sleep-ns", "AERON_SENDER_IDLE_STRATEGY_INIT_ARGS": "20us",
    "AERON_RECEIVER_IDLE_STRATEGY": "sleep-ns", "AERON_RECEIVER_IDLE_STRATEGY_INIT_ARGS": "20us",
    "AERON_SHAREDNETWORK_IDLE_STRATEGY": "sleep-ns", "AERON_SHAREDNETWORK_IDLE_STRATEGY_INIT_ARGS": "20us",
    "AERON_SHARED_IDLE_STRATEGY": "sleep-ns", "AERON_SHARED_IDLE_STRATEGY_INIT_ARGS": "20us",
    "AERON_CONDUCTOR_IDLE_STRATEGY": "sleep-ns", "AERON_CONDUCTOR_IDLE_STRATEGY_INIT_ARGS": "1ms",
}


class Driver:
    """One aeronmd. nics: None (stock, kernel UDP) or the bypass contract as a dict of
    SPINLANE_* values; the DPDK file prefix and EAL args are filled in here."""

    def __init__(self, rig, ns, name, nics=None, vdevs="", mode="DEDICATED", extra=None, lib=None, idle=SLEEPING,
                 wrap=()):
        self.rig = rig
        self.ns = ns
        self.name = name
        self.dir = "/dev/shm/%s-%s" % (rig.id, name)
        self.prefix = "%s-%s" % (rig.id, name)
        rig.shm.append(self.dir)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "AERON_DIR": self.dir, "AERON_DIR_DELETE_ON_START": "1",
               "AERON_THREADING_MODE": mode, "AERON_TERM_BUFFER_LENGTH": "1m", "AERON_IPC_TERM_BUFFER_LENGTH": "1m",
               "AERON_PRINT_CONFIGURATION": "0", "AERON_CLIENT_LIVENESS_TIMEOUT": "10s",
               "AERON_PUBLICATION_LINGER_TIMEOUT": "1s"}
        env.update(idle)
        self.dpdk = nics is not None
        if self.dpdk:
            env["SPINLANE_EAL_ARGS"] = ("--no-huge --no-pci -m 128 -l 0 --file-prefix %s --log-level=error %s"
                                        % (self.prefix, vdevs)).strip()
            env.update(nics)
            env["AERON_DRIVER_DYNAMIC_LIBRARIES"] = lib or rig.env.lib
            env["AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA"] = "spinlane_udp_channel_transport_bindings"
            if rig.env.preload:
                env["LD_PRELOAD"] = rig.env.preload
                env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=1"
        if extra:
            env.update(extra)
        self.env = env
        self.proc = rig.start(ns, list(wrap) + [rig.env.tool("aeronmd")], env, "aeronmd-" + name)

    def ready(self, timeout=60):
        def up():
            if self.proc.p.poll() is not None:
                raise Fail("driver %s exited (%s):\n%s" % (self.name, self.proc.p.returncode, self.proc.tail()))
            c = self.counters(quiet=True)
            if c is None:
                return False
            return (not self.dpdk) or any(k.startswith("spinlane rx frames") for k in c)
        wait_for(up, timeout, "driver %s to come up" % self.name)
        return self

    def counters(self, quiet=False):
        r = subprocess.run(["ip", "netns", "exec", self.ns, self.rig.env.tool("AeronStat"), "-d", self.dir, "-w",
                            "false", "-t", "2000"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            if quiet:
                return None
            raise Fail("AeronStat for %s failed:\n%s" % (self.name, r.stdout))
        out = {}
        for m in re.finditer(r"^\s*\d+:\s+(-?[\d,]+) - (.*)$", r.stdout, re.M):
            label = m.group(2).strip()
            value = int(m.group(1).replace(",", ""))
            out[label] = out.get(label, 0) + value if label in out else value
        return out

    def counter(self, prefix):
        """Sum of every counter whose label starts with prefix."""
        return sum(v for k, v in self.counters().items() if k.startswith(prefix))

    def errors(self):
        r = subprocess.run([self.rig.env.tool("ErrorStat"), "-d", self.dir, "-t", "2000"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        m = re.search(r"^(\d+) distinct errors observed\.$", r.stdout, re.M)
        if not m:
            raise Fail("ErrorStat for %s said:\n%s" % (self.name, r.stdout))
        return int(m.group(1)), r.stdout

    def stop(self, timeout=30):
        # aeronmd exits with the number of the signal that stopped it, after it shut down
        rc = self.proc.stop(timeout)
        if rc != signal.SIGTERM or "Shutting down driver" not in self.proc.output():
            raise Fail("driver %s exited %s on SIGTERM:\n%s" % (self.name, rc, self.proc.tail()))
        if self.dpdk and os.path.exists("/var/run/dpdk/%s" % self.prefix):
            raise Fail("driver %s left its DPDK runtime directory /var/run/dpdk/%s" % (self.name, self.prefix))
        return rc


class LaunchedDriver(Driver):
    """aeronmd as spinlane-launch starts it in a pod: --root view (the container's /proc,
    /sys and /dev as the kubelet and the device plugin make them), the allocation's
    variables, and nothing but the default command."""

    def __init__(self, rig, ns, name, view, pod_env, args=()):
        self.rig = rig
        self.ns = ns
        self.name = name
        self.dir = pod_env["AERON_DIR"]
        self.prefix = "spinlane-" + pod_env["SPINLANE_POD_UID"]
        rig.shm.append(self.dir)
        self.dpdk = True
        self.env = dict(pod_env)
        if rig.env.preload:
            self.env["LD_PRELOAD"] = rig.env.preload
            self.env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=1"
        self.proc = rig.start(ns, [rig.env.launch, "--root", view] + list(args), self.env, "launch-" + name)


def pod_view(root, cpus, huge_dir="/dev/hugepages"):
    """The container's view for spinlane-launch --root: a quota-free cgroup v2 whose cpuset
    is cpus (whole cores, no SMT), those CPUs isolated, a hugetlbfs mount, the NIC's VFIO
    device nodes (plain files: the launcher only opens them) and unlimited memlock."""
    def write(rel, text):
        path = os.path.join(root, rel.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    ids = [int(c) for c in cpus.split(",")] if "-" not in cpus else list(range(int(cpus.split("-")[0]),
                                                                             int(cpus.split("-")[1]) + 1))
    write("/proc/self/cgroup", "0::/\n")
    write("/proc/self/mountinfo", "25 1 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
          "90 60 0:50 / %s rw,relatime - hugetlbfs nodev rw,pagesize=2M\n" % huge_dir)
    write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n")
    write("/sys/fs/cgroup/cpu.max", "max 100000\n")
    write("/sys/fs/cgroup/cpu.stat", "usage_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
    write("/sys/fs/cgroup/cpuset.cpus.effective", cpus + "\n")
    write("/sys/fs/cgroup/hugetlb.2MB.max", "%d\n" % (512 * 2 * 1024 * 1024))
    write("/sys/fs/cgroup/hugetlb.2MB.current", "0\n")
    write("/proc/self/status", "Name:\tspinlane-launch\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0\n" % cpus)
    write("/proc/self/limits", "Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max locked memory         unlimited            unlimited            bytes     \n")
    write("/proc/meminfo", "MemTotal:       16000000 kB\nHugepagesize:       2048 kB\n")
    write("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "512\n")
    write("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "512\n")
    write("/sys/devices/system/cpu/online", cpus + "\n")
    write("/sys/devices/system/cpu/isolated", cpus + "\n")
    write("/sys/devices/system/cpu/nohz_full", cpus + "\n")
    for c in ids:
        write("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % c, "%d\n" % c)
        write("/sys/devices/system/cpu/cpu%d/topology/core_id" % c, "%d\n" % c)
        write("/sys/devices/system/cpu/cpu%d/topology/physical_package_id" % c, "0\n")
    write("/dev/vfio/vfio", "")
    write("/dev/vfio/7", "")
    os.makedirs(os.path.join(root, huge_dir.lstrip("/")), exist_ok=True)


def msgs(rig, driver, role, channel, n, size=64, stream=1001, timeout=120):
    return rig.start(driver.ns, [rig.env.msgs, role, "-d", driver.dir, "-c", channel, "-s", str(stream), "-n", str(n),
                                 "-z", str(size), "-t", str(timeout)], {"PATH": "/usr/bin:/bin"},
                     "%s-%s-%s" % (role, driver.name, stream))


def transfer(rig, pub_driver, pub_channel, sub_driver, sub_channel, n, size=64, stream=1001, timeout=120):
    """n messages from a publication on pub_driver to a subscription on sub_driver, all in
    order and intact; returns the subscriber's output."""
    sub = msgs(rig, sub_driver, "sub", sub_channel, n, size, stream, timeout)
    sub.wait_line(r"^READY$", 30)
    pub = msgs(rig, pub_driver, "pub", pub_channel, n, size, stream, timeout)
    rc = sub.wait(timeout + 30)
    out = sub.output()
    pub.stop(30)
    if rc != 0:
        raise Fail("subscriber on %s (%s) exited %d; publisher on %s (%s) said:\n%s\nsubscriber said:\n%s" %
                   (sub_driver.name, sub_channel, rc, pub_driver.name, pub_channel, pub.tail(), sub.tail()))
    if not re.search(r"^RECEIVED %d$" % n, out, re.M):
        raise Fail("subscriber did not report %d messages:\n%s" % (n, out))
    return out


class Check:
    """Named checks with a tally; a failure prints what was seen."""

    def __init__(self):
        self.failed = 0
        self.passed = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print("ok   %s" % what, flush=True)
        else:
            self.failed += 1
            print("FAIL %s%s" % (what, ("\n" + detail) if detail else ""), flush=True)
        return cond

    def eventually(self, driver, pred, what, timeout=15):
        """pred(counters) must hold within timeout: the adapter copies its port counters
        into Aeron's about ten times a second, so a reading may lag a little."""
        last = {}

        def holds():
            last["c"] = driver.counters()
            return pred(last["c"])
        try:
            wait_for(holds, timeout, what)
            return self.ok(True, what)
        except Fail:
            c = last.get("c", {})
            return self.ok(False, what, "\n".join("%s = %d" % kv for kv in sorted(c.items())
                                                   if kv[1] and (kv[0].startswith("spinlane") or "NAK" in kv[0] or
                                                                 "Retransmit" in kv[0])))

    def run(self, what, fn, *args, **kwargs):
        try:
            r = fn(*args, **kwargs)
            self.ok(True, what)
            return r
        except Fail as e:
            self.ok(False, what, str(e))
            return None

    def done(self):
        print("%d checks, %d failed" % (self.passed + self.failed, self.failed), flush=True)
        return 1 if self.failed else 0


def cping_percentiles(out):
    """p50/p90/p99/p99.9/max (us) and the count from cping's HdrHistogram table."""
    rows = []
    for m in re.finditer(r"^\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+|inf)\s*$", out, re.M):
        rows.append((float(m.group(2)), float(m.group(1))))
    mx = re.search(r"Max\s*=\s*([\d.]+),\s*Total count\s*=\s*(\d+)", out)
    if not rows or not mx:
        raise Fail("no histogram in cping's output:\n" + out[-2000:])
    res = {}
    for p in (0.5, 0.9, 0.99, 0.999):
        res["p%g" % (p * 100)] = next(v for q, v in rows if q >= p)
    res["max"] = float(mx.group(1))
    res["count"] = int(mx.group(2))
    return res
