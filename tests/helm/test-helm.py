#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of helm/spinlane with real helm and kubectl (the npm package tests/deploy/get-kubectl.sh fetches).

    test-helm.py lint|render|schema|fail|policy|config|readme|notes|docs|images|kubeschema|dra

Exit 0 pass, 1 fail, 77 skipped (reason printed, decided before anything runs): only when
helm/kubectl cannot be had (kubeschema: also when node or the npm package
kubernetes-models cannot be had). Environment: SPINLANE_SOURCE_DIR, SPINLANE_BINARY_DIR
(set by ctest), optional SPINLANE_HELM / SPINLANE_KUBECTL.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SPINLANE_BINARY_DIR") or os.path.join(SRC, "build")
CHART = os.path.join(SRC, "helm", "spinlane")
AGENT = os.path.join(BIN, "agent", "spinlane-agent")
# Real-looking repositories: the chart refuses values.yaml's placeholders
# (registry.example.com/...), so every render here starts from this file (later -f and
# --set win over it).
IMAGES = ["-f", os.path.join(SRC, "tests", "helm", "values-images.yaml")]
PRESETS = {"default": [], "eks": ["-f", os.path.join(CHART, "values-eks.yaml")],
           "aks": ["-f", os.path.join(CHART, "values-aks.yaml")]}

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def tools():
    """(helm, kubectl), fetched into BIN/tools when absent; skip when they cannot be had."""
    h, k = os.environ.get("SPINLANE_HELM"), os.environ.get("SPINLANE_KUBECTL")
    if h and k:
        return h, k
    d = os.path.join(BIN, "tools")
    if not (os.access(os.path.join(d, "bin", "helm"), os.X_OK) and os.access(os.path.join(d, "bin", "kubectl"), os.X_OK)):
        r = subprocess.run(["bash", os.path.join(SRC, "tests", "deploy", "get-kubectl.sh"), d], capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            skip("no helm/kubectl: " + r.stderr.strip())
    return h or os.path.join(d, "bin", "helm"), k or os.path.join(d, "bin", "kubectl")


def need_yaml():
    try:
        import yaml
        return yaml
    except ImportError:
        skip("python3-yaml is not installed")


HELM = KUBECTL = None


def helm(*args):
    """helm ARGS; template, lint and install get IMAGES first."""
    args = list(args)
    if args and args[0] in ("template", "lint", "install"):
        args = args[:1] + IMAGES + args[1:]
    return subprocess.run([HELM] + args, capture_output=True, text=True)


def pods(docs):
    """(name, pod metadata, pod spec) of every Pod and every Deployment's pod template."""
    out = []
    for d in docs or []:
        if d.get("kind") == "Pod":
            out.append(("Pod " + d["metadata"]["name"], d["metadata"], d["spec"]))
        elif d.get("kind") == "Deployment":
            out.append(("Deployment " + d["metadata"]["name"], d["spec"]["template"]["metadata"], d["spec"]["template"]["spec"]))
    return out


def template(*args, release="spinlane"):
    """Rendered objects (duplicate keys refused), or None and a failure."""
    yaml = need_yaml()
    r = helm("template", release, CHART, "-n", "spinlane", *args)
    if not check(r.returncode == 0, "helm template %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip())):
        return None

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        keys = [loader.construct_object(k) for k, _ in node.value]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        check(not dup, "helm template %s: duplicate keys %s" % (" ".join(args), dup))
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return [d for d in yaml.load_all(r.stdout, Loader=Strict) if d]


def objs(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def pod_specs(docs):
    """(name, pod spec) of every pod template and Pod."""
    out = []
    for d in docs:
        if d["kind"] in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
            out.append(("%s %s" % (d["kind"], d["metadata"]["name"]), d["spec"]["template"]["spec"]))
        elif d["kind"] == "Pod":
            out.append(("Pod %s" % d["metadata"]["name"], d["spec"]))
    return out


def containers(spec):
    return spec.get("initContainers", []) + spec.get("containers", [])


def values_file(tmp, name, text):
    p = os.path.join(tmp, name + ".yaml")
    with open(p, "w") as f:
        f.write(text)
    return p


# ---------------------------------------------------------------- lint


def test_lint():
    for name, args in PRESETS.items():
        r = helm("lint", "--strict", CHART, *args)
        print("helm lint --strict (%s): exit %d" % (name, r.returncode))
        check(r.returncode == 0, "helm lint --strict %s: %s%s" % (name, r.stdout, r.stderr))
    # lint can fail: a value the schema refuses
    r = helm("lint", "--strict", CHART, "--set", "agent.logFormat=xml")
    check(r.returncode != 0, "helm lint --strict accepted agent.logFormat=xml")
    v = helm("version", "--short")
    print("helm %s" % v.stdout.strip())


# ---------------------------------------------------------------- render


def test_render():
    for name, args in PRESETS.items():
        for extra in ([], ["--set", "example.enabled=true"], ["--set", "restore=true"]):
            docs = template(*(args + extra))
            if docs is None:
                continue
            t = "%s %s" % (name, " ".join(extra))
            kinds = sorted(d["kind"] for d in docs)
            print("%s: %s" % (t, ", ".join(kinds)))
            for d in docs:
                labels = d["metadata"].get("labels", {})
                for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                          "app.kubernetes.io/managed-by", "helm.sh/chart"):
                    check(k in labels, "%s: %s %s lacks label %s" % (t, d["kind"], d["metadata"]["name"], k))
                if d["kind"] in ("Role", "RoleBinding"):  # the Events' namespace (test_node_policy.py)
                    check(d["metadata"].get("namespace") == "default", "%s: %s not in default" % (t, d["metadata"]["name"]))
                elif d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy",
                                       "ValidatingAdmissionPolicyBinding"):
                    check(d["metadata"].get("namespace") == "spinlane", "%s: %s not in the release namespace" % (t, d["metadata"]["name"]))
            ds = objs(docs, "DaemonSet")
            if not check(len(ds) == 1, "%s: %d DaemonSets" % (t, len(ds))):
                continue
            ds = ds[0]
            check(ds["metadata"]["name"] == "spinlane-agent", "%s: DaemonSet named %s" % (t, ds["metadata"]["name"]))
            sel = ds["spec"]["selector"]["matchLabels"]
            tl = ds["spec"]["template"]["metadata"]["labels"]
            check(all(tl.get(k) == v for k, v in sel.items()), "%s: selector does not match the template" % t)
            spec = ds["spec"]["template"]["spec"]
            check(spec.get("priorityClassName") == "system-node-critical", "%s: priorityClassName" % t)
            ann = ds["spec"]["template"]["metadata"].get("annotations", {})
            check(re.fullmatch(r"[0-9a-f]{16}", ann.get("spinlane.io/restart-config-hash", "")) is not None,
                  "%s: no restart-config-hash annotation" % t)
            tests = [d for d in docs if d["kind"] == "Pod" and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
            has_test = bool(tests)
            for d in tests:
                # hook-succeeded would delete a passed test's pod before `helm test --logs`
                # reads its logs (helm/helm#9098): only the next run replaces it
                pol = d["metadata"]["annotations"].get("helm.sh/hook-delete-policy", "")
                check(pol == "before-hook-creation", "%s: test pod hook-delete-policy %r, want before-hook-creation" % (t, pol))
            examples = [d for d in docs if d["metadata"]["name"].endswith("-example")]
            has_example = bool(examples)
            for d in examples:
                # a Deployment of one: a bare Pod's spec is immutable, so an upgrade that
                # changes it fails
                check(d["kind"] == "Deployment" and d["spec"].get("replicas") == 1, "%s: example is a %s, not a Deployment of 1" % (t, d["kind"]))
                sel = d["spec"]["selector"]["matchLabels"]
                check(all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items()),
                      "%s: example selector does not match its pods" % t)
            if "restore=true" in extra:
                check([c["name"] for c in spec.get("initContainers", [])] == ["restore"], "%s: no restore init container" % t)
                rc = spec["initContainers"][0]
                check(rc["command"] + rc["args"] == ["/usr/local/bin/spinlane-agent", "restore", "--root", "/host"],
                      "%s: restore command %s" % (t, rc["command"] + rc["args"]))
                mounts = {m["mountPath"] for m in rc["volumeMounts"]}
                check({"/host/sys", "/host/var/lib/spinlane"} <= mounts, "%s: restore lacks /host/sys or the state" % t)
                check(not has_test and not has_example, "%s: test/example pods rendered in restore mode" % t)
                check(ann.get("spinlane.io/mode") == "restore", "%s: mode annotation" % t)
            else:
                c = spec["containers"][0]
                argv = c["command"] + c["args"]
                check(argv[:6] == ["/usr/local/bin/spinlane-agent", "run", "--root", "/host", "--config", "/etc/spinlane/config.json"],
                      "%s: agent command %s" % (t, argv))
                check(has_test, "%s: no helm test pod" % t)
                check(has_example == ("example.enabled=true" in extra), "%s: example pod rendered: %s" % (t, has_example))
                for p in ("startupProbe", "livenessProbe", "readinessProbe"):
                    check(c.get(p, {}).get("httpGet", {}).get("path") in ("/healthz", "/readyz"), "%s: %s" % (t, p))
                check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", "%s: readiness not on /readyz" % t)
    # image: tag defaults to appVersion, a digest wins, a tag overrides
    import yaml
    with open(os.path.join(CHART, "Chart.yaml")) as f:
        app = yaml.safe_load(f)["appVersion"]
    for args, want in ((["--set", "image.repository=r.example/a"], "r.example/a:" + app),
                       (["--set", "image.repository=r.example/a", "--set", "image.tag=1.2.3"], "r.example/a:1.2.3"),
                       (["--set", "image.repository=r.example/a", "--set", "image.digest=sha256:" + "ab" * 32], "r.example/a@sha256:" + "ab" * 32)):
        docs = template(*args)
        if docs:
            img = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]["containers"][0]["image"]
            check(img == want, "image %s with %s, expected %s" % (img, args, want))
    # OnDelete: no rollingUpdate block; a percentage maxUnavailable passes through
    docs = template("--set", "updateStrategy.type=OnDelete")
    if docs:
        us = objs(docs, "DaemonSet")[0]["spec"]["updateStrategy"]
        check(us == {"type": "OnDelete"}, "OnDelete strategy rendered as %s" % us)
    docs = template("--set", "updateStrategy.maxUnavailable=25%")
    if docs:
        check(objs(docs, "DaemonSet")[0]["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == "25%", "maxUnavailable 25%")
    # the restart hash: a live key leaves it, a start-only key changes it
    def hash_of(*a):
        d = template(*a)
        return objs(d, "DaemonSet")[0]["spec"]["template"]["metadata"]["annotations"]["spinlane.io/restart-config-hash"] if d else None
    base = hash_of()
    check(hash_of("--set", "config.nics.max=2") == base, "a live key (nics.max) changed the restart hash")
    check(hash_of("--set", "config.tuning.irq_core=1") == base, "a live key (tuning.irq_core) changed the restart hash")
    for k in ("config.resource_prefix=example.com", "config.hugetlbfs.pod_mount=true", "config.cdi.enabled=true",
              "config.cores.cpus=2-5", "config.hugetlbfs.mount_point=/dev/hp2"):
        check(hash_of("--set", k) != base, "a start-only key (%s) did not change the restart hash" % k)
    # per-node configs: one DaemonSet each, the main one keeps off those nodes
    tmp = tempfile.mkdtemp(prefix="sl-helm-")
    try:
        vf = values_file(tmp, "nodecfg", "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
                         "      nodeSelectorTerms:\n      - matchExpressions:\n        - {key: zone, operator: In, values: [a]}\n"
                         "nodeConfigs:\n  big:\n    nics: {max: 2}\n    hugepages: [{page_size: 2M, per_node: {'0': 2048}}]\n"
                         "  small:\n    cores: {cpus: '2-3'}\n")
        docs = template("-f", vf)
        if docs:
            byname = {d["metadata"]["name"]: d for d in objs(docs, "DaemonSet")}
            check(sorted(byname) == ["spinlane-agent", "spinlane-agent-big", "spinlane-agent-small"], "per-node DaemonSets %s" % sorted(byname))
            main = byname.get("spinlane-agent")
            if main:
                terms = main["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                check(terms == [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                                                      {"key": "spinlane.io/config", "operator": "NotIn", "values": ["big", "small"]}]}],
                      "main DaemonSet affinity %s" % terms)
            big = byname.get("spinlane-agent-big")
            if big:
                s = big["spec"]["template"]["spec"]
                check(s["nodeSelector"].get("spinlane.io/config") == "big", "big: nodeSelector %s" % s["nodeSelector"])
                check("/etc/spinlane/node-big.json" in s["containers"][0]["args"], "big: --config %s" % s["containers"][0]["args"])
                sels = [tuple(sorted(d["spec"]["selector"]["matchLabels"].items())) for d in byname.values()]
                check(len(set(sels)) == 3, "per-node DaemonSets share a selector: %s" % sels)
            cm = objs(docs, "ConfigMap")[0]["data"]
            check(sorted(cm) == ["config.json", "node-big.json", "node-small.json"], "ConfigMap keys %s" % sorted(cm))
            big_cfg = json.loads(cm.get("node-big.json", "{}"))
            check(big_cfg.get("nics", {}).get("max") == 2 and big_cfg["nics"].get("kinds") == ["ena", "mana"],
                  "node-big.json not merged onto config: %s" % big_cfg.get("nics"))
            check(big_cfg.get("hugepages") == [{"page_size": "2M", "per_node": {"0": 2048}}], "node-big.json hugepages %s" % big_cfg.get("hugepages"))
            check(json.loads(cm.get("node-small.json", "{}")).get("cores") == {"cpus": "2-3"}, "node-small.json cores")
            check("cores" not in json.loads(cm["config.json"]), "config.json has an empty cores.cpus")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # /metrics on loopback by default: no Service to scrape, probes on 127.0.0.1
    docs = template()
    if docs:
        check(not objs(docs, "Service"), "a metrics Service rendered though /metrics is on 127.0.0.1 only")
        c = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]["containers"]
        check([x["name"] for x in c] == ["agent"], "no sidecar by default: %s" % [x["name"] for x in c])
        a = c[0]["args"]
        check(a[a.index("--metrics-bind-address") + 1] == "127.0.0.1:9470" and
              a[a.index("--health-probe-bind-address") + 1] == "127.0.0.1:9471", "default bind addresses %s" % a)
        for p in ("startupProbe", "livenessProbe", "readinessProbe"):
            g = c[0][p]["httpGet"]
            check(g.get("host") == "127.0.0.1" and g.get("port") == "probes", "%s on 127.0.0.1:probes: %s" % (p, g))
    # the authenticated way in: kube-rbac-proxy upstream of the agent's loopback port
    docs = template("--set", "metrics.kubeRbacProxy.enabled=true")
    if docs:
        c = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]["containers"]
        px = [x for x in c if x["name"] == "kube-rbac-proxy"]
        if check(len(px) == 1, "the kube-rbac-proxy sidecar rendered"):
            check(px[0]["args"] == ["--secure-listen-address=:9443", "--upstream=http://127.0.0.1:9470/",
                                    "--allow-paths=/metrics"], "kube-rbac-proxy args %s" % px[0]["args"])
            check(px[0]["ports"][0]["name"] == "https-metrics", "kube-rbac-proxy port")
        svc = objs(docs, "Service")
        check(len(svc) == 1 and svc[0]["spec"]["ports"][0]["targetPort"] == "https-metrics", "the Service targets the proxy")
        cr = [d for d in objs(docs, "ClusterRole") if d["metadata"]["name"].endswith("-metrics-auth")]
        check(len(cr) == 1 and {r["resources"][0] for r in cr[0]["rules"]} == {"tokenreviews", "subjectaccessreviews"},
              "the proxy's TokenReview/SubjectAccessReview ClusterRole")
    docs = template("--set", "metrics.bindAddress=", "--set", "metrics.serviceMonitor.enabled=true")
    if docs:
        a = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]["containers"][0]["args"]
        check(a[a.index("--metrics-bind-address") + 1] == ":9470", "bindAddress \"\": every address %s" % a)
        check(objs(docs, "ServiceMonitor")[0]["spec"]["endpoints"][0]["port"] == "metrics", "plain ServiceMonitor port")
    # the ServiceMonitor
    docs = template("--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.labels.release=prom",
                    "--set", "metrics.kubeRbacProxy.enabled=true")
    if docs:
        sm = objs(docs, "ServiceMonitor")
        svc = objs(docs, "Service")
        if check(len(sm) == 1 and len(svc) == 1, "ServiceMonitor/Service not rendered"):
            sl = svc[0]["metadata"]["labels"]
            check(all(sl.get(k) == v for k, v in sm[0]["spec"]["selector"]["matchLabels"].items()), "ServiceMonitor does not select the Service")
            check(sm[0]["metadata"]["labels"].get("release") == "prom", "ServiceMonitor labels")
            check(sm[0]["spec"]["endpoints"][0]["port"] == svc[0]["spec"]["ports"][0]["name"], "ServiceMonitor port name")
            check(sm[0]["spec"]["endpoints"][0].get("scheme") == "https", "ServiceMonitor scrapes the proxy over https")
            ds = objs(docs, "DaemonSet")[0]["spec"]["template"]
            check(all(ds["metadata"]["labels"].get(k) == v for k, v in svc[0]["spec"]["selector"].items()), "Service does not select the agent pods")


