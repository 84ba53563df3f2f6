#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of deploy/: the kustomize manifests, their config, the example pod, the Dockerfiles.

    test-deploy.py render|config|example|dockerfile|probes|chart

Rendering uses a real kubectl (`kubectl kustomize`, no cluster); the configs and the
DaemonSet's command line run through the built spinlane-agent on fixture nodes from
tests/fixtures/make-node.py. Exit 0 pass, 1 fail, 77 skipped (reason printed).
Environment: SPINLANE_SOURCE_DIR, SPINLANE_BINARY_DIR (set by ctest), optional
SPINLANE_KUBECTL (a kubectl to use instead of BINARY_DIR/tools/bin/kubectl).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SPINLANE_BINARY_DIR") or os.path.join(SRC, "build")
AGENT = os.path.join(BIN, "agent", "spinlane-agent")
AGENT_RUN = os.path.join(BIN, "agent", "spinlane-agent-run")  # `spinlane-agent run` execs it
LAUNCH = os.path.join(BIN, "driver", "launch", "spinlane-launch")
DATAPATH = os.path.join(BIN, "driver", "datapath", "spinlane-datapath")  # spinlane-launch runs it
TARGETS = {  # kustomize dir -> fixture node it is meant for
    "deploy/base": "eks-x86",
    "deploy/overlays/eks": "eks-x86",
    "deploy/overlays/aks": "aks-mana",
}
DP_DIR = "/var/lib/kubelet/device-plugins"
# the eks-x86 fixture's two secondary ENAs (on vfio-pci) by the names AL2023 gives them
ENA_NAMES = {"0000:00:06.0": "ens6", "0000:00:07.0": "ens7"}

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from testcheck import check, failures  # noqa: E402


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def need_yaml():
    try:
        import yaml  # Debian python3-yaml
        return yaml
    except ImportError:
        skip("python3-yaml is not installed (apt-get install python3-yaml)")


def kubectl():
    env = os.environ.get("SPINLANE_KUBECTL")
    if env:
        return env
    tools = os.path.join(BIN, "tools")
    k = os.path.join(tools, "bin", "kubectl")
    if not os.access(k, os.X_OK):
        r = subprocess.run(["bash", os.path.join(SRC, "tests", "deploy", "get-kubectl.sh"), tools],
                           capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            other = shutil.which("kubectl")
            if other:
                print("get-kubectl failed (%s); using %s" % (r.stderr.strip(), other))
                return other
            skip("no kubectl: " + r.stderr.strip())
    return k


def render(target):
    yaml = need_yaml()
    r = subprocess.run([kubectl(), "kustomize", os.path.join(SRC, target)], capture_output=True, text=True)
    if not check(r.returncode == 0, "kubectl kustomize %s: exit %d: %s" % (target, r.returncode, r.stderr.strip())):
        return []
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def one(docs, kind, name=None):
    found = [d for d in docs if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name)]
    check(len(found) == 1, "expected one %s%s, found %d" % (kind, " " + name if name else "", len(found)))
    return found[0] if found else None


def fixture(tmp, name, names=None):
    """A fixture node; names: PCI address -> the netdev name recorded in the bind state for
    the NICs on vfio-pci (what the agent keeps selecting by nics.interfaces)."""
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "fixtures", "make-node.py"), tmp, name],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("make-node.py %s failed: %s" % (name, r.stderr))
    root = os.path.join(tmp, name)
    # the NICs on vfio-pci as the agent leaves them: their MACs recorded in the bind state
    # before the unbind (the shipped configs take addresses from the cloud's metadata,
    # which preflight leaves to the running agent: nic-address skips, not fails)
    devs = os.path.join(root, "sys/bus/pci/devices")
    vfio = sorted(d for d in os.listdir(devs) if os.path.basename(os.path.realpath(os.path.join(devs, d, "driver"))) == "vfio-pci")
    if vfio:
        os.makedirs(os.path.join(root, "var/lib/spinlane"), exist_ok=True)
        with open(os.path.join(root, "var/lib/spinlane/bind-state.json"), "w") as f:
            json.dump({"version": 1, "count": len(vfio), "nics": [
                {"pci": d, "original_driver": "ena", "driver": "vfio-pci", "netdev": (names or {}).get(d, ""),
                 "mac": "0a:00:00:00:%02x:%02x" % (i, i)}
                for i, d in enumerate(vfio)]}, f)
    return root


def need_agent():
    if not os.access(AGENT, os.X_OK):
        raise SystemExit("spinlane-agent not built at %s" % AGENT)


def inventory(root, cfg):
    r = subprocess.run([AGENT, "inventory", "--json", "--root", root, "--config", cfg], capture_output=True, text=True)
    if not check(r.returncode == 0, "inventory --config %s: exit %d: %s" % (cfg, r.returncode, r.stderr.strip())):
        return {}
    return json.loads(r.stdout)["resources"]


def agent_pod(docs):
    """The DaemonSet, its pod spec and its one container."""
    ds = one(docs, "DaemonSet", "spinlane-agent")
    if not ds:
        return None, None, None
    spec = ds["spec"]["template"]["spec"]
    return ds, spec, spec["containers"][0]


def config_of(docs, spec, c):
    """config.json as the agent will read it: the file named by --config, found through the
    container's volume mounts in the ConfigMap the DaemonSet mounts."""
    argv = c.get("command", []) + c.get("args", [])
    path = argv[argv.index("--config") + 1] if "--config" in argv else "/etc/spinlane/config.json"
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        if path.startswith(m["mountPath"].rstrip("/") + "/"):
            v = vols.get(m["name"], {})
            if "configMap" not in v:
                continue
            cm = one(docs, "ConfigMap", v["configMap"]["name"])
            key = path[len(m["mountPath"].rstrip("/")) + 1:]
            if cm and check(key in cm.get("data", {}), "ConfigMap %s has no key %s" % (cm["metadata"]["name"], key)):
                return cm["data"][key]
    check(False, "--config %s is not in a mounted ConfigMap" % path)
    return None


# ---------------------------------------------------------------- render


