# SPDX-License-Identifier: Apache-2.0
"""Integration test of the daemon's cluster reporting: `spinlane-agent run --root <eks-x86
tree>` with NODE_NAME and --kubeconfig against
  - a TLS API-server stand-in (fake_apiserver.py: token check, merge-patch semantics, the
    Event schema, failures on cue, down/up, a certificate of another CA),
  - the kubelet stand-in of the device plugin tests (Registration; the plugins' sockets),
  - a PodResources stand-in (podres_standin.py, grpcio),
and /metrics parsed with python3-prometheus-client's text parser. Checks the exact label
patches (only the agent's own keys), the Events of verdict changes (Warning on failing,
Normal on recovery, the verdict line as note), token rotation through a ..data symlink
swap, the API server down while the device plugin keeps serving and re-registering and
the verdicts keep printing, catching up when it returns, 401/403/409/422/429 (Retry-After)/
500/garbage/reset/3 MiB error/a hanging server/a wrong CA each with one clear log line and
a retry where one makes sense, the Event rate limit under a flapping check, the bounds of
the HTTP endpoints (per-address cap, the header deadline, request size; /metrics on every
address, the probes on their own 127.0.0.1 listener), and that no token is
ever logged. Every wait is for an event, with a generous bound.

usage: test_cluster.py --agent PATH --proto-dir DIR [--quick] [--wrapper "valgrind ..."]
Exit 0 passed, 1 failed, 77 skipped (a peer's package missing)."""
import argparse
import http.client
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as e:
    print("SKIP: %s (python3-grpcio, python3-grpc-tools, python3-prometheus-client; run with /usr/bin/python3)" % e)
    sys.exit(77)
