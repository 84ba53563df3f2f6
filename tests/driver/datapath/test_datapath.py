# SPDX-License-Identifier: Apache-2.0
"""The datapath check (spinlane-datapath) on real DPDK virtual devices: two net_af_packet
ports on veths in one namespace, their other ends on a Linux bridge in a second namespace
whose address is the gateway (the kernel's ARP answers), and a third namespace holding a
peer with the transport's probe responder (probe-peer). Cases: a healthy path (figures),
no gateway (FAIL within the bound), link down (FAIL), a p99 threshold exceeded (FAIL), a
peer answering probes, the responder off (FAIL naming the peer). Every namespace is
deleted at exit, also on failure or a signal. On a machine shared with other runs of
the network tests, run it under a lock of your own (flock)."""

import atexit
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import testcheck  # noqa: E402


def check(cond, what, detail=None):
    """testcheck.check, printing detail (what was seen) when it fails."""
    if not testcheck.check(cond, what) and detail is not None:
        print("  seen: %s" % (detail,), flush=True)
    return cond


def done():
    print("%d checks, %d failed" % (testcheck.checks, len(testcheck.failures)), flush=True)
    return 1 if testcheck.failures else 0

SKIP = 77
HELPER = os.environ.get("SPINLANE_DATAPATH_HELPER", "")
PEER = os.environ.get("SPINLANE_PROBE_PEER", "")
TAG = "sl-dp%d" % (os.getpid() % 100000)
NS_D, NS_R, NS_P = TAG + "d", TAG + "r", TAG + "p"
namespaces = []
procs = []


def skip(why):
    if os.environ.get("CI", "").lower() == "true":
        print("FAIL: CI=true and the datapath test may not skip: " + why, flush=True)
        sys.exit(1)
    print("SKIP: " + why, flush=True)
    sys.exit(SKIP)


def sh(cmd, check_rc=True):
    r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check_rc and r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" % (r.returncode, cmd, r.stdout))
    return r


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for ns in namespaces:
        sh("ip netns del %s" % ns, check_rc=False)
    namespaces.clear()


def on_signal(sig, frame):
    cleanup()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def veth(a, ns_a, b, ns_b):
    sh("ip link add %s type veth peer name %s" % (a, b))
    sh("ip link set %s netns %s && ip link set %s netns %s" % (a, ns_a, b, ns_b))
    sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=1" % (ns_a, a), check_rc=False)
    sh("ip -n %s link set %s up && ip -n %s link set %s up" % (ns_a, a, ns_b, b))


def topology():
    for ns in (NS_D, NS_R, NS_P):
        sh("ip netns add %s" % ns)
        namespaces.append(ns)
        sh("ip -n %s link set lo up" % ns)
    sh("ip -n %s link add br0 type bridge && ip -n %s link set br0 up" % (NS_R, NS_R))
    # the kernel end must put full checksums on the wire for af_packet
    sh("ip netns exec %s ethtool -K br0 tx off >/dev/null" % NS_R)
    for i, ns in ((1, NS_D), (2, NS_D), (3, NS_P)):
        veth("%sa%d" % (TAG, i), ns, "%sb%d" % (TAG, i), NS_R)
        sh("ip -n %s link set %sb%d master br0" % (NS_R, TAG, i))
        sh("ip netns exec %s ethtool -K %sb%d tx off >/dev/null" % (NS_R, TAG, i))
    sh("ip -n %s addr add 10.7.0.254/24 dev br0" % NS_R)


