#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Aeron ping/pong (the stock cping/cpong) through two media drivers, one in each of two
network namespaces, in one sitting and with one harness for every arm:
  kernel    two stock aeronmd on kernel UDP over a veth pair
  af_packet two aeronmd + libspinlane_aeron.so on net_af_packet over a veth pair
  memif     two aeronmd + libspinlane_aeron.so over net_memif (DPDK on both ends, no kernel)
An arm named ARM+stat is ARM with spinlane-stat on both drivers' Aeron directories, each
scraped every --scrape-interval seconds while cping runs (the cost of a /metrics scrape
beside the driver: compare it with ARM in the same sitting; SPINLANE_STAT names the binary).
With --pin, side A (driver + cping) is pinned to one CPU and side B (driver + cpong) to
the other, as two hosts would be; by default the scheduler places them (on 2 CPUs a
spinning client beside its driver on one CPU measures time slices). Prints every
parameter with the results; arms run interleaved, ROUNDS times. Needs root and the environment the tests use (SPINLANE_AERON_BIN,
SPINLANE_AERON_LIB_RELEASE, SPINLANE_AERON_MSGS), e.g.:

  sudo SPINLANE_AERON_BIN=$(sed -n "s/^SPINLANE_AERON_BIN=//p" build/aeron-demo.env) \\
       SPINLANE_AERON_LIB=build/driver/aeron/libspinlane_aeron.so \\
       SPINLANE_AERON_MSGS=build/tests/driver/aeron/aeron-msgs bench/aeron-pingpong.py [--profile sleeping|noop]