def test_render():
    for target in TARGETS:
        docs = render(target)
        if not docs:
            continue
        print("%s: %d objects: %s" % (target, len(docs), ", ".join(sorted(d["kind"] for d in docs))))
        ns = one(docs, "Namespace", "spinlane")
        if ns:
            check(ns["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged",
                  "%s: namespace spinlane does not allow privileged pods" % target)
        for d in docs:
            if d["kind"] in ("Role", "RoleBinding"):  # the Events' namespace
                check(d["metadata"].get("namespace") == "default",
                      "%s: %s %s not in namespace default" % (target, d["kind"], d["metadata"]["name"]))
            elif d["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy",
                                   "ValidatingAdmissionPolicyBinding"):  # cluster-scoped
                check(d["metadata"].get("namespace") == "spinlane",
                      "%s: %s %s not in namespace spinlane" % (target, d["kind"], d["metadata"]["name"]))
        ds, spec, c = agent_pod(docs)
        if not ds:
            continue
        t = "%s: DaemonSet spinlane-agent" % target
        argv = c.get("command", []) + c.get("args", [])
        check(argv == ["/usr/local/bin/spinlane-agent", "run", "--root", "/host", "--config", "/etc/spinlane/config.json"],
              "%s: command line %s" % (t, argv))
        check(len(spec["containers"]) == 1, "%s: expected one container" % t)
        # No host namespace but the network (the agent's NIC ioctls and netlink): the
        # host's /proc at /host/proc shows the host's PID 1 without hostPID.
        for ns in ("hostPID", "hostIPC"):
            check(not spec.get(ns), "%s: %s (the agent does not need it)" % (t, ns))
        check(spec.get("hostNetwork") is True, "%s: hostNetwork" % t)
        check(spec.get("dnsPolicy") == "ClusterFirstWithHostNet", "%s: dnsPolicy for hostNetwork" % t)
        sc = c.get("securityContext", {})
        check(sc.get("privileged") is True, "%s: privileged" % t)
        check(sc.get("readOnlyRootFilesystem") is True, "%s: readOnlyRootFilesystem" % t)
        check(spec.get("priorityClassName") == "system-node-critical", "%s: priorityClassName" % t)
        check(spec.get("nodeSelector", {}).get("spinlane.io/node-pool") == "true", "%s: nodeSelector" % t)
        # a scrape annotation promises a port reachable at the pod's address: not one the
        # agent binds to loopback (its default --metrics-bind-address 127.0.0.1:9470)
        ann = ds["spec"]["template"]["metadata"].get("annotations", {})
        if ann.get("prometheus.io/scrape") == "true":
            bind = argv[argv.index("--metrics-bind-address") + 1] if "--metrics-bind-address" in argv else "127.0.0.1:9470"
            check(not bind.startswith(("127.", "localhost", "[::1]")),
                  "%s: prometheus.io/scrape on a /metrics bound to %s: no scraper off the node reaches it" % (t, bind))
        check(any(x.get("key") == "spinlane.io/dedicated" and x.get("operator") == "Exists"
                  for x in spec.get("tolerations", [])), "%s: toleration of spinlane.io/dedicated" % t)
        grace = spec.get("terminationGracePeriodSeconds", 30)
        check(6 <= grace <= 60, "%s: terminationGracePeriodSeconds %s (the agent stops within 5 s)" % (t, grace))
        sel = ds["spec"]["selector"]["matchLabels"]
        labels = ds["spec"]["template"]["metadata"]["labels"]
        check(all(labels.get(k) == v for k, v in sel.items()), "%s: selector does not match the template" % t)
        sa = spec.get("serviceAccountName")
        check(sa is not None and one(docs, "ServiceAccount", sa) is not None, "%s: service account %s" % (t, sa))
        check(c["image"] != "spinlane-agent" and ":" in c["image"], "%s: image %s not set by kustomize" % (t, c["image"]))
        res = c.get("resources", {})
        req, lim = res.get("requests", {}), res.get("limits", {})
        check({"cpu", "memory"} <= set(req) and {"cpu", "memory"} <= set(lim), "%s: requests/limits %s" % (t, res))
        # Fractional CPU: the agent must stay in the shared pool, never get exclusive CPUs.
        check(str(req.get("cpu", "")).endswith("m") and str(lim.get("cpu", "")).endswith("m"),
              "%s: CPU requests/limits must be fractional (millicores): %s" % (t, res))
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        # The host mounts narrowed to what the agent opens under --root /host, each at
        # /host<path>; only /dev Bidirectional (the hugetlbfs mount), the kubelet's
        # directory read-only but for its device plugin directory.
        check("/host" not in mounts, "%s: the whole host / is mounted at /host" % t)
        got = host_mounts(spec, c)
        check(got == AGENT_HOST_MOUNTS, "%s: host mounts %s, want %s" % (t, got, AGENT_HOST_MOUNTS))
        for m in c.get("volumeMounts", []):
            want = AGENT_HOST_MOUNTS.get(m["mountPath"], (None, None, "None"))[2]
            check(m.get("mountPropagation", "None") == want,
                  "%s: %s has mountPropagation %s, want %s" % (t, m["mountPath"], m.get("mountPropagation"), want))
        text = config_of(docs, spec, c)
        check(text is not None, "%s: config.json not found" % t)
        if target == "deploy/overlays/eks" and text:
            # no selection would let the agent take any unaddressed ENA, one the VPC CNI
            # has just attached included: the same explicit selection as the chart's preset
            nics = json.loads(text)["nics"]
            yaml = need_yaml()
            with open(os.path.join(SRC, "helm", "spinlane", "values-eks.yaml")) as f:
                preset = yaml.safe_load(f)["config"]["nics"]
            check(nics.get("interfaces") == preset["interfaces"] and nics.get("kinds") == ["ena"],
                  "%s: nics %s do not select %s as values-eks.yaml does" % (t, nics, preset["interfaces"]))
        # Every hostPath is an absolute path; Bidirectional needs privileged (checked above).
        for v in vols.values():
            if "hostPath" in v:
                check(v["hostPath"]["path"].startswith("/"), "%s: hostPath %s" % (t, v["hostPath"]))
        check_cluster_reporting(t, docs, spec, c, vols, mounts)


# The host paths the agent opens under --root (common/hostfs.h: /proc, /sys, /dev,
# /var/lib/spinlane, /var/lib/kubelet), mount path -> (host path, readOnly, propagation).
AGENT_HOST_MOUNTS = {
    "/host/proc": ("/proc", False, "None"),
    "/host/sys": ("/sys", False, "None"),
    "/host/dev": ("/dev", False, "Bidirectional"),
    "/host/var/lib/spinlane": ("/var/lib/spinlane", False, "None"),
    # HostToContainer: the pod volumes the kubelet mounts later reach the agent and leave
    # with their unmount (with None the agent keeps copies of those mounted at its start)
    "/host/var/lib/kubelet": ("/var/lib/kubelet", True, "HostToContainer"),
    "/host" + DP_DIR: (DP_DIR, False, "None"),
}


def host_mounts(spec, c):
    """mount path -> (host path, readOnly, propagation) of the container's hostPath mounts."""
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    out = {}
    for m in c.get("volumeMounts", []):
        hp = vols.get(m["name"], {}).get("hostPath")
        if hp:
            out[m["mountPath"]] = (hp["path"], bool(m.get("readOnly")), m.get("mountPropagation", "None"))
    return out


def pod_shape(spec, c):
    """What a platform team reviews in the agent's pod: host namespaces, privilege, and
    every volume and mount (hostPath by path and type; others by their kind)."""
    vols = {}
    for v in spec.get("volumes", []):
        if "hostPath" in v:
            vols[v["name"]] = ("hostPath", v["hostPath"]["path"], v["hostPath"].get("type", ""))
        else:
            vols[v["name"]] = tuple(k for k in v if k != "name")
    mounts = {m["mountPath"]: (vols.get(m["name"]), bool(m.get("readOnly")), m.get("mountPropagation", "None"),
                               m.get("subPath", "")) for m in c.get("volumeMounts", [])}
    sc = c.get("securityContext", {})
    return {"hostPID": bool(spec.get("hostPID")), "hostIPC": bool(spec.get("hostIPC")),
            "hostNetwork": bool(spec.get("hostNetwork")), "dnsPolicy": spec.get("dnsPolicy"),
            "privileged": bool(sc.get("privileged")), "readOnlyRootFilesystem": bool(sc.get("readOnlyRootFilesystem")),
            "capabilities": sc.get("capabilities"), "allowPrivilegeEscalation": sc.get("allowPrivilegeEscalation"),
            "volumes": sorted(vols.values(), key=repr), "mounts": mounts}


# What agent/kube/kube-client.c calls, and nothing else (docs/observability.md, RBAC):
# Nodes through the ClusterRole, Events through a Role in "default", where the agent posts
# them (KUBE_EVENT_NAMESPACE; tests/helm/test_node_policy.py checks the policy around it).
RBAC_RULES = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
EVENT_RULES = [{"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
METRICS_PORT = 9470  # the agent's default --metrics-bind-address 127.0.0.1:9470
PROBE_PORT = 9471    # the agent's default --health-probe-bind-address 127.0.0.1:9471


def check_cluster_reporting(t, docs, spec, c, vols, mounts):
    """RBAC exactly as the code needs, the token mounted where in-cluster clients look, NODE_NAME
    from the downward API, the probes on the agent's endpoints."""
    sa = spec.get("serviceAccountName")
    role = one(docs, "ClusterRole", "spinlane-agent")
    if role:
        check(role.get("rules") == RBAC_RULES, "%s: ClusterRole rules %s, want exactly %s" % (t, role.get("rules"), RBAC_RULES))
    crb = one(docs, "ClusterRoleBinding", "spinlane-agent")
    if crb:
        check(crb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "spinlane-agent"},
              "%s: ClusterRoleBinding roleRef %s" % (t, crb["roleRef"]))
        check(crb.get("subjects") == [{"kind": "ServiceAccount", "name": sa, "namespace": "spinlane"}],
              "%s: ClusterRoleBinding subjects %s" % (t, crb.get("subjects")))
    roles = [d for d in docs if d["kind"] == "Role"]
    rbs = [d for d in docs if d["kind"] == "RoleBinding"]
    check(len(roles) == 1 and roles[0]["metadata"].get("namespace") == "default" and roles[0].get("rules") == EVENT_RULES,
          "%s: one Role in default with %s: %s" % (t, EVENT_RULES, [(r["metadata"], r.get("rules")) for r in roles]))
    check(len(rbs) == 1 and rbs[0]["metadata"].get("namespace") == "default" and
          rbs[0].get("subjects") == [{"kind": "ServiceAccount", "name": sa, "namespace": "spinlane"}],
          "%s: one RoleBinding in default for %s: %s" % (t, sa, rbs))
    check(len([d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]) == 2,
          "%s: exactly one ClusterRole and one binding" % t)
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
          "%s: NODE_NAME from spec.nodeName: %s" % (t, env.get("NODE_NAME")))
    m = mounts.get(SA_DIR)
    if check(m is not None and m.get("readOnly"), "%s: the token mounted read-only at %s" % (t, SA_DIR)):
        srcs = vols.get(m["name"], {}).get("projected", {}).get("sources", [])
        tok = [x["serviceAccountToken"] for x in srcs if "serviceAccountToken" in x]
        ca = [x["configMap"] for x in srcs if "configMap" in x]
        check(tok and tok[0].get("path") == "token" and 600 <= tok[0].get("expirationSeconds", 0) <= 86400,
              "%s: a bound, expiring token at token: %s" % (t, tok))
        check(ca and ca[0]["name"] == "kube-root-ca.crt" and {"key": "ca.crt", "path": "ca.crt"} in ca[0].get("items", []),
              "%s: the cluster CA at ca.crt: %s" % (t, ca))
    check(spec.get("automountServiceAccountToken") is False, "%s: no second, automounted token" % t)
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        g = c.get(probe, {}).get("httpGet", {})
        check(g.get("path") == path and g.get("port") in (PROBE_PORT, "probes") and g.get("host") == "127.0.0.1",
              "%s: %s on 127.0.0.1, the probe port: %s" % (t, probe, g))
    ports = [p for p in c.get("ports", []) if p.get("containerPort") == METRICS_PORT]
    check(len(ports) == 1 and ports[0].get("name") == "metrics", "%s: containerPort %d named metrics" % (t, METRICS_PORT))
    ports = [p for p in c.get("ports", []) if p.get("containerPort") == PROBE_PORT]
    check(len(ports) == 1 and ports[0].get("name") == "probes", "%s: containerPort %d named probes" % (t, PROBE_PORT))
    argv = c.get("command", []) + c.get("args", [])
    check("--metrics-bind-address" not in argv or
          argv[argv.index("--metrics-bind-address") + 1] == "127.0.0.1:%d" % METRICS_PORT,
          "%s: /metrics on 127.0.0.1:%d" % (t, METRICS_PORT))
    check("--health-probe-bind-address" not in argv or
          argv[argv.index("--health-probe-bind-address") + 1] == "127.0.0.1:%d" % PROBE_PORT,
          "%s: the probes' port is the one the agent binds, on 127.0.0.1" % t)


# ---------------------------------------------------------------- probes


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_probes():
    """The DaemonSet's own command line, env and probes against a fixture node: the probe
    paths answer (liveness 200; readiness 503 without a kubelet to register with), NODE_NAME
    set but no API server in reach: reporting says so once and the device plugins serve.
    The port is a free one (the default 9470 is checked in render)."""
    import http.client
    import time
    need_agent()
    if not os.access(AGENT_RUN, os.X_OK):
        raise SystemExit("spinlane-agent-run not built at %s" % AGENT_RUN)
    docs = render("deploy/overlays/eks")
    ds, spec, c = agent_pod(docs) if docs else (None, None, None)
    if not ds:
        return
    tmp = tempfile.mkdtemp(prefix="sl-deploy-")
    p = None
    try:
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            f.write(config_of(docs, spec, c))
        root = fixture(tmp, "eks-x86")
        os.makedirs(os.path.join(root, DP_DIR.lstrip("/")), exist_ok=True)
        argv = [AGENT] + (c.get("command", []) + c.get("args", []))[1:]
        argv[argv.index("--root") + 1] = root
        argv[argv.index("--config") + 1] = cfg
        port = free_port()
        argv += ["--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:%d" % port]
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
        env["NODE_NAME"] = "ip-10-0-1-17.ec2.internal"  # what spec.nodeName gives on EKS
        log = os.path.join(tmp, "agent.log")
        p = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)

        def get(path):
            try:
                h = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                h.request("GET", path)
                r = h.getresponse()
                return r.status
            except OSError:
                return None

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and get("/healthz") != 200 and p.poll() is None:
            time.sleep(0.05)
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            path = c[probe]["httpGet"]["path"]
            want = 503 if probe == "readinessProbe" else 200
            st = get(path)
            check(st == want, "%s %s: HTTP %s, want %d (no kubelet: not ready)" % (probe, path, st, want))
        text = open(log).read()
        check(text.count("cluster reporting off: not in a cluster") == 1, "no API server: reporting off, said once")
        check("serving on" in text, "the device plugins serve")
        p.send_signal(15)
        check(p.wait(30) == 0, "the agent exits 0 on SIGTERM")
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- config