# ---------------------------------------------------------------- schema

# (what, helm args, text the error must contain): each one value the schema must refuse.
BAD = [
    ("unknown top-level key", ["--set", "bogus=1"], "bogus"),
    ("unknown config key", ["--set", "config.nics.kind=ena"], "kind"),
    ("unknown agent key", ["--set", "agent.hostPID=true"], "hostPID"),
    ("preset", ["--set", "preset=gke"], "/preset"),
    ("resource_prefix not a DNS subdomain", ["--set", "config.resource_prefix=Spin_Lane"], "/config/resource_prefix"),
    ("nics.kinds value", ["--set", "config.nics.kinds={ena,ixgbe}"], "/config/nics/kinds"),
    ("nics.kinds empty", ["--set-json", "config.nics.kinds=[]"], "/config/nics/kinds"),
    ("nics.ids format", ["--set", "config.nics.ids={1d0f-ec20}"], "/config/nics/ids"),
    ("nics.pci format", ["--set", "config.nics.pci={00:06.0}"], "/config/nics/pci"),
    ("nics.interfaces too long", ["--set", "config.nics.interfaces={abcdefghijklmnop}"], "/config/nics/interfaces"),
    ("nics.interfaces with a slash", ["--set", "config.nics.interfaces={a/b}"], "/config/nics/interfaces"),
    ("nics.max range", ["--set", "config.nics.max=257"], "/config/nics/max"),
    ("nics.max type", ["--set", "config.nics.max=two"], "/config/nics/max"),
    ("binding.ena", ["--set", "config.binding.ena=uio_pci_generic"], "/config/binding/ena"),
    ("binding.mana_netdev_down type", ["--set-string", "config.binding.mana_netdev_down=yes"], "/config/binding/mana_netdev_down"),
    ("hugepages page_size", ["--set-json", 'config.hugepages=[{"page_size":"2X","per_node":{"0":1}}]'], "/config/hugepages/0/page_size"),
    ("hugepages NUMA node id", ["--set-json", 'config.hugepages=[{"page_size":"2M","per_node":{"64":1}}]'], "/config/hugepages/0/per_node"),
    ("hugepages count", ["--set-json", 'config.hugepages=[{"page_size":"2M","per_node":{"0":-1}}]'], "/config/hugepages/0/per_node"),
    ("hugepages too many pages", ["--set-json", 'config.hugepages=[{"page_size":"2M","per_node":{"0":1048577}}]'], "/config/hugepages/0/per_node"),
    ("hugepages without per_node", ["--set-json", 'config.hugepages=[{"page_size":"2M"}]'], "per_node"),
    ("hugepages more than 4 sizes", ["--set-json", 'config.hugepages=' + json.dumps([{"page_size": s, "per_node": {"0": 1}} for s in ("2M", "1G", "64kB", "32M", "16M")])], "/config/hugepages"),
    ("hugetlbfs.mount_point outside /dev", ["--set", "config.hugetlbfs.mount_point=/mnt/huge"], "/config/hugetlbfs/mount_point"),
    ("hugetlbfs.mount type", ["--set-string", "config.hugetlbfs.mount=true"], "/config/hugetlbfs/mount"),
    ("cores.cpus", ["--set", "config.cores.cpus=two"], "/config/cores/cpus"),
    ("tuning.irq_core range", ["--set", "config.tuning.irq_core=4096"], "/config/tuning/irq_core"),
    ("tuning.irq_core type", ["--set", "config.tuning.irq_core=first"], "/config/tuning/irq_core"),
    ("cdi.spec_dir relative", ["--set", "config.cdi.spec_dir=var/run/cdi"], "/config/cdi/spec_dir"),
    ("cdi.spec_dir with ..", ["--set", "config.cdi.spec_dir=/var/../etc"], "/config/cdi/spec_dir"),
    ("addresses.sources value", ["--set", "config.addresses.sources={dhcp}"], "/config/addresses/sources"),
    ("addresses.sources twice", ["--set", "config.addresses.sources={static,static}"], "/config/addresses/sources"),
    ("addresses.static without pci/mac", ["--set-json", 'config.addresses.static=[{"ipv4":"10.0.1.2/24"}]'], "/config/addresses/static/0"),
    ("addresses.static ipv4", ["--set-json", 'config.addresses.static=[{"pci":"0000:00:06.0","ipv4":"10.0.1.256/24"}]'], "/config/addresses/static/0/ipv4"),
    ("addresses.static gateway", ["--set-json", 'config.addresses.static=[{"mac":"0a:00:00:00:00:01","ipv4":"10.0.1.2/24","gateway":"10.0.1"}]'], "/config/addresses/static/0/gateway"),
    ("addresses.static mac", ["--set-json", 'config.addresses.static=[{"mac":"0a:00:00:00:01","ipv4":"10.0.1.2/24"}]'], "/config/addresses/static/0/mac"),
    ("nodeConfigs name", ["--set", "nodeConfigs.Big.nics.max=1"], "'Big' does not match pattern"),
    ("nodeConfigs unknown key", ["--set", "nodeConfigs.big.nics.kind=ena"], "/nodeConfigs/big/nics"),
    ("image tag latest", ["--set", "image.tag=latest"], "/image/tag"),
    ("image digest", ["--set", "image.digest=sha256:abc"], "/image/digest"),
    ("image pullPolicy", ["--set", "image.pullPolicy=Sometimes"], "/image/pullPolicy"),
    ("driverImage tag latest", ["--set", "driverImage.tag=latest"], "/driverImage/tag"),
    ("imagePullSecrets entry", ["--set-json", 'imagePullSecrets=[{"secret":"x"}]'], "/imagePullSecrets/0"),
    ("agent.metricsPort", ["--set", "agent.metricsPort=70000"], "/agent/metricsPort"),
    ("metrics.bindAddress", ["--set", "metrics.bindAddress=0.0.0.0"], "/metrics/bindAddress"),
    ("metrics.probePort", ["--set", "metrics.probePort=0"], "/metrics/probePort"),
    ("metrics.kubeRbacProxy.port", ["--set", "metrics.kubeRbacProxy.port=70000"], "/metrics/kubeRbacProxy/port"),
    ("agent.logFormat", ["--set", "agent.logFormat=xml"], "/agent/logFormat"),
    ("agent.resources unknown", ["--set", "agent.resources.requests.gpu=1"], "/agent/resources/requests"),
    ("agent.resources quantity", ["--set", "agent.resources.limits.memory=lots"], "/agent/resources/limits/memory"),
    ("agent.terminationGracePeriodSeconds", ["--set", "agent.terminationGracePeriodSeconds=1"], "/agent/terminationGracePeriodSeconds"),
    ("agent.priorityClassName empty", ["--set", "agent.priorityClassName="], "/agent/priorityClassName"),
    ("updateStrategy.type", ["--set", "updateStrategy.type=Recreate"], "/updateStrategy/type"),
    ("updateStrategy.maxUnavailable 0", ["--set", "updateStrategy.maxUnavailable=0"], "/updateStrategy/maxUnavailable"),
    ("updateStrategy.maxUnavailable percent", ["--set", "updateStrategy.maxUnavailable=150%"], "/updateStrategy/maxUnavailable"),
    ("nodeSelector value type", ["--set", "nodeSelector.a=1"], "/nodeSelector"),
    ("affinity key", ["--set", "affinity.nodeAfinity.x=1"], "/affinity"),
    ("toleration operator", ["--set-json", 'tolerations=[{"key":"a","operator":"In"}]'], "/tolerations/0/operator"),
    ("serviceAccount.create type", ["--set-string", "serviceAccount.create=no"], "/serviceAccount/create"),
    ("rbac.create type", ["--set-string", "rbac.create=no"], "/rbac/create"),
    ("serviceMonitor.interval", ["--set", "metrics.serviceMonitor.interval=30"], "/metrics/serviceMonitor/interval"),
    ("restore type", ["--set-string", "restore=yes"], "/restore"),
    ("test.isolatedCores", ["--set", "test.isolatedCores=1"], "/test/isolatedCores"),
    ("test.cpu fractional", ["--set", "test.cpu=3.5"], "/test/cpu"),
    ("test.hugepages2Mi", ["--set", "test.hugepages2Mi=512X"], "/test/hugepages2Mi"),
    ("example.appImage latest", ["--set", "example.appImage=r.example/app:latest"], "/example/appImage"),
    ("example.appImage untagged", ["--set", "example.appImage=r.example/app"], "/example/appImage"),
    ("example.dpdkMemoryMB", ["--set", "example.dpdkMemoryMB=1"], "/example/dpdkMemoryMB"),
    ("example.appCommand empty", ["--set-json", "example.appCommand=[]"], "/example/appCommand"),
    ("example.isolatedCores", ["--set", "example.isolatedCores=4"], "/example/isolatedCores"),
    ("example.appCpu fractional", ["--set", "example.appCpu=0.5"], "/example/appCpu"),
    ("example.aeronDirSize", ["--set", "example.aeronDirSize=lots"], "/example/aeronDirSize"),
    ("nics.ids more than 64", ["--set-json", "config.nics.ids=" + json.dumps(["1d0f:ec20"] * 65)], "/config/nics/ids"),
    ("nics.kinds twice", ["--set", "config.nics.kinds={ena,ena}"], "/config/nics/kinds"),
    ("addresses.static more than 64", ["--set-json", "config.addresses.static=" + json.dumps(
        [{"pci": "0000:00:06.0", "ipv4": "10.0.1.%d/24" % (i + 1)} for i in range(65)])], "/config/addresses/static"),
    ("addresses.static unknown key", ["--set-json", 'config.addresses.static=[{"pci":"0000:00:06.0","ipv4":"10.0.1.2/24","dns":"x"}]'], "/config/addresses/static/0"),
    ("addresses.static prefix 0", ["--set-json", 'config.addresses.static=[{"pci":"0000:00:06.0","ipv4":"10.0.1.2/0"}]'], "/config/addresses/static/0/ipv4"),
    ("hugetlbfs.page_size", ["--set", "config.hugetlbfs.page_size=3Q"], "/config/hugetlbfs/page_size"),
    ("cdi.enabled type", ["--set-string", "config.cdi.enabled=on"], "/config/cdi/enabled"),
    ("tuning.reapply_on_reset type", ["--set-string", "config.tuning.reapply_on_reset=1"], "/config/tuning/reapply_on_reset"),
    ("resource_prefix too long", ["--set", "config.resource_prefix=" + "a" * 64], "/config/resource_prefix"),
    ("nodeConfigs more than 16", ["--set-json", "nodeConfigs=" + json.dumps({"n%d" % i: {} for i in range(17)})], "/nodeConfigs"),
    ("fullnameOverride", ["--set", "fullnameOverride=Spin_Lane"], "/fullnameOverride"),
    ("nameOverride", ["--set", "nameOverride=-x"], "/nameOverride"),
    ("serviceAccount.name", ["--set", "serviceAccount.name=Bad_Name"], "/serviceAccount/name"),
    ("podLabels value too long", ["--set", "agent.podLabels.a=" + "x" * 64], "/agent/podLabels"),
    ("podAnnotations value type", ["--set", "agent.podAnnotations.a=1"], "/agent/podAnnotations"),
    ("toleration effect", ["--set-json", 'tolerations=[{"key":"a","operator":"Exists","effect":"NoRun"}]'], "/tolerations/0/effect"),
    ("toleration unknown key", ["--set-json", 'tolerations=[{"key":"a","operator":"Exists","tolerance":1}]'], "/tolerations/0"),
    ("serviceMonitor.scrapeTimeout", ["--set", "metrics.serviceMonitor.scrapeTimeout=ten"], "/metrics/serviceMonitor/scrapeTimeout"),
    ("serviceMonitor.labels value type", ["--set", "metrics.serviceMonitor.labels.a=1"], "/metrics/serviceMonitor/labels"),
    ("metrics.service.enabled type", ["--set-string", "metrics.service.enabled=yes"], "/metrics/service/enabled"),
    ("driverImage.digest", ["--set", "driverImage.digest=sha1:ab"], "/driverImage/digest"),
    ("driverImage.repository uppercase", ["--set", "driverImage.repository=Registry/Driver"], "/driverImage/repository"),
    ("test.enabled type", ["--set-string", "test.enabled=no"], "/test/enabled"),
    ("test.memory", ["--set", "test.memory=1GB"], "/test/memory"),
]


