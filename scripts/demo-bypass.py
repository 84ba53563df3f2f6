#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The bypass media driver on this machine's virtual NICs: two stock aeronmd, each with
libspinlane_aeron.so on DPDK's net_af_packet, in two network namespaces joined by a veth
pair; stock Aeron samples across it (basic_publisher -> basic_subscriber, then cping/cpong),
what arrived, the round-trip percentiles, and the spinlane counters from AeronStat.
Everything it makes (namespaces, veths, processes, Aeron directories) is removed at exit,
also on Ctrl-C. Run by scripts/main.sh after a build; needs root and ip netns.

Usage: demo-bypass.py BUILD_DIR   (reads BUILD_DIR/aeron-demo.env, written by the build)
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "driver", "aeron"))
from aeronrig import Driver, Fail, Rig, SLEEPING, cping_percentiles  # noqa: E402

MESSAGES = 5        # basic_publisher sends one a second
PINGS, WARMUP = 5000, 500


def demo_skip(why):
    print("== bypass demo skipped: " + why, flush=True)
    sys.exit(0)


class DemoEnv:
    """The part of the test rig's Env the demo needs: Aeron's binaries, the release bindings."""

    def __init__(self, build):
        conf = {}
        path = os.path.join(build, "aeron-demo.env")
        try:
            with open(path) as f:
                for line in f:
                    k, _, v = line.strip().partition("=")
                    if k:
                        conf[k] = v
        except OSError:
            demo_skip("%s is missing: the build has no Aeron adapter (configured with -DSPINLANE_AERON=OFF, "
                      "or no libdpdk)" % path)
        self.bin = conf.get("SPINLANE_AERON_BIN", "")
        self.lib = self.lib_release = conf.get("SPINLANE_AERON_LIB", "")
        self.preload = ""
        for tool in ("aeronmd", "AeronStat", "ErrorStat", "cping", "cpong", "basic_publisher", "basic_subscriber"):
            if not os.access(self.tool(tool), os.X_OK):
                demo_skip("no %s in %s" % (tool, self.bin))
        if not os.access(self.lib, os.R_OK):
            demo_skip("no %s" % self.lib)

    def tool(self, name):
        return os.path.join(self.bin, name)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        demo_skip("needs root (network namespaces and DPDK's af_packet vdev)")
    for tool in ("ip", "ethtool", "stdbuf"):
        if shutil.which(tool) is None:
            demo_skip("no %s(8) here" % tool)
    if subprocess.run(["ip", "netns", "list"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        demo_skip("ip netns does not work here (no network namespaces in this container?)")
    env = DemoEnv(sys.argv[1])
    t0 = time.monotonic()
    rig = Rig(env, "demo")
    ver = subprocess.run([env.tool("aeronmd"), "-v"], stdout=subprocess.PIPE, text=True).stdout.strip()
    m = re.search(r"version=(\S+)", ver)
    print("== bypass demo: stock Aeron %s aeronmd with %s (%s)" % (m.group(1) if m else "?", os.path.basename(env.lib),
                                                                    env.lib))
    print("   Virtual NICs: a veth pair between two network namespaces, driven by DPDK's net_af_packet "
          "(a kernel socket under DPDK, no NIC, no hugepages). Latency here is the kernel's veth and "
          "this machine's scheduler, not kernel bypass: a real node needs an ENA or MANA NIC bound for "
          "DPDK, hugepages and isolated cores (spinlane-agent preflight says what is missing).", flush=True)
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b)
    ip_a, ip_b = "10.61.0.1", "10.61.0.2"

    def nics(dev, ip):
        return {"SPINLANE_SENDER_DEVICE": dev, "SPINLANE_RECEIVER_DEVICE": dev, "SPINLANE_SENDER_IPV4": ip + "/24",
                "SPINLANE_RECEIVER_IPV4": ip + "/24", "SPINLANE_LINK_WAIT_MS": "60000"}
    shared = dict(SLEEPING)
    da = Driver(rig, ns_a, "A", nics("net_af_packet0", ip_a), "--vdev=net_af_packet0,iface=%s,qpairs=3" % va,
                mode="SHARED", idle=shared)
    db = Driver(rig, ns_b, "B", nics("net_af_packet0", ip_b), "--vdev=net_af_packet0,iface=%s,qpairs=3" % vb,
                mode="SHARED", idle=shared)
    da.ready(90)
    db.ready(90)
    print("   aeronmd A in %s: DPDK port net_af_packet0 on %s as %s/24" % (ns_a, va, ip_a))
    print("   aeronmd B in %s: DPDK port net_af_packet0 on %s as %s/24" % (ns_b, vb, ip_b), flush=True)

    # 1. A publishes, B subscribes: what arrived
    chan = "aeron:udp?endpoint=%s:40456" % ip_b
    sub = rig.start(ns_b, ["stdbuf", "-oL", env.tool("basic_subscriber"), "-p", db.dir, "-c", chan, "-s", "1001"],
                    {"PATH": "/usr/bin:/bin"}, "basic_subscriber")
    sub.wait_line(r"^Subscription channel status", 30)
    pub = rig.start(ns_a, ["stdbuf", "-oL", env.tool("basic_publisher"), "-p", da.dir, "-c", chan, "-s", "1001",
                           "-m", str(MESSAGES), "-l", "0"], {"PATH": "/usr/bin:/bin"}, "basic_publisher")
    pub.wait(60)  # the sample's exit code is 1 even after a clean run: its output says
    if "Done sending." not in pub.output():
        raise Fail("basic_publisher exited %d:\n%s" % (pub.p.returncode, pub.tail()))
    accepted = len(re.findall(r"yay!", pub.output()))
    if accepted:
        sub.wait_line(r"(?s)(Message to stream .*?){%d}" % accepted, 30)
    sub.stop(10, signal.SIGINT)
    got = re.findall(r"^Message to stream .*$", sub.output(), re.M)
    print("== basic_publisher in A -> basic_subscriber in B over %s: %d offered, %d accepted, %d arrived" %
          (chan, MESSAGES, accepted, len(got)))
    print("   (an offer before the subscription's image is connected is refused by Aeron: 'not connected')")
    for line in got:
        print("   " + line)
    if not accepted or len(got) != accepted:
        raise Fail("%d accepted but %d arrived:\n%s" % (accepted, len(got), sub.tail()))

    # 2. ping-pong: A pings B, B pongs back, both ways through DPDK
    pong = rig.start(ns_b, [env.tool("cpong"), "-p", db.dir, "-c", "aeron:udp?endpoint=%s:40500" % ip_b,
                            "-C", "aeron:udp?endpoint=%s:40501" % ip_a], {"PATH": "/usr/bin:/bin"}, "cpong")
    ping = rig.start(ns_a, [env.tool("cping"), "-p", da.dir, "-c", "aeron:udp?endpoint=%s:40500" % ip_b,
                            "-C", "aeron:udp?endpoint=%s:40501" % ip_a, "-m", str(PINGS), "-w", str(WARMUP),
                            "-L", "32"], {"PATH": "/usr/bin:/bin"}, "cping")
    rc = ping.wait(120)
    pong.stop(20)
    if rc != 0:
        raise Fail("cping exited %d:\n%s" % (rc, ping.tail()))
    r = cping_percentiles(ping.output())
    count = r["count"]
    print("== cping in A <-> cpong in B, 32-byte messages, %d round trips after %d warm-up (sleeping idle "
          "strategies: more spinning threads than this machine has CPUs would measure its scheduler):" %
          (count, WARMUP))
    print("   RTT " + ", ".join("%s %.1f us" % (k, r[k]) for k in ("p50", "p90", "p99", "p99.9")) +
          ", max %.1f us" % r["max"])

    # 3. what the bindings counted
    print("== spinlane counters (AeronStat):")
    for d in (da, db):
        c = d.counters()
        rows = sorted((k, v) for k, v in c.items() if k.startswith("spinlane"))
        if not rows:
            raise Fail("no spinlane counters in %s's AeronStat" % d.name)
        for k, v in rows:
            if v:
                print("   %s: %-40s %d" % (d.name, k, v))
    errs = [d.errors()[0] for d in (da, db)]
    for d in (da, db):
        d.stop()
    print("== ErrorStat: %d and %d distinct errors; both drivers shut down; done in %.0f s" %
          (errs[0], errs[1], time.monotonic() - t0))
    return 0 if errs == [0, 0] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("== bypass demo FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
