#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Stock Aeron (aeronmd, cping/cpong, AeronStat, ErrorStat) against spinlane's bindings on
real DPDK vdevs. Cases (argv[1]):
  interop  aeronmd + libspinlane_aeron.so on net_af_packet over a veth in namespace A
           against a stock aeronmd on kernel UDP in namespace B: publications both ways
           (every message in order, also fragmented ones), cping/cpong, multicast both
           ways, dynamic MDC with a wildcard port both ways, host-local channels against a
           stock driver in A, loss recovery through Aeron's loss interceptor (NAKs and
           retransmits in the counters), DEDICATED / SHARED_NETWORK / SHARED, a sender
           and a receiver NIC; clean shutdown, nothing in ErrorStat, every callback on its
           agent's thread (the test build of the library aborts otherwise).
  memif    two spinlane drivers over net_memif (DPDK on both ends).
  bad      bad contract values and unservable channels: a clear error, the driver exits
           (contract) or refuses the channel and keeps serving; nothing hangs.
  launch   spinlane-launch in a pod view starts the bypass driver by default (its own
           contract from the allocation, the release library, Aeron's low-latency profile
           with noop sender/receiver): every check passes, the driver serves both ways.
  stat     spinlane-stat over the bypass driver's CnC file, parsed with prometheus_client:
           Aeron's and spinlane's counters with their labels, stream positions and lags
           while streams flow, values that move with traffic and with injected faults
           (Aeron's loss interceptor: NAKs, retransmits; datagrams to a port nobody
           serves: the port's no_endpoint drops), equal to AeronStat read between two
           scrapes, and the driver restarted under it (a new file, remapped)."""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aeronrig import Check, Driver, Env, Fail, LaunchedDriver, Rig, msgs, pod_view, sh, skip, transfer, wait_for  # noqa: E402

A_IP, B_IP = "10.55.0.1", "10.55.0.2"


def shared_nic(vdev_iface, ip, qpairs=3):
    """One port for both agents: 2 queues + the control queue."""
    return ({"SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_RECEIVER_DEVICE": "net_af_packet0",
             "SPINLANE_SENDER_IPV4": ip + "/24", "SPINLANE_RECEIVER_IPV4": ip + "/24"},
            "--vdev=net_af_packet0,iface=%s,qpairs=%d" % (vdev_iface, qpairs))


def unicast(ip, port):
    return "aeron:udp?endpoint=%s:%d" % (ip, port)


def both_ways(c, rig, a, b, tag, n=2000, size=64, port=40100, stream=1001):
    c.run("%s: %d x %d B A(spinlane) -> B(kernel)" % (tag, n, size), transfer, rig, a, unicast(B_IP, port), b,
          unicast(B_IP, port), n, size, stream)
    c.run("%s: %d x %d B B(kernel) -> A(spinlane)" % (tag, n, size), transfer, rig, b, unicast(A_IP, port + 1), a,
          unicast(A_IP, port + 1), n, size, stream + 1)


def healthy(c, tag, *drivers):
    for d in drivers:
        n, text = d.errors()
        c.ok(n == 0, "%s: ErrorStat of %s is empty" % (tag, d.name), text)


def stop_all(c, tag, *drivers):
    for d in drivers:
        c.run("%s: %s shuts down cleanly (SIGTERM, exit 15 = SIGTERM%s)" % (tag, d.name, ", DPDK runtime dir removed" if d.dpdk
                                                                  else ""), d.stop)


def thread_checks(c, tag, a, roles=("sender", "receiver")):
    cs = a.counters()
    for role in roles:
        v = cs.get("spinlane %s thread checks" % role, 0)
        c.ok(v > 0, "%s: %s callbacks ran on the %s thread (%d checked)" % (tag, role, role, v))
    # the agents' threads are DPDK lcores (rte_thread_register): per-lcore mempool caches
    ids = [cs.get("spinlane %s lcore id" % role, -1) for role in roles]
    c.ok(all(i >= 0 for i in ids), "%s: the sender's and the receiver's threads have lcore ids %s" % (tag, ids))
    return ids


def cping(c, rig, ping_driver, pong_driver, ping_ch, pong_ch, tag, n=2000):
    pong = rig.start(pong_driver.ns, [rig.env.tool("cpong"), "-p", pong_driver.dir, "-c", ping_ch, "-C", pong_ch],
                     {"PATH": "/usr/bin:/bin"}, "cpong")
    try:
        ping = rig.start(ping_driver.ns, [rig.env.tool("cping"), "-p", ping_driver.dir, "-c", ping_ch, "-C", pong_ch,
                                          "-m", str(n), "-w", "200", "-L", "32"], {"PATH": "/usr/bin:/bin"}, "cping")
        rc = ping.wait(180)
        out = ping.output()
        c.ok(rc == 0 and "Shutting down" in out, "%s: cping/cpong %d round trips" % (tag, n), out[-2000:])
        return out
    finally:
        pong.stop(20)


def case_interop(env):
    c = Check()
    rig = Rig(env, "i")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics, vdev = shared_nic(va, A_IP)

    # ---- DEDICATED, the full set ----
    tag = "DEDICATED"
    # the driver runs on CPU 1 only while SPINLANE_EAL_ARGS names lcore 0: rte_eal_init
    # would pin the conductor (aeronmd's main thread) there; the adapter gives it back
    pinned = (os.cpu_count() or 1) >= 2
    a = Driver(rig, ns_a, "A", nics, vdev, wrap=["taskset", "-c", "1"] if pinned else []).ready()
    b = Driver(rig, ns_b, "B").ready()
    if pinned:
        with open("/proc/%d/status" % a.proc.p.pid) as f:
            allowed = [ln.split()[1] for ln in f if ln.startswith("Cpus_allowed_list:")]
        c.ok(allowed == ["1"], "%s: the conductor keeps its affinity across rte_eal_init (CPUs %s, EAL lcore 0)" %
             (tag, allowed))
    both_ways(c, rig, a, b, tag)
    both_ways(c, rig, a, b, tag + " fragmented", n=300, size=5000, port=40110, stream=1101)
    cping(c, rig, b, a, unicast(A_IP, 40120), unicast(B_IP, 40121), tag + " ping B->A")
    cping(c, rig, a, b, unicast(B_IP, 40122), unicast(A_IP, 40123), tag + " ping A->B")
    # multicast: the spinlane side with and without interface= (the DPDK port is the default)
    g1, g2 = "239.255.90.1", "239.255.90.3"
    c.run(tag + ": multicast A -> B (interface=)", transfer, rig,
          a, "aeron:udp?endpoint=%s:40130|interface=%s" % (g1, A_IP), b,
          "aeron:udp?endpoint=%s:40130|interface=%s" % (g1, B_IP), 1000, 64, 1201)
    c.run(tag + ": multicast B -> A (default interface)", transfer, rig,
          b, "aeron:udp?endpoint=%s:40131|interface=%s" % (g2, B_IP), a, "aeron:udp?endpoint=%s:40131" % g2, 1000, 64,
          1202)
    c.eventually(a, lambda cs: cs.get("spinlane igmp reports tx: net_af_packet0 %s/24" % A_IP, 0) > 0,
                 tag + ": IGMP reports sent for the joins")
    # dynamic MDC, the subscriber on a wildcard port (its driver picks it, the publisher
    # learns it from the status messages)
    c.run(tag + ": dynamic MDC A(pub) -> B(sub on port 0)", transfer, rig,
          a, "aeron:udp?control=%s:40140|control-mode=dynamic" % A_IP, b,
          "aeron:udp?endpoint=%s:0|control=%s:40140|control-mode=dynamic" % (B_IP, A_IP), 1000, 64, 1301)
    c.run(tag + ": dynamic MDC B(pub) -> A(sub on port 0)", transfer, rig,
          b, "aeron:udp?control=%s:40141|control-mode=dynamic" % B_IP, a,
          "aeron:udp?endpoint=%s:0|control=%s:40141|control-mode=dynamic" % (A_IP, B_IP), 1000, 64, 1302)
    # host-local: a stock driver in A on kernel UDP; 127/8 channels stay on the kernel
    k = Driver(rig, ns_a, "K").ready()
    c.run(tag + ": host-local kernel(pub) -> spinlane(sub) on 127.0.0.1", transfer, rig,
          k, unicast("127.0.0.1", 40150), a, unicast("127.0.0.1", 40150), 1000, 64, 1401)
    c.run(tag + ": host-local spinlane(pub) -> kernel(sub) on 127.0.0.1", transfer, rig,
          a, unicast("127.0.0.1", 40151), k, unicast("127.0.0.1", 40151), 1000, 64, 1402)
    c.eventually(a, lambda cs: cs.get("spinlane host-local tx: net_af_packet0 %s/24" % A_IP, 0) > 0 and
                 cs.get("spinlane host-local rx: net_af_packet0 %s/24" % A_IP, 0) > 0,
                 tag + ": the spinlane publication's host-local traffic went through the transport's kernel sockets")
    # its status messages came in on the kernel socket that queue 0 (the receiver) reads
    c.eventually(a, lambda cs: cs.get("spinlane sender hand-off in", 0) > 0 and
                 cs.get("spinlane receiver hand-off out", 0) > 0,
                 tag + ": datagrams for the sender that the receiver's queue took were handed to the sender")
    c.eventually(a, lambda cs: sum(v for k, v in cs.items() if k.startswith("spinlane tx datagrams")) > 0 and
                 sum(v for k, v in cs.items() if k.startswith("spinlane rx datagrams")) > 0,
                 tag + ": datagrams went through the DPDK port")
    ids = thread_checks(c, tag, a)
    c.ok(ids[0] != ids[1], "%s: DEDICATED sender and receiver are two lcores (%s)" % (tag, ids))
    healthy(c, tag, a, b, k)
    stop_all(c, tag, a, b, k)

    # ---- loss recovery through Aeron's loss interceptor on both receiving sides ----
    tag = "loss"
    loss = {"AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS": "loss",
            "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS": "rate=0.05|seed=11|recv-msg-mask=0x2"}  # DATA frames
    a = Driver(rig, ns_a, "A2", nics, vdev, extra=loss).ready()
    b = Driver(rig, ns_b, "B2", extra=loss).ready()
    both_ways(c, rig, a, b, tag, n=5000, size=256, port=40160, stream=1501)
    for d in (a, b):
        c.eventually(d, lambda cs: cs.get("NAKs sent", 0) > 0 and cs.get("NAKs received", 0) > 0 and
                     cs.get("Retransmits sent", 0) > 0,
                     "%s: %s sent NAKs, got NAKs and retransmitted" % (tag, d.name))
    healthy(c, tag, a, b)
    stop_all(c, tag, a, b)

    # ---- the other threading modes ----
    for mode in ("SHARED_NETWORK", "SHARED"):
        a = Driver(rig, ns_a, "A-" + mode, nics, vdev, mode=mode).ready()
        b = Driver(rig, ns_b, "B-" + mode).ready()
        both_ways(c, rig, a, b, mode, n=1000, port=40170)
        c.run(mode + ": multicast A -> B", transfer, rig, a, "aeron:udp?endpoint=239.255.90.5:40172", b,
              "aeron:udp?endpoint=239.255.90.5:40172|interface=%s" % B_IP, 500, 64, 1601)
        thread_checks(c, mode, a)
        healthy(c, mode, a, b)
        stop_all(c, mode, a, b)

    # ---- a sender NIC and a receiver NIC ----
    tag = "two NICs"
    va2, vb2 = rig.veth(ns_a, ns_b, addr_b="10.56.0.2/24")
    nics2 = {"SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_SENDER_IPV4": A_IP + "/24",
             "SPINLANE_RECEIVER_DEVICE": "net_af_packet1", "SPINLANE_RECEIVER_IPV4": "10.56.0.1/24"}
    vdev2 = "--vdev=net_af_packet0,iface=%s,qpairs=2 --vdev=net_af_packet1,iface=%s,qpairs=2" % (va, va2)
    a = Driver(rig, ns_a, "A3", nics2, vdev2).ready()
    b = Driver(rig, ns_b, "B3").ready()
    c.run(tag + ": A(sender NIC) -> B", transfer, rig, a, unicast(B_IP, 40180), b, unicast(B_IP, 40180), 1000, 64,
          1701)
    c.run(tag + ": B -> A(receiver NIC)", transfer, rig, b, unicast("10.56.0.1", 40181), a,
          unicast("10.56.0.1", 40181), 1000, 64, 1702)
    c.eventually(a, lambda cs: cs.get("spinlane tx datagrams: net_af_packet0 %s/24" % A_IP, 0) > 0 and
                 cs.get("spinlane tx datagrams: net_af_packet1 10.56.0.1/24", 0) > 0,
                 tag + ": each NIC sent (data on the sender's, status messages on the receiver's)")
    thread_checks(c, tag, a)
    healthy(c, tag, a, b)
    stop_all(c, tag, a, b)
    return c.done()


def case_memif(env):
    c = Check()
    rig = Rig(env, "m")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    sock = os.path.join(rig.tmp, "memif.sock")
    ip_a, ip_b = "10.57.0.1", "10.57.0.2"

    def contract(ip, role):
        # the link is up once both drivers have started their EAL: a generous wait, as
        # two EAL start-ups on a loaded 2-CPU machine can take seconds
        return ({"SPINLANE_SENDER_DEVICE": "net_memif0", "SPINLANE_RECEIVER_DEVICE": "net_memif0",
                 "SPINLANE_SENDER_IPV4": ip + "/24", "SPINLANE_RECEIVER_IPV4": ip + "/24",
                 "SPINLANE_LINK_WAIT_MS": "120000"},
                "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no" % (role, sock))
    na, va = contract(ip_a, "server")
    nb, vb = contract(ip_b, "client")
    # each driver waits at start for its port's link (SPINLANE_LINK_WAIT_MS): a memif
    # link is up once both ends are there, so start both before waiting for either; the
    # memif client does not retry a socket that is not there yet, so it starts once the
    # server's socket exists
    a = Driver(rig, ns_a, "A", na, va)
    wait_for(lambda: os.path.exists(sock) or a.proc.p.poll() is not None, 120, "the memif server's socket")
    b = Driver(rig, ns_b, "B", nb, vb)
    a.ready(180)
    b.ready(180)
    tag = "memif"
    c.run(tag + ": 3000 x 64 B A -> B", transfer, rig, a, unicast(ip_b, 40200), b, unicast(ip_b, 40200), 3000, 64, 2001)
    c.run(tag + ": 3000 x 64 B B -> A", transfer, rig, b, unicast(ip_a, 40201), a, unicast(ip_a, 40201), 3000, 64, 2002)
    c.run(tag + ": 200 x 9000 B (fragmented) A -> B", transfer, rig, a, unicast(ip_b, 40202), b, unicast(ip_b, 40202),
          200, 9000, 2003)
    c.run(tag + ": multicast B -> A", transfer, rig, b, "aeron:udp?endpoint=239.255.91.1:40203", a,
          "aeron:udp?endpoint=239.255.91.1:40203", 1000, 64, 2004)
    cping(c, rig, a, b, unicast(ip_b, 40204), unicast(ip_a, 40205), tag)
    for d in (a, b):
        thread_checks(c, tag + " " + d.name, d)
    healthy(c, tag, a, b)
    stop_all(c, tag, a, b)
    return c.done()


def start_fails(c, rig, ns, name, nics, vdev, want, what, extra=None):
    d = Driver(rig, ns, name, nics, vdev, extra=extra)
    try:
        rc = d.proc.wait(60)
    except Fail as e:
        c.ok(False, what + ": the driver exits", str(e))
        return
    out = d.proc.output()
    # aeronmd prints the reason of a failed init ("ERROR: driver init ...") and exits 1;
    # its CnC never becomes ready, so ErrorStat cannot read the error log then
    c.ok(rc == 1 and "ERROR: driver init" in out and want in out,
         "%s: the driver exits (%d) saying \"%s\"" % (what, rc, want), out[-1500:])


def refused(c, rig, driver, role, channel, want, what):
    p = msgs(rig, driver, role, channel, 1, timeout=30)
    rc = p.wait(60)
    out = p.output()
    c.ok(rc == 3 and want in out, "%s: the client is refused (%d) with \"%s\"" % (what, rc, want), out[-1500:])
    n, text = driver.errors()
    c.ok(want in text, what + ": the driver's error log has it", text[-1500:])


def case_bad(env):
    c = Check()
    rig = Rig(env, "b")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics, vdev = shared_nic(va, A_IP)

    # bad contract values: the driver says which and exits
    n = dict(nics)
    del n["SPINLANE_SENDER_IPV4"]
    start_fails(c, rig, ns_a, "x1", n, vdev, "SPINLANE_SENDER_IPV4 is not set", "contract: no sender address")
    n = dict(nics, SPINLANE_RECEIVER_IPV4="10.55.0.300/24", SPINLANE_SENDER_IPV4="10.55.0.300/24")
    start_fails(c, rig, ns_a, "x2", n, vdev, 'SPINLANE_SENDER_IPV4="10.55.0.300/24" is not an IPv4 address',
                "contract: a malformed address")
    n = dict(nics, SPINLANE_SENDER_DEVICE="net_af_packet7", SPINLANE_RECEIVER_DEVICE="net_af_packet7")
    start_fails(c, rig, ns_a, "x3", n, vdev, "SPINLANE_SENDER_DEVICE=net_af_packet7: no such DPDK port",
                "contract: a device the EAL does not have")
    start_fails(c, rig, ns_a, "x4", nics, vdev + " --no-such-eal-option", "rte_eal_init failed",
                "contract: EAL arguments the EAL refuses")
    n = dict(nics, SPINLANE_SENDER_GATEWAY="10.99.0.1", SPINLANE_RECEIVER_GATEWAY="10.99.0.1")
    start_fails(c, rig, ns_a, "x5", n, vdev, "is not another host of the subnet", "contract: a gateway off the subnet")
    start_fails(c, rig, ns_a, "x6", nics, vdev, "does not fit one", "contract: an MTU above one packet buffer",
                extra={"AERON_MTU_LENGTH": "8192"})

    # unservable channels: refused at init, the driver keeps serving
    a = Driver(rig, ns_a, "A", nics, vdev).ready()
    b = Driver(rig, ns_b, "B").ready()
    refused(c, rig, a, "sub", unicast("10.9.9.9", 40300), "is not the receiver NIC's address 10.55.0.1",
            "a subscription bound to an address that is not the NIC's")
    refused(c, rig, a, "pub", "aeron:udp?endpoint=%s:40301|interface=10.9.9.9" % B_IP,
            "could not find matching interface",
            "a publication bound to an interface that does not exist")
    refused(c, rig, a, "sub", "aeron:udp?endpoint=239.255.92.1:40302|interface=127.0.0.1",
            "multicast interface 127.0.0.1 is not the receiver NIC's address", "multicast on a kernel interface")
    refused(c, rig, a, "pub", "aeron:udp?endpoint=[::1]:40303", "IPv6 channels cannot be served by the DPDK transport",
            "an IPv6 channel")
    refused(c, rig, a, "pub", "aeron:udp?endpoint=%s:40304|mtu=4096" % B_IP, "above the DPDK port's 1408",
            "a channel MTU above the port's")
    c.run("after the refusals the driver still serves", transfer, rig, a, unicast(B_IP, 40305), b,
          unicast(B_IP, 40305), 500, 64, 3001)
    stop_all(c, "bad", a, b)
    return c.done()


def case_launch(env):
    c = Check()
    if not os.access(env.launch, os.X_OK):
        skip("no spinlane-launch at %r" % env.launch)
    rig = Rig(env, "l")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b)
    view = os.path.join(rig.tmp, "pod")
    pod_view(view, "0-1")
    pod = {
        # what the device plugin hands the container (docs/device-plugin.md); the NIC's
        # address as the allocation will carry it
        "SPINLANE_ISOLATED_CPUS": "0-1", "SPINLANE_ISOLATED_CORES": "p0c0,p0c1",
        "SPINLANE_DPDK_NICS": "0000:00:06.0", "SPINLANE_NIC_0_KIND": "other", "SPINLANE_NIC_0_DRIVER": "vfio-pci",
        "SPINLANE_NIC_0_NUMA": "-1", "SPINLANE_NIC_0_DEVICES": "/dev/vfio/vfio,/dev/vfio/7",
        "SPINLANE_NIC_0_IPV4": A_IP + "/24", "SPINLANE_NIC_0_GATEWAY": "", "SPINLANE_HUGEPAGE_DIR": "/dev/hugepages",
        # the pod's own: this machine has no such PCI NIC, a veth stands in for it
        "SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_RECEIVER_DEVICE": "net_af_packet0",
        "SPINLANE_EAL_EXTRA_ARGS": "--no-huge --no-pci --vdev=net_af_packet0,iface=%s,qpairs=3 --log-level=error" % va,
        "SPINLANE_DPDK_MEMORY_MB": "128", "SPINLANE_POD_UID": rig.id,
        "AERON_DIR": "/dev/shm/%s-A" % rig.id, "AERON_DIR_DELETE_ON_START": "1", "AERON_TERM_BUFFER_LENGTH": "1m",
        "PATH": "%s:/usr/sbin:/usr/bin:/sbin:/bin" % env.bin,
        # the datapath check probes B, a running bypass driver whose probe responder
        # (SPINLANE_PROBE_PORT, default 39990) answers
        "SPINLANE_DATAPATH_PEER": B_IP + ":39990",
    }
    # B: a bypass driver too, whose probe responder A's datapath check probes (so first)
    b_nics, b_vdev = shared_nic(vb, B_IP)
    b = Driver(rig, ns_b, "B", b_nics, b_vdev).ready()
    a = LaunchedDriver(rig, ns_a, "A", view, pod)
    try:
        a.ready(90)
    except Fail as e:
        c.ok(False, "spinlane-launch starts aeronmd with the bypass", str(e))
        return c.done()
    out = a.proc.output()
    c.ok("summary: 10 pass, 0 warn, 0 fail, 0 skip" in out and "PASS aeron-bindings:" in out and "\nexec: aeronmd\n" in out,
         "launch: every check passes, aeron-bindings and datapath included, and the default command is exec'd", out[-3000:])
    c.ok(re.search(r"PASS datapath: sender\+receiver net_af_packet0 \(%s/24\): link up in [0-9.]+ ms; peer %s answered ARP "
                   r"in [0-9.]+ ms; 32 round trips to peer %s:39990: p50 [0-9.]+ us, p99 [0-9.]+ us, max [0-9.]+ us"
                   % (re.escape(A_IP), re.escape(B_IP), re.escape(B_IP)), out) is not None,
         "launch: the datapath line has link, ARP and round trips to the running driver B's probe responder", out[-3000:])
    for var, want in (("AERON_DRIVER_DYNAMIC_LIBRARIES", "libspinlane_aeron.so"),
                      ("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA", "spinlane_udp_channel_transport_bindings"),
                      ("SPINLANE_SENDER_IPV4", A_IP + "/24"), ("SPINLANE_RECEIVER_IPV4", A_IP + "/24"),
                      ("AERON_SENDER_IDLE_STRATEGY", "noop"), ("AERON_RECEIVER_IDLE_STRATEGY", "noop"),
                      ("AERON_THREADING_MODE", "DEDICATED"), ("AERON_TERM_BUFFER_SPARSE_FILE", "false")):
        c.ok(("  env %s=" % var) in out and want in out.split("  env %s=" % var)[1].split("\n")[0],
             "launch: the driver gets %s (%s)" % (var, want))
    tag = "launch (noop)"
    c.run(tag + ": 500 x 64 B A -> B", transfer, rig, a, unicast(B_IP, 40400), b, unicast(B_IP, 40400), 500, 64, 4001,
          timeout=240)
    c.run(tag + ": 500 x 64 B B -> A", transfer, rig, b, unicast(A_IP, 40401), a, unicast(A_IP, 40401), 500, 64, 4002,
          timeout=240)
    healthy(c, tag, a, b)
    stop_all(c, tag, a, b)
    return c.done()


def case_memcheck(env):
    """The bypass driver under valgrind memcheck: traffic both ways, a host-local and a
    multicast channel, shutdown; no error and no leak (DPDK's own start-up allocations,
    which its rte_eal_cleanup keeps, and a report stock aeronmd gives without the
    bindings too, suppressed by tests/driver/aeron/valgrind.supp)."""
    c = Check()
    valgrind = os.environ.get("SPINLANE_VALGRIND", "")
    if not valgrind or not os.access(valgrind, os.X_OK):
        skip("no valgrind")
    rig = Rig(env, "v")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics, vdev = shared_nic(va, A_IP)
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")
    # --keep-debuginfo: DPDK unloads its plugins at clean-up; their frames keep their names
    vg = [valgrind, "--tool=memcheck", "--keep-debuginfo=yes", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
          "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", "--quiet",
          "--suppressions=" + supp]
    a = Driver(rig, ns_a, "A", nics, vdev, wrap=vg).ready(300)
    b = Driver(rig, ns_b, "B").ready()
    k = Driver(rig, ns_a, "K").ready()
    tag = "memcheck"
    c.run(tag + ": A -> B", transfer, rig, a, unicast(B_IP, 40500), b, unicast(B_IP, 40500), 300, 64, 5001, timeout=300)
    c.run(tag + ": B -> A", transfer, rig, b, unicast(A_IP, 40501), a, unicast(A_IP, 40501), 300, 64, 5002, timeout=300)
    c.run(tag + ": host-local A -> K", transfer, rig, a, unicast("127.0.0.1", 40502), k, unicast("127.0.0.1", 40502),
          100, 64, 5003, timeout=300)
    c.run(tag + ": multicast A -> B", transfer, rig, a, "aeron:udp?endpoint=239.255.93.1:40503", b,
          "aeron:udp?endpoint=239.255.93.1:40503|interface=%s" % B_IP, 100, 64, 5004, timeout=300)
    rc = a.proc.stop(300)
    out = a.proc.output()
    c.ok(rc == 15 and "==" not in out.replace("Shutting down driver", ""),
         tag + ": valgrind found no error and no leak in the bypass driver (exit %d)" % rc, out[-6000:])
    stop_all(c, tag, b, k)
    return c.done()


def case_install(env):
    """`cmake --install` of this build tree into a fresh prefix P: P/bin/aeronmd, Aeron's
    two libraries and libspinlane_aeron.so in P/lib, found through their $ORIGIN runpaths
    and nothing else (no LD_LIBRARY_PATH); the installed aeronmd loads P's bindings and
    carries traffic both ways with a stock driver on kernel UDP."""
    c = Check()
    build = os.environ.get("SPINLANE_BUILD_DIR", "")
    cmake = os.environ.get("SPINLANE_CMAKE", "cmake")
    if not os.path.isfile(os.path.join(build, "cmake_install.cmake")):
        raise Fail("SPINLANE_BUILD_DIR=%r is not a build tree" % build)
    rig = Rig(env, "n")
    prefix = os.path.join(rig.tmp, "prefix")
    r = subprocess.run([cmake, "--install", build, "--prefix", prefix], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    c.ok(r.returncode == 0, "cmake --install %s --prefix P" % build, r.stdout[-3000:])
    want = ["bin/aeronmd", "bin/spinlane-launch", "lib/libaeron_driver.so", "lib/libaeron.so",
            "lib/libspinlane_aeron.so"]
    for f in want:
        c.ok(os.path.isfile(os.path.join(prefix, f)), "P/%s is installed" % f)
    if not c.ok(all(os.path.isfile(os.path.join(prefix, f)) for f in want), "the prefix is complete"):
        return c.done()
    clean = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    ldd = subprocess.run(["ldd", os.path.join(prefix, "bin/aeronmd")], stdout=subprocess.PIPE, text=True,
                         env=clean).stdout
    for lib in ("libaeron_driver.so", "libaeron.so"):
        m = re.search(r"^\s*%s => (\S+)" % re.escape(lib), ldd, re.M)
        c.ok(m is not None and os.path.realpath(m.group(1)) == os.path.realpath(os.path.join(prefix, "lib", lib)),
             "the installed aeronmd finds P/lib/%s by its runpath" % lib, ldd)
    ldd = subprocess.run(["ldd", os.path.join(prefix, "lib/libspinlane_aeron.so")], stdout=subprocess.PIPE,
                         text=True, env=clean).stdout
    c.ok("not found" not in ldd, "every library of P/lib/libspinlane_aeron.so resolves", ldd)

    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, _ = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics, vdev = shared_nic(va, A_IP)
    build_tool = env.tool
    env.tool = lambda name: os.path.join(prefix, "bin", name) if name == "aeronmd" else build_tool(name)
    try:
        a = Driver(rig, ns_a, "A", nics, vdev, lib=os.path.join(prefix, "lib/libspinlane_aeron.so")).ready()
    finally:
        env.tool = build_tool
    with open("/proc/%d/maps" % a.proc.p.pid) as f:
        maps = f.read()
    for lib in ("libspinlane_aeron.so", "libaeron_driver.so", "libaeron.so"):
        c.ok(os.path.join(prefix, "lib", lib) in maps, "the installed aeronmd runs with P/lib/%s" % lib)
    b = Driver(rig, ns_b, "B").ready()
    both_ways(c, rig, a, b, "installed", n=500)
    healthy(c, "installed", a, b)
    stop_all(c, "installed", a, b)
    return c.done()


# AeronStat's labels of Aeron's system counters and spinlane-stat's names for them (the
# oracle of the comparison: spinlane-stat names them by id, AeronStat prints the label)
SYSTEM = {"Bytes sent": "aeron_bytes_sent_total", "Bytes received": "aeron_bytes_received_total",
          "NAKs sent": "aeron_naks_sent_total", "NAKs received": "aeron_naks_received_total",
          "Status Messages sent": "aeron_status_messages_sent_total",
          "Status Messages received": "aeron_status_messages_received_total",
          "Heartbeats sent": "aeron_heartbeats_sent_total", "Heartbeats received": "aeron_heartbeats_received_total",
          "Retransmits sent": "aeron_retransmits_sent_total", "Invalid packets": "aeron_invalid_packets_total",
          "Short sends": "aeron_short_sends_total", "Loss gap fills": "aeron_loss_gap_fills_total",
          "Client liveness timeouts": "aeron_client_timeouts_total",
          "Retransmitted bytes": "aeron_retransmitted_bytes_total",
          "Sender flow control limits, i.e. back-pressure events": "aeron_sender_flow_control_limits_total"}
POSITIONS = {"pub-lmt": "publisher_limit", "snd-pos": "sender_position", "rcv-hwm": "receiver_hwm",
             "sub-pos": "subscriber_position", "rcv-pos": "receiver_position", "snd-lmt": "sender_limit",
             "pub-pos (sampled)": "publisher_position"}


def stat_key(label):
    """The (sample name, labels) spinlane-stat gives the counter AeronStat prints as label."""
    def name(s):
        return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")
    if label in SYSTEM:
        return (SYSTEM[label], frozenset())
    if label.startswith("Errors: version="):
        return ("aeron_errors_total", frozenset())
    m = re.match(r"^spinlane (.+): (\S+) (\S+)$", label)
    if m:
        base = {"nic": m.group(2), "ipv4": m.group(3)}
        if m.group(1).startswith("drop "):
            return ("spinlane_port_drops_total", frozenset(dict(base, reason=m.group(1)[5:]).items()))
        if m.group(1) == "drops total":
            return ("spinlane_port_dropped_frames_total", frozenset(base.items()))
        return ("spinlane_port_%s_total" % name(m.group(1)), frozenset(base.items()))
    m = re.match(r"^spinlane (sender|receiver|conductor) (.+)$", label)
    if m:
        n = name(m.group(2))
        return ("spinlane_agent_lcore_id" if n == "lcore_id" else "spinlane_agent_%s_total" % n,
                frozenset({"agent": m.group(1)}.items()))
    m = re.match(r"^(.+?): (-?\d+) (-?\d+) (-?\d+) (\S+)", label)
    if m and m.group(1) in POSITIONS:
        return ("aeron_stream_position_bytes", frozenset({"position": POSITIONS[m.group(1)], "channel": m.group(5),
                                                         "stream_id": m.group(4), "session_id": m.group(3),
                                                         "registration_id": m.group(2)}.items()))
    return None


class Stat:
    """spinlane-stat on a driver's Aeron directory, on a loopback port of its choosing."""

    def __init__(self, rig, driver):
        self.proc = rig.start(None, [rig.env.stat, "--aeron-dir", driver.dir, "--metrics-bind-address",
                                     "127.0.0.1:0"], {"PATH": "/usr/bin:/bin"}, "spinlane-stat")
        m = self.proc.wait_line(r"serving /metrics on 127\.0\.0\.1:(\d+)", 60)
        self.port = int(m.group(1))

    def text(self):
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port, timeout=30) as r:
            if r.status != 200 or not r.headers["Content-Type"].startswith("text/plain; version=0.0.4"):
                raise Fail("/metrics answered %s %s" % (r.status, r.headers["Content-Type"]))
            return r.read().decode()

    def scrape(self):
        """{(sample name, frozenset(labels)): value}, parsed by prometheus_client."""
        from prometheus_client.parser import text_string_to_metric_families
        out = {}
        for fam in text_string_to_metric_families(self.text()):
            for s in fam.samples:
                k = (s.name, frozenset(s.labels.items()))
                if k in out:
                    raise Fail("series %s twice in one scrape" % (k,))
                out[k] = s.value
        return out