def test_schema():
    # the baseline renders: each failure below is the one value's doing
    check(template() is not None, "the default values do not render")
    for what, args, want in BAD:
        r = helm("template", "spinlane", CHART, *args)
        ok = r.returncode != 0 and want in r.stderr
        print("%-45s %s" % (what, "refused" if ok else "NOT refused (exit %d)" % r.returncode))
        check(ok, "schema: %s (%s) not refused naming %s: exit %d: %s" % (what, " ".join(args), want, r.returncode, r.stderr.strip()[-300:]))
    # every typed leaf of the schema is used by some rule above or documented as free-form
    with open(os.path.join(CHART, "values.schema.json")) as f:
        schema = json.load(f)
    check(schema.get("additionalProperties") is False, "schema: top level allows unknown keys")

    def strict(node, path):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                check(node.get("additionalProperties") is False, "schema: %s allows unknown keys" % (path or "/"))
            for k, v in node.items():
                strict(v, path + "/" + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                strict(v, "%s/%d" % (path, i))
    strict(schema, "")


# ---------------------------------------------------------------- fail


def test_fail():
    tmp = tempfile.mkdtemp(prefix="sl-helm-")
    try:
        cases = [
            ("eks without a NIC selection", PRESETS["eks"] + ["-f", values_file(tmp, "a", "config:\n  nics:\n    interfaces: []\n")],
             "preset eks needs an explicit NIC selection"),
            ("eks with mana", PRESETS["eks"] + ["--set", "config.nics.kinds={ena,mana}"], "preset eks takes ENA NICs only"),
            ("aks with ena", PRESETS["aks"] + ["--set", "config.nics.kinds={ena}"], "preset aks takes MANA NICs only"),
            ("eks nodeConfig without selection", PRESETS["eks"] + ["-f", values_file(tmp, "b", "nodeConfigs:\n  x:\n    nics:\n      interfaces: []\n")],
             "nodeConfigs.x: preset eks needs an explicit NIC selection"),
            ("hugetlbfs size not reserved", ["--set", "config.hugetlbfs.page_size=1G"], "is none of the reserved hugepages sizes"),
            ("page size twice", ["--set-json", 'config.hugepages=[{"page_size":"2M","per_node":{"0":1}},{"page_size":"2M","per_node":{"0":2}}]'],
             "lists page size 2M twice"),
            ("ServiceMonitor without Service", ["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.service.enabled=false"],
             "metrics.serviceMonitor.enabled needs metrics.service.enabled"),
            ("no ServiceAccount name", ["--set", "serviceAccount.create=false"], "serviceAccount.name is required"),
            # values.yaml's placeholders render nothing that could be installed
            ("placeholder image", ["--set", "image.repository=registry.example.com/spinlane/agent"],
             "image.repository is the placeholder registry.example.com/spinlane/agent"),
            ("placeholder driverImage", ["--set", "driverImage.repository=registry.example.com/spinlane/driver"],
             "driverImage.repository is the placeholder"),
            ("placeholder example.appImage", ["--set", "example.enabled=true", "--set", "example.appImage=registry.example.com/my/app:1.0"],
             "example.appImage is the placeholder"),
            # a tag in the repository would render reg/agent:1.0:<appVersion>
            ("tag in image.repository", ["--set", "image.repository=reg.example.net/agent:1.0"],
             "image.repository reg.example.net/agent:1.0 carries a tag"),
            ("tag in driverImage.repository", ["--set", "driverImage.repository=reg.example.net:5000/driver:1.0"],
             "driverImage.repository reg.example.net:5000/driver:1.0 carries a tag"),
            ("ServiceMonitor with no way in", ["--set", "metrics.serviceMonitor.enabled=true"],
             "metrics.serviceMonitor.enabled needs a way in"),
            ("proxy beside an open port", ["--set", "metrics.kubeRbacProxy.enabled=true", "--set", "metrics.bindAddress="],
             "metrics.kubeRbacProxy.enabled needs metrics.bindAddress"),
        ]
        # values.yaml alone (no IMAGES): the placeholders are refused, naming the key
        r = subprocess.run([HELM, "template", "spinlane", CHART], capture_output=True, text=True)
        check(r.returncode != 0 and re.search(r"(image|driverImage)\.repository is the placeholder", r.stderr),
              "fail(): values.yaml's placeholder images rendered: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        for what, args, want in cases:
            r = helm("template", "spinlane", CHART, *args)
            ok = r.returncode != 0 and want in r.stderr
            print("%-40s %s" % (what, "refused" if ok else "NOT refused"))
            check(ok, "fail(): %s not refused with %r: exit %d: %s" % (what, want, r.returncode, r.stderr.strip()[-300:]))
        # and what they allow
        for what, args in (("eks by pci", PRESETS["eks"] + ["-f", values_file(tmp, "c", "config:\n  nics:\n    interfaces: []\n    pci: ['0000:00:06.0']\n")]),
                           ("eks by max", PRESETS["eks"] + ["-f", values_file(tmp, "d", "config:\n  nics:\n    interfaces: []\n    max: 1\n")]),
                           ("serviceAccount by name", ["--set", "serviceAccount.create=false", "--set", "serviceAccount.name=mine"]),
                           ("a registry with a port", ["--set", "image.repository=reg.example.net:5000/spinlane/agent"])):
            r = helm("template", "spinlane", CHART, *args)
            check(r.returncode == 0, "fail(): %s refused: %s" % (what, r.stderr.strip()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- policy

# What the chart may ask of a node, and nothing else. Each entry is justified in the
# template beside it (checked below: a comment in the lines before it).
HOST_PATHS = {"/proc", "/sys", "/dev", "/var/lib/spinlane", "/var/lib/kubelet", "/var/lib/kubelet/device-plugins", "/var/run/cdi",
              # DRA (resourceApi): the kubelet plugin's registration and service sockets
              "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins/spinlane.io"}
# config.kernel_args.manage only: what writing and taking back the kernel arguments needs
# (os-release and grub's config, the drop-in, the boot loader's files, the tool, the sentinel)
KARGS_HOST_PATHS = {"/etc", "/etc/default", "/boot", "/usr", "/var/run"}
DRIVER_CAPS = {"ena": {"IPC_LOCK", "SYS_RAWIO", "SYS_ADMIN"}, "mana": {"IPC_LOCK", "NET_RAW"}}


def rbac_from_source():
    """{(group, resource, verb)} from agent/daemon/run-cluster.c's rbac_need() messages."""
    with open(os.path.join(SRC, "agent", "daemon", "run-cluster.c")) as f:
        text = f.read()
    out = set()
    for verb, res, group in re.findall(r'return "(\w+) on (\w+) \(API group \\?"?([\w.]*)\\?"?\)"', text):
        out.add((group, res, verb))
    return out


def rbac_from_docs():
    with open(os.path.join(SRC, "docs", "observability.md")) as f:
        text = f.read()
    sec = text[text.index("## RBAC"):]
    sec = sec[:sec.index("\n## ", 5)]
    out = set()
    for g, r, v in re.findall(r"^\| `([^`]*)` \| `(\w+)` \| `(\w+)` \|", sec, re.M):
        out.add(("" if g == '""' else g, r, v))
    return out


def test_policy():
    src = rbac_from_source()
    doc = rbac_from_docs()
    check(len(src) == 4, "rbac_need() in agent/daemon/run-cluster.c: parsed %s" % sorted(src))
    check(src == doc, "RBAC: agent/daemon/run-cluster.c %s != docs/observability.md %s" % (sorted(src), sorted(doc)))
    dra_src = slice_verbs_from_source()
    check(dra_src == DRA_RBAC, "DRA RBAC: the calls of dra-slices.c and dra-plugin.c %s != the chart's %s"
          % (sorted(dra_src), sorted(DRA_RBAC)))
    with open(os.path.join(CHART, "templates", "daemonset.yaml")) as f:
        ds_text = f.read().splitlines()
    for name, args in PRESETS.items():
        for extra in ([], ["--set", "example.enabled=true"], ["--set", "restore=true"], ["--set", "config.cdi.enabled=true"],
                      ["--set", "resourceApi.mode=dra", "--set", "example.enabled=true"],
                      ["--set", "resourceApi.mode=both", "--set", "example.enabled=true"],
                      ["--set", "config.kernel_args.manage=true", "--set-string", "config.cores.cpus=2-3"],
                      ["--set", "config.kernel_args.manage=true", "--set-string", "config.cores.cpus=2-3", "--set", "restore=true"]):
            docs = template(*(args + extra))
            if docs is None:
                continue
            t = "%s %s" % (name, " ".join(extra))
            # DRA adds the contract's resource.k8s.io rules (test_dra checks them)
            want_rbac = src | DRA_RBAC if any(a.startswith("resourceApi.mode=") for a in extra) else src
            # RBAC exactly the source's calls: nodes through the ClusterRole, events through
            # the Role in the Events' namespace (test_node_policy.py checks which)
            got = set()
            for cr in objs(docs, "ClusterRole") + objs(docs, "Role"):
                for rule in cr["rules"]:
                    for g in rule["apiGroups"]:
                        for r in rule["resources"]:
                            for v in rule["verbs"]:
                                got.add((g, r, v))
            check(got == want_rbac, "%s: ClusterRole and Role grant %s, the agent calls %s" % (t, sorted(got), sorted(want_rbac)))
            check(len(objs(docs, "Role")) == 1 and len(objs(docs, "RoleBinding")) == 1,
                  "%s: one Role and RoleBinding (the Events')" % t)
            for crb in objs(docs, "ClusterRoleBinding"):
                sa = [s for s in crb["subjects"] if s["kind"] == "ServiceAccount"]
                check(sa and all(s["namespace"] == "spinlane" for s in sa), "%s: binding subjects %s" % (t, crb["subjects"]))
            kind = "mana" if name == "aks" else "ena"
            for pname, spec in pod_specs(docs):
                pt = "%s: %s" % (t, pname)
                agent = pname.startswith("DaemonSet")
                check(not spec.get("hostPID") and not spec.get("hostIPC"), "%s: hostPID/hostIPC" % pt)
                check(bool(spec.get("hostNetwork")) == (agent and "restore=true" not in extra),
                      "%s: hostNetwork %s (only the running agent needs it)" % (pt, spec.get("hostNetwork")))
                if spec.get("hostNetwork"):
                    check(spec.get("dnsPolicy") == "ClusterFirstWithHostNet", "%s: hostNetwork without ClusterFirstWithHostNet" % pt)
                check(spec.get("automountServiceAccountToken") is False, "%s: service-account token automounted" % pt)
                kargs = "config.kernel_args.manage=true" in extra
                for v in spec.get("volumes", []):
                    if "hostPath" in v:
                        hp = v["hostPath"]["path"]
                        mounts = [m for c in containers(spec) for m in c.get("volumeMounts", []) if m["name"] == v["name"]]
                        # a MANA driver pod: the host's /sys/devices read only at /sys/devices
                        # (net_mana reads the VF's net/<if>/address, which its own netns does not list)
                        mana_sys = not agent and kind == "mana" and hp == "/sys/devices"
                        check(agent or (mana_sys and mounts and
                                        all(m["mountPath"] == "/sys/devices" and m.get("readOnly") for m in mounts)),
                              "%s: hostPath %s outside the agent (only a MANA driver pod's /sys/devices, read only)" % (pt, hp))
                        check(hp in HOST_PATHS or mana_sys or (kargs and agent and hp in KARGS_HOST_PATHS),
                              "%s: hostPath %s not in the justified set" % (pt, hp))
                        check(v["hostPath"].get("type") in ("Directory", "DirectoryOrCreate"), "%s: hostPath %s without a type" % (pt, v["hostPath"]["path"]))
                for c in containers(spec):
                    ct = "%s container %s" % (pt, c["name"])
                    img = c["image"]
                    check(re.search(r"(:[\w][\w.-]*|@sha256:[0-9a-f]{64})$", img.split("/")[-1]) is not None and not img.endswith(":latest"),
                          "%s: image %s not pinned" % (ct, img))
                    res = c.get("resources", {})
                    check(res.get("requests", {}).get("cpu") and res.get("requests", {}).get("memory") and
                          res.get("limits", {}).get("memory"), "%s: no cpu/memory requests and memory limit" % ct)
                    sc = c.get("securityContext", {})
                    check(sc.get("readOnlyRootFilesystem") is True, "%s: root filesystem writable" % ct)
                    if sc.get("privileged"):
                        check(agent, "%s: privileged outside the agent" % ct)
                    else:
                        check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation not false" % ct)
                        check(sc.get("capabilities", {}).get("drop") == ["ALL"], "%s: capabilities not dropped" % ct)
                    add = set(sc.get("capabilities", {}).get("add", []))
                    if agent:
                        check(not add, "%s: capabilities added beside privileged" % ct)
                    elif c["name"] in ("check-only", "media-driver"):
                        check(add == DRIVER_CAPS[kind], "%s: capabilities %s, the %s driver needs %s" % (ct, sorted(add), kind, sorted(DRIVER_CAPS[kind])))
                        res = c["resources"]
                        check(res["requests"] == res["limits"], "%s: not Guaranteed" % ct)
                        check(re.fullmatch(r"[1-9]\d*", res["requests"]["cpu"]) is not None, "%s: cpu not an integer" % ct)
                    else:
                        check(not add, "%s: capabilities %s" % (ct, sorted(add)))
                    for m in c.get("volumeMounts", []):
                        if m.get("mountPropagation") == "Bidirectional":
                            check(sc.get("privileged") and m["mountPath"] == "/host/dev", "%s: Bidirectional at %s" % (ct, m["mountPath"]))
                if not agent:
                    res = [c["resources"] for c in containers(spec)]
                    check(all(r["requests"] == r["limits"] for r in res), "%s: pod not Guaranteed QoS" % pt)
    # every hostPath, host namespace and privileged in the template has a comment above it
    for i, line in enumerate(ds_text):
        s = line.strip()
        if re.match(r"(hostNetwork|privileged|mountPropagation): ", s) or re.match(r"- name: (host-\w+|device-plugins|cdi|plugins-registry|dra-plugin|dra-cdi)$", s) and "mountPath" in ds_text[i + 1]:
            above = ds_text[max(0, i - 8):i]
            check(any(a.strip().startswith("#") for a in above), "daemonset.yaml:%d %s has no justifying comment above it" % (i + 1, s))


# ---------------------------------------------------------------- config


def fixture(tmp, name, names=None):
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "fixtures", "make-node.py"), tmp, name], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("make-node.py %s failed: %s" % (name, r.stderr))
    root = os.path.join(tmp, name)
    devs = os.path.join(root, "sys/bus/pci/devices")
    vfio = sorted(d for d in os.listdir(devs) if os.path.basename(os.path.realpath(os.path.join(devs, d, "driver"))) == "vfio-pci")
    if vfio:
        # as the agent leaves NICs it bound: original driver, netdev name and MAC recorded
        os.makedirs(os.path.join(root, "var/lib/spinlane"), exist_ok=True)
        with open(os.path.join(root, "var/lib/spinlane/bind-state.json"), "w") as f:
            json.dump({"version": 1, "count": len(vfio), "nics": [
                {"pci": d, "original_driver": "ena", "driver": "vfio-pci", "netdev": (names or {}).get(d, ""),
                 "mac": "0a:00:00:00:00:%02x" % i} for i, d in enumerate(vfio)]}, f)
    return root


def rendered_config(args, key="config.json"):
    docs = template(*args)
    if not docs:
        return None, None
    cm = objs(docs, "ConfigMap")
    ds = objs(docs, "DaemonSet")
    if not check(len(cm) == 1 and ds, "no ConfigMap/DaemonSet"):
        return None, None
    c = ds[0]["spec"]["template"]["spec"]["containers"][0]
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in ds[0]["spec"]["template"]["spec"]["volumes"]}
    check(vols[mounts["/etc/spinlane"]]["configMap"]["name"] == cm[0]["metadata"]["name"], "the DaemonSet does not mount the ConfigMap")
    return cm[0]["data"][key], c["command"] + c["args"]


def run_agent(*args):
    return subprocess.run([AGENT] + list(args), capture_output=True, text=True)


def test_config():
    if not os.access(AGENT, os.X_OK):
        raise SystemExit("spinlane-agent not built at %s" % AGENT)
    tmp = tempfile.mkdtemp(prefix="sl-helm-")
    try:
        # (preset, fixture, NIC names recorded, NICs expected advertised)
        cases = [("default", "eks-x86", None, 2), ("eks", "eks-x86", {"0000:00:06.0": "ens6", "0000:00:07.0": "ens7"}, 1),
                 ("eks", "graviton", {"0000:00:06.0": "ens6"}, 1), ("aks", "aks-mana", None, 1)]
        for preset, fx, names, want in cases:
            t = "%s on %s" % (preset, fx)
            text, argv = rendered_config(PRESETS[preset])
            if text is None:
                continue
            d = os.path.join(tmp, preset + "-" + fx)
            os.makedirs(d)
            cfg = os.path.join(d, "config.json")
            with open(cfg, "w") as f:
                f.write(text)
            root = fixture(d, fx, names)
            # 1. the agent takes the file (exit 2 would be a refused config)
            r = run_agent("preflight", "--config", cfg, "--root", root)
            print("%s: preflight exit %d: %s" % (t, r.returncode, r.stdout.strip().splitlines()[-1:]))
            check(r.returncode in (0, 1), "%s: the agent refused the chart's config (exit %d): %s" % (t, r.returncode, r.stderr.strip()))
            # 2. the DaemonSet's own command line, host root and config swapped for the
            # fixture, preparing once: the daemon's verdicts on this node
            a = [AGENT] + argv[1:]
            a[a.index("--root") + 1] = root
            a[a.index("--config") + 1] = cfg
            a[a.index("--metrics-bind-address") + 1] = "0"
            r = subprocess.run(a + ["--once"], capture_output=True, text=True)
            print("%s: %s --once: exit %d" % (t, " ".join(argv[1:]), r.returncode))
            check(r.returncode == 0, "%s: the DaemonSet's command --once: exit %d\n%s%s" % (t, r.returncode, r.stdout, r.stderr))
            check("PASS prep-nic-binding" in r.stdout, "%s: prep-nic-binding does not pass:\n%s" % (t, r.stdout))
            if preset == "aks":
                # MANA stays on its kernel driver: nothing bound; the VF checked for DPDK
                check("PASS prep-mana" in r.stdout, "%s: prep-mana does not pass" % t)
                check("no NIC to bind (MANA stays on its kernel driver)" in r.stdout, "%s: a MANA VF was rebound" % t)
                continue
            m = re.search(r"^PASS prep-nic-binding: (\d+) NIC\(s\) bound to \S+ now, (\d+) already bound", r.stdout, re.M)
            got = int(m.group(1)) + int(m.group(2)) if m else -1
            print("%s: %d NIC(s) taken" % (t, got))
            check(got == want, "%s: %d NICs taken, expected %d:\n%s" % (t, got, want, r.stdout))
        # EKS on AL2023 as amazon-ec2-net-utils leaves it: ens6 has an address and a
        # default route, so the preset's NIC is refused (the networkd drop-in's reason).
        text, argv = rendered_config(PRESETS["eks"])
        if text:
            d = os.path.join(tmp, "al2023")
            os.makedirs(d)
            cfg = os.path.join(d, "config.json")
            with open(cfg, "w") as f:
                f.write(text)
            root = fixture(d, "eks-al2023")
            a = [AGENT] + argv[1:]
            a[a.index("--root") + 1] = root
            a[a.index("--config") + 1] = cfg
            a[a.index("--metrics-bind-address") + 1] = "0"
            r = subprocess.run(a + ["--once"], capture_output=True, text=True)
            line = [l for l in r.stdout.splitlines() if "prep-nic-binding" in l]
            print("eks on eks-al2023: %s" % line)
            check(line and line[0].startswith("WARN") and "ens6" in r.stdout + r.stderr,
                  "eks on eks-al2023: ens6 (address + route) was not refused:\n%s%s" % (r.stdout, r.stderr))
        # resourceApi dra / both: the DaemonSet's own command line, --dra-resources
        # included, is one the agent takes (the daemon parses the list before --once)
        for mode, want_list in (("dra", "nic,core"), ("both", "nic")):
            text, argv = rendered_config(PRESETS["eks"] + ["--set", "resourceApi.mode=" + mode])
            if not text:
                continue
            d = os.path.join(tmp, "dra-" + mode)
            os.makedirs(d)
            cfg = os.path.join(d, "config.json")
            with open(cfg, "w") as f:
                f.write(text)
            root = fixture(d, "eks-x86", {"0000:00:06.0": "ens6", "0000:00:07.0": "ens7"})
            a = [AGENT] + argv[1:]
            check("--dra-resources" in a and a[a.index("--dra-resources") + 1] == want_list,
                  "resourceApi.mode=%s: --dra-resources %s in %s" % (mode, want_list, a))
            a[a.index("--root") + 1] = root
            a[a.index("--config") + 1] = cfg
            a[a.index("--metrics-bind-address") + 1] = "0"
            r = subprocess.run(a + ["--once"], capture_output=True, text=True)
            print("resourceApi.mode=%s: --once: exit %d" % (mode, r.returncode))
            check(r.returncode == 0, "resourceApi.mode=%s: the DaemonSet's command --once: exit %d\n%s%s" %
                  (mode, r.returncode, r.stdout, r.stderr))
        # every per-node config is a config the agent takes
        vf = values_file(tmp, "nodecfg", "nodeConfigs:\n  big:\n    nics: {max: 1}\n    cores: {cpus: '2-5,10-13'}\n")
        text, _ = rendered_config(["-f", vf], key="node-big.json")
        if text:
            cfg = os.path.join(tmp, "node-big.json")
            with open(cfg, "w") as f:
                f.write(text)
            root = fixture(os.path.join(tmp, "nb"), "eks-x86")
            r = run_agent("preflight", "--config", cfg, "--root", root)
            check(r.returncode in (0, 1), "node-big.json refused by the agent (exit %d): %s" % (r.returncode, r.stderr))
            c = json.loads(text)
            check(c["nics"]["max"] == 1 and c["cores"] == {"cpus": "2-5,10-13"} and c["nics"]["kinds"] == ["ena", "mana"],
                  "node-big.json is not config with the overrides: %s" % c)
        # the test and example pods ask for what the agent advertises, with the variables
        # spinlane-launch reads
        launch = os.path.join(BIN, "driver", "launch", "spinlane-launch")
        if check(os.access(launch, os.X_OK), "spinlane-launch not built at %s" % launch):
            with open(launch, "rb") as f:
                strings = f.read()
            text, _ = rendered_config(PRESETS["eks"])
            cfg = os.path.join(tmp, "eks-inv.json")
            with open(cfg, "w") as f:
                f.write(text)
            root = fixture(os.path.join(tmp, "inv"), "eks-x86", {"0000:00:06.0": "ens6"})
            r = run_agent("inventory", "--json", "--root", root, "--config", cfg)
            advertised = set(json.loads(r.stdout)["resources"]) if r.returncode == 0 else set()
            check(advertised == {"spinlane.io/dpdk-nic", "spinlane.io/isolated-core"}, "advertised %s" % advertised)
            docs = template(*(PRESETS["eks"] + ["--set", "example.enabled=true"]))
            check(len(pods(docs)) == 2, "expected the test pod and the example's pod: %s" % [n for n, _, _ in pods(docs)])
            for t, _, spec in pods(docs):
                c = spec["containers"][0]
                req = c["resources"]["requests"]
                ext = {k for k in req if "/" in k}
                check(ext == advertised, "%s asks for %s, the agent advertises %s" % (t, ext, advertised))
                for e in c.get("env", []):
                    if e["name"].startswith("SPINLANE_"):
                        check(e["name"].encode() in strings, "%s: %s is not a variable spinlane-launch reads" % (t, e["name"]))
                mb = int(next((e["value"] for e in c.get("env", []) if e["name"] == "SPINLANE_DPDK_MEMORY_MB"), "256"))
                hp = req["hugepages-2Mi"]
                check(hp.endswith("Mi") and int(hp[:-2]) >= mb or hp.endswith("Gi") and int(hp[:-2]) * 1024 >= mb,
                      "%s: hugepages-2Mi %s < SPINLANE_DPDK_MEMORY_MB %d" % (t, hp, mb))
                threads = 2  # eks-x86: SMT
                check(int(req["cpu"]) == int(req["spinlane.io/isolated-core"]) * threads,
                      "%s: cpu %s is not isolated-core x %d threads (SMTAlignmentError)" % (t, req["cpu"], threads))
        # the check can fail: what the schema lets through and the agent refuses is a
        # chart bug; prove the agent does refuse a changed key
        text, _ = rendered_config([])
        if text:
            bad = json.loads(text)
            bad["nics"]["kind"] = "ena"
            cfg = os.path.join(tmp, "bad.json")
            with open(cfg, "w") as f:
                json.dump(bad, f)
            r = run_agent("preflight", "--config", cfg, "--root", root)
            check(r.returncode == 2 and "nics.kind" in r.stderr, "the agent accepted an unknown key (exit %d)" % r.returncode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- readme

# maps whose keys are the user's (labels, NUMA nodes, names): documented as a whole
FREE_MAPS = {"nodeSelector", "agent.podAnnotations", "agent.podLabels", "serviceAccount.annotations",
             "metrics.serviceMonitor.labels", "nodeConfigs", "affinity"}


def test_readme():
    yaml = need_yaml()
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    with open(os.path.join(CHART, "README.md")) as f:
        readme = f.read()
    table = readme[readme.index("## Values"):]
    table = table[:table.index("\n## ", 5)]
    documented = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))
    leaves = []

    def walk(d, p):
        for k, v in d.items():
            q = p + k
            if isinstance(v, dict) and v and q not in FREE_MAPS and not q.endswith("per_node"):
                walk(v, q + ".")
            elif isinstance(v, list) and v and isinstance(v[0], dict) and q == "config.hugepages":
                leaves.append(q)
            else:
                leaves.append(q)
    walk(values, "")
    missing = [k for k in leaves if k not in documented]
    print("values.yaml: %d keys, README documents %d" % (len(leaves), len(documented)))
    check(not missing, "README.md does not document %s" % missing)
    stale = sorted(k for k in documented if k not in leaves and k != "config" and not any(l.startswith(k + ".") for l in leaves))
    check(not stale, "README.md documents keys values.yaml does not have: %s" % stale)
    # and the schema knows every key values.yaml has (types in full)
    with open(os.path.join(CHART, "values.schema.json")) as f:
        schema = json.load(f)

    def known(path):
        node = schema
        for part in path.split("."):
            props = node.get("properties", {})
            if part in props:
                node = props[part]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return False
        return True
    check(all(known(k) for k in leaves), "values.schema.json lacks %s" % [k for k in leaves if not known(k)])