def test_config():
    need_agent()
    tmp = tempfile.mkdtemp(prefix="sl-deploy-")
    try:
        counts = {}
        for target, fx in TARGETS.items():
            docs = render(target)
            if not docs:
                continue
            ds, spec, c = agent_pod(docs)
            text = config_of(docs, spec, c) if ds else None
            if text is None:
                continue
            cfg = os.path.join(tmp, target.replace("/", "-") + ".json")
            with open(cfg, "w") as f:
                f.write(text)
            # 1. preflight accepts it (exit 2 = bad config) and the matching node passes.
            root = fixture(os.path.join(tmp, target.replace("/", "-")), fx, ENA_NAMES)
            r = subprocess.run([AGENT, "preflight", "--config", cfg, "--root", root], capture_output=True, text=True)
            print("%s on %s: preflight exit %d, %s" % (target, fx, r.returncode, r.stdout.strip().splitlines()[-1:]))
            check(r.returncode == 0, "%s: preflight --config on %s: exit %d\n%s%s" % (target, fx, r.returncode, r.stdout, r.stderr))
            check("PASS nic-binding" in r.stdout, "%s: nic-binding does not pass on %s" % (target, fx))
            # 2. the DaemonSet's own command line, host root and config path swapped for
            # the fixture and the rendered file, preparing once (no kubelet here).
            argv = c.get("command", []) + c.get("args", [])
            argv = [AGENT] + argv[1:]
            argv[argv.index("--root") + 1] = root
            argv[argv.index("--config") + 1] = cfg
            r = subprocess.run(argv + ["--once"], capture_output=True, text=True)
            print("%s: %s --once: exit %d" % (target, " ".join(shlex.quote(a) for a in argv[1:]), r.returncode))
            check(r.returncode == 0, "%s: DaemonSet command --once on %s: exit %d\n%s%s" % (target, fx, r.returncode, r.stdout, r.stderr))
            out = r.stdout
            check("PASS prep-nic-binding" in out, "%s: prep-nic-binding does not pass on %s" % (target, fx))
            if fx == "aks-mana":
                check("PASS prep-mana" in out, "%s: prep-mana does not pass on %s" % (target, fx))
            counts[(target, fx)] = {k: len(v) for k, v in inventory(root, cfg).items()}
            # 3. the overlays differ where they must: on the other cloud's node nothing is
            # selected (EKS takes only ENA, AKS only MANA); the base takes either.
            other = "aks-mana" if fx == "eks-x86" else "eks-x86"
            oroot = fixture(os.path.join(tmp, target.replace("/", "-") + "-other"), other)
            r = subprocess.run([oroot if a == root else a for a in argv] + ["--once"], capture_output=True, text=True)
            nothing = "WARN prep-nic-binding: no NIC matches the config's selection" in r.stdout
            if target == "deploy/base":
                check(not nothing and r.returncode == 0, "%s: the base config selects nothing on %s:\n%s" % (target, other, r.stdout))
            else:
                check(nothing, "%s: selects a NIC on %s:\n%s" % (target, other, r.stdout))
            print("%s on %s: %s" % (target, other, "nothing selected" if nothing else "NICs selected"))
            # 4. the check can fail: the same file with an unknown key is refused.
            bad = json.loads(text)
            bad["nics"]["kind"] = "ena"
            badf = cfg + ".bad"
            with open(badf, "w") as f:
                json.dump(bad, f)
            r = subprocess.run([AGENT, "preflight", "--config", badf, "--root", root], capture_output=True, text=True)
            check(r.returncode == 2 and "nics.kind" in r.stderr, "%s: a bad key was not refused (exit %d)" % (target, r.returncode))
        for k, v in sorted(counts.items()):
            print("advertised %s on %s: %s" % (k[0], k[1], v))
        nic, core = "spinlane.io/dpdk-nic", "spinlane.io/isolated-core"
        if counts:
            # EKS: the one ENA the overlay names (ens6; the base takes both secondary ENAs),
            # never the primary; AKS: the one non-primary MANA VF.
            check(counts.get(("deploy/overlays/eks", "eks-x86"), {}).get(nic) == 1, "eks overlay: 1 ENA (ens6) expected")
            check(counts.get(("deploy/base", "eks-x86"), {}).get(nic) == 2, "base: 2 ENAs expected")
            check(counts.get(("deploy/overlays/aks", "aks-mana"), {}).get(nic) == 1, "aks overlay: 1 MANA VF expected")
            check(counts.get(("deploy/overlays/eks", "eks-x86"), {}).get(core) == 6, "eks-x86 has 6 isolated cores")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- chart