def one(scrape, name, **labels):
    """The value of the one series of name whose labels include labels (None: none)."""
    vals = [v for (n, ls), v in scrape.items() if n == name and set(labels.items()) <= set(ls)]
    return sum(vals) if vals else None


def case_stat(env):
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError:
        skip("no prometheus_client for %s (Debian package python3-prometheus-client)" % sys.executable)
    if not env.stat or not os.access(env.stat, os.X_OK):
        skip("no spinlane-stat binary (SPINLANE_STAT)")
    c = Check()
    rig = Rig(env, "s")
    ns_a, ns_b = rig.netns("A"), rig.netns("B")
    va, vb = rig.veth(ns_a, ns_b, addr_b=B_IP + "/24")
    nics, vdev = shared_nic(va, A_IP)
    loss = {"AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS": "loss",
            "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS": "rate=0.05|seed=11|recv-msg-mask=0x2"}  # DATA frames
    a = Driver(rig, ns_a, "A", nics, vdev, extra=loss).ready()
    b = Driver(rig, ns_b, "B", extra=loss).ready()
    st = Stat(rig, a)
    tag = "stat"
    s0 = st.scrape()
    c.ok(one(s0, "spinlane_stat_up") == 1, tag + ": spinlane_stat_up 1 on the running driver's CnC file")
    c.ok(one(s0, "aeron_driver_pid") == a.proc.p.pid, tag + ": aeron_driver_pid is the driver's pid (%s, %s)" %
         (one(s0, "aeron_driver_pid"), a.proc.p.pid))
    c.ok(one(s0, "spinlane_port_rx_frames_total", nic="net_af_packet0", ipv4=A_IP + "/24") is not None,
         tag + ": the port's counters carry its NIC and address")
    c.ok(one(s0, "spinlane_agent_lcore_id", agent="sender") is not None, tag + ": the agents' counters by agent")

    # streams both ways, kept open: positions and lags while they flow
    ch_a, ch_b = unicast(A_IP, 40300), unicast(B_IP, 40301)
    sub_a = msgs(rig, a, "sub", ch_a, 10 ** 9, 256, 3001, timeout=600)
    sub_b = msgs(rig, b, "sub", ch_b, 10 ** 9, 256, 3002, timeout=600)
    sub_a.wait_line(r"^READY$", 60)
    sub_b.wait_line(r"^READY$", 60)
    pub_b = msgs(rig, b, "pub", ch_a, 3000, 256, 3001, timeout=600)
    pub_a = msgs(rig, a, "pub", ch_b, 3000, 256, 3002, timeout=600)
    pub_a.wait_line(r"^OFFERED 3000$", 300)
    pub_b.wait_line(r"^OFFERED 3000$", 300)

    def streams(s):
        return (one(s, "aeron_stream_position_bytes", position="subscriber_position", stream_id="3001",
                    channel=ch_a) or 0) > 0 and \
            one(s, "aeron_subscription_lag_bytes", stream_id="3001", channel=ch_a) is not None and \
            one(s, "aeron_stream_position_bytes", position="publisher_limit", stream_id="3002", channel=ch_b) \
            is not None and one(s, "aeron_stream_position_bytes", position="sender_position", stream_id="3002") \
            is not None and one(s, "aeron_stream_position_bytes", position="receiver_hwm", stream_id="3001") \
            is not None
    last = {}

    def seen(pred):
        last["s"] = st.scrape()
        return pred(last["s"])
    c.run(tag + ": stream positions (publisher limit, sender position, receiver high-water mark, subscriber "
          "position) and the subscriber's lag, labelled by channel and stream", wait_for, lambda: seen(streams), 60,
          "stream series")
    s1 = last.get("s", {})
    lag = one(s1, "aeron_subscription_lag_bytes", stream_id="3001", channel=ch_a)
    c.ok(lag is not None and lag >= 0, tag + ": the subscriber's lag is a byte count (%s)" % lag)
    window = one(s1, "aeron_publication_window_bytes", stream_id="3002")
    c.ok(window is not None and window > 0, tag + ": the publication's window before back pressure (%s)" % window)
    unsent = one(s1, "aeron_publication_unsent_bytes", stream_id="3002")
    c.ok(unsent is not None and unsent >= 0, tag + ": the publication's unsent bytes (%s)" % unsent)

    def moved(s):
        return all((one(s, n) or 0) > 0 for n in ("aeron_naks_sent_total", "aeron_naks_received_total",
                                                  "aeron_retransmits_sent_total")) and \
            one(s, "aeron_bytes_sent_total") > one(s0, "aeron_bytes_sent_total") and \
            one(s, "spinlane_port_tx_datagrams_total", nic="net_af_packet0") > \
            one(s0, "spinlane_port_tx_datagrams_total", nic="net_af_packet0")
    c.run(tag + ": bytes, datagrams, NAKs sent and received, retransmits moved with the traffic and the loss",
          wait_for, lambda: seen(moved), 60, "counters to move")

    # a fault on the port: datagrams to a UDP port nobody serves are dropped (no_endpoint)
    before = one(st.scrape(), "spinlane_port_drops_total", reason="no_endpoint") or 0
    sh("ip netns exec %s python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
       "[s.sendto(b'x' * 32, ('%s', 9)) for _ in range(20)]\"" % (ns_b, A_IP))
    c.run(tag + ": datagrams to a port nobody serves: spinlane_port_drops_total{reason=\"no_endpoint\"} went up",
          wait_for, lambda: seen(lambda s: (one(s, "spinlane_port_drops_total", reason="no_endpoint") or 0) >=
                                 before + 20), 60, "no_endpoint drops")

    # AeronStat read between two scrapes: every counter it shows that spinlane-stat names
    # lies between the two (counters and positions only grow; the rest stand still)
    s1 = st.scrape()
    aeronstat = a.counters()
    s2 = st.scrape()
    compared, bad = 0, []
    for label, v in aeronstat.items():
        k = stat_key(label)
        if k is None or k not in s1 or k not in s2:
            continue
        compared += 1
        if not s1[k] <= v <= s2[k]:
            bad.append("%s = %d, spinlane-stat %s then %s" % (label, v, s1[k], s2[k]))
    c.ok(compared >= 40 and not bad, tag + ": %d counters equal AeronStat's at the same moment" % compared,
         "\n".join(bad))
    spin = [lb for lb in aeronstat if lb.startswith("spinlane ")]
    missing = [lb for lb in spin if stat_key(lb) not in s2]
    c.ok(spin and not missing, tag + ": every spinlane counter AeronStat shows (%d) is on /metrics" % len(spin),
         "\n".join(missing))

    # every metric the chart's dashboard and alerts query is in this scrape
    chart = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "helm", "spinlane", "files")
    with open(os.path.join(chart, "spinlane-driver-dashboard.json")) as f:
        text = f.read()
    with open(os.path.join(chart, "spinlane-driver-rules.yaml")) as f:
        text += "".join(ln for ln in f if ln.strip().startswith("expr:"))
    queried = set(re.findall(r"\b((?:aeron|spinlane)_[a-z0-9_]+)\b", text))
    names = {n for n, _ in s2}
    c.ok(len(queried) >= 20 and queried <= names, tag + ": every metric the dashboard and the alerts query (%d) is "
         "on /metrics" % len(queried), "missing: %s" % sorted(queried - names))

    for p in (pub_a, pub_b, sub_a, sub_b):
        p.stop(30)
    # the driver restarted under it: the old file stands still, the new one is mapped
    old_pid = a.proc.p.pid
    remaps = one(st.scrape(), "spinlane_stat_cnc_remaps_total")
    a.stop()
    s3 = st.scrape()
    hb = one(s3, "aeron_driver_heartbeat_timestamp_seconds")
    time.sleep(1.5)  # not a wait for an event: the heartbeat of a stopped driver must stand still
    s4 = st.scrape()
    c.ok(one(s4, "spinlane_stat_up") == 0 or one(s4, "aeron_driver_heartbeat_timestamp_seconds") == hb,
         tag + ": a stopped driver's heartbeat stands still (or its file is gone)")
    a2 = Driver(rig, ns_a, "A", nics, vdev, extra=loss).ready()
    c.run(tag + ": the driver restarted: spinlane-stat maps the new file (pid %d -> %d)" % (old_pid, a2.proc.p.pid),
          wait_for, lambda: seen(lambda s: one(s, "aeron_driver_pid") == a2.proc.p.pid and
                                 one(s, "spinlane_stat_up") == 1 and
                                 one(s, "spinlane_stat_cnc_remaps_total") > remaps and
                                 one(s, "spinlane_port_rx_frames_total", nic="net_af_packet0") is not None), 60,
          "the new driver on /metrics")
    c.run(tag + ": traffic through the restarted driver", transfer, rig, b, ch_a, a2, ch_a, 500, 64, 3003)
    c.run(tag + ": its counters on /metrics moved", wait_for, lambda: seen(
        lambda s: (one(s, "spinlane_port_rx_datagrams_total", nic="net_af_packet0") or 0) > 0), 60,
        "the new driver's counters")
    st.proc.stop(30)
    c.ok(st.proc.p.returncode == 0, tag + ": spinlane-stat exits 0 on SIGTERM (%s)" % st.proc.p.returncode,
         st.proc.tail())
    healthy(c, tag, a2, b)
    stop_all(c, tag, a2, b)
    return c.done()


def main():
    cases = {"interop": case_interop, "memif": case_memif, "bad": case_bad, "launch": case_launch,
             "memcheck": case_memcheck, "install": case_install, "stat": case_stat}
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        print("usage: test_aeron.py %s" % "|".join(cases), file=sys.stderr)
        return 64
    env = Env()
    try:
        return cases[sys.argv[1]](env)
    except Fail as e:
        print("FAIL %s" % e, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