# ---------------------------------------------------------------- notes


def test_notes():
    """NOTES.txt from a client-side dry run: the commands it gives select what the chart renders."""
    yaml = need_yaml()
    for extra in ([], ["--set", "restore=true"]):
        r = helm("install", "spinlane", CHART, "-n", "spinlane", "--dry-run=client", *(PRESETS["eks"] + extra))
        if not check(r.returncode == 0, "helm install --dry-run=client: %s" % r.stderr):
            continue
        out = r.stdout
        notes = out[out.index("NOTES:"):]
        docs = [d for d in yaml.safe_load_all(out[out.index("---"):out.index("NOTES:")]) if d]
        cmds = [l.strip() for l in notes.splitlines() if l.strip().startswith(("kubectl", "helm"))]
        print("%s: %d commands" % (extra or "run", len(cmds)))
        for cmd in cmds:
            if cmd.startswith("kubectl") and " logs " in cmd:
                check("--tail=-1" in cmd and "--prefix" in cmd, "NOTES: logs without --tail=-1 --prefix: %s" % cmd)
            m = re.search(r"(?:logs|daemonset) -l (\S+)", cmd)
            if m:
                sel = dict(kv.split("=", 1) for kv in m.group(1).split(","))
                what = "daemonset" if "daemonset" in cmd else "pod"
                hits = []
                for d in objs(docs, "DaemonSet"):
                    labels = d["metadata"]["labels"] if what == "daemonset" else d["spec"]["template"]["metadata"]["labels"]
                    if all(labels.get(k) == v for k, v in sel.items()):
                        hits.append(d["metadata"]["name"])
                check(hits == ["spinlane-agent"], "NOTES: %s selects %s" % (cmd, hits))
                if " -c " in cmd:
                    cname = cmd.split(" -c ")[1].split()[0]
                    spec = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]
                    check(cname in [c["name"] for c in containers(spec)], "NOTES: container %s not in the pod" % cname)
        check(any("spinlane.io/ready=true" in c for c in cmds) or extra, "NOTES: no ready-node selector")
        check(any(c.startswith("helm") and "uninstall" in c for c in cmds) or not extra, "NOTES (restore): no uninstall")
        # an upgrade with --reuse-values drops the new chart's defaults (keys its strict
        # schema needs): NOTES gives --reset-then-reuse-values, as the install guides do
        check(not re.search(r"--reuse-values\b", notes), "NOTES: an upgrade with --reuse-values")