def env(**over):
    e = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "SPINLANE_EAL_ARGS": "--no-huge --no-pci -m 128 --file-prefix %s --log-level=error "
                             "--vdev=net_af_packet0,iface=%sa1,qpairs=2 --vdev=net_af_packet1,iface=%sa2,qpairs=2"
                             % (TAG, TAG, TAG),
        "SPINLANE_SENDER_DEVICE": "net_af_packet0", "SPINLANE_RECEIVER_DEVICE": "net_af_packet1",
        "SPINLANE_SENDER_IPV4": "10.7.0.1/24", "SPINLANE_RECEIVER_IPV4": "10.7.0.2/24",
        "SPINLANE_SENDER_GATEWAY": "10.7.0.254", "SPINLANE_RECEIVER_GATEWAY": "10.7.0.254",
    }
    for k, v in over.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def run(e, *args):
    """spinlane-datapath --json in the DPDK namespace: (exit code, verdicts, seconds)."""
    t0 = time.monotonic()
    r = subprocess.run(["ip", "netns", "exec", NS_D, HELPER, "--json"] + list(args), env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    took = time.monotonic() - t0
    vs = []
    for line in r.stdout.splitlines():
        try:
            vs.append(json.loads(line))
        except ValueError:
            check(False, "every output line is a JSON verdict", line)
    for v in vs:
        print("  %s datapath: %s" % (v["verdict"].upper(), v["message"]), flush=True)
    if r.stderr.strip():
        print("  stderr: " + r.stderr.strip()[-2000:], flush=True)
    # nothing left behind for the driver: the EAL's runtime directory is gone
    check(not os.path.exists("/var/run/dpdk/%s" % TAG), "the EAL's runtime directory is removed at exit")
    return r.returncode, vs, took


def main():
    if os.geteuid() != 0:
        skip("needs root (network namespaces, DPDK vdevs)")
    if not HELPER or not os.access(HELPER, os.X_OK) or not os.access(PEER, os.X_OK):
        skip("spinlane-datapath or probe-peer not built (no DPDK transport)")
    if sh("ip netns list", check_rc=False).returncode != 0:
        skip("'ip netns' does not work here")
    if sh("command -v ethtool", check_rc=False).returncode != 0:
        skip("no ethtool (Debian package ethtool)")
    pmds = sh("ls /usr/lib/*/dpdk/pmds-*/ 2>/dev/null", check_rc=False).stdout
    if "librte_net_af_packet.so" not in pmds:
        skip("the DPDK net_af_packet PMD is not installed")
    atexit.register(cleanup)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)
    topology()

    print("healthy: two NICs in one subnet, the bridge's address as the gateway", flush=True)
    rc, vs, took = run(env(), "--rounds", "200")
    check(rc == 0 and len(vs) == 2 and all(v["verdict"] == "pass" for v in vs), "healthy: two PASS, exit 0", vs)
    s = vs[0] if vs else {"message": "", "evidence": {}}
    ev = s.get("evidence", {})
    check("link up in" in s["message"] and "gateway 10.7.0.254 answered ARP in" in s["message"]
          and "round trips to receiver net_af_packet1 10.7.0.2:39990: p50" in s["message"],
          "healthy: the sender's line has link, ARP and round-trip figures", s["message"])
    rtt = (ev.get("rtt") or [{}])[0]
    check(rtt.get("answered") == 200 and rtt.get("sent") == 200 and rtt.get("p50_us", 0) > 0
          and rtt.get("p50_us", 0) <= rtt.get("p99_us", 0) <= rtt.get("max_us", 0),
          "healthy: 200 of 200 answered, 0 < p50 <= p99 <= max", rtt)
    print("FIGURES healthy veth pair echo: %s" % json.dumps(ev), flush=True)

    print("one NIC (shared port): link and ARP, no round trip (no second NIC, no peer)", flush=True)
    e1 = env(SPINLANE_RECEIVER_DEVICE="net_af_packet0", SPINLANE_RECEIVER_IPV4="10.7.0.1/24",
             # a shared port takes two queues and the control queue, as the driver does
             SPINLANE_EAL_ARGS="--no-huge --no-pci -m 128 --file-prefix %s --log-level=error "
                               "--vdev=net_af_packet0,iface=%sa1,qpairs=3" % (TAG, TAG))
    rc, vs, _ = run(e1)
    check(rc == 0 and len(vs) == 1 and vs[0]["verdict"] == "pass" and "one NIC and no SPINLANE_DATAPATH_PEER" in vs[0]["message"],
          "one NIC: PASS with link and ARP, and why no round trip", vs)

    print("no gateway: nothing has 10.7.0.253", flush=True)
    rc, vs, took = run(env(SPINLANE_SENDER_GATEWAY="10.7.0.253", SPINLANE_RECEIVER_GATEWAY="10.7.0.253"),
                       "--timeout-ms", "500")
    check(rc == 1 and vs and vs[0]["verdict"] == "fail"
          and "sender net_af_packet0 (10.7.0.1/24)" in vs[0]["message"]
          and "gateway 10.7.0.253 did not answer ARP within 500 ms" in vs[0]["message"],
          "no gateway: FAIL naming the NIC, its address and the gateway that did not answer", vs)
    check(took < 60, "no gateway: the FAIL comes within the bound (took %.1f s)" % took)

    print("threshold: SPINLANE_DATAPATH_MAX_P99_US=1 (no veth round trip is that fast)", flush=True)
    rc, vs, _ = run(env(), "--max-p99-us", "1")
    check(rc == 1 and vs and vs[0]["verdict"] == "fail" and "above SPINLANE_DATAPATH_MAX_P99_US=1" in vs[0]["message"],
          "threshold: FAIL when p99 is above it", vs)

    print("a peer with the probe responder (SPINLANE_DATAPATH_PEER)", flush=True)
    peer = subprocess.Popen(["ip", "netns", "exec", NS_P, PEER, "%sa3" % TAG, "10.7.0.9/24", "39990"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    procs.append(peer)
    line = peer.stdout.readline()
    check(line.strip() == "ready", "the probe peer starts", line)
    rc, vs, _ = run(env(), "--peer", "10.7.0.9:39990", "--rounds", "50")
    msg = vs[0]["message"] if vs else ""
    check(rc == 0 and vs and vs[0]["verdict"] == "pass" and "peer 10.7.0.9 answered ARP in" in msg
          and "50 round trips to peer 10.7.0.9:39990: p50" in msg, "peer: PASS with ARP and round trips to the peer", vs)
    print("FIGURES peer: %s" % json.dumps(vs[0].get("evidence") if vs else None), flush=True)
    print("the peer answers ARP, but nothing listens on its probe port 39991", flush=True)
    rc, vs, _ = run(env(), "--peer", "10.7.0.9:39991", "--timeout-ms", "500")
    check(rc == 1 and vs and vs[0]["verdict"] == "fail" and "peer 10.7.0.9:39991: none of" in vs[0]["message"]
          and "UDP probes answered" in vs[0]["message"], "peer port closed: FAIL naming the peer and what did not answer", vs)
    peer.send_signal(signal.SIGTERM)
    out, _ = peer.communicate(timeout=60)
    print("  peer: " + out.strip(), flush=True)
    fields = dict(zip(out.split()[0::2], out.split()[1::2]))
    check(int(fields.get("probe_tx", 0)) >= 50 and int(fields.get("probe_rx", 0)) >= int(fields.get("probe_tx", 0)),
          "the peer counted the probes it answered", out)

    # net_af_packet (DPDK 22.11) reports its link up whatever the veth's carrier: on veths a
    # link down shows as the next hop not answering, on a NIC as "link still down"
    print("link down: the sender's veth loses its carrier", flush=True)
    sh("ip -n %s link set %sb1 down" % (NS_R, TAG))
    rc, vs, took = run(env(), "--timeout-ms", "500")
    check(rc == 1 and vs and vs[0]["verdict"] == "fail" and "sender net_af_packet0 (10.7.0.1/24)" in vs[0]["message"]
          and ("link still down" in vs[0]["message"] or "did not answer ARP" in vs[0]["message"]),
          "link down: FAIL naming the NIC", vs)
    sh("ip -n %s link set %sb1 up" % (NS_R, TAG))
    return done()


if __name__ == "__main__":
    sys.exit(main())