if not shutil.which("openssl"):
    print("SKIP: openssl is not installed (the test makes its CA with it)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "deviceplugin"))
sys.path.insert(0, os.path.join(SRC, "tests", "agent", "podres"))
import kubelet_standin  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher  # noqa: E402
import podres_standin  # noqa: E402

NIC = "spinlane.io/dpdk-nic"
CORE = "spinlane.io/isolated-core"
OURS = {"spinlane.io/ready", "spinlane.io/nic-kind", "spinlane.io/dpdk-nics", "spinlane.io/isolated-cores",
        "spinlane.io/pin-mode"}
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TOKENS = ("tok-1", "tok-2", "tok-3")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
S = 1.0
WRAPPER = []


def wait_for(pred, timeout, step=0.02):
    deadline = time.monotonic() + timeout * S
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class ApiServer:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, os.path.join(SRC, "tests", "agent", "kube", "fake_apiserver.py")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self._line(120)
        m = re.match(r"READY port=(\d+) dir=(\S+)", line or "")
        if not m:
            raise RuntimeError("fake API server: no READY line (%r)" % line)
        self.port, self.dir = int(m.group(1)), m.group(2)

    def _line(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        return self.p.stdout.readline().rstrip("\n") if r else None

    def cmd(self, c):
        self.p.stdin.write(c + "\n")
        self.p.stdin.flush()
        line = self._line(60)
        if line is None:
            raise RuntimeError("fake API server: no answer to %r" % c)
        return line

    def ok(self, c):
        check(self.cmd(c) == "ok", "API server command %r" % c)

    def json(self, c):
        return json.loads(self.cmd(c))

    def labels(self):
        return self.json("node")["metadata"].get("labels", {})

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()


class Agent:
    def __init__(self, binary, root, log, args, env):
        self.path = log
        self.log = open(log, "w")
        e = dict(os.environ)
        for k in ("NODE_NAME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
            e.pop(k, None)
        e.update(env)
        self.p = subprocess.Popen(WRAPPER + [binary, "run", "--root", root, "--config", agent_config(root)] + list(args),
                                  stdout=self.log,
                                  stderr=subprocess.STDOUT, env=e)

    def text(self):
        with open(self.path, errors="replace") as f:
            return f.read()

    def count(self, needle):
        return self.text().count(needle)

    def stop(self, timeout=20):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout * S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = "timeout"
        self.log.close()
        if rc != 0:  # the reason is in the agent's (or valgrind's) last words
            sys.stdout.write("--- %s (exit %s), last lines:\n%s\n" % (self.path, rc, self.text()[-4000:]))
        return rc


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(port, path, method="GET", host="127.0.0.1", headers=None, timeout=30):
    c = http.client.HTTPConnection(host, port, timeout=timeout * S)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace"), dict(r.getheaders())
    finally:
        c.close()


def scrape(port):
    st, body, hdr = get(port, "/metrics")
    if st != 200:
        return None, {}
    fams = {f.name: f for f in text_string_to_metric_families(body)}
    samples = {}
    for f in fams.values():
        for s in f.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return fams, samples


def sample(samples, name, **labels):
    """The value, or -1 when the series is absent."""
    v = samples.get((name, tuple(sorted(labels.items()))))
    return -1 if v is None else v


def rotate_token(tokdir, token, gen=[0]):
    """The kubelet's way: a fresh timestamped dir, a temporary ..data symlink renamed over
    ..data; "token" -> "..data/token"."""
    gen[0] += 1
    target = "..2026_%d" % gen[0]
    os.makedirs(os.path.join(tokdir, target))
    with open(os.path.join(tokdir, target, "token"), "w") as f:
        f.write(token + "\n")
    tmp = os.path.join(tokdir, "..data_tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.rename(tmp, os.path.join(tokdir, "..data"))
    if not os.path.lexists(os.path.join(tokdir, "token")):
        os.symlink("..data/token", os.path.join(tokdir, "token"))


def make_tree(base):
    r = subprocess.run([sys.executable, os.path.join(SRC, "tests", "fixtures", "make-node.py"), base, "eks-x86"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("make-node.py: " + r.stderr)
    root = os.path.join(base, "eks-x86")
    os.makedirs(os.path.join(root, kubelet_standin.PLUGIN_DIR), exist_ok=True)
    with open(os.path.join(root, "var/lib/kubelet/cpu_manager_state"), "w") as f:
        json.dump({"policyName": "static", "defaultCpuSet": "0-1,8-9", "checksum": 1}, f)
    # The fixture's DPDK NICs are on vfio-pci with no MAC on record, so only static entries
    # give them addresses (nic-address passes, the NICs are advertised Healthy).
    with open(agent_config(root), "w") as f:
        json.dump({"addresses": {"static": [
            {"pci": "0000:00:06.0", "ipv4": "10.0.1.10/24", "gateway": "10.0.1.1"},
            {"pci": "0000:00:07.0", "ipv4": "10.0.2.10/24", "gateway": "10.0.2.1"}]}}, f)
    return root


def agent_config(root):
    return os.path.join(os.path.dirname(root), "spinlane-config.json")


class Node:
    """Flip node checks: isolated-cpus by rewriting the isolated set, nic-binding by taking
    the NICs' device nodes away (inotify re-scans either at once)."""

    def __init__(self, root, agent):
        self.root = root
        self.path = os.path.join(root, "sys/devices/system/cpu/isolated")
        self.good = open(self.path).read()
        self.agent = agent
        self.failing = False
        self.nics_gone = False

    def _wait(self, check_id, failing):
        t = self.agent.text
        if failing:
            return lambda: t().rfind("FAIL %s:" % check_id) > t().rfind("PASS %s:" % check_id)
        return lambda: t().rfind("PASS %s:" % check_id) > t().rfind("FAIL %s:" % check_id)

    def set(self, failing):
        if failing == self.failing:
            return True
        with open(self.path, "w") as f:
            f.write("\n" if failing else self.good)
        self.failing = failing
        return check(wait_for(self._wait("isolated-cpus", failing), 10),
                     "the verdicts print isolated-cpus %s" % ("failing" if failing else "passing"))

    def flip(self):
        return self.set(not self.failing)

    def nics(self, gone):
        for n in ("noiommu-0", "noiommu-1"):
            p = os.path.join(self.root, "dev/vfio", n)
            if gone:
                os.unlink(p)
            else:
                open(p, "w").close()
        self.nics_gone = gone
        return check(wait_for(self._wait("nic-binding", gone), 10),
                     "the verdicts print nic-binding %s" % ("failing" if gone else "passing"))


def series_count(api, reason):
    """Occurrences of the Events of reason: 1 per Event, or its series count."""
    return sum((e.get("series") or {}).get("count", 1) for e in events_of(api, reason))


def events_of(api, reason):
    return [e for e in api.json("events").values() if e.get("reason") == reason]


def line_of(agent, prefix):
    """The last verdict line of the agent's stdout starting with prefix."""
    lines = [x for x in agent.text().splitlines() if x.startswith(prefix)]
    return lines[-1] if lines else None


def test_main(args, api_pb, pr_api, base):
    root = make_tree(base)
    api = ApiServer()
    kubelet = Kubelet(api_pb, root)
    kubelet.start(wipe=False)
    podres = podres_standin.PodResources(pr_api, root)
    podres.pods = [("aeron-0", "trading", "driver", NIC, ["0000:00:06.0"]),
                   ("aeron-0", "trading", "driver", CORE, ["p0c3"]),
                   ("other", "default", "x", "example.com/gpu", ["gpu-0"])]
    podres.start()
    tokdir = os.path.join(base, "sa")
    os.makedirs(tokdir)
    rotate_token(tokdir, "tok-1")
    kubeconfig = os.path.join(base, "kubeconfig")
    with open(kubeconfig, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    certificate-authority: %s/ca.pem\n"
                "    server: https://127.0.0.1:%d\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                "current-context: c\nusers:\n- name: u\n  user:\n    tokenFile: sa/token\n" % (api.dir, api.port))
    port, pport = free_port(), free_port()
    agent = Agent(args.agent, root, os.path.join(base, "agent.log"),
                  ["--kubeconfig", kubeconfig, "--metrics-bind-address", ":%d" % port,
                   "--health-probe-bind-address", "127.0.0.1:%d" % pport],
                  {"NODE_NAME": "node-a", "SPINLANE_PODRES_MS": "200", "SPINLANE_KUBE_RESYNC_MS": "1000"})
    node = Node(root, agent)
    try:
        # ---- labels: exactly ours, the user's spinlane.io/* keys untouched ----
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 30),
              "Node label spinlane.io/ready=true (labels %s)" % api.labels())
        lab = api.labels()
        check({k: lab.get(k) for k in OURS} == {"spinlane.io/ready": "true", "spinlane.io/nic-kind": "ena",
                                                 "spinlane.io/dpdk-nics": "2", "spinlane.io/isolated-cores": "6",
                                                 "spinlane.io/pin-mode": "kubelet-pinned"}, "our labels %s" % lab)
        check(lab.get("spinlane.io/node-pool") == "true" and lab.get("spinlane.io/stale") == "x" and
              lab.get("kubernetes.io/hostname") == "node-a", "other labels untouched %s" % lab)
        reqs = api.json("requests")
        patches = [r for r in reqs if r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/node-a"]
        check(len(patches) >= 2, "two label patches (before and after registration): %s" % patches)
        if len(patches) >= 2:
            check(patches[0]["body"] == '{"metadata":{"labels":{"spinlane.io/dpdk-nics":"2","spinlane.io/'
                  'isolated-cores":"6","spinlane.io/nic-kind":"ena","spinlane.io/pin-mode":"kubelet-pinned",'
                  '"spinlane.io/ready":"false"},"resourceVersion":"1"}}', "first patch %s" % patches[0]["body"])
            check(patches[1]["body"] == '{"metadata":{"labels":{"spinlane.io/ready":"true"},"resourceVersion":"2"}}',
                  "second patch %s" % patches[1]["body"])
        check(all(r["ctype"] == "application/merge-patch+json" and r["auth"] == "tok-1" for r in patches),
              "patches: merge-patch+json, the bearer token")
        check(not any(r["method"] not in ("GET", "PATCH", "POST") for r in reqs), "only GET/PATCH/POST")

        # ---- Events: Warning when a check starts failing, Normal when it recovers ----
        node.set(True)
        got = wait_for(lambda: events_of(api, "IsolatedCpusFailed"), 20)
        check(got, "a Warning Event IsolatedCpusFailed")
        if got:
            e = got[0]
            check(e["type"] == "Warning" and e["action"] == "Check" and e["reportingController"] == "spinlane.io/agent"
                  and e["reportingInstance"] == "spinlane-agent-node-a" and MICRO.match(e["eventTime"]) and
                  e["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": "node-a"} and
                  e["metadata"]["namespace"] == "default", "Event fields %s" % e)
            check(e["note"] == line_of(agent, "FAIL isolated-cpus:")[:1024], "note is the verdict line: %r" % e["note"])
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "false", 20), "ready=false while failing")
        rz = get(pport, "/readyz")[:2]
        check("spinlane.io/ready=false: 1 node check fails (isolated-cpus)" in rz[1],
              "/readyz says why the node is not ready: %r" % (rz,))
        check(api.labels().get("spinlane.io/pin-mode") == "none" and api.labels().get("spinlane.io/isolated-cores") == "0",
              "no isolated core: pin-mode none, 0 cores: %s" % api.labels())
        node.set(False)
        got = wait_for(lambda: events_of(api, "IsolatedCpusRecovered"), 20)
        check(got and got[0]["type"] == "Normal" and got[0]["note"] == line_of(agent, "PASS isolated-cpus:"),
              "a Normal Event IsolatedCpusRecovered with the PASS line: %s" % got)
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 20), "ready=true again")
        posts = [r for r in api.json("requests") if r["method"] == "POST"]
        check(posts and all(r["path"] == "/apis/events.k8s.io/v1/namespaces/default/events" and
                            r["ctype"] == "application/json" for r in posts), "Event POSTs %s" % posts[:2])

        # ---- token rotation: the server accepts only the new token, the agent follows ----
        rotate_token(tokdir, "tok-2")
        api.ok("tokens tok-2")
        node.set(True)
        check(wait_for(lambda: len(events_of(api, "IsolatedCpusFailed")) >= 1 and
                       api.labels().get("spinlane.io/ready") == "false", 20), "labels follow after the token rotation")
        check(wait_for(lambda: any(r["auth"] == "tok-2" and r["answer"] in (200, 201)
                                   for r in api.json("requests")), 20), "the rotated token is used")
        check("HTTP 401" not in agent.text(), "no 401 failure logged across a rotation")
        node.set(False)
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 20), "ready again (rotated token)")

        # ---- the API server down: the device plugin and the verdicts do not wait ----
        before = series_count(api, "IsolatedCpusFailed")
        mark = len(agent.text())
        api.ok("down")
        node.set(True)  # the verdicts print while the API server is away
        check(wait_for(lambda: "retrying in" in agent.text()[len(agent.text()) - 20000:], 20),
              "the failure is logged with its retry")
        nic = Plugin(api_pb, root, "spinlane-dpdk-nic.sock")
        try:
            r = nic.alloc(["0000:00:06.0"])
            check(dict(r.container_responses[0].envs).get("SPINLANE_DPDK_NICS") == "0000:00:06.0",
                  "Allocate answered while the API server is down")
        except grpc.RpcError as e:
            check(False, "Allocate while the API server is down: %s" % e)
        nic.close()
        kubelet.stop()
        kubelet = Kubelet(api_pb, root)
        kubelet.start(wipe=True)
        try:
            kubelet.wait_registrations(2, 10)
            check(True, "re-registered after a kubelet restart while the API server is down")
        except TimeoutError as e:
            check(False, "re-registration while the API server is down: %s" % e)
        check(get(pport, "/healthz")[0] == 200, "/healthz while the API server is down")
        _, s = scrape(port)
        check(sample(s, "spinlane_api_up") == 0, "spinlane_api_up 0 while down")
        streak = [x for x in agent.text()[mark:].splitlines() if "retrying in" in x]
        check(len(streak) <= 2, "one warning for the failure streak, not one per retry: %s" % streak)
        api.ok("up")
        check(wait_for(lambda: "the API server answers again" in agent.text(), 90), "recovery logged")
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "false", 60), "labels caught up after the outage")
        check(wait_for(lambda: series_count(api, "IsolatedCpusFailed") > before, 60),
              "the Event raised during the outage arrives (as the series count: %d -> %d)" %
              (before, series_count(api, "IsolatedCpusFailed")))
        node.set(False)
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 30), "ready after the outage")

        # ---- refusals and bad answers, each: a clear line, a retry where it makes sense ----
        def synced():
            want = "false" if node.failing or node.nics_gone else "true"
            return check(wait_for(lambda: api.labels().get("spinlane.io/ready") == want, 60),
                         "labels in sync (ready=%s) before the next cue" % want)

        def cue(command, needle, flip=True, timeout=40, nics=False):
            if flip or nics:
                synced()  # so that the flip below is a change the agent must send
            n = agent.count(needle)
            api.ok(command)
            if nics:  # a new Event (a POST): another check fails
                node.nics(not node.nics_gone)
            elif flip:
                node.flip()
            ok = check(wait_for(lambda: agent.count(needle) > n, timeout), "%s -> a log line with %r" % (command, needle))
            return ok

        cue("fail PATCH /api/v1/nodes 403 1", 'RBAC: the agent\'s ClusterRole must grant patch on nodes (API group "")')
        cue("fail POST /apis/events.k8s.io 403 1", "RBAC: the agent's ClusterRole must grant create on events "
            "(API group events.k8s.io)", nics=True)
        node.nics(False)
        cue("fail PATCH /apis/events.k8s.io 403 1", "RBAC: the agent's ClusterRole must grant patch on events "
            "(API group events.k8s.io)")
        check(wait_for(lambda: "labels of Node node-a are in sync again" in agent.text(), 30), "labels recover after 403")
        cue("fail PATCH /api/v1/nodes 422 1", "HTTP 422 Invalid")
        cue("fail GET /api/v1/nodes 429 1 2", "retrying in 2000 ms (the server's Retry-After)", flip=False)
        cue("fail GET /api/v1/nodes 500 2", "HTTP 500", flip=False)
        cue("fail GET /api/v1/nodes garbage 1", "GET /api/v1/nodes/node-a: ", flip=False)
        cue("fail GET /api/v1/nodes reset 1", "retrying in", flip=False)
        cue("fail GET /api/v1/nodes bigerror 1", "limit", flip=False)
        api.ok("conflict 2")
        node.set(False)
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 30), "labels set through 409 conflicts")
        if not args.quick:
            cue("fail GET /api/v1/nodes hang 1", "timed out", flip=False, timeout=90)
        # a rejected token, then the right one again
        cue("tokens nobody", "the API server does not accept the agent's token from", flip=False)
        api.ok("tokens tok-2")
        # a certificate of another CA: refused before a byte of the request goes out
        def tls_errors():
            return sum(v for (n, lab), v in (scrape(port)[1] or {}).items()
                       if n == "spinlane_api_errors_total" and dict(lab).get("error") == "tls")
        cue("cert other", "not trusted by the cluster CA", flip=False)
        e0, n_req = tls_errors(), api.json("count")["requests"]
        check(wait_for(lambda: tls_errors() >= e0 + 2, 60), "the wrong CA refused again at each retry")
        check(api.json("count")["requests"] == n_req, "no request reached the server with the wrong CA")
        api.ok("cert good")
        check(wait_for(lambda: (scrape(port)[1] or {}).get(("spinlane_api_up", ())) == 1, 60), "back after the wrong CA")
        node.set(False)

        # ---- metrics ----
        nic = Plugin(api_pb, root, "spinlane-dpdk-nic.sock")
        nic.alloc(["0000:00:07.0"])
        try:
            nic.alloc(["0000:00:99.0"])
        except grpc.RpcError:
            pass
        nic.close()
        check(wait_for(lambda: sample(scrape(port)[1], "spinlane_device_healthy", resource=NIC, device="0000:00:06.0",
                                      numa_node="0", pod="aeron-0", namespace="trading", container="driver") == 1, 20),
              "pod labels on the NIC from PodResources")
        fams, s = scrape(port)
        check(sample(s, "spinlane_device_healthy", resource=CORE, device="p0c3", numa_node="0", pod="aeron-0",
                     namespace="trading", container="driver") == 1, "pod labels on the core")
        check(sample(s, "spinlane_device_healthy", resource=NIC, device="0000:00:07.0", numa_node="0", pod="",
                     namespace="", container="") == 1, "a free NIC has empty pod labels")
        check(sample(s, "spinlane_devices", resource=NIC, health="healthy") == 2 and
              sample(s, "spinlane_devices", resource=CORE, health="healthy") == 6, "device counts")
        check(sample(s, "spinlane_devices_allocated", resource=NIC) == 1, "allocated NICs")
        check(sample(s, "spinlane_allocations_total", resource=NIC, result="ok") == 2 and
              sample(s, "spinlane_allocations_total", resource=NIC, result="refused") == 1, "allocation counters")
        check(fams["spinlane_allocate_duration_seconds"].type == "histogram" and
              sample(s, "spinlane_allocate_duration_seconds_count", resource=NIC) == 3 and
              sample(s, "spinlane_allocate_duration_seconds_bucket", resource=NIC, le="+Inf") == 3,
              "Allocate latency histogram")
        check(sample(s, "spinlane_kubelet_registrations_total", resource=NIC) >= 2, "registrations counted")
        for f in ("spinlane_allocations", "spinlane_api_requests", "spinlane_kubelet_registrations"):
            check(f in fams and fams[f].type == "counter", "%s is a counter" % f)
        per_check = {}
        for (name, labels), v in s.items():
            if name == "spinlane_node_check":
                per_check.setdefault(dict(labels)["check"], []).append(v)
        check(len(per_check) >= 9 and all(sum(v) == 1 and len(v) == 4 for v in per_check.values()),
              "one verdict per check %s" % per_check)
        check(sample(s, "spinlane_node_check", check="isolated-cpus", verdict="pass") == 1, "isolated-cpus passes")
        check(sample(s, "spinlane_api_errors_total", call="node_patch", error="forbidden") >= 1 and
              sample(s, "spinlane_api_errors_total", call="event_create", error="forbidden") >= 1 and
              sample(s, "spinlane_api_errors_total", call="node_get", error="throttled") >= 1, "API errors counted")
        check(sample(s, "spinlane_podresources_up") == 1 and sample(s, "spinlane_cluster_reporting") == 1, "up gauges")
        check(sample(s, "spinlane_preparations_total", outcome="ok") >= 1, "preparations counted")
        st, body, hdr = get(port, "/metrics")
        check(hdr.get("Content-Type", "").startswith("text/plain; version=0.0.4"), "exposition content type %s" % hdr)
        check(get(pport, "/readyz")[0] == 200 and get(pport, "/healthz")[0] == 200, "probes 200")
        check(get(port, "/healthz")[0] == 404 and get(pport, "/metrics")[0] == 404, "probes and /metrics apart")
        check(get(port, "/nope")[0] == 404 and get(port, "/metrics", method="POST")[0] == 405, "404 and 405")
        podres.fail = grpc.StatusCode.UNAVAILABLE
        check(wait_for(lambda: sample(scrape(port)[1], "spinlane_podresources_up") == 0, 20), "PodResources failing")
        podres.fail = None
        podres.garbage = True
        check(wait_for(lambda: "not a ListPodResourcesResponse" in agent.text(), 20), "PodResources garbage logged")
        podres.garbage = False
        check(wait_for(lambda: sample(scrape(port)[1], "spinlane_podresources_up") == 1, 20), "PodResources back")

        # ---- the endpoints are bounded: a hostile client cannot stall the loop ----
        idle = []
        for _ in range(8):  # the per-address cap, from one address
            c = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.3", 0))
            idle.append(c)
        extra = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.3", 0))
        extra.settimeout(30 * S)
        try:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            got = extra.recv(100)
        except OSError:
            got = b""
        check(got == b"", "a 9th connection from one address is refused (%r)" % got[:40])
        extra.close()
        slow = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.4", 0))
        slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
        check(get(pport, "/healthz")[0] == 200 and get(port, "/metrics")[0] == 200,
              "/healthz and /metrics answer past idle and slow clients")
        node.set(True)  # the loop still re-scans and prints
        node.set(False)
        big = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.5", 0))
        big.settimeout(30 * S)
        try:
            big.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
            head = big.recv(64)
        except OSError:
            head = b""
        check(head == b"" or re.match(rb"HTTP/1\.1 (413|431|400)", head) is not None, "a 40 KB request refused (%r)" % head)
        big.close()
        slow.settimeout(60 * S)  # the header deadline is 5 s
        try:
            closed = slow.recv(100) == b""
        except socket.timeout:
            closed = False
        except OSError:
            closed = True  # reset
        check(closed, "a slow client is cut by the header deadline")
        for c in idle:
            c.settimeout(60 * S)
            try:
                c.recv(1)
            except OSError:
                pass
            c.close()
        slow.close()
        check(get(pport, "/healthz")[0] == 200, "/healthz after the hostile clients")
        fds = sock_flags(agent.p.pid)
        check(fds and all(f & os.O_NONBLOCK for f in fds), "every socket of the daemon is non-blocking (%s)" % fds)

        # ---- a flapping check: the Event calls stay within the rate limit ----
        if not args.quick:
            t0 = time.monotonic()
            for i in range(30):
                node.flip()
            node.set(False)
            calls = [r for r in api.json("requests") if "/events" in r["path"]]
            _, s = scrape(port)
            budget = 25 + int((time.monotonic() - t0) / 300) + 1
            del calls
            total = sum(v for (n, lab), v in s.items() if n == "spinlane_api_requests_total" and
                        dict(lab)["call"] in ("event_create", "event_patch"))
            check(total <= budget + 2, "Event calls over the whole run within the bucket: %d (budget %d)" % (total, budget))
            check(sample(s, "spinlane_events_held_total") > 0, "the storm was held back")

        rc = agent.stop()
        check(rc == 0, "agent exit %s" % rc)
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
        podres.stop()
        api.stop()
        log = agent.text()
        if failures:
            print("---- agent log (tail) ----\n" + "\n".join(log.splitlines()[-80:]))
    log = agent.text()
    for t in TOKENS:
        check(t not in log, "the token %s never appears in the log" % t)


