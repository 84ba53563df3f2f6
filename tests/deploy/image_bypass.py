#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The driver image runs the bypass (scripts/test-images.sh): from the root file system
of a container of the driver image (ROOT, mounted by buildah, /proc /sys /dev bound in),
each program run by chroot: the image's aeronmd with its libspinlane_aeron.so on
net_af_packet over a veth in one network namespace, the image's aeronmd without the
bindings (stock Aeron, kernel UDP) in another; Aeron's cping (stock side) and cpong (bypass
side) pass messages both ways; then spinlane-launch --check-only in a pod view passes every
check, aeron-bindings included; the image's spinlane-stat serves the bypass driver's
counters on /metrics. Namespaces, veths, processes and files are the rig's
(tests/driver/aeron/aeronrig.py): removed at exit, also on failure.

usage: image_bypass.py ROOT TOOLS   (TOOLS: the folder of cping, cpong, AeronStat inside ROOT)"""

import os
import re
import shutil
import signal
import subprocess
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "driver", "aeron"))
from aeronrig import SLEEPING, Check, Fail, Rig, pod_view, wait_for  # noqa: E402

A_IP, B_IP = "10.56.0.1", "10.56.0.2"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"  # the children's PATH is the image's


class ImageDriver:
    """aeronmd of the image, run in ns by chroot ROOT; bypass when nics is given."""

    def __init__(self, rig, root, tools, ns, name, nics=None, vdev=""):
        self.rig, self.root, self.tools, self.ns, self.name = rig, root, tools, ns, name
        self.dir = "/dev/shm/%s-%s" % (rig.id, name)  # the host's /dev/shm, bound into ROOT
        rig.shm.append(self.dir)
        self.prefix = "%s-%s" % (rig.id, name)
        env = {"PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "AERON_DIR": self.dir,
               "AERON_DIR_DELETE_ON_START": "1", "AERON_THREADING_MODE": "DEDICATED",
               "AERON_TERM_BUFFER_LENGTH": "1m", "AERON_IPC_TERM_BUFFER_LENGTH": "1m",
               "AERON_PRINT_CONFIGURATION": "0"}
        env.update(SLEEPING)
        self.dpdk = nics is not None
        if self.dpdk:
            env["SPINLANE_EAL_ARGS"] = ("--no-huge --no-pci -m 128 -l 0 --file-prefix %s --log-level=error %s"
                                        % (self.prefix, vdev))
            env.update(nics)
            env["AERON_DRIVER_DYNAMIC_LIBRARIES"] = "/usr/local/lib/libspinlane_aeron.so"
            env["AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA"] = "spinlane_udp_channel_transport_bindings"
        self.proc = rig.start(ns, [CHROOT, root, "/usr/local/bin/aeronmd"], env, "aeronmd-" + name)

    def counters(self):
        r = subprocess.run(["ip", "netns", "exec", self.ns, CHROOT, self.root, os.path.join(self.tools, "AeronStat"),
                            "-d", self.dir, "-w", "false", "-t", "2000"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            return None
        out = {}
        for m in re.finditer(r"^\s*\d+:\s+(-?[\d,]+) - (.*)$", r.stdout, re.M):
            out[m.group(2).strip()] = out.get(m.group(2).strip(), 0) + int(m.group(1).replace(",", ""))
        return out

    def total(self, prefix):
        c = self.counters() or {}
        return sum(v for k, v in c.items() if k.startswith(prefix))

    def ready(self, timeout=90):
        def up():
            if self.proc.p.poll() is not None:
                raise Fail("driver %s exited (%s):\n%s" % (self.name, self.proc.p.returncode, self.proc.tail()))
            c = self.counters()
            return c is not None and ((not self.dpdk) or any(k.startswith("spinlane rx frames") for k in c))
        wait_for(up, timeout, "driver %s to come up" % self.name)
        return self

    def stop(self):
        rc = self.proc.stop(60)
        if rc != signal.SIGTERM or "Shutting down driver" not in self.proc.output():
            raise Fail("driver %s exited %s on SIGTERM:\n%s" % (self.name, rc, self.proc.tail()))


def ping_pong(rig, root, tools, a, b, n):
    """cpong on the bypass driver A, cping on the stock driver B: n pings B -> A, n pongs A -> B."""
    ping = "aeron:udp?endpoint=%s:40701" % A_IP
    pong = "aeron:udp?endpoint=%s:40702" % B_IP
    env = {"PATH": "/usr/bin:/bin"}
    cpong = rig.start(a.ns, [CHROOT, root, os.path.join(tools, "cpong"), "-p", a.dir, "-c", ping, "-C", pong],
                      env, "cpong-A")
    # (cpong's stdout is a file, so block-buffered: nothing to wait for; cping waits until
    # its pong subscription is connected, which needs cpong's publication)
    cping = rig.start(b.ns, [CHROOT, root, os.path.join(tools, "cping"), "-p", b.dir, "-c", ping, "-C", pong,
                             "-m", str(n), "-w", "100", "-L", "64"], env, "cping-B")
    rc = cping.wait(240)
    if cpong.p.poll() is not None:
        raise Fail("cpong (bypass, A) exited %s:\n%s" % (cpong.p.returncode, cpong.tail()))
    cpong.stop(30)
    out = cping.output()
    if rc != 0 or "Shutting down..." not in out or ("Pinging %d messages" % n) not in out:
        raise Fail("cping (stock, B) exited %s:\n%s\ncpong (bypass, A) said:\n%s" % (rc, cping.tail(), cpong.tail()))
    return out


def stat_scrape(rig, root, a, want):
    """The image's spinlane-stat on A's Aeron directory (loopback, a port of its choosing):
    Aeron's and spinlane's counters, the port's with its NIC label."""
    import urllib.request
    st = rig.start(None, [CHROOT, root, "/usr/local/bin/spinlane-stat", "--aeron-dir", a.dir,
                          "--metrics-bind-address", "127.0.0.1:0"], {"PATH": "/usr/local/bin:/usr/bin:/bin"},
                   "spinlane-stat")
    port = int(st.wait_line(r"serving /metrics on 127\.0\.0\.1:(\d+)", 60).group(1))
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30) as r:
        text = r.read().decode()
    st.stop(30)

    def value(rx):
        m = re.search(rx, text, re.M)
        return int(m.group(1)) if m else None
    rx = value(r'^spinlane_port_rx_datagrams_total\{nic="net_af_packet0",ipv4="%s/24"\} (\d+)$' % A_IP)
    got = value(r"^aeron_bytes_received_total (\d+)$")
    if value(r"^spinlane_stat_up (\d+)$") != 1 or rx is None or rx < want or not got:
        raise Fail("spinlane-stat's /metrics (rx datagrams %s, want >= %d; bytes received %s):\n%s" %
                   (rx, want, got, text[:3000]))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    root, tools = sys.argv[1], sys.argv[2]
    c = Check()
    rig = Rig(types.SimpleNamespace(), "i")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics = {"SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_RECEIVER_DEVICE": "net_af_packet0",
            "SPINLANE_SENDER_IPV4": A_IP + "/24", "SPINLANE_RECEIVER_IPV4": A_IP + "/24"}
    try:
        a = ImageDriver(rig, root, tools, ns_a, "A", nics, "--vdev=net_af_packet0,iface=%s,qpairs=3" % va).ready()
        b = ImageDriver(rig, root, tools, ns_b, "B").ready()
    except Fail as e:
        c.ok(False, "the image's aeronmd starts with the bypass (A) and stock (B)", str(e))
        return c.done()
    c.ok(True, "the image's aeronmd starts with libspinlane_aeron.so on net_af_packet (A) and stock (B)")
    rx0, tx0 = a.total("spinlane rx datagrams"), a.total("spinlane tx datagrams")
    out = c.run("500 x 64 B pings stock B -> bypass A and pongs A -> B (cping/cpong)", ping_pong, rig, root, tools,
                a, b, 500)
    if out:  # the RTT histogram's summary (a number to look at, not a check)
        print("\n".join(line for line in out.splitlines() if line.startswith("#[")))
    # every ping came in and every pong went out through DPDK (one datagram each: a ping
    # is sent when the last pong is back); the adapter copies its port counters into
    # Aeron's about ten times a second, so a reading may lag a little
    want = 500 + 100  # measured and warm-up messages
    seen = {}

    def counted():
        seen["rx"] = a.total("spinlane rx datagrams") - rx0
        seen["tx"] = a.total("spinlane tx datagrams") - tx0
        return seen["rx"] >= want and seen["tx"] >= want
    try:
        wait_for(counted, 15, "the bypass counters")
        ok = True
    except Fail:
        ok = False
    c.ok(ok, "the pings came in and the pongs went out through DPDK (A: %d rx, %d tx datagrams, %d each expected)"
         % (seen.get("rx", 0), seen.get("tx", 0), want))
    c.run("the image's spinlane-stat serves the bypass driver's counters on /metrics", stat_scrape, rig, root, a, want)
    for d in (a, b):
        c.run("driver %s stops on SIGTERM" % d.name, d.stop)

    view = os.path.join(root, "tmp", rig.id + "-view")
    pod_view(view, "0-1")
    pod = {"SPINLANE_ISOLATED_CPUS": "0-1", "SPINLANE_ISOLATED_CORES": "p0c0,p0c1",
           "SPINLANE_DPDK_NICS": "0000:00:06.0", "SPINLANE_NIC_0_KIND": "other", "SPINLANE_NIC_0_DRIVER": "vfio-pci",
           "SPINLANE_NIC_0_NUMA": "-1", "SPINLANE_NIC_0_DEVICES": "/dev/vfio/vfio,/dev/vfio/7",
           "SPINLANE_NIC_0_IPV4": A_IP + "/24", "SPINLANE_NIC_0_GATEWAY": "", "SPINLANE_HUGEPAGE_DIR": "/dev/hugepages",
           "SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_RECEIVER_DEVICE": "net_af_packet0",
           # qpairs=3: the datapath check opens the port as the driver does (two queues and
           # the control queue on a shared port)
           "SPINLANE_EAL_EXTRA_ARGS": "--no-huge --no-pci --vdev=net_af_packet0,iface=%s,qpairs=3 --log-level=error" % va,
           "SPINLANE_DPDK_MEMORY_MB": "128", "SPINLANE_POD_UID": rig.id, "AERON_DIR": "/dev/shm/%s-L" % rig.id,
           "PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    try:
        r = subprocess.run(["ip", "netns", "exec", ns_a, CHROOT, root, "/usr/local/bin/spinlane-launch", "--root",
                            "/tmp/%s-view" % rig.id, "--check-only"], env=pod, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        print(r.stdout, end="")
        # datapath: link up, nothing to ARP (no gateway, B runs on kernel UDP: no probe
        # responder to name as SPINLANE_DATAPATH_PEER): a WARN line, not a failure
        c.ok(r.returncode == 0 and re.search(r"^PASS aeron-bindings:", r.stdout, re.M) is not None
             and re.search(r"^(PASS|WARN) datapath: sender\+receiver net_af_packet0 .*: link up in ", r.stdout, re.M) is not None,
             "spinlane-launch --check-only in the pod view: every check passes, aeron-bindings included (exit %d)"
             % r.returncode)
    finally:
        subprocess.run(["rm", "-rf", view])
    return c.done()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("FAIL %s" % e, flush=True)
        sys.exit(1)