CHART_VALUES = {  # kustomize dir -> the chart's values for the same cloud
    "deploy/base": [],
    "deploy/overlays/eks": ["-f", os.path.join(SRC, "helm", "spinlane", "values-eks.yaml")],
    "deploy/overlays/aks": ["-f", os.path.join(SRC, "helm", "spinlane", "values-aks.yaml")],
}


def helm():
    env = os.environ.get("SPINLANE_HELM")
    if env:
        return env
    kubectl()  # get-kubectl.sh fetches helm with kubectl
    h = os.path.join(BIN, "tools", "bin", "helm")
    if not os.access(h, os.X_OK):
        h = shutil.which("helm")
        if not h:
            skip("no helm (tests/deploy/get-kubectl.sh fetches it into the build's tools/bin)")
    return h


def test_chart():
    """The kustomize manifests and the chart run the agent with the same host namespaces,
    privilege, volumes and mounts: the two install paths cannot drift apart."""
    yaml = need_yaml()
    h = helm()
    for target, values in CHART_VALUES.items():
        docs = render(target)
        # (the chart refuses values.yaml's placeholder images: test-helm's real-looking ones)
        images = ["-f", os.path.join(SRC, "tests", "helm", "values-images.yaml")]
        r = subprocess.run([h, "template", "spinlane", os.path.join(SRC, "helm", "spinlane"), "-n", "spinlane"] + images + values,
                           capture_output=True, text=True)
        if not check(r.returncode == 0, "helm template %s: exit %d: %s" % (values, r.returncode, r.stderr.strip())):
            continue
        hdocs = [d for d in yaml.safe_load_all(r.stdout) if d]
        _, kspec, kc = agent_pod(docs)
        hds = [d for d in hdocs if d.get("kind") == "DaemonSet" and
               d["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") == "node-agent"]
        if not (check(kspec is not None, "%s: no agent DaemonSet" % target) and
                check(len(hds) == 1, "helm template %s: %d agent DaemonSets, want 1" % (values, len(hds)))):
            continue
        hspec = hds[0]["spec"]["template"]["spec"]
        hc = [x for x in hspec["containers"] if x["name"] == "agent"]
        if not check(len(hc) == 1, "helm template %s: no container agent" % values):
            continue
        k, hh = pod_shape(kspec, kc), pod_shape(hspec, hc[0])
        same = True
        for key in sorted(set(k) | set(hh)):
            same &= check(k.get(key) == hh.get(key), "%s vs the chart (%s): %s differs:\n  kustomize %s\n  helm      %s"
                  % (target, " ".join(values) or "default values", key, k.get(key), hh.get(key)))
        if same:
            print("%s and helm template %s: the same agent pod shape (%d mounts, hostNetwork %s, hostPID %s)"
                  % (target, " ".join(os.path.basename(v) for v in values) or "(defaults)", len(k["mounts"]),
                     k["hostNetwork"], k["hostPID"]))


