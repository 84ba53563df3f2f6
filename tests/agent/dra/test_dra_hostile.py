# SPDX-License-Identifier: Apache-2.0
"""The DRA kubelet plugin under hostile local clients: the protections of common/grpc's
engine that the device plugin had and the DRA plugin lacked. `spinlane-agent run
--dra-resources nic,core` on the eks-x86 fixture with the API-server stand-in and the DRA
kubelet stand-in (as test_dra_plugin.py). A flood of idle connections on the DRA socket
and on the registration socket (HTTP/2 set up and never a call, and connections that
never even send the preface) is closed by the plugin once idle for RPC_IDLE_CONNECTION_MS
(20 s): the agent's fds come back, and a real NodePrepareResources answers during the
flood and after it. A call of a method the plugin does not serve is answered
UNIMPLEMENTED (before, it waited unanswered until the caller's deadline). No timed
assertion: each step waits for its event with a generous bound.

usage: test_dra_hostile.py --agent PATH --proto-dir DIR [--quick] [--wrapper "valgrind ..."]
--quick: 100 idle connections instead of 500. --wrapper: run the agent under this command
(every bound 20 times longer; the idle limit is the agent's own).
Exit 0 passed, 1 failed, 77 skipped (a peer's package missing)."""
import argparse
import json
import os
import shlex
import sys
import tempfile
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_dra_plugin as td  # noqa: E402  (skips with 77 when grpcio or openssl is missing)
import grpc  # noqa: E402
import kubelet_standin  # noqa: E402
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
import test_cluster as tc  # noqa: E402
from dra_kubelet_standin import DraKubelet, REGISTRY  # noqa: E402
from test_hostile import closed, idle_connections, silent_connections  # noqa: E402  (tests/deviceplugin)

IDLE_S = 20.0  # RPC_IDLE_CONNECTION_MS
T = 60.0       # generous bound for one expected event
def flood(path, n):
    """n connections that set up HTTP/2 and never call, and n // 10 that never send the
    preface (test_hostile.py's, as on the device plugin's socket)."""
    return idle_connections(path, n, T * tc.S) + silent_connections(path, n // 10)


def prepare_ok(k, api, uid, core):
    api.cmd("claim " + json.dumps(td.claim("team-h", "h-" + uid[:8], uid, [("cores", "spinlane.io", "node-a", core)])))
    try:
        r = k.prepare([("team-h", uid, "h-" + uid[:8])], timeout=T * tc.S).claims[uid]
    except grpc.RpcError as e:
        return "gRPC %s" % e.code()
    return r.error or len(r.devices)


def test_idle_flood(base, n):
    api = tc.ApiServer()
    os.makedirs(base, exist_ok=True)
    root = tc.make_tree(base)
    k = DraKubelet(td.PB, root)
    a = td.start_agent(root, base, api, "agent-hostile.log", ["--dra-resources", "nic,core"])
    socks = []
    try:
        if not td.registered(k, a):
            return
        sl = tc.wait_for(lambda: api.json("slices").get("node-a-spinlane.io"), 30)
        cores = sorted(d["name"] for d in (sl or {}).get("spec", {}).get("devices", [])
                       if d.get("attributes", {}).get("type", {}).get("string") == "isolated-core")
        if not check(len(cores) >= 2, "the slice has cores: %r" % sl):
            return
        fds0 = td.fd_count(a.p.pid)
        dra = os.path.join(root, td.DRA_SOCK.lstrip("/"))
        reg = os.path.join(root, REGISTRY, td.REG_SOCK)
        socks = flood(dra, n) + flood(reg, n // 5)
        fds1 = td.fd_count(a.p.pid)
        print("agent fds %d, with %d idle connections %d" % (fds0, len(socks), fds1), flush=True)
        r = prepare_ok(k, api, "11111111-aaaa-4bbb-8ccc-000000000001", cores[0])
        check(r == 1, "a NodePrepareResources during the flood: %r" % r)
        # a method no one serves: answered at once, not left to the caller's deadline
        with grpc.insecure_channel("unix:" + dra) as ch:
            try:
                ch.unary_unary("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NoSuchMethod")(b"", timeout=20 * tc.S)
                code = grpc.StatusCode.OK
            except grpc.RpcError as e:
                code = e.code()
        check(code == grpc.StatusCode.UNIMPLEMENTED, "an unknown method on the DRA socket -> %s" % code)
        check(tc.wait_for(lambda: all(closed(s) for s in socks) or None, IDLE_S + T * tc.S, step=0.5),
              "%d idle connections closed by the plugin (%d still open)" %
              (len(socks), sum(1 for s in socks if not closed(s))))
        fds2 = tc.wait_for(lambda: (lambda f: f if f <= fds0 + 8 else None)(td.fd_count(a.p.pid)), T * tc.S)
        print("agent fds after the plugin closed them: %d" % td.fd_count(a.p.pid), flush=True)
        check(fds2, "the agent's fds back to about %d: %d" % (fds0, td.fd_count(a.p.pid)))
        r = prepare_ok(k, api, "11111111-aaaa-4bbb-8ccc-000000000002", cores[1])
        check(r == 1, "a NodePrepareResources after the flood: %r" % r)
        check(a.stop() == 0, "agent exit 0")
    finally:
        for s in socks:
            s.close()
        k.close()
        if a.p.poll() is None:
            a.p.kill()
        api.stop()


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--wrapper", default="")
    args = ap.parse_args()
    td.ARGS = args
    tc.WRAPPER = shlex.split(args.wrapper)
    tc.S = 20.0 if tc.WRAPPER else 1.0
    kubelet_standin.SCALE = tc.S
    import dra_kubelet_standin
    td.PB, gen = dra_kubelet_standin.load_protos(args.proto_dir)
    base = tempfile.mkdtemp(prefix="sl-drah-")
    try:
        test_idle_flood(os.path.join(base, "idle"), 100 if args.quick else 500)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(gen, ignore_errors=True)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
