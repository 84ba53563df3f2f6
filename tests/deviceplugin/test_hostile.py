# SPDX-License-Identifier: Apache-2.0
"""The device plugin under hostile or broken local clients (Python grpcio and raw unix
sockets, bounded in count and time): `spinlane-agent run --root <fake node>` with the
kubelet stand-in. Refused Allocate calls are logged rate-limited and every one is
accounted for; the kubelet's ListAndWatch is never the one refused when other clients
hold DP_MAX_STREAMS streams; idle connections are closed; SIGHUP after SIGTERM reloads
nothing. No timed assertion: each step waits for its event with a generous bound.

usage: test_hostile.py --agent PATH --proto-dir DIR [--quick] [--wrapper "valgrind ..."]
--quick: 300 refusals, 100 idle connections. --wrapper: run the agent under this command
(timeouts scaled by 20, as test_kubelet.py).
Exit 0 all passed, 1 a check failed, 77 skipped (grpcio/grpc_tools missing)."""
import argparse
import os
import re
import resource
import shlex
import signal
import socket
import sys
import tempfile
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
import test_kubelet as tk  # noqa: E402
import testcheck  # noqa: E402  (on sys.path through test_kubelet)
from imds_standin import FakeImds  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, make_tree, rm_tree, wait_for, PLUGIN_DIR  # noqa: E402
from test_kubelet import Agent, check, status_of, NIC_SOCK, T  # noqa: E402

MAX_STREAMS = 256      # DP_MAX_STREAMS
BURST = 10             # DP_REFUSAL_BURST per DP_REFUSAL_WINDOW_MS
IDLE_S = 20.0          # DP_IDLE_CONNECTION_MS


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def start(args, api, root, name):
    agent = Agent(args.agent, root, os.path.join(root, name + ".log"))
    kubelet = Kubelet(api, root)
    kubelet.start(wipe=True)
    kubelet.wait_registrations(2, T)
    nic = Plugin(api, root, NIC_SOCK)
    check(Watcher(nic).wait(lambda d: len(d) == 3, T) is not None, "%s: NIC list served" % name)
    return agent, kubelet, nic


def finish(agent, kubelet, name):
    if agent.p.poll() is None:
        check(agent.stop() == 0, "%s: agent exit 0" % name)
    kubelet.stop()
    if tk.failures:
        print("---- %s agent log (tail) ----\n%s" % (name, "\n".join(agent.text().splitlines()[-30:])))


def test_refusal_log(args, api, root):
    """3 000 refused Allocate calls: at most BURST lines per window, the rest summed up, and
    the lines and summaries account for every refusal."""
    agent, kubelet, nic = start(args, api, root, "refusals")
    try:
        n = 300 if args.quick else 3000
        with futures.ThreadPoolExecutor(max_workers=16) as ex:
            codes = list(ex.map(lambda i: status_of(lambda: nic.alloc(["0000:00:99.%d" % (i % 8)]))[0], range(n)))
        check(all(c == grpc.StatusCode.INVALID_ARGUMENT for c in codes), "%d bad Allocate calls refused" % n)

        def accounted():
            log = agent.text()
            lines = log.count("request refused (status 3)")
            summed = sum(int(m) for m in re.findall(r"(\d+) more requests refused", log))
            return lines, summed, lines + summed >= n
        # the summary follows once the window has passed (the 1 s check)
        wait_for(lambda: accounted()[2], 10 + T)
        lines, summed, _ = accounted()
        print("refusals: %d logged one by one, %d summed up" % (lines, summed), flush=True)
        check(lines + summed == n, "every refusal logged or counted (%d + %d of %d)" % (lines, summed, n))
        windows = max(1, len(re.findall(r"more requests refused", agent.text())) + 1)
        check(lines <= BURST * windows, "at most %d refusal lines per window (%d lines, %d windows)" %
              (BURST, lines, windows))
    finally:
        nic.close()
        finish(agent, kubelet, "refusals")