# ---------------------------------------------------------------- example


def quantity_bytes(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(q))
    if not m:
        return None
    mult = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}[m.group(2)]
    return int(m.group(1)) * mult


def test_example():
    need_agent()
    yaml = need_yaml()
    if not check(os.access(LAUNCH, os.X_OK), "spinlane-launch not built at %s" % LAUNCH):
        return
    with open(LAUNCH, "rb") as f:
        launch_strings = f.read()
    # What the device plugin advertises and hands out: from the EKS deployment's config.
    docs = render("deploy/overlays/eks")
    ds, dspec, dc = agent_pod(docs) if docs else (None, None, None)
    text = config_of(docs, dspec, dc) if ds else None
    if text is None:
        return
    cfg = json.loads(text)
    tmp = tempfile.mkdtemp(prefix="sl-deploy-")
    try:
        cfgf = os.path.join(tmp, "config.json")
        with open(cfgf, "w") as f:
            f.write(text)
        res = inventory(fixture(tmp, "eks-x86", ENA_NAMES), cfgf)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    advertised = set(res)
    threads = max((len(d.get("cpus", [])) for d in res.get("spinlane.io/isolated-core", [])), default=2)
    hp_dir = cfg.get("hugetlbfs", {}).get("mount_point", "/dev/hugepages")
    hp_size = cfg.get("hugetlbfs", {}).get("page_size", "2M")
    pod_mount = cfg.get("hugetlbfs", {}).get("pod_mount", False)

    exdir = os.path.join(SRC, "deploy", "examples")
    pods = []
    # DRA (docs/dra.md): a ResourceClaimTemplate's requests by the chart's DeviceClass
    # stand for the device plugin's resource of the same devices
    classes = {"dpdk-nic.spinlane.io": "spinlane.io/dpdk-nic", "isolated-core.spinlane.io": "spinlane.io/isolated-core"}
    templates = {}
    for name in sorted(os.listdir(exdir)):
        if name.endswith(".yaml"):
            with open(os.path.join(exdir, name)) as f:
                docs = [d for d in yaml.safe_load_all(f) if d]
            pods += [(name, d) for d in docs if d.get("kind") == "Pod"]
            for d in docs:
                if d.get("kind") == "ResourceClaimTemplate":
                    check(d["apiVersion"] == "resource.k8s.io/v1", "%s: %s is not resource.k8s.io/v1" % (name, d["metadata"]["name"]))
                    got = {}
                    for r in d["spec"]["spec"]["devices"]["requests"]:
                        ex = r.get("exactly", {})
                        check(ex.get("deviceClassName") in classes, "%s: request %s of class %s" % (name, r["name"], ex.get("deviceClassName")))
                        got[classes.get(ex.get("deviceClassName"))] = ex.get("count", 1)
                    templates[d["metadata"]["name"]] = got
    check(len(pods) >= 1, "no Pod in deploy/examples")
    check(templates, "no ResourceClaimTemplate in deploy/examples (the DRA example)")
    for name, pod in pods:
        t = "%s: pod %s" % (name, pod["metadata"]["name"])
        spec = pod["spec"]
        claimed = {}
        pod_claims = {c["name"]: c for c in spec.get("resourceClaims", [])}
        for c in pod_claims.values():
            tn = c.get("resourceClaimTemplateName")
            check(tn in templates, "%s: claim %s from template %s, not in deploy/examples" % (t, c["name"], tn))
            claimed.update(templates.get(tn, {}))
        check(spec.get("nodeSelector", {}).get("spinlane.io/node-pool") == dspec["nodeSelector"]["spinlane.io/node-pool"],
              "%s: nodeSelector does not match the agent's node pool" % t)
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        for c in spec["containers"]:
            tc = "%s container %s" % (t, c["name"])
            cmd = c.get("command", [])
            if cmd == ["spinlane-stat"]:
                # the driver's counters on /metrics (docs/observability.md): a plain sidecar
                # reading the driver's Aeron directory, Guaranteed like the rest of the pod
                drv = [x for x in spec["containers"] if x.get("command", [])[:1] == ["spinlane-launch"]]
                aeron_dir = [e["value"] for x in drv for e in x.get("env", []) if e["name"] == "AERON_DIR"]
                check(aeron_dir and "--aeron-dir=%s" % aeron_dir[0] in c.get("args", []),
                      "%s: --aeron-dir is not the driver's AERON_DIR %s: %s" % (tc, aeron_dir, c.get("args")))
                check(c["resources"].get("requests") == c["resources"].get("limits"), "%s: requests != limits" % tc)
                check(drv and c["image"] == drv[0]["image"], "%s: not the driver's image" % tc)
                check(any(m["name"] == "aeron" and m.get("readOnly") for m in c.get("volumeMounts", [])),
                      "%s: does not mount the Aeron directory read-only" % tc)
                check(pod["metadata"]["labels"].get("spinlane.io/driver-metrics") == "true",
                      "%s: the pod lacks the PodMonitor's label spinlane.io/driver-metrics" % tc)
                continue
            check(cmd[:1] == ["spinlane-launch"] and "--" in cmd, "%s: command %s does not start with spinlane-launch --" % (tc, cmd))
            req = c.get("resources", {}).get("requests", {})
            lim = c.get("resources", {}).get("limits", {})
            names = [x["name"] for x in c.get("resources", {}).get("claims", [])]
            check(sorted(names) == sorted(pod_claims), "%s: resources.claims %s, the pod's claims %s" % (tc, names, sorted(pod_claims)))
            # Guaranteed QoS with integer CPUs.
            check(req == lim, "%s: requests != limits (not Guaranteed): %s vs %s" % (tc, req, lim))
            check(re.fullmatch(r"[1-9]\d*", str(req.get("cpu", ""))) is not None, "%s: cpu %r is not an integer" % (tc, req.get("cpu")))
            check("memory" in req, "%s: no memory request" % tc)
            ext = {k for k in req if "/" in k}
            # what the container gets: extended resources, and the devices of its claim
            got = dict({k: int(req[k]) for k in ext}, **claimed)
            check(not ext & set(claimed), "%s: %s both as extended resources and through DRA" % (tc, sorted(ext & set(claimed))))
            check(set(got) <= advertised, "%s: resources %s not all advertised by the agent %s" % (tc, sorted(got), advertised))
            check(advertised <= set(got), "%s: does not ask for every spinlane resource %s" % (tc, advertised))
            for k in set(got) & advertised:
                check(got[k] <= len(res[k]), "%s: %s=%s more than the fixture node offers (%d)" % (tc, k, got[k], len(res[k])))
            cores = got.get("spinlane.io/isolated-core", 0)
            check(cores in (2, 3), "%s: isolated-core %d (the launcher wants 2 or 3)" % (tc, cores))
            if re.fullmatch(r"\d+", str(req.get("cpu", ""))):
                check(int(req["cpu"]) >= cores * threads,
                      "%s: cpu %s does not cover %d cores x %d threads" % (tc, req["cpu"], cores, threads))
            env = {e["name"]: e for e in c.get("env", [])}
            for n in env:
                if n.startswith("SPINLANE_"):
                    check(n.encode() in launch_strings, "%s: env %s is not a variable spinlane-launch reads" % (tc, n))
            uid = env.get("SPINLANE_POD_UID", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            check(uid == "metadata.uid", "%s: SPINLANE_POD_UID is not the downward-API metadata.uid" % tc)
            # Hugepages. hugetlbfs.pod_mount false (default): the pod brings an emptyDir of
            # the hugetlbfs page size where SPINLANE_HUGEPAGE_DIR points (default
            # /dev/hugepages), private to it. true: the device plugin mounts the host's
            # shared hugetlbfs at mount_point and sets SPINLANE_HUGEPAGE_DIR, so the pod
            # must mount nothing there (two mounts at one path fail container creation)
            # nor set the variable.
            mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
            medium = "HugePages-" + hp_size.replace("M", "Mi").replace("G", "Gi")
            if pod_mount:
                check(hp_dir not in mounts, "%s: mounts %s at %s, where the device plugin mounts the node's "
                      "hugetlbfs (hugetlbfs.pod_mount is true)" % (tc, mounts.get(hp_dir, {}).get("name"), hp_dir))
                check("SPINLANE_HUGEPAGE_DIR" not in env,
                      "%s: sets SPINLANE_HUGEPAGE_DIR, which the device plugin sets (hugetlbfs.pod_mount)" % tc)
            else:
                want_dir = env.get("SPINLANE_HUGEPAGE_DIR", {}).get("value", "/dev/hugepages")
                m = mounts.get(want_dir)
                if check(m is not None, "%s: nothing mounted at %s (hugetlbfs.pod_mount is false)" % (tc, want_dir)):
                    check(vols.get(m["name"], {}).get("emptyDir", {}).get("medium") == medium,
                          "%s: %s is not an emptyDir with medium %s" % (tc, want_dir, medium))
            hp_key = "hugepages-" + hp_size.replace("M", "Mi").replace("G", "Gi")
            hp = quantity_bytes(req.get(hp_key, "0"))
            mb = int(env.get("SPINLANE_DPDK_MEMORY_MB", {}).get("value", "256"))
            check(hp is not None and hp >= mb << 20, "%s: %s=%s is less than SPINLANE_DPDK_MEMORY_MB=%d" % (tc, hp_key, req.get(hp_key), mb))
            caps = set(c.get("securityContext", {}).get("capabilities", {}).get("add", []))
            # the example runs on non-metal EC2 (vfio no-IOMMU): SYS_RAWIO opens the group,
            # SYS_ADMIN reads physical addresses (IOVA as PA), IPC_LOCK for an IOMMU
            check({"IPC_LOCK", "SYS_RAWIO", "SYS_ADMIN"} <= caps,
                  "%s: capabilities %s lack IPC_LOCK/SYS_RAWIO/SYS_ADMIN" % (tc, caps))
            check(not c.get("securityContext", {}).get("privileged"), "%s: the driver must not need privileged" % tc)
            print("%s: cpu %s, %s %s, %s, env %s" % (tc, req.get("cpu"), hp_key, req.get(hp_key),
                                                      {k: got[k] for k in sorted(got)}, sorted(env)))


# ---------------------------------------------------------------- dockerfile


def dockerfile_stages(path):
    """[(base, name, [instructions...])] with line continuations joined; a FROM's ${ARG}
    is resolved to the default of the ARG given before the first FROM."""
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    stages = []
    global_args = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            parts = rest.split()
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: global_args.get(m.group(1) or m.group(2), m.group(0)),
                          parts[0])
            stages.append((base, parts[2] if len(parts) > 2 and parts[1].upper() == "AS" else None, []))
        elif stages:
            stages[-1][2].append((word.upper(), rest.strip()))
        elif word.upper() == "ARG":
            name, _, default = rest.partition("=")
            global_args[name.strip()] = default.strip()
    return stages, global_args