class ListingKubelet(Kubelet):
    """The kubelet's way with a plugin: each accepted Register is followed at once by
    ListAndWatch on the plugin's socket (from another thread: Register returns first)."""

    def __init__(self, api, root):
        super().__init__(api, root)
        self.root = root
        self.watchers = []
        self.plugins = []
        self.mu = threading.Lock()

    def _register(self, req, ctx):
        r = super()._register(req, ctx)
        threading.Thread(target=self._watch, args=(req.endpoint,), daemon=True).start()
        return r

    def _watch(self, endpoint):
        p = Plugin(self.api, self.root, endpoint)
        w = Watcher(p)
        with self.mu:
            self.plugins.append(p)
            self.watchers.append(w)

    def listing(self, n):
        """n ListAndWatch streams have sent their first list."""
        with self.mu:
            return sum(1 for w in self.watchers if w.lists) >= n

    def stop(self):
        with self.mu:
            ws, ps = list(self.watchers), list(self.plugins)
        for w in ws:
            w.cancel()
        for p in ps:
            p.close()
        super().stop()


class Requests:
    """The API server stand-in's request log, kept (each "requests" drains it)."""

    def __init__(self, api):
        self.api = api
        self.all = []

    def node_patches(self):
        self.all += self.api.json("requests")
        return [r for r in self.all if r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/node-a"]

    def patch(self, body):
        """The first label PATCH with this body that the server received (a dict), or None.
        Not by its answer: a "requests" that drains the log while a request is being
        answered leaves that entry's answer unset."""
        for r in self.node_patches():
            if r["body"] == body:
                return r
        return None


def write_kubeconfig(base, api):
    with open(os.path.join(base, "token"), "w") as f:
        f.write("tok-1\n")
    path = os.path.join(base, "kubeconfig")
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    certificate-authority: %s/ca.pem\n"
                "    server: https://127.0.0.1:%d\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                "current-context: c\nusers:\n- name: u\n  user:\n    tokenFile: token\n" % (api.dir, api.port))
    return path


FIRST_PATCH = ('{"metadata":{"labels":{"spinlane.io/dpdk-nics":"2","spinlane.io/isolated-cores":"6",'
               '"spinlane.io/nic-kind":"ena","spinlane.io/pin-mode":"kubelet-pinned","spinlane.io/ready":"false"},'
               '"resourceVersion":"1"}}')


def ready_patch(rv):
    return '{"metadata":{"labels":{"spinlane.io/ready":"true"},"resourceVersion":"%d"}}' % rv


def readiness_lines(agent):
    return [x.split("  ", 1)[-1] for x in agent.text().splitlines() if re.search(r"\binfo  node (not )?ready \(", x)]


def check_readiness_log(agent, what):
    """One line per change of the node's readiness, the last one: ready."""
    lines = readiness_lines(agent)
    check(lines and lines[-1].startswith("node ready (spinlane.io/ready=true)") and
          sum(x.startswith("node ready") for x in lines) == 1 and all(a != b for a, b in zip(lines, lines[1:])),
          "%s: one readiness line per change, ready last: %s" % (what, lines))


def test_registration_order(args, api_pb, base, measured):
    """spinlane.io/ready follows registration in either order, a label someone else removed
    or edited comes back at the next re-scan (the periodic one, SIGHUP, inotify), and the
    node's readiness is logged once per change. The 5-minute label check is left at its
    default here so that it cannot stand in for any of these."""
    # ---- the kubelet registers both plugins (and lists) before the first label PATCH ----
    d = os.path.join(base, "order-before")
    root = make_tree(d)
    api = ApiServer()
    reqs = Requests(api)
    kubelet = ListingKubelet(api_pb, root)
    kubelet.start(wipe=False)
    api.ok("hold GET /api/v1/nodes/node-a")  # the first label sync waits until both registered
    port = free_port()  # the probes' listener (/readyz); /metrics off
    agent = Agent(args.agent, root, os.path.join(d, "agent.log"),
                  ["--kubeconfig", write_kubeconfig(d, api), "--metrics-bind-address", "0",
                   "--health-probe-bind-address", "127.0.0.1:%d" % port],
                  {"NODE_NAME": "node-a", "SPINLANE_RESCAN_MS": "300"})
    try:
        check(wait_for(lambda: api.json("held")["held"] == 1, 30), "the first label sync's GET is held")
        try:
            regs = kubelet.wait_registrations(2, 30)
            check(sorted(regs) == sorted([NIC, CORE]), "both registered: %s" % sorted(regs))
        except TimeoutError as e:
            check(False, "registrations: %s" % e)
        check(wait_for(lambda: kubelet.listing(2), 30), "the kubelet stand-in lists both resources")
        t_rel = time.monotonic()
        api.ok("release")
        got = wait_for(lambda: reqs.patch(ready_patch(2)), 20)
        check(got, "registered before the first PATCH: ready=true follows it: %s" %
              [r["body"] for r in reqs.node_patches()])
        if got:
            measured.append(("registered before the first label PATCH: release of its GET -> ready=true PATCH",
                             got["t"] - t_rel))
        p = reqs.node_patches()
        check(len(p) >= 2 and p[0]["body"] == FIRST_PATCH, "the first PATCH, computed before the registration: %s" %
              [r["body"] for r in p[:2]])
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 20), "spinlane.io/ready=true on the Node")
        check(get(port, "/readyz")[:2] == (200, "ok\n"), "/readyz 200 once both are registered")
        check(wait_for(lambda: readiness_lines(agent) and readiness_lines(agent)[-1].startswith("node ready"), 20),
              "the readiness log line")
        check_readiness_log(agent, "registered before")
        # the periodic re-scan puts back a label someone removed
        api.ok("unlabel spinlane.io/ready")
        t0 = time.monotonic()
        got = wait_for(lambda: reqs.patch(ready_patch(4)), 20)
        check(got, "a removed spinlane.io/ready is put back by the periodic re-scan: %s" %
              [r["body"] for r in reqs.node_patches()])
        if got:
            measured.append(("label removed -> PATCH back (periodic re-scan every 300 ms)", got["t"] - t0))
        check(agent.stop() == 0, "agent exit 0 (registered before)")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
        api.ok("release")
        api.stop()
        if failures:
            print("---- agent log (tail) ----\n" + "\n".join(agent.text().splitlines()[-60:]))

    # ---- the kubelet comes after the first label PATCH; then SIGHUP and inotify ----
    d = os.path.join(base, "order-after")
    root = make_tree(d)
    api = ApiServer()
    reqs = Requests(api)
    port = free_port()  # the probes' listener (/readyz); /metrics off
    agent = Agent(args.agent, root, os.path.join(d, "agent.log"),
                  ["--kubeconfig", write_kubeconfig(d, api), "--metrics-bind-address", "0",
                   "--health-probe-bind-address", "127.0.0.1:%d" % port],
                  {"NODE_NAME": "node-a", "SPINLANE_RESCAN_MS": "600000"})  # no periodic re-scan here
    kubelet = ListingKubelet(api_pb, root)
    not_reg = "the NIC device plugin is not registered with the kubelet"
    try:
        check(wait_for(lambda: reqs.patch(FIRST_PATCH), 30), "the first PATCH, no kubelet yet: %s" %
              [r["body"] for r in reqs.node_patches()])
        check(wait_for(lambda: "waiting for" in agent.text(), 30), "the device plugins wait for the kubelet")
        check(get(port, "/readyz")[:2] == (503, "not ready: %s\n" % not_reg), "/readyz 503 says why: %r" %
              (get(port, "/readyz")[:2],))
        check(agent.count("node not ready (spinlane.io/ready=false): %s" % not_reg) == 1,
              "not ready logged once, with why: %s" % readiness_lines(agent))
        kubelet.start(wipe=False)
        try:
            regs = kubelet.wait_registrations(2, 30)
            t_reg = max(t for t, _ in regs.values())
        except TimeoutError as e:
            check(False, "registrations: %s" % e)
            t_reg = time.monotonic()
        got = wait_for(lambda: reqs.patch(ready_patch(2)), 20)
        check(got, "registered after the first PATCH: ready=true follows: %s" % [r["body"] for r in reqs.node_patches()])
        if got:
            measured.append(("second registration -> ready=true PATCH (kubelet after the first PATCH)", got["t"] - t_reg))
        check(wait_for(lambda: get(port, "/readyz")[0] == 200, 20), "/readyz 200 after the registration")
        check(wait_for(lambda: readiness_lines(agent) and readiness_lines(agent)[-1].startswith("node ready"), 20),
              "the readiness log line")
        check_readiness_log(agent, "registered after")
        # removed by someone else, then SIGHUP
        api.ok("unlabel spinlane.io/ready")
        t0 = time.monotonic()
        agent.p.send_signal(signal.SIGHUP)
        got = wait_for(lambda: reqs.patch(ready_patch(4)), 20)
        check(got, "a removed spinlane.io/ready is put back after SIGHUP: %s" % [r["body"] for r in reqs.node_patches()])
        if got:
            measured.append(("label removed, SIGHUP -> PATCH back", got["t"] - t0))
        check(wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 20), "spinlane.io/ready=true again")
        # edited by someone else, then an inotify re-scan (a file appears under /dev)
        api.ok("label spinlane.io/dpdk-nics 7")
        t0 = time.monotonic()
        open(os.path.join(root, "dev", "spinlane-test-touch"), "w").close()
        body = '{"metadata":{"labels":{"spinlane.io/dpdk-nics":"2"},"resourceVersion":"6"}}'  # unlabel 4, PATCH 5, label 6
        got = wait_for(lambda: reqs.patch(body), 20)
        check(got, "an edited spinlane.io/dpdk-nics is put back after an inotify re-scan: %s" %
              [r["body"] for r in reqs.node_patches()])
        if got:
            measured.append(("label edited, inotify re-scan -> PATCH back", got["t"] - t0))
        check(wait_for(lambda: api.labels().get("spinlane.io/dpdk-nics") == "2", 20), "spinlane.io/dpdk-nics=2 again")
        check_readiness_log(agent, "after SIGHUP and inotify")
        check(agent.stop() == 0, "agent exit 0 (registered after)")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        kubelet.stop()
        api.stop()
        if failures:
            print("---- agent log (tail) ----\n" + "\n".join(agent.text().splitlines()[-60:]))