"""

import argparse
import os
import re
import subprocess
import sys
import threading
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "driver", "aeron"))
from aeronrig import Driver, Env, Fail, Rig, SLEEPING, cping_percentiles, wait_for  # noqa: E402

PROFILES = {
    # 2 CPUs: one thread per driver (SHARED) sleeping 20 us when idle; cping/cpong spin
    "sleeping": dict(SLEEPING, AERON_THREADING_MODE="SHARED"),
    # Aeron's low-latency profile: DEDICATED, noop sender/receiver; with 2 CPUs and 8+
    # spinning threads this measures the scheduler, not the drivers
    "noop": {"AERON_THREADING_MODE": "DEDICATED", "AERON_SENDER_IDLE_STRATEGY": "noop",
             "AERON_RECEIVER_IDLE_STRATEGY": "noop", "AERON_CONDUCTOR_IDLE_STRATEGY": "sleep-ns",
             "AERON_CONDUCTOR_IDLE_STRATEGY_INIT_ARGS": "1ms"},
}


def run_arm(rig, arm, profile, args, cpus, rnd):
    tag = "%s%s%d" % (arm[:1], "s" if "+stat" in arm else "", rnd)
    ns_a, ns_b = rig.netns(tag + "A"), rig.netns(tag + "B")
    try:
        return run_in(rig, arm, profile, args, cpus, ns_a, ns_b, tag)
    finally:
        for p in rig.procs:
            p.kill()
        rig.procs = []
        for ns in (ns_a, ns_b):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
            rig.namespaces.remove(ns)


class Scraper:
    """spinlane-stat on each driver's directory (loopback, a port of its choosing), each
    scraped every interval seconds on a thread until stop(); counts the scrapes."""

    def __init__(self, rig, drivers, interval):
        self.ports, self.scrapes, self.failed = [], 0, 0
        self.done = threading.Event()
        for d in drivers:
            p = rig.start(None, [rig.env.stat, "--aeron-dir", d.dir, "--metrics-bind-address", "127.0.0.1:0"],
                          {"PATH": "/usr/bin:/bin"}, "stat-" + d.name)
            self.ports.append(int(p.wait_line(r"serving /metrics on 127\.0\.0\.1:(\d+)", 60).group(1)))
        self.t = threading.Thread(target=self.run, args=(interval,), daemon=True)
        self.t.start()

    def run(self, interval):
        while not self.done.wait(interval):
            for port in self.ports:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                        body = r.read()
                    self.scrapes += 1 if re.search(rb"^spinlane_stat_up 1$", body, re.M) else 0
                    self.failed += 0 if re.search(rb"^spinlane_stat_up 1$", body, re.M) else 1
                except OSError:
                    self.failed += 1

    def stop(self):
        self.done.set()
        self.t.join(30)


def run_in(rig, arm, profile, args, cpus, ns_a, ns_b, tag):
    ip_a, ip_b = "10.60.0.1", "10.60.0.2"
    arm, _, scrape = arm.partition("+")
    base = dict(PROFILES[profile])
    pin_a, pin_b = (["taskset", "-c", cpus[0]], ["taskset", "-c", cpus[1]]) if args.pin else ([], [])
    if arm == "kernel":
        rig.veth(ns_a, ns_b, addr_a=ip_a + "/24", addr_b=ip_b + "/24")
        da = Driver(rig, ns_a, tag + "-A", extra=base, idle={}, wrap=pin_a)
        db = Driver(rig, ns_b, tag + "-B", extra=base, idle={}, wrap=pin_b)
    else:
        if arm == "af_packet":
            va, vb = rig.veth(ns_a, ns_b)
            dev_a = dev_b = "net_af_packet0"
            vdev_a = "--vdev=net_af_packet0,iface=%s,qpairs=3" % va
            vdev_b = "--vdev=net_af_packet0,iface=%s,qpairs=3" % vb
        else:
            sock = os.path.join(rig.tmp, "memif-%s.sock" % tag)
            dev_a = dev_b = "net_memif0"
            vdev_a = "--vdev=net_memif0,role=server,socket=%s,socket-abstract=no" % sock
            vdev_b = "--vdev=net_memif0,role=client,socket=%s,socket-abstract=no" % sock

        def nics(dev, ip):
            # a memif link is up once both drivers have started: generous on a loaded machine
            return {"SPINLANE_SENDER_DEVICE": dev, "SPINLANE_RECEIVER_DEVICE": dev, "SPINLANE_SENDER_IPV4": ip + "/24",
                    "SPINLANE_RECEIVER_IPV4": ip + "/24", "SPINLANE_LINK_WAIT_MS": "120000"}
        da = Driver(rig, ns_a, tag + "-A", nics(dev_a, ip_a), vdev_a, extra=base, idle={}, lib=rig.env.lib_release,
                    wrap=pin_a)
        if arm == "memif":  # its client does not retry a socket that is not there yet
            wait_for(lambda: os.path.exists(sock) or da.proc.p.poll() is not None, 120, "the memif server's socket")
        db = Driver(rig, ns_b, tag + "-B", nics(dev_b, ip_b), vdev_b, extra=base, idle={}, lib=rig.env.lib_release,
                    wrap=pin_b)
    da.ready(90)
    db.ready(90)
    scraper = Scraper(rig, (da, db), args.scrape_interval) if scrape == "stat" else None
    pong = rig.start(ns_b, pin_b + [rig.env.tool("cpong"), "-p", db.dir, "-c",
                                  "aeron:udp?endpoint=%s:40500" % ip_b, "-C", "aeron:udp?endpoint=%s:40501" % ip_a],
                     {"PATH": "/usr/bin:/bin"}, "cpong")
    ping = rig.start(ns_a, pin_a + [rig.env.tool("cping"), "-p", da.dir, "-c",
                                  "aeron:udp?endpoint=%s:40500" % ip_b, "-C", "aeron:udp?endpoint=%s:40501" % ip_a,
                                  "-m", str(args.messages), "-w", str(args.warmup), "-L", str(args.length)],
                     {"PATH": "/usr/bin:/bin"}, "cping")
    rc = ping.wait(args.timeout)
    out = ping.output()
    if scraper:
        scraper.stop()
    pong.stop(20)
    errs = sum(d.errors()[0] for d in (da, db))
    for d in (da, db):
        d.stop()
    if rc != 0:
        raise Fail("cping exited %d:\n%s" % (rc, out[-2000:]))
    r = cping_percentiles(out)
    r["errors"] = errs
    r["scrapes"] = "%d (%d failed)" % (scraper.scrapes, scraper.failed) if scraper else "-"
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", choices=sorted(PROFILES), default="sleeping")
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=5000)
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--arms", default="kernel,af_packet,memif")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--scrape-interval", type=float, default=1.0, help="seconds between scrapes of an ARM+stat arm")
    ap.add_argument("--pin", action="store_true", help="side A on CPU 0, side B on CPU 1 (default: the scheduler places)")
    args = ap.parse_args()
    env = Env()
    env.lib = env.lib_release  # measure the release build, not the thread-checking one
    if "+stat" in args.arms and not os.access(env.stat, os.X_OK):
        print("an ARM+stat arm needs SPINLANE_STAT (the spinlane-stat binary)", file=sys.stderr)
        return 2
    rig = Rig(env, "p")
    cpus = ["0", "1"] if os.cpu_count() >= 2 else ["0", "0"]
    ver = subprocess.run([env.tool("aeronmd"), "-v"], stdout=subprocess.PIPE, text=True).stdout.strip()
    where = ("side A (driver, cping) on CPU %s, side B (driver, cpong) on CPU %s" % (cpus[0], cpus[1]) if args.pin
             else "unpinned")
    print("Aeron ping/pong: cping -m %d -w %d -L %d; profile %s %s; %s; %d CPUs online; %s; rounds %d" %
          (args.messages, args.warmup, args.length, args.profile, PROFILES[args.profile], where, os.cpu_count(), ver,
           args.rounds), flush=True)
    print("%-14s %5s %9s %9s %9s %9s %9s %7s %6s %7s %s" % ("arm", "round", "p50 us", "p90 us", "p99 us", "p99.9 us",
                                                             "max us", "count", "errors", "loadavg", "scrapes"),
          flush=True)
    for rnd in range(args.rounds):
        for arm in args.arms.split(","):
            try:
                r = run_arm(rig, arm, args.profile, args, cpus, rnd)
                with open("/proc/loadavg") as f:
                    load = f.read().split()[0]  # other jobs on the machine: a figure is worth what this says
                print("%-14s %5d %9.2f %9.2f %9.2f %9.2f %9.2f %7d %6d %7s %s" %
                      (arm, rnd + 1, r["p50"], r["p90"], r["p99"], r["p99.9"], r["max"], r["count"], r["errors"], load,
                       r["scrapes"]), flush=True)
            except Fail as e:
                print("%-14s %5d FAILED: %s" % (arm, rnd + 1, e), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