def apt_packages(instrs):
    pkgs = []
    for word, rest in instrs:
        if word != "RUN":
            continue
        for cmd in rest.split("&&"):
            toks = cmd.split()
            if toks[:2] == ["apt-get", "install"]:
                pkgs += [p for p in toks[2:] if not p.startswith("-")]
    return pkgs


def deb_of(path):
    r = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
    return r.stdout.split(":")[0] if r.returncode == 0 else None


# The driver image's DPDK: exactly these runtime packages of Debian 13's DPDK 24.11 (the
# libraries libspinlane_aeron.so links, the ring mempool driver, net_ena, net_mana), and
# rdma-core's libibverbs with its providers for net_mana. scripts/test-images.sh builds
# the image and proves that they are enough.
DRIVER_DPDK = {"librte-eal25", "librte-ethdev25", "librte-mbuf25", "librte-mempool25", "librte-mempool-ring25",
               "librte-net-ena25", "librte-net-mana25"}
DRIVER_RDMA = {"libibverbs1", "ibverbs-providers"}


def test_dockerfile():
    if shutil.which("apt-cache") is None or subprocess.run(["apt-cache", "show", "bash"], capture_output=True).returncode != 0:
        skip("apt-cache has no package lists here (run apt-get update)")
    with open(os.path.join(SRC, "scripts", "install-deps.sh")) as f:
        deps = f.read()
    m = re.search(r"pkgs=\(([^)]*)\)", deps)
    listed = set(m.group(1).split()) if m else set()
    check(listed, "no pkgs=( ... ) list in scripts/install-deps.sh")
    host_major = ""
    try:
        with open("/etc/debian_version") as f:
            host_major = f.read().strip().split(".")[0]
    except OSError:
        pass
    # Build packages: whatever ships the pkg-config modules the CMakeLists.txt files require
    # (the top level and every folder's), and protoc-c.
    cm = ""
    for d, dirs, files in os.walk(SRC):
        dirs[:] = [x for x in dirs if not x.startswith(("build", ".")) and x != "tests"]
        if "CMakeLists.txt" in files:
            with open(os.path.join(d, "CMakeLists.txt")) as f:
                cm += f.read()
    build_need = set()
    for mod in re.findall(r"pkg_check_modules\(\w+ REQUIRED IMPORTED_TARGET (\S+)\)", cm):
        r = subprocess.run(["pkg-config", "--variable=pcfiledir", mod], capture_output=True, text=True)
        if r.returncode == 0:
            deb = deb_of(os.path.join(r.stdout.strip(), mod + ".pc"))
            if deb:
                build_need.add(deb.split()[0])
    protoc = shutil.which("protoc-c")
    if protoc and deb_of(protoc):
        build_need.add(deb_of(protoc))
    print("build needs (from this machine's pkg-config/dpkg): %s" % sorted(build_need))
    # What debian:12(-slim) already has: apt and everything it depends on.
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                        "--no-breaks", "--no-replaces", "--no-enhances", "apt"], capture_output=True, text=True)
    in_base = {l.strip().split(":")[-1].strip() for l in r.stdout.splitlines()}
    # Per image: its Debian, the cmake install component, the programs it ships (the
    # ENTRYPOINT first; all in /usr/local/bin: spinlane-agent execs spinlane-agent-run from
    # its own directory, spinlane-launch finds the bindings in its ../lib) and the
    # libraries in /usr/local/lib.
    images = {"agent.Dockerfile": ("12", "agent", [("spinlane-agent", AGENT), ("spinlane-agent-run", AGENT_RUN)], []),
              "driver.Dockerfile": ("13", "driver", [("spinlane-launch", LAUNCH), ("spinlane-datapath", DATAPATH),
                                                    ("aeronmd", None)],
                                    ["libspinlane_aeron.so", "libaeron_driver.so", "libaeron.so"])}
    for df, (major, component, progs, libs) in images.items():
        path = os.path.join(SRC, "deploy", df)
        t = "deploy/" + df
        stages, args = dockerfile_stages(path)
        if not check(len(stages) == 2, "%s: expected a build and a runtime stage, got %d" % (t, len(stages))):
            continue
        (b_base, b_name, b_ins), (r_base, _, r_ins) = stages
        # the base is a build argument (a builder with no registry passes its own), by
        # default the official Debian image
        check(args.get("BASE") == "debian:%s-slim" % major and b_base == r_base == args.get("BASE"),
              "%s: both stages must be FROM ${BASE}, ARG BASE=debian:%s-slim (got %s, %s, %s)"
              % (t, major, b_base, r_base, args))
        same_suite = major == host_major
        for pkg in apt_packages(b_ins) + apt_packages(r_ins):
            if pkg in listed or not same_suite:
                continue
            r = subprocess.run(["apt-cache", "show", "--no-all-versions", pkg], capture_output=True, text=True)
            check(r.returncode == 0 and ("Package: " + pkg) in r.stdout, "%s: %s is not a Debian package" % (t, pkg))
        if same_suite:
            missing = build_need - set(apt_packages(b_ins))
            if component == "agent":  # the agent links no DPDK
                missing -= {"libdpdk-dev", "dpdk-dev"}
            check(not missing, "%s: build stage lacks %s" % (t, sorted(missing)))
        rt_pkgs = apt_packages(r_ins)
        if component == "driver":
            check("libdpdk-dev" in apt_packages(b_ins), "%s: the build stage lacks libdpdk-dev" % t)
            dpdk = {p for p in rt_pkgs if p.startswith(("librte-", "dpdk", "libdpdk"))}
            check(dpdk == DRIVER_DPDK, "%s: the runtime DPDK packages are %s, not exactly %s"
                  % (t, sorted(dpdk), sorted(DRIVER_DPDK)))
            check(DRIVER_RDMA <= set(rt_pkgs), "%s: the runtime stage lacks %s (net_mana)" % (t, sorted(DRIVER_RDMA)))
        else:
            check(not [p for p in rt_pkgs + apt_packages(b_ins) if "dpdk" in p or p.startswith("librte")],
                  "%s: the agent image installs DPDK" % t)
        runs = " ".join(rest for w, rest in b_ins if w == "RUN")
        check(not re.search(r"(git clone|curl|wget)[^&]*aeron", runs + " ".join(r for _, r in r_ins), re.I),
              "%s: fetches Aeron itself (the build's pin does: cmake/aeron.cmake)" % t)
        check("cmake -S . -B build" in runs, "%s: does not configure with cmake -S . -B build" % t)
        check(re.search(r"cmake --install build --component %s --prefix /usr/local" % component, runs),
              "%s: does not install the %s component into /usr/local" % (t, component))
        copies = [rest.split()[1:] for w, rest in r_ins if w == "COPY" and rest.startswith("--from=" + (b_name or ""))]
        copied = {}
        for cp in copies:
            for src in cp[:-1]:
                copied[src] = cp[-1]
        entry = [json.loads(rest) for w, rest in r_ins if w == "ENTRYPOINT"]
        for i, (prog, built) in enumerate(progs):
            if built is not None:
                check(re.search(r"--target(\s+[\w-]+)*\s+%s(\s|$)" % re.escape(prog), runs),
                      "%s: does not build %s with cmake" % (t, prog))
            src = "/usr/local/bin/" + prog
            if not check(copied.get(src) in ("/usr/local/bin/", "/usr/local/bin/" + prog),
                         "%s: %s is not copied from the build stage to /usr/local/bin/ (%s)" % (t, src, copied)):
                continue
            if i == 0:
                check(entry and entry[-1][0] == src, "%s: ENTRYPOINT %s is not %s" % (t, entry, src))
            # Runtime libraries: every shared library the built binary links comes from a
            # package the runtime stage installs (or its dependencies, or the base image);
            # only where this machine runs the image's Debian (the image test checks all).
            if same_suite and built and os.access(built, os.X_OK):
                r = subprocess.run(["ldd", built], capture_output=True, text=True)
                libs_of = re.findall(r"=> (/\S+)", r.stdout)
                need = {deb_of(p) for p in libs_of} - {None}
                need -= {"libasan8", "libubsan1"}  # the sanitizer build's, not the image's
                # a build with shared gRPC links what the image's static gRPC does not
                need -= {n for n in need if n.startswith(("libgrpc", "libabsl", "libre2", "libupb", "libc-ares",
                                                          "libssl", "libcares", "zlib"))}
                dep = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                                      "--no-breaks", "--no-replaces", "--no-enhances"] + rt_pkgs, capture_output=True, text=True)
                have = set(rt_pkgs) | {l.strip().split(":")[-1].strip() for l in dep.stdout.splitlines()}
                for n in sorted(need - have - in_base):
                    check(False, "%s: %s links a library from %s, which the runtime stage does not install" % (t, prog, n))
                print("%s: runtime packages %s cover %s's %s" % (t, rt_pkgs, prog, sorted(need)))
        for lib in libs:
            check(copied.get("/usr/local/lib/" + lib) == "/usr/local/lib/",
                  "%s: /usr/local/lib/%s is not copied from the build stage to /usr/local/lib/" % (t, lib))
    # The bake file: both images, both platforms, the base images as arguments.
    with open(os.path.join(SRC, "deploy", "docker-bake.hcl")) as f:
        bake = f.read()
    check(re.search(r'platforms\s*=\s*\["linux/amd64",\s*"linux/arm64"\]', bake),
          "docker-bake.hcl: not built for linux/amd64 and linux/arm64")
    for target, df in (("agent", "agent.Dockerfile"), ("driver", "driver.Dockerfile")):
        m = re.search(r'target "%s" \{(.*?)\n\}' % target, bake, re.S)
        if check(m, "docker-bake.hcl: no target %s" % target):
            check('dockerfile = "deploy/%s"' % df in m.group(1) and re.search(r"\bBASE\s*=", m.group(1))
                  and "contexts" not in m.group(1),
                  "docker-bake.hcl: target %s does not build deploy/%s from the BASE argument alone" % (target, df))
    # The DaemonSet runs the agent at the path the image puts it.
    with open(os.path.join(SRC, "deploy", "base", "daemonset.yaml")) as f:
        check("/usr/local/bin/spinlane-agent" in f.read(), "daemonset.yaml does not run /usr/local/bin/spinlane-agent")


def main(argv):
    tests = {"render": test_render, "config": test_config, "example": test_example, "dockerfile": test_dockerfile, "probes": test_probes,
             "chart": test_chart}
    if len(argv) != 2 or argv[1] not in tests:
        print("usage: test-deploy.py %s" % "|".join(tests), file=sys.stderr)
        return 2
    tests[argv[1]]()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