def test_stream_cap(args, api, root):
    """DP_MAX_STREAMS ListAndWatch streams held by another client: a kubelet restart (the
    rebuild) ends them with the old server; the kubelet's stream (the first after its
    Register) is served, the other client's streams up to the cap beside it, the oldest
    other stream ends when one more comes, and it stays the kubelet's when yet more come."""
    agent, kubelet, nic = start(args, api, root, "streams")
    hostile = Plugin(api, root, NIC_SOCK)
    ws, old, more = [], [], []
    kw = None
    try:
        old = [Watcher(hostile) for _ in range(MAX_STREAMS)]
        check(all(w.wait(lambda d: len(d) == 3, T) for w in old), "%d streams of another client open" % MAX_STREAMS)
        # the kubelet restarts (kubelet.sock re-created, the plugin sockets kept): the
        # rebuild ends every stream of the old server, the new one registers, and the
        # kubelet opens its ListAndWatch, as it does after each Register
        kubelet.stop()
        kubelet = Kubelet(api, root)
        kubelet.start(wipe=False)
        kubelet.wait_registrations(2, T)
        check(wait_for(lambda: all(w.ended is not None for w in old), T), "the old server's streams ended")
        kube = Plugin(api, root, NIC_SOCK)
        kw = Watcher(kube)
        got = kw.wait(lambda d: len(d) == 3, T)
        check(got is not None, "the kubelet's ListAndWatch served (ended: %s)" % kw.ended)
        ws = [Watcher(hostile) for _ in range(MAX_STREAMS)]
        check(all(w.wait(lambda d: len(d) == 3, T) for w in ws), "%d streams of another client served beside it" %
              MAX_STREAMS)
        check(wait_for(lambda: sum(1 for w in ws if w.ended is not None) >= 1, T),
              "the oldest other stream ended to make room")
        more = [Watcher(hostile) for _ in range(20)]
        check(all(w.wait(lambda d: len(d) == 3, T) for w in more), "20 more streams of the other client served")
        check(wait_for(lambda: sum(1 for w in ws if w.ended is not None) >= 21, T), "21 of its old streams ended")
        ended = [w.ended for w in ws if w.ended is not None]
        check(all(c == grpc.StatusCode.RESOURCE_EXHAUSTED for c in ended), "ended with RESOURCE_EXHAUSTED %s" %
              set(ended))
        check(kw.ended is None, "the kubelet's stream still open (%s)" % kw.ended)
        check(wait_for(lambda: "the oldest (not the kubelet's) ended" in agent.text(), T), "eviction logged")
        kube.close()
    finally:
        for w in old + ws + more + ([kw] if kw else []):
            w.cancel()
        hostile.close()
        nic.close()
        finish(agent, kubelet, "streams")


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + an empty SETTINGS


def idle_connections(path, n, timeout):
    """n connections to the unix socket path that set up HTTP/2 and never call: each waits
    for the server's SETTINGS, so every connection is set up on its side too."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(PREFACE)
        socks.append(s)
    for s in socks:
        s.settimeout(timeout)
        s.recv(9)
    return socks


def silent_connections(path, n):
    """n connections that never even send the HTTP/2 preface."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        socks.append(s)
    return socks


def closed(s):
    """The server closed the connection (what it sent before is read and dropped)."""
    s.settimeout(0.0)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_idle_connections(args, api, root):
    """1 000 idle connections (HTTP/2 set up, never a call) and 100 silent ones (not even the
    preface): accepted, and closed by the plugin once idle for DP_IDLE_CONNECTION_MS; the
    kubelet's stream stays."""
    agent, kubelet, nic = start(args, api, root, "idle")
    kw = Watcher(nic)
    path = os.path.join(root, PLUGIN_DIR, NIC_SOCK)
    socks = []
    n = 100 if args.quick else 1000
    try:
        kw.wait(lambda d: len(d) == 3, T)
        rss0 = rss_kb(agent.p.pid)
        # the plugin sends its SETTINGS on each: every connection is set up on its side
        socks += idle_connections(path, n, T * tk.S)
        rss1 = rss_kb(agent.p.pid)
        # and connections that never even send the HTTP/2 preface
        socks += silent_connections(path, n // 10)
        print("RSS %d kB, with %d idle connections %d kB (+%.1f kB each)" % (rss0, n, rss1, (rss1 - rss0) / n),
              flush=True)
        check(wait_for(lambda: all(closed(s) for s in socks), IDLE_S + T, step=0.5),
              "%d idle connections closed by the plugin (%d open)" % (len(socks), sum(1 for s in socks if not closed(s))))
        print("RSS after they were closed %d kB" % rss_kb(agent.p.pid), flush=True)
        check(kw.ended is None and nic.options(api.Empty(), timeout=T * tk.S).get_preferred_allocation_available,
              "the kubelet's stream and calls unaffected")
    finally:
        for s in socks:
            s.close()
        kw.cancel()
        nic.close()
        finish(agent, kubelet, "idle")


def h2_frame(kind, flags, sid, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big") + payload


def h2_literal(name, value):
    """An HPACK header field, literal without indexing, new name (both < 127 bytes)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def stuck_client(path, n):
    """One connection that opens n ListAndWatch streams (raw HTTP/2) and never reads: its
    receive buffer is 4 KiB, so the plugin's answers back up on the plugin's side."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    hdr = b"".join(h2_literal(k, v) for k, v in ((b":method", b"POST"), (b":scheme", b"http"),
                                                   (b":path", b"/v1beta1.DevicePlugin/ListAndWatch"),
                                                   (b":authority", b"localhost"), (b"content-type", b"application/grpc"),
                                                   (b"te", b"trailers")))
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b"")
    for i in range(n):
        sid = 1 + 2 * i
        out += h2_frame(1, 4, sid, hdr) + h2_frame(0, 1, sid, b"\x00" * 5)  # HEADERS; DATA: an empty Empty, END_STREAM
    s.sendall(out)
    return s


