#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Aeron round trips with the media driver embedded in INVOKER mode (bench/aeron-invoker.c):
each side, ping and pong, is one process with one busy thread pinned to a CPU of its own,
which runs its driver's duty cycle, its client conductor and its subscription. Arms, in one
sitting and interleaved (each round runs every arm and size in turn):
  ipc          aeron:ipc through one driver (the ping's; the pong is a client of it): Aeron's floor
  memif        spinlane's bindings on net_memif (DPDK at both ends, no kernel)
  af_packet    spinlane's bindings on net_af_packet over a veth pair (two namespaces)
  udp_veth     stock Aeron on kernel UDP over a veth pair (two namespaces)
  udp_lo       stock Aeron on kernel UDP over loopback
  raw          transport-bench's raw arm (32 B frames over net_memif, no stack): the link's floor
Prints every parameter, one line per run with the load average beside it, then the medians
over rounds and the ratios memif / udp_veth and (memif - ipc) / raw (raw is 32 B only).
Needs root. Example:

  sudo bench/aeron-invoker.py --build build [--rounds 3] [--sizes 32,288] [--warmup 10000] [--messages 100000]
"""

import argparse
import fcntl
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "driver", "aeron"))
from aeronrig import Fail, Rig, sh, wait_for  # noqa: E402

ARMS = ["ipc", "memif", "af_packet", "udp_veth", "udp_lo", "raw"]
IP_A, IP_B = "10.61.0.1", "10.61.0.2"
# Terms of 128 KiB: on this machine the first access to each 4 KiB page of a log buffer
# costs 20-40 us even when pre-touched (a VM whose page-table work goes to the hypervisor),
# so with 1 MiB terms the first 3 MiB of each stream (49 152 messages of 32 B, half the
# measured run) carried a spike every 64 messages, IPC included; three 128 KiB terms are
# passed within the 10 000 warm-up. Smaller terms (64 KiB) double the spikes that come
# every quarter term (the image's status message and clean-up): docs/benchmarks.md.
BASE_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "AERON_DIR_DELETE_ON_START": "1",
            "AERON_TERM_BUFFER_LENGTH": "128k", "AERON_IPC_TERM_BUFFER_LENGTH": "128k",
            "AERON_PRINT_CONFIGURATION": "0", "AERON_CLIENT_LIVENESS_TIMEOUT": "10s",
            "AERON_PUBLICATION_LINGER_TIMEOUT": "1s",
            # Aeron's low-latency settings that apply to an embedded driver (the C client's
            # pre-touch is AERON_CLIENT_PRE_TOUCH_MAPPED_MEMORY; AERON_PRE_TOUCH_MAPPED_MEMORY,
            # set here before, is read by nothing)
            "AERON_TERM_BUFFER_SPARSE_FILE": "0", "AERON_CLIENT_PRE_TOUCH_MAPPED_MEMORY": "1",
            "AERON_SOCKET_SO_RCVBUF": "2m", "AERON_SOCKET_SO_SNDBUF": "2m"}


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


class Bench:
    def __init__(self, args):
        self.a = args
        self.rig = Rig(None, "i")
        self.bin = os.path.join(args.build, "bench", "aeron-invoker")
        self.tb = os.path.join(args.build, "bench", "transport-bench")
        self.lib = args.lib or os.path.join(args.build, "driver", "aeron", "libspinlane_aeron.so")
        for f in (self.bin, self.tb, self.lib):
            if not os.path.exists(f):
                raise SystemExit("missing %s: build the targets aeron-invoker transport-bench spinlane_aeron" % f)
        self.n = 0

    def side(self, ns, role, cpu, dirname, pub, sub, size, env, extra=()):
        argv = [self.bin, role, "--dir", dirname, "--pub", pub, "--sub", sub, "--cpu", str(cpu), "--len", str(size),
                "--warmup", str(self.a.warmup), "--messages", str(self.a.messages)] + list(extra)
        if role == "ping" and self.a.series:
            argv += ["--series", os.path.join(self.a.series, "%s-%d-%d.txt" % (self.arm, size, self.n))]
        e = dict(BASE_ENV)
        e.update(env)
        return self.rig.start(ns, argv, e, "%s-%d" % (role, self.n))

    def spinlane_env(self, dev, ip, cpu, prefix, vdev):
        return {"SPINLANE_EAL_ARGS": "--no-huge --no-pci -m 128 -l %d --file-prefix %s --log-level=error %s" %
                (cpu, prefix, vdev),
                "SPINLANE_SENDER_DEVICE": dev, "SPINLANE_RECEIVER_DEVICE": dev,
                "SPINLANE_SENDER_IPV4": ip + "/24", "SPINLANE_RECEIVER_IPV4": ip + "/24",
                "SPINLANE_LINK_WAIT_MS": "120000",
                "AERON_DRIVER_DYNAMIC_LIBRARIES": self.lib,
                "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA": "spinlane_udp_channel_transport_bindings"}

    def run_arm(self, arm, size):
        self.n += 1
        self.arm = arm
        tag = "%s%d" % (arm[:2], self.n)
        cpu_ping, cpu_pong = self.a.cpus
        nss = []
        try:
            if arm == "raw":
                return self.run_raw()
            dir_a = "/dev/shm/%s-%s-A" % (self.rig.id, tag)
            dir_b = "/dev/shm/%s-%s-B" % (self.rig.id, tag)
            self.rig.shm += [dir_a, dir_b]
            if arm == "ipc":
                ch_a = ch_b = "aeron:ipc"
                ping = self.side(None, "ping", cpu_ping, dir_a, ch_a, ch_b, size, {})
                ping.wait_line("^READY", 120)
                pong = self.side(None, "pong", cpu_pong, dir_a, ch_b, ch_a, size, {}, ["--no-driver"])
            else:
                ns_a, ns_b = self.rig.netns(tag + "A"), self.rig.netns(tag + "B")
                nss = [ns_a, ns_b]
                env_a, env_b = {}, {}
                ip_a, ip_b = IP_A, IP_B
                if arm == "udp_lo":
                    ip_a = ip_b = "127.0.0.1"
                    ns_b = ns_a
                elif arm == "udp_veth":
                    self.rig.veth(ns_a, ns_b, addr_a=IP_A + "/24", addr_b=IP_B + "/24")
                elif arm == "af_packet":
                    va, vb = self.rig.veth(ns_a, ns_b)
                    sh("ip netns exec %s ethtool -K %s tx off" % (ns_a, va), check=False)
                    env_a = self.spinlane_env("net_af_packet0", IP_A, cpu_ping, self.rig.id + tag + "A",
                                              "--vdev=net_af_packet0,iface=%s,qpairs=3" % va)
                    env_b = self.spinlane_env("net_af_packet0", IP_B, cpu_pong, self.rig.id + tag + "B",
                                              "--vdev=net_af_packet0,iface=%s,qpairs=3" % vb)
                elif arm == "memif":
                    sock = os.path.join(self.rig.tmp, "memif-%s.sock" % tag)
                    env_a = self.spinlane_env("net_memif0", IP_A, cpu_ping, self.rig.id + tag + "A",
                                              "--vdev=net_memif0,role=server,socket=%s,socket-abstract=no" % sock)
                    env_b = self.spinlane_env("net_memif0", IP_B, cpu_pong, self.rig.id + tag + "B",
                                              "--vdev=net_memif0,role=client,socket=%s,socket-abstract=no" % sock)
                ch_a = "aeron:udp?endpoint=%s:40501" % ip_a  # pong -> ping
                ch_b = "aeron:udp?endpoint=%s:40500" % ip_b  # ping -> pong
                if arm == "memif":  # the memif server (ping) first: its client does not retry a missing socket
                    ping = self.side(ns_a, "ping", cpu_ping, dir_a, ch_b, ch_a, size, env_a)
                    wait_for(lambda: os.path.exists(sock) or ping.p.poll() is not None, 120, "the memif socket")
                    pong = self.side(ns_b, "pong", cpu_pong, dir_b, ch_a, ch_b, size, env_b)
                else:
                    pong = self.side(ns_b, "pong", cpu_pong, dir_b, ch_a, ch_b, size, env_b)
                    pong.wait_line("^READY", 120)
                    ping = self.side(ns_a, "ping", cpu_ping, dir_a, ch_b, ch_a, size, env_a)
            rc = ping.wait(self.a.timeout)
            out = ping.output()
            if rc != 0:
                raise Fail("ping exited %d:\n%s\npong:\n%s" % (rc, out[-1500:], pong.tail(20)))
            pong.wait(60)
            m = re.search(r"^RESULT .*$", out, re.M)
            if not m:
                raise Fail("no RESULT line:\n" + out[-1500:])
            return dict((k, float(v)) for k, v in re.findall(r"(p50|p90|p99|p99\.9|max)=([0-9.]+)", m.group(0)))
        finally:
            for p in self.rig.procs:
                p.kill()
            self.rig.procs = []
            for ns in nss:
                subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
                if ns in self.rig.namespaces:
                    self.rig.namespaces.remove(ns)

    def run_raw(self):
        """transport-bench's raw arm: 32 B round trips over net_memif, client and server
        pinned as the ping and pong are (transport-bench: client CPU 0, server CPU 1)."""
        cmd = [self.tb, "--only", "pingpong", "--arms", "raw", "--reps", "1", "--samples", str(self.a.messages),
               "--warmup", str(self.a.warmup)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=self.a.timeout)
        m = re.search(r"^pingpong arm=raw .*$", p.stdout, re.M)
        if p.returncode != 0 or not m or "FAILED" in m.group(0):
            raise Fail("transport-bench raw arm failed (%d):\n%s" % (p.returncode, p.stdout[-1500:]))
        r = dict((k, float(v)) for k, v in re.findall(r"\b(p50|p99|p99\.9|max)=([0-9.]+)", m.group(0)))
        r["p90"] = float("nan")  # transport-bench does not print it
        return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build", help="a build tree with aeron-invoker, transport-bench, libspinlane_aeron.so")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--lib", help="the bindings (default: BUILD/driver/aeron/libspinlane_aeron.so; "
                    "libspinlane_aeron_checked.so checks every callback's thread)")
    ap.add_argument("--sizes", default="32,288")
    ap.add_argument("--warmup", type=int, default=10000)
    ap.add_argument("--messages", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpus", default="0,1", help="the ping's CPU, the pong's CPU")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--series", help="a folder: each ping writes its measured round trips in order to "
                    "ARM-SIZE-N.txt there, a line each: start (CLOCK_MONOTONIC) and length, ns "
                    "(where and when in a run the tails fall)")
    ap.add_argument("--lock", help="a file to flock around each run (namespaces, veths and memif sockets are made"
                    " per run: a machine shared with tests that make them may ask for this)")
    args = ap.parse_args()
    args.cpus = [int(c) for c in args.cpus.split(",")]
    arms = args.arms.split(",")
    for a in arms:
        if a not in ARMS:
            raise SystemExit("unknown arm %s (arms: %s)" % (a, ",".join(ARMS)))
    sizes = [int(s) for s in args.sizes.split(",")]
    b = Bench(args)
    ver = subprocess.run([b.bin, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    btype = "?"
    try:
        with open(os.path.join(args.build, "CMakeCache.txt")) as f:
            m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(.*)$", f.read(), re.M)
            btype = (m.group(1) if m else "") or "none"
    except OSError:
        pass
    print("# Aeron ping/pong, driver embedded in each side's one thread (AERON_THREADING_MODE=INVOKER, busy, no idle)")
    print("# %s; spinlane build type %s; %s" % (ver, btype, " ".join(os.uname()[2:3] + os.uname()[4:5])))
    print("# ping on CPU %d, pong on CPU %d; %d CPUs online; sizes %s B; warm-up %d, measured %d round trips a run;"
          " %d rounds, arms interleaved: %s" % (args.cpus[0], args.cpus[1], os.cpu_count(), args.sizes, args.warmup,
                                              args.messages, args.rounds, ",".join(arms)))
    print("# environment of every Aeron side: %s" % " ".join("%s=%s" % kv for kv in sorted(BASE_ENV.items()) if kv[0] != "PATH"))
    print("# spinlane arms: %s, EAL --no-huge --no-pci -m 128 -l <cpu>; af_packet qpairs=3 over a veth; memif copy mode"
          % b.lib)
    print("# raw: transport-bench --only pingpong --arms raw --reps 1 (32 B frames on net_memif, client CPU 0, server CPU 1)")
    print("# round trip in us, CLOCK_MONOTONIC around offer -> echo polled")
    print("%-9s %4s %5s %9s %9s %9s %9s %9s %7s" % ("arm", "size", "round", "p50", "p90", "p99", "p99.9", "max", "load1"),
          flush=True)
    res = {}
    for rnd in range(1, args.rounds + 1):
        for size in sizes:
            for arm in arms:
                if arm == "raw" and size != sizes[0]:
                    continue
                sz = 32 if arm == "raw" else size
                lock = open(args.lock, "a") if args.lock else None
                try:
                    if lock:
                        fcntl.flock(lock, fcntl.LOCK_EX)
                    r = b.run_arm(arm, sz)
                except (Fail, subprocess.TimeoutExpired) as e:
                    print("%-9s %4d %5d FAILED: %s" % (arm, sz, rnd, str(e).replace("\n", "\n#   ")), flush=True)
                    continue
                finally:
                    if lock:
                        lock.close()
                res.setdefault((arm, sz), []).append(r)
                print("%-9s %4d %5d %9.2f %9.2f %9.2f %9.2f %9.1f %7s" % (arm, sz, rnd, r["p50"], r["p90"], r["p99"],
                                                                         r["p99.9"], r["max"], loadavg()), flush=True)
    print("\n# medians over rounds (min-max)")

    def med(arm, sz, k):
        v = [r[k] for r in res.get((arm, sz), [])]
        return statistics.median(v) if v else float("nan")

    for size in sizes:
        for arm in arms:
            sz = 32 if arm == "raw" else size
            if arm == "raw" and size != sizes[0]:
                continue
            rs = res.get((arm, sz), [])
            if not rs:
                continue
            cells = []
            for k in ("p50", "p90", "p99", "p99.9", "max"):
                v = [r[k] for r in rs]
                cells.append("%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)))
            print("%-9s %4d n=%d  %s" % (arm, sz, len(rs), "  ".join("%s %s" % (k, c) for k, c in
                                                                     zip(("p50", "p90", "p99", "p99.9", "max"), cells))))
    for size in sizes:
        for k in ("p50", "p99"):
            print("ratio memif/udp_veth %3d B %-4s %.3f   (target <= 0.35)" % (size, k, med("memif", size, k) / med("udp_veth", size, k)))
            print("ratio memif/udp_lo   %3d B %-4s %.3f" % (size, k, med("memif", size, k) / med("udp_lo", size, k)))
        print("(memif - ipc) / raw  %3d B p50  %.3f   (target <= 1.2; raw is 32 B)" %
              (size, (med("memif", size, "p50") - med("ipc", size, "p50")) / med("raw", 32, "p50")))
    # per round: the same ratios from runs minutes apart, to show the spread
    for size in sizes:
        per = []
        for i in range(args.rounds):
            try:
                m = res[("memif", size)][i]
                per.append("%.3f/%.3f" % (m["p50"] / res[("udp_veth", size)][i]["p50"],
                                          (m["p50"] - res[("ipc", size)][i]["p50"]) / res[("raw", 32)][i]["p50"]))
            except (KeyError, IndexError, ZeroDivisionError):
                per.append("-")
        print("per round %3d B, memif/udp_veth p50 / (memif-ipc)/raw p50: %s" % (size, " ".join(per)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