# ---------------------------------------------------------------- docs

DOCS = ["README.md", "docs/install-eks.md", "docs/install-aks.md", "docs/uninstall.md", "docs/troubleshooting.md",
        "helm/spinlane/README.md", "docs/dra.md"]


def code_lines(text):
    """Shell lines of the indented code blocks (4 spaces), backslash continuations joined."""
    out, cur = [], None
    for line in text.splitlines():
        if not line.startswith("    "):
            if cur is not None:
                out.append(cur)
                cur = None
            continue
        l = line.strip()
        if cur is not None:
            cur = cur + " " + l
        else:
            cur = l
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        out.append(cur)
        cur = None
    if cur is not None:
        out.append(cur)
    return out


def indented_block(text, first):
    """The indented code block whose first line is `first` (dedented)."""
    lines = text.splitlines()
    i = next(n for n, l in enumerate(lines) if l.strip() == first and l.startswith("    "))
    block = []
    for l in lines[i:]:
        if l.startswith("    ") or not l.strip():
            block.append(l[4:])
        else:
            break
    return "\n".join(block).rstrip() + "\n"


def test_docs():
    """The helm and kubectl commands of the install guides, the README and the uninstall
    page, run here where they can run without a cluster (helm --dry-run=client / template,
    kubectl --dry-run=client / --local), selectors checked against the rendered objects;
    the EKS user data and the AKS kubelet config parsed and checked against the chart."""
    import shlex
    yaml = need_yaml()
    sub = {"<registry>": "registry.example.net", "<chart>": "helm/spinlane"}  # paths relative to the source tree
    ran = selectors = 0
    for doc in DOCS:
        with open(os.path.join(SRC, doc)) as f:
            text = f.read()
        for line in code_lines(text):
            if not line.startswith(("helm ", "kubectl ")):
                continue
            cmd = line
            for k, v in sub.items():
                cmd = cmd.replace(k, v)
            argv = shlex.split(cmd)
            t = "%s: %s" % (doc, line)
            if argv[0] == "helm":
                ns = argv[argv.index("-n") + 1] if "-n" in argv else "default"
                verb = [a for a in argv[1:] if not a.startswith("-") and a != ns][0]
                if verb == "install":
                    r = subprocess.run([HELM] + argv[1:] + ["--dry-run=client"], capture_output=True, text=True, cwd=SRC)
                elif verb == "upgrade":
                    # --reuse-values keeps the old release's values and ignores the chart's
                    # new defaults, so a key added to the strict schema breaks the upgrade:
                    # --reset-then-reuse-values (Helm >= 3.14) takes the new defaults first
                    check("--reuse-values" not in argv and "--reset-then-reuse-values" in argv,
                          "%s: an upgrade without --reset-then-reuse-values" % t)
                    # the flag needs the release: render the upgrade's values on the presets
                    rest = [a for a in argv[argv.index("upgrade") + 3:] if a != "--reset-then-reuse-values"]
                    r = subprocess.run([HELM, "template", argv[argv.index("upgrade") + 1], CHART, "-n", ns] + IMAGES + PRESETS["eks"] + rest,
                                       capture_output=True, text=True, cwd=SRC)
                elif verb in ("template", "lint"):
                    r = subprocess.run([HELM] + argv[1:], capture_output=True, text=True, cwd=SRC)
                else:  # test, uninstall: need a cluster; the release and namespace must be the install's
                    check(ns == "spinlane" and "spinlane" in argv, "%s: not the release spinlane in namespace spinlane" % t)
                    continue
                ran += 1
                check(r.returncode == 0, "%s: exit %d: %s" % (t, r.returncode, r.stderr.strip()[-400:]))
                continue
            # kubectl: drop "-n NS" so argv[1] is the verb
            if argv[1] == "-n":
                argv = argv[:1] + argv[3:]
            if argv[1:3] == ["create", "namespace"]:
                r = subprocess.run([KUBECTL] + argv[1:] + ["--dry-run=client", "-o", "yaml"], capture_output=True, text=True, cwd=SRC)
                ran += 1
                check(r.returncode == 0, "%s: %s" % (t, r.stderr))
                continue
            if argv[1:3] == ["label", "namespace"]:
                ns = subprocess.run([KUBECTL, "create", "namespace", argv[3], "--dry-run=client", "-o", "yaml"], capture_output=True, text=True, cwd=SRC)
                r = subprocess.run([KUBECTL, "label", "--local", "-f", "-", "-o", "yaml"] + argv[4:], input=ns.stdout, capture_output=True, text=True, cwd=SRC)
                ran += 1
                if check(r.returncode == 0, "%s: %s" % (t, r.stderr)):
                    labels = yaml.safe_load(r.stdout)["metadata"]["labels"]
                    check(labels.get("pod-security.kubernetes.io/enforce") == "privileged", "%s: namespace not privileged" % t)
                continue
            if "-l" in argv and argv[1] in ("logs", "rollout"):
                sel = dict(kv.split("=", 1) for kv in argv[argv.index("-l") + 1].split(","))
                docs = template(*PRESETS["eks"])
                restore = template(*(PRESETS["eks"] + ["--set", "restore=true"]))
                hits = 0
                for d in objs(docs or [], "DaemonSet") + objs(restore or [], "DaemonSet"):
                    labels = d["metadata"]["labels"] if argv[1] == "rollout" else d["spec"]["template"]["metadata"]["labels"]
                    if all(labels.get(k) == v for k, v in sel.items()):
                        hits += 1
                        if " -c " in line:
                            cname = line.split(" -c ")[1].split()[0]
                            spec = d["spec"]["template"]["spec"]
                            if d in objs(restore or [], "DaemonSet"):
                                check(cname in [c["name"] for c in containers(spec)], "%s: no container %s" % (t, cname))
                if argv[1] == "logs":
                    check("--tail=-1" in argv and "--prefix" in argv, "%s: logs by selector without --tail=-1 --prefix" % t)
                check(hits == 2, "%s: the selector matches %d of the agent DaemonSets (run and restore)" % (t, hits))
                ran += 1
                selectors += 1
    print("docs: %d commands run or checked without a cluster, %d of them label selectors" % (ran, selectors))
    check(ran >= 15 and selectors >= 8, "only %d doc commands (%d selectors) found" % (ran, selectors))

    r = helm("upgrade", "--help")
    check("--reset-then-reuse-values" in r.stdout, "this helm has no --reset-then-reuse-values (Helm >= 3.14)")

    # the EKS recipe's user data (deploy/eks/user-data.mime; its kubelet rules are checked
    # in tests/deploy/test-recipes.py) against the chart: the pool's label and taint, the
    # networkd file for values-eks.yaml's interface, reservedSystemCPUs and isolcpus
    import email
    with open(os.path.join(SRC, "docs", "install-eks.md")) as f:
        eks = f.read()
    with open(os.path.join(SRC, "deploy", "eks", "user-data.mime")) as f:
        msg = email.message_from_string(f.read())
    check(msg.is_multipart() and msg.get_content_type() == "multipart/mixed", "user data is not a multipart/mixed MIME document")
    parts = {p.get_content_type(): p.get_payload() for p in msg.walk() if not p.is_multipart()}
    check(sorted(parts) == ["application/node.eks.aws", "text/x-shellscript"], "user data parts %s" % sorted(parts))
    nc = yaml.safe_load(parts.get("application/node.eks.aws", "{}")) or {}
    spec = nc.get("spec", {})
    kc = spec.get("kubelet", {}).get("config", {})
    flags = " ".join(spec.get("kubelet", {}).get("flags", []))
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    for k, v in values["nodeSelector"].items():
        if k != "kubernetes.io/os":
            check("%s=%s" % (k, v) in flags, "NodeConfig does not label the node %s=%s (the chart's nodeSelector)" % (k, v))
    taint = re.search(r"--register-with-taints=([^=]+)=\w+:(\w+)", flags)
    check(taint and any(tl.get("key") == taint.group(1) and tl.get("effect") == taint.group(2) for tl in values["tolerations"]),
          "the pool's taint is not tolerated by the chart")
    # reservedSystemCPUs is the complement of isolcpus in the guide's example
    m = re.search(r"isolcpus=([\d,-]+)", eks)
    def cpus(s):
        out = set()
        for part in s.split(","):
            a, _, b = part.partition("-")
            out |= set(range(int(a), int(b or a) + 1))
        return out
    if check(m is not None, "no isolcpus example"):
        check(cpus(m.group(1)) | cpus(kc.get("reservedSystemCPUs", "")) == set(range(16)) and
              not cpus(m.group(1)) & cpus(kc.get("reservedSystemCPUs", "")), "reservedSystemCPUs is not the complement of isolcpus")
    sh = parts.get("text/x-shellscript", "")
    eks_values = yaml.safe_load(open(os.path.join(CHART, "values-eks.yaml")))
    nd = re.search(r"\[Match\]\nName=(\S+)\n\[Link\]\nUnmanaged=yes", sh)
    ifvar = re.search(r"^DPDK_IF=(\S+)$", sh, re.M)  # the script names the interface once
    name = nd and (ifvar.group(1) if nd.group(1) == "$DPDK_IF" and ifvar else nd.group(1))
    check(nd and [name] == eks_values["config"]["nics"]["interfaces"],
          "the networkd file does not leave values-eks.yaml's interface unmanaged")
    nf = re.search(r"/etc/systemd/network/(\d+)-[\w-]+\.network", sh)
    check(nf and int(nf.group(1)) < 70, "the networkd file does not sort before the generated ones (< 70)")
    # the guides show the recipes' files, not copies that drift: they name them
    for doc, files in (("docs/install-eks.md", ["deploy/eks/user-data.mime", "deploy/eks/launch-template.json",
                                                "deploy/eks/cluster.yaml", "deploy/eks/create-nodegroup.sh"]),
                       ("docs/install-aks.md", ["deploy/aks/nodepool.json", "deploy/aks/kubelet-config.json",
                                                "deploy/aks/linux-os-config.json", "deploy/aks/create-nodepool.sh"])):
        with open(os.path.join(SRC, doc)) as f:
            text = f.read()
        for fn in files:
            check(fn in text and os.path.exists(os.path.join(SRC, fn)), "%s does not point to %s" % (doc, fn))
        check("## Kernel arguments" in text, "%s has no Kernel arguments section" % doc)


# ---------------------------------------------------------------- images


def test_images():
    """deploy/docker-bake.hcl builds both images for amd64 and arm64 with the tags the
    chart pulls by default; the images' entrypoints are what the chart runs."""
    yaml = need_yaml()
    with open(os.path.join(SRC, "deploy", "docker-bake.hcl")) as f:
        bake = f.read()
    with open(os.path.join(CHART, "Chart.yaml")) as f:
        app = yaml.safe_load(f)["appVersion"]
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    var = dict(re.findall(r'variable "(\w+)" \{\s*default = "([^"]*)"', bake))
    check(var.get("VERSION") == app, "bake VERSION %s != the chart's appVersion %s" % (var.get("VERSION"), app))
    plats = re.findall(r"platforms\s*=\s*\[([^\]]*)\]", bake)
    check(plats and set(re.findall(r'"([^"]+)"', plats[0])) == {"linux/amd64", "linux/arm64"}, "bake platforms %s" % plats)
    targets = dict(re.findall(r'target "(\w+)" \{(.*?)\n\}', bake, re.S))
    for name, key in (("agent", "image"), ("driver", "driverImage")):
        body = targets.get(name, "")
        df = re.search(r'dockerfile\s*=\s*"([^"]+)"', body)
        check(df and os.path.isfile(os.path.join(SRC, df.group(1))), "bake %s: dockerfile %s" % (name, df and df.group(1)))
        tag = re.search(r'tags\s*=\s*\["([^"]+)"\]', body)
        want = "%s:%s" % (values[key]["repository"], app)
        got = tag.group(1).replace("${REGISTRY}", var.get("REGISTRY", "")).replace("${VERSION}", var.get("VERSION", "")) if tag else None
        check(got == want, "bake %s tag %s != the chart's default %s" % (name, got, want))
        check('inherits   = ["common"]' in body or 'inherits = ["common"]' in body, "bake %s does not inherit the platforms" % name)
        if df:
            with open(os.path.join(SRC, df.group(1))) as f:
                text = f.read()
            froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
            check(froms and all(not f.startswith("--platform") for f in froms), "%s: a stage pinned to one platform" % df.group(1))
            entry = json.loads(re.findall(r"^ENTRYPOINT\s+(\[.*\])", text, re.M)[-1])
            docs = template("--set", "example.enabled=true")
            if docs:
                if name == "agent":
                    c = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]["containers"][0]
                    check(c["command"][0] == entry[0], "the chart runs %s, the agent image's entrypoint is %s" % (c["command"][0], entry[0]))
                else:
                    for pname, _, spec in pods(docs):
                        c = spec["containers"][0]
                        check(os.path.basename(entry[0]) == c["command"][0] and os.path.dirname(entry[0]) == "/usr/local/bin",
                              "%s runs %s, the driver image has %s" % (pname, c["command"][0], entry[0]))
    print("bake: %s for %s" % (sorted(targets), plats))