def sock_flags(pid):
    """The file status flags of every TCP/UNIX socket of pid."""
    out = []
    fd_dir = "/proc/%d/fd" % pid
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return out
    for n in names:
        try:
            if not os.readlink(os.path.join(fd_dir, n)).startswith("socket:"):
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, n)) as f:
                for line in f:
                    if line.startswith("flags:"):
                        out.append(int(line.split()[1], 8))
        except OSError:
            continue
    return out


def test_options(args, base):
    """Bad options end the start with a message; NODE_NAME unset turns reporting off, once;
    in-cluster config from the service-account directory; metrics off."""
    root = make_tree(os.path.join(base, "opt"))
    for extra, needle in ((["--metrics-bind-address", "nope"], "--metrics-bind-address: expected"),
                          (["--metrics-bind-address", ":99999"], "--metrics-bind-address: expected"),
                          (["--health-probe-bind-address", "x:1"], "--health-probe-bind-address: expected"),
                          (["--kubeconfig", os.path.join(base, "missing")], "--kubeconfig %s" % os.path.join(base, "missing"))):
        a = Agent(args.agent, root, os.path.join(base, "opt.log"), extra, {"NODE_NAME": "node-a"})
        rc = a.p.wait(60 * S)
        a.log.close()
        check(rc == 2 and needle in a.text(), "%s: exit %s, message %r" % (extra, rc, a.text()[-300:]))
    exec_cfg = os.path.join(base, "exec-kubeconfig")
    with open(exec_cfg, "w") as f:
        f.write("apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://x\n"
                "    certificate-authority-data: eA==\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                "current-context: c\nusers:\n- name: u\n  user:\n    exec:\n      command: aws\n")
    a = Agent(args.agent, root, os.path.join(base, "opt.log"), ["--kubeconfig", exec_cfg], {"NODE_NAME": "node-a"})
    rc = a.p.wait(60 * S)
    a.log.close()
    check(rc == 2 and "exec" in a.text(), "an exec plugin kubeconfig: exit %s %r" % (rc, a.text()[-300:]))

    # NODE_NAME unset: off, said once; metrics still served
    api = ApiServer()
    port = free_port()
    a = Agent(args.agent, root, os.path.join(base, "off.log"), ["--metrics-bind-address", "127.0.0.1:%d" % port,
                                                                 "--health-probe-bind-address", "0"],
              {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(api.port)})
    try:
        check(wait_for(lambda: "metrics on" in a.text(), 30), "metrics on without cluster reporting")
        _, s = scrape(port)
        check(sample(s, "spinlane_cluster_reporting") == 0, "cluster reporting gauge 0")
        check(a.count("cluster reporting off: NODE_NAME is not set") == 1, "off, said once")
        check(api.json("count")["requests"] == 0, "no API request without NODE_NAME")
        check(a.stop() == 0, "off agent exit 0")
    finally:
        if a.p.poll() is None:
            a.p.kill()
    # in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service-account dir; metrics off
    sa = os.path.join(base, "incluster")
    os.makedirs(sa)
    shutil.copy(os.path.join(api.dir, "ca.pem"), os.path.join(sa, "ca.crt"))
    with open(os.path.join(sa, "token"), "w") as f:
        f.write("tok-1\n")
    a = Agent(args.agent, root, os.path.join(base, "incluster.log"), ["--metrics-bind-address", "0",
                                                                      "--health-probe-bind-address", "0"],
              {"NODE_NAME": "node-a", "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(api.port),
               "SPINLANE_SA_DIR": sa})
    try:
        check(wait_for(lambda: api.labels().get("spinlane.io/dpdk-nics") == "2", 30), "in-cluster config: labels set")
        check("metrics off" in a.text() and "probes off" in a.text(), "metrics and probes off logged")
        check(a.stop() == 0, "in-cluster agent exit 0")
    finally:
        if a.p.poll() is None:
            a.p.kill()
        api.stop()
    check("tok-1" not in a.text(), "no token in the in-cluster log")


def main():
    # each line as it is printed: a run that ctest stops at its timeout still shows how far
    # it got (stdout is a pipe there, which Python would otherwise buffer whole)
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--quick", action="store_true", help="no hanging server, no storm")
    ap.add_argument("--wrapper", default="")
    ap.add_argument("--scale", type=float, default=None)
    args = ap.parse_args()
    global S, WRAPPER
    WRAPPER = shlex.split(args.wrapper)
    S = args.scale if args.scale else (20.0 if WRAPPER else 1.0)
    kubelet_standin.SCALE = S
    api_pb, gen = kubelet_standin.load_api(args.proto_dir)
    pr_api, gen2 = podres_standin.load_api(args.proto_dir)
    base = tempfile.mkdtemp(prefix="sl-cluster-")
    measured = []
    try:
        test_registration_order(args, api_pb, base, measured)
        test_main(args, api_pb, pr_api, base)
        test_options(args, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(gen, ignore_errors=True)
        shutil.rmtree(gen2, ignore_errors=True)
    for what, sec in measured:  # reported, never asserted (timings belong in bench/)
        print("measured: %s: %.3f s" % (what, sec))
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