def test_stuck_client(args, api, root):
    """A client holding 300 ListAndWatch streams it never reads: after a kubelet restart
    the new server is served and registered without waiting for the old one's connections
    (gRPC waits for them for good), and SIGTERM still ends the agent (every wait bounded)."""
    agent, kubelet, nic = start(args, api, root, "stuck")
    path = os.path.join(root, PLUGIN_DIR, NIC_SOCK)
    stuck = None
    try:
        stuck = stuck_client(path, 300)
        # the plugin has taken them: the streams beyond the cap are logged
        check(wait_for(lambda: "streams open; the oldest" in agent.text() or "more requests refused" in agent.text(),
                       T), "the stuck client's streams reached the plugin")
        nic.close()
        kubelet.stop()
        kubelet = Kubelet(api, root)
        t0 = time.monotonic()
        kubelet.start(wipe=True)
        try:
            regs = kubelet.wait_registrations(2, T)
            print("re-registered %.3f s after the kubelet restart, the stuck client still connected" %
                  (max(t for t, _ in regs.values()) - t0), flush=True)
        except TimeoutError as e:
            check(False, "stuck client: both plugins registered again after the kubelet restart (%s)" % e)
        nic = Plugin(api, root, NIC_SOCK)
        check(Watcher(nic).wait(lambda d: len(d) == 3, T) is not None, "stuck client: the new NIC socket served")
        t0 = time.monotonic()
        rc = agent.stop()
        print("stuck client: SIGTERM to exit %.1f s" % (time.monotonic() - t0), flush=True)
        check(rc == 0, "stuck client: agent exit %s after SIGTERM" % rc)
    finally:
        if stuck:
            stuck.close()
        nic.close()
        finish(agent, kubelet, "stuck")


def test_sighup_after_sigterm(args, api, root):
    """SIGHUP sent while the agent stops: no reload, no node preparation. 300 streams
    open make the stop take a while; SIGHUP follows SIGTERM until the agent is gone."""
    agent, kubelet, nic = start(args, api, root, "sighup")
    ws = [Watcher(nic) for _ in range(200)]
    try:
        check(all(w.wait(lambda d: len(d) == 3, T) for w in ws), "200 streams open")
        agent.p.send_signal(signal.SIGTERM)
        check(wait_for(lambda: "stopping" in agent.text(), T), "stopping logged")
        deadline = time.monotonic() + T * tk.S
        while agent.p.poll() is None and time.monotonic() < deadline:
            try:
                agent.p.send_signal(signal.SIGHUP)
            except ProcessLookupError:
                break
            time.sleep(0.002)
        rc = agent.stop()
        log = agent.text()
        after = log[log.index("stopping"):]
        check(rc == 0, "sighup: agent exit %s" % rc)
        check("SIGHUP: reloading" not in after and "reloaded" not in after,
              "no reload after SIGTERM (%d SIGHUPs ignored)" % after.count("SIGHUP while stopping"))
    finally:
        for w in ws:
            w.cancel()
        nic.close()
        finish(agent, kubelet, "sighup")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--only", default="", help="comma-separated test names")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--wrapper", default="", help="command prefix for the agent, e.g. valgrind ...")
    args = ap.parse_args()
    tk.WRAPPER = shlex.split(args.wrapper)
    tk.S = 20.0 if tk.WRAPPER else 1.0
    kubelet_standin.SCALE = tk.S
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 4096:
        print("SKIP: RLIMIT_NOFILE hard limit %d below 4096 (1 000 connections each side)" % hard)
        return 77
    # the agent inherits it: 1 000 connections need as many descriptors
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))
    api, gen = load_api(args.proto_dir)
    root = tempfile.mkdtemp(prefix="sl-dp-hostile-")
    imds = FakeImds()
    macs = kubelet_standin.TREE_MACS
    imds.aws(macs["0000:00:06.0"], ["10.0.6.10"], "10.0.6.0/24")
    imds.aws(macs["0000:00:07.0"], ["10.0.7.10"], "10.0.7.0/24")
    imds.azure(macs["7870:00:00.0"], "10.1.0.4", "10.1.0.0", "24")
    os.environ["SPINLANE_IMDS_URL"] = imds.url
    tests = [test_refusal_log, test_stream_cap, test_idle_connections, test_sighup_after_sigterm]
    if not tk.WRAPPER:
        # the agent leaves what gRPC still holds to the exit: not for a leak checker
        tests.append(test_stuck_client)
    try:
        make_tree(root)
        for t in tests:
            if args.only and t.__name__ not in args.only.split(","):
                continue
            t0 = time.monotonic()
            t(args, api, root)
            print("%s: %.1f s" % (t.__name__, time.monotonic() - t0), flush=True)
    finally:
        imds.close()
        rm_tree(root)
        rm_tree(gen)
    print("%d checks, %d failed" % (testcheck.checks, len(tk.failures)))
    return 1 if tk.failures else 0


if __name__ == "__main__":
    sys.exit(main())