# ---------------------------------------------------------------- dra

# The DRA side of the chart (resourceApi; the names are the DRA contract of issue #25,
# docs/dra.md): mode -> the agent's --dra-resources, the DeviceClasses and their CEL.
DRA_MODES = {  # name: (helm args, --dra-resources, resources through DRA)
    "device-plugin": ([], None, set()),
    "dra": (["--set", "resourceApi.mode=dra"], "nic,core", {"nic", "core"}),
    "both": (["--set", "resourceApi.mode=both"], "nic", {"nic"}),
    "both-core": (["--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={core}"], "core", {"core"}),
}
DRA_CLASSES = {
    "nic": ("dpdk-nic.spinlane.io", 'device.driver == "spinlane.io" && device.attributes["spinlane.io"].type == "dpdk-nic"'),
    "core": ("isolated-core.spinlane.io", 'device.driver == "spinlane.io" && device.attributes["spinlane.io"].type == "isolated-core"'),
}
DRA_VALUES = {}
DRA_EXT = {"nic": "spinlane.io/dpdk-nic", "core": "spinlane.io/isolated-core"}
def slice_verbs_from_source():
    """The verbs of every call agent/dra/dra-slices.c makes on its ResourceSlices (the
    methods of its start() calls), and of the claim read in agent/dra/dra-plugin.c: the
    chart grants exactly these (issue 31: list, watch and patch were granted, never used)."""
    verb = {"GET": "get", "POST": "create", "PUT": "update", "DELETE": "delete", "PATCH": "patch"}
    with open(os.path.join(SRC, "agent", "dra", "dra-slices.c")) as f:
        text = f.read()
    got = {verb[m] for call in re.findall(r'\bstart\(s,[^;]*', text)
           for m in re.findall(r'"(GET|POST|PUT|DELETE|PATCH)"', call)}
    with open(os.path.join(SRC, "agent", "dra", "dra-plugin.c")) as f:
        claims = {verb[m] for m in re.findall(r'kube_request\(p->kube, "(\w+)", g->path', f.read())}
    return {("resource.k8s.io", "resourceslices", v) for v in got} | {("resource.k8s.io", "resourceclaims", v) for v in claims}


DRA_RBAC = {("resource.k8s.io", "resourceslices", v) for v in ("get", "create", "update", "delete")} | \
    {("resource.k8s.io", "resourceclaims", "get")}
# host path -> the agent's mount: the kubelet plugin's registration and DRA sockets, the
# claims' CDI specs (the checkpoint is under /var/lib/spinlane, mounted in every mode)
DRA_PATHS = {"/var/lib/kubelet/plugins_registry": "/host/var/lib/kubelet/plugins_registry",
             "/var/lib/kubelet/plugins/spinlane.io": "/host/var/lib/kubelet/plugins/spinlane.io",
             "/var/run/cdi": "/host/var/run/cdi"}


def slice_device(driver, name, attrs):
    """A resource.k8s.io/v1 ResourceSlice device (attributes name -> {string|int|bool|
    version}) and what a DeviceClass's CEL sees of it: device.driver, device.attributes
    grouped by domain (an unqualified name is the driver's), values unwrapped; an unknown
    domain is an empty map (the API's CELDeviceSelector documentation)."""
    cel = {"spinlane.io": {}}
    for k, v in attrs.items():
        dom, _, n = k.rpartition("/")
        cel.setdefault(dom or driver, {})[n] = list(v.values())[0]
    return {"name": name, "attributes": attrs}, {"driver": driver, "attributes": cel, "capacity": {}}


# devices in the contract's shape: a NIC and a core of spinlane.io, and look-alikes
DRA_DEVICES = [
    ("ena NIC", "nic", slice_device("spinlane.io", "nic-0000-00-06-0", {
        "type": {"string": "dpdk-nic"}, "kind": {"string": "ena"}, "pciAddress": {"string": "0000:00:06.0"},
        "numaNode": {"int": 0}, "ipv4": {"string": "10.0.1.23"}, "mtu": {"int": 9001},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"}})),
    ("mana NIC, NUMA unknown", "nic", slice_device("spinlane.io", "nic-7870-00-00-0", {
        "type": {"string": "dpdk-nic"}, "kind": {"string": "mana"}, "pciAddress": {"string": "7870:00:00.0"},
        "numaNode": {"int": -1}, "ipv4": {"string": "10.1.0.5"}, "mtu": {"int": 1500},
        "resource.kubernetes.io/pcieRoot": {"string": "pci7870:00"}})),
    ("isolated core", "core", slice_device("spinlane.io", "core-p0c3", {
        "type": {"string": "isolated-core"}, "numaNode": {"int": 0}, "core": {"string": "p0c3"}, "cpus": {"string": "3,11"}})),
    ("another driver's NIC with the same type", None, slice_device("sriovnetwork.example.com", "vf-0", {
        "type": {"string": "dpdk-nic"}, "numaNode": {"int": 0}})),
    ("another driver's device, no spinlane.io attributes", None, slice_device("gpu.example.com", "gpu-0", {
        "model": {"string": "x"}})),
]


def dra_render(mode, *extra):
    return template(*(DRA_MODES[mode][0] + list(extra)))


def dra_agent_checks(docs, t, mode):
    """The agent DaemonSets' argument, mounts and volumes for mode."""
    _, arg, served = DRA_MODES[mode]
    for ds in objs(docs, "DaemonSet"):
        dt = "%s: %s" % (t, ds["metadata"]["name"])
        spec = ds["spec"]["template"]["spec"]
        c = spec["containers"][0]
        a = c["args"]
        if arg is None:
            check("--dra-resources" not in a, "%s: --dra-resources in mode device-plugin: %s" % (dt, a))
        else:
            check(a.count("--dra-resources") == 1 and a[a.index("--dra-resources") + 1] == arg,
                  "%s: --dra-resources %s, want %s" % (dt, a[a.index("--dra-resources") + 1:][:1] if "--dra-resources" in a else None, arg))
        vols = {v["name"]: v for v in spec["volumes"]}
        host = {v["hostPath"]["path"]: n for n, v in vols.items() if "hostPath" in v}
        mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
        for hp, mp in DRA_PATHS.items():
            if served:
                if check(hp in host and mp in mounts and mounts[mp]["name"] == host[hp],
                         "%s: %s not mounted at %s" % (dt, hp, mp)):
                    check(not mounts[mp].get("readOnly") and not mounts[mp].get("mountPropagation"),
                          "%s: %s read-only or propagated: %s" % (dt, mp, mounts[mp]))
            elif hp != "/var/run/cdi" or not any(m.startswith("/host/var/run/cdi") for m in mounts):
                check(hp not in host and mp not in mounts, "%s: %s mounted in mode device-plugin" % (dt, hp))
        dp = "/var/lib/kubelet/device-plugins" in host
        check(dp == (served != {"nic", "core"}), "%s: device-plugins socket directory mounted %s with DRA for %s" % (dt, dp, sorted(served)))
        check(len(host) == len([v for v in vols.values() if "hostPath" in v]), "%s: a host path mounted twice" % dt)


def dra_pod_checks(docs, t, mode):
    """The test and example pods: extended resources for what the device plugin serves, a
    claim from a rendered ResourceClaimTemplate for what DRA serves."""
    _, _, served = DRA_MODES[mode]
    rcts = {d["metadata"]["name"]: d for d in objs(docs, "ResourceClaimTemplate")}
    used = set()
    for pname, _, spec in pods(docs):
        pt = "%s: %s" % (t, pname)
        c = spec["containers"][0]
        req, lim = c["resources"]["requests"], c["resources"]["limits"]
        for r, ext in DRA_EXT.items():
            check((ext in req and ext in lim) == (r not in served), "%s: %s requested %s with DRA for %s" % (pt, ext, ext in req, sorted(served)))
        pc = spec.get("resourceClaims", [])
        if not served:
            check(not pc and "claims" not in c["resources"], "%s: a resource claim in mode device-plugin" % pt)
            continue
        if not check(len(pc) == 1 and c["resources"].get("claims") == [{"name": pc[0]["name"]}],
                     "%s: resourceClaims %s, container claims %s" % (pt, pc, c["resources"].get("claims"))):
            continue
        check(all("claims" not in x.get("resources", {}) for x in spec["containers"][1:]), "%s: the app container takes the claim" % pt)
        tn = pc[0].get("resourceClaimTemplateName")
        rct = rcts.get(tn)
        if not check(rct is not None and set(pc[0]) == {"name", "resourceClaimTemplateName"},
                     "%s: claim from template %s, rendered %s" % (pt, tn, sorted(rcts))):
            continue
        used.add(tn)
        check(rct["apiVersion"] == "resource.k8s.io/v1" and rct["metadata"].get("namespace") == "spinlane",
              "%s: %s is %s in %s" % (pt, tn, rct["apiVersion"], rct["metadata"].get("namespace")))
        dev = rct["spec"]["spec"]["devices"]
        # values.yaml's test.isolatedCores / example.isolatedCores
        cores = DRA_VALUES["example" if pname.endswith("-example") else "test"]["isolatedCores"]
        want = []
        if "nic" in served:
            want.append({"name": "nic", "exactly": {"deviceClassName": DRA_CLASSES["nic"][0], "allocationMode": "ExactCount", "count": 1}})
        if "core" in served:
            want.append({"name": "cores", "exactly": {"deviceClassName": DRA_CLASSES["core"][0], "allocationMode": "ExactCount", "count": cores}})
        check(dev["requests"] == want, "%s: %s requests %s, want %s" % (pt, tn, dev["requests"], want))
        # Kubernetes' standard attribute (issue 32)
        cons = [{"matchAttribute": "resource.kubernetes.io/numaNode"}] if len(want) == 2 else None
        check(dev.get("constraints") == cons, "%s: %s constraints %s, want %s" % (pt, tn, dev.get("constraints"), cons))
    check(used == set(rcts), "%s: ResourceClaimTemplates %s, used %s" % (t, sorted(rcts), sorted(used)))


def test_dra():
    global DRA_VALUES
    yaml = need_yaml()
    with open(os.path.join(CHART, "values.yaml")) as f:
        DRA_VALUES = yaml.safe_load(f)
    src = rbac_from_source()
    renders = 0
    for mode, (args, arg, served) in DRA_MODES.items():
        for preset in ("default", "eks", "aks"):
            for extra in ([], ["--set", "example.enabled=true", "--set", "example.appImage=r.example/app:1.0"]):
                docs = template(*(PRESETS[preset] + args + extra))
                if docs is None:
                    continue
                renders += 1
                t = "%s %s %s" % (mode, preset, " ".join(extra[:2]))
                dra_agent_checks(docs, t, mode)
                dra_pod_checks(docs, t, mode)
                check(bool(objs(docs, "ResourceClaimTemplate")) == bool(served), "%s: ResourceClaimTemplates rendered" % t)
                # the classes: exactly those of the resources through DRA, the contract's CEL
                dc = {d["metadata"]["name"]: d for d in objs(docs, "DeviceClass")}
                want = {DRA_CLASSES[r][0]: DRA_CLASSES[r][1] for r in served}
                check(sorted(dc) == sorted(want), "%s: DeviceClasses %s, want %s" % (t, sorted(dc), sorted(want)))
                for n, d in dc.items():
                    check(d["apiVersion"] == "resource.k8s.io/v1" and "namespace" not in d["metadata"], "%s: %s %s" % (t, n, d["apiVersion"]))
                    check(d["spec"] == {"selectors": [{"cel": {"expression": want.get(n)}}]}, "%s: %s spec %s" % (t, n, d["spec"]))
                    check(d["metadata"]["labels"].get("app.kubernetes.io/instance") == "spinlane", "%s: %s labels" % (t, n))
                # RBAC: the agent's calls, and with DRA the contract's slices and claims rules
                got = set()
                for cr in objs(docs, "ClusterRole") + objs(docs, "Role"):
                    for rule in cr["rules"]:
                        got |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
                check(got == (src | DRA_RBAC if served else src), "%s: RBAC %s" % (t, sorted(got ^ (src | DRA_RBAC))))
                vap = sorted(d["metadata"]["name"] for d in objs(docs, "ValidatingAdmissionPolicy"))
                check(vap == (["spinlane-agent-node", "spinlane-agent-slices"] if served else ["spinlane-agent-node"]), "%s: policies %s" % (t, vap))
    print("dra: %d renders checked (4 modes x 3 presets, with and without the example)" % renders)
    # per-node configs: every DaemonSet of the release runs the same mode
    docs = dra_render("dra", "--set", "nodeConfigs.big.nics.max=1")
    if docs:
        check(len(objs(docs, "DaemonSet")) == 2, "nodeConfigs: %d DaemonSets" % len(objs(docs, "DaemonSet")))
        dra_agent_checks(docs, "dra with nodeConfigs", "dra")
    # the CDI specs' directory: shared with cdi.enabled when it is /var/run/cdi, else both
    for sd, want in (("/var/run/cdi", {"/var/run/cdi"}), ("/run/cdi", {"/run/cdi", "/var/run/cdi"})):
        docs = dra_render("dra", "--set", "config.cdi.enabled=true", "--set", "config.cdi.spec_dir=" + sd)
        if docs:
            spec = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]
            host = [v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v and "cdi" in v["hostPath"]["path"]]
            check(sorted(host) == sorted(want), "cdi.spec_dir %s with DRA: CDI host paths %s, want %s" % (sd, host, sorted(want)))
            dra_agent_checks(docs, "dra cdi.spec_dir " + sd, "dra")
    # restore (uninstall): nothing of DRA
    docs = dra_render("dra", "--set", "restore=true")
    if docs:
        kinds = sorted({d["kind"] for d in docs})
        check(not {"DeviceClass", "ResourceClaimTemplate"} & set(kinds), "restore with DRA renders %s" % kinds)
        rules = [r for cr in objs(docs, "ClusterRole") for r in cr["rules"]]
        check(all("resource.k8s.io" not in r["apiGroups"] for r in rules), "restore with DRA: resource.k8s.io rules")
    # NOTES.txt points at the slices only where DRA serves something
    for mode in ("device-plugin", "dra"):
        r = helm("install", "spinlane", CHART, "-n", "spinlane", "--dry-run=client", *DRA_MODES[mode][0])
        if check(r.returncode == 0 and "NOTES:" in r.stdout, "NOTES %s: %s" % (mode, r.stderr.strip()[-300:])):
            has = "kubectl get resourceslices --field-selector spec.driver=spinlane.io" in r.stdout[r.stdout.index("NOTES:"):]
            check(has == (mode == "dra"), "NOTES %s: resourceslices command shown %s" % (mode, has))
    # rbac.nodePolicy=false: no policies, the classes still there
    docs = dra_render("dra", "--set", "rbac.nodePolicy=false")
    if docs:
        check(not objs(docs, "ValidatingAdmissionPolicy") and len(objs(docs, "DeviceClass")) == 2, "dra, nodePolicy=false")

    # bad values: the schema, and the template's own checks (the schema skipped)
    bad = [("mode", ["--set", "resourceApi.mode=gpu"], "/resourceApi/mode"),
           ("draResources entry", ["--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={gpu}"], "/resourceApi/draResources/0"),
           ("draResources empty", ["--set", "resourceApi.mode=both", "--set-json", "resourceApi.draResources=[]"], "/resourceApi/draResources"),
           ("draResources twice", ["--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={nic,nic}"], "/resourceApi/draResources"),
           ("unknown key", ["--set", "resourceApi.draResource=nic"], "draResource"),
           ("mode type", ["--set", "resourceApi.mode=true"], "/resourceApi/mode")]
    fails = [("both with every resource", ["--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={nic,core}"],
              "resourceApi.mode both with draResources [nic, core] leaves the device plugin nothing to serve: use resourceApi.mode dra"),
             ("Kubernetes 1.33", ["--set", "resourceApi.mode=dra", "--kube-version", "1.33.4"],
              "resourceApi.mode dra needs Kubernetes 1.34 or later (resource.k8s.io/v1, DRA GA); this cluster is v1.33.4"),
             ("mode, schema skipped", ["--skip-schema-validation", "--set", "resourceApi.mode=gpu"],
              'resourceApi.mode "gpu" is none of device-plugin, dra, both'),
             ("entry, schema skipped", ["--skip-schema-validation", "--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={gpu}"],
              'resourceApi.draResources: "gpu" is not a resource spinlane serves through DRA (nic or core)'),
             ("empty, schema skipped", ["--skip-schema-validation", "--set", "resourceApi.mode=both", "--set-json", "resourceApi.draResources=[]"],
              "resourceApi.mode both needs resourceApi.draResources to name the resources served through DRA")]
    for what, args, want in bad + fails:
        r = helm("template", "spinlane", CHART, *args)
        ok = r.returncode != 0 and want in r.stderr
        print("%-40s %s" % (what, "refused" if ok else "NOT refused"))
        check(ok, "dra: %s (%s) not refused with %r: exit %d: %s" % (what, " ".join(args), want, r.returncode, r.stderr.strip()[-300:]))
    for what, args in (("dra on 1.34", ["--set", "resourceApi.mode=dra", "--kube-version", "1.34.0"]),
                       ("device-plugin on 1.33", ["--kube-version", "1.33.4"]),
                       ("draResources ignored outside both", ["--set", "resourceApi.mode=dra", "--set", "resourceApi.draResources={core}"])):
        r = helm("template", "spinlane", CHART, *args)
        check(r.returncode == 0, "dra: %s refused: %s" % (what, r.stderr.strip()[-300:]))

    # the classes' CEL, evaluated (the npm package @marcbachmann/cel-js, cel-eval.mjs) on
    # devices in the slices' shape: each class selects its own kind and nothing else
    node = shutil.which("node")
    cel_dir = os.path.join(BIN, "tools", "cel")
    r = subprocess.run(["bash", os.path.join(SRC, "tests", "helm", "get-cel.sh"), cel_dir], capture_output=True, text=True) if node else None
    if r is None or r.returncode != 0:
        raise SystemExit("no CEL evaluator (node and @marcbachmann/cel-js, scripts/install-deps.sh): %s" % (r.stderr.strip() if r else "node not installed"))
    docs = dra_render("dra")
    tmp = tempfile.mkdtemp(prefix="sl-helm-")
    evaluated = 0
    try:
        for d in objs(docs or [], "DeviceClass"):
            n = d["metadata"]["name"]
            res = next(k for k, v in DRA_CLASSES.items() if v[0] == n)
            spec = {"validations": [{"expression": s["cel"]["expression"]} for s in d["spec"]["selectors"]]}
            inp = os.path.join(tmp, n + ".json")
            with open(inp, "w") as f:
                json.dump({"spec": spec, "cases": [{"name": name, "device": cel} for name, _, (_, cel) in DRA_DEVICES]}, f)
            r = subprocess.run([node, os.path.join(SRC, "tests", "helm", "cel-eval.mjs"), cel_dir, inp], capture_output=True, text=True, timeout=120)
            if not check(r.returncode == 0, "%s: cel-eval.mjs exit %d: %s" % (n, r.returncode, r.stderr.strip()[-400:])):
                continue
            out = {x["name"]: x for x in json.loads(r.stdout)}
            for name, kind, _ in DRA_DEVICES:
                x = out.get(name, {})
                check("evaluation error" not in x.get("message", ""), "%s on %s: %s" % (n, name, x.get("message")))
                check(x.get("allowed") == (kind == res), "%s %s %s" % (n, "selects" if x.get("allowed") else "does not select", name))
                evaluated += 1
            print("%s: %s" % (n, ", ".join("%s %s" % (nm, "selected" if out[nm]["allowed"] else "not") for nm, _, _ in DRA_DEVICES)))
        check(evaluated == 2 * len(DRA_DEVICES), "only %d class/device evaluations" % evaluated)
        # the claim's constraint names an attribute every device it joins carries, and
        # qualified (the API requires the domain), the driver's own
        for name, _, (dev, _) in DRA_DEVICES[:3]:
            check("numaNode" in dev["attributes"] and "int" in dev["attributes"]["numaNode"], "%s: no int numaNode" % name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # the standalone example (deploy/examples/aeron-media-driver-dra.yaml): the chart's
    # classes, one NIC and two cores under one matchAttribute, the pod's claim in its
    # only driver container, no spinlane extended resources (tests/deploy checks it
    # against the agent; kubeschema below validates it against the API types)
    with open(os.path.join(SRC, "deploy", "examples", "aeron-media-driver-dra.yaml")) as f:
        ex = [d for d in yaml.safe_load_all(f) if d]
    rct = objs(ex, "ResourceClaimTemplate")
    pod = objs(ex, "Pod")
    if check(len(rct) == 1 and len(pod) == 1, "the DRA example: %d templates, %d pods" % (len(rct), len(pod))):
        dev = rct[0]["spec"]["spec"]["devices"]
        check(dev["requests"] == [
            {"name": "nic", "exactly": {"deviceClassName": "dpdk-nic.spinlane.io", "allocationMode": "ExactCount", "count": 1}},
            {"name": "cores", "exactly": {"deviceClassName": "isolated-core.spinlane.io", "allocationMode": "ExactCount", "count": 2}}],
            "the DRA example's requests %s" % dev["requests"])
        # Kubernetes' standard attribute (issue 32), so that devices of other drivers can join
        check(dev.get("constraints") == [{"matchAttribute": "resource.kubernetes.io/numaNode"}], "the DRA example's constraints %s" % dev.get("constraints"))
        check(rct[0]["metadata"]["namespace"] == pod[0]["metadata"]["namespace"], "the DRA example: template and pod in different namespaces")
        spec = pod[0]["spec"]
        check(spec.get("resourceClaims") == [{"name": "dpdk", "resourceClaimTemplateName": rct[0]["metadata"]["name"]}],
              "the DRA example's resourceClaims %s" % spec.get("resourceClaims"))
        c = spec["containers"][0]
        check(c["resources"].get("claims") == [{"name": "dpdk"}], "the DRA example's container claims %s" % c["resources"].get("claims"))
        check(not any(k.startswith("spinlane.io/") for k in list(c["resources"]["requests"]) + list(c["resources"]["limits"])),
              "the DRA example asks for extended resources too: %s" % c["resources"])
        # what the chart renders for the same pod, mode dra: the same claim
        docs = dra_render("dra", "--set", "example.enabled=true", "--set", "example.appImage=r.example/app:1.0")
        if docs:
            mine = [d for d in objs(docs, "ResourceClaimTemplate") if d["metadata"]["name"].endswith("-example")]
            check(mine and mine[0]["spec"]["spec"] == rct[0]["spec"]["spec"], "the chart's example claim differs from deploy/examples'")


# ---------------------------------------------------------------- kubeschema

VALIDATE_JS = r"""
import * as fs from "node:fs";
const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const groups = {"v1": "kubernetes-models/v1", "apps/v1": "kubernetes-models/apps/v1",
  "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1",
  "admissionregistration.k8s.io/v1": "kubernetes-models/admissionregistration.k8s.io/v1",
  "resource.k8s.io/v1": "kubernetes-models/resource.k8s.io/v1"};
let bad = 0, n = 0;
for (const d of docs) {
  const mod = groups[d.apiVersion];
  if (!mod) { console.log("SKIPKIND " + d.apiVersion + " " + d.kind); continue; }
  const m = await import(mod + "/" + d.kind);
  try { new m[d.kind](d).validate(); n++; console.log("ok " + d.kind + " " + d.metadata.name); }
  catch (e) { bad++; console.log("INVALID " + d.kind + " " + d.metadata.name + ": " + e.message); }
}
console.log(n + " valid, " + bad + " invalid");
process.exit(bad ? 1 : 0);
"""


class DtsSchema:
    """Field names of the Kubernetes types, from the TypeScript declarations of the npm
    package kubernetes-models (its compiled validators check types and required fields
    but let unknown fields through; this finds those, as kubectl's server-side field
    validation would)."""

    def __init__(self, node_modules):
        self.nm = node_modules
        self.cache = {}

    def _file(self, base, mod):
        if mod.startswith("."):
            p = os.path.normpath(os.path.join(os.path.dirname(base), mod))
        else:
            p = os.path.join(self.nm, mod)
        return re.sub(r"\.js$", "", p) + ".d.ts"

    def load(self, path):
        """{field: (kind, ref)} with kind leaf|obj|list|map and ref the file of the type."""
        if path in self.cache:
            return self.cache[path]
        self.cache[path] = None
        if not os.path.isfile(path):
            return None
        with open(path) as f:
            text = f.read()
        m = re.search(r"^export interface (\w+)(?: extends ([\w, ]+))? \{\n(.*?)^\}", text, re.S | re.M)
        if not m:
            return None
        imports = dict(re.findall(r'^import \{ (\w+) \} from "([^"]+)";', text, re.M))
        body = re.sub(r"/\*\*.*?\*/", "", m.group(3), flags=re.S)
        fields = {}
        if m.group(2) and "TypeMeta" in m.group(2):
            fields["apiVersion"] = fields["kind"] = ("leaf", None)
        lines = [l for l in body.splitlines() if l.strip()]
        i = 0
        while i < len(lines):
            fm = re.match(r'^    "([^"]+)"\??: (.*)$', lines[i])
            i += 1
            if not fm:
                continue
            name, t = fm.group(1), fm.group(2)
            kind = "obj"
            if t == "{":
                inner = lines[i].strip()
                while i < len(lines) and not lines[i].startswith("    }"):
                    i += 1
                i += 1
                vm = re.match(r"\[key: string\]: (.*);", inner)
                t, kind = (vm.group(1) if vm else "any"), "map"
            t = t.rstrip(";").strip()
            am = re.match(r"Array<(\w+)>", t)
            if am:
                t, kind = am.group(1), "list" if kind != "map" else kind
            ref = self._file(path, imports[t]) if t in imports else None
            if ref is None:
                kind = "leaf" if kind == "obj" else kind
            fields[name] = (kind, ref)
        self.cache[path] = fields
        return fields

    def unknown(self, obj, path, where):
        """Dotted paths of fields obj has that its type does not."""
        fields = self.load(path)
        out = []
        if fields is None or not isinstance(obj, dict):
            return out
        for k, v in obj.items():
            if k not in fields:
                out.append(where + "." + k)
                continue
            kind, ref = fields[k]
            if not ref:
                continue
            if kind == "obj":
                out += self.unknown(v, ref, where + "." + k)
            elif kind == "list" and isinstance(v, list):
                for n, e in enumerate(v):
                    out += self.unknown(e, ref, "%s.%s[%d]" % (where, k, n))
            elif kind == "map" and isinstance(v, dict):
                for mk, e in v.items():
                    out += self.unknown(e, ref, "%s.%s[%s]" % (where, k, mk))
        return out

    def kind_file(self, doc):
        return os.path.join(self.nm, "kubernetes-models", doc["apiVersion"], doc["kind"] + ".d.ts")


def test_kubeschema():
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        skip("node/npm not installed: no offline Kubernetes schema validation")
    d = os.path.join(BIN, "tools", "kmodels")
    if not os.path.isdir(os.path.join(d, "node_modules", "kubernetes-models")):
        os.makedirs(d, exist_ok=True)
        r = subprocess.run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", d, "kubernetes-models@5.1.0"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            skip("npm install kubernetes-models failed (offline?): " + r.stderr.strip()[-200:])
    js = os.path.join(d, "validate.mjs")
    with open(js, "w") as f:
        f.write(VALIDATE_JS)
    dts = DtsSchema(os.path.join(d, "node_modules"))
    tmp = tempfile.mkdtemp(prefix="sl-helm-")
    try:
        sets = dict(PRESETS)
        sets["example"] = ["--set", "example.enabled=true"]
        sets["restore"] = ["--set", "restore=true"]
        # DRA: the DeviceClasses, ResourceClaimTemplates, pods with claims, slice policy
        sets["dra"] = ["--set", "resourceApi.mode=dra", "--set", "example.enabled=true"]
        sets["both"] = PRESETS["aks"] + ["--set", "resourceApi.mode=both", "--set", "resourceApi.draResources={core}",
                                         "--set", "example.enabled=true"]
        for name, args in list(sets.items()) + [("examples", "examples"), ("bad", None)]:
            if args == "examples":
                # deploy/examples as they are applied (the DRA one among them)
                yaml = need_yaml()
                docs = []
                exdir = os.path.join(SRC, "deploy", "examples")
                for fn in sorted(os.listdir(exdir)):
                    if fn.endswith(".yaml"):
                        with open(os.path.join(exdir, fn)) as f:
                            docs += [x for x in yaml.safe_load_all(f) if x]
                kinds = {x["kind"] for x in docs}
                check({"Pod", "ResourceClaimTemplate", "Namespace"} <= kinds, "deploy/examples kinds %s" % sorted(kinds))
            elif args is None:
                docs = template()
                # the check can fail: a port that is not a number
                spec = objs(docs, "DaemonSet")[0]["spec"]["template"]["spec"]
                spec["containers"][0]["ports"][0]["containerPort"] = "x"
                # and fields that do not exist
                spec["hostPIDD"] = True
                spec["containers"][0]["securityContext"]["privilegd"] = True
                spec["volumes"][0]["hostPath"]["typ"] = "Directory"
                objs(docs, "DaemonSet")[0]["spec"]["template"]["metadata"]["label"] = {}
            else:
                docs = template(*args)
            if docs is None:
                continue
            if name in ("dra", "both"):
                kinds = {x["kind"] for x in docs}
                check({"DeviceClass", "ResourceClaimTemplate"} <= kinds, "%s: no DeviceClass/ResourceClaimTemplate: %s" % (name, sorted(kinds)))
            p = os.path.join(tmp, name + ".json")
            with open(p, "w") as f:
                json.dump(docs, f)
            r = subprocess.run([node, js, p], capture_output=True, text=True, cwd=d)
            last = (r.stdout.strip().splitlines() or [""])[-1]
            print("%s: %s" % (name, last))
            unknown = []
            for obj in docs:
                f = dts.kind_file(obj)
                check(dts.load(f) is not None, "%s: no field list for %s %s" % (name, obj["apiVersion"], obj["kind"]))
                unknown += dts.unknown(obj, f, "%s/%s" % (obj["kind"], obj["metadata"]["name"]))
            print("%s: %d unknown fields" % (name, len(unknown)))
            if name == "bad":
                check(r.returncode == 1 and "containerPort" in r.stdout, "the validator accepted a string containerPort: %s" % r.stdout)
                check(sorted(unknown) == sorted(["DaemonSet/spinlane-agent.spec.template.spec.hostPIDD",
                                                 "DaemonSet/spinlane-agent.spec.template.spec.containers[0].securityContext.privilegd",
                                                 "DaemonSet/spinlane-agent.spec.template.spec.volumes[0].hostPath.typ",
                                                 "DaemonSet/spinlane-agent.spec.template.metadata.label"]),
                      "unknown fields not found: %s" % unknown)
            else:
                check(r.returncode == 0, "%s: invalid against the Kubernetes schemas:\n%s%s" % (name, r.stdout, r.stderr))
                check("SKIPKIND" not in r.stdout, "%s: kinds not validated: %s" % (name, r.stdout))
                check(not unknown, "%s: fields the Kubernetes types do not have: %s" % (name, unknown))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- driver metrics

PROM = ["--api-versions", "monitoring.coreos.com/v1"]
EXAMPLE = ["--set", "example.enabled=true"]


def exprs_of(text):
    """The metric names (aeron_*, spinlane_*) a text of PromQL expressions names."""
    return set(re.findall(r"\b((?:aeron|spinlane)_[a-z0-9_]+)\b", text))


def stat_names():
    """The metric names spinlane-stat emits: its fixed families (string literals of
    driver/stat/stat-prom.c) and the ones it makes of spinlane's counter labels
    (driver/aeron/spa-counters.c's tables: "spinlane_port_<name>_total",
    "spinlane_agent_<name>_total", by stat_prom_name's rule)."""
    def name(x):
        return re.sub(r"[^a-z0-9]+", "_", x.lower()).strip("_")
    with open(os.path.join(SRC, "driver", "stat", "stat-prom.c")) as f:
        out = set(re.findall(r'"((?:aeron|spinlane)_[a-z0-9_]+)"', f.read()))
    with open(os.path.join(SRC, "driver", "aeron", "spa-counters.c")) as f:
        src = f.read()
    fixed = src[src.index("fixed[SPA_PC__FIXED]"):src.index("agent_names[")]
    for n in re.findall(r'\{ "([^"]+)",', fixed):
        if n != "drops total":
            out.add("spinlane_port_%s_total" % name(n))
    agents = src[src.index("agent_names["):src.index("void spa_counter_name")]
    for n in re.findall(r'= "([^"]+)"', agents):
        out.add("spinlane_agent_lcore_id" if n == "lcore id" else "spinlane_agent_%s_total" % name(n))
    return out


def test_driver_metrics():
    yaml = need_yaml()
    # the sidecar: a plain container with explicit args, the Aeron directory read-only
    docs = template(*EXAMPLE)
    if docs is None:
        return
    kinds = {d["kind"] for d in docs}
    check(not kinds & {"PodMonitor", "PrometheusRule"}, "no Prometheus Operator CRDs: no PodMonitor/PrometheusRule: %s" % kinds)
    meta, spec = [(m, sp) for n, m, sp in pods(docs) if n.startswith("Deployment")][0]
    cs = {c["name"]: c for c in spec["containers"]}
    st = cs.get("stat")
    if check(st is not None, "the example pod has the stat sidecar: %s" % sorted(cs)):
        check(st["command"] == ["spinlane-stat"] and st["args"] == ["--aeron-dir=/dev/shm/aeron",
                                                                  "--metrics-bind-address=127.0.0.1:9472"],
              "stat's command and args: %s %s" % (st["command"], st.get("args")))
        check(st["image"] == cs["media-driver"]["image"], "stat runs the driver image")
        check("ports" not in st, "loopback: no container port")
        mnt = [m for m in st["volumeMounts"] if m["name"] == "aeron"]
        drv = [m for m in cs["media-driver"]["volumeMounts"] if m["name"] == "aeron"]
        check(mnt and mnt[0]["mountPath"] == drv[0]["mountPath"] and mnt[0].get("readOnly") is True,
              "stat mounts the driver's Aeron directory read-only: %s" % mnt)
        check(st["securityContext"].get("capabilities", {}).get("drop") == ["ALL"] and
              st["securityContext"].get("allowPrivilegeEscalation") is False, "stat has no capabilities")
    for c in spec["containers"]:  # Guaranteed QoS: every container requests = limits
        check(c["resources"].get("requests") == c["resources"].get("limits"), "%s: requests != limits" % c["name"])
    check(meta["labels"].get("spinlane.io/driver-metrics") == "true", "the example pod carries the PodMonitor's label")
    check("kube-rbac-proxy" not in cs and "serviceAccountName" not in spec, "no proxy by default")
    docs = template(*(EXAMPLE + ["--set", "driverMetrics.sidecar=false"]))
    if docs is not None:
        meta, spec = [(m, sp) for n, m, sp in pods(docs) if n.startswith("Deployment")][0]
        check("stat" not in {c["name"] for c in spec["containers"]} and "spinlane.io/driver-metrics" not in meta["labels"],
              "driverMetrics.sidecar=false: no sidecar, no label")

    # with the CRDs: the PrometheusRule by default; the PodMonitor needs a way in
    docs = template(*(EXAMPLE + PROM))
    if docs is not None:
        rules = objs(docs, "PrometheusRule")
        check(len(rules) == 1 and not objs(docs, "PodMonitor"), "CRDs: one PrometheusRule, no PodMonitor by default")
        if rules:
            alerts = {r["alert"]: r for g in rules[0]["spec"]["groups"] for r in g["rules"]}
            for a in ("SpinlaneDriverNakRate", "SpinlaneNicDrops", "SpinlaneDriverErrors", "SpinlaneSubscriberLag",
                      "SpinlaneDriverLossGapFills", "SpinlaneDriverHeartbeatStale", "SpinlaneDriverMetricsDown"):
                check(a in alerts, "PrometheusRule has %s" % a)
            check("> 100" in alerts["SpinlaneDriverNakRate"]["expr"] and "> 8388608" in alerts["SpinlaneSubscriberLag"]["expr"],
                  "thresholds from values: %s" % alerts["SpinlaneDriverNakRate"]["expr"])
            check(all("{{ $labels." in r["annotations"]["description"] or "$labels" not in r["annotations"]["description"]
                      for r in alerts.values()), "annotations keep Prometheus's own templates")
    r = helm("template", "spinlane", CHART, "-f", os.path.join(SRC, "tests", "helm", "values-images.yaml"),
             *(PROM + ["--set", "driverMetrics.podMonitor.enabled=true"]))
    check(r.returncode != 0 and "needs a way in" in r.stderr, "a PodMonitor on loopback is refused: %s" % r.stderr[-200:])
    r = helm("template", "spinlane", CHART, "-f", os.path.join(SRC, "tests", "helm", "values-images.yaml"),
             *(PROM + ["--set", "driverMetrics.podMonitor.enabled=true", "--set", "driverMetrics.kubeRbacProxy.enabled=true"]))
    check(r.returncode != 0 and "bearerTokenSecret.name" in r.stderr, "a PodMonitor through the proxy without a token is refused")
    docs = template(*(EXAMPLE + PROM + ["--set", "driverMetrics.podMonitor.enabled=true", "--set", "driverMetrics.bindAddress="]))
    if docs is not None:
        pm = objs(docs, "PodMonitor")
        meta, spec = [(m, sp) for n, m, sp in pods(docs) if n.startswith("Deployment")][0]
        st = [c for c in spec["containers"] if c["name"] == "stat"][0]
        check(st["args"][1] == "--metrics-bind-address=:9472" and st.get("ports", [{}])[0].get("name") == "stat-metrics",
              "bindAddress \"\": every address, a named port: %s %s" % (st["args"], st.get("ports")))
        if check(len(pm) == 1, "PodMonitor rendered"):
            sel = pm[0]["spec"]["selector"]["matchLabels"]
            check(all(meta["labels"].get(k) == v for k, v in sel.items()), "the PodMonitor selects the example pod")
            check(pm[0]["spec"]["podMetricsEndpoints"][0]["port"] == "stat-metrics", "PodMonitor port")
    docs = template(*(EXAMPLE + PROM + ["--set", "driverMetrics.podMonitor.enabled=true", "--set",
                                        "driverMetrics.kubeRbacProxy.enabled=true", "--set",
                                        "driverMetrics.podMonitor.bearerTokenSecret.name=scraper"]))
    if docs is not None:
        pm = objs(docs, "PodMonitor")[0]["spec"]["podMetricsEndpoints"][0]
        meta, spec = [(m, sp) for n, m, sp in pods(docs) if n.startswith("Deployment")][0]
        cs = {c["name"]: c for c in spec["containers"]}
        check(pm["port"] == "https-stat" and pm["scheme"] == "https" and
              pm["authorization"]["credentials"] == {"name": "scraper", "key": "token"}, "PodMonitor through the proxy: %s" % pm)
        px = cs.get("kube-rbac-proxy")
        if check(px is not None, "the proxy sidecar"):
            check("--upstream=http://127.0.0.1:9472/" in px["args"] and px["ports"][0]["name"] == "https-stat",
                  "the proxy forwards to spinlane-stat: %s" % px["args"])
            check(all(m["name"] != "api-token" for c in spec["containers"] if c["name"] != "kube-rbac-proxy"
                      for m in c.get("volumeMounts", [])), "only the proxy mounts the token")
        sa = spec.get("serviceAccountName")
        crb = [b for b in objs(docs, "ClusterRoleBinding") if any(s_.get("name") == sa for s_ in b["subjects"])]
        check(sa and any(x["metadata"]["name"] == sa for x in objs(docs, "ServiceAccount")) and crb,
              "the example pod's own account, bound for TokenReview/SubjectAccessReview")

    # the dashboard: a ConfigMap behind a value, the same JSON as deploy/monitoring's
    docs = template(*["--set", "driverMetrics.dashboard.enabled=true"])
    with open(os.path.join(CHART, "files", "spinlane-driver-dashboard.json")) as f:
        dash_text = f.read()
    with open(os.path.join(SRC, "deploy", "monitoring", "spinlane-driver-dashboard.json")) as f:
        check(f.read() == dash_text, "deploy/monitoring/spinlane-driver-dashboard.json is the chart's dashboard")
    if docs is not None:
        cm = [d for d in docs if d["kind"] == "ConfigMap" and "spinlane-driver-dashboard.json" in d.get("data", {})]
        if check(len(cm) == 1, "the dashboard ConfigMap"):
            check(cm[0]["metadata"]["labels"].get("grafana_dashboard") == "1", "the Grafana sidecar's label")
            check(json.loads(cm[0]["data"]["spinlane-driver-dashboard.json"]) == json.loads(dash_text),
                  "the ConfigMap holds the dashboard")

    # every metric the dashboard and the alerts query is one spinlane-stat emits
    dash = json.loads(dash_text)
    queries = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    queries += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
    docs = template(*PROM) or []
    queries += [r["expr"] for pr in objs(docs, "PrometheusRule") for g in pr["spec"]["groups"] for r in g["rules"]]
    named = set().union(*(exprs_of(q) for q in queries))
    known = stat_names()
    print("driver metrics: %d queries name %d metrics; spinlane-stat emits %d names" % (len(queries), len(named), len(known)))
    check(len(named) >= 20 and not named - known, "metrics queried that spinlane-stat does not emit: %s" % sorted(named - known))
    for must in ("aeron_naks_sent_total", "spinlane_port_drops_total", "aeron_errors_total", "aeron_subscription_lag_bytes"):
        check(must in named, "the dashboard/alerts cover %s" % must)


def main(argv):
    global HELM, KUBECTL
    tests = {"lint": test_lint, "render": test_render, "schema": test_schema, "fail": test_fail, "policy": test_policy,
             "config": test_config, "readme": test_readme, "notes": test_notes, "docs": test_docs, "images": test_images,
             "kubeschema": test_kubeschema, "dra": test_dra, "driver-metrics": test_driver_metrics}
    if len(argv) != 2 or argv[1] not in tests:
        print("usage: test-helm.py %s" % "|".join(tests), file=sys.stderr)
        return 2
    HELM, KUBECTL = tools()
    need_yaml()
    tests[argv[1]]()
    if failures:
        print("%d failure(s) in %d checks" % (len(failures), testcheck.checks))
        return 1
    print("ok: %d checks" % testcheck.checks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
